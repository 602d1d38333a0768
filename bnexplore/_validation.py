"""Parameter validation: one front door for priors, ess, integer ranges, probabilities and
random state.

Every public estimator declares its parameters' constraints on the class, as
scikit-learn's ``_parameter_constraints`` do (``sklearn/naive_bayes.py``), and checks them
once, at the edge of ``fit``; public functions call the ``check_*`` helpers once on entry.
Code behind the edge (engines, kernels) trusts what it is handed.

A constraint is a small callable ``constraint(value, name) -> value`` that returns the
value in its canonical form (``"bdeu"`` -> ``"BDeu"``, ``np.int64(3)`` -> ``3``) or raises
an error naming the parameter:

:class:`InvalidParameterError`, a subclass of both ``ValueError`` and ``TypeError`` (as
scikit-learn's), so that callers catching either keep working.

These are plain Python checks: they cost a few microseconds per ``fit``, where
``sklearn.utils._param_validation.validate_parameter_constraints`` costs tens.

Glossary
--------
prior   the Dirichlet parameter prior of a family score: ``"K2"`` (every alpha_ijk = 1)
        or ``"BDeu"`` (alpha_ijk = ess / (q_i r_i)); some callers also take ``"mle"``.
ess     the equivalent sample size of BDeu: a finite number > 0.
random_state  None, a non-negative int, a ``SeedSequence`` or a ``numpy.random.Generator``
        (scikit-learn's meaning; in the experiments' trial functions an int: the
        replicate the runner passes, a ``random_state`` column of the results).

Examples
--------
>>> from bnexplore._validation import Interval, check_prior, check_random_state
>>> check_prior("bdeu", ignore_case=True)
'BDeu'
>>> Interval(int, 0, None)(3, "max_parents")
3
>>> Interval(int, 0, None)(-1, "max_parents")
Traceback (most recent call last):
...
bnexplore._validation.InvalidParameterError: max_parents must be >= 0, got -1
>>> check_random_state(0).integers(10) == check_random_state(0).integers(10)
np.True_
"""
from __future__ import annotations

import math
from typing import Callable, Mapping

import numpy as np

__all__ = ["InvalidParameterError", "Interval", "Options", "Prior", "ESS", "RandomState", "check_random_state",
           "check_positive_int", "check_int", "check_number", "check_probability",
           "check_prior", "check_ess", "check_prior_ess", "validate_params"]

#: canonical spelling of every Dirichlet prior, by its lower-case spelling
_PRIOR_SPELLING = {"k2": "K2", "bdeu": "BDeu", "mle": "mle"}


