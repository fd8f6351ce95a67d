# The in-process harnesses of the references (verl prime_code; rllm's copy of LiveCodeBench's
# grader) and the batch child that runs many tests of one job in ONE process, as both
# references do. Every rule below was written from the references' behaviour and is checked
# against their real code's measured outcomes by the differential tests (tests/reference/).

# verl prime_code's header: star imports, plain imports, its recursion limit.
PRIME_MODULES = ("string re datetime collections heapq bisect copy math random statistics itertools "
                 "functools operator io sys json builtins typing").split()
PRIME_HEADER = (
    "".join(f"from {module} import *\n" for module in PRIME_MODULES)
    + "".join(f"import {module}\n" for module in PRIME_MODULES if module not in ("builtins", "typing"))
    + "sys.setrecursionlimit(6*10**5)\n"
)

# rllm's LiveCodeBench copy puts rllm's own import block (not LiveCodeBench's) before the
# program: the same statements in the same order, so the same names end up bound (`time` is
# `time.time`, `bisect` the module, numpy as np, pandas as pd; no recursion limit).
RLLM_IMPORTS = """\
from itertools import accumulate, chain, combinations, count, permutations, product, groupby, islice, repeat
from copy import deepcopy
from string import ascii_lowercase, ascii_uppercase
from math import floor, log2, log10, sqrt, comb, gcd, ceil, inf, isqrt, factorial, atan2, pi
from collections import defaultdict, deque, Counter
from bisect import bisect, bisect_left, bisect_right, insort
from heapq import heappush, heappop, heapify, merge, nlargest, nsmallest, heapreplace
from functools import reduce, cache, lru_cache, cmp_to_key, reduce
from random import randrange, shuffle
from operator import itemgetter, sub, xor, or_
from re import search as re_search
from os.path import commonprefix
from typing import List, Tuple, Dict, Set, Optional, Union, Any, Callable, Iterable, Iterator, Generator, Deque
import copy
import string
import math
import collections
import bisect
import heapq
import functools
import random
import itertools
import operator
import re
import datetime
from time import time
import numpy as np
import pandas as pd
from math import log, prod
from collections import deque, defaultdict, Counter, OrderedDict
from itertools import accumulate, permutations, combinations, product, groupby, islice, chain, repeat, zip_longest, cycle, pairwise
from functools import lru_cache, reduce, partial
from operator import iand
import sys
import io, os
"""

# What each reference's `reliability_guard()` sets to None before it runs the program (the
# program sees these, e.g. `os.getcwd()` is a TypeError there).
GUARDED_OS = ("kill system remove removedirs rmdir fchdir setuid fork forkpty killpg rename renames truncate "
              "replace unlink fchmod fchown chmod chown chroot lchflags lchmod lchown getcwd chdir").split()
GUARDED_MODULES = ("ipdb", "joblib", "resource", "psutil", "tkinter")


def main_guard_unwrapped(source):
    """Both references: when the LAST top-level statement is exactly
    `if __name__ == '__main__':`, the program becomes everything before it (unparsed) plus its
    body; anything else (a guard followed by more code, a parse error) is left as it is."""
    try:
        tree = ast.parse(source)
        last = tree.body[-1]
        if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
            return ast.unparse(tree.body[:-1]) + "\n" + ast.unparse(last.body)
    except Exception:
        pass
    return source


def prime_program(source):
    """prime_code's text transformation: lines starting with `from `/`import ` stay at module
    level until the first other line; from there every line goes into `def code():` one tab
    deeper, after module-level aliases `stdin`/`stdout` of the streams of that moment."""
    lines = []
    for line in main_guard_unwrapped(source).split("\n"):
        is_import = line.startswith("from ") or line.startswith("import ")
        lines.append(line + "\n" if is_import else "\t" + line + "\n")
    program, started = "", False
    for line in lines:
        if line.startswith("\t") and not started:
            program += "stdin = sys.stdin\nstdout = sys.stdout\ndef code():\n" + line
            started = True
        elif started and (line.startswith("from ") or line.startswith("import ")):
            program += "\t" + line
        else:
            program += line
    return PRIME_HEADER + program


