"""The compatible routes, driven by the real clients: the `sandbox-fusion` package from PyPI,
verl's own SandboxFusion reward code (shipped in the verl wheel), and open-instruct's request
shapes."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import requests


def test_sandbox_fusion_client_runs_code_against_rlvr_serve(url):
    from sandbox_fusion import RunCodeRequest, RunStatus, run_code, set_endpoint
    from sandbox_fusion.client import summary_run_code_result
    from sandbox_fusion.models import SummaryMapping

    set_endpoint(url)
    ok = run_code(RunCodeRequest(code="print(input()[::-1])", stdin="abc", language="python"))
    assert ok.status == RunStatus.Success
    assert ok.run_result.stdout == "cba\n" and ok.run_result.return_code == 0
    failed = run_code(RunCodeRequest(code="raise ValueError('no')", language="python"))
    assert failed.status == RunStatus.Failed
    assert "ValueError" in failed.run_result.stderr
    slow = run_code(RunCodeRequest(code="while True: pass", language="python", run_timeout=0.5))
    mapping = SummaryMapping(Success="ok", Failed="failed", RunTimeout="timeout", RunFailed="crash")
    assert summary_run_code_result(slow, mapping) == "timeout"
    assert summary_run_code_result(failed, mapping) == "crash"
    with pytest.raises(Exception, match="Sandbox responded with error"):
        run_code(RunCodeRequest(code="int main() {}", language="cpp"), max_attempts=1)
    assert requests.get(url + "/v1/ping").json() == "pong"


def _verl_sandbox_fusion():
    """verl.utils.reward_score.sandbox_fusion, loaded alone (the verl package itself needs
    torch): it only needs requests."""
    spec = importlib.util.find_spec("verl")
    if spec is None or spec.submodule_search_locations is None:
        pytest.skip("the verl wheel is not installed")
    directory = Path(list(spec.submodule_search_locations)[0]) / "utils" / "reward_score" / "sandbox_fusion"
    module_spec = importlib.util.spec_from_file_location(
        "verl_sandbox_fusion", directory / "__init__.py", submodule_search_locations=[str(directory)]
    )
    module = importlib.util.module_from_spec(module_spec)
    sys.modules["verl_sandbox_fusion"] = module
    module_spec.loader.exec_module(module)
    return module


def test_verls_own_sandbox_fusion_reward_scores_through_rlvr_serve(url):
    verl = _verl_sandbox_fusion()
    tests = {"inputs": ["2\n", "5\n", "7\n"], "outputs": ["4\n", "10\n", "14\n"]}
    right = "```python\nprint(int(input()) * 2)\n```"
    half = "```python\nn = int(input())\nprint(n * 2 if n < 6 else 0)\n```"
    score, metadata = verl.compute_score(url + "/run_code", None, 1024, right, json.dumps(tests), continuous=True)
    assert score == 1.0, metadata
    score, _ = verl.compute_score(url + "/run_code", None, 1024, half, tests, continuous=True)
    assert abs(score - 2 / 3) < 1e-9
    asserts = {"assert_case": ["assert f(1) == 2", "assert f(2) == 5"]}
    score, _ = verl.compute_score(url + "/run_code", None, 1024, "```python\ndef f(x):\n    return 2 * x\n```", asserts, continuous=True)
    assert score == 0.5


def test_open_instruct_routes(url):
    # open_instruct/code_utils/api.py request shapes, posted as its CodeVerifier does.
    program = "def is_even(n):\n    return n % 2 == 0"
    answer = requests.post(url + "/test_program", json={
        "program": program,
        "tests": ["assert is_even(2)", "assert is_even(3)", "assert not is_even(5)"],
        "max_execution_time": 1.0,
    }, timeout=30).json()
    assert answer["results"] == [1, 0, 1]
    assert len(answer["runtimes"]) == 3
    stdio = requests.post(url + "/test_program_stdio", json={
        "program": "import sys\nprint(sum(map(int, sys.stdin.read().split())))",
        "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "2 2", "output": "5"}],
        "max_execution_time": 1.0,
    }, timeout=30).json()
    assert stdio["results"] == [1, 0]
    slow = requests.post(url + "/test_program", json={
        "program": "import time", "tests": ["time.sleep(5)", "assert True"], "max_execution_time": 0.5,
    }, timeout=30).json()
    assert slow["results"] == [0, 1]
    pickled = requests.post(url + "/test_program", json={"program": "x = 1", "tests": "gASVCAAAAAAAAABdlC4="}, timeout=30)
    assert pickled.status_code == 422 and "pickled" in pickled.json()["error"]
    assert requests.get(url + "/health").json() == {"status": "healthy"}


def test_openrlhf_remote_reward_url(url):
    # openrlhf/utils/agent.py _fetch_rewards_via_http: POST {query, prompts, labels}.
    prompt = "Write a doubler.\n"
    answer = requests.post(url + "/get_reward", json={
        "query": [prompt + "```python\nprint(int(input()) * 2)\n```", prompt + "nothing"],
        "prompts": [prompt, prompt],
        "labels": [json.dumps({"inputs": ["3"], "outputs": ["6"]})] * 2,
    }, timeout=60).json()
    assert answer["rewards"] == [1.0, 0.0] and answer["scores"] == [1.0, 0.0]
