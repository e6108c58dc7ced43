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


# ------------------------------------------------------------------ Dask clusters
# One cluster for the whole session (starting worker processes is the slow part
# of a Dask test); see dask_testing.py for when a test may build its own.

@pytest.fixture(scope="session")
def dask_cluster():
    """The session's shared LocalCluster (dask_testing.SHARED_WORKERS worker
    processes, one thread each; its scheduler runs in this process, so a
    scheduler plugin sees every task). Do not kill or restart its workers."""
    pytest.importorskip("distributed")
    from dask_testing import SHARED_WORKERS, local_cluster
    with local_cluster(SHARED_WORKERS) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def dask_client(dask_cluster):
    """A client of the shared cluster, the default client from the first test
    that asks for it to the end of the session."""
    import distributed
    with distributed.Client(dask_cluster) as client:
        yield client


@pytest.fixture(scope="module")
def dask_three_worker_cluster():
    """A cluster of three worker processes of its own, for the tests that kill
    one of its workers mid-fit or compare three workers with fewer; never the
    shared one. Module-scoped: the tests of a module share it."""
    pytest.importorskip("distributed")
    from dask_testing import local_cluster
    with local_cluster(3) as cluster:
        yield cluster


@pytest.fixture
def dask_three_worker_client(dask_three_worker_cluster):
    """A client of `dask_three_worker_cluster`, the default client during the test."""
    import distributed
    with distributed.Client(dask_three_worker_cluster) as client:
        yield client
