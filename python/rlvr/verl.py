"""verl custom reward functions.

Config, per verl version (the README's lines, tested against each version's own reward
managers by python/tests/test_verl.py):

* 0.7.1+ (`RewardLoopManager`): `reward.custom_reward_function.path=pkg://rlvr.verl`,
  `reward.custom_reward_function.name=compute_score`, `reward.reward_manager.name=naive` (or
  dapo, gdpo, remote): one keyword call per sample, `compute_score(data_source=,
  solution_str=, ground_truth=, extra_info=)`, returning a dict with `score` plus numeric
  extras (always the same keys: verl stacks them into arrays).
  `reward.custom_reward_function.name=compute_score_async` instead: the same call and
  result, awaited by the reward loop (verl checks `inspect.iscoroutinefunction`) instead of
  run on its default thread pool. The samples one reward worker awaits at the same time go to
  the server as batch requests (those arriving within `batch_window` seconds, default
  0.01, at most `batch_size`, default 32), sent on the worker's event loop itself: no thread
  per sample, one request in flight per batch. Errors, the deadline and the connect timeout
  are the client's, raised in every call of the batch; a cancelled call leaves the others'.
* 0.7.0 (the agent loop's `RewardLoopWorker`): `custom_reward_function.path=pkg://rlvr.verl`,
  `custom_reward_function.name=compute_score`, `reward_model.reward_manager=naive`.
* 0.6.x: `custom_reward_function.path=` this file's path, `reward_model.reward_manager=batch`:
  the same function called with `data_sources=, solution_strs=, ground_truths=, extra_infos=`
  returns a list of dicts; one HTTP batch per training batch. The prime manager (positional
  call, needs a float): `compute_score_float`.

`reward_kwargs` may carry `profile`, `url`, `max_tests`, `time_limit`, ... (and, for
`compute_score_async`, `batch_window` and `batch_size`); otherwise
`$RLVR_URL` / `$RLVR_PROFILE` or a local server started on first use.
"""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional, Sequence

import rlvr.client
from rlvr._batching import DEFAULT_SIZE, DEFAULT_WINDOW, batcher_for
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


def _options(kwargs: Dict[str, Any]) -> Dict[str, Any]:
    return {key: kwargs[key] for key in _VERIFY_OPTIONS if kwargs.get(key) is not None}


def _jobs(responses: Sequence[Any], ground_truths: Sequence[Any]) -> List[Dict[str, Any]]:
    return [
        {"response": response if isinstance(response, str) else str(response), "ground_truth": truth}
        for response, truth in zip(responses, ground_truths)
    ]


def _verify(responses: Sequence[str], ground_truths: Sequence[Any], kwargs: Dict[str, Any]) -> List[Dict[str, float]]:
    results = _client(kwargs.get("url")).verify(_jobs(responses, ground_truths), **_options(kwargs))
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


async def compute_score_async(
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
    """`compute_score` for verl's reward loop (0.7.1+), awaited on its event loop: the calls
    awaiting at the same time are sent as batch requests, without a thread each."""
    if solution_strs is not None:
        if ground_truths is None or len(ground_truths) != len(solution_strs):
            raise ValueError("solution_strs and ground_truths must have the same length")
        jobs = _jobs(list(solution_strs), list(ground_truths))
    elif solution_str is None:
        raise TypeError("compute_score_async needs solution_str (or solution_strs for a batch)")
    else:
        jobs = _jobs([solution_str], [ground_truth])
    url = kwargs.get("url")
    if url is None and (rlvr.client._default_client is None or rlvr.client._default_client._closed):
        # The first call may start a local server (a second or so): not on the event loop.
        client = await asyncio.get_running_loop().run_in_executor(None, default_client)
    else:
        client = _client(url)
    batcher = batcher_for(client, _options(kwargs), float(kwargs.get("batch_window", DEFAULT_WINDOW)),
                          int(kwargs.get("batch_size", DEFAULT_SIZE)))
    results = await asyncio.gather(*(batcher.score(job) for job in jobs))
    scores = [numbers(result) for result in results]
    return scores if solution_strs is not None else scores[0]


def compute_score_float(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Optional[dict] = None, **kwargs: Any) -> float:
    """For verl's prime manager, which calls positionally and needs a number."""
    return compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)["score"]


if __name__ != "rlvr.verl":
    # Loaded from its file path: verl runs `custom_reward_function.path=.../rlvr/verl.py` as a
    # module named `custom_module` (<= 0.6) or `custom_module_<hash>` (0.7+, not even put in
    # sys.modules), a name no other process can import, so the prime manager's process pool
    # and Ray could not pickle these functions. Hand out the real `rlvr.verl` functions instead:
    # they pickle by reference everywhere rlvr is installed.
    from rlvr.verl import compute_score, compute_score_async, compute_score_float  # noqa: E402,F401,F811
