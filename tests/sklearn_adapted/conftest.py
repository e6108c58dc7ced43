"""Collection-time marks of the adapted scikit-learn tests (tables in generate.py):
sparse-input cases xfail (strict=False), heavy parametrizations deselected, and
under aucforest's defaults (the ``our_defaults`` parameter of the fixture
``adapted_variant``) the tests left out there and sparse input deselected."""
import numpy as np
import pytest
from scipy import sparse

from generate import (DESELECTED, KNOWN_DIFFERENCES, SPARSE_TESTS, SPARSE_XFAIL_REASON,
                      without_our_defaults)

ADAPTED_PREFIX = "test_adapted_"


@pytest.fixture
def global_random_seed():
    """scikit-learn's fixture (its conftest): seed 42 unless
    SKLEARN_TESTS_GLOBAL_RANDOM_SEED says otherwise (one seed)."""
    import os
    seed = os.environ.get("SKLEARN_TESTS_GLOBAL_RANDOM_SEED", "42")
    return int(seed.split("-")[0]) if seed not in ("any", "all") else 42


def _is_sparse_parameter(value):
    if isinstance(value, type):
        return issubclass(value, (sparse.spmatrix, sparse.sparray))
    if isinstance(value, str):
        return value.startswith("sparse")
    return sparse.issparse(value)


def _is_sklearn_regressor(value):
    return (isinstance(value, type) and value.__module__.startswith("sklearn.")
            and value.__name__.endswith("Regressor"))


def _source(item):
    name = item.path.stem
    if not name.startswith(ADAPTED_PREFIX):
        return None
    source = name[len(ADAPTED_PREFIX):]
    return source if source in SPARSE_TESTS else None


def _name_without_variant(item, variant):
    """The test's name without the id of its variant (the name the tables of
    generate.py give): ``test_x[sklearn_defaults-a-b]`` -> ``test_x[a-b]``."""
    name = item.name
    if variant is None or "[" not in name:
        return name
    base, ids = name[:-1].split("[", 1)
    rest = [part for part in ids.split("-") if part != variant]
    return f"{base}[{'-'.join(rest)}]" if rest else base


def pytest_configure(config):
    config.addinivalue_line("markers", "thread_unsafe: scikit-learn's marker")


def pytest_collection_modifyitems(config, items):
    kept, deselected = [], []
    for item in items:
        source = _source(item)
        if source is None:
            kept.append(item)
            continue
        params = getattr(getattr(item, "callspec", None), "params", {})
        our_defaults = params.get("adapted_variant") == "our_defaults"
        name = _name_without_variant(item, params.get("adapted_variant"))
        if (any(src == source and part in name for (src, part) in DESELECTED)
                or any(_is_sklearn_regressor(v) for v in params.values())
                or (our_defaults and item.originalname in without_our_defaults(source))):
            deselected.append(item)
            continue
        for (src, part), reason in KNOWN_DIFFERENCES.items():
            if src == source and name.startswith(part):
                item.add_marker(pytest.mark.xfail(reason=reason, strict=False))
        if (item.originalname in SPARSE_TESTS[source]
                or any(_is_sparse_parameter(v) for v in params.values())):
            if our_defaults:  # run under scikit-learn's
                deselected.append(item)
                continue
            if SPARSE_XFAIL_REASON:
                item.add_marker(pytest.mark.xfail(reason=SPARSE_XFAIL_REASON, strict=False))
        kept.append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept
