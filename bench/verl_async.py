"""verl's reward loop, trainer side (issue 34): `rlvr.verl.compute_score_async` against
`compute_score`, and rows named by reference against inline ground truths, through one
`rlvr serve --dataset CARD.jsonl`, in one run with the figures interleaved round by round.

    RLVR_BIN=target/release/rlvr PYTHONPATH=python python bench/verl_async.py \
        [--samples 512] [--rounds 5] [--card-rows 30] [--workers 2] [--card-max-tests 1]

1. Reward loop: `samples` calls in flight on one event loop, as verl's reward worker makes
   them (`asyncio.gather` over per-sample tasks): `compute_score` through
   `loop.run_in_executor(None, ...)` (the default thread pool, as verl runs a sync function)
   against `await compute_score_async(...)`. Workloads: a+b jobs (4 stdin tests, 3 in 4
   right), card-shaped records inline (`ground_truth` = the row's `label`) and the same
   records by reference (`{"index": N}`: `rlvr synth` repeats some rows' hashes). Samples/s per round; medians and the ratio.
2. Requests of one GRPO group (8 samples) per card row, `Client.verify` as a trainer calls
   it: inline against `index`. Request bytes (the JSON bodies the client sends), samples/s,
   and the client process's CPU seconds (encoding megabytes of tests is the trainer's cost).

Responses to the card rows are a wrong program (`print(0)`), run on the first test only
(`max_tests`, 1 by default; the server still receives and parses every test): what a trainer
sees early on, and what makes the transport of the ground truths, not the programs, the cost. Prints a
JSON line per round and the Markdown tables for BENCHMARKS.md.
"""

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import rlvr  # noqa: E402
import rlvr.verl  # noqa: E402
from rlvr._local import LocalServer  # noqa: E402
from rlvr.ground_truth import plain  # noqa: E402

GROUP = 8


def fenced(code):
    return f"<think>\nplan\n</think>\n```python\n{code}\n```"


def addition_samples(count, seed=34):
    generator = random.Random(seed)
    right = fenced("a, b = map(int, input().split())\nprint(a + b)")
    wrong = fenced("a, b = map(int, input().split())\nprint(a - b)")
    samples = []
    for index in range(count):
        pairs = [(generator.randint(-999, 999), generator.randint(-999, 999)) for _ in range(4)]
        truth = {"inputs": [f"{a} {b}\n" for a, b in pairs], "outputs": [f"{a + b}\n" for a, b in pairs]}
        samples.append((right if index % 4 else wrong, truth))
    return samples


