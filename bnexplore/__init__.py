"""bnexplore: Bayesian model averaging over discrete Bayesian-network structures.

Submodules are imported on first use, so ``import bnexplore as bx`` is cheap.
"""
from importlib import import_module

__version__ = "0.1.0"

_SUBMODULES = ("data", "datasets", "networks", "scores", "search", "metrics", "experiments",
               "averaging", "mixtures", "forests", "clustering", "ismb", "classifiers", "viz", "warmup",
               "cache", "glossary", "apps")

__all__ = list(_SUBMODULES)


def __getattr__(name):
    if name in _SUBMODULES:
        mod = import_module(f".{name}", __name__)
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'bnexplore' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_SUBMODULES))
