"""The differential corpus: right, wrong and tricky programs for every reference reward.

Each case is a JSON line {"id", "response", "ground_truth"} scored by both the upstream reward
(score_upstream.py, or its recorded outcomes) and `rlvr verify --profile P`. The programs exercise what the references
differ on: how a program ends (exit(), sys.exit(1), excepthook, atexit, os._exit with buffered
output), how it reads stdin (open(0), from sys import *, sys.stdin.buffer, os.read), where it
writes (os.write(1, ...), stderr), main guards, list outputs, float formats, whitespace, the
import block functional programs get, and timeouts.

Usage: corpus.py OUT_DIRECTORY  (writes klear.jsonl, code-r1.jsonl, rllm-stdin.jsonl,
rllm-functional.jsonl, prime.jsonl). Deterministic: the same files every time.
"""

import json
import os
import sys

# Stdin problems: (name, reading statement, expression of the answer, tests as (input, output)).
STDIN_PROBLEMS = [
    ("sum", "a, b = map(int, input().split())", "a + b",
     [("1 2\n", "3\n"), ("40 2\n", "42\n"), ("-5 5\n", "0\n")]),
    ("third", "a = int(input())", "a / 3",
     [("1\n", "0.3333333333333333\n"), ("3\n", "1.0\n"), ("10\n", "3.3333333333333335\n")]),
    ("parity", "a = int(input())", "'YES' if a % 2 == 0 else 'NO'",
     [("4\n", "YES\n"), ("7\n", "NO\n"), ("0\n", "YES\n")]),
    ("countdown", "a = int(input())", "'\\n'.join(str(value) for value in range(a, 0, -1))",
     [("3\n", "3\n2\n1\n"), ("1\n", "1\n"), ("2\n", "2\n1\n")]),
]

# Stdin variants: (name, template). READ and VALUE are replaced per problem.
STDIN_VARIANTS = [
    ("right", "READ\nprint(VALUE)"),
    ("right-main-guard", "def main():\n    READ\n    print(VALUE)\n\nif __name__ == '__main__':\n    main()"),
    ("right-main-guard-double-quotes", 'def main():\n    READ\n    print(VALUE)\n\nif __name__ == "__main__":\n    main()'),
    ("main-guard-not-last", "def main():\n    READ\n    print(VALUE)\n\nif __name__ == '__main__':\n    main()\nx = 1"),
    ("name-printed", "READ\nprint(VALUE)\nprint(__name__ == '__main__')"),
    ("wrong", "READ\nprint(str(VALUE) + '0')"),
    ("empty-output", "READ"),
    ("crash-before", "READ\n1 / 0\nprint(VALUE)"),
    ("crash-after", "READ\nprint(VALUE)\n1 / 0"),
    ("exit-after", "READ\nprint(VALUE)\nexit()"),
    ("quit-after", "READ\nprint(VALUE)\nquit()"),
    ("sys-exit-0-after", "import sys\nREAD\nprint(VALUE)\nsys.exit(0)"),
    ("sys-exit-1-after", "import sys\nREAD\nprint(VALUE)\nsys.exit(1)"),
    ("system-exit-2-after", "READ\nprint(VALUE)\nraise SystemExit(2)"),
    ("os-exit-buffered", "import os\nREAD\nprint(VALUE)\nos._exit(0)"),
    ("os-exit-flushed", "import os\nREAD\nprint(VALUE, flush=True)\nos._exit(0)"),
    ("excepthook-exit-0-buffered", "import os, sys\nsys.excepthook = lambda *a: os._exit(0)\nREAD\nprint(VALUE)\nraise ValueError"),
    ("excepthook-exit-0-flushed", "import os, sys\nsys.excepthook = lambda *a: os._exit(0)\nREAD\nprint(VALUE, flush=True)\nraise ValueError"),
    ("atexit-prints-answer", "import atexit\nREAD\natexit.register(print, VALUE)"),
    ("open-zero", "import io\ndata = open(0).read()\nimport sys\nsys.stdin = io.StringIO(data)\nREAD\nprint(VALUE)"),
    ("stdin-buffer", "import io, sys\ndata = sys.stdin.buffer.read().decode()\nsys.stdin = io.StringIO(data)\nREAD\nprint(VALUE)"),
    ("os-read-zero", "import io, os, sys\ndata = os.read(0, 1 << 16).decode()\nsys.stdin = io.StringIO(data)\nREAD\nprint(VALUE)"),
    ("from-sys-star-readline", "from sys import *\nline = stdin.readline()\nprint(repr(line.endswith(chr(10))))"),
    ("stdin-alias-read", "import io, sys\nsource = sys.stdin\ndata = source.read()\nsys.stdin = io.StringIO(data)\nREAD\nprint(VALUE)"),
    ("os-write-one", "import os\nREAD\nos.write(1, (str(VALUE) + chr(10)).encode())"),
    ("stdout-write-no-newline", "import sys\nREAD\nsys.stdout.write(str(VALUE))"),
    ("stderr-only", "import sys\nREAD\nprint(VALUE, file=sys.stderr)"),
    ("trailing-spaces", "READ\nprint(str(VALUE).replace(chr(10), '  ' + chr(10)) + '   ')"),
    ("blank-lines-around", "READ\nprint()\nprint(VALUE)\nprint()"),
    ("float-six-places", "READ\nvalue = VALUE\nprint(f'{value:.6f}' if isinstance(value, float) else value)"),
    ("float-as-float", "READ\nvalue = VALUE\nprint(float(value) if isinstance(value, int) else value)"),
    ("extra-input-read", "READ\nprint(VALUE)\ninput()"),
    ("deep-recursion", "import sys\ndef depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\nREAD\nprint(VALUE if depth(1500) == 1500 else -1)"),
    ("syntax-error", "READ\nprint(VALUE"),
    ("only-imports", "import math"),
    ("global-statement", "READ\nanswer = VALUE\ndef show():\n    global answer\n    print(answer)\nshow()"),
    ("bisect-name", "READ\nimport bisect as b\nprint(VALUE)"),
    ("flags-isolated", "import sys\nREAD\nprint(VALUE if sys.flags.isolated == 0 and sys.flags.no_site == 0 else -1)"),
    ("unbuffered-environment", "import os\nREAD\nprint(VALUE if 'PYTHONUNBUFFERED' not in os.environ else -1)"),
    ("close-stdout", "import sys\nREAD\nprint(VALUE)\nsys.stdout.close()"),
    ("getcwd", "import os\nREAD\nos.getcwd()\nprint(VALUE)"),
]

