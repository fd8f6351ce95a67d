# The process model (issue 32): a template that never holds a job's data, and a job process per
# job that does.
#
# The runner started by the sandbox is the *template*: init of the sandbox's PID namespace. It
# reads request headers only (a few numbers and names, never a payload: no source, input or
# output of any job), imports the modules a header names, and forks a *job process* for each job.
# The job process reads the job's payloads, compiles its program, forks one child per test, and
# exits when the job ends (`reset` or `exit`), telling the template how on a pipe of their own.
# Every test child is therefore a fork of a process that has held this job's data and nothing
# else: a wrong program that scans the memory it inherited finds no other job's source or output.

import gc
import json
import os
import select
import signal
import sys
import time

from .batch import batch_end, batch_next, batch_start
from .children import JOB_REAPER, LONGEST_POLL_MS, reap_all
from .harness import preload_harness_modules
from .isolation import fresh_work_mount, runner_fingerprint, set_last_pid
from .loading import COMPILE_DONE, COMPILE_STARTED, load, load_after_failure, wait_status_text
from .protocol import REQUEST_FD, read_exact, read_frame, write_all, write_frame
from .test import run_test
from .work_directory import mark_work_directory, work_directory_touched


# Requests a job process serves; the template hands the first one of a job to a new job process.
JOB_OPERATIONS = frozenset(("load", "run", "batch_start", "batch_next", "batch_end"))
# The job process's PID in the sandbox's namespace (test children get FIRST_TEST_PID + 1).
JOB_PROCESS_PID = 51
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def serve_template(state):
    """The template's request loop. A job's first request starts a job process, which serves
    the job until it ends; `reset` (after a job, or on its own) and `exit` are the template's.
    The next job's process is forked ahead, while the engine is busy elsewhere (`spare`)."""
    state["spare"] = start_job_process(state)
    while True:
        try:
            header = read_frame()
        except EOFError:
            return
        operation = header.get("op")
        if operation in JOB_OPERATIONS:
            ending = run_job_process(state, header)
            if ending is None or ending.get("end") != "reset":
                # An exit, the end of the requests, or a job process that died without saying
                # how (the engine then sees the runner gone, as when a runner dies).
                return
            header, operation = ending, "reset"
        if operation == "reset":
            write_frame(reset_report(state, header))
            state["spare"] = start_job_process(state)
        elif operation == "abort":
            # An abort that arrived after its test ended: nothing to stop, and no answer.
            continue
        elif operation == "exit":
            discard_spare(state)
            return
        else:
            write_frame({"error": f"unknown operation {operation!r}"})


def reset_report(state, header):
    """The template's answer to `reset`: every process killed and reaped, a fresh work
    directory, and whether it vouches that nothing of the last job is left."""
    report = reset(state, header)
    if not state["undumpable"]:
        report["ok"] = False
        report["problems"].append("the runner could not make itself non-dumpable")
    work = header.get("work_directory")
    if work:
        state["work_mark"] = mark_work_directory(work)
    return report


def run_job_process(state, header):
    """Hands the job whose first request is `header` to the job process forked ahead (or forks
    one) and waits for it to end; returns how it ended (`{"end": "reset", "work_directory":
    ...}`, `{"end": "exit"}`), or None when it died without saying. First the template imports
    what the header names (module names from the engine's fixed lists, not a job's data), so
    that every job's process finds them loaded; a spare forked before such an import is
    discarded."""
    if header.get("op") == "load":
        loaded = len(sys.modules)
        for module in header.get("preload", []):
            if module not in sys.modules:
                try:
                    __import__(module)
                except BaseException:
                    pass  # the job process imports it again and reports the failure
        if header.get("harness") is not None:
            preload_harness_modules(header["harness"])
        if len(sys.modules) != loaded:
            # Keep the template's heap stable: every job process and test child is forked
            # from it, and a frozen object is never visited by their collections.
            gc.collect()
            gc.freeze()
            # The spare was forked before these imports: it would lack them.
            discard_spare(state)
    job = state.pop("spare", None) or start_job_process(state)
    ending, compile_failure = watch_job_process(hand_over(job, header, None))
    if compile_failure is not None:
        # A load's compile ran past its budget, or killed the job process, after it had read the
        # load's payload: a new job process answers that load and serves the rest of the job.
        ending, _ = watch_job_process(hand_over(start_job_process(state), header, compile_failure))
    return ending


