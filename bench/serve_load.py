"""Load test for `rlvr serve` (issue 8), run as a second process on loopback.

    serve_load.py make JOBS.jsonl [N]        N jobs (default 10,000): 4 stdin tests each, 3 in 4
                                             answers right, the rest wrong, a few crashing
    serve_load.py load URL JOBS.jsonl [--concurrency 64] [--batch 16]
                                             POSTs the jobs to /v1/verify in batches from
                                             `concurrency` threads; prints one JSON summary line

The summary: requests, failed requests (any non-200 or transport error), jobs, wall seconds,
jobs/s, p50/p99/max request latency in ms, and the mean score (to compare with `rlvr verify`).
"""

import http.client
import json
import random
import sys
import threading
import time
import urllib.parse


def make(out, count=10_000, seed=8):
    generator = random.Random(seed)
    right = "a, b = map(int, input().split())\nprint(a + b)"
    wrong = "a, b = map(int, input().split())\nprint(a - b)"
    crash = "a, b = map(int, input().split())\nprint(a + b / 0)"
    with open(out, "w") as handle:
        for index in range(count):
            pairs = [(generator.randint(-999, 999), generator.randint(-999, 999)) for _ in range(4)]
            code = right if index % 4 else (crash if index % 40 == 0 else wrong)
            handle.write(json.dumps({
                "id": index,
                "response": f"<think>\nAdd them.\n</think>\n```python\n{code}\n```",
                "ground_truth": {"inputs": [f"{a} {b}\n" for a, b in pairs], "outputs": [f"{a + b}\n" for a, b in pairs]},
            }) + "\n")


def load(url, jobs_path, concurrency=64, batch=16):
    jobs = [json.loads(line) for line in open(jobs_path)]
    batches = [jobs[start:start + batch] for start in range(0, len(jobs), batch)]
    parsed = urllib.parse.urlparse(url)
    lock = threading.Lock()
    latencies, failures, scores = [], [], []
    cursor = iter(range(len(batches)))

    def worker():
        connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=600)
        while True:
            with lock:
                index = next(cursor, None)
            if index is None:
                break
            body = json.dumps({"jobs": batches[index]})
            started = time.perf_counter()
            try:
                connection.request("POST", "/v1/verify", body=body, headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                payload = response.read()
                elapsed = time.perf_counter() - started
                if response.status != 200:
                    raise RuntimeError(f"HTTP {response.status}: {payload[:200]!r}")
                results = json.loads(payload)["results"]
                if len(results) != len(batches[index]):
                    raise RuntimeError("wrong number of results")
                with lock:
                    latencies.append(elapsed)
                    scores.extend(result["score"] for result in results)
            except Exception as error:  # noqa: BLE001 - every failure is counted and reported
                with lock:
                    failures.append(f"{type(error).__name__}: {error}")
                connection.close()
                connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=600)
        connection.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    latencies.sort()

    def percentile(fraction):
        return round(1000 * latencies[min(len(latencies) - 1, int(fraction * len(latencies)))], 1) if latencies else None

    print(json.dumps({
        "requests": len(batches),
        "failed_requests": len(failures),
        "first_failure": failures[0] if failures else None,
        "jobs": len(scores),
        "wall_s": round(wall, 3),
        "jobs_per_s": round(len(scores) / wall, 1),
        "p50_ms": percentile(0.50),
        "p99_ms": percentile(0.99),
        "max_ms": percentile(1.0),
        "mean_score": round(sum(score for score in scores if score is not None) / max(1, len(scores)), 4),
        "concurrency": concurrency,
        "batch": batch,
    }))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 10_000)
    else:
        arguments = sys.argv[2:]
        options = {"concurrency": 64, "batch": 16}
        for flag in ("--concurrency", "--batch"):
            if flag in arguments:
                position = arguments.index(flag)
                options[flag[2:]] = int(arguments[position + 1])
                del arguments[position:position + 2]
        load(arguments[0], arguments[1], **options)