def rllm_program(source):
    """rllm's LiveCodeBench transformation: top-level imports stay at module level, every other
    top-level statement goes into `def wrapped_function():`, rllm's import block first. A
    program that does not parse is left as it is (executing it then fails)."""
    source = main_guard_unwrapped(source)
    try:
        tree = ast.parse(source)
        imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        others = [node for node in tree.body if not isinstance(node, (ast.Import, ast.ImportFrom))]
        arguments = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
        # An empty body unparses to a bare `def` line, which then fails to compile: as upstream.
        function = ast.FunctionDef(name="wrapped_function", args=arguments, body=others,
                                   decorator_list=[], lineno=-1)
        if sys.version_info >= (3, 12):
            function.type_params = []
        return RLLM_IMPORTS + "\n" + ast.unparse(imports) + "\n" + ast.unparse(function)
    except Exception:
        return source


def preload_harness_modules(harness):
    """Imports, once in the runner, what every batch child of this harness imports (the
    header's modules, the guard's shutil and subprocess, the mock machinery): forked children
    then find them in `sys.modules` instead of importing them again for every job."""
    import importlib

    names = ["shutil", "subprocess", "unittest.mock"]
    if harness == "prime":
        names += PRIME_MODULES
    else:
        names += ["copy", "string", "math", "collections", "bisect", "heapq", "functools", "random",
                  "itertools", "operator", "re", "datetime", "time", "typing", "os.path", "io"]
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


HARNESS_PROGRAMS = {"prime": prime_program, "live_code_bench": rllm_program}
# The function each harness calls once per test.
HARNESS_ENTRY = {"prime": "code", "live_code_bench": "wrapped_function"}


def harness_module(harness):
    """The module the reference executes the program in: named `tmp_sol`, never `__main__`
    (prime_code also registers it in `sys.modules`)."""
    module = types.ModuleType("tmp_sol")
    module.__dict__["__builtins__"] = builtins
    if harness == "prime":
        sys.modules["tmp_sol"] = module
    return module


def guard_like_the_reference(harness):
    """The parts of the reference's `reliability_guard()` a program can observe."""
    import shutil
    import subprocess

    os.environ["OMP_NUM_THREADS"] = "1"
    for name in GUARDED_OS:
        setattr(os, name, None)
    if harness == "prime":
        os.putenv = None
        builtins.exit = None
    builtins.quit = None
    builtins.help = None
    shutil.rmtree = shutil.move = shutil.chown = None
    subprocess.Popen = None
    for name in GUARDED_MODULES:
        sys.modules[name] = None
    if harness == "prime":
        sys.modules["subprocess"] = None
        sys.modules["ctypes"] = None


class LazyMockOpen:
    """Stands for `unittest.mock.mock_open(read_data=text)`, the `open` both references install
    for every test, but builds that mock only when the program first uses `open` (building it
    costs milliseconds, which dominated a test's cost, and most programs never call it). Calls,
    attributes and repr go to the real mock, so `open(0).read()`, `with open(...)`, iteration
    and `open.call_args` behave as upstream."""

    __slots__ = ("_text", "_mock")

    def __init__(self, text):
        self._text = text
        self._mock = None

    def _real(self):
        if self._mock is None:
            from unittest.mock import mock_open

            self._mock = mock_open(read_data=self._text)
        return self._mock

    def __call__(self, *arguments, **keywords):
        return self._real()(*arguments, **keywords)

    def __getattr__(self, name):
        return getattr(self._real(), name)

    def __repr__(self):
        return repr(self._real())


NOT_SET = object()
PATCHED_READERS = ("read", "readlines", "readline")


