"""Shared fixtures: the package from this checkout, the `rlvr` binary from RLVR_BIN (the
Rust test that runs this suite sets it), and one local server for the session."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

PYTHON_DIRECTORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PYTHON_DIRECTORY))

import rlvr  # noqa: E402


def pytest_configure(config):
    # Sandbox uids of this suite's own (other suites run sandboxes at the same time).
    os.environ.setdefault("RLVR_SANDBOX_UID", "61600")
    if not os.environ.get("RLVR_BIN"):
        raise pytest.UsageError("set RLVR_BIN to the built rlvr binary (cargo nextest does)")


SERVER_LOG = {"path": None}
"""The session server's log file, shown with every failing test's report."""


@pytest.fixture(scope="session")
def client(tmp_path_factory):
    SERVER_LOG["path"] = tmp_path_factory.mktemp("serve") / "serve.log"
    with rlvr.Client(None, workers=2, server_log=str(SERVER_LOG["path"])) as client:
        yield client


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test's report ends with the session server's log (its warnings say why a
    sandbox failed, for one)."""
    outcome = yield
    report = outcome.get_result()
    path = SERVER_LOG["path"]
    if report.failed and path is not None and path.exists():
        report.sections.append(("rlvr serve log (last 4000 characters)", path.read_text(errors="replace")[-4000:]))


@pytest.fixture(scope="session")
def url(client):
    return client.urls[0]


@pytest.fixture
def serve():
    """Starts extra servers with given flags; stops them after the test."""
    started = []

    def start(*arguments):
        server = rlvr._local.LocalServer(workers=1, extra_arguments=arguments)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def fenced(code: str) -> str:
    return f"<think>\nplan\n</think>\n```python\n{code}\n```"


DOUBLING = {"inputs": ["2\n", "5\n"], "outputs": ["4\n", "10\n"]}
RIGHT = fenced("print(int(input()) * 2)")
WRONG = fenced("print(0)")


def verify_requests(client):
    """`/v1/verify` requests the session server has answered so far (its Prometheus counter)."""
    total = 0.0
    for line in client.metrics().splitlines():
        if line.startswith("rlvr_requests_total{") and 'route="/v1/verify"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def children_of(pid: int):
    output = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(line) for line in output.split()]


FIXTURES = Path(__file__).resolve().parent / "fixtures"
RELEASE_ROWS = FIXTURES / "release_rows.jsonl"
"""Four rows in the release's exact layout (`prompt`, `label`, `metadata`), io and functional mixed."""


def release_answers():
    """A right program per fixture row, by `metadata.hash`."""
    import json

    return json.loads((FIXTURES / "release_answers.json").read_text())


def right_answer(row) -> str:
    return fenced(release_answers()[row["metadata"]["hash"]])
