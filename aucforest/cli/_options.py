"""Argument types and the option groups that several ``aucforest`` subcommands
share (forest, column, data and parallel options), and the forest parameters
that fit and compare take from them."""
import argparse
import csv
import os

import numpy as np

from .._encoding import DEFAULT_NA_VALUES
from .._forest import AUCForestClassifier
from .._oob_estimates import MIN_CLASS_CASES_TO_CHOOSE


#: How every output file is written (the epilog of the commands that write files).
OUTPUT_FILES = ("Output files are replaced only once complete: a failed or interrupted command "
                "leaves the previous file as it was. A symbolic link is written through to its "
                "target (the link is kept); a folder, FIFO or device is refused before any work.")


def _add_forest_options(parser):
    parser.add_argument("--max-features", type=_max_features, default="ceil_sqrt", metavar="M",
                        help="features examined per node: ceil_sqrt, sqrt (floor), log2, all, "
                             "an integer, or a fraction in (0, 1] (default: ceil_sqrt)")
    parser.add_argument("--max-depth", type=_positive_int, default=None, metavar="D",
                        help="maximum tree depth (default: none)")
    parser.add_argument("--min-samples-leaf", type=_positive_int, default=1, metavar="N",
                        help="minimum cases in each leaf (default: 1)")
    parser.add_argument("--class-weight", type=_class_weight, default=None, metavar="W",
                        help="balanced, balanced_subsample, or LABEL=WEIGHT,... "
                             "(default: none)")
    parser.add_argument("--balanced-bootstrap", action="store_true",
                        help="draw the same number of cases from every class for each tree")
    sampling = parser.add_mutually_exclusive_group()
    default_replacement = AUCForestClassifier().replacement
    sampling.add_argument("--without-replacement", dest="replacement", action="store_false",
                          default=default_replacement,
                          help="each tree draws 0.632 n cases without replacement (subsampling)"
                               + ("" if default_replacement else "; the default"))
    sampling.add_argument("--with-replacement", dest="replacement", action="store_true",
                          help="each tree draws a bootstrap sample of n cases"
                               + ("; the default" if default_replacement else ""))
    default_nsplit = AUCForestClassifier().nsplit
    parser.add_argument("--nsplit", type=_nsplit, default=default_nsplit, metavar="K",
                        help="evaluate K thresholds drawn at random among each node's distinct "
                             "values of a feature; 'all' evaluates every threshold (default: "
                             f"{'all' if default_nsplit is None else default_nsplit})")
    default_node_size = AUCForestClassifier().predict_min_samples
    parser.add_argument("--predict-min-samples", type=_node_size, default=default_node_size,
                        metavar="N",
                        help="trees predict from the deepest node with at least N training "
                             "cases; 'oob' chooses N out of bag (the leaf when a class has "
                             f"fewer than {MIN_CLASS_CASES_TO_CHOOSE} cases; default: "
                             f"{default_node_size})")
    parser.add_argument("--max-one-hot", type=_positive_int, default=None, metavar="LEVELS",
                        help="encode text columns as earlier versions did: one-hot up to LEVELS "
                             "levels, ordinal codes (split as if ordered) beyond (default: text "
                             "columns are categorical features, their levels split natively)")


def _add_column_options(parser, id_help):
    parser.add_argument("--id", metavar="COLUMN", help=id_help)
    parser.add_argument("--drop", action="append", default=[], metavar="COLUMN",
                        help="column not to use as a feature (repeat for several)")
    parser.add_argument("--keep", action="append", default=[], metavar="COLUMN",
                        help="use this column as a feature even though it looks like an "
                             "identifier: a text or integer column with at least 95%% of its "
                             "values distinct (in more than 50 rows), which is otherwise left out "
                             "with a warning (repeat for several)")


def _add_classification_option(parser):
    parser.add_argument("--classification", action="store_true",
                        help="the target holds class labels even though it looks continuous "
                             "or has many classes, which are refused without it: numbers that "
                             "are not all integers; more than 20 distinct values that are also "
                             "more than half the rows, or integers with fewer than 10 rows per "
                             "value on average; more than 100 distinct labels")


