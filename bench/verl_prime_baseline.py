"""The verl baseline for `rlvr verify --profile prime|rllm`: verl 0.9.1 `prime_code.compute_score`
(continuous=True, as verl's default reward calls it) in a 2-process pool, as verl's prime reward
manager runs it (a ProcessPoolExecutor; one task per response; 300 s per task, 0.0 on timeout).

Reads `rlvr verify` job lines ({"id", "response", "ground_truth"}) and writes one line per job
in job order: {"id", "score"}. Usage: verl_prime_baseline.py JOBS.jsonl OUT.jsonl [--processes 2]

Needs `pip install --no-deps verl numpy`: only verl's reward_score directory goes on sys.path
(its package __init__ imports torch).
"""

import asyncio
import importlib.util
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from functools import partial

TASK_TIMEOUT_SECONDS = 300.0


def prime_code():
    spec = importlib.util.find_spec("verl")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("verl is not installed: run `python -m pip install --no-deps verl numpy`")
    sys.path.insert(0, os.path.join(list(spec.submodule_search_locations)[0], "utils", "reward_score"))
    import prime_code as module

    return module


def score(response, ground_truth):
    """What `default_compute_score` returns for a codecontests/apps/taco data source."""
    result = prime_code().compute_score(response, ground_truth, continuous=True)
    value = result[0] if isinstance(result, tuple) else result
    return float(value)


def silence():
    # prime_code prints tracebacks for failing programs; keep the benchmark's output clean.
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)


async def score_all(jobs, processes):
    loop = asyncio.get_running_loop()
    with ProcessPoolExecutor(max_workers=processes, initializer=silence) as pool:
        async def one(job):
            truth = job["ground_truth"]
            if not isinstance(truth, str):
                truth = json.dumps(truth)
            try:
                return await asyncio.wait_for(
                    loop.run_in_executor(pool, partial(score, job["response"], truth)), TASK_TIMEOUT_SECONDS)
            except Exception:
                return 0.0

        return await asyncio.gather(*(one(job) for job in jobs))


def main():
    arguments = sys.argv[1:]
    jobs_path, out_path = arguments[0], arguments[1]
    processes = int(arguments[arguments.index("--processes") + 1]) if "--processes" in arguments else 2
    with open(jobs_path) as handle:
        jobs = [json.loads(line) for line in handle if line.strip()]
    scores = asyncio.run(score_all(jobs, processes))
    with open(out_path, "w") as handle:
        for job, value in zip(jobs, scores):
            handle.write(json.dumps({"id": job["id"], "score": value}) + "\n")


if __name__ == "__main__":
    main()
