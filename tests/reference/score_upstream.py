"""Scores JSON Lines cases with the REAL upstream reward code, in parallel, and prints one result
per case in input order: {"id", "score"} or {"id", "raised": "Type: message"} when upstream raises.

Usage: score_upstream.py REFERENCE CASES.jsonl [--workers N] [--as-shipped] [--upstream-root DIR]
  REFERENCE: klear | code-r1 | rllm | prime
  --upstream-root DIR (or RLVR_UPSTREAM_ROOT): where Klear-Reasoner's, Code-R1's and rllm's reward
  files are, checked out at the commits docs/profiles.md lists ("Differential test against the
  upstream code"), laid out as DIR/klear/klear_reward/..., DIR/code_r1/coder1/...,
  DIR/rllm/rllm/... with empty __init__.py package markers and the shims of upstream-shims/
  beside this file. The repository carries none of that code. prime needs no root: verl's
  prime_code comes from the installed wheel (`pip install --no-deps verl numpy`).
  --as-shipped: Klear's command line exactly as shipped (every test then fails: no firejail
  accepts --kill-at-exit); without it the two substitutions docs/profiles.md names apply.

Every worker gets /dev/null as stdin (Klear and Code-R1 let an empty test input inherit it, so
it is empty, as rlvr's) and as stdout (the references print logs). The firejail references run
`python3` (Code-R1, rllm) or the interpreter put in Klear's command from PATH; the caller puts
Debian's /usr/bin first (firejail --private hides root's home, where pyenv lives).
"""

import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

UPSTREAM_ROOT = os.environ.get("RLVR_UPSTREAM_ROOT", "")
KLEAR_SHIPPED_PYTHON = "/share/miniconda3/envs/verl_v0_szp/bin/python"
AS_SHIPPED = False


def silence_worker():
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    sys.stdout = open(os.devnull, "w")


def klear_command(command):
    """Klear's firejail line with the two substitutions that make it run on any machine."""
    if AS_SHIPPED:
        return command
    python = os.environ.get("UPSTREAM_FIREJAIL_PYTHON", "/usr/bin/python3")
    return [python if part == KLEAR_SHIPPED_PYTHON else part for part in command if part != "--kill-at-exit"]


def upstream_root():
    if not UPSTREAM_ROOT or not os.path.isdir(UPSTREAM_ROOT):
        sys.exit("score_upstream.py: --upstream-root DIR (or RLVR_UPSTREAM_ROOT) must name the upstream "
                 f"reward checkouts, not {UPSTREAM_ROOT!r} (see the docstring)")
    return UPSTREAM_ROOT


def load(reference):
    if reference == "klear":
        sys.path.insert(0, os.path.join(upstream_root(), "klear"))
        import subprocess
        import types

        from klear_reward import code_r1_compute
        from klear_reward.code_r1_reward import firejail_exec

        def run(command, *arguments, **keywords):
            return subprocess.run(klear_command(command), *arguments, **keywords)

        firejail_exec.subprocess = types.SimpleNamespace(
            run=run, PIPE=subprocess.PIPE, TimeoutExpired=subprocess.TimeoutExpired)
        return lambda case: code_r1_compute.compute_score(case["response"], case["ground_truth"], is_longcot=True)
    if reference == "code-r1":
        sys.path.insert(0, os.path.join(upstream_root(), "code_r1"))
        import coder1

        return lambda case: coder1.compute_score(case["response"], json.dumps(case["ground_truth"]), extra_info={"prompt": ""})
    if reference == "rllm":
        sys.path.insert(0, os.path.join(upstream_root(), "rllm"))
        from rllm.rewards.code_reward import rllm_reward_fn_code

        def score(case):
            truth = case["ground_truth"]
            data_source = "leetcode" if "functional" in truth else "taco"
            return rllm_reward_fn_code(data_source, case["response"], truth).reward

        return score
    if reference == "prime":
        import importlib.util

        spec = importlib.util.find_spec("verl")
        if spec is None or not spec.submodule_search_locations:
            sys.exit("verl is not installed: run `python -m pip install --no-deps verl numpy`")
        sys.path.insert(0, os.path.join(list(spec.submodule_search_locations)[0], "utils", "reward_score"))
        import prime_code

        def score(case):
            result = prime_code.compute_score(case["response"], json.dumps(case["ground_truth"]), continuous=True)
            return result[0] if isinstance(result, tuple) else result

        return score
    sys.exit(f"unknown reference {reference!r}")


SCORER = None


def initialise(reference, as_shipped, root):
    global SCORER, AS_SHIPPED, UPSTREAM_ROOT
    AS_SHIPPED = as_shipped
    UPSTREAM_ROOT = root
    silence_worker()
    SCORER = load(reference)


def score_case(case):
    started = time.monotonic()
    try:
        result = {"id": case["id"], "score": float(SCORER(case))}
    except BaseException as error:  # upstream raising is a result to compare, not a crash
        result = {"id": case["id"], "raised": f"{type(error).__name__}: {error}"[:300]}
    result["seconds"] = round(time.monotonic() - started, 3)
    return result


def main():
    # The references' environment is a trainer's: PYTHONUNBUFFERED is not set there (a shell
    # that sets it would make Klear's and Code-R1's children keep output past os._exit).
    os.environ.pop("PYTHONUNBUFFERED", None)
    arguments = sys.argv[1:]
    reference, cases_path = arguments[0], arguments[1]
    workers = int(arguments[arguments.index("--workers") + 1]) if "--workers" in arguments else 4
    as_shipped = "--as-shipped" in arguments
    root = arguments[arguments.index("--upstream-root") + 1] if "--upstream-root" in arguments else UPSTREAM_ROOT
    with open(cases_path) as handle:
        cases = [json.loads(line) for line in handle if line.strip()]
    output = sys.stdout
    with ProcessPoolExecutor(max_workers=workers, initializer=initialise, initargs=(reference, as_shipped, root)) as pool:
        for result in pool.map(score_case, cases):
            output.write(json.dumps(result) + "\n")
            output.flush()


if __name__ == "__main__":
    main()
