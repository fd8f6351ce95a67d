"""`pip install ./python` works and the installed package finds the binary."""

import os
import subprocess
import sys
from pathlib import Path

PYTHON_DIRECTORY = Path(__file__).resolve().parents[1]


def test_pip_install_builds_and_imports(tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
         "--target", str(target), str(PYTHON_DIRECTORY)],
        check=True,
        cwd=tmp_path,
    )
    probe = "import rlvr, rlvr.verl, rlvr.trl, rlvr.openrlhf; print(rlvr.__file__); print(rlvr.find_binary())"
    output = subprocess.run(
        [sys.executable, "-c", probe],
        env=dict(os.environ, PYTHONPATH=str(target)),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert output[0].startswith(str(target))
    assert output[1] == os.environ["RLVR_BIN"]
