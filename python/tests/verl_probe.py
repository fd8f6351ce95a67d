"""Builds the reward object one installed verl version's PPO trainer builds, from the config
Hydra composes out of verl's own `ppo_trainer.yaml` with the given overrides, and scores a
batch with it. Nothing of verl is imitated: every class and function called is verl's own,
imported from the installed version (test_verl.py runs one process per version):

    VERL_ROOT=target/py-verl/0.9.1 PYTHONPATH=target/py-verl/0.9.1:python \
        target/py-trainers/bin/python verl_probe.py REQUEST.json

REQUEST: {"overrides": [...], "tokenizer": DIR, "rows": [{"data_source", "prompt", "response",
"ground_truth", "extra_info"}]}. Prints one JSON line: the path taken, the manager class,
the score of each row as verl's reward tensor holds it, the extra keys verl logs, whether the
reward manager awaits the function (0.7.1+), or the error verl raised.

What each version's trainer does (read in its `main_ppo.py` and `ray_trainer.py`):

* 0.6.x: `main_ppo` builds `load_reward_manager(config, tokenizer, num_examine=0,
  **reward_kwargs)` (registry `verl.workers.reward_manager`: naive, batch, dapo, prime), and
  the trainer scores with `compute_reward(batch, reward_fn)`.
* 0.7.0: `main_ppo` still builds that manager (top-level `custom_reward_function`,
  `reward_model.reward_manager`), but `reward_model.use_reward_loop` is true by default and
  training rewards come from a `RewardLoopWorker` actor that the agent loop creates with
  `(config, reward_router_address)` and calls `compute_score.remote(item)` per sample
  (registry `verl.experimental.reward_loop.reward_manager`: naive, dapo, remote, no batch).
* 0.7.1+: `main_ppo` runs `migrate_legacy_reward_impl(config)` (the legacy keys move under
  `reward.`), and the trainer builds `RewardLoopManager(config=config, rm_resource_pool=None)`
  and calls `compute_rm_score(batch)` (registry: naive, dapo, gdpo, remote).

A batch is what the rollout hands the reward: `prompts` left-padded, `responses`
right-padded, `attention_mask`/`input_ids` over both, and the dataset's `data_source`,
`reward_model` and `extra_info` columns.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(os.environ["VERL_ROOT"]).resolve()


def compose(overrides):
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(ROOT / "verl" / "trainer" / "config"), version_base=None):
        return hydra_compose(config_name="ppo_trainer", overrides=overrides)


def build_batch(tokenizer, rows):
    import numpy as np
    import torch

    from verl import DataProto

    pad = tokenizer.pad_token_id
    prompts = [tokenizer.encode(row["prompt"], add_special_tokens=False) for row in rows]
    responses = [tokenizer.encode(row["response"], add_special_tokens=False) + [tokenizer.eos_token_id] for row in rows]
    prompt_length = max(map(len, prompts))
    response_length = max(map(len, responses))
    prompt_ids = torch.full((len(rows), prompt_length), pad, dtype=torch.long)
    response_ids = torch.full((len(rows), response_length), pad, dtype=torch.long)
    attention_mask = torch.zeros((len(rows), prompt_length + response_length), dtype=torch.long)
    for index, (prompt, response) in enumerate(zip(prompts, responses)):
        prompt_ids[index, prompt_length - len(prompt):] = torch.tensor(prompt)
        response_ids[index, : len(response)] = torch.tensor(response)
        attention_mask[index, prompt_length - len(prompt): prompt_length + len(response)] = 1
    input_ids = torch.cat([prompt_ids, response_ids], dim=1)
    position_ids = torch.clamp(torch.cumsum(attention_mask, dim=1) - 1, min=0)

    def column(values):
        array = np.empty(len(values), dtype=object)
        array[:] = values
        return array

    return DataProto.from_dict(
        tensors={
            "prompts": prompt_ids,
            "responses": response_ids,
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "position_ids": position_ids,
            "response_mask": attention_mask[:, prompt_length:],
        },
        non_tensors={
            "data_source": column([row["data_source"] for row in rows]),
            "reward_model": column([{"ground_truth": row["ground_truth"], "style": "rule"} for row in rows]),
            "extra_info": column([dict(row["extra_info"]) for row in rows]),
            "raw_prompt": column([[{"role": "user", "content": row["prompt"]}] for row in rows]),
        },
    )


def row_scores(reward_tensor):
    """The score of each row: verl puts it on the row's last response token, zeros elsewhere."""
    return [float(value) for value in reward_tensor.sum(dim=-1).tolist()]


