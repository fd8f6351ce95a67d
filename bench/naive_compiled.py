"""The naive harness for compiled languages (issue 24): what a reward script does without a
sandbox of its own. Per distinct source, compile once (g++ with the judge's flags but linked
dynamically, as a plain `g++ -O2` does; `javac`), then one fresh process per test with
`subprocess.run` on a 2-thread pool (the binary, or `java -cp DIR Main`), pass = exit 0 and
`stdout.strip() == expected.strip()`. No isolation at all: it is the cost floor of "a process
per test", not a sandbox.

Usage: naive_compiled.py JOBS.jsonl --language cpp|java [--threads 2]
Prints one JSON object: tests, seconds (compiles included), compile_seconds, tests_per_second,
mean pass rate.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

BLOCK = re.compile(r"```(\w+)\n(.*?)\n```", re.DOTALL)


def compile_source(language, source, directory):
    if language == "cpp":
        path = os.path.join(directory, "main.cpp")
        with open(path, "w") as handle:
            handle.write(source)
        binary = os.path.join(directory, "main")
        subprocess.run(["g++", "-std=gnu++17", "-O2", "-o", binary, path], check=True)
        return [binary]
    if language == "java":
        path = os.path.join(directory, "Main.java")
        with open(path, "w") as handle:
            handle.write(source)
        subprocess.run(["javac", "-d", directory, path], check=True)
        return ["java", "-cp", directory, "Main"]
    raise SystemExit(f"unknown language {language}")


def main():
    jobs_path = sys.argv[1]
    language = sys.argv[sys.argv.index("--language") + 1]
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 2
    jobs = [json.loads(line) for line in open(jobs_path)]
    started = time.perf_counter()
    commands = {}
    compile_seconds = 0.0
    workspace = tempfile.mkdtemp()
    tasks = []
    for number, job in enumerate(jobs):
        source = BLOCK.findall(job["response"])[-1][1]
        if source not in commands:
            directory = os.path.join(workspace, str(number))
            os.mkdir(directory)
            compile_started = time.perf_counter()
            commands[source] = compile_source(language, source, directory)
            compile_seconds += time.perf_counter() - compile_started
        truth = job["ground_truth"]
        for stdin, expected in zip(truth["inputs"], truth["outputs"]):
            tasks.append((number, commands[source], stdin, expected))

    def run(task):
        number, command, stdin, expected = task
        try:
            completed = subprocess.run(command, input=stdin.encode(), capture_output=True, timeout=10)
        except subprocess.TimeoutExpired:
            return number, False
        return number, completed.returncode == 0 and completed.stdout.decode().strip() == expected.strip()

    with ThreadPoolExecutor(max_workers=threads) as pool:
        results = list(pool.map(run, tasks))
    seconds = time.perf_counter() - started
    passed = sum(ok for _, ok in results)
    print(json.dumps({
        "tests": len(results),
        "seconds": round(seconds, 3),
        "compile_seconds": round(compile_seconds, 3),
        "tests_per_second": round(len(results) / seconds, 2),
        "pass_rate": passed / max(len(results), 1),
    }))


if __name__ == "__main__":
    main()
