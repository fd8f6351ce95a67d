"""Issues 16 and 26, packaging: the platform wheel (scripts/build-wheel, maturin
`bindings = "bin"`, linked by zig for manylinux2014) installed into a fresh venv on a PATH
without cargo, rustc or zig gives a working `rlvr` (doctor, a scored job), `python -m rlvr`,
`rlvr.start_server()` and the adapters; its binary needs no GLIBC symbol newer than 2.17 and
is stripped; the README's install lines are the ones run. The wheel is built in the debug
profile (RLVR_WHEEL_PROFILE=dev; the release recipe builds the same way with --release):
about 2 minutes here, as zig links it for its own target directory."""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib

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
    # The shell's tools and nothing else (this machine has a Debian cargo and rustc in /usr/bin).
    tools = home / "tools"
    tools.mkdir()
    for tool in ("bash", "sh", "env", "cat", "ls", "id", "uname", "mkdir", "rm"):
        (tools / tool).symlink_to(shutil.which(tool))
    environment.update(PATH=f"{venv / 'bin'}:{tools}", VIRTUAL_ENV=str(venv), PIP_NO_INDEX="1")
    for toolchain in ("cargo", "rustc", "zig"):
        assert shutil.which(toolchain, path=environment["PATH"]) is None, toolchain
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
    assert name == "rlvr-0.1.0-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", name
    members = zipfile.ZipFile(installed["wheel"]).namelist()
    assert "rlvr-0.1.0.data/scripts/rlvr" in members
    assert {"rlvr/__init__.py", "rlvr/verl.py", "rlvr/trl.py", "rlvr/ground_truth.py", "rlvr/__main__.py"} <= set(members)
    assert not any("tests/" in member for member in members)


def glibc_versions(path):
    """The GLIBC_x.y versions the ELF file at `path` requires (its .gnu.version_r entries)."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.gnuversions import GNUVerNeedSection

    with open(path, "rb") as file:
        elf = ELFFile(file)
        needed = set()
        for section in elf.iter_sections():
            if isinstance(section, GNUVerNeedSection):
                for _library, auxiliaries in section.iter_versions():
                    needed.update(aux.name for aux in auxiliaries)
        sections = {section.name for section in elf.iter_sections()}
    versions = sorted(tuple(int(part) for part in name[len("GLIBC_"):].split(".")) for name in needed
                      if re.fullmatch(r"GLIBC_\d+(\.\d+)*", name))
    return versions, sections


def test_issue26_installed_binary_needs_glibc_2_17_at_most_and_is_stripped(installed):
    binary = installed["venv"] / "bin" / "rlvr"
    versions, sections = glibc_versions(binary)
    assert versions, "the binary links glibc dynamically"
    assert max(versions) <= (2, 17), f"needs GLIBC_{'.'.join(map(str, max(versions)))}: the wheel would not install on glibc 2.17"
    assert not {".symtab", ".debug_info", ".debug_line"} & sections, "stripped"
    # The checker itself: this machine's own interpreter needs a newer glibc than 2.17.
    host_versions, _ = glibc_versions(os.path.realpath(sys.executable))
    assert max(host_versions) > (2, 17), host_versions
    assert run(installed, str(binary), "--version").stdout.startswith("rlvr 0.1.0")


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
    assert root["tool"]["maturin"]["strip"] is True, "`pip install .` strips the binary too"
