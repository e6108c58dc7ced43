"""What `decision` at fit changes (issue 44): with predict_min_samples="oob"
it is the rule of the OOB G-mean that chooses the node size, so forests fitted
under different decisions can predict from different node sizes and give
different probabilities; the trees as grown, the OOB AUC of each candidate
and, at a given node size, every probability are the same. Changing
`decision` after the fit changes the labels only."""
import numpy as np
import pytest
from scipy.stats import gmean
from sklearn.datasets import make_classification
from sklearn.metrics import recall_score

from aucforest import AUCForestClassifier

# Data and seeds on which the decisions choose different node sizes
# (20 / 2 / 10 for rfq / argmax / 0.3 on the binary set).
CASES = {
    "binary": (dict(n_classes=2, weights=[0.85]), ("rfq", "argmax", 0.3)),
    "3-class": (dict(n_classes=3, weights=[0.7, 0.2]), ("rfq", "argmax")),
}
SEED = 1
PARAMS = dict(n_estimators=30, oob_score=True, random_state=SEED)


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    shape, decisions = CASES[request.param]
    X, y = make_classification(n_samples=400, n_features=8, n_informative=4,
                               n_clusters_per_class=1, flip_y=0.05, random_state=SEED, **shape)
    fits = {d: AUCForestClassifier(decision=d, **PARAMS).fit(X, y) for d in decisions}
    return X, y, fits


def _labels(proba, prior, decision):
    """The decision rules written out: RFQ, the argmax, a threshold on p_1."""
    if decision == "rfq":  # ties to the class with the smaller prior
        ratio = proba / prior
        tied = ratio == ratio.max(axis=1, keepdims=True)
        return np.argmin(np.where(tied, prior, np.inf), axis=1)
    if decision == "argmax":
        return np.argmax(proba, axis=1)
    return (proba[:, 1] >= decision).astype(int)


def test_decision_at_fit_chooses_the_node_size_by_its_own_oob_gmean(case):
    X, y, fits = case
    fixed = {m: AUCForestClassifier(predict_min_samples=m, **PARAMS).fit(X, y)
             for m in (1, 2, 5, 10, 20, 50)}
    for decision, forest in fits.items():
        merit = {}
        for m, at_m in fixed.items():
            proba = at_m.oob_decision_function_
            has_oob = ~np.isnan(proba[:, 0])
            predicted = _labels(proba[has_oob], forest.class_prior_, decision)
            expected_gmean = gmean(recall_score(y[has_oob], predicted, average=None))
            assert forest.oob_gmeans_by_min_samples_[m] == pytest.approx(expected_gmean, 1e-12)
            # the OOB AUC of a candidate does not depend on the decision
            assert forest.oob_scores_by_min_samples_[m] == at_m.oob_score_
            merit[m] = at_m.oob_score_ + expected_gmean
        best = max(merit.values())
        assert forest.predict_min_samples_ == min(m for m, v in merit.items()
                                                  if v >= best - 1e-12), decision


def test_decision_at_fit_changes_predict_proba_through_the_node_size_only(case):
    X, y, fits = case
    sizes = {d: f.predict_min_samples_ for d, f in fits.items()}
    assert len(set(sizes.values())) > 1, sizes  # the documented difference is real here
    rfq = fits["rfq"]
    for decision, forest in fits.items():
        if forest.predict_min_samples_ != rfq.predict_min_samples_:
            assert not np.array_equal(forest.predict_proba(X), rfq.predict_proba(X))
        # at its node size, an RFQ fit gives the same trees, probabilities and OOB estimates
        same_size = AUCForestClassifier(predict_min_samples=forest.predict_min_samples_,
                                        **PARAMS).fit(X, y)
        np.testing.assert_array_equal(forest.predict_proba(X), same_size.predict_proba(X))
        np.testing.assert_array_equal(forest.oob_decision_function_,
                                      same_size.oob_decision_function_)
        np.testing.assert_array_equal(forest.predict(X),
                                      same_size.set_params(decision=decision).predict(X))


def test_set_params_decision_after_the_fit_changes_the_labels_only(case):
    X, y, fits = case
    forest = fits["rfq"]
    proba, oob = forest.predict_proba(X), forest.oob_decision_function_.copy()
    size, score = forest.predict_min_samples_, forest.oob_score_
    try:
        for decision in fits:
            forest.set_params(decision=decision)
            np.testing.assert_array_equal(forest.predict_proba(X), proba)
            np.testing.assert_array_equal(forest.oob_decision_function_, oob)
            assert (forest.predict_min_samples_, forest.oob_score_) == (size, score)
            np.testing.assert_array_equal(
                forest.predict(X),
                forest.classes_[_labels(proba, forest.class_prior_, decision)])
    finally:
        forest.set_params(decision="rfq")
