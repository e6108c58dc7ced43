"""What the Dask test modules share: the clusters (the session's shared one is
the ``dask_client`` fixture of conftest.py), dask arrays cut into given
partition sizes, and the check that two fits grew the same trees.

Clusters. Every test that only needs "a client" uses the one session-scoped
cluster of conftest.py (``dask_client``; ``dask_cluster`` for its in-process
scheduler): ``SHARED_WORKERS`` worker processes of one thread each. Worker
processes, not threads: with in-process workers a task failing in a worker
thread formats its traceback while pytest formats another, and Python 3.11's
AST parser, not thread-safe there, can raise "SystemError: AST constructor
recursion depth mismatch"; processes also keep the fit honest (what a worker
reads is pickled to it). A test builds a cluster of its own with
`local_cluster` only when it must: it kills a worker, compares worker counts,
needs a second client beside the shared one, or one that closes before the
test ends (the dedicated fixture ``dask_three_worker_cluster`` of conftest.py
is one such cluster).
"""
import numpy as np

SHARED_WORKERS = 2


def local_cluster(n_workers, processes=True):
    """A LocalCluster of ``n_workers`` workers with one thread each: processes,
    or in-process threads (``processes=False``, quicker to start, for a second
    short-lived cluster only)."""
    import distributed
    return distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                    processes=processes, dashboard_address=":0",
                                    silence_logs=50)


def chunked(sizes, *arrays):
    """Each array (rows first, or None) as a dask array of partitions of ``sizes`` rows."""
    import dask.array as da
    sizes = tuple(sizes)
    return tuple(None if a is None else da.from_array(a, chunks=(sizes,) + a.shape[1:])
                 for a in arrays)


def assert_same_trees(a, b):
    """The two forests hold the same trees, array for array, and predict from
    the same node size."""
    assert len(a.estimators_) == len(b.estimators_)
    for i, (ta, tb) in enumerate(zip(a.estimators_, b.estimators_)):
        arrays_b = tb.tree_.node_arrays()
        for name, array in ta.tree_.node_arrays().items():
            np.testing.assert_array_equal(array, arrays_b[name], err_msg=f"tree {i}: {name}")
    assert a.predict_min_samples_ == b.predict_min_samples_
