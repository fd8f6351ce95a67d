"""Baselines for the verify benchmark: what the reference rewards do, minus their reward logic.

One fresh `python3` process per test with `subprocess.run`, on a 2-thread pool (Klear's
`ThreadPoolExecutor(max_workers=2)`), pass = exit 0 and `stdout.strip() == expected.strip()`;
functional: one process per assert with Klear's import prefix (numpy and pandas). `--firejail`
wraps every process in Klear-Reasoner's firejail command line (firejail_exec.py).

Usage: per_test_process.py JOBS.jsonl [--firejail] [--threads 2] [--klear-prefix]
Prints one JSON object: tests, seconds, tests_per_second, mean pass rate, and per-job pass rates.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

PYTHON = os.environ.get("RLVR_PYTHON") or sys.executable
CODE_PATTERN = re.compile(r"</think>.*```python\n(.*?)\n```", re.DOTALL)
PREFIX = "\n".join(
    [
        "import itertools, collections, heapq, bisect, math, string, re, functools, operator, random, sys",
        "from typing import *",
        "from collections import *",
        "import numpy as np",
        "import pandas as pd",
        "from time import time",
    ]
)
FIREJAIL = [
    "firejail", "--private", "--quiet", "--seccomp=socket", "--profile=pip", "--rlimit-nproc=32",
    "--rlimit-nofile=32", "--rlimit-fsize=8m", "--rlimit-as=1024m", "--timeout=00:00:35",
]


def run_program(source, stdin, firejail):
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(source)
        path = handle.name
    try:
        command = [PYTHON, path]
        if firejail:
            command = FIREJAIL + [f"--whitelist={path}"] + command
        environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        environment["OPENBLAS_NUM_THREADS"] = "1"
        completed = subprocess.run(
            command, input=stdin.encode() if stdin else None, capture_output=True, timeout=35, env=environment
        )
        return completed.returncode, completed.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return None, ""
    finally:
        os.unlink(path)


def job_tasks(job, klear_prefix):
    match = CODE_PATTERN.search(job["response"])
    code = match.group(1) if match else ""
    truth = job["ground_truth"]
    if "functional" in truth:
        prefix = PREFIX + "\n\n" if klear_prefix else ""
        return [(prefix + code + "\n\n" + test, "", None) for test in truth["functional"]]
    return [(code, i, o) for i, o in zip(truth["inputs"], truth["outputs"])]


def check(task, firejail):
    source, stdin, expected = task
    code, stdout = run_program(source, stdin, firejail)
    if expected is None:
        return code == 0
    return code == 0 and stdout.strip() == expected.strip()


def main():
    path = sys.argv[1]
    firejail = "--firejail" in sys.argv
    klear_prefix = "--klear-prefix" in sys.argv
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 2
    jobs = [json.loads(line) for line in open(path)]
    started = time.monotonic()
    rates = []
    tests = 0
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for job in jobs:
            tasks = job_tasks(job, klear_prefix)
            results = list(pool.map(lambda task: check(task, firejail), tasks))
            tests += len(results)
            rates.append(sum(results) / len(results))
    seconds = time.monotonic() - started
    print(json.dumps({"tests": tests, "seconds": round(seconds, 3), "tests_per_second": round(tests / seconds, 1),
                      "mean_pass_rate": sum(rates) / len(rates), "pass_rates": rates}))


if __name__ == "__main__":
    main()
