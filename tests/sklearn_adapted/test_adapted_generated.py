"""The committed adapted copies of scikit-learn's tests are what generate.py
writes for the installed scikit-learn (skipped for another version)."""
import pytest
import sklearn

from generate import SOURCES, adapted_source, output_path


@pytest.mark.parametrize("source", SOURCES)
def test_generated_files_are_current(source):
    committed = output_path(source).read_text()
    version = committed.split('ADAPTED_FROM_SKLEARN_VERSION = "')[1].split('"')[0]
    if version != sklearn.__version__:
        pytest.skip(f"adapted from scikit-learn {version}, {sklearn.__version__} is installed: "
                    "run tests/sklearn_adapted/generate.py to adapt its tests")
    assert committed == adapted_source(source), (
        "tests/sklearn_adapted is stale: run python tests/sklearn_adapted/generate.py")
