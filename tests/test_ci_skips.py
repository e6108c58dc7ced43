"""The CI skip check (tests/no_silent_skips.py) through real pytest runs (pytester):
with AUCFOREST_NO_SKIPS=1 a skip for a reason not on the allowlist fails the run and
is listed; an allowed reason, an expected failure, or the variable unset does not."""
import pytest

pytest_plugins = ["pytester"]

CONFTEST = "from no_silent_skips import pytest_configure\n"

TESTS = """
import pytest

def test_runs():
    pass

def test_platform():
    pytest.skip("no FIFOs on this platform")

@pytest.mark.xfail(reason="a known difference", strict=False)
def test_expected_failure():
    assert False
"""


@pytest.fixture
def enforced(monkeypatch, pytester):
    monkeypatch.setenv("AUCFOREST_NO_SKIPS", "1")
    pytester.makeconftest(CONFTEST)
    return pytester


def test_allowed_skip_and_expected_failure_pass(enforced):
    enforced.makepyfile(test_ok=TESTS)
    result = enforced.runpytest()
    result.assert_outcomes(passed=1, skipped=1, xfailed=1)
    assert result.ret == pytest.ExitCode.OK
    assert "not on the allowlist" not in result.stdout.str()


def test_skip_for_an_unlisted_reason_fails_the_run_and_is_listed(enforced):
    enforced.makepyfile(test_ok=TESTS, test_missing="""
import pytest

def test_needs_a_package():
    pytest.importorskip("a_package_the_test_extras_forgot")
""")
    result = enforced.runpytest()
    result.assert_outcomes(passed=1, skipped=2, xfailed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "*skips not on the allowlist*",
        "test_missing.py::test_needs_a_package: could not import "
        "'a_package_the_test_extras_forgot'*",
        "1 skipped for a reason not on ALLOWED_SKIPS*"])


def test_module_skipped_whole_at_import_fails_the_run(enforced):
    """The case of issue 44: tests/test_dask_rows.py skipped itself at import."""
    enforced.makepyfile(test_module="""
import pytest
dd = pytest.importorskip("a_missing_dataframe_module")

def test_never_collected():
    pass
""")
    result = enforced.runpytest()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["test_module.py: could not import 'a_missing_dataframe_module'*"])


def test_without_the_variable_skips_do_not_fail(monkeypatch, pytester):
    monkeypatch.delenv("AUCFOREST_NO_SKIPS", raising=False)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_missing="""
import pytest

def test_needs_a_package():
    pytest.skip("anything")
""")
    result = pytester.runpytest()
    result.assert_outcomes(skipped=1)
    assert result.ret == pytest.ExitCode.OK
