"""Issue 16, "done when": every `sh` and `python` block of README.md is run by a test, taken
from the README (not copied), on the release's own rows (python/tests/fixtures). The verl
blocks run in test_verl.py, the install blocks in test_wheel.py; the trainers' command lines
that need GPUs (OpenRLHF, open-instruct) run with the trainer replaced by `printf`, and the
flags they print are sent exactly as that trainer sends them."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from conftest import PYTHON_DIRECTORY, RELEASE_ROWS, fenced, release_answers, right_answer
from readme import blocks, snippet

REPOSITORY = PYTHON_DIRECTORY.parent
TESTS = Path(__file__).resolve().parent

# Every block, by a marker it contains, and the test file that runs it.
CLAIMS = {
    "scripts/demo": ".ci/run",  # CI runs scripts/test itself; scripts/demo is a release build
    "rlvr verify jobs.jsonl": "test_readme.py",
    "scripts/build-wheel": "test_wheel.py",
    "pip install target/wheels/": "test_wheel.py",
    "rlvr.start_server()": "test_readme.py",
    "--data-source codecontests": "test_verl.py",
    "reward.custom_reward_function.path=pkg://rlvr.verl": "test_verl.py",
    "reward_model.reward_manager=naive": "test_verl.py",
    "reward_model.reward_manager=batch": "test_verl.py",
    "reward.sandbox_fusion.url=$RLVR_URL/run_code": "test_verl.py",
    "from trl import GRPOConfig, GRPOTrainer": "test_readme.py",
    "openrlhf.cli.train_ppo_ray": "test_readme.py",
    "--code_api_url": "test_readme.py",
    "pool = rlvr.ray.start_verifiers()": "test_readme.py",
    "exact-answers.jsonl": "test_readme.py",
    "masked_code_reward": "test_readme.py",
}


def test_issue16_every_readme_snippet_is_claimed_by_a_test():
    for language, text in blocks():
        if language not in ("sh", "python"):
            continue
        owners = [marker for marker in CLAIMS if marker in text]
        assert len(owners) == 1, f"README block not claimed once by a test: {text[:80]!r} ({owners})"
    for marker, owner in CLAIMS.items():
        if owner.endswith(".py"):
            assert f'"{marker}"' in (TESTS / owner).read_text(), (marker, owner)
        else:
            assert "scripts/test" in (REPOSITORY / owner).read_text()


@pytest.fixture
def workspace(tmp_path, url):
    """A user's directory: the release's rows, `rlvr` and `python` on PATH, RLVR_URL set."""
    shutil.copy(RELEASE_ROWS, tmp_path / "code-rlvr-15k.jsonl")
    shutil.copy(REPOSITORY / "examples" / "jobs.jsonl", tmp_path / "jobs.jsonl")
    bin_directory = tmp_path / "bin"
    bin_directory.mkdir()
    (bin_directory / "python").symlink_to(sys.executable)
    (bin_directory / "rlvr").symlink_to(os.environ["RLVR_BIN"])
    # A Ray the code starts is its own: without RAY_ADDRESS=local, `ray.init()` joins the last
    # cluster started on this machine (test_ray.py's, running at the same time in the other group).
    environment = dict(os.environ, PATH=f"{bin_directory}:{os.environ['PATH']}", PYTHONPATH=str(PYTHON_DIRECTORY), RLVR_URL=url,
                       RAY_ADDRESS="local")
    return tmp_path, environment


def bash(text, workspace, replace=None):
    directory, environment = workspace
    for command, substitute in (replace or {}).items():
        text = text.replace(command, substitute)
    completed = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=directory, env=environment,
                               capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout


def python(code, workspace, prelude="", interpreter=sys.executable, timeout=600):
    directory, environment = workspace
    script = directory / "snippet.py"
    script.write_text(prelude + "\n" + code)
    completed = subprocess.run([interpreter, str(script)], cwd=directory, env=environment,
                               capture_output=True, text=True, timeout=timeout)
    assert completed.returncode == 0, completed.stdout + completed.stderr[-4000:]
    return completed.stdout


def test_issue16_readme_verify_command(workspace):
    bash(snippet("rlvr verify jobs.jsonl"), workspace)
    results = [json.loads(line) for line in (workspace[0] / "results.jsonl").read_text().splitlines()]
    assert results and {result["status"] for result in results} <= {"ok", "format_error", "no_code", "invalid_job", "sandbox_error"}
    assert any(result["score"] == 1.0 for result in results)


def test_issue16_readme_start_server(workspace):
    code = snippet("rlvr.start_server()")
    output = python(code + "\nprint(os.environ['RLVR_URL'])\nserver.stop()\nprint(server.alive())", workspace)
    started, alive = output.split()
    assert started.startswith("http://127.0.0.1:") and alive == "False"


def test_issue16_readme_trl_grpo_trainer_runs_on_the_release_rows(workspace):
    """The real GRPOTrainer (TRL 1.16, torch on CPU) for one step, on a tiny model made here."""
    venv = REPOSITORY / "target" / "py-trainers"
    if not (venv / "bin" / "python").exists():
        pytest.fail("TRL is not installed in target/py-trainers: run scripts/setup")
    directory, environment = workspace
    subprocess.run([str(venv / "bin" / "python"), str(TESTS / "tiny_model.py"), str(directory / "tiny-model")],
                   check=True, capture_output=True, timeout=600)
    prelude = (
        "import rlvr.trl, rlvr.client\n"
        "scores = []\n"
        "verify = rlvr.client.Client.averify\n"
        "async def recording(self, jobs, **options):\n"
        "    results = await verify(self, jobs, **options)\n"
        "    scores.extend((job['ground_truth'], result['status'], result['score']) for job, result in zip(jobs, results))\n"
        "    return results\n"
        "rlvr.client.Client.averify = recording\n"
        "MODEL = 'tiny-model'\n"
    )
    code = snippet("from trl import GRPOConfig, GRPOTrainer")
    epilogue = "\nimport json\nprint(json.dumps(scores))\n"
    output = python(code + epilogue, workspace, prelude=prelude, interpreter=str(venv / "bin" / "python"), timeout=900)
    scores = json.loads(output.strip().splitlines()[-1])
    assert scores, "TRL called rlvr's reward function"
    assert all(score is not None for _, _, score in scores), "no NaN rewards: every completion was scored"
    assert {status for _, status, _ in scores} <= {"ok", "no_code", "format_error"}
    assert len(scores) == 8, "one step: 8 generations scored"


def _printed_flags(text, command, workspace):
    output = bash(text, workspace, replace={command: "printf '%s\\n'"})
    lines = output.splitlines()
    return lines


def _labels(structs=False):
    """The rows as `datasets.load_dataset("json")` gives them (OpenRLHF loads its data so), or
    as Arrow structs with null for absent keys (datasets < 5, pyarrow)."""
    import datasets
    import pyarrow.json

    if structs:
        return list(datasets.Dataset(pyarrow.json.read_json(RELEASE_ROWS)))
    return list(datasets.load_dataset("json", data_files=str(RELEASE_ROWS), split="train"))


def test_issue16_readme_openrlhf_lines_as_openrlhf_sends_them(workspace):
    text = snippet("openrlhf.cli.train_ppo_ray")
    flags = _printed_flags(text, "python -m openrlhf.cli.train_ppo_ray", workspace)
    urls = [flags[index + 1] for index, flag in enumerate(flags) if flag == "--reward.remote_url"]
    assert len(urls) == 2 and "--data.label_key" in flags
    label_key = flags[flags.index("--data.label_key") + 1]
    rows = _labels()
    prompts = [row["prompt"][0]["content"] for row in rows]
    queries = [prompt + right_answer(row) for prompt, row in zip(prompts, rows)]
    labels = [row[label_key] for row in rows]
    http_url, file_path = urls
    # openrlhf/utils/agent.py: POST {query, prompts, labels} to the URL.
    answer = requests.post(http_url, json={"query": queries, "prompts": prompts, "labels": labels}, timeout=120).json()
    assert answer["rewards"] == [1.0] * 4, answer
    # A `.py` URL: OpenRLHF imports the file and calls reward_func(queries, prompts, labels).
    import importlib.util

    assert file_path.endswith("rlvr/openrlhf.py")
    spec = importlib.util.spec_from_file_location("reward_func_module", file_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rewards = module.reward_func(queries, prompts, labels)["rewards"]
    assert list(map(float, rewards)) == [1.0] * 4


def test_issue16_readme_open_instruct_line_takes_the_release_label_as_it_is(workspace):
    flags = _printed_flags(snippet("--code_api_url"), "python open_instruct/grpo_fast.py", workspace)
    api_url = flags[flags.index("--code_api_url") + 1]
    for row in _labels(structs=True):
        # open_instruct/ground_truth_utils.py CodeVerifier: {"program", "tests": label, "max_execution_time"}.
        program = release_answers()[row["metadata"]["hash"]]
        for tests in (row["label"], json.dumps(row["label"])):
            response = requests.post(api_url, json={"program": program, "tests": tests, "max_execution_time": 1.0}, timeout=120)
            assert response.status_code == 200, response.text
            results = response.json()["results"]
            assert results and all(result == 1 for result in results), (row["label"], results)


def test_issue16_readme_ray_local_form(workspace):
    code = snippet("pool = rlvr.ray.start_verifiers()")
    assert 'ray.init(address="auto")' in code, "the cluster form is shown"
    prelude = (
        "import json\n"
        f"jobs = [{{'response': {fenced('print(int(input()) * 2)')!r}, 'ground_truth': {{'inputs': ['2'], 'outputs': ['4']}}}}] * 3\n"
    )
    directory, environment = workspace
    environment = dict(environment, RAY_USAGE_STATS_ENABLED="0")
    output = python(code + "\nprint(json.dumps([result['score'] for result in results]))", (directory, environment), prelude=prelude)
    assert json.loads(output.strip().splitlines()[-1]) == [1.0, 1.0, 1.0]


def _add_rows_whose_answer_may_vary(directory):
    """Two rows after the release's four: one whose statement accepts any order (flagged,
    judged exactly), one the same with a `set` checker (flagged, judged right)."""
    rows = []
    for number, checker in enumerate((None, "set")):
        truth = {"inputs": ["\n"], "outputs": ["1 2 3\n"]}
        if checker:
            truth["checker"] = checker
        rows.append(json.dumps({
            "prompt": [{"role": "user", "content": "Print the numbers 1, 2 and 3. You may print the numbers in any order."}],
            "label": truth,
            "metadata": {"data_type": "code", "data_source": "coder1_longcot", "ability": "code", "style": "rule",
                         "hash": f"answer-may-vary-{number}", "ground_truth": truth},
        }))
    with open(directory / "code-rlvr-15k.jsonl", "a") as data:
        data.write("\n".join(rows) + "\n")


def test_issue25_readme_verl_leaves_out_rows_whose_answer_may_vary(workspace):
    directory, _ = workspace
    _add_rows_whose_answer_may_vary(directory)
    bash(snippet("exact-answers.jsonl"), workspace)
    kept = [json.loads(line) for line in (directory / "exact-answers.jsonl").read_text().splitlines()]
    hashes = [row["metadata"]["hash"] for row in kept]
    assert len(kept) == 5 and "answer-may-vary-0" not in hashes and "answer-may-vary-1" in hashes
    assert list((directory / "verl-data" / "data").glob("*.parquet")), "exported for verl"


def test_issue25_readme_trl_masks_rows_whose_answer_may_vary(workspace):
    directory, _ = workspace
    _add_rows_whose_answer_may_vary(directory)
    code = snippet("masked_code_reward")
    epilogue = (
        "\nfrom conftest import release_answers, fenced\n"
        "rows = list(dataset)\n"
        "completions = [fenced(release_answers()[row['hash']]) for row in rows[:4]] + [fenced('print(1, 2, 3)'), fenced('print(3, 2, 1)')]\n"
        "columns = {name: list(dataset[name]) for name in dataset.column_names if name != 'prompt'}\n"
        "print(json.dumps(masked_code_reward(prompts=[row['prompt'] for row in rows], completions=completions, **columns)))\n"
    )
    prelude = f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
    output = python(code + epilogue, workspace, prelude=prelude)
    assert json.loads(output.strip().splitlines()[-1]) == [1.0, 1.0, 1.0, 1.0, None, 1.0]


@pytest.fixture
def card_shaped(workspace):
    """The workspace's data replaced by a card-shaped synthetic file (`rlvr synth --like-card`,
    30 rows, 16 MB): io and functional rows mixed across Arrow's blocks, as in the release,
    which `load_dataset("json")` refuses."""
    directory, environment = workspace
    data = directory / "code-rlvr-15k.jsonl"
    subprocess.run([os.environ["RLVR_BIN"], "synth", str(data), "--rows", "30", "--like-card"], check=True, capture_output=True)
    import datasets

    with pytest.raises(Exception) as refused:
        datasets.load_dataset("json", data_files=str(data), split="train", cache_dir=str(directory / "hf-cache"))
    assert "Couldn't cast" in str(refused.value) + str(refused.value.__cause__), refused.value
    return workspace


# TRL itself replaced by a module that records what the snippet hands the trainer.
_FAKE_TRL = """
import sys, types
trl = types.ModuleType("trl")
handed = {}
class GRPOConfig:
    def __init__(self, **options):
        pass
