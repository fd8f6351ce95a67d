"""Each adapter called exactly as its trainer calls it (signatures from verl, TRL and
OpenRLHF, as docs/serve.md lists them)."""

import asyncio
import inspect
import json
import os

import pytest

from conftest import DOUBLING, RIGHT, WRONG


@pytest.fixture(autouse=True)
def shared_server(url, monkeypatch):
    """The adapters' default client uses $RLVR_URL: point it at the session's server."""
    monkeypatch.setenv("RLVR_URL", url)
    import rlvr.client

    rlvr.client._default_client = None
    yield
    rlvr.client._default_client = None


def test_verl_naive_manager_keyword_call_returns_a_dict_with_score():
    from rlvr.verl import compute_score

    # verl/workers/reward_manager/naive.py: keyword arguments, one sample at a time.
    result = compute_score(
        data_source="code-rlvr-15k",
        solution_str=RIGHT,
        ground_truth=json.dumps(DOUBLING),
        extra_info={"index": 3, "num_turns": 1, "rollout_reward_scores": {}},
    )
    assert result["score"] == 1.0 and result["pass_rate"] == 1.0
    assert all(isinstance(value, float) for value in result.values())


def test_verl_positional_call_and_reward_kwargs():
    from rlvr.verl import compute_score

    result = compute_score("code-rlvr-15k", WRONG, DOUBLING, None, profile="prime")
    assert result["score"] == 0.0
    # A verl parquet reward_model struct works as the ground truth too.
    result = compute_score("x", RIGHT, {"style": "rule", "ground_truth": json.dumps(DOUBLING)})
    assert result["score"] == 1.0


def test_verl_prime_manager_gets_a_float():
    from rlvr.verl import compute_score_float

    # verl/workers/reward_manager/prime.py: positional (data_source, completion, reference, extra_info).
    assert compute_score_float("code", RIGHT, DOUBLING, {"index": 0}) == 1.0


def test_verl_batch_manager_plural_keywords_one_call_per_batch():
    from rlvr.verl import compute_score

    # verl/workers/reward_manager/batch.py: compute_score(data_sources=, solution_strs=,
    # ground_truths=, extra_infos=, **reward_kwargs) -> list of float or dict.
    results = compute_score(
        data_sources=["code"] * 4,
        solution_strs=[RIGHT, WRONG, RIGHT, "no code at all"],
        ground_truths=[DOUBLING, json.dumps(DOUBLING), DOUBLING, DOUBLING],
        extra_infos=[{"index": index} for index in range(4)],
        profile="judge",
    )
    assert [result["score"] for result in results] == [1.0, 0.0, 1.0, 0.0]


def test_trl_sync_reward_function_with_dataset_columns():
    from rlvr.trl import code_reward

    assert code_reward.__name__ == "code_reward"
    # trl/trainer/grpo_trainer.py _calculate_rewards: keyword args, every column but prompt.
    rewards = code_reward(
        prompts=["Double it."] * 3,
        completions=[RIGHT, WRONG, RIGHT],
        completion_ids=[[1, 2], [3], [4]],
        trainer_state=None,
        log_extra=lambda *arguments: None,
        log_metric=lambda *arguments: None,
        ground_truth=[DOUBLING, DOUBLING, json.dumps(DOUBLING)],
        source=["a", "b", "c"],
    )
    assert rewards == [1.0, 0.0, 1.0]


def test_trl_async_reward_function_with_conversational_completions():
    from rlvr.trl import async_code_reward, make_reward_function

    assert inspect.iscoroutinefunction(async_code_reward)
    prompts = [[{"role": "user", "content": "Double it."}]] * 2
    completions = [[{"role": "assistant", "content": RIGHT}], [{"role": "assistant", "content": WRONG}]]

    async def trainer_step():
        # TRL gathers async reward functions on its event loop.
        return await asyncio.gather(
            async_code_reward(prompts=prompts, completions=completions, completion_ids=None, ground_truth=[DOUBLING] * 2),
            make_reward_function(column="tests", asynchronous=True, profile="prime")(
                prompts=prompts, completions=completions, tests=[DOUBLING] * 2
            ),
        )

    judge, prime = asyncio.run(trainer_step())
    assert judge == [1.0, 0.0] and prime == [1.0, 0.0]


def test_trl_unscored_samples_are_none_not_zero():
    from rlvr.trl import code_reward

    rewards = code_reward(prompts=["p"], completions=[RIGHT], ground_truth=[{"inputs": ["1"]}])
    assert rewards == [None]


def test_openrlhf_reward_func_strips_the_prompt_from_the_query():
    from rlvr.openrlhf import reward_func

    prompt = "<|im_start|>user\nDouble it.<|im_end|>\n<|im_start|>assistant\n"
    queries = [prompt + RIGHT + "<|im_end|>", prompt + WRONG + "<|im_end|>"]
    labels = [json.dumps(DOUBLING)] * 2
    answer = reward_func(queries, [prompt, prompt], labels)
    rewards = answer["rewards"]
    rewards = rewards.tolist() if hasattr(rewards, "tolist") else rewards
    assert rewards == [1.0, 0.0]
    assert set(answer) == {"rewards", "scores", "extra_logs"}
    assert set(answer["extra_logs"]) >= {"pass_rate", "sandbox_error"}


