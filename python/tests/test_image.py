"""Issue 16, the image: the Dockerfile's steps call the scripts CI runs (scripts/build-wheel,
scripts/install-sandbox-python), copy only files that exist and are not docker-ignored, and
build the image deploy/k8s runs. No container engine is needed: what the steps do is what
test_wheel.py and scripts/setup do for real."""

import fnmatch
import re
import subprocess
import sys
from pathlib import Path

import yaml

from readme import README

REPOSITORY = Path(__file__).resolve().parents[2]


def stages():
    """{stage name: [instruction lines]} with continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", (REPOSITORY / "Dockerfile").read_text())
    found, current = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.match(r"FROM \S+ AS (\w+)$", line)
        if match:
            current = match.group(1)
            found[current] = []
        else:
            assert current, f"instruction before FROM: {line}"
            found[current].append(line)
    return found


def test_issue16_dockerfile_is_multi_stage_and_runs_the_ci_scripts():
    build, runtime = stages()["build"], stages()["runtime"]
    assert list(stages()) == ["build", "runtime"], "runtime is the final image"
    assert any(line.startswith("RUN ") and "scripts/build-wheel" in line for line in build)
    assert any(line.startswith("RUN ") and "scripts/install-sandbox-python /usr/local/bin/python3" in line for line in runtime)
    assert any(line.startswith("RUN ") and "pip install" in line and "rlvr-*.whl" in line for line in runtime)
    assert "ENV RLVR_PYTHON=/usr/local/bin/python3" in runtime
    assert 'ENTRYPOINT ["rlvr"]' in runtime
    setup = (REPOSITORY / "scripts" / "setup").read_text()
    assert 'scripts/install-sandbox-python "$python"' in setup, "CI installs the sandbox packages with the same script"


def test_issue16_every_copied_file_exists_and_is_not_docker_ignored():
    ignored = [line.strip().rstrip("/") for line in (REPOSITORY / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    assert "target" in ignored, "the build context stays small"
    for stage in stages().values():
        for line in stage:
            if not line.startswith("COPY ") or "--from=" in line:
                continue
            *sources, _destination = line.split()[1:]
            for source in sources:
                if source == ".":
                    continue
                assert (REPOSITORY / source).exists(), source
                assert not any(fnmatch.fnmatch(source, pattern) or source.startswith(pattern + "/") for pattern in ignored), source
    for needed in ["scripts/build-wheel", "scripts/python-path", "pyproject.toml", "Cargo.lock", "python/requirements-build.txt"]:
        assert not any(needed.startswith(pattern + "/") for pattern in ignored), needed


def test_issue16_sandbox_install_script_is_idempotent_and_checks_what_it_installed():
    first = subprocess.run([str(REPOSITORY / "scripts" / "install-sandbox-python")], capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    requirements = [line.split("#")[0].strip() for line in (REPOSITORY / "deploy" / "sandbox-requirements.txt").read_text().splitlines()]
    assert {"numpy", "pandas"} <= set(requirements)
    missing = subprocess.run([sys.executable, str(REPOSITORY / "python" / "check_requirements.py"), "/dev/stdin"],
                             input="no-such-distribution-rlvr-test\n", capture_output=True, text=True)
    assert missing.returncode == 1 and "no-such-distribution-rlvr-test" in missing.stdout


def test_issue16_k8s_runs_the_image_the_readme_builds():
    deployment = yaml.safe_load((REPOSITORY / "deploy" / "k8s" / "deployment.yaml").read_text())
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    tags = re.findall(r"docker build -t (\S+) \.", README.read_text())
    assert tags and set(tags) == {container["image"]}, (tags, container["image"])
    dockerfile = (REPOSITORY / "Dockerfile").read_text()
    assert f"docker build -t {container['image']} ." in dockerfile
    env = {item["name"]: item["value"] for item in container["env"]}
    assert env["RLVR_PYTHON"] == "/usr/local/bin/python3"
