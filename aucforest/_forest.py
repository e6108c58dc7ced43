"""AUCForestClassifier: fit orchestration, threads, prediction and the RFQ decision.

A fit flows down once: `aucforest._base` validates the data, bins it and grows
each tree; `aucforest._sampling` draws each tree's cases; `aucforest._oob_estimates`
keeps the out-of-bag sums and chooses the node size; the trees are then
collapsed to it (`aucforest._base.collapsed`).
"""
import threading
import warnings
from numbers import Integral

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.validation import check_array, check_is_fitted

from ._base import (MAX_SEED, TREE_PARAMETER_CONSTRAINTS, check_counts_are_not_booleans,
                    check_categorical_codes, collapsed, distinct_value_tables,
                    fit_atomically, grow_tree, resolve_max_bins,
                    training_layout, training_matrix, tree_params, trees_per_task,
                    validate_training_data)
from ._categories import fit_categories, predict_codes, resolve_fitted
from ._compat import (Interval, RealNotInt, StrOptions, fit_context, in_memory,
                      validate_data)
from ._decision_rule import DEFAULT_DECISION, DecisionRule
from ._oob_estimates import (auc_of_rows, cases_choosing_node_size, gmean_of_rows,
                             node_size_candidates, oob_gmean, out_of_bag_sums)
from ._oob_source import KeptInMemory, NotKept, oob_source
from ._prediction import decide_classes, mean_tree_proba
from ._prior_shift import draw_class_weights
from ._progress import progress
from ._sampling import (TreeSampler, class_weights_of_counts, seeded_rng, tree_growth_seed,
                        weight_product)
from ._sparse import SparseRows, is_sparse
from ._tree import PackedTree
from .tree import AUCTreeClassifier, feature_attributes, fitted_tree, frozen


