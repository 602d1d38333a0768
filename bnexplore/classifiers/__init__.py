"""scikit-learn classifiers over bnexplore's structure methods.

Names are imported lazily from the module of the method they implement.
"""
from importlib import import_module

_WHERE = {
    "DiscreteClassifier": "._base",
    "NaiveBayes": ".naive_bayes",
    # Dash & Cooper: order-constrained model averaging
    "NaiveAveraging": ".averaging",
    "GreedyThickThin": ".averaging",
    "AMA": ".averaging",
    # Cerquides & Lopez de Mantaras: linear mixtures of ODEs
    "AODE": ".mixtures",
    "BMAAODE": ".mixtures",
    "MAPLMD": ".mixtures",
    "MAPLMG": ".mixtures",
    # Ziebart, Dey & Bagnell: selectively conditioned forests
    "TAN": ".forests",
    "FAN": ".forests",
    "STAN": ".forests",
    "SFAN": ".forests",
    # Visweswaran & Cooper: instance-specific Markov blankets
    "ISMB": ".ismb",
}

__all__ = sorted(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        obj = getattr(import_module(_WHERE[name], __name__), name)
        globals()[name] = obj
        return obj
    raise AttributeError(f"module 'bnexplore.classifiers' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_WHERE))
