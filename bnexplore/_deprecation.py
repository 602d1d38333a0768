"""Renamed parameters: the old name keeps working for one release with a warning.

One public vocabulary (``max_parents``, ``penalty``, ``queue_width``, ``random_state``,
``prior`` and ``ess``) replaced older names in 0.2.0.  An old keyword still works until
:data:`REMOVED_IN`, with a :class:`RenamedParameterWarning` (a ``FutureWarning``, so
end users see it) that names the new keyword.

Two forms, one per kind of callable:

- :func:`renamed` decorates a function, method or non-scikit-learn ``__init__``; the old
  keyword is mapped to the new one before the call, so the body sees only the new name.
- :func:`deprecated_param` serves scikit-learn estimators, whose ``__init__`` must list
  every parameter explicitly: the old name stays a parameter defaulting to
  :data:`DEPRECATED` (scikit-learn's own pattern), and ``fit`` asks this helper for the
  value to use (the old one, with a warning, when it was set).

Every renaming is recorded on the callable (``__renamed__``: old -> new) so that a test
can walk them all.

Examples
--------
>>> import warnings
>>> @renamed(max_indegree="max_parents")
... def f(data=None, max_parents=2):
...     return max_parents
>>> with warnings.catch_warnings(record=True) as w:
...     warnings.simplefilter("always")
...     f(max_indegree=3), str(w[0].message)
(3, 'f(max_indegree=...) is deprecated and will be removed in 0.3.0: use max_parents= instead')
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, TypeVar

__all__ = ["RenamedParameterWarning", "renamed", "deprecated_param", "DEPRECATED", "REMOVED_IN"]

F = TypeVar("F", bound=Callable[..., Any])

#: the release that removes the old names
REMOVED_IN = "0.3.0"
#: default of a renamed scikit-learn parameter (scikit-learn's own convention)
DEPRECATED = "deprecated"


class RenamedParameterWarning(FutureWarning):
    """A keyword argument was passed under its old name (the message names the new one)."""


def _message(where: str, old: str, new: str) -> str:
    return (f"{where}({old}=...) is deprecated and will be removed in {REMOVED_IN}: "
            f"use {new}= instead")


def renamed(**old_to_new: str) -> Callable[[F], F]:
    """Decorator: accept each old keyword for one release, mapped to its new name.

    Passing both the old and the new name is a ``TypeError``.  ``inspect.signature`` of
    the decorated callable shows only the new names.
    """
    def decorate(func: F) -> F:
        where = func.__qualname__.replace(".__init__", "")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            for old, new in old_to_new.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{where}() got both {old}= and {new}=: pass only "
                                        f"{new}= ({old}= is its deprecated name)")
                    warnings.warn(_message(where, old, new), RenamedParameterWarning,
                                  stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        wrapper.__renamed__ = {**getattr(func, "__renamed__", {}), **old_to_new}
        return wrapper  # type: ignore[return-value]
    return decorate


def deprecated_param(estimator: Any, old: str, new: str) -> Any:
    """The value of parameter ``new`` of a scikit-learn ``estimator`` whose old name
    ``old`` is still an ``__init__`` parameter defaulting to :data:`DEPRECATED`.

    When ``old`` was set, warns and returns its value (setting both is a ``ValueError``
    naming them); otherwise returns ``getattr(estimator, new)``.  Called in ``fit``.
    """
    value = getattr(estimator, old, DEPRECATED)
    if isinstance(value, str) and value == DEPRECATED:
        return getattr(estimator, new)
    params = inspect.signature(type(estimator).__init__).parameters
    default = params[new].default if new in params else None
    current = getattr(estimator, new)
    if current is not default and not (isinstance(current, (int, float, str)) and current == default):
        raise ValueError(f"{type(estimator).__name__} got both {old}={value!r} and "
                         f"{new}={current!r}: pass only {new}= "
                         f"({old}= is its deprecated name)")
    warnings.warn(_message(type(estimator).__name__, old, new), RenamedParameterWarning,
                  stacklevel=_outside_stacklevel())
    return value


def _outside_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside bnexplore (whoever called ``fit``)."""
    import sys
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("bnexplore"):
        frame, level = frame.f_back, level + 1
    return level