class AUCForestClassifier(ClassifierMixin, BaseEstimator):
    """Random forest splitting on the multiclass AUC statistic, for imbalanced data.

    Every tree maximises the AUC split statistic of Ishwaran, Lu & Kogalur,
    theta = 1/2 + 1/(K(K-1)) sum_{k1<k2} |r_k1 - r_k2| over the classes
    present in the node (r_k the share of class k sent right; the multiclass
    rule of their AUC splitting vignette), on a sample of the cases drawn for
    it; predictions follow the random forests quantile classifier (RFQ,
    O'Brien & Ishwaran 2019): ``argmax_k p_k(x) / pi_k``.

    Parameters
    ----------
    n_estimators : int, default=300
        Number of trees. 300 score as 500 did within noise (held-out AUC
        and G-mean over 67 imbalanced data sets; see the changelog).

        .. versionchanged:: 0.1.0
           The default changed from 500 to 300.
    criterion : {"auc", "auc_ecp", "gini", "entropy", "log_loss"}, default="auc"
        Split statistic. Class weights cancel inside the AUC statistic (r_k is
        a ratio within one class): under "auc", ``class_weight`` changes leaf
        probabilities and leaf-size bounds only, not which split wins;
        bootstrap multiplicities do change it. "auc_ecp" divides theta - 1/2
        by the end-cut factor 2 sqrt(q (1 - q)), q the share of the node's
        weight sent right: Gini's preference for end cuts (for two classes it
        ranks splits as Gini does). "log_loss" is "entropy" (scikit-learn's name).
    max_features : {"ceil_sqrt", "sqrt", "log2"}, int, float or None, default="ceil_sqrt"
        Non-constant features examined per node: ceil(sqrt(p)) by default
        (randomForestSRC's ``mtry``), floor(sqrt(p)) for "sqrt" (scikit-learn's),
        log2(p), an int, a fraction of p, or all of them (None).

        .. versionchanged:: 0.1
           Default "ceil_sqrt" (was "sqrt").
    max_depth : int or None, default=None
        Deepest level a tree grows to (the root is level 0); None grows each
        tree until its leaves are pure or cannot be split.
    min_samples_leaf : int or float, default=1
        Minimum number of distinct training cases in each child; a float is
        that fraction of the training cases, rounded up.
    min_weight_fraction_leaf : float, default=0.0
        Minimum fraction of a tree's total weight in each child.
    max_bins : int in [2, 255], "auto" or None, default="auto"
        None: the exact splitter (every threshold between distinct values).
        An int: X is binned once per fit into at most ``max_bins`` quantile
        bins per feature (plus one for missing values) and every tree splits
        on per-bin class counts. "auto": 255 bins from ``AUTO_BINNED_ROWS``
        (10,000) training rows on, the exact splitter below; ``max_bins_``
        tells which was used. Dask input is always binned.

        .. versionchanged:: 0.1
           "auto" bins from 10,000 rows (was 100,000).
    nsplit : int or None, default=10
        An int k: each node evaluates, per examined feature, only the
        thresholds at k of its distinct values drawn uniformly without
        replacement (a node with at most k + 1 distinct values evaluates them
        all), as randomForestSRC's ``nsplit``; the binned splitter draws among
        the node's occupied bins alike. None: every threshold.

        .. versionchanged:: 0.1
           Default 10 (was None).
    bootstrap : bool, default=True
        Draw a sample for each tree (with or without replacement as
        ``replacement`` says, of ``max_samples`` cases); the draw reaches the
        tree as weights (multiplicities), X is never copied. False: every tree
        sees every case (no out-of-bag estimates).
    max_samples : int, float or None, default=None
        Cases drawn per tree: None, n (0.632 n without replacement); an int,
        that many; a float, ``max(round(max_samples * n), 1)`` (above 1 only
        with ``replacement=True``), as scikit-learn's. With ``balanced_bootstrap`` it
        sets the draw per class: None, the minority class size (0.632 of it
        without replacement); an int, that many per class; a float, that
        fraction of the minority class size.
    replacement : bool, default=False
        Draw each tree's sample with replacement (the bootstrap) or without
        (subsampling, randomForestSRC's ``samptype="swor"``: every case at
        most once per tree, 0.632 n cases by default).

        .. versionchanged:: 0.1
           Default False (was True).
    balanced_bootstrap : bool, default=False
        Each tree draws the same number of cases from every class (balanced
        random forest), with or without replacement as ``replacement`` says.
    class_weight : {"balanced", "balanced_subsample"}, dict or None, default=None
        Class weights as in scikit-learn; they multiply the sample weights in
        the trees (leaf proportions and leaf-size bounds) but not the prior
        ``pi_k`` of the RFQ rule.
    decision : {"rfq", "argmax"}, float in (0, 1) or array-like of shape (n_classes, n_classes), \
default="rfq"
        "rfq": predict ``classes_[argmax_k p_k(x) / pi_k]`` with ``pi_k`` the
        class prior the trees were trained under (``class_prior_``), a tie
        going to the class with the smaller prior; for two classes exactly
        RFQ's ``p_min(x) >= pi_min``. "argmax": the Bayes rule. A float t (two
        classes only): predict ``classes_[1]`` when ``p_1(x) >= t``.
        A cost matrix C of non-negative finite numbers, ``C[j, k]`` the cost
        of predicting class k when the truth is class j (rows and columns in
        ``classes_`` order): predict the class of least expected cost,
        ``argmin_k sum_j p_j(x) C[j, k]`` (Elkan 2001), a tie going to the
        class of lowest index. The probabilities are those under the
        training priors: a forest grown on a balanced bootstrap or with class
        weights has its ``predict_proba`` corrected by Bayes' rule for the
        shift of priors (``draw_class_weights_``), so C states all the costs
        (class weights are not applied on top). RFQ of an unweighted forest is
        the matrix ``C[j, k] = 1 / pi_j`` off the diagonal, 0 on it.
        `aucforest.decisions.tune_decision` chooses a threshold or such a
        matrix on the out-of-bag predictions.
        Set before ``fit`` with ``predict_min_samples="oob"``, it is also the
        rule of the out-of-bag G-mean that chooses the node size, so forests
        fitted under different decisions can predict from different node
        sizes and give different ``predict_proba`` (the grown trees are the
        same); to get the same probabilities under every decision, give
        ``predict_min_samples`` an int. Changed after ``fit``
        (``set_params``) it changes the labels only.
    predict_min_samples : int or "oob", default="oob"
        Node size the trees predict from: each tree is collapsed so that a row
        gets the class proportions of the deepest node on its path holding at
        least this many training cases (1: the leaf). "oob" chooses it per fit
        among ``MIN_SAMPLES_CANDIDATES`` (1, 2, 5, 10, 20, 50) by the sum of the
        out-of-bag AUC and the out-of-bag G-mean under the ``decision`` set at
        fit (so the size, and with it ``predict_proba``, can differ between
        decisions; an int does not), the smallest of equal ones;
        ``oob_scores_by_min_samples_`` and
        ``oob_gmeans_by_min_samples_`` show every candidate and ``oob_score_``
        is the chosen one's (optimistic by the choice among six). Without
        ``oob_score`` the choice scores at most ``OOB_CHOICE_MAX_CASES``
        (100,000) cases, an equal share per class (a rarer class whole).
        Without out-of-bag cases (``bootstrap=False``), or when a class has
        fewer than ``MIN_CLASS_CASES_TO_CHOOSE`` (15) training cases of
        positive weight, the trees predict from their leaves. Once the size
        is known every tree is collapsed to it (a node below it predicts its
        parent's proportions), so the trees are the model: ``predict_proba`` is
        the mean of ``estimators_[i].predict_proba``. To predict from another
        size, fit with that int (the same ``random_state`` grows the same
        trees).

        .. versionchanged:: 0.1
           Default "oob" (was 1); the trees are collapsed to the chosen size.
    oob_score : bool or callable, default=False
        Compute out-of-bag class probabilities, the OOB AUC (Hand & Till for
        more than two classes) and the OOB G-mean. A callable
        ``oob_score(y_true, y_pred)`` (scikit-learn >= 1.4) gives
        ``oob_score_`` instead, from the labels of the cases with OOB
        predictions and the classes the forest's ``decision`` predicts for them.
    n_jobs : int or None, default=None
        Threads used to fit and predict (joblib, ``prefer="threads"``); the
        fitted forest does not depend on it. A fit uses them to grow the
        trees, to bin X, and on large data for the node-size choice and the
        collapsing of the trees. On small data each task grows several trees
        (about 20,000 training rows' worth).
    random_state : int, RandomState instance or None, default=None
        Seeds the trees' seeds (each tree's draw and splits), the bin edges'
        sample and the cases that choose the node size. An int gives the same
        forest on every run and for every ``n_jobs``.
    verbose : int, default=0
        1 or more: a progress bar over trees on stderr while fitting.
    warm_start : bool, default=False
        True: a further ``fit`` on the same data keeps the fitted trees and
        adds ``n_estimators - len(estimators_)`` new ones, giving the forest a
        single fit of ``n_estimators`` trees with the same int
        ``random_state`` gives (out-of-bag estimates and the node-size choice
        are made again over all trees). To choose the node size again the
        forest keeps its trees as grown beside the collapsed ones
        (``_grown_trees_``, not written to model files), which costs their
        memory. A DataFrame's ``category`` columns are mapped by value to the
        first fit's ``categories_`` (the codes the kept trees read); a level
        the first fit did not know, columns in another order or under other
        names, and another set of categorical features are refused
        (ValueError naming them).
    categorical_features : "from_dtype", array-like of int, str or bool, or None, \
default="from_dtype"
        The categorical features, as scikit-learn's
        HistGradientBoostingClassifier reads them: "from_dtype", the pandas
        ``category`` columns of a DataFrame (none for an array, so numeric
        data fits as without categorical features); feature indices, column
        names (X a DataFrame) or a boolean mask; None: none. A ``category``
        column's categories are stored (``categories_``) and a DataFrame at
        predict is mapped to them by value, not by its own codes; a value not
        seen at fit counts as missing (with a warning). Text (object or
        string) columns are refused: convert them to ``category``. Given as
        numbers (an array), the values must be level codes 0, 1, ..., at most
        ``MAX_CATEGORIES`` (255) levels, NaN for missing (ValueError
        otherwise, at fit and predict). A split sends a set of levels left:
        in each node the levels are ordered by their class composition (two
        classes: the share of one, optimal among all partitions for AUC, Gini
        and entropy; more: the first principal component of their class
        proportions, Coppersmith, Hong & Hosking 1999) and cut as an ordered
        feature (``nsplit`` draws cuts among the ordered levels). Missing
        values and levels absent from a node at fit go where the node sends
        missing values. Not available for Dask input.
    min_samples_split : int or float, default=2
        A node with fewer distinct training cases is a leaf; a float is that
        fraction of the training cases, rounded up (see `AUCTreeClassifier`).
    max_leaf_nodes : int or None, default=None
        Grow each tree best first to at most this many leaves (see
        `AUCTreeClassifier`). On dask collections: the same rule on the
        trees grown there (`aucforest._leaf_budget`).
    min_impurity_decrease : float, default=0.0
        A split is made only if it decreases the weighted impurity by at
        least this; the impurity is Gini's under the AUC criteria (see
        `AUCTreeClassifier`).
    ccp_alpha : float, default=0.0
        Minimal cost-complexity pruning of each tree (see `AUCTreeClassifier`;
        Gini node risks under the AUC criteria), before the collapse to
        ``predict_min_samples_``.

    Attributes
    ----------
    estimators_ : list of AUCTreeClassifier
        The fitted trees, collapsed to ``predict_min_samples_``.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_classes_ : int
        Number of classes.
    class_prior_ : ndarray of shape (n_classes,)
        ``pi_k`` used by the RFQ rule: class frequencies weighted by
        sample_weight (uniform under ``balanced_bootstrap``); class weights
        act on top of it as costs.
    draw_class_weights_ : ndarray of shape (n_classes,)
        Effective weight ``w'_k`` of each class in the trees' draws relative
        to its share of the training set (all 1 without ``balanced_bootstrap``
        and ``class_weight``): a cost-matrix ``decision`` decides from
        ``p_k(x)`` proportional to ``predict_proba(x)[:, k] / w'_k``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of X, when X had string column names.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Mean over trees of the normalised weighted decrease of the split
        statistic.
    estimators_samples_ : list of ndarray
        Indices of the cases each tree drew (regenerated from its seed).
    oob_decision_function_ : ndarray of shape (n_samples, n_classes)
        Out-of-bag class probabilities; NaN for rows that were in every
        tree's sample. Not kept by a fit on dask collections: see
        `oob_decision_function`.
    oob_score_ : float
        OOB AUC over the rows with OOB predictions.
    oob_gmean_ : float
        OOB G-mean of the predictions under the current ``decision``.
    max_bins_ : int or None
        The ``max_bins`` the trees were grown with ("auto" resolved).
    is_categorical_ : ndarray of shape (n_features_in_,), bool
        The categorical features.
    categories_ : list of length n_features_in_
        The categories of each ``category`` column, in their order at fit
        (the level codes 0, 1, ... the trees split); None for the other
        features, also for a categorical feature given as codes.
    predict_min_samples_ : int
        The node size the trees were collapsed to.
    oob_scores_by_min_samples_ : dict of int to float
        Under ``predict_min_samples="oob"``, when a choice was made: the OOB
        score of every candidate.
    oob_gmeans_by_min_samples_ : dict of int to float
        Under ``predict_min_samples="oob"``, when a choice was made: the OOB
        G-mean of every candidate under the ``decision`` of the fit.

    See Also
    --------
    AUCTreeClassifier : One tree of the same engine.
    aucforest.inspection.oob_importance : Out-of-bag permutation importance.
    aucforest.inspection.shap_values : Exact TreeSHAP values of the forest.

    Notes
    -----
    NaN in X marks a missing value, handled natively by the trees (see
    `AUCTreeClassifier`); infinite values raise ValueError. X given as a dask
    array or DataFrame trains with its rows on the dask workers and predicts
    lazily. A scipy sparse X trains on its columns' stored entries (CSC) and
    predicts from its rows (CSR), growing the trees grown on ``X.toarray()``;
    `aucforest.inspection` takes dense X only.

    The forest is a sequence of its trees: ``len(forest)``, ``forest[i]`` and
    iteration, as scikit-learn's ensembles. Tree i grows from its own
    ``random_state`` (``estimators_[i].random_state``, which also draws its
    sample), so ``clone(forest[i]).fit(X[s], y[s])`` with
    ``s = forest.estimators_samples_[i]`` grows tree i again, as scikit-learn
    promises, when the trees are not collapsed (``predict_min_samples_`` 1),
    X is not binned and, with ``nsplit`` set, the draw is without replacement
    and X has few tied values (``nsplit`` draws among the node's cases).

    Where it differs from scikit-learn's ``RandomForestClassifier`` by design
    (docs/sklearn_parity.md): ``oob_score_`` is the OOB AUC, not the
    accuracy; the default ``decision`` is RFQ, not the argmax, and the
    defaults of ``criterion``, ``max_features``, ``nsplit``, ``replacement``,
    ``max_bins`` and ``predict_min_samples`` differ
    (``criterion="gini", max_features="sqrt", nsplit=None, replacement=True,
    max_bins=None, decision="argmax", predict_min_samples=1`` are
    scikit-learn's); the AUC criterion ignores weights that are equal within a
    class (``class_weight``); y with a single class is refused; y must be
    one column.

    References
    ----------
    H. Ishwaran, M. Lu and U. B. Kogalur, "AUC-splitting for multiclass
    random forests", randomForestSRC vignette.
    R. O'Brien and H. Ishwaran, "A random forests quantile classifier for
    class imbalanced data", Pattern Recognition 90 (2019) 232-249.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from aucforest import AUCForestClassifier
    >>> X, y = load_wine(return_X_y=True)
    >>> forest = AUCForestClassifier(100, oob_score=True, random_state=0).fit(X, y)
    >>> bool(forest.oob_score_ > 0.95)
    True
    """

    _parameter_constraints = {
        **TREE_PARAMETER_CONSTRAINTS,
        "max_bins": [*TREE_PARAMETER_CONSTRAINTS["max_bins"], StrOptions({"auto"})],
        # int32: a forest holds one int32 seed per tree, drawn up front
        "n_estimators": [Interval(Integral, 1, int(np.iinfo(np.int32).max), closed="both")],
        "bootstrap": ["boolean"],
        "max_samples": [
            None,
            # an index-sized draw; with replacement also at most
            # CaseDraws.MAX_DRAWS_PER_CASE times n_samples (checked at fit)
            Interval(Integral, 1, int(np.iinfo(np.intp).max), closed="both"),
            # a fraction of n; above 1 only with replacement (scikit-learn >= 1.5)
            Interval(RealNotInt, 0.0, None, closed="right"),
        ],
        "replacement": ["boolean"],
        "balanced_bootstrap": ["boolean"],
        # int32, as the kernel's node sizes (Tree.apply and the out-of-bag sums)
        "predict_min_samples": [Interval(Integral, 1, int(np.iinfo(np.int32).max),
                                         closed="both"),
                                StrOptions({"oob"})],
        "class_weight": [StrOptions({"balanced", "balanced_subsample"}), dict, None],
        # parsed with the fitted classes by DecisionRule.parse (one set of messages)
        "decision": "no_validation",
        "oob_score": ["boolean", callable],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
    }

    def __init__(self, n_estimators=300, *, criterion="auc", max_features="ceil_sqrt",
                 max_depth=None, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_bins="auto", nsplit=10, bootstrap=True, max_samples=None, replacement=False,
                 balanced_bootstrap=False, class_weight=None, decision=DEFAULT_DECISION,
                 predict_min_samples="oob", oob_score=False, n_jobs=None, random_state=None,
                 verbose=0, warm_start=False, categorical_features="from_dtype",
                 min_samples_split=2, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 ccp_alpha=0.0):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_bins = max_bins
        self.nsplit = nsplit
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.replacement = replacement
        self.balanced_bootstrap = balanced_bootstrap
        self.class_weight = class_weight
        self.decision = decision
        self.predict_min_samples = predict_min_samples
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.categorical_features = categorical_features
        self.min_samples_split = min_samples_split
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.ccp_alpha = ccp_alpha

    # ------------------------------------------------------------------ fit

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Grow the forest on (X, y), optionally weighting the cases.

        The new model is built on a staging copy and published in one
        assignment: a fit that fails or is interrupted leaves the previous
        model intact, and a concurrent reader sees the old model or the new
        one, never a mix (see `fit_atomically`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; NaN marks a missing value.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative case weights (None: all one).

        Returns
        -------
        self : AUCForestClassifier
            The fitted forest.
        """
        from . import _dask  # dask collections: rows stay on the workers
        if _dask.is_dask_collection(X):
            self._check_dask_params()
            return _dask.fit(self, X, y, sample_weight)
        previous = vars(self) if self.warm_start and self.__sklearn_is_fitted__() else None
        if previous is not None and self.n_estimators == len(previous["estimators_"]):
            warnings.warn("Warm-start fitting without increasing n_estimators does not fit "
                          "new trees.", UserWarning)
            if not self.oob_score or "oob_score_" in previous:
                return self
            # out-of-bag estimates asked for after the trees were grown: computed
            # over the kept trees (as scikit-learn does), no tree is added
        return fit_atomically(self, lambda staging: staging._fit(X, y, sample_weight, previous))

    def _fit(self, X, y, sample_weight, previous=None):
        check_counts_are_not_booleans(self)
        self._check_sampling_params()
        # a warm start maps the levels by value to the first fit's categories (its
        # trees read those codes), checking the columns' names and order
        X, is_categorical, categories = fit_categories(X, self.categorical_features, previous)
        X, y, self.classes_, y_encoded, sample_weight = validate_training_data(
            self, X, y, sample_weight,  # sample_weight None: all one
            order=training_layout(self.max_bins, X))
        self.n_classes_ = n_classes = self.classes_.shape[0]
        DecisionRule.parse(self.decision, n_classes)  # a bad rule fails before the trees grow
        class_weights = self._class_weights(y)
        weights = weight_product(sample_weight, class_weights)
        self.class_prior_ = self._class_prior(y_encoded, sample_weight)
        # w'_k of the trees' draws: a cost-matrix decision undoes them (`decide`)
        self.draw_class_weights_ = draw_class_weights(self, y, sample_weight)

        random_state = check_random_state(self.random_state)
        seeds = random_state.randint(MAX_SEED, size=self.n_estimators)
        sampler = TreeSampler(self, y, y_encoded, sample_weight, weights)
        self._case_draws = sampler.draws  # for estimators_samples_
        self._oob_source = KeptInMemory() if self.oob_score else NotKept()
        self._n_samples_bootstrap = sampler.draws.n_draws  # scikit-learn's name
        self.max_bins_ = resolve_max_bins(self.max_bins, X.shape[0])
        self.is_categorical_, self.categories_ = resolve_fitted(
            self.categorical_features, X.shape[1], is_categorical, categories)
        check_categorical_codes(X, self.is_categorical_, getattr(self, "feature_names_in_", None))
        params = dict(tree_params(self), max_bins=self.max_bins_)
        positive = y_encoded if sample_weight is None else y_encoded[sample_weight > 0]
        candidates = node_size_candidates(self.predict_min_samples, self.bootstrap,
                                          np.bincount(positive, minlength=n_classes))
        fit_X = training_matrix(X, self.max_bins_, random_state,  # bin codes when max_bins_ is set
                                self.is_categorical_, self.n_jobs)
        tables = distinct_value_tables(X) if self.max_bins_ is None and self.nsplit else None
        oob = None
        if self.oob_score:
            oob = out_of_bag_sums(X, n_classes, candidates, self.n_estimators)
        elif len(candidates) > 1:
            oob = out_of_bag_sums(X, n_classes, candidates, self.n_estimators,
                                  cases_choosing_node_size(y_encoded, n_classes, random_state))
        # (random_state, parameters, tree as grown) of every tree, kept ones first
        grown = self._warm_start_trees(previous, X.shape[1], candidates)
        for tree_seed, _, tree_ in grown:  # their OOB sums, in the order of a single fit
            if oob is not None:
                oob.add(tree_, sampler.draw(seeded_rng(tree_seed))[oob.cases])
        new_seeds = seeds[len(grown):]
        fitted = Parallel(n_jobs=self.n_jobs, prefer="threads", return_as="generator",
                          batch_size=trees_per_task(X.shape[0], len(new_seeds),
                                                     self.n_jobs))(
            delayed(_fit_tree)(sampler, fit_X, y_encoded, n_classes, params, seed, tables,
                               counts_of=None if oob is None else oob.cases,
                               is_categorical=self.is_categorical_)
            for seed in new_seeds)
        with progress(total=len(new_seeds), enabled=self.verbose > 0,
                      description="trees") as bar:
            for seed, (tree_, counts) in zip(new_seeds, fitted):  # as they arrive
                bar.step(tree_)
                if oob is not None:
                    oob.add(tree_, counts)
                # held packed until the node size is chosen (`Tree.packed`)
                grown.append((seed, params, tree_.packed()))
                del tree_
        self.predict_min_samples_ = candidates[0]
        if oob is not None:
            self._set_oob_estimates(oob.labels(y_encoded), oob)
        # the trees are the model: each predicts from the node size chosen
        nodes = sum(tree_.node_count for _, _, tree_ in grown) * (n_classes + 8)
        features = feature_attributes(self)  # names and categories, as the forest reads X
        if self.warm_start and self.predict_min_samples_ > 1:  # to choose again later
            self._grown_trees_ = [_unpacked(tree_) for _, _, tree_ in grown]
            grown = [(seed, params_, tree_) for (seed, params_, _), tree_ in
                     zip(grown, self._grown_trees_)]
        self.estimators_ = Parallel(n_jobs=_tail_jobs(self.n_jobs, nodes),
                                    require="sharedmem")(
            delayed(_predicting_tree)(tree_, self.predict_min_samples_, self.classes_,
                                      X.shape[1], tree_seed, tree_params_, features)
            for tree_seed, tree_params_, tree_ in _handed_over(grown))

    def _warm_start_trees(self, previous, n_features, candidates):
        """(random_state, parameters, tree as grown) of the trees a warm start keeps
        from the ``previous`` model (None: a new forest, no tree kept)."""
        if previous is None:
            return []
        estimators = previous["estimators_"]
        if self.n_estimators < len(estimators):
            raise ValueError(f"n_estimators={self.n_estimators} must be at least the "
                             f"{len(estimators)} trees of the fitted forest when "
                             "warm_start=True")
        if (previous["n_features_in_"] != n_features
                or not np.array_equal(previous["classes_"], self.classes_)):
            raise ValueError("warm_start=True adds trees grown on the data of the first fit: "
                             "X and y must have the same features and classes")
        first_categorical = previous.get("is_categorical_")
        if first_categorical is not None \
                and not np.array_equal(first_categorical, self.is_categorical_):
            raise ValueError("warm_start=True adds trees grown on the data of the first fit: "
                             "its categorical features were "
                             f"{_feature_list(previous, first_categorical)}, X gives "
                             f"{_feature_list(previous, self.is_categorical_)}; pass X as at "
                             "the first fit")
        fitted_size = previous["predict_min_samples_"]
        trees = previous.get("_grown_trees_")
        if trees is None:
            if fitted_size > 1 and tuple(candidates) != (fitted_size,):
                raise ValueError(
                    "warm_start=True chooses the node size again over all trees, which needs "
                    "the trees as grown; this forest kept only its trees collapsed to "
                    f"predict_min_samples_={fitted_size}. Fit with warm_start=True from the "
                    "first fit (the forest then keeps them), or set predict_min_samples="
                    f"{fitted_size}")
            trees = [estimator.tree_ for estimator in estimators]
        return [(estimator.random_state, tree_params(estimator), tree_)
                for estimator, tree_ in zip(estimators, trees)]

    def _set_fit_provenance(self, *, case_draws=None, oob_source=None, fit_stats=None):
        """What a fit made elsewhere hands over (the Dask fit, a model file, the
        command line's training data): how the trees drew their cases
        (`estimators_samples_`, out-of-bag inspection), where the out-of-bag
        predictions come from (`aucforest._oob_source`) and the fit's
        counters. The one place outside ``fit`` that sets them; a refit
        drops them (`fit_atomically`). None leaves a value as it is."""
        if case_draws is not None:
            self._case_draws = case_draws
        if oob_source is not None:
            self._oob_source = oob_source
        if fit_stats is not None:
            self._dask_fit_stats = fit_stats

    def __sklearn_is_fitted__(self):
        """Fitted once a fit has published at least one tree."""
        return len(vars(self).get("estimators_", ())) > 0

    # ------------------------------------------------- the trees as a sequence

    def __len__(self):
        """Number of fitted trees (scikit-learn's ensembles)."""
        return len(self.estimators_)

    def __getitem__(self, index):
        """The fitted tree (`AUCTreeClassifier`) at ``index``."""
        return self.estimators_[index]

    def __iter__(self):
        """The fitted trees in order."""
        return iter(self.estimators_)

    @property
    def estimator(self):
        """The tree template (scikit-learn's ``estimator``), unfitted.

        An `AUCTreeClassifier` with the forest's tree parameters.
        """
        return AUCTreeClassifier(**tree_params(self))

    def _check_dask_params(self):
        """Refuse parameters the distributed (level-wise) growth does not apply."""
        defaults = {"min_samples_split": 2, "min_impurity_decrease": 0.0, "ccp_alpha": 0.0}
        changed = [name for name, value in defaults.items() if getattr(self, name) != value]
        if callable(self.oob_score):
            changed.append("a callable oob_score")
        if changed:
            raise ValueError(f"{', '.join(changed)}: not available for dask collections; fit "
                             "on a numpy array or DataFrame, or leave the defaults")

    def _check_sampling_params(self):
        """Refuse, before the data is touched, sampling options that contradict
        each other and an ``n_jobs`` whose threads this process cannot start
        (a memory or thread limit: each thread reserves its stack), which the
        thread pool would otherwise report as an AttributeError from inside
        CPython's multiprocessing.pool."""
        if not self.bootstrap and self.max_samples is not None:
            raise ValueError("`max_sample` cannot be set if `bootstrap=False`. Either switch "
                             "to `bootstrap=True` or set `max_sample=None` (max_samples "
                             "sizes the bootstrap draws).")
        if not self.bootstrap and self.balanced_bootstrap:
            raise ValueError("balanced_bootstrap=True needs bootstrap=True.")
        if self.oob_score and not self.bootstrap:
            raise ValueError("Out of bag estimation only available if bootstrap=True.")
        from joblib.parallel import ThreadingBackend, get_active_backend

        backend, _ = get_active_backend(prefer="threads")
        if not isinstance(backend, ThreadingBackend):
            return  # another backend (dask, processes) starts its own workers
        n_threads = backend.effective_n_jobs(self.n_jobs)  # what its pool starts at once
        release, threads = threading.Event(), []
        try:
            while n_threads > 1 and len(threads) < n_threads:
                thread = threading.Thread(target=release.wait, daemon=True)
                thread.start()
                threads.append(thread)
        except RuntimeError as error:  # "can't start new thread"
            raise ValueError(
                f"n_jobs={self.n_jobs} needs {n_threads} threads, but this process could start "
                f"only {len(threads)} ({error}): it runs under a memory or thread limit; use "
                "a smaller n_jobs") from None
        finally:
            release.set()
            for thread in threads:
                thread.join()

    def _class_weights(self, y):
        """Class weight of each case over the whole training set ("balanced_subsample"
        is "balanced" here; per tree it is recomputed on the tree's sample),
        rescaled to a maximum of 1; None without class weights (no n-sized ones)."""
        if self.class_weight is None:
            return None
        if self.class_weight == "balanced_subsample":
            return compute_sample_weight("balanced", y)
        classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
        return class_weights_of_counts(self.class_weight, classes, counts)[codes]

    def _class_prior(self, y_encoded, sample_weight):
        """pi_k of the RFQ rule: the class frequencies the trees see before class
        weights (sample weights only; uniform under the balanced bootstrap).

        Class weights act on top of it as costs: leaf proportions carry them,
        pi_k does not, so up-weighting a class never makes the forest predict
        it less often.
        """
        if self.balanced_bootstrap:
            return np.full(self.n_classes_, 1.0 / self.n_classes_)
        totals = np.bincount(y_encoded, weights=sample_weight, minlength=self.n_classes_)
        return totals / totals.sum()

    def _set_oob_estimates(self, y_encoded, oob):
        """OOB decision function and score at the node size chosen: among
        several candidates, the one with the largest OOB AUC + OOB G-mean
        (the G-mean under the forest's decision at fit, not under RFQ: see
        docs/evidence/imbalanced.md, "The G-mean under the decision at fit"),
        the first of equal ones."""
        n_candidates = len(oob.min_samples)
        rule = self.decision_rule_  # parsed once for every candidate

        def figures(candidates):  # OOB AUC, and OOB G-mean when there is a choice
            found = []
            for c in candidates:
                proba, codes = oob.proba_with_oob(c, y_encoded)  # one copy for both figures
                found.append((c, auc_of_rows(codes, proba, self.classes_),
                              gmean_of_rows(codes, proba, self.class_prior_, rule,
                                            self.draw_class_weights_)
                              if n_candidates > 1 else None))
            return found

        if self.oob_score:
            oob.warn_missing()
        with warnings.catch_warnings():
            if not self.oob_score:  # an internal choice: its caveats are not the user's
                warnings.simplefilter("ignore", UserWarning)
            # the candidates in the fit's threads (numpy sorts without the GIL)
            n_jobs = min(n_candidates, _tail_jobs(
                effective_n_jobs(self.n_jobs),
                n_candidates * oob.n_trees.shape[0] * oob.n_classes))
            found = sorted(sum(Parallel(n_jobs=n_jobs, require="sharedmem")(
                delayed(figures)(range(j, n_candidates, n_jobs)) for j in range(n_jobs)), []))
        _, scores, gmeans = zip(*found)
        best = 0
        if len(scores) > 1:
            self.oob_scores_by_min_samples_ = dict(zip(oob.min_samples, scores))
            self.oob_gmeans_by_min_samples_ = dict(zip(oob.min_samples, gmeans))
            merits = np.add(scores, gmeans)
            if not np.all(np.isnan(merits)):
                best = int(np.nanargmax(merits))
        self.predict_min_samples_ = oob.min_samples[best]
        if self.oob_score:
            self.oob_decision_function_ = oob.decision_function(best)  # its own array
            self.oob_score_ = scores[best]
            self.oob_labels_ = y_encoded  # for oob_gmean_ under a later decision
            if callable(self.oob_score):
                self.oob_score_ = self._callable_oob_score(y_encoded,
                                                           self.oob_decision_function_)

    def _callable_oob_score(self, y_encoded, proba):
        """``oob_score(y_true, y_pred)`` over the cases with out-of-bag
        predictions: their labels and the classes the forest's ``decision``
        gives for their OOB probabilities (scikit-learn >= 1.4 passes the
        argmax class)."""
        has_oob = ~np.isnan(proba).any(axis=1)
        return self.oob_score(self.classes_[y_encoded[has_oob]], self._decide(proba[has_oob]))

    @property
    def oob_gmean_(self):
        """OOB G-mean of the predictions under the current ``decision``."""
        model = self._frozen()  # one model and one decision, whatever another thread does
        check_is_fitted(model)
        # a fit on dask collections keeps the bounded sample oob_score_ is computed on
        source = oob_source(model)
        rows = source.scored_rows(model)
        if rows is None:
            check_is_fitted(model, ["oob_decision_function_", "oob_labels_"])
        labels, proba = rows
        if labels is None:  # loaded from a file without the training labels
            return source.saved_gmean
        return oob_gmean(labels, proba, model.class_prior_, model.decision_rule_,
                         getattr(model, "draw_class_weights_", None))

    def oob_decision_function(self, X, y, sample_weight=None):
        """Out-of-bag class probabilities of the training rows of a Dask fit.

        A lazy dask array, computed where the rows are.

        A forest fitted on dask collections keeps no n-row
        ``oob_decision_function_`` (it would keep the training rows on the
        workers and travel with pickles and model files): each row's
        multiplicity in each tree is a function of (the tree's key, the row's
        global index), so the out-of-bag rows are drawn again from the
        training collections given here. The array holds them while it is
        kept.

        Parameters
        ----------
        X : dask array or dask DataFrame of shape (n_samples, n_features)
            The training rows, in the order of the fit (any chunking).
        y : dask array or Series of shape (n_samples,)
            The training labels (they set each row's draw class).
        sample_weight : dask array or Series of shape (n_samples,), default=None
            The training sample weights (under ``balanced_bootstrap`` a row
            of weight 0 is never drawn).

        Returns
        -------
        dask array of shape (n_samples, n_classes)
            Float64; NaN for rows that were in every tree's draw.

        Raises
        ------
        ValueError
            For a forest fitted in memory (read ``oob_decision_function_``),
            one read from a model file (it keeps no draws), or X of another
            number of rows or features than at fit.
        """
        from . import _dask
        return _dask.oob_decision_function(self._frozen(), X, y, sample_weight)

    def __getattr__(self, name):
        """Only for attributes that are not set: say why a fit on dask
        collections has no ``oob_decision_function_``."""
        source = vars(self).get("_oob_source")
        if name == "oob_decision_function_" and source is not None and source.on_workers:
            from ._dask import OOB_NOT_KEPT
            raise AttributeError(OOB_NOT_KEPT)
        attribute = getattr(type(self), name, None)
        if isinstance(attribute, property):  # its own AttributeError, which says why
            return attribute.fget(self)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags

    # -------------------------------------------------------------- predict
    # Every public method reads the fitted state once (`_frozen`), checks X
    # against that copy and hands only its trees to compiled code: a refit or
    # set_params in another thread cannot mix two models within one call.

    def _frozen(self):
        """This forest as it is now (`aucforest.tree.frozen`): a copy whose
        parameters and fitted model no refit or set_params can change."""
        return frozen(self)

    def _validate_X_predict(self, X, accept_sparse=True):
        """X as the trees read it, checked against this estimator's fitted state:
        float32 in C order, or a sparse X as `SparseRows` (``accept_sparse=False``:
        scikit-learn's TypeError instead). Call it on a `_frozen` copy and
        predict with that copy's trees."""
        check_is_fitted(self)
        X = predict_codes(self, in_memory(X))  # a DataFrame's categories mapped by value
        X = validate_data(self, X, dtype=np.float32, order="C", reset=False,
                          accept_sparse="csr" if accept_sparse else False,
                          ensure_all_finite="allow-nan")
        check_categorical_codes(X, getattr(self, "is_categorical_", None),
                                getattr(self, "feature_names_in_", None), sparse="read")
        return SparseRows(X) if is_sparse(X) else X  # converted once for every tree

    def predict_proba(self, X):
        """Class probabilities: the mean of the trees' ``predict_proba``.

        Each tree gives the weighted class proportions of the leaf a row falls
        in (the trees are collapsed to ``predict_min_samples_`` when they are
        grown). Reads the fitted model once, so a concurrent refit cannot mix
        two models; Ctrl-C stops it between trees.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            NaN marks a missing value.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        from . import _dask  # dask collections: lazy, on the workers
        model = self._frozen()
        if _dask.is_dask_collection(X):
            return _dask.predict_proba(model, X)
        X = model._validate_X_predict(X)
        return mean_tree_proba(X, vars(model), model.n_jobs)

    def predict_log_proba(self, X):
        """Natural logarithm of `predict_proba` (-inf where a probability is 0).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows; NaN marks a missing value.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """Class of each row under the fitted decision rule (see ``decision``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows; NaN marks a missing value.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Predicted class labels.
        """
        from . import _dask  # dask collections: lazy, on the workers
        model = self._frozen()
        if _dask.is_dask_collection(X):
            return _dask.predict(model, X)
        X = model._validate_X_predict(X)
        return model._decide(mean_tree_proba(X, vars(model), model.n_jobs))

    def decide(self, proba):
        """Class of each row of probabilities under the fitted decision rule.

        What ``predict`` gives for rows whose ``predict_proba`` is ``proba``
        (e.g. probabilities from an exported model, `aucforest.to_treelite`).

        Parameters
        ----------
        proba : array-like of shape (n_samples, n_classes)
            Class probabilities, columns in ``classes_`` order.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Class labels.
        """
        check_is_fitted(self)
        model = self._frozen()
        proba = check_array(proba, dtype=np.float64)
        if proba.shape[1] != model.n_classes_:
            raise ValueError(f"proba has {proba.shape[1]} columns; the forest has "
                             f"{model.n_classes_} classes")
        return model._decide(proba)

    def _decide(self, proba):
        """Classes the fitted decision rule gives for class probabilities ``proba``
        (call it on the `_frozen` copy that gave them)."""
        return decide_classes(proba, vars(self), self.decision_rule_)

    @property
    def decision_rule_(self):
        """The ``decision`` parameter parsed for the fitted classes.

        A `aucforest._decision_rule.DecisionRule` (kind, threshold or costs, its
        plain-data form), read from ``decision`` at each call, so that
        ``set_params(decision=...)`` after a fit takes effect.
        """
        check_is_fitted(self, "n_classes_")  # also on a staging copy during a fit
        return DecisionRule.parse(self.decision, self.n_classes_)

    def apply(self, X):
        """Leaf of each row in each tree.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows; NaN marks a missing value.

        Returns
        -------
        leaves : ndarray of shape (n_samples, n_estimators)
            ``estimators_[i].tree_.value[leaves[:, i], 0]`` is tree i's
            ``predict_proba``.
        """
        from . import _dask  # dask collections: lazy, on the workers
        model = self._frozen()
        if _dask.is_dask_collection(X):
            return _dask.apply(model, X)
        X = model._validate_X_predict(X)
        return np.column_stack([tree.tree_.apply(X) for tree in model.estimators_])

    def decision_path(self, X):
        """The nodes of every tree each row passes through, as scikit-learn's forests give them.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows; NaN marks a missing value.

        Returns
        -------
        indicator : scipy.sparse.csr_matrix of shape (n_samples, n_nodes)
            1 where a row passes through a node; tree i's nodes are the columns
            ``n_nodes_ptr[i]:n_nodes_ptr[i + 1]``.
        n_nodes_ptr : ndarray of shape (n_estimators + 1,)
            Where each tree's columns start in ``indicator``.
        """
        model = self._frozen()
        X = model._validate_X_predict(X)
        paths = [tree.tree_.decision_path(X) for tree in model.estimators_]
        n_nodes_ptr = np.cumsum([0] + [path.shape[1] for path in paths])
        return sparse.hstack(paths, format="csr"), n_nodes_ptr

    @property
    def feature_importances_(self):
        """Mean over trees of the normalised weighted decrease of the split statistic."""
        model = self._frozen()
        check_is_fitted(model)
        importances = np.zeros(model.n_features_in_)
        for tree in model.estimators_:  # a running sum: one array, not one per tree
            importances += tree.tree_.compute_feature_importances()
        importances /= len(model.estimators_)
        total = importances.sum()
        return importances / total if total > 0 else importances

    @property
    def estimators_samples_(self):
        """Indices of the cases each tree drew, as in scikit-learn.

        One array per tree (int32): in draw order with repeats when drawing
        with replacement, in increasing order without
        (``np.bincount(s, minlength=n_samples)`` gives the multiplicities,
        zero for the tree's out-of-bag cases). Regenerated from each tree's
        seed (``estimators_[i].random_state``) with the draw the fit made,
        never stored. Not available on a forest read from a model file
        (`aucforest.inspection` rebuilds the draws from the training y).
        """
        model = self._frozen()
        check_is_fitted(model)
        draws = getattr(model, "_case_draws", None)
        if draws is None:
            raise AttributeError("estimators_samples_ needs the forest's fit in this session; "
                                 "a forest read from a model file does not keep it")
        return [draws.indices(draws.tree_rng(tree)) for tree in model.estimators_]

    def _in_bag_counts(self, tree_index):
        """Multiplicity of each training case in tree ``tree_index``'s sample."""
        model = self._frozen()
        draws = model._case_draws
        return draws.counts(draws.tree_rng(model.estimators_[tree_index]))


def _fit_tree(sampler, X, y_encoded, n_classes, params, seed, tables=None, counts_of=None,
              is_categorical=None):
    """Draw one tree's sample from its seed and grow the tree on it; returns
    the tree and the multiplicities of the cases ``counts_of`` (None: no
    counts; ``aucforest._oob_estimates.ALL_CASES``: every case).

    Module level, with the data as arguments, so that joblib's Dask backend
    can ship X to the workers once (scatter) and the result is the same
    whatever backend or number of workers runs it. Only the counts asked for
    outlive the draw: the tree grows without an n-sized copy of them.
    """
    counts = sampler.draw(seeded_rng(seed))
    weights = sampler.tree_weights(counts)
    kept = None if counts_of is None else counts[counts_of]  # ALL_CASES: a view
    del counts
    # the tree's own random_state (seed) seeds its growth, as in a standalone fit
    tree_ = grow_tree(X, y_encoded, weights, n_classes,
                      seed=tree_growth_seed(seeded_rng(seed)), tables=tables,
                      is_categorical=is_categorical, **params)
    return tree_, kept


# The parts of a fit after the trees grow (the node-size choice's figures,
# collapsing the trees) run in the fit's threads from this many values on (OOB
# proportions, or nodes x (classes + 8)): below, starting the threads costs
# more than they save (at 20,000 rows, K = 3, two threads were slower than one).
TAIL_THREADS_MIN_VALUES = 1_000_000


def _tail_jobs(n_jobs, n_values):
    """n_jobs for a part of the fit's tail over n_values values (1: in turn)."""
    return n_jobs if n_values >= TAIL_THREADS_MIN_VALUES else 1


def _handed_over(items):
    """The items of a list, each dropped from it as it is handed over: a
    grown tree is freed once its collapsed tree is made, so that the grown
    trees and the model are not held whole at once."""
    for i in range(len(items)):
        item, items[i] = items[i], None
        yield item


def _unpacked(tree_):
    """A grown `Tree` from a `PackedTree` (a warm start's kept trees are Trees)."""
    return tree_.unpacked() if isinstance(tree_, PackedTree) else tree_


def _predicting_tree(tree_, min_samples, classes, n_features, seed, params, features):
    """The fitted `AUCTreeClassifier` of a grown tree (or `PackedTree`),
    collapsed to min_samples."""
    return fitted_tree(collapsed(tree_, min_samples, params["criterion"]), classes,
                       n_features, seed, params, features)


def _feature_list(model, mask):
    """The names (or indices) of the features ``mask`` selects."""
    names = model.get("feature_names_in_")
    return [str(names[j]) if names is not None else int(j) for j in np.flatnonzero(mask)]