class InvalidParameterError(ValueError, TypeError):
    """A parameter of the wrong type or out of its range (the message names it)."""


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_real(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and \
        not isinstance(value, (bool, np.bool_))


# ------------------------------------------------------------------------- constraints
class Interval:
    """Numbers of one kind (``int`` or ``float``) in a range, optionally ``None``.

    ``closed`` says which ends belong to the range (``"both"``, ``"left"``, ``"right"``
    or ``"neither"``), as in scikit-learn's ``Interval``. An ``int`` interval refuses
    non-integers with a ``TypeError``; a ``float`` interval accepts ints and refuses NaN.

    Examples
    --------
    >>> Interval(float, 0, None, closed="neither")(2, "ess")
    2.0
    >>> Interval(int, 1, None, allow_none=True)(None, "n")
    """

    def __init__(self, kind: type, low: float | None, high: float | None, closed: str = "both",
                 allow_none: bool = False, allow_inf: bool = False, label: str | None = None):
        self.kind, self.low, self.high, self.closed = kind, low, high, closed
        self.allow_none, self.allow_inf, self.label = allow_none, allow_inf, label

    def _range(self) -> str:
        """The range in symbols (``">= 0"``, ``"in (0, 1]"``), or ``""`` without bounds."""
        if self.low is not None and self.high is not None:
            lb = "[" if self.closed in ("both", "left") else "("
            rb = "]" if self.closed in ("both", "right") else ")"
            return f"in {lb}{self.low}, {self.high}{rb}"
        if self.low is not None:
            return f"{'>=' if self.closed in ('both', 'left') else '>'} {self.low}"
        if self.high is not None:
            return f"{'<=' if self.closed in ('both', 'right') else '<'} {self.high}"
        return ""

    def describe(self) -> str:
        """What the parameter must be, in words (``"a non-negative int"``, ``"a number > 0"``)."""
        lower_only = self.high is None and self.closed in ("both", "left")
        if self.kind is int and lower_only and self.low in (0, 1):
            what = "a non-negative int" if self.low == 0 else "a positive int"
        else:
            what = ("an int " if self.kind is int else "a number ") + self._range()
        return what.strip() + (" or None" if self.allow_none else "")

    def __call__(self, value, name: str):
        if value is None and self.allow_none:
            return None
        shown = f"{name} ({self.label})" if self.label else name
        if self.kind is int:
            if not _is_int(value):
                raise InvalidParameterError(f"{shown} must be {self.describe()}, got {value!r}")
            value = int(value)
        else:
            if not _is_real(value):
                raise InvalidParameterError(f"{shown} must be {self.describe()}, got {value!r}")
            value = float(value)
            if math.isnan(value) or (math.isinf(value) and not self.allow_inf):
                raise InvalidParameterError(f"{shown} must be {self.describe()}, got {value!r}")
        lo, hi, c = self.low, self.high, self.closed
        if (lo is not None and (value < lo or (value == lo and c in ("right", "neither")))) or \
                (hi is not None and (value > hi or (value == hi and c in ("left", "neither")))):
            raise InvalidParameterError(f"{shown} must be {self._range()}, got {value!r}")
        return value


class Options:
    """One of a fixed set of values (strings compared exactly).

    Examples
    --------
    >>> Options("map", "bma")("bma", "averaging")
    'bma'
    """

    def __init__(self, *options):
        self.options = options

    def __call__(self, value, name: str):
        if isinstance(value, str) and value in self.options:
            return value
        if not isinstance(value, str) and any(value is o for o in self.options):
            return value
        listed = ", ".join(repr(o) for o in self.options[:-1]) + f" or {self.options[-1]!r}" \
            if len(self.options) > 1 else repr(self.options[0])
        raise InvalidParameterError(f"{name} must be {listed}, got {value!r}")


class Prior:
    """A Dirichlet prior name among ``allowed``, spelt exactly or case-insensitively."""

    def __init__(self, *allowed: str, ignore_case: bool = False):
        self.allowed = allowed or ("K2", "BDeu")
        self.ignore_case = ignore_case

    def __call__(self, value, name: str = "prior") -> str:
        return check_prior(value, name, self.allowed, self.ignore_case)


class ESS:
    """The equivalent sample size: a finite number > 0 (returned as a float)."""

    def __call__(self, value, name: str = "ess") -> float:
        return check_ess(value, name)


class RandomState:
    """None, a non-negative int, a ``SeedSequence`` or a ``Generator`` (left unchanged)."""

    def __call__(self, value, name: str = "random_state"):
        # the value itself is stored (fit draws from it): checked without making a
        # Generator, which would cost more than every other check of an estimator
        if value is None or isinstance(value, (np.random.Generator, np.random.SeedSequence)):
            return value
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) \
                and int(value) >= 0:
            return value
        check_random_state(value, name)   # raises the message of the case
        return value


