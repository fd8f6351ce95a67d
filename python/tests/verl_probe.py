"""Runs one installed verl version's own config and loader code on rlvr's adapter, in a process
of its own (two verl versions cannot share one). Used by test_verl.py:

    VERL_ROOT=target/py-verl/0.9.1 PYTHONPATH=target/py-verl/0.9.1:python python verl_probe.py REQUEST.json

REQUEST: {"overrides": [...], "rows": [{"data_source", "response", "ground_truth", "extra_info"}]}.
Prints one JSON object: what Hydra composed (or its error), what verl's loader returned, and
the scores each reward manager's calling convention got.

verl's package `__init__` files import torch (not installed here: CPU-only CI), so the probe
registers verl's packages without running them; every module it then imports (the Hydra
config tree, `verl.utils.import_utils`, `verl.utils.reward_score`) is verl's own file. The
loader `get_custom_reward_fn` and the prime manager's scoring loop live in modules that import
torch at the top, so those functions are taken from verl's files with `ast` and run unchanged.
"""

from __future__ import annotations

import __future__
import ast
import asyncio
import inspect
import json
import multiprocessing
import pickle
import sys
import os
import types
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, Optional

ROOT = Path(os.environ["VERL_ROOT"]).resolve()
PACKAGES = ["verl", "verl.utils", "verl.trainer", "verl.trainer.ppo", "verl.workers", "verl.workers.reward_manager"]


def register_packages() -> None:
    for name in PACKAGES:
        module = types.ModuleType(name)
        module.__path__ = [str(ROOT / name.replace(".", "/"))]
        sys.modules[name] = module


def functions_from(relative: str, names: list, namespace: dict) -> dict:
    """The named top-level functions of one of verl's files, compiled with `namespace` as their
    globals into a module registered under the file's own module name (so they pickle by
    reference, as the real module's functions do)."""
    path = ROOT / relative
    tree = ast.parse(path.read_text(), filename=str(path))
    body = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names]
    missing = set(names) - {node.name for node in body}
    if missing:
        raise SystemExit(f"{relative} has no {sorted(missing)}")
    module = ast.Module(body=body, type_ignores=[])
    # Annotations stay strings, as under the file's own `from __future__ import annotations`.
    code = compile(module, str(path), "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
    module_name = relative[: -len(".py")].replace("/", ".")
    target = types.ModuleType(module_name)
    target.__dict__.update(namespace)
    target.__file__ = str(path)
    sys.modules[module_name] = target
    exec(code, target.__dict__)
    return {name: getattr(target, name) for name in names}


def compose(overrides: list) -> Any:
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(ROOT / "verl" / "trainer" / "config"), version_base=None):
        return hydra_compose(config_name="ppo_trainer", overrides=overrides)


def main() -> None:
    request = json.loads(Path(sys.argv[1]).read_text())
    register_packages()
    from omegaconf import DictConfig, OmegaConf

    version = (ROOT / "verl" / "version" / "version").read_text().strip()
    answer: dict = {"verl": version}
    try:
        config = compose(request["overrides"])
    except Exception as error:  # Hydra's refusal is what the test looks at
        answer["compose_error"] = f"{type(error).__name__}: {error}"
        print(json.dumps(answer))
        return
    new_layout = "reward" in config and "custom_reward_function" in config.reward
    reward = config.reward if new_layout else config
    legacy = config.get("reward_model")
    answer["custom_reward_function"] = OmegaConf.to_container(reward.custom_reward_function)
    answer["legacy_custom_reward_function"] = (
        OmegaConf.to_container(config.custom_reward_function) if new_layout and "custom_reward_function" in config else None
    )
    if new_layout:
        answer["reward_manager"] = config.reward.reward_manager.name
        answer["sandbox_fusion_url"] = config.reward.sandbox_fusion.url
    else:
        answer["reward_manager"] = legacy.reward_manager
        answer["sandbox_fusion_url"] = legacy.sandbox_fusion.url

    namespace = {
        "importlib": __import__("importlib"),
        "inspect": inspect,
        "multiprocessing": multiprocessing,
        "os": os,
        "sys": sys,
        "partial": partial,
        "Any": Any,
        "Optional": Optional,
        "DictConfig": DictConfig,
        "RawRewardFn": Any,
    }
    loader = functions_from(
        "verl/trainer/ppo/reward.py", ["_call_with_kwargs", "_call_with_kwargs_async", "get_custom_reward_fn"], namespace
    )["get_custom_reward_fn"]
    function = loader(config)
    rows = request["rows"]
    if function is None:
        answer["loaded"] = None
        if answer["sandbox_fusion_url"]:
            from verl.utils.reward_score import default_compute_score

            answer["stock_scores"] = [
                float(
                    _first(
                        default_compute_score(
                            row["data_source"], row["response"], row["ground_truth"], row["extra_info"],
                            sandbox_fusion_url=answer["sandbox_fusion_url"], concurrent_semaphore=None, memory_limit_mb=1024,
                        )
                    )
                )
                for row in rows
            ]
        print(json.dumps(answer))
        return

    raw = function.args[0]
    answer["loaded"] = f"{raw.__module__}.{raw.__qualname__}"
    pickle.loads(pickle.dumps(function))
    answer["pickles"] = True
    manager = answer["reward_manager"]
    if manager == "batch":
        results = function(
            data_sources=[row["data_source"] for row in rows],
            solution_strs=[row["response"] for row in rows],
            ground_truths=[row["ground_truth"] for row in rows],
            extra_infos=[row["extra_info"] for row in rows],
        )
        answer["scores"] = [result["score"] for result in results]
    elif manager == "prime":
        prime_namespace = {
            "asyncio": asyncio,
            "ProcessPoolExecutor": ProcessPoolExecutor,
            "partial": partial,
            "psutil": __import__("psutil"),
            "Any": Any,
            "Optional": Optional,
        }
        if "get_event_loop" in (ROOT / "verl/workers/reward_manager/prime.py").read_text():
            from verl.utils.ray_utils import get_event_loop

            prime_namespace["get_event_loop"] = get_event_loop
        scoring = functions_from(
            "verl/workers/reward_manager/prime.py",
            ["single_compute_score", "parallel_compute_score_async", "run_reward_scoring"],
            prime_namespace,
        )["run_reward_scoring"]
        answer["scores"] = scoring(
            function,
            [row["response"] for row in rows],
            [row["ground_truth"] for row in rows],
            [row["data_source"] for row in rows],
            [row["extra_info"] for row in rows],
            num_processes=2,
        )
    else:  # naive, dapo, the reward loop: one keyword call per sample
        answer["scores"] = [
            _first(function(data_source=row["data_source"], solution_str=row["response"], ground_truth=row["ground_truth"], extra_info=row["extra_info"]))
            for row in rows
        ]
    print(json.dumps(answer))


def _first(result: Any) -> Any:
    if isinstance(result, dict):
        return result["score"]
    if isinstance(result, (tuple, list)):
        return result[0]
    return result


if __name__ == "__main__":
    main()
