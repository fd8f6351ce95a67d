"""Issue 7: every Parquet layout loads in pyarrow and in `datasets` (the installed 4.x and a 3.x
in a cached venv), and every row equals the source JSONL. Needs RLVR_BIN (a built rlvr)."""

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest

RLVR = os.environ.get("RLVR_BIN", "rlvr")
REPO = Path(__file__).resolve().parents[2]


def list_text(value):
    """The documented rule for list-valued test values."""
    if isinstance(value, str):
        return value
    return "\n".join(item if isinstance(item, str) else json.dumps(item) for item in value)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    directory = tmp_path_factory.mktemp("export")
    source = directory / "source.jsonl"
    subprocess.run([RLVR, "synth", str(source), "--rows", "400", "--seed", "4", "--avg-record-bytes", "5000"], check=True)
    for layout in ("hf", "verl"):
        subprocess.run([RLVR, "export", "parquet", str(source), str(directory / layout), "--layout", layout,
                        "--shard-size", "100KB", "--row-group-rows", "50"], check=True, stdout=subprocess.DEVNULL)
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    return directory, records


def check_hf_row(row, index, record):
    tests = record["metadata"]["ground_truth"]
    assert row["row"] == index
    assert row["prompt"] == record["prompt"]
    assert json.loads(row["ground_truth"]) == tests
    assert row["hash"] == record["metadata"]["hash"]
    if "functional" in tests:
        assert row["test_kind"] == "functional"
        assert row["functional"] == tests["functional"]
        assert row["inputs"] == [] and row["outputs"] == []
    else:
        assert row["test_kind"] == "io"
        assert row["inputs"] == [list_text(value) for value in tests["inputs"]]
        assert row["outputs"] == [list_text(value) for value in tests["outputs"]]
        mixed = any(not isinstance(value, str) for value in tests["inputs"] + tests["outputs"])
        assert row["normalized_values"] == mixed


def check_verl_row(row, index, record):
    metadata = record["metadata"]
    assert row["data_source"] == metadata["data_source"]
    assert row["ability"] == metadata["ability"]
    assert row["prompt"] == record["prompt"]
    assert row["reward_model"]["style"] == metadata["style"]
    assert json.loads(row["reward_model"]["ground_truth"]) == metadata["ground_truth"]
    assert row["extra_info"]["index"] == index
    assert row["extra_info"]["hash"] == metadata["hash"]
    assert row["extra_info"]["split"] == "train"


CHECKS = {"hf": check_hf_row, "verl": check_verl_row}


@pytest.mark.parametrize("layout", ["hf", "verl"])
def test_pyarrow_reads_every_row(exported, layout):
    directory, records = exported
    files = sorted((directory / layout / "data").glob("*.parquet"))
    assert len(files) > 1
    for file in files:
        metadata = pq.ParquetFile(file).metadata
        assert all(metadata.row_group(i).num_rows <= 100 for i in range(metadata.num_row_groups))
        assert metadata.row_group(0).column(0).compression == "ZSTD"
    rows = pq.read_table(files).to_pylist()
    assert len(rows) == len(records)
    for index, (row, record) in enumerate(zip(rows, records)):
        CHECKS[layout](row, index, record)


@pytest.mark.parametrize("layout", ["hf", "verl"])
def test_datasets_loads_every_row(exported, layout):
    import datasets

    directory, records = exported
    files = sorted(str(path) for path in (directory / layout / "data").glob("*.parquet"))
    dataset = datasets.load_dataset("parquet", data_files=files, cache_dir=str(directory / "hf-cache"))["train"]
    assert len(dataset) == len(records)
    for index, (row, record) in enumerate(zip(dataset, records)):
        CHECKS[layout](row, index, record)
    # The export directory itself is a Hub dataset: its README's configs block finds the shards.
    by_directory = datasets.load_dataset(str(directory / layout), cache_dir=str(directory / "hf-cache-dir"))
    assert by_directory["train"].num_rows == len(records)


def datasets3_python():
    """The venv with datasets 3.x that scripts/setup makes (no package is installed by a test)."""
    python = REPO / "target" / "py-datasets3" / "bin" / "python"
    probe = [str(python), "-c", "import datasets, sys; sys.exit(0 if datasets.__version__.startswith('3.') else 1)"]
    assert python.exists() and subprocess.run(probe, capture_output=True).returncode == 0, \
        f"{python} with datasets 3.x is missing: run scripts/setup"
    return python


@pytest.mark.parametrize("layout", ["hf", "verl"])
def test_datasets_3_loads_every_row(exported, layout):
    python = datasets3_python()
    directory, records = exported
    script = textwrap.dedent(f"""
        import glob, json, datasets
        assert datasets.__version__.startswith("3."), datasets.__version__
        files = sorted(glob.glob({str(directory / layout / "data" / "*.parquet")!r}))
        dataset = datasets.load_dataset("parquet", data_files=files, cache_dir={str(directory / ("hf3-" + layout))!r})["train"]
        with open({str(directory / ("rows3-" + layout + ".jsonl"))!r}, "w") as out:
            for row in dataset:
                out.write(json.dumps(row) + "\\n")
    """)
    subprocess.run([str(python), "-c", script], check=True)
    rows = [json.loads(line) for line in (directory / f"rows3-{layout}.jsonl").read_text().splitlines()]
    assert len(rows) == len(records)
    for index, (row, record) in enumerate(zip(rows, records)):
        CHECKS[layout](row, index, record)
