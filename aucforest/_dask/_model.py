"""A forest fitted on dask collections as a model: its draws, the lazy
out-of-bag predictions of its training rows, and lazy prediction on dask
collections.

Prediction on dask collections (`predict_proba`, `predict`, `apply`) is lazy:
each block becomes the rows the dense predict reads (`_dense_rows`: a
partition's ``category`` columns mapped to the fitted codes by value, as
`predict_codes` does in memory, whatever the partition's own categories;
float32; infinite values and invalid level codes of categorical features
refused with the dense error when the block is computed), then
``map_blocks`` with the fitted model, read once and scattered to every worker
once per model and client (`_model`): the graphs reference its key, so
repeated predictions do not send the trees again.
"""
import threading
import uuid
import weakref
from types import SimpleNamespace

import numpy as np

from .._base import check_categorical_codes
from .._categories import predict_codes
from .._prediction import decide_classes, mean_tree_proba
from ._blocks import add_oob
from ._inputs import as_rows, is_dask_frame, is_dask_collection


def _oob_decision_block(X, y, w, model, weighted, block_info=None):
    """The OOB decision function of one block of the training X, y and
    weights (columns; `oob_decision_function`), at the node size chosen; NaN
    for rows in every tree's draw."""
    start = block_info[0]["array-location"][0][0]
    X = np.asfortranarray(np.asarray(X, dtype=np.float32))
    y = np.asarray(y)[:, 0]
    w = np.asarray(w)[:, 0] if weighted else None
    classes = model["classes"]
    codes = np.minimum(np.searchsorted(classes, y), classes.shape[0] - 1)
    if not np.all(classes[codes] == y):
        unknown = y[classes[codes] != y][:1].tolist()[0]
        raise ValueError(f"y holds the label {unknown!r}, which is not one of the forest's "
                         f"classes_ {classes.tolist()}")
    y = codes.astype(np.int32)
    if model["balanced"] and w is not None:
        y = np.where(np.asarray(w) > 0, y, -1).astype(np.int32)
    rows = start + np.arange(X.shape[0], dtype=np.int64)
    proba = np.zeros((1, X.shape[0], model["classes"].shape[0]))
    n_trees = np.zeros(X.shape[0])
    add_oob(model["trees"], model["draw"], X, rows, y, [model["size"]], proba, n_trees)
    with np.errstate(invalid="ignore", divide="ignore"):
        return proba[0] / n_trees[:, None]


class DrawsOnWorkers:
    """`AUCForestClassifier._case_draws` after a fit on dask collections: what
    makes each row's multiplicity in each tree where the row lives (per-tree
    keys and class rates, `draw_counts`), from which `oob_decision_function`
    recomputes the out-of-bag rows; the per-tree case draws of the in-memory
    fit (`estimators_samples_`, the out-of-bag inspection tools) are not
    kept, and asking for them says why. A forest read from a model file has
    no keys (``keys`` None)."""

    def __init__(self, keys=None, rates=None, poisson=False, n_rows=None, balanced=False):
        self.keys, self.rates, self.poisson = keys, rates, poisson
        self.n_rows, self.balanced = n_rows, balanced

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            "the trees' draws (estimators_samples_, out-of-bag inspection) are not available "
            "after a fit on dask collections: the rows stay on the workers, and a row's "
            "multiplicity in a tree is drawn from (the tree's seed, its global row index) "
            "where the row lives")


# the message of `AUCForestClassifier.oob_decision_function_` after a fit on dask collections
OOB_NOT_KEPT = (
    "a forest fitted on dask collections keeps no out-of-bag predictions of its n training "
    "rows (they would keep the rows on the workers and travel with every pickle and model "
    "file); oob_score_ and oob_gmean_ come from a bounded sample of rows. Compute them "
    "where the rows are with forest.oob_decision_function(X, y, sample_weight), a lazy dask "
    "array, on the training collections")


