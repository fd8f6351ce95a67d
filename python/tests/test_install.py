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


def test_the_client_only_wheel_uses_a_remote_server_and_says_what_local_verification_needs(tmp_path, url):
    """Issue 34: `pip wheel ./python` is the pure-Python client (py3-none-any, no binary), what
    `pip install rlvr` gives where the platform wheel cannot run (macOS, Windows)."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps", "-w", str(tmp_path / "wheels"),
                    str(PYTHON_DIRECTORY)], check=True, cwd=tmp_path)
    [wheel] = (tmp_path / "wheels").glob("rlvr-*.whl")
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, cwd=tmp_path)
    environment = {key: value for key, value in os.environ.items() if key not in ("RLVR_BIN", "RLVR_URL")}
    environment.update(PYTHONPATH=str(target), PATH="/usr/bin:/bin")
    local = subprocess.run([sys.executable, "-c", "import rlvr; rlvr.Client()"], env=environment, cwd=tmp_path, capture_output=True, text=True)
    assert local.returncode != 0
    assert "set RLVR_URL=http://HOST:PORT" in local.stderr and "install the platform wheel" in local.stderr, local.stderr
    probe = (
        "import rlvr.verl\n"
        "print(rlvr.verl.compute_score('x', '```python\\nprint(int(input()) * 2)\\n```', {'inputs': ['2\\n'], 'outputs': ['4\\n']})['score'])\n"
    )
    remote = subprocess.run([sys.executable, "-c", probe], env=dict(environment, RLVR_URL=url), cwd=tmp_path, capture_output=True, text=True)
    assert remote.returncode == 0 and remote.stdout.split() == ["1.0"], remote.stderr
