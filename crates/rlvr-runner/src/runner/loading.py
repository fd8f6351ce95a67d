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


def load(state, header, sources):
    """Compiles the job's program once, in a child bounded by the test's time limit (the load
    header's `compile_ms`): no compile of a response runs unbounded in the runner. CPython 3.11
    parses some forms in quadratic or exponential time (a long f-string, nested `try` blocks),
    and a compile cannot be interrupted. Whatever the response makes `compile` (or a harness's
    `ast` transformation) raise is the solution's failure, reported as `compile_error`, never a
    runner crash: SyntaxError and ValueError, but also RecursionError (deeply nested code),
    MemoryError, OverflowError, UnicodeEncodeError (lone surrogates), and anything else."""
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
    budget_ms = header.get("compile_ms", 0) or DEFAULT_COMPILE_MS
    units, failure, timed_out = compile_in_child(state["harness"], sources, state["filename"], budget_ms)
    if timed_out:
        state["compile_timeout_ms"] = budget_ms
    state["units"] = units if failure is None else []
    state["compile_error"] = failure
    sources = units = None
    # Keep the heap small and stable for fork: collect now, freeze survivors.
    gc.collect()
    gc.freeze()
    return {"ok": not failed, "preload_errors": failed, "compile_error": state["compile_error"]}


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
    """`(code objects, failure text or None)` for sources compiled in a bounded child."""
    units, failure, timed_out = compile_in_child(None, sources, filename, budget_ms)
    return units, failure


def compile_in_child(harness, sources, filename, budget_ms):
    """`compile_program` in a forked child given `budget_ms` of wall clock; the code objects come
    back through a pipe (`marshal`). Returns (units, failure text or None, timed out). The child
    runs no untrusted code (compiling executes nothing); a compile that outgrows the sandbox's
    memory gets the child killed, not the runner."""
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
        return [], f"compiling the program took longer than the test's time limit ({budget_ms} ms)\n", True
    if not data:
        how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"status {os.WEXITSTATUS(status)}"
        return [], f"the compiler died ({how}): the program is too large to compile here\n", False
    compiled, value = marshal.loads(data)
    return (value, None, False) if compiled else ([], value, False)
