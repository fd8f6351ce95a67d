# The batch child of the in-process harnesses (runner/harness.py). One forked process per stage
# runs the job's tests one after another, in lock step with the runner: the runner writes a
# test's index on the control pipe, the child runs it and writes back one result; the runner
# measures the wall clock and kills the child at a test's limit. Module-level code runs once,
# before the first test, as in the references.

import gc
import os
import resource
import struct
import sys
import time
import traceback

from .children import ChildGone, kill_everything_else, read_with_deadline, reap_all, reaps_all
from .harness import captured_call, harness_entry, harness_module
from .isolation import fork_isolated
from .process import CHILD_STREAMS, FRESH_FLAGS, install_standard_streams, prepare_test_child, reseed_random_generators
from .protocol import STDERR_CAP, read_exact, write_all
from .test import report_without_output


BATCH_FRAME = struct.Struct("<IiII")  # index, status (0 ok, 1 exception), stdout bytes, stderr bytes


BATCH_STOP = 0xFFFFFFFF


def batch_child(state, inputs, control_fd, result_fd, limits):
    """In the forked child: load the harness program once, then run tests on request."""
    status = 1
    try:
        # The test child's steps (no CPU or output limit yet: the CPU limit is set per test).
        null = os.open(os.devnull, os.O_RDWR)
        prepare_test_child((null, null, null), {control_fd, result_fd}, 0, 0, limits["memory_bytes"])
        install_standard_streams(CHILD_STREAMS)
        reseed_random_generators()
        sys.flags = FRESH_FLAGS
        # The process-level streams are what the reference's child has: an empty stdin and an
        # output nobody reads; only what the harness captures is the answer.
        module = harness_module(state["harness"])
        load_failure = state["compile_error"]
        if load_failure is None:
            try:
                entry = harness_entry(state["units"], state["harness"], module.__dict__)
            except BaseException as error:
                load_failure = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        gc.enable()
        cpu_seconds = limits["cpu_s"]
        while True:
            request = read_exact(control_fd, 4)
            (index,) = struct.unpack("<I", request)
            if index == BATCH_STOP:
                break
            if load_failure is not None:
                write_batch_result(result_fd, index, 1, b"", load_failure)
                continue
            if cpu_seconds > 0:
                usage = resource.getrusage(resource.RUSAGE_SELF)
                spent = int(usage.ru_utime + usage.ru_stime)
                hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
                soft = spent + cpu_seconds + 1
                if hard != resource.RLIM_INFINITY:
                    soft = min(soft, hard)
                resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
            text = inputs[index].decode("utf-8", "surrogateescape")
            printed, failure = captured_call(entry, text)
            write_batch_result(result_fd, index, 0 if failure is None else 1,
                               printed.encode("utf-8", "surrogateescape"), failure or "")
        status = 0
    except BaseException:
        status = 1
    finally:
        os._exit(status)


def write_batch_result(fd, index, status, stdout, stderr_text):
    stderr = stderr_text.encode("utf-8", "backslashreplace")[-STDERR_CAP:]
    write_all(fd, BATCH_FRAME.pack(index, status, len(stdout), len(stderr)) + stdout + stderr)


def batch_start(state, header, inputs):
    """Forks the batch child for this stage's inputs; no test runs yet."""
    batch_end(state)
    control_read, control_write = os.pipe()
    result_read, result_write = os.pipe()
    limits = {"memory_bytes": header.get("memory_bytes", 0), "cpu_s": header.get("cpu_s", 0)}
    # The batch child runs untrusted code: the same isolation as a test child (runner/isolation.py).
    child = fork_isolated(state["isolation"])
    if child == 0:
        os.close(control_write)
        os.close(result_read)
        batch_child(state, inputs, control_read, result_write, limits)
    os.close(control_read)
    os.close(result_write)
    state["batch"] = {
        "child": child,
        "control": control_write,
        "results": result_read,
        "count": len(inputs),
        "next": 0,
        "output_cap": header.get("output_bytes", 0),
        "alive": True,
    }
    return {"ok": True, "tests": len(inputs)}


def batch_next(state, header):
    """Runs the next test of the batch in its child and reports it like a `run`."""
    batch = state.get("batch")
    if batch is None or not batch["alive"] or batch["next"] >= batch["count"]:
        return report_without_output("exited", 1, None, 0.0, b"the batch has no test left to run (its child ended)")
    index = batch["next"]
    batch["next"] += 1
    started = time.monotonic()
    deadline = started + max(header["wall_ms"], 1) / 1000.0
    timed_out = False
    stdout = stderr = b""
    try:
        write_all(batch["control"], struct.pack("<I", index))
        frame = read_with_deadline(batch["results"], BATCH_FRAME.size, deadline)
        if frame is None:
            timed_out = True
        else:
            _, status, stdout_length, stderr_length = BATCH_FRAME.unpack(frame)
            # The rest of a frame follows at once; give it a moment past the deadline.
            payload = read_with_deadline(batch["results"], stdout_length + stderr_length,
                                         max(deadline, time.monotonic() + 5.0))
            if payload is None:
                frame, timed_out = None, True
            else:
                stdout, stderr = payload[:stdout_length], payload[stdout_length:]
    except (OSError, ChildGone):
        frame = None
    wall_ms = (time.monotonic() - started) * 1000.0
    if frame is None:
        # Too slow, or the child died (a signal, the CPU limit, the memory limit).
        exit_code, signal_number = batch_kill(state)
        if timed_out:
            return report_without_output("timeout", exit_code, signal_number, wall_ms)
        outcome = "signaled" if signal_number is not None else "exited"
        return report_without_output(outcome, exit_code if exit_code is not None else 1, signal_number, wall_ms)
    cap = batch["output_cap"]
    truncated = cap > 0 and len(stdout) > cap
    if truncated:
        stdout = stdout[:cap]
    return {"outcome": "exited", "exit_code": status, "signal": None, "aborted": False,
            "wall_ms": round(wall_ms, 3), "cpu_ms": 0.0, "maxrss_kib": 0, "stdout_len": len(stdout),
            "stdout_truncated": truncated, "stderr_len": len(stderr), "stderr_truncated": False}, stdout, stderr


def batch_kill(state):
    """Kills the batch child and everything it started; returns its (exit code, signal)."""
    batch = state.get("batch")
    if batch is None or not batch["alive"]:
        return None, None
    batch["alive"] = False
    kill_everything_else(batch["child"])
    _, wait_status = os.waitpid(batch["child"], 0)
    reap_all(wait_seconds=2.0 if reaps_all() else 0.0)
    exit_code = os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else None
    signal_number = os.WTERMSIG(wait_status) if os.WIFSIGNALED(wait_status) else None
    return exit_code, signal_number


def batch_end(state):
    """Ends the batch: the child is stopped (and killed with anything it left)."""
    batch = state.get("batch")
    if batch is None:
        return {"ok": True}
    if batch["alive"]:
        try:
            write_all(batch["control"], struct.pack("<I", BATCH_STOP))
        except OSError:
            pass
        batch_kill(state)
    for fd in (batch["control"], batch["results"]):
        try:
            os.close(fd)
        except OSError:
            pass
    state["batch"] = None
    return {"ok": True}
