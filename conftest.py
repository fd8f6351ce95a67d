"""pytest hooks for every Python suite in this repository (python/tests, tests/oracles).

Where everything must run (scripts/test sets RLVR_REQUIRE_EVERYTHING=1; CI sets CI), a skipped
test is a failure: a test whose subject is missing (a package, a toolchain, the network) must
not pass without running. Elsewhere skips stay skips, with their reason in the summary.
"""

import os

import pytest


def _require_everything():
    return any(
        os.environ.get(name, "") not in ("", "0", "false")
        for name in ("RLVR_REQUIRE_EVERYTHING", "CI")
    )


def _fail_if_skipped(report):
    if not _require_everything() or not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = (
        f"skipped where every test must run (RLVR_REQUIRE_EVERYTHING or CI is set): {reason}"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _fail_if_skipped(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    # A module-level `pytest.importorskip` skips the whole module at collection.
    outcome = yield
    _fail_if_skipped(outcome.get_result())