def _add_data_options(parser, model_default=False):
    markers = "the model's" if model_default else ", ".join(
        repr(v) for v in DEFAULT_NA_VALUES)
    parser.add_argument("--sep", metavar="CHAR",
                        help="field separator of a text file, e.g. ';' or '\\t' (default: tab "
                             "for .tsv/.tab, else comma)")
    parser.add_argument("--na-values", type=_na_values, metavar="LIST",
                        help=f"comma-separated cell texts that mark missing values, replacing "
                             f"the default list ({markers}; any case; an empty cell is "
                             "always missing)")


#: The --seed of every command that draws random numbers: fixed, so that the
#: same command on the same data gives the same result.
DEFAULT_SEED = 0


def _add_parallel_options(parser):
    parser.add_argument("--n-jobs", type=_n_jobs, default=-1, metavar="N",
                        help="threads (default: -1, all cores)")
    parser.add_argument("--seed", type=_seed, default=DEFAULT_SEED, metavar="S",
                        help=f"random seed, 0 to {MAX_SEED} (default: {DEFAULT_SEED}, fixed so "
                             "that the same command on the same data gives the same result)")


MAX_SEED = 2**32 - 1  # numpy.random.RandomState's range


def _node_size(text):
    """--predict-min-samples: 'oob' or a positive integer."""
    return "oob" if text.strip().lower() == "oob" else _positive_int(text)


def _nsplit(text):
    """--nsplit: 'all' (every threshold) or a positive integer."""
    return None if text.strip().lower() == "all" else _positive_int(text)


