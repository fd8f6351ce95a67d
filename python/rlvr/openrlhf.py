"""OpenRLHF custom reward function: `--reward.remote_url /path/to/this/file.py` (older:
`--remote_rm_url`), or point those flags at `http://HOST:PORT/get_reward` directly.

`reward_func(queries, prompts, labels, **kwargs)` strips each prompt from its decoded query,
scores the response against the label (`--label_key label`, `metadata` or any shape
`rlvr.ground_truth` accepts) and returns
`{"rewards", "scores", "extra_logs"}` (torch tensors when torch is importable, as OpenRLHF's
example does; lists otherwise).
"""

from __future__ import annotations

from typing import Any, Dict, Sequence

from rlvr.client import default_client


def _as_tensors(answer: Dict[str, Any]) -> Dict[str, Any]:
    try:
        import torch
    except ImportError:
        return answer
    return {
        "rewards": torch.tensor(answer["rewards"], dtype=torch.float32),
        "scores": torch.tensor(answer["scores"], dtype=torch.float32),
        "extra_logs": {key: torch.tensor(values, dtype=torch.float32) for key, values in answer["extra_logs"].items()},
    }


def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], **kwargs: Any) -> Dict[str, Any]:
    options = {"profile": kwargs["profile"]} if kwargs.get("profile") else {}
    answer = default_client().get_reward(list(queries), list(prompts), list(labels), **options)
    return _as_tensors(answer)


if __name__ != "rlvr.openrlhf":
    # Loaded from its file path (`--reward.remote_url .../rlvr/openrlhf.py`): use the functions
    # of the importable module, so Ray and process pools pickle them by reference.
    from rlvr.openrlhf import reward_func  # noqa: E402,F401,F811
