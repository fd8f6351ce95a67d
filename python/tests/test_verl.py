"""Issue 26: the README's verl lines score with rlvr on verl 0.6.1, 0.7.0, 0.7.1 and 0.9.1,
each through the object that version's own trainer builds from the config Hydra composes out
of verl's own `ppo_trainer.yaml` (verl_probe.py says which object, per version), on a local
Ray, through the session's local `rlvr serve`. Nothing of verl is imitated.

Where it runs: verl needs torch (`DataProto`, `tensordict`) and Ray to build those objects.
PyPI serves only the CUDA build of torch (torch + its CUDA wheels: 5.9 GB, ~3 minutes to
install here), so scripts/setup installs it once in `target/py-trainers`, the venv that also
runs TRL (test_readme.py), with verl's other run-time imports; each verl version is installed
with --no-deps under `target/py-verl/VERSION`, and 0.6.1 and 0.7.0 (which import
transformers 4 names) see transformers 4 from `target/py-verl/transformers-4` first. Each
probe process takes ~15-25 s (Ray start, torch import in the reward workers)."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PYTHON_DIRECTORY, RELEASE_ROWS, fenced, release_answers, verify_requests
from readme import README, snippet

REPOSITORY = PYTHON_DIRECTORY.parent
TESTS = Path(__file__).resolve().parent
TRAINERS_PYTHON = REPOSITORY / "target" / "py-trainers" / "bin" / "python"
TRANSFORMERS_4 = REPOSITORY / "target" / "py-verl" / "transformers-4"
NEEDS_TRANSFORMERS_4 = {"0.6.1", "0.7.0"}

MARKER_071 = "reward.custom_reward_function.path=pkg://rlvr.verl"
MARKER_070 = "reward_model.reward_manager=naive"
MARKER_06 = "reward_model.reward_manager=batch"
MARKER_STOCK = "reward.sandbox_fusion.url=$RLVR_URL/run_code"


def verl_root(version):
    root = REPOSITORY / "target" / "py-verl" / version
    if not (root / "verl" / "trainer" / "config" / "ppo_trainer.yaml").is_file():
        pytest.fail(f"verl {version} is not installed in {root}: run scripts/setup")
    return root


@pytest.fixture(scope="module")
def shell(tmp_path_factory, url):
    """Runs a README block in bash as a user would: `rlvr` and `python` on PATH, rlvr
    importable, RLVR_URL set (the session's local server), the release's rows in
    code-rlvr-15k.jsonl, the trainer replaced by printf so its arguments can be read."""
    if not TRAINERS_PYTHON.exists():
        pytest.fail(f"{TRAINERS_PYTHON} is missing: run scripts/setup")
    directory = tmp_path_factory.mktemp("verl")
    shutil.copy(RELEASE_ROWS, directory / "code-rlvr-15k.jsonl")
    bin_directory = directory / "bin"
    bin_directory.mkdir()
    (bin_directory / "python").symlink_to(sys.executable)
    (bin_directory / "rlvr").symlink_to(os.environ["RLVR_BIN"])
    # A Ray the code starts is its own: without RAY_ADDRESS=local, `ray.init()` joins the last
    # cluster started on this machine (test_ray.py's, running at the same time in the other group).
    environment = dict(os.environ, PATH=f"{bin_directory}:{os.environ['PATH']}", PYTHONPATH=str(PYTHON_DIRECTORY), RLVR_URL=url,
                       RAY_ADDRESS="local")

    def run(text, trainer_as_printf=True):
        if trainer_as_printf:
            text = text.replace("python -m verl.trainer.main_ppo", "printf '%s\\n'")
        completed = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=directory, env=environment,
                                   capture_output=True, text=True, timeout=300)
        assert completed.returncode == 0, completed.stderr
        return completed.stdout.split("\n")

    run.directory = directory
    run.environment = environment
    run(snippet("--data-source codecontests"), trainer_as_printf=False)
    tokenizer = directory / "tokenizer"
    subprocess.run([str(TRAINERS_PYTHON), str(TESTS / "tiny_model.py"), str(tokenizer), "--tokenizer-only"],
                   check=True, capture_output=True, timeout=300)
    run.tokenizer = tokenizer
    return run


def rows(directory, name, right=True):
    """The exported rows as verl's RLHFDataset reads them, each with a right (or a wrong)
    answer as the response."""
    import datasets

    table = datasets.load_dataset("parquet", data_files=str(directory / name), split="train")
    answers = release_answers()
    return [
        {
            "data_source": row["data_source"],
            "prompt": row["prompt"][0]["content"][:200],
            "response": fenced(answers[row["extra_info"]["hash"]] if right else "print('no idea')"),
            "ground_truth": row["reward_model"]["ground_truth"],
            "extra_info": row["extra_info"],
        }
        for row in table
    ]


def mixed(directory, name):
    """Four right answers, then the same four rows answered wrong: 1.0 x 4, then 0.0 x 4."""
    return rows(directory, name) + rows(directory, name, right=False)


EXPECTED = [1.0] * 4 + [0.0] * 4


def probe(shell, version, overrides, data):
    """verl_probe.py on one verl version, in the trainers' venv."""
    request = shell.directory / f"probe-{version}.json"
    # Test-only keys: the tokenizer the reward workers load (no hub here), and two reward
    # workers instead of eight on this 2-core machine (0.7.1+).
    extra = [f"actor_rollout_ref.model.path={shell.tokenizer}"]
    if version not in NEEDS_TRANSFORMERS_4:
        extra.append("reward.num_workers=2")
    request.write_text(json.dumps({"overrides": overrides + extra, "tokenizer": str(shell.tokenizer), "rows": data}))
    root = verl_root(version)
    path = [str(root)] + ([str(TRANSFORMERS_4)] if version in NEEDS_TRANSFORMERS_4 else []) + [str(PYTHON_DIRECTORY)]
    environment = dict(shell.environment, VERL_ROOT=str(root), PYTHONPATH=":".join(path), RAY_USAGE_STATS_ENABLED="0")
    completed = subprocess.run([str(TRAINERS_PYTHON), str(TESTS / "verl_probe.py"), str(request)],
                               env=environment, capture_output=True, text=True, timeout=600, cwd=shell.directory)
    assert completed.returncode == 0, completed.stderr[-4000:]
    answer = json.loads(completed.stdout.strip().splitlines()[-1])
    assert answer["verl"] == version
    return answer


def overrides_of(shell, marker):
    lines = [line for line in shell(snippet(marker)) if "=" in line]
    train_files = [line for line in lines if line.startswith("data.train_files=")]
    assert len(train_files) == 1
    return lines, train_files[0].split("=", 1)[1]


def assert_scored(answer, path, manager):
    assert "error" not in answer, answer["error"]
    assert answer["path"] == path and answer["manager"] == manager, answer
    assert answer["scores"] == EXPECTED, answer
    assert answer["extra"]["pass_rate"] == EXPECTED and answer["extra"]["unscored"] == [0.0] * 8, answer["extra"]


@pytest.mark.parametrize("version", ["0.7.1", "0.9.1"])
def test_issue26_readme_verl_071_lines_score_through_reward_loop_manager(shell, version):
    overrides, train_files = overrides_of(shell, MARKER_071)
    answer = probe(shell, version, overrides, mixed(shell.directory, train_files))
    assert answer["custom_reward_function"]["path"] == "pkg://rlvr.verl"
    assert answer["awaits_reward_function"] is False, "compute_score runs on verl's thread pool"
    assert_scored(answer, "RewardLoopManager", "naive")


def async_name_of_readme():
    found = re.search(r"`reward\.custom_reward_function\.name=(compute_score_async)`", README.read_text())
    assert found, "the README's async reward function for 0.7.1+"
    return found.group(1)


@pytest.mark.parametrize("version", ["0.7.1", "0.9.1"])
def test_issue34_async_reward_function_scores_through_reward_loop_manager_as_the_sync_one(shell, client, version):
    """The README's 0.7.1+ lines with the async function's name: verl awaits it, each reward
    worker's samples go to rlvr as one request, and every score and extra is the sync
    function's on the same rows."""
    import rlvr.verl

    overrides, train_files = overrides_of(shell, MARKER_071)
    name = async_name_of_readme()
    overrides = [line.replace("name=compute_score", f"name={name}") if line.startswith("reward.custom_reward_function.name=") else line
                 for line in overrides]
    # A window no worker's four samples can miss on a loaded machine: one request per worker.
    overrides.append("+reward.custom_reward_function.reward_kwargs.batch_window=2.0")
    data = mixed(shell.directory, train_files)
    sync = [rlvr.verl.compute_score(row["data_source"], row["response"], row["ground_truth"], row["extra_info"], url=shell.environment["RLVR_URL"])
            for row in data]
    before = verify_requests(client)
    answer = probe(shell, version, overrides, data)
    assert answer["custom_reward_function"]["name"] == "compute_score_async"
    assert answer["awaits_reward_function"] is True, "verl's reward manager awaits it instead of using its thread pool"
    assert_scored(answer, "RewardLoopManager", "naive")
    assert answer["scores"] == [result["score"] for result in sync]
    assert answer["extra"] == {key: [result[key] for result in sync] for key in sync[0]}
    assert verify_requests(client) == before + 2, "8 samples over 2 reward workers: one request each"


def test_issue26_readme_verl_070_lines_score_through_the_agent_loops_reward_worker(shell):
    overrides, train_files = overrides_of(shell, MARKER_070)
    answer = probe(shell, "0.7.0", overrides, mixed(shell.directory, train_files))
    assert answer["custom_reward_function"]["path"] == "pkg://rlvr.verl"
    assert answer["legacy_manager_class"] == "NaiveRewardManager", "main_ppo's own manager loads too"
    assert_scored(answer, "RewardLoopWorker", "naive")


def test_issue26_readme_verl_06_lines_score_through_load_reward_manager(shell):
    overrides, train_files = overrides_of(shell, MARKER_06)
    answer = probe(shell, "0.6.1", overrides, mixed(shell.directory, train_files))
    assert answer["custom_reward_function"]["path"].endswith("rlvr/verl.py")
    assert answer["legacy_manager_class"] == "BatchRewardManager"
    assert_scored(answer, "load_reward_manager", "batch")


def test_issue26_the_batch_manager_is_refused_from_070_on_as_the_issue_saw(shell):
    """The old README line (`batch`) fails in verl's own registry on 0.7.0 and 0.9.1."""
    new, train_files = overrides_of(shell, MARKER_071)
    batch_new = [line.replace("reward.reward_manager.name=naive", "reward.reward_manager.name=batch") for line in new]
    data = rows(shell.directory, train_files)[:2]  # 0.7.1 splits a batch evenly over its 2 workers
    for version in ("0.9.1",):  # 0.7.1's RewardLoopManager is the same code path
        assert "Unknown reward manager: batch" in probe(shell, version, batch_new, data).get("error", ""), version
    old, _ = overrides_of(shell, MARKER_070)
    batch_old = [line.replace("reward_model.reward_manager=naive", "reward_model.reward_manager=batch") for line in old]
    assert "Unknown reward manager: batch" in probe(shell, "0.7.0", batch_old, data).get("error", "")


def test_issue26_readme_prime_manager_on_06_runs_rlvr_in_its_process_pool(shell):
    text = README.read_text()
    prime = re.search(r"verl 0\.6's prime manager \(a process pool\) needs a float: `([^`]+)`", text)
    assert prime, "the README's prime keys"
    keys = dict(item.split("=", 1) for item in prime.group(1).split())
    overrides, train_files = overrides_of(shell, MARKER_06)
    overrides = [f"{line.split('=', 1)[0]}={keys[line.split('=', 1)[0]]}" if line.split("=", 1)[0] in keys else line
                 for line in overrides]
    assert "reward_model.reward_manager=prime" in overrides
    answer = probe(shell, "0.6.1", overrides, mixed(shell.directory, train_files))
    assert answer["legacy_manager_class"] == "PrimeRewardManager"
    assert answer["custom_reward_function"]["name"] == "compute_score_float"
    assert answer["scores"] == EXPECTED, answer


def stock_keys_of_readme():
    text = README.read_text()
    found = re.search(r"\(verl 0\.7\.0: `([^`]+)`,\s+as its reward loop ignores the URL; verl 0\.6: `([^`]+)`\.\)", text)
    assert found, "the README's stock-scorer keys for 0.7.0 and 0.6"
    return {"0.7.0": found.group(1).split(), "0.6.1": found.group(2).split()}


def run_code_requests(client):
    """Requests rlvr's /run_code answered so far (its Prometheus counter)."""
    total = 0.0
    for line in client.metrics().splitlines():
        if line.startswith("rlvr_requests_total{") and 'route="/run_code"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


@pytest.mark.parametrize("version", ["0.9.1", "0.7.0", "0.6.1"])
def test_issue26_stock_scorer_scores_a_data_source_export_through_run_code(shell, client, version):
    overrides, train_files = overrides_of(shell, MARKER_STOCK)
    data = mixed(shell.directory, train_files)
    assert {row["data_source"] for row in data} == {"codecontests"}
    assert sum(row["ground_truth"].startswith('{"assert_case"') for row in data) == 4, "functional rows too"
    if version != "0.9.1":
        overrides = [line for line in overrides if not line.startswith("reward.sandbox_fusion.url=")]
        overrides += [key.replace("$RLVR_URL", shell.environment["RLVR_URL"]) for key in stock_keys_of_readme()[version]]
    before = run_code_requests(client)
    answer = probe(shell, version, overrides, data)
    assert "error" not in answer, answer["error"]
    assert answer["custom_reward_function"]["path"] is None, "verl's own scorer"
    assert answer["scores"] == EXPECTED, answer
    assert answer["path"] == {"0.9.1": "RewardLoopManager", "0.7.0": "load_reward_manager", "0.6.1": "load_reward_manager"}[version]
    assert run_code_requests(client) >= before + len(data), "verl sent its tests to rlvr's /run_code"
