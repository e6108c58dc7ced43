import os
import sys

import pytest
from hypothesis import settings

sys.path.insert(0, os.path.dirname(__file__))  # references.py beside the tests

# CI replays the same examples every run (a red CI is then reproducible); local runs explore.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

# AUCFOREST_NO_SKIPS=1 (.ci/run): a skip for a reason not on the allowlist fails the run
from no_silent_skips import pytest_configure  # noqa: E402,F401


@pytest.fixture
def small_nodes(monkeypatch):
    """Dask fits split nodes of more than 150 rows on the workers and finish
    smaller ones in memory (no tree grown whole in memory)."""
    import aucforest._dask as dask_fit
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS", 150)
    monkeypatch.setattr(dask_fit, "LOCAL_ROWS_MAX", 150)  # whatever n
    monkeypatch.setattr(dask_fit, "WHOLE_TREE_ROWS", 0)
