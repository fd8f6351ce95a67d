"""Issue 16, packaging: the platform wheel (scripts/build-wheel, maturin `bindings = "bin"`)
installed into a fresh venv on a PATH without cargo gives a working `rlvr` (doctor, a scored
job), `python -m rlvr`, `rlvr.start_server()` and the adapters; the README's install lines are
the ones run. The wheel reuses the debug binary the test build made (RLVR_WHEEL_PROFILE=dev):
no second compile."""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import DOUBLING, PYTHON_DIRECTORY, RIGHT
from readme import snippet

REPOSITORY = PYTHON_DIRECTORY.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The README's two install blocks: build (with Rust), then install where there is none."""
    home = tmp_path_factory.mktemp("wheel")
    wheels = home / "target" / "wheels"
    build = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", snippet("scripts/build-wheel")],
        cwd=REPOSITORY, capture_output=True, text=True, timeout=1200,
        env=dict(os.environ, RLVR_WHEEL_PROFILE="dev", RLVR_WHEEL_DIR=str(wheels)),
    )
    assert build.returncode == 0, build.stderr[-3000:]
    [wheel] = list(wheels.glob("rlvr-*.whl"))
    venv = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    # A user's shell: the venv first, then the system; no cargo, no RLVR_BIN, no checkout.
    environment = {key: value for key, value in os.environ.items() if key not in ("RLVR_BIN", "PYTHONPATH", "RLVR_URL")}
    environment.update(PATH=f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", VIRTUAL_ENV=str(venv), PIP_NO_INDEX="1")
    assert shutil.which("cargo", path=environment["PATH"]) is None
    install = subprocess.run(["bash", "-euo", "pipefail", "-c", snippet("pip install target/wheels/")],
                             cwd=home, env=environment, capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stdout + install.stderr
    return {"home": home, "venv": venv, "wheel": wheel, "environment": environment, "doctor": install.stdout}


def run(installed, *arguments, **options):
    return subprocess.run(list(arguments), cwd=installed["home"], env=installed["environment"],
                          capture_output=True, text=True, timeout=300, **options)


def test_issue16_wheel_is_a_platform_wheel_carrying_the_binary_and_the_package(installed):
    import zipfile

    name = installed["wheel"].name
    assert re.fullmatch(r"rlvr-0\.1\.0-py3-none-manylinux_\d+_\d+_x86_64\.whl", name), name
    members = zipfile.ZipFile(installed["wheel"]).namelist()
    assert "rlvr-0.1.0.data/scripts/rlvr" in members
    assert {"rlvr/__init__.py", "rlvr/verl.py", "rlvr/trl.py", "rlvr/ground_truth.py", "rlvr/__main__.py"} <= set(members)
    assert not any("tests/" in member for member in members)


def test_issue16_bundled_rlvr_is_on_path_and_doctor_passes(installed):
    venv_binary = installed["venv"] / "bin" / "rlvr"
    assert venv_binary.is_file()
    assert "sandbox" in installed["doctor"].lower(), installed["doctor"]
    doctor = run(installed, "rlvr", "doctor", "--json")
    assert doctor.returncode == 0, doctor.stderr
    assert json.loads(doctor.stdout)
    module = run(installed, "python", "-m", "rlvr", "--version")
    assert module.returncode == 0 and module.stdout.startswith("rlvr "), module


def test_issue16_wheel_scores_a_job_through_start_server_and_the_adapters(installed):
    probe = f"""
import json, os, rlvr
from rlvr.verl import compute_score
assert rlvr.find_binary() == os.path.join(os.environ["VIRTUAL_ENV"], "bin", "rlvr"), rlvr.find_binary()
assert rlvr.__file__.startswith(os.environ["VIRTUAL_ENV"]), rlvr.__file__
server = rlvr.start_server(workers=1)
with rlvr.Client(server.url) as client:
    first = client.verify([{{"response": {RIGHT!r}, "ground_truth": {DOUBLING!r}}}])[0]["score"]
os.environ["RLVR_URL"] = server.url
second = compute_score("coder1_longcot", {RIGHT!r}, json.dumps({DOUBLING!r}))["score"]
server.stop()
print(first, second)
"""
    result = run(installed, "python", "-c", probe)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["1.0", "1.0"]


def test_issue16_pure_client_stays_importable_without_the_binary(tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                    "--target", str(target), str(PYTHON_DIRECTORY)], check=True, cwd=tmp_path, timeout=300)
    environment = {key: value for key, value in os.environ.items() if key != "RLVR_BIN"}
    environment.update(PYTHONPATH=str(target), PATH="/usr/bin:/bin")
    probe = "import rlvr, rlvr.verl, rlvr.trl, rlvr.openrlhf\ntry:\n    rlvr.find_binary()\nexcept FileNotFoundError as error:\n    print(error)"
    result = subprocess.run([sys.executable, "-c", probe], env=environment, cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "install the platform wheel" in result.stdout
    missing = subprocess.run([sys.executable, "-m", "rlvr", "doctor"], env=environment, cwd=tmp_path, capture_output=True, text=True)
    assert missing.returncode == 2 and "cannot find the rlvr binary" in missing.stderr


def test_issue16_versions_agree():
    root = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())
    pure = tomllib.loads((PYTHON_DIRECTORY / "pyproject.toml").read_text())
    cargo = tomllib.loads((REPOSITORY / "Cargo.toml").read_text())
    import rlvr

    versions = {root["project"]["version"], pure["project"]["version"], cargo["workspace"]["package"]["version"], rlvr.__version__}
    assert len(versions) == 1, versions
    assert root["project"]["name"] == pure["project"]["name"] == "rlvr"
    assert root["tool"]["maturin"]["bindings"] == "bin"
