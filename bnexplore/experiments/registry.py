"""A registry of named experiments.

Each paper module ``bnexplore/experiments/<paper>.py`` calls :func:`register` at import
time.  :func:`names` and :func:`get` import every module of the
``bnexplore.experiments`` package first (``pkgutil.iter_modules``), so adding an
experiment needs no edit of a central file.  Keep module-level imports of those
modules light (import heavy dependencies inside the trial function) so that
``bnexplore list`` stays fast.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import pandas as pd

from .._deprecation import renamed
from .runner import Grid, Trial, expand_grid, run

__all__ = ["Experiment", "register", "unregister", "get", "names", "run_named"]

_SKIP_MODULES = {"runner", "registry"}


@dataclass(frozen=True)
class Experiment:
    """A registered experiment: a trial function and its full and reduced grids.

    Attributes
    ----------
    name : str
    trial : callable
        Called as ``trial(**settings, random_state=random_state)``; returns a dict or list
        of dicts.
    grid, reduced_grid : dict of lists or list of dicts
        The paper-size grid and a small grid that runs in CI.
    random_states, reduced_random_states : tuple of int
        Random states (the replicates) of the full and reduced runs.
    description : str
    """

    name: str
    trial: Trial
    grid: Grid
    reduced_grid: Grid
    random_states: tuple[int, ...] = (0,)
    reduced_random_states: tuple[int, ...] = (0,)
    description: str = ""
    module: str = field(default="", compare=False)

    def settings(self, size: str = "reduced") -> tuple[Grid, tuple[int, ...]]:
        """Return ``(grid, random_states)`` for ``size`` ("reduced" or "full")."""
        if size == "reduced":
            return self.reduced_grid, self.reduced_random_states
        if size == "full":
            return self.grid, self.random_states
        raise ValueError(f"size must be 'reduced' or 'full', got {size!r}")

    def n_trials(self, size: str = "reduced") -> int:
        """Number of trials (settings x random states) of a run of ``size``."""
        grid, random_states = self.settings(size)
        return len(expand_grid(grid)) * len(random_states)


_REGISTRY: dict[str, Experiment] = {}
_discovered = False


@renamed(seeds="random_states", reduced_seeds="reduced_random_states")
def register(name: str, trial: Trial | None = None, *, grid: Grid,
             reduced_grid: Grid | None = None, random_states: Iterable[int] = (0,),
             reduced_random_states: Iterable[int] | None = None, description: str | None = None
             ) -> Any:
    """Register an experiment under ``name``; usable as a decorator.

    Parameters
    ----------
    name : str
        Unique name, used by ``bnexplore run NAME``.
    trial : callable, optional
        The trial function.  Omit it to use ``register`` as a decorator.
    grid : dict of lists or list of dicts
        Full-size (paper) grid.
    reduced_grid : optional
        Small grid for quick runs and CI; default ``grid``.
    random_states : iterable of int
        Random states (replicates) of the full run (``seeds=`` is the deprecated name).
    reduced_random_states : iterable of int, optional
        Random states of the reduced run; default ``random_states`` (``reduced_seeds=``
        is the deprecated name).
    description : str, optional
        One line for ``bnexplore list``; default the first line of the trial's
        docstring.

    Returns
    -------
    Experiment, or a decorator returning the trial function unchanged.

    Examples
    --------
    >>> @register("doc_example", grid={"n": [10, 100]}, reduced_grid={"n": [10]})
    ... def coin(n, random_state):
    ...     '''Fraction of heads in n tosses.'''
    ...     import numpy as np
    ...     rng = np.random.default_rng(random_state)
    ...     return {"heads": float(rng.integers(0, 2, n).mean())}
    >>> get("doc_example").description
    'Fraction of heads in n tosses.'
    >>> get("doc_example").n_trials("full")
    2
    >>> unregister("doc_example")
    """
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise ValueError(f"experiment name must be a non-empty string without spaces, "
                         f"got {name!r}")

    def _register(func: Trial) -> Trial:
        if not callable(func):
            raise TypeError(f"trial for experiment {name!r} must be callable")
        expand_grid(grid)  # validate now, not at run time
        if reduced_grid is not None:
            expand_grid(reduced_grid)
        states = tuple(int(s) for s in random_states)
        red_states = states if reduced_random_states is None else tuple(
            int(s) for s in reduced_random_states)
        if not states or not red_states:
            raise ValueError(f"experiment {name!r}: random_states and reduced_random_states "
                             f"must not be empty")
        desc = description
        if desc is None:
            doc = (func.__doc__ or "").strip()
            desc = doc.splitlines()[0].strip() if doc else ""
        module = getattr(func, "__module__", "") or ""
        where = f"{module}.{getattr(func, '__qualname__', repr(func))}"
        old = _REGISTRY.get(name)
        if old is not None:
            old_where = f"{old.module}.{getattr(old.trial, '__qualname__', repr(old.trial))}"
            if old_where != where:
                raise ValueError(f"experiment {name!r} is already registered by {old_where}; "
                                 f"choose another name")
        _REGISTRY[name] = Experiment(name=name, trial=func, grid=grid,
                                     reduced_grid=grid if reduced_grid is None else reduced_grid,
                                     random_states=states, reduced_random_states=red_states,
                                     description=desc, module=module)
        return func

    if trial is None:
        return _register
    _register(trial)
    return _REGISTRY[name]


def unregister(name: str) -> None:
    """Remove ``name`` from the registry (mainly for tests); unknown names are ignored."""
    _REGISTRY.pop(name, None)


def _discover(force: bool = False) -> None:
    """Import every module of the ``bnexplore.experiments`` package once."""
    global _discovered
    if _discovered and not force:
        return
    _discovered = True
    package = importlib.import_module(__package__)
    for info in pkgutil.iter_modules(package.__path__):
        if info.name in _SKIP_MODULES or info.name.startswith("_"):
            continue
        try:
            importlib.import_module(f"{__package__}.{info.name}")
        except Exception as exc:  # noqa: BLE001 - one broken module must not hide the rest
            warnings.warn(f"could not import experiment module "
                          f"{__package__}.{info.name}: {type(exc).__name__}: {exc}",
                          RuntimeWarning, stacklevel=3)


def names() -> list[str]:
    """Sorted names of all registered experiments.

    Examples
    --------
    >>> "demo_sampling" in names()
    True
    """
    _discover()
    return sorted(_REGISTRY)


def get(name: str) -> Experiment:
    """The :class:`Experiment` registered as ``name``.

    Raises
    ------
    KeyError
        With the list of known names, when ``name`` is not registered.
    """
    _discover()
    if name not in _REGISTRY:
        _discover(force=True)
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise KeyError(f"unknown experiment {name!r}; registered experiments: {known}") \
            from None


@renamed(seeds="random_states")
def run_named(name: str, size: str = "reduced", out: str | os.PathLike | None = None,
              backend: str = "local", n_jobs: int = 1, scheduler: Any = None,
              progress: bool = True, resume: bool = True, retry_errors: bool = False,
              random_states: Iterable[int] | None = None,
              where: Mapping[str, Sequence[Any]] | None = None,
              numba_threads: int | None = 1) -> pd.DataFrame:
    """Run the registered experiment ``name`` at ``size`` ("reduced" or "full").

    ``random_states`` restricts the run to some of the experiment's random states at
    ``size`` (``seeds=`` is its deprecated name; a random state the experiment does not
    have is a ValueError: its rows would not belong to the experiment);
    the trials keep their ``trial_id``, so they resume and count as part of the full
    run.  ``where`` likewise keeps only the settings whose parameter ``key`` has one of
    the given values (as text or as numbers: ``["5"]`` matches 5, ``["1"]`` matches 1.0); a
    key the grid lacks, or a filter that keeps nothing, is a ValueError.  The
    remaining parameters are those of :func:`bnexplore.experiments.run`;
    with ``out=None`` results are kept in memory only.

    Examples
    --------
    >>> df = run_named("demo_sampling", progress=False)
    >>> bool(df["error"].isna().all())
    True
    """
    exp = get(name)
    grid, all_states = exp.settings(size)
    if random_states is None:
        random_states = all_states
    else:
        random_states = [int(s) for s in random_states]
        extra = sorted(set(random_states) - set(all_states))
        if extra:
            raise ValueError(f"experiment {name!r} ({size}) has random states "
                             f"{_span(all_states)}; random_states {extra} are not among them")
    if where:
        settings = expand_grid(grid)
        for key, values in where.items():
            if not any(key in st for st in settings):
                raise ValueError(f"experiment {name!r} has no grid parameter {key!r}; its "
                                 f"parameters: {sorted({k for st in settings for k in st})}")
            settings = [st for st in settings if key in st and _matches(st[key], values)]
        if not settings:
            raise ValueError(f"no setting of experiment {name!r} ({size}) matches {dict(where)}")
        grid = settings
    return run(exp.trial, grid, random_states=random_states, out=out, backend=backend, n_jobs=n_jobs,
               scheduler=scheduler, progress=progress, resume=resume,
               retry_errors=retry_errors, desc=f"{name} ({size})", numba_threads=numba_threads)


def _span(values: Sequence[int]) -> str:
    """``"0-39"`` for a run of consecutive ints, else the comma-separated list."""
    values = sorted(values)
    if values == list(range(values[0], values[-1] + 1)) and len(values) > 2:
        return f"{values[0]}-{values[-1]}"
    return ", ".join(map(str, values))


def _matches(value: Any, wanted: Sequence[Any]) -> bool:
    """Whether a grid value equals one of ``wanted``, as text or as numbers."""
    for w in wanted:
        if str(value) == str(w):
            return True
        try:
            if float(value) == float(w):
                return True
        except (TypeError, ValueError):
            pass
    return False