# Response shapes: the default satisfies every reference's format; the others test gates.
def fenced(code, shape="default"):
    if shape == "default":
        return f"<think>\nLet me solve it.\n</think>\n<answer>\n```python\n{code}\n```\n</answer>"
    if shape == "py-tag":
        return f"<think>\nreason\n</think>\n<answer>\n```py\n{code}\n```\n</answer>"
    if shape == "no-think":
        return f"```python\n{code}\n```"
    if shape == "no-answer-tags":
        return f"<think>\nreason\n</think>\n```python\n{code}\n```"
    if shape == "unfenced":
        return f"<think>\nreason\n</think>\n<answer>\n{code}\n</answer>"
    if shape == "two-blocks":
        return f"<think>\nreason\n</think>\n<answer>\n```python\nprint('draft')\n```\n```python\n{code}\n```\n</answer>"
    raise ValueError(shape)


def stdin_cases():
    cases = []
    for problem_number, (problem, read, value, tests) in enumerate(STDIN_PROBLEMS):
        for variant_number, (variant, template) in enumerate(STDIN_VARIANTS):
            # Every variant on "sum"; each other problem takes every third variant.
            if problem != "sum" and (variant_number + problem_number) % 3 != 0:
                continue
            code = template.replace("READ", read).replace("VALUE", value)
            cases.append({
                "id": f"stdin/{problem}/{variant}",
                "response": fenced(code),
                "ground_truth": {"inputs": [t[0] for t in tests], "outputs": [t[1] for t in tests]},
            })
    right = "a, b = map(int, input().split())\nprint(a + b)"
    tests = STDIN_PROBLEMS[0][3]
    truth = {"inputs": [t[0] for t in tests], "outputs": [t[1] for t in tests]}
    for shape in ("py-tag", "no-think", "no-answer-tags", "unfenced", "two-blocks"):
        cases.append({"id": f"stdin/sum/shape-{shape}", "response": fenced(right, shape), "ground_truth": truth})
    # List-valued inputs and outputs (the dataset has a few, e.g. ["123"]).
    cases.append({"id": "stdin/list/one-element", "response": fenced("print(int(input()) * 2)"),
                  "ground_truth": {"inputs": [["21"], ["4"]], "outputs": [["42"], ["8"]]}})
    cases.append({"id": "stdin/list/two-elements", "response": fenced("a = int(input())\nb = int(input())\nprint(a + b)\nprint(a - b)"),
                  "ground_truth": {"inputs": [["5", "3"]], "outputs": [["8", "2"]]}})
    return cases


def timeout_case(per_test_seconds=None):
    truth = {"inputs": ["1\n"], "outputs": ["1\n"]}
    if per_test_seconds is not None:
        truth["timeout"] = per_test_seconds
    return {"id": "stdin/timeout/infinite-loop", "response": fenced("while True:\n    pass"), "ground_truth": truth}