def start_job_process(state):
    """Forks a job process, which waits for the first request of its job (`hand_over`); returns
    its PID, the read end of its ending pipe (on which it writes its compile's progress,
    COMPILE_STARTED and COMPILE_DONE, and, last, how the job ended, JSON) and the write end of
    the pipe it reads its first request from. Forked from the template alone, between jobs: it
    holds no job's data until its own job's first request arrives."""
    read_end, write_end = os.pipe()
    first_read, first_write = os.pipe()
    template = os.getpid()
    if state["isolation"].last_pid is not None:
        # Every job process gets the same PID, below the one every test child gets.
        set_last_pid(state["isolation"].last_pid, JOB_PROCESS_PID - 1)
    job = os.fork()
    if job == 0:
        status = 1
        try:
            os.close(read_end)
            os.close(first_write)
            become_job_process(state, template)
            first = json.loads(read_to_end(first_read))
            os.close(first_read)
            ending = serve_job(state, first["header"], write_end, first["compile_failure"])
            write_all(write_end, json.dumps(ending).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    os.close(first_read)
    return job, read_end, first_write


def hand_over(job, header, compile_failure):
    """Gives the waiting job process `job` (`start_job_process`'s answer) its job's first request
    `header` and, for a replacement, the compile failure it answers the load with. Returns the
    job process's PID and its ending pipe, for `watch_job_process`."""
    pid, read_end, first_write = job
    try:
        write_all(first_write, json.dumps({"header": header, "compile_failure": compile_failure}).encode())
    except OSError:
        pass  # it died waiting: watch_job_process sees it gone without an ending
    finally:
        os.close(first_write)
    return pid, read_end


def discard_spare(state):
    """Kills and reaps the job process forked ahead, if any (its job never came)."""
    spare = state.pop("spare", None)
    if spare is not None:
        pid, read_end, first_write = spare
        os.close(read_end)
        os.close(first_write)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)