def oob_decision_function(forest, X, y, sample_weight=None):
    """`AUCForestClassifier.oob_decision_function`: the out-of-bag class
    probabilities of the training rows of a fit on dask collections, a lazy
    dask array computed where the rows are (the model one key of its graph).

    Each row's multiplicities are drawn again from (tree key, global row
    index), so X, y and sample_weight must hold the training rows in the
    fit's order (any chunking); y decides the draw class of a row (per-class
    rates), sample_weight whether it had positive weight (balanced bootstrap).
    """
    import dask
    import dask.array as da
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(forest)
    state = vars(forest)
    draws = state.get("_case_draws")
    if not isinstance(draws, DrawsOnWorkers):
        raise ValueError("oob_decision_function(X, y) recomputes the out-of-bag predictions "
                         "of a fit on dask collections; this forest was fitted in memory: "
                         "read its oob_decision_function_")
    if draws.keys is None:
        raise ValueError("a forest read from a model file keeps no draws of its fit on dask "
                         "collections; out-of-bag predictions need the fitted forest (or its "
                         "pickle)")
    if not is_dask_collection(X):
        raise TypeError(f"X must be the training dask array or DataFrame; got "
                        f"{type(X).__name__}")
    X, y, w, names = as_rows(X, y, sample_weight, state.get("categories_"))
    if X.shape[0] != draws.n_rows:
        raise ValueError(f"X, y have {X.shape[0]} rows but the forest was fitted on "
                         f"{draws.n_rows}; out-of-bag predictions need the training rows in "
                         "the order of the fit")
    _check_n_features(X.shape[1], state["n_features_in_"], forest)
    model = dask.delayed({"trees": [e.tree_ for e in state["estimators_"]],
                          "draw": (draws.keys, draws.rates, draws.poisson), "size": 1,
                          "classes": state["classes_"], "balanced": draws.balanced},
                         name=f"aucforest-oob-model-{uuid.uuid4().hex}", pure=False)
    # blockwise on the collections themselves (to_delayed would drop the futures of a
    # persisted X from the graph: it must hold them while the array is kept)
    y = y[:, None]
    w = da.zeros_like(y, dtype=np.float64) if w is None else w[:, None]
    return da.map_blocks(_oob_decision_block, X, y, w, model, sample_weight is not None,
                         dtype=np.float64, chunks=(X.chunks[0], (state["n_classes_"],)),
                         meta=np.empty((0, 0)))


def _prediction_rows(forest, X):
    """The fitted model read once (a refit replaces the estimator's dict whole),
    as one key of the graph, and X as a lazy dask array of the rows the dense
    predict reads: float32 in one column chunk, each block mapped and checked
    as ``_validate_X_predict`` maps and checks its X (`_dense_rows`)."""
    import dask
    import dask.array as da
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(forest)
    state = vars(forest)
    model = _model(state)
    n_features = state["n_features_in_"]
    if is_dask_frame(X) and X.ndim == 2:
        names = state.get("feature_names_in_")
        if names is not None and list(X.columns) != list(names):
            raise ValueError("The feature names should match those that were passed during "
                             "fit.")
        _check_n_features(len(X.columns), n_features, forest)
        # the dtypes (text, category or not where fitted) refused before anything runs
        predict_codes(SimpleNamespace(categories_=state.get("categories_")), X._meta)
        blocks = [da.from_delayed(dask.delayed(_dense_rows)(part, model),
                                  shape=(np.nan, n_features), dtype=np.float32,
                                  meta=np.empty((0, 0), dtype=np.float32))
                  for part in X.to_delayed()]
        return da.concatenate(blocks, axis=0), model, state
    if not isinstance(X, da.Array) or X.ndim != 2:
        raise ValueError("X must be a 2-dimensional dask array or a dask DataFrame")
    _check_n_features(X.shape[1], n_features, forest)
    X = X.rechunk({1: -1}).map_blocks(_dense_rows, model, dtype=np.float32,
                                      meta=np.empty((0, 0), dtype=np.float32))
    return X, model, state


