# One test: its memory files, the forked child, the wall clock, killing and reaping what it left.

import os
import select
import signal
import time

from .children import kill_everything_else, others_alive, reap_all, reaps_all
from .isolation import fork_isolated
from .live import LIVE_REQUEST_FD
from .loading import compile_bounded
from .process import run_child
from .protocol import REQUEST_FD, STDERR_CAP, read_exact, read_frame, write_all
from .sensor import read_sensor_report
from .work_directory import refresh_work_directory


def memory_file(name, content=b""):
    fd = os.memfd_create(name, 0)
    if content:
        write_all(fd, content)
        os.lseek(fd, 0, os.SEEK_SET)
    return fd


def test_files(stdin):
    """Fresh memory files behind a test's fds 0, 1 and 2: nothing a test does to them (seals,
    flags, extended attributes, size) reaches the next test. Closed by `close_test_files`."""
    return (memory_file("stdin", stdin), memory_file("stdout"), memory_file("stderr"))


def close_test_files(files):
    for fd in files:
        try:
            os.close(fd)
        except OSError:
            pass


def read_memory_file(fd, cap):
    size = os.fstat(fd).st_size
    os.lseek(fd, 0, os.SEEK_SET)
    data = read_exact(fd, min(size, cap)) if size else b""
    return data, size > cap


def run_test(state, header, stdin, extra_source):
    if state["compile_error"] is not None:
        stderr = state["compile_error"].encode("utf-8", "backslashreplace")
        if state["compile_timeout_ms"] is not None:
            # As in a fresh `python FILE` per test, whose compile counts against the test's time.
            return report_without_output("timeout", None, signal.SIGKILL, state["compile_timeout_ms"], stderr)
        return report_without_output("exited", 1, None, 0.0, stderr)
    extra = None
    if extra_source is not None:
        extra, failure = compile_bounded([extra_source], "<test>", header["wall_ms"])
        if failure is not None:
            return report_without_output("exited", 1, None, 0.0, failure.encode("utf-8", "backslashreplace"))
        extra = extra[0]
    live = bool(header.get("live"))
    if live and not state["live"]:
        return report_without_output("exited", 1, None, 0.0, b"rlvr runner: no live channel to the referee\n")
    files = test_files(stdin)
    # Judge tests: the tamper sensor's report, fresh per test.
    judge = {"live": live}
    try:
        if header.get("sensor"):
            judge["sensor_fd"] = memory_file("sensor")
            judge["runner_namespaces"] = state["runner_namespaces"]
        if live:
            # Whatever a dead child of an earlier test left unread is not this test's.
            drain(LIVE_REQUEST_FD)
        return run_forked(state, header, stdin, extra, files, judge)
    finally:
        close_test_files(files)
        if header.get("work_directory"):
            # Every process of the test is dead by now. A failure here is caught by the reset
            # between jobs, which empties the directory again and refuses the runner if it can't.
            refresh_work_directory(state, header["work_directory"])
        if "sensor_fd" in judge:
            os.close(judge["sensor_fd"])


def drain(fd):
    """Reads and drops what is waiting on a pipe, without blocking."""
    os.set_blocking(fd, False)
    try:
        while os.read(fd, 1 << 16):
            pass
    except BlockingIOError:
        pass
    finally:
        os.set_blocking(fd, True)


def run_forked(state, header, stdin, extra, files, judge):
    stdin_fd, stdout_fd, stderr_fd = files
    output_cap = header["output_bytes"]
    started = time.monotonic()
    child = fork_isolated(state["isolation"])
    if child == 0:
        harness = state["harness"]
        stdin_text = stdin.decode("utf-8", "surrogateescape") if harness is not None else ""
        if harness is not None:
            stdin_fd = memory_file("stdin")
        run_child(state["units"], extra, state["filename"], (stdin_fd, stdout_fd, stderr_fd), header, harness,
                  stdin_text, judge)
    pidfd = os.pidfd_open(child)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    if judge["live"]:
        # The engine may end a live test early (the referee decided it, or the child broke
        # the protocol): an `abort` request on the runner's own pipe.
        poller.register(REQUEST_FD, select.POLLIN)
    deadline = started + max(header["wall_ms"], 1) / 1000.0
    timed_out = aborted = False
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        events = poller.poll(min(max(1, int(remaining * 1000)), 3_600_000))
        if any(fd == pidfd for fd, _ in events):
            break
        if any(fd == REQUEST_FD for fd, _ in events):
            request = read_frame()
            if request.get("op") == "abort":
                aborted = True
                break
    os.close(pidfd)
    if timed_out or aborted:
        kill_everything_else(child)
    _, wait_status, usage = os.wait4(child, 0)
    wall_ms = (time.monotonic() - started) * 1000.0
    if timed_out or aborted or others_alive():
        kill_everything_else(child)
        reap_all(wait_seconds=2.0 if reaps_all() else 0.0)
    else:
        reap_all()
    stdout, stdout_truncated = read_memory_file(stdout_fd, output_cap if output_cap > 0 else 1 << 62)
    stderr, stderr_truncated = read_memory_file(stderr_fd, STDERR_CAP)
    tampering = read_sensor_report(judge["sensor_fd"]) if "sensor_fd" in judge else []
    exit_code = os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else None
    signal_number = os.WTERMSIG(wait_status) if os.WIFSIGNALED(wait_status) else None
    cpu_seconds = usage.ru_utime + usage.ru_stime
    # The test child is init of its PID namespace, so the kernel's SIGXFSZ and SIGXCPU (default
    # disposition) do not end it: reaching RLIMIT_FSIZE makes writes fail instead, and
    # RLIMIT_CPU ends it with SIGKILL at the hard limit. Judge both by what happened.
    if signal_number == signal.SIGXFSZ or (output_cap > 0 and os.fstat(stdout_fd).st_size >= output_cap):
        stdout_truncated = True
    cpu_exceeded = header["cpu_s"] > 0 and cpu_seconds >= header["cpu_s"] and signal_number in (signal.SIGKILL, signal.SIGXCPU)
    result = {
        "outcome": "timeout" if timed_out or cpu_exceeded else ("signaled" if signal_number is not None else "exited"),
        "exit_code": exit_code,
        "signal": signal_number,
        "aborted": aborted,
        "wall_ms": round(wall_ms, 3),
        "cpu_ms": round(cpu_seconds * 1000.0, 3),
        "maxrss_kib": usage.ru_maxrss,
        "stdout_len": len(stdout),
        "stdout_truncated": stdout_truncated,
        "stderr_len": len(stderr),
        "stderr_truncated": stderr_truncated,
        "tampering": tampering,
    }
    return result, stdout, stderr


def report_without_output(outcome, exit_code, signal_number, wall_ms, stderr=b""):
    """A test's report when it produced no output: a batch test that failed, or a test that
    never ran (its program or its code does not compile)."""
    return {"outcome": outcome, "exit_code": exit_code, "signal": signal_number, "aborted": False,
            "wall_ms": round(wall_ms, 3), "cpu_ms": 0.0, "maxrss_kib": 0, "stdout_len": 0,
            "stdout_truncated": False, "stderr_len": len(stderr), "stderr_truncated": False}, b"", stderr
