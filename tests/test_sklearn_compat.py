"""scikit-learn compatibility: estimator checks, meta-estimators, input types."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from aucforest import AUCForestClassifier, AUCTreeClassifier

# Checks expected to fail, with the reason.
EXPECTED_FAILED_CHECKS = {
    # Weights multiply bootstrap draws and min_samples_leaf counts distinct
    # cases, so weight 2 is not the same as a repeated row (scikit-learn's own
    # forests are marked the same way).
    "check_sample_weight_equivalence_on_dense_data":
        "bootstrap draws and min_samples_leaf count distinct cases, not weights",
    "check_sample_weight_equivalence_on_sparse_data":
        "bootstrap draws and min_samples_leaf count distinct cases, not weights",
}


def _expected_failures(estimator):
    return EXPECTED_FAILED_CHECKS if isinstance(estimator, AUCForestClassifier) else {}


@parametrize_with_checks(
    [AUCTreeClassifier(random_state=0),
     AUCForestClassifier(n_estimators=10, random_state=0),
     AUCForestClassifier(n_estimators=10, criterion="gini", decision="argmax", random_state=0)],
    expected_failed_checks=_expected_failures)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_clone_pipeline_grid_search_and_cross_val_score():
    X, y = load_iris(return_X_y=True)
    forest = AUCForestClassifier(n_estimators=20, random_state=0)
    assert clone(forest).get_params() == forest.get_params()
    pipe = make_pipeline(StandardScaler(), forest)
    scores = cross_val_score(pipe, X, y, cv=3, scoring="roc_auc_ovo")
    assert scores.mean() > 0.95
    grid = GridSearchCV(forest, {"criterion": ["auc", "gini"], "min_samples_leaf": [1, 5]},
                        cv=3, scoring="roc_auc_ovo").fit(X, y)
    assert grid.best_params_["criterion"] in ("auc", "gini")


def test_pandas_dataframe_and_string_labels():
    pd = pytest.importorskip("pandas")
    X, y = load_iris(return_X_y=True, as_frame=True)
    labels = np.array(["setosa", "versicolor", "virginica"], dtype=object)[y]
    forest = AUCForestClassifier(n_estimators=10, random_state=0).fit(X, labels)
    assert list(forest.feature_names_in_) == list(X.columns)
    assert set(forest.predict(X)) <= set(labels)
    assert list(forest.classes_) == ["setosa", "versicolor", "virginica"]
    assert isinstance(X, pd.DataFrame)
