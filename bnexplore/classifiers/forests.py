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

Missing values in ``X`` at fit time (NaN / None) follow the package policy (see
:class:`bnexplore.data.DiscreteData`): the structure - the MAP tree or forest, the
class -> feature choices and, for ``averaging="bma"``, the edge weights of every
structure - is scored family by family, each family's gain over the empty family on
the rows where that family's variables are observed (:mod:`bnexplore._available_case`):
the choice between two parents of a feature is judged on the rows where each pair is
seen, so a feature cannot be chosen because it is missing more often, and a missing
cell costs only the families of its column (data without a single complete row still
gives a structure).  The CPTs, the BMA predictive tables and the class prior are
counted by *available case* (each family over the rows where all its variables are
observed).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from .. import forests as _F
from .._scf_families import MAPTables, SCFFamilies
from .._validation import ESS, Interval, Options, Prior, check_number
from ._base import ArrayLike, DiscreteClassifier, MatrixLike
from ._missing import cpt_log_joint, enumerate_log_joint

__all__ = ["TAN", "FAN", "STAN", "SFAN"]


class _SCFClassifier(DiscreteClassifier):
    _intra = "forest"

    _parameter_constraints = {"averaging": Options("map", "bma"), "prior": Prior("K2", "BDeu"),
                              "ess": ESS()}

    # subclasses expose the parameters they have; these are the resolved values
    def _settings(self) -> tuple[float, int]:
        return float(self.penalty), int(getattr(self, "max_parents", 1))

    def fit(self, X: MatrixLike, y: ArrayLike) -> "_SCFClassifier":
        """Learn the structure (MAP) or the structure posterior (BMA) from ``X, y``.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            Discrete features (categoricals, strings, bools or small integers); NaN /
            None cells are missing values (structure and parameters by available
            case: see the class notes).
        y : array-like of shape (n_samples,)
            Class labels (at least two distinct ones).

        Returns
        -------
        self
        """
        data = self._fit_data(X, y)        # checks the parameters, once
        penalty, k = self._settings()
        features = data.names[:-1]
        fam = SCFFamilies.trusted(data, features, [self.class_column], k, penalty, self.prior,
                                  self.ess, self._intra)
        self.families_ = fam
        res = _F._result_from_choice(fam, *_F._map_choice(fam))
        self.result_ = res
        self.graph_ = res.graph
        self.markov_blanket_ = res.markov_blanket(self.class_column)
        # _fit_data removed every ``*_`` attribute of an earlier fit; drop the private MAP
        # tables too so that a refit with averaging="bma" keeps nothing of the old data
        self._tables = None
        if self.averaging == "map":
            self._tables = MAPTables(fam, res)
        else:
            self.average_ = _F.SCFAverage(None, features, [self.class_column], families=fam)
        return self

    def _joint_complete(self, feats: np.ndarray, drop=()) -> np.ndarray:
        """``log P(x, c | D)`` of complete rows (n, n_classes)."""
        feats = np.asarray(feats, dtype=np.int64)
        n = feats.shape[0]
        out = np.empty((n, len(self.classes_)))
        codes = np.zeros((n, feats.shape[1] + 1), dtype=np.int64)
        codes[:, :-1] = feats
        for c in range(len(self.classes_)):
            codes[:, -1] = c
            prior = self.families_.condition_log_prior(codes)
            if self._tables is not None:      # fitted with averaging="map"
                out[:, c] = prior + self._tables.log_prob(codes)
            else:
                out[:, c] = prior + self.average_.log_predictive(codes)
        return out

    def _cpt_factors(self) -> list:
        """The MAP network as CPT factors (child first) for :func:`cpt_log_joint`."""
        fam = self.families_
        d = fam.data
        K = len(self.classes_)
        cls = d.n_cols - 1
        every_class = np.zeros((K, d.n_cols), dtype=np.int64)
        every_class[:, cls] = np.arange(K)
        factors = [((cls,), fam.condition_log_prior(every_class))]     # log P(c | D)
        for j, ps, ar, logcpt in self._tables.items:
            t = logcpt.reshape(tuple(ar) + (logcpt.shape[1],))
            factors.append(((j,) + tuple(int(p) for p in ps), np.moveaxis(t, -1, 0)))
        return factors

    def _joint_log_proba(self, codes: np.ndarray) -> np.ndarray:
        check_is_fitted(self, "families_")
        K = len(self.classes_)
        if not (codes < 0).any():
            return self._joint_complete(codes)
        ar = [int(a) for a in self.families_.data.arities]
        if self._tables is not None:
            return cpt_log_joint(self._cpt_factors(), codes, ar, K, who=type(self).__name__)
        # BMA over structures: every feature may be a parent of every other one, so the
        # missing features are summed over by enumerating their joint states
        return enumerate_log_joint(self._joint_complete, codes, ar, K,
                                   who=f"{type(self).__name__}(averaging='bma')")

    def joint_log_likelihood(self, X: MatrixLike) -> np.ndarray:
        """``log P(x, c | D)`` for every row and class (columns follow ``classes_``); the
        same as :meth:`predict_joint_log_proba`."""
        return self.predict_joint_log_proba(X)

    def edge_posteriors(self) -> pd.DataFrame:
        """BMA posterior of every edge (rows parents incl. ``ROOT`` and the class, columns features).

        For tree classifiers (TAN, STAN) the ``ROOT`` row sums to one over the features
        (a spanning tree has one root).  For MAP fits it is computed on demand.
        """
        check_is_fitted(self, "families_")
        avg = getattr(self, "average_", None) or _F.SCFAverage(None, self.families_.targets,
                                                               self.families_.conditions,
                                                               families=self.families_)
        return avg.edge_posteriors()

    def posterior_graph(self, threshold: float = 0.5) -> "nx.DiGraph":
        """The graph of every edge whose BMA posterior is at least ``threshold``.

        Its nodes are the class (:attr:`class_column`) and the features; the ``ROOT``
        row of :meth:`edge_posteriors` is left out. Its Markov blanket of the class is
        :func:`bnexplore.networks.markov_blanket` ``(graph, clf.class_column)``.

        Parameters
        ----------
        threshold : float, default 0.5
            Least posterior of a drawn edge, in (0, 1].

        Examples
        --------
        >>> import bnexplore as bx
        >>> from bnexplore.classifiers import SFAN
        >>> df = bx.datasets.load("weather.nominal")
        >>> clf = SFAN(penalty=1.0, averaging="bma").fit(df.drop(columns="play"), df["play"])
        >>> g = clf.posterior_graph(0.5)
        >>> sorted(g.nodes) == sorted([clf.class_column, *clf.feature_names_in_])
        True
        """
        import networkx as nx

        check_number(threshold, "threshold", low=0, high=1, closed="right")
        post = self.edge_posteriors()
        features = list(self.feature_names_in_)
        graph = nx.DiGraph()
        graph.add_nodes_from([self.class_column, *features])
        graph.add_edges_from((p, c) for p in [*features, self.class_column] for c in features
                             if p != c and p in post.index and post.loc[p, c] >= threshold)
        return graph


