"""The estimators the adapted scikit-learn tests construct: aucforest's, under
scikit-learn's defaults (``SKLEARN_DEFAULTS``) or under aucforest's own.

Each is a subclass whose only change is the defaults in its ``__init__``
signature, so that ``clone``, ``get_params``, ``set_params`` and pickling
behave as on the aucforest estimator itself.
"""
import inspect

from aucforest import AUCForestClassifier, AUCTreeClassifier

# scikit-learn's RandomForestClassifier defaults, in aucforest's parameters
FOREST_SKLEARN_DEFAULTS = dict(
    n_estimators=100, criterion="gini", max_features="sqrt", max_bins=None, nsplit=None,
    bootstrap=True, replacement=True, max_samples=None, decision="argmax",
    predict_min_samples=1)
# scikit-learn's DecisionTreeClassifier defaults (ExtraTreeClassifier: splitter="random",
# max_features="sqrt")
TREE_SKLEARN_DEFAULTS = dict(criterion="gini", max_features=None, max_bins=None, nsplit=None)
EXTRA_TREE_SKLEARN_DEFAULTS = dict(TREE_SKLEARN_DEFAULTS, splitter="random",
                                   max_features="sqrt")
EXTRA_TREE_OUR_DEFAULTS = dict(splitter="random", max_features="sqrt")


def with_defaults(base, name, defaults):
    """A subclass of ``base`` named ``name`` whose ``__init__`` has ``defaults``."""
    signature = inspect.signature(base.__init__)
    unknown = set(defaults) - set(signature.parameters)
    if unknown:  # an aucforest without these parameters: every construction fails
        message = f"{base.__name__} has no parameter {sorted(unknown)}"

        def refuse(self, *args, **kwargs):
            raise TypeError(message)

        return type(name, (base,), {"__init__": refuse, "__module__": __name__,
                                    "__qualname__": name})
    signature = signature.replace(parameters=[
        p.replace(default=defaults[p.name]) if p.name in defaults else p
        for p in signature.parameters.values()])

    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        del arguments["self"]
        base.__init__(self, **arguments)

    __init__.__signature__ = signature
    return type(name, (base,), {"__init__": __init__, "__module__": __name__,
                                "__qualname__": name})




def estimators(module, forest_defaults, tree_defaults, extra_tree_defaults):
    """scikit-learn's three classifier names, bound in ``module`` (for pickling)."""
    def make(base, name, defaults):
        cls = with_defaults(base, name, defaults)
        cls.__module__ = module
        return cls

    return (make(AUCForestClassifier, "RandomForestClassifier", forest_defaults),
            make(AUCTreeClassifier, "DecisionTreeClassifier", tree_defaults),
            make(AUCTreeClassifier, "ExtraTreeClassifier", extra_tree_defaults))
