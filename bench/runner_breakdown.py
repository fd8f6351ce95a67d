"""Where the time of one test goes in the warm runner (issue 6), measured without the sandbox
(the sandbox is paid once per job; see BENCHMARKS.md for its cost):

  fork+exit+wait    os.fork() of the runner-sized interpreter, child os._exit, parent wait
  empty test        a full protocol round trip for `pass` (fork, memory files, limits,
                    fresh std streams, reports): the runner's fixed cost per test
  sum test          "read two ints, print their sum" (W1's program)
  comparison        left to Rust: microseconds (not measured here)

Usage: runner_breakdown.py [TESTS]   (prints one JSON object of medians in milliseconds)
"""

import json
import os
import statistics
import struct
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(__file__), "..")
RUNNER_DIRECTORY = os.path.join(ROOT, "crates", "rlvr-runner", "src", "runner")
STEPS_FILE = os.path.join(ROOT, "crates", "rlvr-sandbox", "src", "test_child_steps.txt")


def runner_arguments():
    """The interpreter's arguments as `rlvr_runner::interpreter_arguments` builds them: the
    bootstrap, the entry module, the manifest, then each module's source (one piece each: the
    files are far below Linux's 128 KiB per argument)."""
    modules = []
    for name in sorted(os.listdir(RUNNER_DIRECTORY)):
        if name.endswith(".py") and name != "bootstrap.py":
            module = "rlvr_runner" if name == "__init__.py" else "rlvr_runner." + name[:-3]
            with open(os.path.join(RUNNER_DIRECTORY, name)) as handle:
                modules.append((module, handle.read()))
    with open(STEPS_FILE) as handle:
        steps = handle.read().splitlines()
    modules.append(("rlvr_runner.test_child_steps", f"TEST_CHILD_STEPS = {tuple(steps)!r}\n"))
    with open(os.path.join(RUNNER_DIRECTORY, "bootstrap.py")) as handle:
        bootstrap = handle.read()
    manifest = " ".join(f"{module} 1" for module, _ in modules)
    return ["-I", "-S", "-c", bootstrap, "rlvr_runner.main", manifest] + [source for _, source in modules]


class Runner:
    def __init__(self, arguments=None):
        arguments = runner_arguments() if arguments is None else arguments
        self.process = subprocess.Popen([sys.executable] + arguments, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(self, header, *payloads):
        data = json.dumps(header).encode()
        self.process.stdin.write(struct.pack("<I", len(data)) + data + b"".join(payloads))
        self.process.stdin.flush()

    def receive(self):
        (length,) = struct.unpack("<I", self.process.stdout.read(4))
        header = json.loads(self.process.stdout.read(length))
        self.process.stdout.read(header.get("stdout_len", 0) + header.get("stderr_len", 0))
        return header

    def load(self, source):
        self.send({"op": "load", "units": [len(source.encode())], "preload": []}, source.encode())
        return self.receive()

    def run(self, stdin):
        self.send({"op": "run", "stdin": len(stdin), "extra": 0, "has_extra": False, "wall_ms": 10000,
                   "cpu_s": 10, "output_bytes": 1 << 20, "memory_bytes": 0}, stdin)
        return self.receive()


def time_tests(runner, source, stdin, count):
    runner.load(source)
    samples, child = [], []
    for _ in range(count):
        started = time.perf_counter()
        report = runner.run(stdin)
        samples.append((time.perf_counter() - started) * 1000)
        child.append(report["wall_ms"])
    return statistics.median(samples), statistics.median(child)


def fork_exit_wait(count):
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    runner = Runner()
    empty_round_trip, empty_child = time_tests(runner, "pass", b"", count)
    sum_round_trip, sum_child = time_tests(runner, "a, b = map(int, input().split())\nprint(a + b)", b"3 4\n", count)
    print(json.dumps({
        "tests": count,
        "fork_exit_wait_ms": round(fork_exit_wait(count), 3),
        "empty_test_round_trip_ms": round(empty_round_trip, 3),
        "empty_test_child_wall_ms": round(empty_child, 3),
        "sum_test_round_trip_ms": round(sum_round_trip, 3),
        "sum_test_child_wall_ms": round(sum_child, 3),
    }))
    runner.send({"op": "exit"})
    runner.process.wait()


if __name__ == "__main__":
    main()
