"""Two versions of the runner's Python side, side by side (issue 33: the embedded package against
the concatenated program it replaced), started as the binary starts them and measured in turn
so that the machine's load hits both alike, without a sandbox:

  start_ms          from spawning the interpreter to the answer to its first `load`
  template_kib      the template's anonymous memory then (every test child descends from it)
  test_ms           one test's round trip (W1's "read two ints, print their sum"): p10, p25, median
  child_cpu_ms      the test child's own CPU time (user + system), median
  job_cpu_ms        the job process's CPU time per test, over all tests

Usage: runner_ab.py BEFORE_DIRECTORY AFTER_DIRECTORY [STARTS] [TESTS]
A directory is a copy of crates/rlvr-runner/src/runner of its commit, e.g.
  git archive 91a2aaf crates/rlvr-runner/src/runner | tar -x -C /tmp/before
(one holding header.py is the concatenated program; otherwise the package, whose
test_child_steps module is made from crates/rlvr-sandbox/src/test_child_steps.txt of this tree).
Prints one JSON object per version.
"""

import json
import os
import statistics
import sys
import time

from runner_breakdown import STEPS_FILE, Runner

# The order of the concatenated program (RUNNER_SOURCE before issue 33).
CONCATENATED_FILES = ("header", "protocol", "process", "harness", "codec", "sensor", "live", "isolation", "test",
                      "job", "main")
PIECE_BYTES = 64 * 1024
SUM_PROGRAM = "a, b = map(int, input().split())\nprint(a + b)"


def read(path):
    with open(path) as handle:
        return handle.read()


def pieces(source):
    """`source` in pieces under Linux's 128 KiB per argument, cut at line breaks."""
    cut = []
    while len(source.encode()) > PIECE_BYTES:
        end = source.rfind("\n", 0, PIECE_BYTES // 4) + 1 or PIECE_BYTES // 4
        cut.append(source[:end])
        source = source[end:]
    return cut + [source]


def arguments(directory):
    bootstrap = read(os.path.join(directory, "bootstrap.py"))
    if os.path.exists(os.path.join(directory, "header.py")):
        program = "".join(read(os.path.join(directory, name + ".py")) for name in CONCATENATED_FILES)
        return ["-I", "-S", "-c", bootstrap] + pieces(program)
    modules = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".py") and name != "bootstrap.py":
            module = "rlvr_runner" if name == "__init__.py" else "rlvr_runner." + name[:-3]
            modules.append((module, pieces(read(os.path.join(directory, name)))))
    steps = tuple(read(STEPS_FILE).splitlines())
    modules.append(("rlvr_runner.test_child_steps", [f"TEST_CHILD_STEPS = {steps!r}\n"]))
    manifest = " ".join(f"{module} {len(parts)}" for module, parts in modules)
    return ["-I", "-S", "-c", bootstrap, "rlvr_runner.main", manifest] + [part for _, parts in modules for part in parts]


def anonymous_kib(pid):
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    return 0


def cpu_ms(pid):
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def job_process(runner):
    pid = runner.process.pid
    with open(f"/proc/{pid}/task/{pid}/children") as handle:
        return int(handle.read().split()[0])


def main():
    before, after = sys.argv[1], sys.argv[2]
    starts = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    tests = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    versions = {"before": arguments(before), "after": arguments(after)}
    results = {name: {"start_ms": [], "template_kib": [], "test_ms": [], "child_cpu_ms": []} for name in versions}
    for _ in range(starts):
        for name, command in versions.items():
            started = time.perf_counter()
            runner = Runner(command)
            runner.load("pass")
            results[name]["start_ms"].append((time.perf_counter() - started) * 1000)
            results[name]["template_kib"].append(anonymous_kib(runner.process.pid))
            runner.send({"op": "exit"})
            runner.process.wait()
    runners = {name: Runner(command) for name, command in versions.items()}
    job_cpu = {}
    for name, runner in runners.items():
        runner.load(SUM_PROGRAM)
        runner.run(b"1 2\n")
        job = job_process(runner)
        job_cpu[name] = (job, cpu_ms(job))
    order = list(runners)
    for index in range(tests):
        for name in order[index % 2:] + order[:index % 2]:
            started = time.perf_counter()
            report = runners[name].run(b"3 4\n")
            results[name]["test_ms"].append((time.perf_counter() - started) * 1000)
            results[name]["child_cpu_ms"].append(report["cpu_ms"])
    for name, runner in runners.items():
        job, at_start = job_cpu[name]
        results[name]["job_cpu_ms"] = (cpu_ms(job) - at_start) / tests
        runner.send({"op": "exit"})
        runner.process.wait()
    for name, result in results.items():
        deciles = statistics.quantiles(result["test_ms"], n=20)
        print(json.dumps({
            "version": name,
            "start_ms": round(statistics.median(result["start_ms"]), 2),
            "template_kib": statistics.median(result["template_kib"]),
            "test_ms": {"p10": round(deciles[1], 3), "p25": round(deciles[4], 3),
                        "median": round(statistics.median(result["test_ms"]), 3)},
            "child_cpu_ms": round(statistics.median(result["child_cpu_ms"]), 3),
            "job_cpu_ms": round(result["job_cpu_ms"], 3),
        }))


if __name__ == "__main__":
    main()
