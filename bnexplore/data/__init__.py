"""Discrete data layer: validated integer codes, discretisers, readers and bundled files."""
from .core import (DiscreteData, MemoryBudgetError, as_discrete, check_table_size,
                   get_table_budget, set_table_budget)

__all__ = ["DiscreteData", "MemoryBudgetError", "as_discrete", "check_table_size",
           "get_table_budget", "set_table_budget", "MDLDiscretizer", "EqualFrequencyDiscretizer",
           "read_arff", "read_csv", "prepare_frame"]


def __getattr__(name):  # lazy: discretisers and readers pull in scikit-learn / scipy.io
    if name in ("MDLDiscretizer", "EqualFrequencyDiscretizer"):
        from . import discretize
        return getattr(discretize, name)
    if name == "prepare_frame":
        from .frames import prepare_frame
        return prepare_frame
    if name in ("read_arff", "read_csv"):
        from . import io
        return getattr(io, name)
    raise AttributeError(f"module 'bnexplore.data' has no attribute {name!r}")
