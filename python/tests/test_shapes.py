"""Issue 16, "dataset shapes trainers really pass": the release's rows as `datasets`, pyarrow,
pandas and verl hand them over (structs with null for absent keys, numpy arrays and scalars,
`label` / `ground_truth` / `metadata.ground_truth` columns) score the same in every adapter."""

import json

import numpy as np
import pytest

from rlvr.ground_truth import GroundTruthError, plain
from rlvr.ground_truth import tests_of as find_tests
from conftest import RELEASE_ROWS, WRONG, right_answer


@pytest.fixture(autouse=True)
def shared_server(url, monkeypatch):
    monkeypatch.setenv("RLVR_URL", url)
    import rlvr.client

    rlvr.client._default_client = None
    yield
    rlvr.client._default_client = None


def _struct_rows():
    """Through pyarrow's JSON reader (and `Dataset.from_list`, datasets < 5's `load_dataset`):
    one struct type for all rows, None where a row has no key."""
    import datasets
    import pyarrow.json

    return datasets.Dataset(pyarrow.json.read_json(RELEASE_ROWS))


def _json_feature_rows():
    """datasets 5's `load_dataset("json")`: mixed objects become a `Json` feature."""
    import datasets

    return datasets.load_dataset("json", data_files=str(RELEASE_ROWS), split="train")


@pytest.fixture(scope="module", params=[_struct_rows, _json_feature_rows], ids=["arrow-structs", "json-feature"])
def dataset(request):
    return request.param()


def test_issue16_datasets_gives_null_for_absent_keys():
    labels = _struct_rows()["label"]
    assert set(labels[0]) == {"inputs", "outputs", "functional"}
    assert labels[0]["functional"] is None and labels[1]["inputs"] is None


def test_issue16_every_adapter_scores_the_label_column_with_null_keys(dataset):
    from rlvr.openrlhf import reward_func
    from rlvr.trl import code_reward
    from rlvr.verl import compute_score

    rows = list(dataset)
    completions = [right_answer(row) for row in rows] + [WRONG] * len(rows)
    columns = {name: list(dataset[name]) * 2 for name in dataset.column_names if name != "prompt"}
    assert code_reward(prompts=[row["prompt"] for row in rows] * 2, completions=completions, **columns) == [1.0] * 4 + [0.0] * 4
    for row in rows:
        assert compute_score("coder1_longcot", right_answer(row), row["label"])["score"] == 1.0
        assert compute_score("coder1_longcot", right_answer(row), row)["score"] == 1.0, "a whole row"
    answer = reward_func([right_answer(row) for row in rows], [""] * 4, [row["metadata"] for row in rows])
    rewards = answer["rewards"].tolist() if hasattr(answer["rewards"], "tolist") else answer["rewards"]
    assert rewards == [1.0] * 4


@pytest.mark.parametrize("column", ["label", "ground_truth", "metadata", "reward_model"])
def test_issue16_trl_finds_the_ground_truth_in_each_documented_column(dataset, column):
    from rlvr.trl import code_reward

    rows = list(dataset)
    values = {
        "label": [row["label"] for row in rows],
        "ground_truth": [json.dumps(plain(row["label"])) for row in rows],
        "metadata": [row["metadata"] for row in rows],
        "reward_model": [{"style": "rule", "ground_truth": json.dumps(plain(row["label"]))} for row in rows],
    }[column]
    rewards = code_reward(prompts=[""] * 4, completions=[right_answer(row) for row in rows], **{column: values, "source": ["x"] * 4})
    assert rewards == [1.0] * 4


def test_issue16_trl_names_the_columns_it_looked_for():
    from rlvr.trl import code_reward

    with pytest.raises(KeyError, match="ground_truth, label, metadata, reward_model"):
        code_reward(prompts=["p"], completions=[WRONG], tests=[{"inputs": ["1"], "outputs": ["1"]}])