def score(config, tokenizer, batch, answer):
    import ray

    from verl.trainer.ppo.reward import load_reward_manager

    try:
        from verl.experimental.reward_loop import migrate_legacy_reward_impl
    except ImportError:  # 0.6.x and 0.7.0
        migrate_legacy_reward_impl = None

    if migrate_legacy_reward_impl is not None:
        from verl.experimental.reward_loop import RewardLoopManager

        config = migrate_legacy_reward_impl(config)
        answer["path"] = "RewardLoopManager"
        answer["custom_reward_function"] = _plain(config.reward.custom_reward_function)
        answer["manager"] = config.reward.reward_manager.name
        # What each reward worker builds (`RewardLoopWorker._init_reward_fn`), built here to
        # read whether it awaits the reward function or runs it on its thread pool.
        local = load_reward_manager(config, tokenizer, reward_router_address=None, reward_model_tokenizer=None)
        answer["awaits_reward_function"] = bool(local.is_async_reward_score)
        manager = RewardLoopManager(config=config, rm_resource_pool=None)
        output = manager.compute_rm_score(batch)
        answer["scores"] = row_scores(output.batch["rm_scores"])
        answer["extra"] = {key: [float(value) for value in output.non_tensor_batch[key]] for key in output.meta_info["reward_extra_keys"]}
        return

    answer["custom_reward_function"] = _plain(config.custom_reward_function)
    answer["manager"] = config.reward_model.reward_manager
    # main_ppo's own call, in every version before 0.7.1.
    reward_fn = load_reward_manager(config, tokenizer, num_examine=0, **config.reward_model.get("reward_kwargs", {}))
    answer["legacy_manager_class"] = type(reward_fn).__name__
    if config.reward_model.get("use_reward_loop"):
        from verl.experimental.reward_loop import RewardLoopWorker

        answer["path"] = "RewardLoopWorker"
        worker = RewardLoopWorker.remote(config, None)
        outputs = ray.get([worker.compute_score.remote(batch[index: index + 1]) for index in range(len(batch))])
        answer["scores"] = [float(output["reward_score"]) for output in outputs]
        answer["extra"] = {key: [float(output["reward_extra_info"][key]) for output in outputs] for key in outputs[0]["reward_extra_info"]}
        return

    from verl.trainer.ppo.reward import compute_reward

    answer["path"] = "load_reward_manager"
    reward_tensor, extra = compute_reward(batch, reward_fn)
    answer["scores"] = row_scores(reward_tensor)
    answer["extra"] = {key: [float(value) for value in values] for key, values in extra.items()}


def _plain(node):
    from omegaconf import OmegaConf

    return OmegaConf.to_container(node) if node is not None else None


def main():
    request = json.loads(Path(sys.argv[1]).read_text())
    version = (ROOT / "verl" / "version" / "version").read_text().strip()
    answer = {"verl": version}
    try:
        config = compose(request["overrides"])
    except Exception as error:  # Hydra's refusal is what the test looks at
        answer["error"] = f"compose: {type(error).__name__}: {error}"
        print(json.dumps(answer))
        return
    import ray

    from verl.utils import hf_tokenizer

    tokenizer = hf_tokenizer(request["tokenizer"])
    batch = build_batch(tokenizer, request["rows"])
    # A local Ray as `main_ppo` starts one; workers inherit this environment (PYTHONPATH,
    # RLVR_URL). Logical CPUs for the reward actors (each asks for one).
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    try:
        score(config, tokenizer, batch, answer)
    except Exception as error:  # verl's own refusal (an unknown manager...) is an answer
        answer["error"] = f"{type(error).__name__}: {error}"
    finally:
        ray.shutdown()
    print(json.dumps(answer))


if __name__ == "__main__":
    main()
