# The in-process harnesses of the references (verl prime_code; rllm's copy of LiveCodeBench's
# grader): how each transforms the program and calls it for one test (the batch child that runs
# many tests of one job in ONE process, as both references do, is runner/batch.py). Every rule below was written from the references' behaviour and is
# checked against their real code's measured outcomes by the differential tests
# (tests/reference/).

import ast
import builtins
import io
import os
import sys
import traceback
import types


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