def test_adapters_start_a_local_server_when_no_url_is_set(monkeypatch):
    import rlvr.client
    from rlvr.verl import compute_score

    monkeypatch.delenv("RLVR_URL")
    rlvr.client._default_client = None
    assert compute_score("code", RIGHT, DOUBLING)["score"] == 1.0
    client = rlvr.client._default_client
    assert client.server is not None and os.environ["RLVR_URL"] == client.urls[0]
    client.close()
    assert not client.server.alive()


def test_issue25_a_ground_truth_checker_passes_through_every_adapter():
    """The adapters hand the ground truth to the server as it is: a `checker` key (issue 25)
    judges the output there, in every shape a trainer passes (object, JSON text, verl's
    reward_model struct, a `datasets` struct column with null where a row has no checker)."""
    import datasets

    from rlvr.openrlhf import reward_func
    from rlvr.trl import code_reward
    from rlvr.verl import compute_score

    reversed_lines = "<think>\nplan\n</think>\n```python\nn = int(input())\nprint(*range(n, 0, -1), sep='\\n')\n```"
    exact = {"inputs": ["3\n"], "outputs": ["1\n2\n3\n"]}
    any_order = dict(exact, checker="lines-any-order")
    for truth in (any_order, json.dumps(any_order), {"style": "rule", "ground_truth": json.dumps(any_order)}):
        assert compute_score("code", reversed_lines, truth)["score"] == 1.0, truth
    assert compute_score("code", reversed_lines, exact)["score"] == 0.0
    batch = compute_score(data_sources=["code"] * 2, solution_strs=[reversed_lines] * 2, ground_truths=[any_order, exact])
    assert [result["score"] for result in batch] == [1.0, 0.0]
    rows = datasets.Dataset.from_list([{"label": any_order}, {"label": exact}])
    assert rows[1]["label"]["checker"] is None, "Arrow gives the row without a checker a null one"
    assert code_reward(prompts=["p"] * 2, completions=[reversed_lines] * 2, label=rows["label"]) == [1.0, 0.0]
    unknown = dict(exact, checker="any-order")
    assert code_reward(prompts=["p"], completions=[reversed_lines], label=[unknown]) == [None], "invalid_job: no score"
    rewards = reward_func([reversed_lines] * 2, [""] * 2, [json.dumps(any_order), json.dumps(exact)])["rewards"]
    assert list(map(float, rewards)) == [1.0, 0.0]


def test_issue25_sandboxed_checkers_pass_through_every_adapter():
    """A Python `checker` and a C++ `checker_cpp` (testlib convention, written here) judge an
    honest answer that differs from the reference: 1.0 through verl, TRL and OpenRLHF; a checker
    that fails is unscored (`None` for TRL, `unscored` and `checker_error` flags), never 1."""
    from rlvr.openrlhf import reward_func
    from rlvr.trl import code_reward
    from rlvr.verl import compute_score

    honest = "<think>\nplan\n</think>\n```python\nn = int(input())\nprint(n - 1, 1)\n```"
    python_checker = "def check(input, output, expected):\n    a, b = map(int, output.split())\n    return a + b == int(input)\n"
    cpp_checker = (
        "#include <cstdio>\nint main(int argc, char** argv) {\n"
        "  FILE* in = std::fopen(argv[1], \"r\"); FILE* out = std::fopen(argv[2], \"r\");\n"
        "  long long n, a, b; if (std::fscanf(in, \"%lld\", &n) != 1) return 3;\n"
        "  if (std::fscanf(out, \"%lld %lld\", &a, &b) != 2) return 1;\n"
        "  return a + b == n ? 0 : 1;\n}\n"
    )
    exact = {"inputs": ["5\n"], "outputs": ["0 5\n"]}
    by_python = dict(exact, checker=python_checker)
    by_cpp = dict(exact, checker_cpp=cpp_checker)
    broken = dict(exact, checker="def check(input, output, expected):\n    return 2.0\n")
    for truth in (by_python, json.dumps(by_python), by_cpp, {"style": "rule", "ground_truth": json.dumps(by_cpp)}):
        assert compute_score("code", honest, truth)["score"] == 1.0, truth
    assert compute_score("code", honest, exact)["score"] == 0.0
    failed = compute_score("code", honest, broken)
    assert failed["score"] == 0.0 and failed["unscored"] == 1.0 and failed["checker_error"] == 1.0, failed
    assert code_reward(prompts=["p"] * 3, completions=[honest] * 3, label=[by_python, by_cpp, broken]) == [1.0, 1.0, None]
    answer = reward_func([honest] * 2, [""] * 2, [json.dumps(by_cpp), json.dumps(broken)])
    assert list(map(float, answer["rewards"])) == [1.0, 0.0]
    assert list(map(float, answer["extra_logs"]["checker_error"])) == [0.0, 1.0]
    assert list(map(float, answer["extra_logs"]["unscored"])) == [0.0, 1.0]
