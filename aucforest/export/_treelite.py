"""A fitted forest (or tree) as a treelite model whose predictions are
``predict_proba``.

treelite (``treelite.model_builder``) takes the trees node by node; its
runtime (``treelite.gtil.predict``) and the compilers built on it (TL2cgen)
then give, for each row, the mean over the trees of the leaf's class
proportions: ``predict_proba``. Two details make that exact:

* The forest compares float32 values with double thresholds: a row goes left
  where ``float32(x) <= t``. For double inputs that is ``x < m`` or ``x <= m``
  with m the midpoint between the largest float32 at most t and the next
  float32 (the values that round down to it), the comparison chosen by which
  of the two the midpoint itself rounds to (to even). So the model sends
  float32 and float64 inputs where the forest sends them.
* A categorical split tests the levels that go away from the missing side
  (``category_list``), so that NaN, unseen levels and codes outside 0..254
  go where the forest sends them: the missing side (``default_left``).

The decision rule (RFQ, a threshold, a cost matrix) and the class labels are
not part of a treelite model: apply the rule to the probabilities with
``forest.decide``. The trees are read as every export reads them
(`aucforest.export._exportable`).
"""
import numpy as np

from ._exportable import ExportableForest

INSTALL_HINT = 'pip install "aucforest[treelite]" (or: pip install treelite)'
FLOAT32_TOP = 2.0 ** 128  # the float32 after the largest finite one, were there one


def to_treelite(forest):
    """The fitted forest as a treelite model predicting its ``predict_proba``.

    Parameters
    ----------
    forest : fitted AUCForestClassifier or AUCTreeClassifier
        The trees are taken as ``predict`` uses them (collapsed to the
        forest's ``predict_min_samples_``).

    Returns
    -------
    treelite.Model
        A multiclass model (K classes, also for two) whose
        ``treelite.gtil.predict(model, X)`` has shape (N, 1, K) and equals
        ``forest.predict_proba(X)``, for dense float32 or float64 ``X`` with
        the feature columns in the order of fit, NaN for a missing value and
        level codes for categorical features (the position of the level in
        ``categories_[j]``, as an array given to ``predict`` holds them). A
        code the forest refuses (not an integer) is truncated by treelite
        instead; so is a double code just below an integer that rounds to it
        in float32 (0.9999999999 is level 1 to the forest, 0 to treelite):
        pass ``X.astype(np.float32)`` when category codes are computed.
        Pass dense rows: treelite reads the entries a sparse matrix leaves
        out as missing, the forest as zeros. The class labels are not part
        of the model (the probabilities' columns are ``classes_``).

    Raises
    ------
    ImportError
        If the ``treelite`` package is not installed.
    TypeError
        If ``forest`` is not an aucforest forest or tree.

    Examples
    --------
    >>> import numpy as np, treelite
    >>> from sklearn.datasets import load_iris
    >>> from aucforest import AUCForestClassifier, to_treelite
    >>> X, y = load_iris(return_X_y=True)
    >>> forest = AUCForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> proba = treelite.gtil.predict(to_treelite(forest), X)[:, 0, :]
    >>> bool(np.abs(proba - forest.predict_proba(X)).max() < 1e-12)
    True
    >>> bool((forest.decide(proba) == forest.predict(X)).all())
    True
    """
    exportable = ExportableForest(forest, "to_treelite")
    builder = _import_builder()
    trees = exportable.trees
    n_classes = exportable.n_classes
    tree_builder = builder.ModelBuilder(
        threshold_type="float64", leaf_output_type="float64",
        metadata=builder.Metadata(num_feature=exportable.n_features,
                                  task_type="kMultiClf", average_tree_output=True,
                                  num_target=1, num_class=[n_classes],
                                  leaf_vector_shape=(1, n_classes)),
        tree_annotation=builder.TreeAnnotation(num_tree=len(trees), target_id=[0] * len(trees),
                                               class_id=[-1] * len(trees)),
        postprocessor=builder.PostProcessorFunc(name="identity_multiclass"),
        base_scores=[0.0] * n_classes)
    for tree in trees:
        _add_tree(tree_builder, tree)
    return tree_builder.commit()


def float32_cut(threshold):
    """``(m, opname)`` such that ``x opname m`` holds for a double x exactly
    when ``float32(x) <= threshold`` (round to nearest, ties to even)."""
    below = np.float32(threshold)
    if float(below) > threshold:  # compared in double (a Python float is weak in numpy)
        below = np.nextafter(below, np.float32(-np.inf))
    with np.errstate(over="ignore"):  # after the largest float32: infinity
        above = np.nextafter(below, np.float32(np.inf))
    above = FLOAT32_TOP if np.isinf(above) else float(above)
    midpoint = (float(below) + above) / 2.0  # exact: float32s are 24-bit
    rounds_down = int(np.array(below, dtype=np.float32).view(np.uint32)) % 2 == 0
    return midpoint, "<=" if rounds_down else "<"


def _add_tree(tree_builder, tree):
    """One `FlatTree`'s nodes (keys: node ids) into ``tree_builder``."""
    tree_builder.start_tree()
    for node in range(tree.feature.shape[0]):
        tree_builder.start_node(node)
        left, right = int(tree.left[node]), int(tree.right[node])
        missing_left = bool(tree.missing_left[node])
        if tree.feature[node] < 0:
            tree_builder.leaf(tree.proba[node].tolist())
        elif tree.categorical[node]:  # members: the levels away from the missing side
            tree_builder.categorical_test(
                int(tree.feature[node]), default_left=missing_left,
                category_list=tree.away_levels[node].tolist(),
                category_list_right_child=missing_left,
                left_child_key=left, right_child_key=right)
        else:
            cut, opname = float32_cut(float(tree.threshold[node]))
            tree_builder.numerical_test(int(tree.feature[node]), cut, default_left=missing_left,
                                        opname=opname, left_child_key=left,
                                        right_child_key=right)
        tree_builder.end_node()
    tree_builder.end_tree()


def _import_builder():
    """``treelite.model_builder``; ImportError with the install hint."""
    try:
        from treelite import model_builder
    except ImportError as exc:
        raise ImportError(f"to_treelite needs the treelite package: {INSTALL_HINT}") from exc
    return model_builder