def _check_n_features(found, expected, forest):
    if found != expected:
        raise ValueError(f"X has {found} features, but {type(forest).__name__} is "
                         f"expecting {expected} features as input.")

# scattered models, per client: {first tree of a model: {client id: (token, future)}},
# dropped with the model (weak keys: a refit's new trees start new entries)
_SCATTERED = weakref.WeakKeyDictionary()

_SCATTERED_LOCK = threading.Lock()


def _model(state):
    """The fitted model (of the estimator's dict ``state``) as one key of the
    graph: scattered to every worker of the client in scope once per model
    (`client.scatter` with ``broadcast=True``) and referenced by its future,
    so repeated predictions send no trees; a delayed key without a
    ``dask.distributed`` client (the local schedulers read it in process)."""
    import dask
    model = {name: state.get(name) for name in (
        "estimators_", "classes_", "class_prior_", "draw_class_weights_", "categories_",
        "is_categorical_", "feature_names_in_")}
    try:
        from distributed import get_client
        client = get_client()
    except (ImportError, ValueError):
        return dask.delayed(model, name=f"aucforest-model-{uuid.uuid4().hex}", pure=False)
    # the model's objects (a refit or an assignment replaces them), kept alive by the
    # cached entry's model, so no id is reused while it is cached
    token = tuple(map(id, model.values())) + tuple(map(id, model["estimators_"]))
    with _SCATTERED_LOCK:
        per_client = _SCATTERED.setdefault(model["estimators_"][0], {})
        cached = per_client.get(client.id)
        if cached is not None and cached[0] == token and cached[2].status == "finished":
            return cached[2]
        for stale in [c for c, entry in per_client.items() if entry[2].status != "finished"]:
            del per_client[stale]  # clients closed meanwhile, or the copies lost
        # a fresh key (tokenizing the trees would cost a pass over them)
        (future,) = client.scatter({f"aucforest-model-{uuid.uuid4().hex}": model},
                                   broadcast=True).values()
        per_client[client.id] = (token, model, future)
    return future


def _dense_rows(X, model):
    """One block of rows as the dense predict reads it: a pandas partition's
    category columns mapped to the fitted codes by value (`predict_codes`),
    nullable columns with NaN for pd.NA, float32 in C order, infinite values
    and invalid categorical level codes refused with the dense predict's error."""
    from sklearn.utils import check_array

    X = predict_codes(SimpleNamespace(categories_=model["categories_"]), X)
    X = check_array(X, dtype=np.float32, order="C", ensure_all_finite="allow-nan",
                    ensure_min_samples=0)
    check_categorical_codes(X, model["is_categorical_"], model["feature_names_in_"])
    return X


def _proba_block(X, model):
    return mean_tree_proba(X, model, 1)


def _predict_block(X, model, rule):
    return decide_classes(_proba_block(X, model), model, rule)


def _apply_block(X, model):
    return np.column_stack([tree.tree_.apply(X) for tree in model["estimators_"]])


def predict_proba(forest, X):
    """Lazy `predict_proba`: a dask array (n_samples, n_classes)."""
    X, model, state = _prediction_rows(forest, X)
    return X.map_blocks(_proba_block, model, dtype=np.float64,
                        chunks=(X.chunks[0], (state["classes_"].shape[0],)),
                        meta=np.empty((0, 0)))


def predict(forest, X):
    """Lazy `predict`: a dask array (n_samples,) of classes."""
    X, model, state = _prediction_rows(forest, X)
    classes = state["classes_"]
    return X.map_blocks(_predict_block, model, forest.decision_rule_, dtype=classes.dtype, drop_axis=1,
                        meta=np.empty((0,), dtype=classes.dtype))


def apply(forest, X):
    """Lazy `apply`: a dask array (n_samples, n_estimators) of leaf indices."""
    X, model, state = _prediction_rows(forest, X)
    return X.map_blocks(_apply_block, model, dtype=np.intp,
                        chunks=(X.chunks[0], (len(state["estimators_"]),)),
                        meta=np.empty((0, 0), dtype=np.intp))
