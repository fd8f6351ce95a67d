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
        run_code(RunCodeRequest(code="<?php echo 1;", language="php"), max_attempts=1)
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


# Issue 24: the same a+b program in each language /run_code runs, by SandboxFusion's names.
SUM_PROGRAMS = {
    "cpp": "#include <bits/stdc++.h>\nint main(){ long long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }",
    "c": "#include <stdio.h>\nint main(void){ long long a, b; scanf(\"%lld %lld\", &a, &b); printf(\"%lld\\n\", a + b); return 0; }",
    "java": "import java.util.*;\npublic class Main { public static void main(String[] x) { Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + s.nextLong()); } }",
    "nodejs": "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a + b);",
    "go": "package main\nimport \"fmt\"\nfunc main() { var a, b int64; fmt.Scan(&a, &b); fmt.Println(a + b) }",
    "rust": "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap(); let v: Vec<i64> = s.split_whitespace().map(|w| w.parse().unwrap()).collect(); println!(\"{}\", v[0] + v[1]); }",
    "python": "a, b = map(int, input().split())\nprint(a + b)",
}
COMPILED = {"cpp", "c", "java", "go", "rust"}


@pytest.mark.parametrize("language", sorted(set(SUM_PROGRAMS) - {"c"}))
def test_issue24_sandbox_fusion_client_runs_every_language(url, language):
    from sandbox_fusion import RunCodeRequest, RunStatus, run_code, set_endpoint

    set_endpoint(url)
    ok = run_code(RunCodeRequest(code=SUM_PROGRAMS[language], stdin="20 22\n", language=language,
                                 compile_timeout=30, run_timeout=10))
    assert ok.status == RunStatus.Success, ok
    assert ok.run_result.stdout == "42\n" and ok.run_result.return_code == 0, ok
    if language in COMPILED:
        assert ok.compile_result.status == "Finished" and ok.compile_result.return_code == 0, ok
    else:
        assert ok.compile_result is None, ok


def test_issue24_run_code_runs_c(url):
    # The sandbox-fusion client's model has no "c" (its server has none either); rlvr's does.
    answer = requests.post(url + "/run_code", json={
        "code": SUM_PROGRAMS["c"], "stdin": "20 22\n", "language": "c", "compile_timeout": 30,
    }, timeout=120).json()
    assert answer["status"] == "Success", answer
    assert answer["run_result"]["stdout"] == "42\n", answer
    assert answer["compile_result"]["return_code"] == 0, answer


def test_issue24_run_code_answers_compile_errors_and_timeouts_as_sandbox_fusion(url):
    broken = requests.post(url + "/run_code", json={
        "code": "int main() { return undefined_name; }", "language": "cpp", "compile_timeout": 30,
    }, timeout=120).json()
    assert broken["status"] == "Failed", broken
    assert broken["run_result"] is None, broken
    assert broken["compile_result"]["status"] == "Finished", broken
    assert broken["compile_result"]["return_code"] != 0, broken
    assert "undefined_name" in broken["compile_result"]["stderr"], broken
    slow = requests.post(url + "/run_code", json={
        "code": "int main() { for (;;) {} }", "language": "cpp", "run_timeout": 0.5, "compile_timeout": 30,
    }, timeout=120).json()
    assert slow["status"] == "Failed", slow
    assert slow["run_result"]["status"] == "TimeLimitExceeded", slow
    assert slow["compile_result"]["return_code"] == 0, slow


def test_issue24_verls_own_sandbox_fusion_reward_scores_cpp_through_rlvr_serve(url):
    """verl 0.9.1's own check_correctness, language="cpp", against C++ data."""
    _verl_sandbox_fusion()
    check_correctness = sys.modules["verl_sandbox_fusion.utils"].check_correctness
    tests = {"inputs": ["1 2\n", "-5 5\n", "1000000000000 1\n"], "outputs": ["3\n", "0\n", "1000000000001\n"]}
    right = SUM_PROGRAMS["cpp"]
    results, metadata = check_correctness(url + "/run_code", tests, right, timeout=30, language="cpp")
    assert results == [True, True, True], metadata
    assert all(entry["compile_status"] == "Finished" for entry in metadata), metadata
    wrong = "#include <cstdio>\nint main(){ long long a, b; scanf(\"%lld %lld\", &a, &b); printf(\"%lld\\n\", a > 0 ? a + b : 7); }"
    results, metadata = check_correctness(url + "/run_code", tests, wrong, timeout=30, language="cpp")
    assert results == [True, False, True], metadata
    results, metadata = check_correctness(url + "/run_code", tests, "int main() { syntax error }", timeout=30, language="cpp")
    assert results == [-4, -4, -4], metadata
    crash = "int main(){ volatile int *p = nullptr; return *p; }"
    results, metadata = check_correctness(url + "/run_code", tests, crash, timeout=30, language="cpp")
    assert results == [-2, -2, -2], metadata


def test_issue24_native_verify_takes_a_language_per_job(url):
    tests = {"inputs": ["20 22\n"], "outputs": ["42\n"]}
    both = f"```cpp\n{SUM_PROGRAMS['cpp']}\n```\n```python\nprint(0)\n```"
    answer = requests.post(url + "/v1/verify", json={"jobs": [
        {"id": "asked-cpp", "response": both, "ground_truth": tests, "language": "cpp"},
        {"id": "last-block", "response": both, "ground_truth": tests},
        {"id": "java-only", "response": both, "ground_truth": tests, "languages": ["java"]},
        {"id": "unknown", "response": both, "ground_truth": tests, "language": "cobol"},
    ]}, timeout=120).json()
    results = {result["id"]: result for result in answer["results"]}
    assert results["asked-cpp"]["score"] == 1.0, results
    assert results["last-block"]["score"] == 0.0, results
    assert results["java-only"]["status"] == "no_code", results
    assert results["unknown"]["status"] == "invalid_job" and "cobol" in results["unknown"]["reason"], results


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
