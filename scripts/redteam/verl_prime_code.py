"""verl's code reward as `default_compute_score` calls it without a SandboxFusion URL, for
`rlvr redteam --python verl_prime_code:compute_score --python-path scripts/redteam`.

verl's `default_compute_score(data_source, solution_str, ground_truth, extra_info)` sends the
code data sources (codecontests, apps, codeforces, taco) to
`prime_code.compute_score(solution_str, ground_truth, continuous=True)` and returns the first
item of its result as a float. Importing `verl.utils.reward_score` runs verl's `__init__`, which
needs torch and Ray; this module loads the installed wheel's `prime_code` package alone (from
`verl/utils/reward_score/prime_code`, found without importing verl) and makes the same call, so
what is measured is verl's own code, unchanged.
"""

import importlib.util
import os
import sys

_spec = importlib.util.find_spec("verl")
if _spec is None or not _spec.submodule_search_locations:
    raise ImportError("verl is not installed for this interpreter: python -m pip install --no-deps verl numpy")
sys.path.insert(0, os.path.join(list(_spec.submodule_search_locations)[0], "utils", "reward_score"))

import prime_code  # noqa: E402  (verl's package, from the path above)

CODE_DATA_SOURCES = ("codecontests", "apps", "codeforces", "taco")


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if data_source not in CODE_DATA_SOURCES:
        raise NotImplementedError(f"Reward function is not implemented for {data_source=}")
    result = prime_code.compute_score(solution_str, ground_truth, continuous=True)
    if isinstance(result, dict):
        return result
    if isinstance(result, (int, float, bool)):
        return float(result)
    return float(result[0])
