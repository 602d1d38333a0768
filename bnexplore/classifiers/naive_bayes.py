"""Naive Bayes with the standard parametrisation (Dash & Cooper Eq. 3).

``theta_ijk = (alpha_ijk + N_ijk) / (alpha_ij + N_ij)``: the posterior mean under a
Dirichlet prior, which predicts exactly as averaging over all parameter values of the
naive structure. ``alpha=1`` is the K2 prior (Laplace); ``prior="BDeu"`` spreads an
equivalent sample size ``ess`` over each family's cells.
"""
from __future__ import annotations

import numpy as np

from .._validation import ESS, Prior, check_prior
from ..data.core import config_index
from ..scores import standard_parameters
from ._base import ArrayLike, DiscreteClassifier, MatrixLike

__all__ = ["NaiveBayes", "dirichlet_log_cpt"]


def dirichlet_log_cpt(counts: np.ndarray, prior: str = "K2", ess: float = 1.0) -> np.ndarray:
    """Log of the standard parametrisation (Eq. 3) of a (q, r) count table.

    Examples
    --------
    >>> import numpy as np
    >>> np.exp(dirichlet_log_cpt(np.array([[3, 1]]))).round(3).tolist()
    [[0.667, 0.333]]
    """
    check_prior(prior)
    return np.log(standard_parameters(counts, prior, ess))


class NaiveBayes(DiscreteClassifier):
    """Naive Bayes classifier over discrete features (SNN in Dash & Cooper).

    Parameters
    ----------
    prior : {"K2", "BDeu"}, default "K2"
        Dirichlet parameter prior: K2 (every alpha_ijk = 1) or BDeu.
    ess : float, default 1.0
        Equivalent sample size for BDeu.
    handle_unknown : {"missing", "error"}, default "missing"
        A category never seen in training at predict time is summed out like a missing
        value ("missing") or raises a ``ValueError`` ("error").  Missing values (NaN /
        None) at predict time are always summed out: their factors drop.

    Attributes
    ----------
    classes_ : ndarray
    log_class_prior_ : ndarray of shape (n_classes,)
    log_cpts_ : list of ndarray, one (n_classes, r_f) table per feature
    data_ : DiscreteData
        The training data; ``data_.missing`` marks the missing training cells (not
        counted).

    Notes
    -----
    Missing values at fit time are handled by available-case counting: the class prior
    counts every row, and the table of feature ``f`` counts the rows in which ``f`` is
    observed.  This is the posterior mean under the Dirichlet prior when values are
    missing at random.  A column with no observed value raises a ``ValueError``.

    Examples
    --------
    >>> import bnexplore as bx
    >>> from bnexplore.classifiers import NaiveBayes
    >>> df = bx.datasets.load("vote", missing="drop")
    >>> X, y = df.drop(columns="Class"), df["Class"]
    >>> clf = NaiveBayes().fit(X, y)
    >>> round(clf.score(X, y), 2) > 0.85
    True
    """

    _parameter_constraints = {"prior": Prior("K2", "BDeu"), "ess": ESS()}

    def __init__(self, prior: str = "K2", ess: float = 1.0, handle_unknown: str = "missing"):
        self.prior = prior
        self.ess = ess
        self.handle_unknown = handle_unknown

    def fit(self, X: MatrixLike, y: ArrayLike) -> "NaiveBayes":
        """Estimate the class prior and one (n_classes, r_f) table per feature (Eq. 3).

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            Discrete features (categoricals, strings, bools or small integers); NaN /
            None cells are missing values (available-case counting, see Notes).
        y : array-like of shape (n_samples,)
            Class labels (at least two distinct ones).

        Returns
        -------
        self
        """
        data = self._fit_data(X, y)        # checks the parameters too
        c = data.n_cols - 1
        K = int(data.arities[c])
        cls = data.columns[c].astype(np.int64)
        prior, ess = self.prior, float(self.ess)
        self.log_class_prior_ = np.log(standard_parameters(
            np.bincount(cls, minlength=K)[None, :], prior, ess))[0]
        # available cases: each feature is counted over the rows where it is observed;
        # cell (class, state) of feature f is the configuration index of (class, f)
        tables = []
        for f in range(c):
            r = int(data.arities[f])
            cell = config_index([cls, data.columns[f]], [K, r])
            if data.missing is not None:
                cell = cell[~data.missing[:, f]]
            counts = np.bincount(cell, minlength=K * r).reshape(K, r)
            tables.append(np.log(standard_parameters(counts, prior, ess)))
        self.log_cpts_ = tables
        return self

    def _joint_log_proba(self, codes: np.ndarray) -> np.ndarray:
        out = np.tile(self.log_class_prior_, (codes.shape[0], 1))
        for f, table in enumerate(self.log_cpts_):
            col = codes[:, f]
            miss = col < 0
            if miss.any():   # a missing feature's factor sums to one: it drops
                term = table[:, np.where(miss, 0, col)].T
                term[miss] = 0.0
                out += term
            else:
                out += table[:, col].T
        return out

    def joint_log_likelihood(self, X: MatrixLike) -> np.ndarray:
        """log P(class, x) for every row (n, n_classes); the same as
        :meth:`predict_joint_log_proba`."""
        return self.predict_joint_log_proba(X)