def card_rows(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def card_samples(rows, count, by_reference):
    wrong = fenced("print(0)")
    samples = []
    for index in range(count):
        row = rows[index % len(rows)]
        samples.append((wrong, {"index": index % len(rows)} if by_reference else row["label"]))
    return samples


async def reward_loop(samples, url, asynchronous, options):
    """verl's `RewardLoopWorker.compute_score_batch`: a task per sample, gathered."""
    loop = asyncio.get_running_loop()

    async def one(solution, truth):
        keywords = dict(data_source="coder1_longcot", solution_str=solution, ground_truth=truth,
                        extra_info={"num_turns": None, "rollout_reward_scores": {}}, url=url, **options)
        if asynchronous:
            return await rlvr.verl.compute_score_async(**keywords)
        return await loop.run_in_executor(None, lambda: rlvr.verl.compute_score(**keywords))

    return await asyncio.gather(*(one(solution, truth) for solution, truth in samples))


def timed_reward_loop(samples, url, asynchronous, options):
    started = time.perf_counter()
    results = asyncio.run(reward_loop(samples, url, asynchronous, options))
    seconds = time.perf_counter() - started
    return seconds, [result["score"] for result in results]


def group_jobs(rows, by_reference):
    wrong = fenced("print(0)")
    jobs = []
    for index, row in enumerate(rows):
        reference = {"index": index} if by_reference else {"ground_truth": row["label"]}
        jobs += [dict(reference, response=wrong) for _ in range(GROUP)]
    return jobs


def request_bytes(client, jobs, options):
    """The bodies `Client.verify` sends for these jobs (each call's `deadline` field aside)."""
    return [len(json.dumps(call[1], default=plain).encode()) for call in client._verify_calls(jobs, dict(options))]


def timed_groups(client, jobs, options):
    cpu, started = time.process_time(), time.perf_counter()
    results = client.verify(jobs, **options)
    return time.perf_counter() - started, time.process_time() - cpu, [result["score"] for result in results]


def median(values):
    return statistics.median(values)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--card-rows", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-sizes", default="256", help="compute_score_async's batch_size, one column each (comma-separated)")
    parser.add_argument("--only", default="", help="workloads whose name starts with one of these (comma-separated)")
    parser.add_argument("--no-groups", action="store_true", help="leave out the requests of one group per row")
    parser.add_argument("--card-max-tests", type=int, default=1,
                        help="max_tests for the card rows: the ground truth still travels whole; 0 runs every test")
    arguments = parser.parse_args()
    binary = os.environ.get("RLVR_BIN") or rlvr.find_binary()
    directory = Path(tempfile.mkdtemp(prefix="verl-async-"))
    card = directory / "card.jsonl"
    subprocess.run([binary, "synth", str(card), "--rows", str(arguments.card_rows), "--like-card"], check=True, capture_output=True)
    rows = card_rows(card)
    server = LocalServer(binary=binary, workers=arguments.workers, extra_arguments=["--dataset", str(card)],
                         log_path=str(directory / "serve.log"))
    try:
        workloads = {
            "a+b, 4 tests": addition_samples(arguments.samples),
            "card rows inline": card_samples(rows, arguments.samples, by_reference=False),
            "card rows by index": card_samples(rows, arguments.samples, by_reference=True),
        }
        card_options = {"max_tests": arguments.card_max_tests} if arguments.card_max_tests else {}
        options_of = {"a+b, 4 tests": {}, "card rows inline": card_options, "card rows by index": card_options}
        if arguments.only:
            workloads = {name: samples for name, samples in workloads.items() if name.startswith(tuple(arguments.only.split(",")))}
        sizes = [int(size) for size in arguments.batch_sizes.split(",")]
        all_modes = ["sync"] + [f"async {size}" for size in sizes]
        loop_seconds = {(name, mode): [] for name in workloads for mode in all_modes}
        group_client = rlvr.Client(server.url, max_batch=GROUP)
        groups = {"inline": group_jobs(rows, False), "index": group_jobs(rows, True)}
        group_figures = {form: {"seconds": [], "cpu": []} for form in groups}
        bytes_of = {form: request_bytes(group_client, jobs, card_options) for form, jobs in groups.items()}
        reference_scores = {}
        for round_index in range(arguments.rounds):
            modes = all_modes if round_index % 2 == 0 else all_modes[::-1]
            for name, samples in workloads.items():
                for mode in modes:
                    seconds, scores = timed_reward_loop(samples, server.url, mode != "sync",
                                                        dict(options_of[name], **({"batch_size": int(mode.split()[1])} if mode != "sync" else {})))
                    expected = reference_scores.setdefault(name, scores)
                    assert scores == expected, f"{name}: {mode} scored differently"
                    loop_seconds[(name, mode)].append(seconds)
                    print(json.dumps({"round": round_index, "workload": name, "mode": mode, "seconds": round(seconds, 3),
                                      "samples_per_second": round(len(samples) / seconds, 1)}), flush=True)
            forms = () if arguments.no_groups else ("inline", "index") if round_index % 2 == 0 else ("index", "inline")
            for form in forms:
                seconds, cpu, scores = timed_groups(group_client, groups[form], card_options)
                expected = reference_scores.setdefault("groups", scores)
                assert scores == expected, f"groups {form} scored differently"
                group_figures[form]["seconds"].append(seconds)
                group_figures[form]["cpu"].append(cpu)
                print(json.dumps({"round": round_index, "groups": form, "seconds": round(seconds, 3), "client_cpu": round(cpu, 3)}),
                      flush=True)
        group_client.close()
    finally:
        server.stop()

    print(f"\nMachine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.1f} at the end; {arguments.rounds} rounds, {arguments.samples} samples, "
          f"server --workers {arguments.workers}\n")
    header = ["workload", "`compute_score` (thread pool)"]
    for size in sizes:
        header += [f"`compute_score_async`, batch_size {size}", "async / sync"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, samples in workloads.items():
        cells = [name, f"{len(samples) / median(loop_seconds[(name, 'sync')]):,.0f} samples/s"]
        for size in sizes:
            asynchronous = loop_seconds[(name, f"async {size}")]
            ratios = [s / a for s, a in zip(loop_seconds[(name, "sync")], asynchronous)]
            cells += [f"{len(samples) / median(asynchronous):,.0f} samples/s",
                      f"{median(ratios):.2f}x (rounds {min(ratios):.2f}-{max(ratios):.2f})"]
        print("| " + " | ".join(cells) + " |")
    if arguments.no_groups:
        return
    samples = len(groups["inline"])
    print(f"\n{len(rows)} card rows, a group of {GROUP} per row, one request per group ({samples} samples):\n")
    print("| job carries | request bytes, all | mean request | samples/s (median) | client CPU s (median) |")
    print("|---|---|---|---|---|")
    for form, label in (("inline", "`ground_truth` (inline)"), ("index", "`index`")):
        total = sum(bytes_of[form])
        print(f"| {label} | {total:,} B | {total // len(bytes_of[form]):,} B | "
              f"{samples / median(group_figures[form]['seconds']):,.0f} | {median(group_figures[form]['cpu']):.3f} |")
    ratios = [inline / by_index for inline, by_index in zip(group_figures["inline"]["seconds"], group_figures["index"]["seconds"])]
    print(f"\nby index / inline, samples/s: {median(ratios):.2f}x (rounds {min(ratios):.2f}-{max(ratios):.2f}); "
          f"request bytes 1/{sum(bytes_of['inline']) / sum(bytes_of['index']):,.0f}")


if __name__ == "__main__":
    main()
