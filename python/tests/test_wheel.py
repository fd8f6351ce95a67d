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
    assert name == f"rlvr-{cargo_version()}-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", name
    members = zipfile.ZipFile(installed["wheel"]).namelist()
    assert f"rlvr-{cargo_version()}.data/scripts/rlvr" in members
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
    assert run(installed, str(binary), "--version").stdout.startswith(f"rlvr {cargo_version()}")


def test_issue34_release_check_passes_the_built_wheel_and_refuses_wrong_ones(installed, tmp_path):
    """scripts/check-wheel, the release workflow's check of each wheel, on the wheel built
    here: its binary is extracted by the path derived from Cargo's version and passes; the
    same wheel named for the other architecture, or for another version, is refused."""
    script = str(REPOSITORY / "scripts" / "check-wheel")
    wheel = installed["wheel"]
    checked = subprocess.run([sys.executable, script, str(wheel), "x86_64-unknown-linux-gnu", str(tmp_path / "unpacked")],
                             capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stderr
    binary = checked.stdout.strip()
    assert binary == str(tmp_path / "unpacked" / f"rlvr-{cargo_version()}.data" / "scripts" / "rlvr")
    assert run(installed, binary, "--version").stdout.split() == ["rlvr", cargo_version()]
    wrong_architecture = subprocess.run([sys.executable, script, str(wheel), "aarch64-unknown-linux-gnu", str(tmp_path / "a")],
                                        capture_output=True, text=True, timeout=300)
    assert wrong_architecture.returncode == 1 and "not a manylinux_2_17 aarch64 wheel" in wrong_architecture.stderr
    renamed = tmp_path / wheel.name.replace(f"rlvr-{cargo_version()}-", "rlvr-9.9.9-")
    shutil.copy(wheel, renamed)
    wrong_version = subprocess.run([sys.executable, script, str(renamed), "x86_64-unknown-linux-gnu", str(tmp_path / "b")],
                                   capture_output=True, text=True, timeout=300)
    assert wrong_version.returncode == 1 and f"is not version {cargo_version()}" in wrong_version.stderr


def test_issue34_cluster_page_install_lines_run(installed, tmp_path):
    """docs/cluster.md's first block as an operator runs it on a machine: the wheel by its file
    name (the one built here: the page names this version's wheel) with Ray's extra, into the
    environment Ray runs in (a venv over this interpreter's packages, which hold
    `ray[default]`, so no index is needed), then `python -m rlvr doctor`, which must pass."""
    text = snippet("python -m rlvr doctor", REPOSITORY / "docs" / "cluster.md")
    named = re.search(r"rlvr-\S+\.whl", text).group(0)
    assert named == installed["wheel"].name, "the page names the wheel this version builds"
    shutil.copy(installed["wheel"], tmp_path / named)
    venv = tmp_path / "ray-venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    environment = dict(installed["environment"], PATH=f"{venv / 'bin'}:{installed['home'] / 'tools'}", VIRTUAL_ENV=str(venv))
    completed = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=tmp_path, env=environment,
                               capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert (venv / "bin" / "rlvr").is_file(), "the wheel's binary, in the environment Ray runs in"


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
    """Issue 34: one version, Cargo's workspace version. maturin reads it for the platform
    wheel (`dynamic = ["version"]`); the pure client's build reads `rlvr.__version__`, the one
    other place it is written, checked here; the binary, the wheel, the docs' wheel and image
    names and the release workflow (scripts/release-version) all derive from or are checked
    against it."""
    root = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())
    pure = tomllib.loads((PYTHON_DIRECTORY / "pyproject.toml").read_text())
    version = cargo_version()
    import rlvr

    assert "version" not in root["project"] and root["project"]["dynamic"] == ["version"], "maturin takes Cargo's"
    assert "version" not in pure["project"] and pure["project"]["dynamic"] == ["version"]
    assert pure["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "rlvr.__version__"}
    assert rlvr.__version__ == version, f"python/rlvr/__init__.py says {rlvr.__version__}, Cargo.toml {version}"
    assert root["project"]["name"] == pure["project"]["name"] == "rlvr"
    assert root["project"]["license"] == pure["project"]["license"] == "Apache-2.0", "SPDX expressions (PEP 639)"
    binary = subprocess.run([os.environ["RLVR_BIN"], "--version"], capture_output=True, text=True, check=True).stdout
    assert binary.split() == ["rlvr", version], binary
    printed = subprocess.run([str(REPOSITORY / "scripts" / "release-version")], capture_output=True, text=True, check=True)
    assert printed.stdout == version + "\n"


def cargo_version():
    return tomllib.loads((REPOSITORY / "Cargo.toml").read_text())["workspace"]["package"]["version"]


def test_issue34_release_version_script_refuses_a_tag_of_another_version():
    script = str(REPOSITORY / "scripts" / "release-version")
    version = cargo_version()
    assert subprocess.run([script, f"v{version}"], capture_output=True, text=True).returncode == 0
    for tag in (f"v{version}.1", version, "v0.0.0-other"):
        refused = subprocess.run([script, tag], capture_output=True, text=True)
        assert refused.returncode == 1 and version in refused.stderr and tag in refused.stderr, (tag, refused.stderr)


def test_issue34_docs_name_the_current_version():
    """Wheel file names and image tags written in the docs, the manifests and the Dockerfile
    name Cargo's version: a version bump that leaves one behind fails here, naming it."""
    version = cargo_version()
    places = [REPOSITORY / "README.md", REPOSITORY / "Dockerfile", PYTHON_DIRECTORY / "README.md",
              REPOSITORY / ".github" / "workflows" / "release.yml",
              *sorted((REPOSITORY / "docs").glob("*.md")), *sorted((REPOSITORY / "deploy").rglob("*.yaml"))]
    found = 0
    for place in places:
        for match in re.finditer(r"\brlvr[-:](\d+\.\d+\.\d+)\b", place.read_text()):
            found += 1
            assert match.group(1) == version, f"{place.relative_to(REPOSITORY)} names {match.group(0)}; Cargo.toml's version is {version}"
    assert found >= 3, "the wheel's name in docs/cluster.md, the image's in the Dockerfile and deploy/k8s"


def test_issue34_build_tools_are_pinned_and_agree():
    pins = {}
    for line in (PYTHON_DIRECTORY / "requirements-build.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, separator, version = line.partition("==")
            assert separator and re.fullmatch(r"[\w.]+", version), f"pin an exact version: {line}"
            pins[name] = version
    assert {"maturin", "ziglang", "pyelftools", "build"} <= set(pins), pins
    root = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())
    assert root["build-system"]["requires"] == [f"maturin=={pins['maturin']}"]
    pure = tomllib.loads((PYTHON_DIRECTORY / "pyproject.toml").read_text())
    assert [re.fullmatch(r"setuptools==[\w.]+", requirement) is not None for requirement in pure["build-system"]["requires"]] == [True]
    # scripts/build-wheel installs them when one is at another version, not only when missing.
    stale = subprocess.run([sys.executable, str(PYTHON_DIRECTORY / "check_requirements.py"), "/dev/stdin"],
                           input="pyyaml\nmaturin==0.0.1\n", capture_output=True, text=True)
    assert stale.returncode == 1 and "maturin" in stale.stdout and "0.0.1 pinned" in stale.stdout, stale.stdout
    assert root["tool"]["maturin"]["bindings"] == "bin"
    assert root["tool"]["maturin"]["strip"] is True, "`pip install .` strips the binary too"