def test_issue16_pandas_rows_hold_numpy_arrays_and_still_score(dataset):
    from rlvr.verl import compute_score

    frame = dataset.to_pandas()
    label = frame.iloc[0]["label"]
    if isinstance(dataset.features["label"], dict):
        assert isinstance(label["inputs"], np.ndarray), "pandas gives numpy arrays"
    results = compute_score(
        data_sources=list(frame["metadata"].map(lambda metadata: metadata["data_source"])),
        solution_strs=[right_answer(row) for row in dataset],
        ground_truths=list(frame["label"]),
        extra_infos=[None] * len(frame),
    )
    assert [result["score"] for result in results] == [1.0] * 4


def test_issue16_verl_non_tensor_batch_object_arrays_and_numpy_scalars():
    from rlvr.verl import compute_score, compute_score_float

    # verl keeps reward_model in an object ndarray; a pandas-built batch has numpy values inside.
    reward_models = np.array(
        [
            {"style": "rule", "ground_truth": {"inputs": np.array(["2\n", "5\n"], dtype=object), "outputs": np.array(["4\n", "10\n"]), "functional": None}},
            {"style": "rule", "ground_truth": {"functional": np.array(["assert double(3) == 6"]), "inputs": np.nan, "outputs": None}},
        ],
        dtype=object,
    )
    truths = [item["ground_truth"] for item in reward_models]
    right = [right_answer({"metadata": {"hash": "0b0a1f6c2a3e4d5f60718293a4b5c6d7"}}), right_answer({"metadata": {"hash": "1c1b2a3f4e5d6c7b8a9f0e1d2c3b4a59"}})]
    results = compute_score(data_sources=np.array(["a", "b"], dtype=object), solution_strs=right, ground_truths=truths, extra_infos=[{"index": np.int64(0)}, None])
    assert [result["score"] for result in results] == [1.0, 1.0]
    assert compute_score_float("code", right[0], {"inputs": ["7\n"], "outputs": [np.str_("14\n")], "timeout": np.float64(5.0)}) == 1.0


def test_issue16_null_keys_in_a_json_string_are_absent_keys():
    text = '{"inputs": ["2\\n"], "outputs": ["4\\n"], "functional": null}'
    assert find_tests(text) == {"inputs": ["2\n"], "outputs": ["4\n"]}
    untouched = '{"inputs": ["2\\n"], "outputs": ["4\\n"]}'
    assert find_tests(untouched) is untouched, "a string that needs nothing is passed on as it is"


def test_issue16_assert_case_and_wrappers_as_json_text():
    assert find_tests('{"assert_case": ["assert f(1) == 1"]}') == {"functional": ["assert f(1) == 1"]}
    wrapped = json.dumps({"style": "rule", "ground_truth": json.dumps({"functional": ["assert 1"]})})
    assert find_tests(wrapped) == '{"functional": ["assert 1"]}'
    record = {"prompt": [], "label": None, "metadata": {"ground_truth": {"inputs": ["1"], "outputs": ["1"]}}}
    assert find_tests(record) == {"inputs": ["1"], "outputs": ["1"]}


def test_issue16_no_tests_is_an_invalid_job_result_not_an_exception(client):
    with pytest.raises(GroundTruthError, match=r"keys \['style'\]"):
        find_tests({"style": "rule"})
    with pytest.raises(GroundTruthError):
        find_tests("assert f(1) == 2")
    result = client.verify([{"response": WRONG, "ground_truth": {"style": "rule"}}])[0]
    assert result["status"] == "invalid_job" and result["score"] is None


def test_issue16_plain_converts_every_numpy_and_missing_value():
    import pandas

    value = {"a": np.array([[1, 2], [3, 4]]), "b": np.float32(0.5), "c": pandas.NA, "d": (np.bool_(True), b"x"), "e": float("nan")}
    assert plain(value) == {"a": [[1, 2], [3, 4]], "b": 0.5, "d": [True, "x"]}
    assert json.dumps(plain(value))
