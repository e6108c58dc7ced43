"""Scale-out: fitting and prediction under joblib's Dask backend on a local cluster."""
import pickle

import numpy as np
import pytest
from joblib import parallel_backend
from sklearn.datasets import make_classification

from aucforest import AUCForestClassifier

distributed = pytest.importorskip("distributed")


def test_dask_fit_and_predict_equal_a_local_fit(dask_client):
    X, y = make_classification(400, 6, n_informative=4, n_classes=3, random_state=0)
    params = dict(n_estimators=12, oob_score=True, random_state=11)
    with parallel_backend("dask"), distributed.get_task_stream(dask_client) as stream:
        remote = AUCForestClassifier(**params).fit(X, y)
        remote_proba = remote.predict_proba(X)
    ran_on = {task["worker"] for task in stream.data}
    assert len(stream.data) >= params["n_estimators"], "the trees were not fitted on the cluster"
    assert len(ran_on) == 2, "both workers should have taken work"
    local = AUCForestClassifier(**params, n_jobs=1).fit(X, y)
    for a, b in zip(remote.estimators_, local.estimators_):
        for name, array in a.tree_.node_arrays().items():
            np.testing.assert_array_equal(array, b.tree_.node_arrays()[name], err_msg=name)
    np.testing.assert_array_equal(remote_proba, local.predict_proba(X))
    np.testing.assert_array_equal(remote.oob_decision_function_, local.oob_decision_function_)
    assert remote.oob_score_ == local.oob_score_


def test_trees_pickle_compactly():
    X, y = make_classification(2000, 10, random_state=0)
    tree = AUCForestClassifier(1, random_state=0).fit(X, y).estimators_[0].tree_
    array_bytes = sum(a.nbytes for a in tree.node_arrays().values())
    assert len(pickle.dumps(tree, protocol=5)) < 1.05 * array_bytes + 2000