def read_to_end(descriptor):
    """Everything `descriptor` delivers until its end."""
    chunks = []
    while True:
        chunk = os.read(descriptor, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def watch_job_process(started):
    """Waits for the job process `started` (`start_job_process`'s answer) to end. Between its
    COMPILE_STARTED and COMPILE_DONE it gets the budget it wrote after COMPILE_STARTED and is
    killed past it. Returns (how the job ended or None, the compile's failure or None):
    `("timeout", budget_ms)` when it was killed, `("died", wait status text)` when it died
    compiling."""
    job, read_end = started
    process = os.pidfd_open(job)
    poller = select.poll()
    poller.register(read_end, select.POLLIN)
    poller.register(process, select.POLLIN)
    os.set_blocking(read_end, False)
    received, deadline, budget_ms, failure = b"", None, None, None
    try:
        while True:
            timeout = None if deadline is None else min(max(0, round((deadline - time.monotonic()) * 1000)),
                                                         LONGEST_POLL_MS)
            events = dict(poller.poll(timeout))
            if not events and deadline is not None and time.monotonic() < deadline:
                continue
            if not events:
                os.kill(job, signal.SIGKILL)
                failure = ("timeout", budget_ms)
                break
            if events.get(read_end):
                chunk = read_available(read_end)
                if not chunk and events[read_end] & select.POLLHUP:
                    # Every writer is gone (the job process is exiting): from now on only its
                    # pidfd tells anything, and a pipe at its end would wake every poll().
                    poller.unregister(read_end)
                received += chunk
                while received[:1] == COMPILE_DONE or received[:1] == COMPILE_STARTED and b";" in received:
                    if received[:1] == COMPILE_DONE:
                        deadline, budget_ms, received = None, None, received[1:]
                    else:
                        budget, received = received[1:].split(b";", 1)
                        budget_ms = int(budget)
                        deadline = time.monotonic() + budget_ms / 1000.0
            if events.get(process):
                break
        _, status = os.waitpid(job, 0)
        received += read_available(read_end)
    finally:
        os.close(process)
        os.close(read_end)
    if failure is None and budget_ms is not None:
        failure = ("died", wait_status_text(status))
    if failure is not None:
        return None, failure
    try:
        ending = json.loads(received) if received else None
    except ValueError:
        ending = None
    return (ending if type(ending) is dict else None), None


def read_available(descriptor):
    """What the non-blocking `descriptor` holds now (b"" at its end or when it holds nothing)."""
    chunks = []
    while True:
        try:
            chunk = os.read(descriptor, 1 << 16)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def become_job_process(state, template):
    """In the job process: it dies with the template (whose death is the runner's, for the
    engine), and reaps everything its tests leave where the template is the namespace's init
    (elsewhere `kill(-1)` would reach beyond the sandbox)."""
    isolation = state["isolation"]
    if isolation.prctl is not None:
        isolation.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != template:
        os._exit(1)  # the template died before the signal was armed
    if template == 1 and isolation.prctl is not None:
        JOB_REAPER[0] = isolation.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def serve_job(state, header, progress_fd, compile_failure):
    """The job process's request loop, from the job's first request until the job ends.
    `compile_failure` (not None): the first request is a load whose payload a job process the
    template stopped had read; it is answered with that failure."""
    if header.get("op") != "load":
        progress_fd = None
    while True:
        operation = header.get("op")
        if operation == "load" and compile_failure is not None:
            write_frame(load_after_failure(state, header, compile_failure))
            compile_failure = None
        elif operation == "load":
            sources = [read_exact(REQUEST_FD, size).decode("utf-8", "surrogatepass") for size in header["units"]]
            write_frame(load(state, header, sources, progress_fd))
            sources = None
            # Only the job's first request may be answered by a replacement job process: a
            # later load of the same job compiles in a child of its own.
            progress_fd = None
        elif operation == "run":
            stdin = read_exact(REQUEST_FD, header["stdin"])
            extra = read_exact(REQUEST_FD, header["extra"]).decode("utf-8", "surrogatepass") if header.get("has_extra") else None
            result, stdout, stderr = run_test(state, header, stdin, extra)
            write_frame(result, stdout, stderr)
        elif operation == "batch_start":
            inputs = [read_exact(REQUEST_FD, size) for size in header["inputs"]]
            write_frame(batch_start(state, header, inputs))
        elif operation == "batch_next":
            result, stdout, stderr = batch_next(state, header)
            write_frame(result, stdout, stderr)
        elif operation == "batch_end":
            write_frame(batch_end(state))
        elif operation == "reset":
            batch_end(state)
            return {"end": "reset", "work_directory": header.get("work_directory")}
        elif operation == "exit":
            batch_end(state)
            return {"end": "exit"}
        elif operation != "abort":
            # An abort after its test ended needs no answer; anything else is unknown.
            write_frame({"error": f"unknown operation {operation!r}"})
        try:
            header = read_frame()
        except EOFError:
            batch_end(state)
            return {"end": "exit"}


def leftover_ipc_objects():
    """SysV IPC objects live in the sandbox's IPC namespace after their creator died."""
    found = []
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as handle:
                if len(handle.read().splitlines()) > 1:
                    found.append(kind)
        except OSError:
            pass
    return found


def reset(state, header):
    """Between jobs: nothing a test did may reach the next job. Kill and reap every process,
    mount a fresh work directory, and refuse (the caller then starts a new sandbox) when
    anything else might carry state: the runner cannot give tests their own PID namespace (then
    a test could reach it) or set the next PID, or its own limits, priority, affinity, umask or
    directory changed."""
    discard_spare(state)  # a reset on its own: the spare is forked again after the report
    problems = []
    isolation = state["isolation"]
    if not isolation.nested:
        problems.append(f"tests do not get their own PID namespace ({isolation.reason})")
    if runner_fingerprint() != state["fingerprint"]:
        problems.append("the runner's own limits, priority, affinity, umask or directory changed")
    if os.getpid() == 1:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if not reap_all(wait_seconds=2.0):
            problems.append("a process of the last job would not die")
    else:
        reap_all()
    work = header.get("work_directory")
    mark = state.get("work_mark")
    if work and (mark is None or mark[0] != work or work_directory_touched(mark)):
        # A fresh tmpfs: nothing a test left, and inode numbers from the start. Where no test
        # of the job created anything (runner/work_directory.py: the directory's mtime is still 0 and
        # its ctime unchanged), the tmpfs is as fresh as a new one: no mount (0.4 ms a job).
        problem = fresh_work_mount(isolation, work, state["work_options"])
        if problem is not None:
            problems.append(problem)
    leftovers = leftover_ipc_objects()
    if leftovers:
        problems.append("SysV IPC objects left: " + ", ".join(leftovers))
    if os.getpid() != 1:
        problems.append("the runner is not its PID namespace's init, so it cannot vouch for the process table")
    if isolation.last_pid is None:
        problems.append("the runner cannot set the next PID, so PID numbers would carry over")
    return {"ok": not problems, "problems": problems}