def _integer(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def _positive_int(text):
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _at_least_two(text):
    value = _integer(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be at least 2, got {text}")
    return value


def _seed(text):
    value = _integer(text)
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to {MAX_SEED}, got {text}")
    return value


def _n_jobs(text):
    value = _integer(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be a positive number of threads, or -1 for all "
                                         "cores (-2 for all but one, ...), got 0")
    return value


class CostMatrixFile(str):
    """``--decision FILE``: the path of a CSV cost matrix, read once the
    target's classes are known (`read_cost_matrix`)."""


def _decision(text):
    if text in ("rfq", "argmax"):
        return text
    try:
        threshold = float(text)
    except ValueError:
        threshold = None
    if threshold is None and os.path.isfile(text):
        return CostMatrixFile(text)
    if threshold is None or not 0 < threshold < 1:
        raise argparse.ArgumentTypeError(f"must be rfq, argmax or a threshold strictly between "
                                         f"0 and 1, or a CSV file of costs, got {text!r}"
                                         + ("" if threshold is not None else
                                            " (no such file)"))
    return threshold


def _cost_file(text):
    """``--costs FILE``: an existing CSV file of costs (read once the classes are
    known, `read_cost_matrix`)."""
    if not os.path.isfile(text):
        raise argparse.ArgumentTypeError(f"must be a CSV file of costs; no such file: {text!r}")
    return CostMatrixFile(text)


def _add_costs_option(parser, help_text):
    parser.add_argument("--costs", type=_cost_file, metavar="FILE",
                        help=f"{help_text}: a CSV file as for 'fit --decision' (a header 'true' "
                             "then the class labels, one row per true class: its label, then "
                             "the cost of predicting each header class)")


def _confidence_level(text):
    """``--confidence-level``: a coverage strictly between 0 and 1."""
    return _strictly_between_0_and_1(text)


def _alpha(text):
    """``--sets ALPHA``: the miss rate allowed in each class, in (0, 1)."""
    return _strictly_between_0_and_1(text, " (the miss rate allowed in each class)")


def _strictly_between_0_and_1(text, meaning=""):
    """``text`` as a float in the open interval (0, 1), or the argparse error saying so."""
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number strictly between 0 and 1{meaning}, "
                                         f"got {text!r}")
    return value


def read_cost_matrix(path, classes, option="--decision"):
    """The cost matrix of a CSV file, rows and columns in the order of ``classes``.

    The file has a header of class labels after a first cell (any name, e.g.
    "true"), then one row per true class: its label, then the cost of
    predicting each header class. Labels are matched as text to the target's.

    Parameters
    ----------
    path : str
    classes : ndarray of shape (n_classes,)
        The target's classes, sorted (the forest's ``classes_`` to be).
    option : str, default="--decision"
        The option that named the file, for messages.

    Returns
    -------
    list of list of float
    """
    names = [str(label) for label in classes]
    where = {name: k for k, name in enumerate(names)}

    def fail(problem):
        raise ValueError(f"{option} {path}: {problem} (the file needs a header row 'true' "
                         f"followed by the class labels {', '.join(names)}, then one row per "
                         "true class: its label and the cost of predicting each header class)")

    with open(path, newline="", encoding="utf-8-sig") as stream:
        rows = [row for row in csv.reader(stream) if any(cell.strip() for cell in row)]
    if not rows:
        fail("the file is empty")
    header = [cell.strip() for cell in rows[0][1:]]

    def positions(labels, what):
        unknown = [label for label in labels if label not in where]
        if unknown:
            fail(f"{what} names class {unknown[0]!r}, which the target does not have")
        duplicated = sorted({label for label in labels if labels.count(label) > 1})
        if duplicated:
            fail(f"{what} names class {duplicated[0]!r} twice")
        missing = [name for name in names if name not in labels]
        if missing:
            fail(f"{what} has no class {missing[0]!r}")
        return [where[label] for label in labels]

    columns = positions(header, "the header")
    body = rows[1:]
    order = positions([row[0].strip() for row in body], "the first column")
    costs = np.zeros((len(names), len(names)))
    for line, (row, j) in enumerate(zip(body, order), start=2):
        if len(row) != len(header) + 1:
            fail(f"line {line} has {len(row)} cells, the header {len(header) + 1}")
        for cell, k in zip(row[1:], columns):
            try:
                value = float(cell)
            except ValueError:
                value = None
            if value is None or not np.isfinite(value) or value < 0:
                fail(f"line {line}: cost {cell.strip()!r} (true {names[j]!r}, predicted "
                     f"{names[k]!r}) is not a finite number >= 0")
            costs[j, k] = value
    return costs.tolist()


def _max_features(text):
    if text in ("ceil_sqrt", "sqrt", "log2"):
        return text
    if text.lower() in ("all", "none"):
        return None
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError:
        pass
    try:
        fraction = float(text)
    except ValueError:
        fraction = None
    if fraction is None or not 0 < fraction <= 1:
        raise argparse.ArgumentTypeError(f"must be ceil_sqrt, sqrt, log2, all, a positive "
                                         f"integer or a fraction in (0, 1], got {text!r}")
    return fraction


def _class_weight(text):
    """"balanced", "balanced_subsample", or {label text: weight} (labels are
    matched to the target's labels once these are read)."""
    if text in ("balanced", "balanced_subsample"):
        return text
    weights = {}
    for item in text.split(","):
        label, equals, weight = item.rpartition("=")
        try:
            value = float(weight)
        except ValueError:
            value = None
        if not equals or not label.strip() or value is None or not np.isfinite(value) \
                or value < 0:
            raise argparse.ArgumentTypeError(
                f"must be balanced, balanced_subsample or LABEL=WEIGHT pairs separated by "
                f"commas with non-negative weights, e.g. 'yes=5,no=1'; got {text!r}")
        weights[label.strip()] = value
    return weights


def _na_values(text):
    return tuple(value.strip() for value in text.split(","))


def _forest_options(args):
    """The tree and sampling options shared by fit and compare."""
    return {"max_features": args.max_features, "max_depth": args.max_depth,
            "min_samples_leaf": args.min_samples_leaf, "class_weight": args.class_weight,
            "balanced_bootstrap": args.balanced_bootstrap,
            "replacement": args.replacement, "nsplit": args.nsplit,
            "predict_min_samples": args.predict_min_samples}
