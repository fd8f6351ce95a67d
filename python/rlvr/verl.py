"""verl custom reward functions.

Config, per verl version (the README's lines, tested against each version's own reward
managers by python/tests/test_verl.py):

* 0.7.1+ (`RewardLoopManager`): `reward.custom_reward_function.path=pkg://rlvr.verl`,
  `reward.custom_reward_function.name=compute_score`, `reward.reward_manager.name=naive` (or
  dapo, gdpo, remote): one keyword call per sample, `compute_score(data_source=,
  solution_str=, ground_truth=, extra_info=)`, returning a dict with `score` plus numeric
  extras (always the same keys: verl stacks them into arrays).
* 0.7.0 (the agent loop's `RewardLoopWorker`): `custom_reward_function.path=pkg://rlvr.verl`,
  `custom_reward_function.name=compute_score`, `reward_model.reward_manager=naive`.
* 0.6.x: `custom_reward_function.path=` this file's path, `reward_model.reward_manager=batch`:
  the same function called with `data_sources=, solution_strs=, ground_truths=, extra_infos=`
  returns a list of dicts; one HTTP batch per training batch. The prime manager (positional
  call, needs a float): `compute_score_float`.

`reward_kwargs` may carry `profile`, `url`, `max_tests`, `time_limit`, ...; otherwise
`$RLVR_URL` / `$RLVR_PROFILE` or a local server started on first use.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from rlvr._scores import numbers
from rlvr.client import Client, default_client

_VERIFY_OPTIONS = ("profile", "reward", "time_limit", "memory_limit", "max_tests", "all_tests", "seed", "deadline")
_clients: Dict[str, Client] = {}


def _client(url: Optional[str]) -> Client:
    if url is None:
        return default_client()
    if url not in _clients:
        _clients[url] = Client(url)
    return _clients[url]


def _verify(responses: Sequence[str], ground_truths: Sequence[Any], kwargs: Dict[str, Any]) -> List[Dict[str, float]]:
    options = {key: kwargs[key] for key in _VERIFY_OPTIONS if kwargs.get(key) is not None}
    jobs = [
        {"response": response if isinstance(response, str) else str(response), "ground_truth": truth}
        for response, truth in zip(responses, ground_truths)
    ]
    results = _client(kwargs.get("url")).verify(jobs, **options)
    return [numbers(result) for result in results]


def compute_score(
    data_source: Any = None,
    solution_str: Optional[str] = None,
    ground_truth: Any = None,
    extra_info: Optional[dict] = None,
    *,
    data_sources: Optional[Sequence[Any]] = None,
    solution_strs: Optional[Sequence[str]] = None,
    ground_truths: Optional[Sequence[Any]] = None,
    extra_infos: Optional[Sequence[Any]] = None,
    **kwargs: Any,
):
    """Per sample: a dict with `score`. Batch (plural keywords): a list of such dicts."""
    if solution_strs is not None:
        if ground_truths is None or len(ground_truths) != len(solution_strs):
            raise ValueError("solution_strs and ground_truths must have the same length")
        return _verify(list(solution_strs), list(ground_truths), kwargs)
    if solution_str is None:
        raise TypeError("compute_score needs solution_str (or solution_strs for the batch manager)")
    return _verify([solution_str], [ground_truth], kwargs)[0]


def compute_score_float(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Optional[dict] = None, **kwargs: Any) -> float:
    """For verl's prime manager, which calls positionally and needs a number."""
    return compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)["score"]


if __name__ != "rlvr.verl":
    # Loaded from its file path: verl runs `custom_reward_function.path=.../rlvr/verl.py` as a
    # module named `custom_module` (<= 0.6) or `custom_module_<hash>` (0.7+, not even put in
    # sys.modules), a name no other process can import, so the prime manager's process pool
    # and Ray could not pickle these functions. Hand out the real `rlvr.verl` functions instead:
    # they pickle by reference everywhere rlvr is installed.
    from rlvr.verl import compute_score, compute_score_float  # noqa: E402,F401,F811