def call_with_mocked_stdin(function, text):
    """Calls the program the way both references do (their stack of `unittest.mock.patch`
    decorators, applied here directly, which is the same in effect and a hundred times
    cheaper): first, on the stdin object of that moment (which a module-level
    `from sys import *` or `stdin = sys.stdin` also holds), `read` and `readlines` return the
    whole input and `readline` the next line WITHOUT its newline; then `sys.stdin` becomes a
    StringIO of the input and `open` a mock returning it. Everything is put back afterwards
    (attributes the object did not have of its own are deleted again). `SystemExit` ends the
    call normally."""
    lines = iter(text.split("\n"))
    stdin = sys.stdin
    own = getattr(stdin, "__dict__", {})
    saved = [(name, own.get(name, NOT_SET)) for name in PATCHED_READERS]
    stdin.read = lambda *arguments: text
    stdin.readlines = lambda *arguments: text.split("\n")
    stdin.readline = lambda *arguments: next(lines)
    opener = builtins.open
    sys.stdin = io.StringIO(text)
    builtins.open = LazyMockOpen(text)
    try:
        return function()
    except SystemExit:
        pass
    finally:
        builtins.open = opener
        sys.stdin = stdin
        for name, value in reversed(saved):
            if value is NOT_SET:
                delattr(stdin, name)
            else:
                setattr(stdin, name, value)


def harness_entry(units, harness, namespace):
    """Runs the harness program's module-level code in `namespace` (what the reference does
    once per process, with its guard in place) and returns the function to call per test."""
    guard_like_the_reference(harness)
    for code in units:
        exec(code, namespace)
    return namespace[HARNESS_ENTRY[harness]]


def captured_call(function, text):
    """One test: stdout captured in a StringIO whose `close` takes one argument (so
    `sys.stdout.close()` raises TypeError, as in both references). Returns (printed text,
    traceback text or None)."""
    saved = sys.stdout
    capture = io.StringIO()
    capture.close = lambda x: 1
    sys.stdout = capture
    failure = None
    try:
        call_with_mocked_stdin(function, text)
    except Exception as error:
        failure = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    finally:
        sys.stdout = saved
    return capture.getvalue(), failure


# The batch child. One forked process per stage runs the job's tests one after another, in
# lock step with the runner: the runner writes a test's index on the control pipe, the child
# runs it and writes back one result; the runner measures the wall clock and kills the child
# at a test's limit. Module-level code runs once, before the first test, as in the references.

BATCH_FRAME = struct.Struct("<IiII")  # index, status (0 ok, 1 exception), stdout bytes, stderr bytes
BATCH_STOP = 0xFFFFFFFF


def batch_child(state, inputs, control_fd, result_fd, limits):
    """In the forked child: load the harness program once, then run tests on request."""
    status = 1
    try:
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        null = os.open(os.devnull, os.O_RDWR)
        for target in (0, 1, 2):
            os.dup2(null, target)
        os.close(null)
        keep = sorted((control_fd, result_fd))
        os.closerange(3, keep[0])
        os.closerange(keep[0] + 1, keep[1])
        os.closerange(keep[1] + 1, 1 << 16)
        if limits["memory_bytes"] > 0:
            resource.setrlimit(resource.RLIMIT_AS, (limits["memory_bytes"], limits["memory_bytes"]))
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


def report_without_output(outcome, exit_code, signal_number, wall_ms, stderr=b""):
    """A test's report when it produced no output: a batch test that failed, or a test that
    never ran (its program or its code does not compile)."""
    return {"outcome": outcome, "exit_code": exit_code, "signal": signal_number, "aborted": False,
            "wall_ms": round(wall_ms, 3), "cpu_ms": 0.0, "maxrss_kib": 0, "stdout_len": 0,
            "stdout_truncated": False, "stderr_len": len(stderr), "stderr_truncated": False}, b"", stderr


class ChildGone(Exception):
    """A child's result pipe ended: it died (a signal, a limit) or exited."""


def read_with_deadline(fd, size, deadline):
    """Reads exactly `size` bytes; None when the deadline passes first. Raises
    `ChildGone` when the pipe ends."""
    chunks, remaining = [], size
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while remaining > 0:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        # poll takes a C int of milliseconds: wait at most an hour at a time.
        if not poller.poll(min(max(1, math_ceil(left * 1000)), 3_600_000)):
            continue
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise ChildGone
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def math_ceil(value):
    whole = int(value)
    return whole + 1 if whole < value else whole


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