# --------------------------------------------------------------------------- helpers
def check_random_state(seed, name: str = "random_state") -> np.random.Generator:
    """Turn ``seed`` (None, non-negative int, SeedSequence or Generator) into a Generator.

    A Generator is returned as it is (draws advance the caller's stream); an int gives
    the same stream as ``np.random.default_rng(seed)``.

    Examples
    --------
    >>> rng = check_random_state(0)
    >>> check_random_state(rng) is rng
    True
    >>> check_random_state(-1)
    Traceback (most recent call last):
    ...
    bnexplore._validation.InvalidParameterError: random_state must be a non-negative int, got -1
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    if isinstance(seed, (bool, np.bool_)):
        raise InvalidParameterError(f"{name} must be None, a non-negative int or a numpy Generator, got {seed!r}")
    if isinstance(seed, (int, np.integer)):
        if int(seed) < 0:
            raise InvalidParameterError(f"{name} must be a non-negative int, got {seed}")
        return np.random.default_rng(int(seed))
    raise InvalidParameterError(f"{name} must be None, a non-negative int or a numpy Generator, got "
                    f"{type(seed).__name__} {seed!r}")


def check_positive_int(value, name: str) -> int:
    """``value`` as an int > 0 (``TypeError`` for non-integers, ``ValueError`` for <= 0).

    Examples
    --------
    >>> check_positive_int(3, "n_nodes")
    3
    """
    if not _is_int(value):
        raise InvalidParameterError(f"{name} must be a positive integer, got {type(value).__name__} {value!r}")
    if int(value) <= 0:
        raise InvalidParameterError(f"{name} must be a positive integer, got {value}")
    return int(value)


def check_int(value, name: str, low: int | None = None, high: int | None = None,
              allow_none: bool = False) -> int | None:
    """``value`` as an int in ``[low, high]`` (``None`` passes with ``allow_none``).

    Examples
    --------
    >>> check_int(2, "max_parents", low=0)
    2
    """
    return Interval(int, low, high, allow_none=allow_none)(value, name)


def check_number(value, name: str, low: float | None = None, high: float | None = None,
                 closed: str = "both", allow_inf: bool = False) -> float:
    """``value`` as a float in the range (NaN refused; inf only with ``allow_inf``).

    Examples
    --------
    >>> check_number(0.5, "epsilon", low=0)
    0.5
    """
    return Interval(float, low, high, closed=closed, allow_inf=allow_inf)(value, name)


def check_probability(value, name: str) -> float:
    """``value`` as a float in ``[0, 1]``.

    Examples
    --------
    >>> check_probability(0.25, "p")
    0.25
    """
    return Interval(float, 0, 1)(value, name)


def check_prior(prior, name: str = "prior", allowed=("K2", "BDeu"),
                ignore_case: bool = False) -> str:
    """The canonical spelling of a Dirichlet prior name among ``allowed``.

    Examples
    --------
    >>> check_prior("K2")
    'K2'
    >>> check_prior("k2")
    Traceback (most recent call last):
    ...
    bnexplore._validation.InvalidParameterError: prior must be one of ('K2', 'BDeu'), got 'k2'
    """
    if isinstance(prior, str):
        if prior in allowed:
            return prior
        if ignore_case:
            canon = _PRIOR_SPELLING.get(prior.lower())
            if canon in allowed:
                return canon
    raise InvalidParameterError(f"{name} must be one of {tuple(allowed)}, got {prior!r}")


def check_ess(ess, name: str = "ess") -> float:
    """The equivalent sample size as a float: finite and > 0.

    Examples
    --------
    >>> check_ess(10)
    10.0
    >>> check_ess(0)
    Traceback (most recent call last):
    ...
    bnexplore._validation.InvalidParameterError: ess (equivalent sample size) must be a positive number, got 0
    """
    if not _is_real(ess) or not math.isfinite(ess) or not ess > 0:
        raise InvalidParameterError(f"{name} (equivalent sample size) must be a positive number, got {ess!r}")
    return float(ess)


def check_prior_ess(prior, ess, allowed=("K2", "BDeu"), ignore_case: bool = False
                    ) -> tuple[str, float]:
    """Check a prior and its ess together (ess is checked whatever the prior, as it is
    always a parameter of the estimator).

    Examples
    --------
    >>> check_prior_ess("BDeu", 1)
    ('BDeu', 1.0)
    """
    return check_prior(prior, "prior", allowed, ignore_case), check_ess(ess)


def validate_params(obj, constraints: Mapping[str, Callable] | None = None) -> dict:
    """Check every parameter of ``obj`` named in ``constraints`` (by default the class's
    ``_parameter_constraints``, merged along the MRO) and return the canonical values.

    Called once at the public edge (``fit``); the stored parameters are left unchanged,
    as scikit-learn requires.

    Examples
    --------
    >>> class Est:
    ...     _parameter_constraints = {"k": Interval(int, 0, None)}
    ...     k = 2
    >>> validate_params(Est())
    {'k': 2}
    """
    if constraints is None:
        constraints = _class_constraints(type(obj))
    return {name: check(getattr(obj, name), name) for name, check in constraints.items()}


def _class_constraints(cls) -> dict:
    """``_parameter_constraints`` of ``cls`` merged over its bases (subclasses win),
    cached on the class."""
    cached = cls.__dict__.get("_merged_constraints_")
    if cached is None:
        cached = {}
        for klass in reversed(cls.__mro__):
            cached.update(klass.__dict__.get("_parameter_constraints", {}))
        type.__setattr__(cls, "_merged_constraints_", cached)
    return cached
