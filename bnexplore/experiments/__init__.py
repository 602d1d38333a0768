"""The papers' experiment loops, runnable locally (joblib) or on a Dask cluster.

:func:`run` executes a trial function over a grid of settings and random states (the
replicates: each trial receives an int ``random_state``), writing each
finished trial to a CSV/Parquet file at once and skipping finished trials on a rerun.
Experiments are registered by name (:func:`register`) in modules of this package -
``bnexplore/experiments/<paper>.py`` - which :func:`names` and :func:`get` import
automatically; :func:`run_named` and the ``bnexplore run NAME`` command run them.

Examples
--------
>>> from bnexplore import experiments
>>> "demo_sampling" in experiments.names()
True
"""
from .registry import Experiment, get, names, register, run_named, unregister
from .runner import LEGACY_COLUMNS, RESERVED_COLUMNS, expand_grid, run, trial_id, upgrade_columns

__all__ = ["run", "expand_grid", "trial_id", "upgrade_columns", "RESERVED_COLUMNS",
           "LEGACY_COLUMNS", "Experiment", "register", "unregister", "get", "names", "run_named"]
