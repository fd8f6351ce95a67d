"""Issue 33: `tests_of` finds a dataset row's tests where the Rust rule does
(`rlvr_dataset::ground_truth_of_row`, used by `rlvr verify --dataset` and `rlvr serve
--dataset`): both read the same table of cases, so the two cannot drift apart."""

import json
from pathlib import Path

import pytest

from rlvr.ground_truth import GroundTruthError
from rlvr.ground_truth import tests_of as find_tests

TABLE = Path(__file__).resolve().parents[2] / "crates/rlvr-dataset/tests/fixtures/ground_truth_of_rows.json"
CASES = json.loads(TABLE.read_text())["cases"]


def test_issue33_the_table_has_its_cases():
    assert len(CASES) >= 10
    assert any(case["tests"] is None for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_issue33_a_rows_tests_are_where_the_shared_table_says(case):
    if case["tests"] is None:
        with pytest.raises(GroundTruthError):
            find_tests(case["row"])
        return
    found = find_tests(case["row"])
    if isinstance(found, str):
        found = json.loads(found)
    assert found == case["tests"]


@pytest.mark.parametrize("case", [case for case in CASES if case["tests"] is not None][:3])
def test_issue33_the_row_as_json_text_finds_the_same_tests(case):
    found = find_tests(json.dumps(case["row"]))
    if isinstance(found, str):
        found = json.loads(found)
    assert found == case["tests"]
