"""Issue 34: `rlvr serve --dataset FILE` holds the dataset; the client and every adapter can
send a row's name (`index` or `metadata.hash`) instead of its tests, and get the server's
reason when the row is unknown or no dataset is loaded."""

import json

import pytest

import rlvr
import rlvr.openrlhf
import rlvr.trl
import rlvr.verl
from conftest import RELEASE_ROWS, fenced, right_answer

ROWS = [json.loads(line) for line in RELEASE_ROWS.read_text().splitlines() if line.strip()]
WRONG = fenced("print(0)")


@pytest.fixture(scope="module")
def dataset_url():
    server = rlvr._local.LocalServer(workers=1, extra_arguments=["--dataset", str(RELEASE_ROWS)])
    yield server.url
    server.stop()


@pytest.fixture
def adapters_on(dataset_url, monkeypatch):
    """The adapters' shared client pointed at the dataset server."""
    monkeypatch.setenv("RLVR_URL", dataset_url)
    monkeypatch.setattr(rlvr.client, "_default_client", None)
    yield dataset_url
    rlvr.client._default_client.close()


def test_the_client_names_rows_by_index_hash_or_a_reference_ground_truth(dataset_url):
    with rlvr.Client(dataset_url) as client:
        jobs = []
        for index, row in enumerate(ROWS):
            jobs.append({"response": right_answer(row), "index": index})
            jobs.append({"response": right_answer(row), "hash": row["metadata"]["hash"]})
            jobs.append({"response": right_answer(row), "ground_truth": json.dumps({"hash": row["metadata"]["hash"]})})
            jobs.append({"response": WRONG, "ground_truth": {"index": index}})
        results = client.verify(jobs)
        assert [result["score"] for result in results] == [1.0, 1.0, 1.0, 0.0] * len(ROWS), results
        [unknown, past] = client.verify([{"response": WRONG, "hash": "no-such-hash"}, {"response": WRONG, "index": len(ROWS)}])
    assert unknown["status"] == "invalid_job" and unknown["score"] is None
    assert '`hash` "no-such-hash" is not the `metadata.hash` of any row of' in unknown["reason"], unknown
    assert f"`index` {len(ROWS)} is past the end of" in past["reason"], past


def test_a_server_without_a_dataset_says_so(url):
    with rlvr.Client(url) as client:
        [result] = client.verify([{"response": WRONG, "hash": ROWS[0]["metadata"]["hash"]}])
    assert result["status"] == "invalid_job"
    assert "`hash` needs a dataset: start rlvr serve with --dataset FILE" in result["reason"], result


def test_the_adapters_send_row_names(adapters_on):
    hashes = [row["metadata"]["hash"] for row in ROWS]
    right = [right_answer(row) for row in ROWS]
    # verl: the ground truth column holds the row's name.
    assert rlvr.verl.compute_score("coder1_longcot", right[0], {"hash": hashes[0]})["score"] == 1.0
    batch = rlvr.verl.compute_score(data_sources=[None] * 2, solution_strs=[right[1], WRONG], ground_truths=[{"index": 1}, {"index": 2}])
    assert [result["score"] for result in batch] == [1.0, 0.0]
    # TRL: the Parquet export's `hash` (or `row`) column.
    by_hash = rlvr.trl.make_reward_function(reference="hash")
    assert by_hash(prompts=[""] * 4, completions=right, hash=hashes) == [1.0] * 4
    by_index = rlvr.trl.make_reward_function(reference="index")
    assert by_index(prompts=[""] * 2, completions=[WRONG, right[3]], row=[0, 3]) == [0.0, 1.0]
    with pytest.raises(KeyError, match="reads the dataset column 'hash'"):
        by_hash(prompts=[""], completions=right[:1], label=[ROWS[0]["label"]])
    # OpenRLHF: labels that name rows.
    prompts = [row["prompt"][0]["content"] for row in ROWS]
    answer = rlvr.openrlhf.reward_func([prompt + text for prompt, text in zip(prompts, right)], prompts, [{"hash": value} for value in hashes])
    assert list(map(float, answer["rewards"])) == [1.0] * 4