# Functional problems: (name, right solution, wrong solution, asserts).
FUNCTIONAL_PROBLEMS = [
    ("add", "def add(a, b):\n    return a + b", "def add(a, b):\n    return a - b",
     ["assert add(1, 2) == 3", "assert add(2, 2) == 4", "assert add(-1, 1) == 0"]),
    ("linked-list", "class Solution:\n    def reverse(self, head):\n        previous = None\n        while head:\n            head.next, previous, head = previous, head, head.next\n        return previous",
     "class Solution:\n    def reverse(self, head):\n        return head",
     ["assert is_same_list(Solution().reverse(list_node([1, 2, 3])), list_node([3, 2, 1]))",
      "assert is_same_list(Solution().reverse(list_node([5])), list_node([5]))",
      "assert is_same_list(Solution().reverse(list_node([1, 2])), list_node([2, 1]))"]),
]

FUNCTIONAL_VARIANTS = [
    ("right", "RIGHT"),
    ("wrong", "WRONG"),
    ("exit-before-asserts", "WRONG\nexit()"),
    ("sys-exit-0-before-asserts", "import sys\nWRONG\nsys.exit(0)"),
    ("sys-exit-1", "import sys\nRIGHT\nsys.exit(1)"),
    ("os-exit-0", "import os\nWRONG\nos._exit(0)"),
    ("excepthook-exit-0", "import os, sys\nsys.excepthook = lambda *a: os._exit(0)\nWRONG"),
    ("atexit-exit-0", "import atexit, os\natexit.register(os._exit, 0)\nWRONG"),
    ("crash-at-load", "RIGHT\nraise RuntimeError('load')"),
    ("prints-noise", "RIGHT\nprint('noise')"),
    ("bisect-as-function", "RIGHT\nassert bisect([1, 2, 3], 2) == 2"),
    ("numpy-pandas-time", "RIGHT\nassert np.array([1]).sum() == 1 and pd.Series([1]).sum() == 1 and time() > 0"),
    ("helpers-by-keyword", "RIGHT\nassert is_same_list(l1=list_node([1]), l2=list_node([1]))"),
    ("tree-helpers", "RIGHT\nassert is_same_tree(tree_node([1, None, 2]), tree_node([1, None, 2]))"),
    ("syntax-error", "RIGHT\ndef broken(:"),
    ("flags", "import sys\nRIGHT\nassert sys.flags.isolated == 0"),
]


def functional_cases(as_string):
    cases = []
    for problem, right, wrong, asserts in FUNCTIONAL_PROBLEMS:
        for variant, template in FUNCTIONAL_VARIANTS:
            if problem != "add" and variant not in ("right", "wrong", "exit-before-asserts", "helpers-by-keyword"):
                continue
            code = template.replace("RIGHT", right).replace("WRONG", wrong)
            functional = "\n".join(asserts) if as_string else asserts
            cases.append({"id": f"functional/{problem}/{variant}", "response": fenced(code),
                          "ground_truth": {"functional": functional}})
    return cases


def functional_timeout_case(as_string, per_test_seconds=None):
    asserts = ["assert add(1, 2) == 3"]
    truth = {"functional": asserts[0] if as_string else asserts}
    if per_test_seconds is not None:
        truth["timeout"] = per_test_seconds
    return {"id": "functional/timeout/infinite-loop", "response": fenced("def add(a, b):\n    while True:\n        pass"),
            "ground_truth": truth}


def write(directory, name, cases):
    with open(os.path.join(directory, name), "w") as handle:
        for case in cases:
            handle.write(json.dumps(case, sort_keys=True) + "\n")


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    stdin = stdin_cases()
    # Klear reads the per-test timeout from the ground truth: 2 s keeps the timeout case short.
    write(directory, "klear.jsonl", stdin + [timeout_case(2)] + functional_cases(False) + [functional_timeout_case(False, 2)])
    # Code-R1 takes `functional` as one string (a list raises TypeError upstream: one case shows it).
    list_case = dict(functional_cases(False)[0], id="functional/add/right-as-list")
    write(directory, "code-r1.jsonl", stdin + [timeout_case()] + functional_cases(True) + [list_case])
    write(directory, "rllm-stdin.jsonl", stdin + [timeout_case()])
    write(directory, "rllm-functional.jsonl", functional_cases(True) + [functional_timeout_case(True), list_case])
    write(directory, "prime.jsonl", stdin + [timeout_case()] + functional_cases(False)[:2])


if __name__ == "__main__":
    main()
