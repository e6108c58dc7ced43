"""scikit-learn's classifier names for the adapted tests, each test run once per
set of defaults.

``RandomForestClassifier``, ``DecisionTreeClassifier`` and
``ExtraTreeClassifier`` here stand for the class of the same name in the
module of the active variant (``_sklearn_defaults``: aucforest's estimators
under scikit-learn's defaults; ``_our_defaults``: under aucforest's own).
Calling one constructs an instance of that class, so ``type(est)``,
``clone``, ``get_params`` and pickling see the variant's class itself;
``isinstance``, ``issubclass`` and attribute reads answer for it too.

The autouse fixture `adapted_variant`, imported by each adapted module, is
parametrized over `VARIANTS`: every test of the module runs under both sets
of defaults, the active one set for the test's duration.
"""
import importlib

import pytest

# variant -> the module binding scikit-learn's names to aucforest's estimators
VARIANTS = {"sklearn_defaults": "_sklearn_defaults", "our_defaults": "_our_defaults"}

_active = {"variant": None}


def active_class(name):
    """The class ``name`` of the active variant."""
    variant = _active["variant"]
    if variant is None:
        raise RuntimeError(f"{name} is used outside a test of an adapted module (no set of "
                           "defaults is active: the fixture adapted_variant sets one)")
    return getattr(importlib.import_module(VARIANTS[variant]), name)


class _Dispatching(type):
    """The metaclass of the stand-ins: each use is forwarded to the class of
    the same name of the active variant."""

    def __call__(cls, *args, **kwargs):
        return active_class(cls.__name__)(*args, **kwargs)

    def __instancecheck__(cls, instance):
        return isinstance(instance, active_class(cls.__name__))

    def __subclasscheck__(cls, subclass):
        return issubclass(subclass, active_class(cls.__name__))

    def __getattr__(cls, name):
        return getattr(active_class(cls.__name__), name)


def _stand_in(name):
    return _Dispatching(name, (), {"__module__": __name__, "__qualname__": name})


RandomForestClassifier = _stand_in("RandomForestClassifier")
DecisionTreeClassifier = _stand_in("DecisionTreeClassifier")
ExtraTreeClassifier = _stand_in("ExtraTreeClassifier")


@pytest.fixture(autouse=True, params=list(VARIANTS))
def adapted_variant(request):
    """The set of defaults the test runs under (its id in the test's id)."""
    _active["variant"] = request.param
    try:
        yield request.param
    finally:
        _active["variant"] = None
