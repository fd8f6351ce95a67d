#!/usr/bin/env python3
"""Score (response, ground_truth) pairs with the REAL verl prime_code reward.

Reads JSON Lines on stdin, each {"response": str, "ground_truth": object | JSON string}
(other keys such as "id" are echoed back), and prints one JSON line per input:
{"id": ..., "score": float, "seconds": float}. The score is what verl's default reward
feeds the trainer: float(compute_score(response, ground_truth, continuous=True)[0]).

Setup (once): RLVR_PYTHON -m pip install --no-deps verl numpy
verl's package __init__ imports torch; only its reward_score directory is put on sys.path,
where prime_code imports with numpy alone.
"""

import json
import os
import sys
import time


def load_prime_code():
    import importlib.util

    spec = importlib.util.find_spec("verl")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("verl is not installed: run `python -m pip install --no-deps verl numpy`")
    package_directory = list(spec.submodule_search_locations)[0]
    sys.path.insert(0, os.path.join(package_directory, "utils", "reward_score"))
    import prime_code  # noqa: E402  (needs numpy only)

    return prime_code


def main():
    prime_code = load_prime_code()
    # prime_code's reliability guard disables os functions in the child only, but the child
    # inherits our stdout; keep the parent's output clean by writing results ourselves.
    output = sys.stdout
    for line_number, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        case = json.loads(line)
        ground_truth = case["ground_truth"]
        if not isinstance(ground_truth, str):
            ground_truth = json.dumps(ground_truth)
        started = time.monotonic()
        result = prime_code.compute_score(case["response"], ground_truth, continuous=True)
        elapsed = time.monotonic() - started
        score = result[0] if isinstance(result, tuple) else result
        output.write(
            json.dumps({"id": case.get("id", line_number), "score": float(score), "seconds": round(elapsed, 3)})
            + "\n"
        )
        output.flush()


if __name__ == "__main__":
    main()
