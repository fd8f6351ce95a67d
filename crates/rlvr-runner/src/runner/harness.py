# The in-process harnesses of the references (verl prime_code, LiveCodeBench as rllm uses it).

# The star-import header verl's prime_code puts before every stdin program (a list of standard
# modules, then the recursion limit it sets).
PRIME_MODULES = ("string re datetime collections heapq bisect copy math random statistics itertools "
                 "functools operator io sys json builtins typing").split()
PRIME_HEADER = (
    "".join(f"from {module} import *\n" for module in PRIME_MODULES)
    + "".join(f"import {module}\n" for module in PRIME_MODULES if module not in ("builtins", "typing"))
    + "sys.setrecursionlimit(6*10**5)\n"
)
# LiveCodeBench's (rllm's copy) preamble: the common imports and its recursion limit.
LIVE_CODE_BENCH_HEADER = (
    "import itertools, collections, heapq, bisect, math, string, re, functools, operator, random, sys\n"
    "from typing import *\nfrom collections import *\nfrom itertools import *\nfrom heapq import *\n"
    "from bisect import *\nfrom math import *\nfrom functools import *\n"
    "sys.setrecursionlimit(50000)\n"
)


def without_main_guard(source):
    """Unwraps a final `if __name__ == '__main__':` block (both references do)."""
    try:
        tree = ast.parse(source)
        last = tree.body[-1]
        if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
            return ast.unparse(tree.body[:-1]) + "\n" + ast.unparse(last.body)
    except Exception:
        pass
    return source


def prime_program(source):
    """verl prime_code's text transformation: lines that start with `import `/`from ` stay at
    module level until the first other line; from there every line goes into `def code():`
    (one tab deeper), and module-level aliases `stdin`/`stdout` bind the real streams."""
    lines = []
    for line in without_main_guard(source).split("\n"):
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


def live_code_bench_program(source):
    """LiveCodeBench's transformation: top-level imports hoisted, every other statement wrapped
    into `def code():`."""
    tree = ast.parse(without_main_guard(source))
    imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    body = [node for node in tree.body if not isinstance(node, (ast.Import, ast.ImportFrom))] or [ast.Pass()]
    arguments = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    function = ast.FunctionDef(name="code", args=arguments, body=body, decorator_list=[], returns=None)
    if sys.version_info >= (3, 12):
        function.type_params = []
    module = ast.Module(body=imports + [function], type_ignores=[])
    return LIVE_CODE_BENCH_HEADER + ast.unparse(ast.fix_missing_locations(module)) + "\n"


HARNESS_PROGRAMS = {"prime": prime_program, "live_code_bench": live_code_bench_program}


def run_in_harness(harness, namespace, stdin_text):
    """The in-process rules of prime_code and LiveCodeBench: call `code()` with stdin mocked
    by a string and stdout captured in memory; `SystemExit` ends the test normally, any other
    exception fails it (exit status 1)."""
    import unittest.mock

    method = namespace.get("code")
    if method is None:
        raise RuntimeError("the harness found no code() to call")
    capture = io.StringIO()
    if harness == "prime":
        # verl's capture replaces close() by a one-argument lambda: `sys.stdout.close()` raises.
        capture.close = lambda x: 1
    saved_stdout = sys.stdout
    sys.stdout = capture
    sys.stdin = io.StringIO(stdin_text)
    opener = builtins.open
    if harness == "prime":
        builtins.open = unittest.mock.mock_open(read_data=stdin_text)
    try:
        method()
    except SystemExit:
        pass
    finally:
        builtins.open = opener
        sys.stdout = saved_stdout
        return_text = capture.getvalue()
        saved_stdout.write(return_text)

