"""scikit-learn's private names and the optional dependencies, in one place.

The package imports scikit-learn's private helpers only through this module,
so that a change in them is mended here once; optional dependencies are
imported through `optional_import`, which names the extra that installs them.
"""
import importlib
import sys

from sklearn.base import _fit_context
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import (Interval, InvalidParameterError, RealNotInt,
                                            StrOptions)
from sklearn.utils.validation import _check_sample_weight as check_sample_weight
from sklearn.utils.validation import validate_data as sklearn_validate_data

from ._sparse import check_structure, is_sparse

try:  # Platt's sigmoid fit of CalibratedClassifierCV (aucforest.calibration has a fallback)
    from sklearn.calibration import _SigmoidCalibration as SigmoidCalibration
except ImportError:  # pragma: no cover (a scikit-learn that renamed it)
    SigmoidCalibration = None

__all__ = ["Interval", "InvalidParameterError", "SigmoidCalibration", "StrOptions",
           "check_sample_weight", "fit_context", "in_memory", "optional_import", "safe_indexing",
           "validate_data"]

fit_context = _fit_context
safe_indexing = _safe_indexing


def validate_data(estimator, X="no_validation", y="no_validation", **check_params):
    """scikit-learn's ``validate_data``, after checking the index arrays of a
    sparse X (`aucforest._sparse.check_structure`): scikit-learn converts a
    sparse X between formats without checking them, and an index outside the
    shape is then read or written out of bounds."""
    if is_sparse(X):
        check_structure(X)
        if X.format in ("csr", "csc") and not X.has_canonical_format:
            # duplicates summed in X's own dtype, as X.toarray() sums them, before
            # scikit-learn casts the entries one by one
            X = X.copy()
            X.sum_duplicates()
    return sklearn_validate_data(estimator, X, y, **check_params)


def in_memory(X):
    """X itself, or a dask collection computed into memory (a pandas DataFrame
    or a numpy array), for an operation whose result is held in memory anyway
    (`decision_path`, SHAP values, OOB importance): its category columns are
    then mapped by value as an in-memory frame's are. Dask is not imported
    when it was never imported."""
    if "dask" not in sys.modules:
        return X
    from dask.base import is_dask_collection
    return X.compute() if is_dask_collection(X) else X


# optional dependency -> the extra of pyproject.toml that installs it
EXTRAS = {"matplotlib": "plot", "pyarrow": "parquet", "dask": "dask", "distributed": "dask",
          "pandas": "test", "shap": "test"}


def optional_import(module):
    """Import an optional dependency, or raise ImportError naming the extra that
    installs it (``pip install "aucforest[plot]"``).

    Parameters
    ----------
    module : str
        Dotted module name, such as ``"matplotlib.pyplot"``.

    Returns
    -------
    module
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        top = module.split(".")[0]
        extra = EXTRAS.get(top)
        hint = f'pip install "aucforest[{extra}]"' if extra else f"pip install {top}"
        raise ImportError(f"{module} is needed here but cannot be imported ({error}); "
                          f"{hint}") from error
