"""TRL GRPO reward functions: `reward_funcs=[code_reward]` (sync) or
`reward_funcs=[async_code_reward]` (`async def`, scored concurrently with other async
rewards). TRL passes `prompts`, `completions` and every dataset column as keyword lists; the
ground truth comes from the first of the `ground_truth`, `label`, `metadata` (its
`ground_truth`) and `reward_model` columns (`rlvr.ground_truth`), in any shape `datasets`
gives them. Returns one float per completion, or None (NaN in TRL) when the verifier could not
score it.

`make_reward_function(column=..., profile=..., url=..., asynchronous=...)` builds one with
other settings; its `__name__` is what TRL logs.

Against `rlvr serve --dataset FILE` (issue 34), `make_reward_function(reference="hash")` sends
each row's name instead of its tests: the `hash` column (the Parquet export's, or name another
with `column=`) as `"hash"`, or with `reference="index"` the `row` column as `"index"`.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional

from rlvr._scores import response_text
from rlvr.client import Client, default_client
from rlvr.ground_truth import column_value, plain


def make_reward_function(
    column: Optional[str] = None,
    profile: Optional[str] = None,
    url: Optional[str] = None,
    asynchronous: bool = False,
    name: Optional[str] = None,
    reference: Optional[str] = None,
    **options: Any,
) -> Callable[..., Any]:
    if reference not in (None, "index", "hash"):
        raise ValueError(f"reference must be 'index' or 'hash', not {reference!r}")
    reference_column = column or {"index": "row", "hash": "hash"}.get(reference or "", "")
    client_holder: List[Client] = []

    def client() -> Client:
        if not client_holder:
            client_holder.append(Client(url) if url else default_client())
        return client_holder[0]

    def jobs_of(completions: List[Any], kwargs: dict) -> List[dict]:
        if reference is not None:
            if reference_column not in kwargs:
                raise KeyError(f"reference={reference!r} reads the dataset column {reference_column!r}, which TRL did not pass")
            names = kwargs[reference_column]
            return [
                {"response": response_text(completion), reference: plain(name)}
                for completion, name in zip(completions, names)
            ]
        truths = column_value(kwargs, column)
        return [
            {"response": response_text(completion), "ground_truth": truth}
            for completion, truth in zip(completions, truths)
        ]

    def verify_options() -> dict:
        chosen = dict(options)
        if profile:
            chosen["profile"] = profile
        return chosen

    def to_rewards(results: List[dict]) -> List[Optional[float]]:
        return [result.get("score") for result in results]

    if asynchronous:

        async def reward(prompts=None, completions=None, **kwargs: Any) -> List[Optional[float]]:
            return to_rewards(await client().averify(jobs_of(completions, kwargs), **verify_options()))

    else:

        def reward(prompts=None, completions=None, **kwargs: Any) -> List[Optional[float]]:  # type: ignore[misc]
            return to_rewards(client().verify(jobs_of(completions, kwargs), **verify_options()))

    reward.__name__ = name or ("async_code_reward" if asynchronous else "code_reward")
    reward.__qualname__ = reward.__name__
    return reward


code_reward = make_reward_function()
async_code_reward = make_reward_function(asynchronous=True)
