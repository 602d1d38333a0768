"""Augmented naive Bayes classifiers from selectively conditioned forests (Figure 5).

The class is the condition set and the features the target set of an SCF
(:mod:`bnexplore.forests`):

========  ===========================  ==============================
name      features among themselves     class -> feature edges
========  ===========================  ==============================
TAN       spanning tree                 all (penalty = inf)
FAN       forest                        all (penalty = inf)
STAN      spanning tree                 selective (exclusion penalty)
SFAN      forest                        selective (exclusion penalty)
========  ===========================  ==============================

Every classifier can be the MAP structure (``averaging="map"``, Algorithm 1) or the
Bayesian model average over all structures of its class (``averaging="bma"``,
Eq. 7-10: a ratio of determinants per test row and class).  Parameters are posterior
means under the same Dirichlet prior as the structure score (BDeu with ``ess`` by
default, prior weight 10 as in the paper's experiments).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from .. import forests as _F
from ._base import DiscreteClassifier, normalize_log

__all__ = ["TAN", "FAN", "STAN", "SFAN"]


class _SCFClassifier(DiscreteClassifier):
    _intra = "forest"

    # subclasses expose the parameters they have; these are the resolved values
    def _settings(self) -> tuple[float, int]:
        return float(self.penalty), int(getattr(self, "max_parents", 1))

    def fit(self, X, y):
        """Learn the structure (MAP) or the structure posterior (BMA) from ``X, y``."""
        if self.averaging not in ("map", "bma"):
            raise ValueError(f"averaging must be 'map' or 'bma', got {self.averaging!r}")
        penalty, k = self._settings()
        data = self._fit_data(X, y)
        features = data.names[:-1]
        fam = _F.SCFFamilies(data, features, [self.class_column], max_parents=k, penalty=penalty,
                             prior=self.prior, ess=self.ess, intra=self._intra)
        self.families_ = fam
        res = _F._result_from_choice(fam, *_F._map_choice(fam))
        self.result_ = res
        self.graph_ = res.graph
        self.markov_blanket_ = res.markov_blanket(self.class_column)
        if self.averaging == "map":
            self._tables = _F._MAPTables(fam, res)
        else:
            self.average_ = _F.SCFAverage(None, features, [self.class_column], families=fam)
        return self

    def _joint(self, X) -> np.ndarray:
        check_is_fitted(self, "families_")
        feats = self._encode(X).astype(np.int64)
        n = feats.shape[0]
        out = np.empty((n, len(self.classes_)))
        codes = np.zeros((n, feats.shape[1] + 1), dtype=np.int64)
        codes[:, :-1] = feats
        for c in range(len(self.classes_)):
            codes[:, -1] = c
            prior = self.families_.condition_log_prior(codes)
            if self.averaging == "map":
                out[:, c] = prior + self._tables.log_prob(codes)
            else:
                out[:, c] = prior + self.average_.log_predictive(codes)
        return out

    def joint_log_likelihood(self, X) -> np.ndarray:
        """``log P(x, c | D)`` for every row and class (columns follow ``classes_``)."""
        return self._joint(X)

    def predict_proba(self, X) -> np.ndarray:
        """``P(class | x, D)``; columns follow ``classes_``."""
        return normalize_log(self._joint(X))

    def edge_posteriors(self) -> pd.DataFrame:
        """BMA posterior of every edge (rows parents incl. ``ROOT`` and the class, columns features).

        Forest classifiers (FAN, SFAN) only; for MAP fits it is computed on demand.
        """
        check_is_fitted(self, "families_")
        if self._intra != "forest":
            raise NotImplementedError("edge posteriors are available for FAN and SFAN (forests)")
        avg = getattr(self, "average_", None) or _F.SCFAverage(None, self.families_.targets,
                                                               self.families_.conditions,
                                                               families=self.families_)
        return avg.edge_posteriors()


class SFAN(_SCFClassifier):
    """Selective forest-augmented naive Bayes (Ziebart, Dey & Bagnell, Fig. 5e).

    Parameters
    ----------
    penalty : float, default 0.0
        Exclusion penalty ``alpha`` (Eq. 13), subtracted for every feature without the
        class as a parent; ``float('inf')`` gives FAN.
    max_parents : int, default 1
        Condition parents per feature (with the class as the only condition, 0 or 1).
    averaging : {"map", "bma"}
        MAP structure or Bayesian model average over every SFAN.
    prior : {"BDeu", "K2"}, ess : float, default 10.0

    Attributes
    ----------
    graph_ : networkx.DiGraph
        The MAP structure (the class node is ``"__class__"``).
    markov_blanket_ : list of str
        The class's Markov blanket in ``graph_``.

    Examples
    --------
    >>> import bnexplore as bx
    >>> from bnexplore.classifiers import SFAN
    >>> df = bx.datasets.load("vote", missing="drop")
    >>> X, y = df.drop(columns="Class"), df["Class"]
    >>> clf = SFAN(penalty=2.0).fit(X, y)
    >>> float((clf.predict(X) == y).mean()) > 0.9
    True
    """

    def __init__(self, penalty: float = 0.0, max_parents: int = 1, averaging: str = "map",
                 prior: str = "BDeu", ess: float = 10.0):
        self.penalty = penalty
        self.max_parents = max_parents
        self.averaging = averaging
        self.prior = prior
        self.ess = ess


class STAN(_SCFClassifier):
    """Selective tree-augmented naive Bayes (Fig. 5d): a spanning tree over the features,
    class parents optional (exclusion ``penalty`` as in :class:`SFAN`).

    Examples
    --------
    >>> import bnexplore as bx
    >>> from bnexplore.classifiers import STAN
    >>> df = bx.datasets.load("vote", missing="drop")
    >>> clf = STAN().fit(df.drop(columns="Class"), df["Class"])
    >>> len(clf.result_.roots)
    1
    """

    _intra = "tree"

    def __init__(self, penalty: float = 0.0, averaging: str = "map", prior: str = "BDeu",
                 ess: float = 10.0):
        self.penalty = penalty
        self.averaging = averaging
        self.prior = prior
        self.ess = ess


class FAN(_SCFClassifier):
    """Forest-augmented naive Bayes (Fig. 5c): SFAN with an infinite exclusion penalty.

    Examples
    --------
    >>> import bnexplore as bx
    >>> from bnexplore.classifiers import FAN
    >>> df = bx.datasets.load("vote", missing="drop")
    >>> clf = FAN().fit(df.drop(columns="Class"), df["Class"])
    >>> len(clf.markov_blanket_) == df.shape[1] - 1
    True
    """

    def __init__(self, averaging: str = "map", prior: str = "BDeu", ess: float = 10.0):
        self.averaging = averaging
        self.prior = prior
        self.ess = ess

    def _settings(self):
        return math.inf, 1


class TAN(_SCFClassifier):
    """Tree-augmented naive Bayes (Friedman et al. 1997; Fig. 5b): the class is a parent of
    every feature and the features form a spanning tree (the MAP one under the Bayesian
    score, or the average over all of them with ``averaging="bma"``).

    Examples
    --------
    >>> import bnexplore as bx
    >>> from bnexplore.classifiers import TAN
    >>> df = bx.datasets.load("vote", missing="drop")
    >>> clf = TAN().fit(df.drop(columns="Class"), df["Class"])
    >>> clf.graph_.number_of_edges() == 2 * (df.shape[1] - 1) - 1
    True
    """

    _intra = "tree"

    def __init__(self, averaging: str = "map", prior: str = "BDeu", ess: float = 10.0):
        self.averaging = averaging
        self.prior = prior
        self.ess = ess

    def _settings(self):
        return math.inf, 1
