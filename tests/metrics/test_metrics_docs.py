"""The examples in the docstrings and in docs/metrics.md run and print what they say."""
import doctest
import importlib
from pathlib import Path

import pytest

MODULES = ["_auc", "_roc", "_delong", "_binormal", "_bootstrap", "_bayes",
           "_imbalance", "_plot"]
USER_GUIDE = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"aucforest.metrics.{name}")
    result = doctest.testmod(module, optionflags=FLAGS)
    assert result.failed == 0


@pytest.mark.filterwarnings("error::FutureWarning")  # the guide uses no deprecated names
def test_user_guide_examples():
    pytest.importorskip("matplotlib")
    result = doctest.testfile(str(USER_GUIDE), module_relative=False, optionflags=FLAGS)
    assert result.attempted > 10 and result.failed == 0
