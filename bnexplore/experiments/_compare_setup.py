"""The compared classifiers and their shared parameters (:mod:`bnexplore.experiments.compare`).

Every compared entry is a configuration of a class of the one classifier registry,
:mod:`bnexplore.classifiers` (or of a scikit-learn baseline): a key as the papers name
it (``SNN``, ``GTT``, ``ISMB-MS``, ...), a label, the paper, and how the shared
parameters map onto the constructor.  The shared parameters are ``max_parents``
(AMA and GTT), ``n`` (AMA's summary-network size, its own name in Dash & Cooper),
``penalty`` (exclusion penalty of STAN/SFAN) and ``queue_width`` (ISMB);
:data:`PARAM_RANGES` is their one declaration, keyed by these names, which are also the
apps' parameter names.

Examples
--------
>>> from bnexplore.experiments.compare import make_classifier
>>> make_classifier("GTT", max_parents=1)
GreedyThickThin(max_parents=1)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .._deprecation import renamed
from .._validation import InvalidParameterError, check_number

__all__ = ["ClassifierSpec", "CLASSIFIERS", "DEFAULT_CLASSIFIERS", "PARAM_RANGES",
           "DEFAULT_PARAMS", "LEGACY_PARAMS", "check_params", "make_classifier"]

#: allowed ranges of the shared parameters (inclusive): the one declaration, also of the
#: apps' sliders. max_parents stops at 4: exact averaging scores every parent set of at
#: most max_parents of the other variables (C(36, 4) = 58,905 per variable of ALARM), and
#: order MCMC on ALARM already takes minutes at max_parents = 4.
PARAM_RANGES: dict[str, tuple[float, float]] = {
    "max_parents": (1, 4), "n": (1, 60), "penalty": (0.0, 50.0), "queue_width": (1, 10_000)}
#: the shared parameters' defaults, keyed as :data:`PARAM_RANGES`.
DEFAULT_PARAMS = {"max_parents": 2, "n": 12, "penalty": 2.0, "queue_width": 100}
#: the keys of :data:`PARAM_RANGES` before 0.2.0 (the apps' old slider names) and now;
#: a cache entry stored under the old keys is still found (``cross_validate_classifiers``).
LEGACY_PARAMS = {"k": "max_parents", "alpha": "penalty", "w": "queue_width"}


@dataclass(frozen=True)
class ClassifierSpec:
    """How to build one compared classifier from the shared parameters."""

    key: str
    label: str
    family: str                        # paper / library it comes from
    build: Callable[..., Any]          # build(max_parents, n, penalty, queue_width, random_state)
    uses: tuple[str, ...] = ()         # which of PARAM_RANGES' keys it depends on
    slow: bool = False                 # instance-based search: minutes on big data


def _c(name: str):
    """The class ``name`` of the one classifier registry, :mod:`bnexplore.classifiers`."""
    from bnexplore import classifiers
    return getattr(classifiers, name)


def _onehot_pipeline(final):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    return make_pipeline(OneHotEncoder(handle_unknown="ignore"), final)


def _logreg(**_):
    from sklearn.linear_model import LogisticRegression
    return _onehot_pipeline(LogisticRegression(max_iter=2000))


def _knn(**_):
    from sklearn.neighbors import KNeighborsClassifier
    return _onehot_pipeline(KNeighborsClassifier(n_neighbors=5))


_SPECS = [
    ClassifierSpec("SNN", "SNN (naive Bayes, K2)", "Dash & Cooper",
                   lambda **p: _c("NaiveBayes")(prior="K2")),
    ClassifierSpec("NMA", "NMA (naive model averaging)", "Dash & Cooper",
                   lambda **p: _c("NaiveAveraging")()),
    ClassifierSpec("GTT", "GTT (greedy thick-thin, k parents)", "Dash & Cooper",
                   lambda max_parents, **p: _c("GreedyThickThin")(max_parents=int(max_parents)),
                   ("max_parents",)),
    ClassifierSpec("AMA", "AMA (approximate model averaging)", "Dash & Cooper",
                   lambda max_parents, n, random_state, **p: _c("AMA")(
                       max_parents=int(max_parents), n=int(n), random_state=random_state),
                   ("max_parents", "n")),
    ClassifierSpec("AODE", "AODE", "Cerquides & Lopez de Mantaras",
                   lambda **p: _c("AODE")()),
    ClassifierSpec("BMAAODE", "BMAAODE", "Cerquides & Lopez de Mantaras",
                   lambda **p: _c("BMAAODE")()),
    ClassifierSpec("MAPLMD", "MAPLMD", "Cerquides & Lopez de Mantaras",
                   lambda **p: _c("MAPLMD")()),
    ClassifierSpec("MAPLMG", "MAPLMG", "Cerquides & Lopez de Mantaras",
                   lambda **p: _c("MAPLMG")()),
    ClassifierSpec("NB", "NB (naive Bayes, BDeu 10)", "Ziebart, Dey & Bagnell",
                   lambda **p: _c("NaiveBayes")(prior="BDeu", ess=10.0)),
    ClassifierSpec("TAN", "TAN", "Ziebart, Dey & Bagnell", lambda **p: _c("TAN")()),
    ClassifierSpec("FAN", "FAN", "Ziebart, Dey & Bagnell", lambda **p: _c("FAN")()),
    ClassifierSpec("STAN", "STAN (exclusion penalty)", "Ziebart, Dey & Bagnell",
                   lambda penalty, **p: _c("STAN")(penalty=float(penalty)), ("penalty",)),
    ClassifierSpec("SFAN", "SFAN (exclusion penalty)", "Ziebart, Dey & Bagnell",
                   lambda penalty, **p: _c("SFAN")(penalty=float(penalty)), ("penalty",)),
    ClassifierSpec("TAN-BMA", "TAN, averaged over trees", "Ziebart, Dey & Bagnell",
                   lambda **p: _c("TAN")(averaging="bma")),
    ClassifierSpec("SFAN-BMA", "SFAN, averaged over forests", "Ziebart, Dey & Bagnell",
                   lambda penalty, **p: _c("SFAN")(penalty=float(penalty), averaging="bma"),
                   ("penalty",)),
    ClassifierSpec("ISMB", "ISMB (queue width)", "Visweswaran & Cooper",
                   lambda queue_width, **p: _c("ISMB")(queue_width=int(queue_width)),
                   ("queue_width",), slow=True),
    ClassifierSpec("ISMB-MS", "ISMB-MS (best model)", "Visweswaran & Cooper",
                   lambda queue_width, **p: _c("ISMB")(queue_width=int(queue_width), variant="ms"),
                   ("queue_width",), slow=True),
    ClassifierSpec("NISMB", "NISMB (non instance-specific)", "Visweswaran & Cooper",
                   lambda queue_width, **p: _c("ISMB")(queue_width=int(queue_width), variant="nismb"),
                   ("queue_width",), slow=True),
    ClassifierSpec("LogReg", "logistic regression (one-hot)", "scikit-learn", _logreg),
    ClassifierSpec("kNN", "k-nearest neighbours, 5 (one-hot)", "scikit-learn", _knn),
]
#: every comparable classifier, by key.
CLASSIFIERS: dict[str, ClassifierSpec] = {s.key: s for s in _SPECS}
#: a quick default selection.
DEFAULT_CLASSIFIERS = ("SNN", "TAN", "AODE", "AMA", "LogReg", "kNN")


# --------------------------------------------------------------------------- validation
@renamed(k="max_parents", alpha="penalty", w="queue_width")
def check_params(max_parents: int = 2, n: int = 12, penalty: float = 2.0,
                 queue_width: int = 100) -> dict:
    """Validate the shared parameters; return them as a dict of plain numbers keyed as
    :data:`PARAM_RANGES` (``max_parents``, ``n``, ``penalty``, ``queue_width``).

    ``k=``, ``alpha=`` and ``w=`` are the deprecated names of ``max_parents=``,
    ``penalty=`` and ``queue_width=``.

    Raises
    ------
    ValueError
        Naming the parameter and its allowed range.

    Examples
    --------
    >>> check_params(max_parents=3, n=10, penalty=0.5, queue_width=50)
    {'max_parents': 3, 'n': 10, 'penalty': 0.5, 'queue_width': 50}
    """
    out = {}
    for name, value, integer in (("max_parents", max_parents, True), ("n", n, True),
                                 ("penalty", penalty, False),
                                 ("queue_width", queue_width, True)):
        lo, hi = PARAM_RANGES[name]
        number = check_number(value, name)          # a finite number (slider floats too)
        if not lo <= number <= hi:
            raise InvalidParameterError(f"{name}={value!r} is out of range: choose a value "
                                        f"in [{lo:g}, {hi:g}]")
        if integer and number != int(number):
            raise InvalidParameterError(f"{name} must be an integer, got {value!r}")
        out[name] = int(number) if integer else number
    return out


@renamed(k="max_parents", alpha="penalty", w="queue_width", seed="random_state")
def make_classifier(key: str, max_parents: int = 2, n: int = 12, penalty: float = 2.0,
                    queue_width: int = 100, random_state: int = 0):
    """A fresh, unfitted estimator for classifier ``key`` (see :data:`CLASSIFIERS`).

    Examples
    --------
    >>> make_classifier("AMA", max_parents=3, n=8)
    AMA(max_parents=3, n=8, random_state=0)
    """
    if key not in CLASSIFIERS:
        raise ValueError(f"unknown classifier {key!r}; choose from {sorted(CLASSIFIERS)}")
    p = check_params(max_parents, n, penalty, queue_width)
    return CLASSIFIERS[key].build(**p, random_state=int(random_state))
