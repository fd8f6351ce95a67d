"""Issue 26: `scripts/demo` installs only what the demo runs. As root (as CI runs it), with a
fresh venv as the interpreter (RLVR_PYTHON) and the binary under test (RLVR_BIN: no Rust
build), the demo runs to the end, scores every example job with both profiles, and leaves the
venv with numpy, pandas and their dependencies only: no torch, TRL, verl, Ray or the test
suite's packages (the test command installs those, in scripts/setup). Cost: ~25 s (numpy and
pandas from pip's cache). The same demo from an empty pip cache and a fresh HOME took 23 s
here beyond the Rust build (README, "Commands")."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
ALLOWED = {"pip", "setuptools", "numpy", "pandas", "python-dateutil", "six", "pytz", "tzdata"}


def test_issue26_demo_installs_only_what_it_runs(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("run as root, as CI does: as an ordinary user the demo installs nothing")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    environment = dict(os.environ, RLVR_PYTHON=str(venv / "bin" / "python"), RLVR_DEMO_DIR=str(tmp_path / "sample"))
    completed = subprocess.run([str(REPOSITORY / "scripts" / "demo")], env=environment, capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    results = [json.loads(line) for line in completed.stdout.splitlines() if line.startswith('{"id"')]
    assert len(results) == 12 and {result["profile"] for result in results} == {"judge", "klear"}
    assert not any(result["status"] == "sandbox_error" for result in results), "numpy and pandas import in the sandbox"
    listing = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"], capture_output=True, text=True, check=True)
    installed = {package["name"].lower() for package in json.loads(listing.stdout)}
    assert {"numpy", "pandas"} <= installed
    assert installed <= ALLOWED, f"the demo installed more than it runs: {sorted(installed - ALLOWED)}"