class GRPOTrainer:
    def __init__(self, model=None, reward_funcs=(), train_dataset=None, args=None):
        handed.update(rows=len(train_dataset), columns=train_dataset.column_names, rewards=[f.__name__ for f in reward_funcs])
    def train(self):
        handed["trained"] = True
trl.GRPOConfig, trl.GRPOTrainer = GRPOConfig, GRPOTrainer
sys.modules["trl"] = trl
MODEL = "any"
"""


def test_issue34_readme_trl_lines_load_the_card_shaped_file(card_shaped):
    code = snippet("from trl import GRPOConfig, GRPOTrainer")
    output = python(code + "\nimport json\nprint(json.dumps(handed))\n", card_shaped, prelude=_FAKE_TRL)
    handed = json.loads(output.strip().splitlines()[-1])
    assert handed["rows"] == 30 and "ground_truth" in handed["columns"] and handed["trained"], handed
    assert handed["rewards"] == ["async_code_reward"]


def test_issue34_readme_mask_lines_load_the_card_shaped_file_without_rlvr_on_path(card_shaped):
    directory, environment = card_shaped
    # A plain install: the package importable, its binary found through RLVR_BIN, no `rlvr` on PATH.
    (directory / "bin" / "rlvr").unlink()
    code = snippet("masked_code_reward")
    epilogue = "\nprint(json.dumps([len(dataset), sum(dataset['answer_may_vary']), len(varies)]))\n"
    rows, masked, varies = json.loads(python(code + epilogue, card_shaped).strip().splitlines()[-1])
    assert rows == 30 and masked == varies, (rows, masked, varies)
