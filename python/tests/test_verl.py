"""Issue 16, "verl of today": the README's verl lines run against verl 0.6.1's and 0.9.1's own
config (Hydra composes verl's ppo_trainer.yaml with the README's overrides) and verl's own
loader, which resolves rlvr's function; the prime manager's own scoring loop pickles it; the
stock scorer scores `--data-source codecontests` exports through `rlvr serve`'s /run_code.
Each verl version runs in its own process (verl_probe.py); scripts/setup installs both with
--no-deps under target/py-verl."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PYTHON_DIRECTORY, RELEASE_ROWS, fenced, release_answers
from readme import snippet

REPOSITORY = PYTHON_DIRECTORY.parent
VERSIONS = {"0.6": "0.6.1", "0.7+": "0.9.1"}


def verl_root(version):
    root = REPOSITORY / "target" / "py-verl" / version
    if not (root / "verl" / "trainer" / "config" / "ppo_trainer.yaml").is_file():
        pytest.fail(f"verl {version} is not installed in {root}: run scripts/setup")
    return root


@pytest.fixture(scope="module")
def shell(tmp_path_factory, url):
    """Runs a README block in bash as a user would: `rlvr` and `python` on PATH, rlvr
    importable, RLVR_URL set, the release's rows in code-rlvr-15k.jsonl."""
    directory = tmp_path_factory.mktemp("verl")
    shutil.copy(RELEASE_ROWS, directory / "code-rlvr-15k.jsonl")
    bin_directory = directory / "bin"
    bin_directory.mkdir()
    (bin_directory / "python").symlink_to(sys.executable)
    (bin_directory / "rlvr").symlink_to(os.environ["RLVR_BIN"])
    environment = dict(
        os.environ,
        PATH=f"{bin_directory}:{os.environ['PATH']}",
        PYTHONPATH=str(PYTHON_DIRECTORY),
        RLVR_URL=url,
    )

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
    return run


def rows(directory, name):
    import datasets

    # verl's RLHFDataset reads the files with datasets.load_dataset("parquet").
    table = datasets.load_dataset("parquet", data_files=str(directory / name), split="train")
    answers = release_answers()
    return [
        {
            "data_source": row["data_source"],
            "response": fenced(answers[row["extra_info"]["hash"]]),
            "ground_truth": row["reward_model"]["ground_truth"],
            "extra_info": row["extra_info"],
        }
        for row in table
    ]


def probe(shell, version, overrides, data):
    request = shell.directory / "probe-request.json"
    request.write_text(json.dumps({"overrides": overrides, "rows": data}))
    root = verl_root(version)
    environment = dict(shell.environment, VERL_ROOT=str(root), PYTHONPATH=f"{root}:{PYTHON_DIRECTORY}")
    completed = subprocess.run([sys.executable, str(Path(__file__).with_name("verl_probe.py")), str(request)],
                               env=environment, capture_output=True, text=True, timeout=300, cwd=shell.directory)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


def overrides_of(shell, marker):
    lines = [line for line in shell(snippet(marker)) if "=" in line]
    train_files = [line for line in lines if line.startswith("data.train_files=")]
    assert len(train_files) == 1
    return lines, train_files[0].split("=", 1)[1]


def test_issue16_readme_verl_07_keys_compose_and_load_on_verl_0_9_1(shell):
    overrides, train_files = overrides_of(shell, "reward.custom_reward_function.path=pkg://rlvr.verl")
    answer = probe(shell, "0.9.1", overrides, rows(shell.directory, train_files))
    assert answer["verl"] == "0.9.1"
    assert answer["custom_reward_function"] == {"path": "pkg://rlvr.verl", "name": "compute_score"}
    assert answer["reward_manager"] == "batch" and answer["loaded"] == "rlvr.verl.compute_score"
    assert answer["scores"] == [1.0] * 4


def test_issue16_readme_verl_06_keys_compose_and_load_on_verl_0_6_1(shell):
    overrides, train_files = overrides_of(shell, "custom_reward_function.path=$(python -c")
    answer = probe(shell, "0.6.1", overrides, rows(shell.directory, train_files))
    assert answer["verl"] == "0.6.1"
    assert answer["custom_reward_function"]["path"].endswith("rlvr/verl.py")
    assert answer["reward_manager"] == "batch" and answer["loaded"] == "rlvr.verl.compute_score"
    assert answer["scores"] == [1.0] * 4


def test_issue16_each_versions_keys_are_refused_or_ignored_by_the_other(shell):
    old, _ = overrides_of(shell, "custom_reward_function.path=$(python -c")
    new, _ = overrides_of(shell, "reward.custom_reward_function.path=pkg://rlvr.verl")
    on_new = probe(shell, "0.9.1", old, [])
    # 0.9.1 keeps the old keys as a legacy block its loader does not read, or refuses them.
    assert "compose_error" in on_new or (on_new["loaded"] is None and on_new["legacy_custom_reward_function"]["path"])
    on_old = probe(shell, "0.6.1", new, [])
    assert "compose_error" in on_old, on_old


# verl 0.6.1 loads custom reward functions by file path only; 0.7+ also by `pkg://`.
@pytest.mark.parametrize("version, form", [("0.6.1", "file path"), ("0.9.1", "file path"), ("0.9.1", "pkg://rlvr.verl")])
def test_issue16_prime_manager_pickles_rlvr_by_file_path_and_by_package(shell, version, form):
    import rlvr.verl

    path = rlvr.verl.__file__ if form == "file path" else "pkg://rlvr.verl"
    if version == "0.6.1":
        overrides = [f"custom_reward_function.path={path}", "custom_reward_function.name=compute_score_float",
                     "reward_model.reward_manager=prime"]
    else:
        overrides = [f"reward.custom_reward_function.path={path}", "reward.custom_reward_function.name=compute_score_float",
                     "reward.reward_manager.name=prime"]
    answer = probe(shell, version, overrides, rows(shell.directory, "verl-data/data/train-00000-of-00001.parquet"))
    assert answer["reward_manager"] == "prime" and answer["pickles"] is True
    assert answer["loaded"] == "rlvr.verl.compute_score_float", "the importable module's function, not custom_module's"
    assert answer["scores"] == [1.0] * 4, "prime's own process pool ran it"


def test_issue16_stock_scorer_scores_a_data_source_export_through_run_code(shell):
    text = snippet("reward.sandbox_fusion.url=$RLVR_URL/run_code")
    overrides, train_files = overrides_of(shell, "reward.sandbox_fusion.url=$RLVR_URL/run_code")
    data = rows(shell.directory, train_files)
    assert {row["data_source"] for row in data} == {"codecontests"}
    assert sum(row["ground_truth"].startswith('{"assert_case"') for row in data) == 2
    answer = probe(shell, "0.9.1", overrides, data)
    assert answer["loaded"] is None and answer["sandbox_fusion_url"].endswith("/run_code")
    assert answer["stock_scores"] == [1.0] * 4, answer
    legacy = [line.replace("reward.sandbox_fusion.url", "reward_model.sandbox_fusion.url") for line in overrides]
    assert "verl 0.6: `reward_model.sandbox_fusion.url=$RLVR_URL/run_code`" in (REPOSITORY / "README.md").read_text()
    answer = probe(shell, "0.6.1", legacy, data)
    assert answer["stock_scores"] == [1.0] * 4, answer
    assert text
