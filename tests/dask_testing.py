"""What the Dask test modules share: a real LocalCluster of worker processes,
dask arrays cut into given partition sizes, and the check that two fits grew
the same trees."""
import numpy as np


def local_cluster(n_workers):
    """A LocalCluster of ``n_workers`` processes with one thread each."""
    import distributed
    return distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                    dashboard_address=":0", silence_logs=50)


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