class SFAN(_SCFClassifier):
    """Selective forest-augmented naive Bayes (Ziebart, Dey & Bagnell, Fig. 5e).

    Parameters
    ----------
    penalty : float, default 0.0
        Exclusion penalty (the paper's alpha, Eq. 13), subtracted for every feature without the
        class as a parent; ``float('inf')`` gives FAN.
    max_parents : int, default 1
        Condition parents per feature (with the class as the only condition, 0 or 1).
    averaging : {"map", "bma"}
        MAP structure or Bayesian model average over every SFAN.
    prior : {"BDeu", "K2"}, default "BDeu"
        Dirichlet prior of the structure score and the parameters.
    ess : float, default 10.0
        Equivalent sample size of BDeu.  These defaults differ from the library's
        (K2, ess 1) because they follow Ziebart, Dey & Bagnell (2007), whose
        classification experiments score with BDeu at prior weight 10.
    handle_unknown : {"missing", "error"}, default "missing"
        A category never seen in training at predict time is summed out like a missing
        value ("missing") or raises a ``ValueError`` ("error").

    Attributes
    ----------
    graph_ : networkx.DiGraph
        The MAP structure (the class node is ``"__class__"``).
    markov_blanket_ : list of str
        The class's Markov blanket in ``graph_``.

    Notes
    -----
    **Missing values** at fit time: the structure (the forest and which features get the
    class as a parent; with ``averaging="bma"`` every forest's weight) is scored family by family on the rows where the
    family's variables are observed (its gain over the empty family), so a feature cannot
    be chosen as a parent because it is missing more often; the CPTs and the class prior are counted by available case (each family over
    the rows where its variables are observed). At predict time missing features are
    summed out exactly.

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

    _parameter_constraints = {"penalty": Interval(float, 0, None, allow_inf=True),
                              "max_parents": Interval(int, 0, None)}

    def __init__(self, penalty: float = 0.0, max_parents: int = 1, averaging: str = "map",
                 prior: str = "BDeu", ess: float = 10.0, handle_unknown: str = "missing"):
        self.penalty = penalty
        self.max_parents = max_parents
        self.averaging = averaging
        self.prior = prior
        self.ess = ess
        self.handle_unknown = handle_unknown


class STAN(_SCFClassifier):
    """Selective tree-augmented naive Bayes (Fig. 5d): a spanning tree over the features,
    class parents optional (exclusion ``penalty`` as in :class:`SFAN`).

    Parameters
    ----------
    penalty : float, default 0.0
        Exclusion penalty (the paper's alpha, Eq. 13) for every feature without the class as a
        parent; ``float('inf')`` gives TAN.
    averaging : {"map", "bma"}
        MAP structure or Bayesian model average over every STAN.
    prior : {"BDeu", "K2"}, default "BDeu"
        Dirichlet prior of the structure score and the parameters.
    ess : float, default 10.0
        Equivalent sample size of BDeu.  These defaults differ from the library's
        (K2, ess 1) because they follow Ziebart, Dey & Bagnell (2007), whose
        classification experiments score with BDeu at prior weight 10.
    handle_unknown : {"missing", "error"}, default "missing"
        A category never seen in training at predict time is summed out like a missing
        value ("missing") or raises a ``ValueError`` ("error").

    Attributes
    ----------
    graph_ : networkx.DiGraph
        The MAP structure (the class node is ``"__class__"``).
    markov_blanket_ : list of str
    result_ : bnexplore.forests.SCFResult
        The MAP structure with its score and roots.

    Notes
    -----
    **Missing values** at fit time: the structure (the tree and which features get the
    class as a parent; with ``averaging="bma"`` every tree's weight) is scored family by family on the rows where the
    family's variables are observed (its gain over the empty family), so a feature cannot
    be chosen as a parent because it is missing more often; the CPTs and the class prior are counted by available case (each family over
    the rows where its variables are observed). At predict time missing features are
    summed out exactly.

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
    _parameter_constraints = {"penalty": Interval(float, 0, None, allow_inf=True)}

    def __init__(self, penalty: float = 0.0, averaging: str = "map", prior: str = "BDeu",
                 ess: float = 10.0, handle_unknown: str = "missing"):
        self.penalty = penalty
        self.averaging = averaging
        self.prior = prior
        self.ess = ess
        self.handle_unknown = handle_unknown


class _EveryClassParent(_SCFClassifier):
    """TAN and FAN: the class is a parent of every feature (an infinite exclusion penalty)."""

    def __init__(self, averaging: str = "map", prior: str = "BDeu", ess: float = 10.0,
                 handle_unknown: str = "missing"):
        self.averaging = averaging
        self.prior = prior
        self.ess = ess
        self.handle_unknown = handle_unknown

    def _settings(self) -> tuple[float, int]:
        return math.inf, 1


class FAN(_EveryClassParent):
    """Forest-augmented naive Bayes (Fig. 5c): SFAN with an infinite exclusion penalty.

    Parameters
    ----------
    averaging : {"map", "bma"}
        MAP structure or Bayesian model average over every FAN.
    prior : {"BDeu", "K2"}, default "BDeu"
        Dirichlet prior of the structure score and the parameters.
    ess : float, default 10.0
        Equivalent sample size of BDeu.  These defaults differ from the library's
        (K2, ess 1) because they follow Ziebart, Dey & Bagnell (2007), whose
        classification experiments score with BDeu at prior weight 10.
    handle_unknown : {"missing", "error"}, default "missing"
        A category never seen in training at predict time is summed out like a missing
        value ("missing") or raises a ``ValueError`` ("error").

    Attributes
    ----------
    graph_ : networkx.DiGraph
        The MAP structure (the class node is ``"__class__"``).
    markov_blanket_ : list of str

    Notes
    -----
    **Missing values** at fit time: the structure (the forest; with ``averaging="bma"``
    every forest's weight) is scored family by family on the rows where
    the family's variables are observed (its gain over the empty family), so a feature
    cannot be chosen as a parent because it is missing more often; the CPTs and the class prior are counted by
    available case (each family over the rows where its variables are observed). At
    predict time missing features are summed out exactly.

    Examples
    --------
    >>> import bnexplore as bx
    >>> from bnexplore.classifiers import FAN
    >>> df = bx.datasets.load("vote", missing="drop")
    >>> clf = FAN().fit(df.drop(columns="Class"), df["Class"])
    >>> len(clf.markov_blanket_) == df.shape[1] - 1
    True
    """


class TAN(_EveryClassParent):
    """Tree-augmented naive Bayes (Friedman et al. 1997; Fig. 5b): the class is a parent of
    every feature and the features form a spanning tree (the MAP one under the Bayesian
    score, or the average over all of them with ``averaging="bma"``).

    Parameters
    ----------
    averaging : {"map", "bma"}
        MAP structure or Bayesian model average over every TAN.
    prior : {"BDeu", "K2"}, default "BDeu"
        Dirichlet prior of the structure score and the parameters.
    ess : float, default 10.0
        Equivalent sample size of BDeu.  These defaults differ from the library's
        (K2, ess 1) because they follow Ziebart, Dey & Bagnell (2007), whose
        classification experiments score with BDeu at prior weight 10.
    handle_unknown : {"missing", "error"}, default "missing"
        A category never seen in training at predict time is summed out like a missing
        value ("missing") or raises a ``ValueError`` ("error").

    Attributes
    ----------
    graph_ : networkx.DiGraph
        The MAP structure (the class node is ``"__class__"``).
    markov_blanket_ : list of str

    Notes
    -----
    **Missing values** at fit time: the structure (the tree; with ``averaging="bma"``
    every tree's weight) is scored family by family on the rows where
    the family's variables are observed (its gain over the empty family), so a feature
    cannot be chosen as a parent because it is missing more often; the CPTs and the class prior are counted by
    available case (each family over the rows where its variables are observed). At
    predict time missing features are summed out exactly.

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
