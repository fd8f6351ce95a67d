# Loading a job: its program compiled once, in a child bounded by the test's time limit.

import gc
import marshal
import os
import signal
import struct
import time
import traceback

from .children import ChildGone, read_with_deadline
from .harness import HARNESS_PROGRAMS, preload_harness_modules
from .protocol import write_all


def describe_failure(error):
    """`TypeError: message` as Python prints the last line of a traceback; never raises (the
    failure may be a MemoryError, and formatting it must not fail in turn)."""
    try:
        return "".join(traceback.format_exception_only(type(error), error))
    except BaseException:
        return type(error).__name__ + "\n"


def load(state, header, sources, progress_fd):
    """Compiles the job's program once, in the job process, while the template watches the clock
    (runner/job.py): the job process writes COMPILE_STARTED and its budget (the load header's
    `compile_ms`, then `;`) on `progress_fd` before the compile and COMPILE_DONE after it, and
    the template kills it when the budget runs out in between (or sees it die there), then starts a job process that answers with
    `load_after_failure`. No compile of a response runs unbounded. CPython 3.11 parses some
    forms in quadratic or exponential time (a long f-string, nested `try` blocks), and a compile
    cannot be interrupted. Whatever the response makes `compile` (or a harness's `ast`
    transformation) raise is the solution's failure, reported as `compile_error`, never a
    runner crash: SyntaxError and ValueError, but also RecursionError (deeply nested code),
    MemoryError, OverflowError, UnicodeEncodeError (lone surrogates), and anything else.

    The job process, not a child of it, compiles the job's first load: a child per job cost a
    fork, its faults and its exit (about 2 ms a job); the compiler's garbage is collected and its
    free heap given back (`malloc_trim`) before the first test child is forked. A later load of
    the same job (`progress_fd` None: no replacement could answer it) compiles in a bounded
    child, `compile_in_child`."""
    failed = begin_load(state, header)
    if progress_fd is None:
        units, failure, timed_out = compile_in_child(state["harness"], sources, state["filename"],
                                                     compile_budget_ms(header))
        if timed_out:
            state["compile_timeout_ms"] = compile_budget_ms(header)
    else:
        write_all(progress_fd, COMPILE_STARTED + str(compile_budget_ms(header)).encode() + b";")
        try:
            units, failure = compile_program(state["harness"], sources, state["filename"]), None
        except BaseException as error:
            units, failure = [], describe_failure(error)
        write_all(progress_fd, COMPILE_DONE)
    state["units"] = units
    state["compile_error"] = failure
    sources = units = None
    settle_heap(state)
    return {"ok": not failed, "preload_errors": failed, "compile_error": state["compile_error"]}


def load_after_failure(state, header, failure):
    """The load's answer from the job process that replaced one whose compile the template
    stopped: `failure` is `("timeout", budget_ms)` (every test then times out, as a fresh
    `python FILE` per test would still be compiling) or `("died", how)`."""
    failed = begin_load(state, header)
    kind, detail = failure
    if kind == "timeout":
        state["compile_timeout_ms"] = detail
        state["compile_error"] = compile_timeout_message(detail)
    else:
        state["compile_error"] = compiler_died_message(detail)
    settle_heap(state)
    return {"ok": not failed, "preload_errors": failed, "compile_error": state["compile_error"]}


def begin_load(state, header):
    """The load's set-up before its compile: the job's file name and harness, the modules the
    header names imported. Returns the imports that failed."""
    state["filename"] = header.get("filename", "solution.py")
    failed = []
    for module in header.get("preload", []):
        try:
            __import__(module)
        except BaseException as error:
            failed.append(f"{module}: {type(error).__name__}: {error}")
    state["units"] = []
    state["compile_error"] = None
    state["compile_timeout_ms"] = None
    state["harness"] = header.get("harness")
    if state["harness"] is not None:
        preload_harness_modules(state["harness"])
    return failed


def settle_heap(state):
    """Keeps the job process small and stable for the forks of its tests: garbage collected,
    survivors frozen (a test child's collections never visit them), free heap returned."""
    gc.collect()
    gc.freeze()
    libc = state["isolation"].libc
    if libc is not None:
        libc.malloc_trim(0)


def compile_budget_ms(header):
    """How long the load `header`'s compile may take."""
    return header.get("compile_ms", 0) or DEFAULT_COMPILE_MS


# What a job process writes on its ending pipe around its compile (runner/job.py): the start
# is followed by the budget in milliseconds and `;`.
COMPILE_STARTED = b"S"
COMPILE_DONE = b"D"


# How long a compile may take when the request names no budget (the protocol's own tests).
DEFAULT_COMPILE_MS = 10_000


def compile_program(harness, sources, filename):
    """The job's code objects, after the harness's transformation if any; raises whatever the
    transformation or `compile` raises."""
    if harness is not None:
        transform = HARNESS_PROGRAMS[harness]
        sources = [transform(source) for source in sources]
    return [compile(source, filename, "exec", dont_inherit=True) for source in sources]


def compile_bounded(sources, filename, budget_ms):
    """`(code objects, failure text or None)` for sources compiled in a bounded child (a test's
    own code, compiled per test)."""
    units, failure, timed_out = compile_in_child(None, sources, filename, budget_ms)
    return units, failure


def compile_in_child(harness, sources, filename, budget_ms):
    """`compile_program` in a forked child given `budget_ms` of wall clock; the code objects come
    back through a pipe (`marshal`). Returns (units, failure text or None, timed out). The child
    runs no untrusted code (compiling executes nothing); a compile that outgrows the sandbox's
    memory gets the child killed, not the job process."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(read_end)
            try:
                payload = marshal.dumps((True, compile_program(harness, sources, filename)))
            except BaseException as error:
                payload = marshal.dumps((False, describe_failure(error)))
            write_all(write_end, struct.pack("<Q", len(payload)) + payload)
        finally:
            os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + budget_ms / 1000.0
    data = None
    try:
        size = read_with_deadline(read_end, 8, deadline)
        if size is not None:
            data = read_with_deadline(read_end, struct.unpack("<Q", size)[0], deadline)
    except ChildGone:
        data = b""
    finally:
        os.close(read_end)
        if data is None:
            os.kill(child, signal.SIGKILL)
        _, status = os.waitpid(child, 0)
    if data is None:
        return [], compile_timeout_message(budget_ms), True
    if not data:
        return [], compiler_died_message(wait_status_text(status)), False
    compiled, value = marshal.loads(data)
    return (value, None, False) if compiled else ([], value, False)


def compile_timeout_message(budget_ms):
    return f"compiling the program took longer than the test's time limit ({budget_ms} ms)\n"


def compiler_died_message(how):
    return f"the compiler died ({how}): the program is too large to compile here\n"


def wait_status_text(status):
    """`signal N` or `status N` for a wait status."""
    return f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"status {os.WEXITSTATUS(status)}"
