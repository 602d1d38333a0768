"""Classifiers over linear mixtures of one-dependence estimators (Cerquides & Lopez de Mantaras).

* :class:`AODE` - uniform average of the ODEs whose super-parent value was seen more than
  ``threshold`` times (Eq. 14-17), naive Bayes when none qualifies.
* :class:`BMAAODE` - exact Bayesian model averaging over ODEs (Theorems 1-2) with every
  hyperparameter 1: the ODEs weighted by their posterior root probability.
* :class:`MAPLMD` - MAP weights of the linear mixture of discriminative ODEs (Eq. 8), by
  EM on leave-one-out estimates (MAPLMDODE in the paper).
* :class:`MAPLMG` - MAP weights of the linear mixture of generative ODEs (Eq. 10), by
  constrained optimisation on leave-one-out estimates (MAPLMGODE in the paper).

Every classifier exposes ``weights_``: a :class:`pandas.Series` indexed by super-parent
attribute, on the simplex (uniform for AODE).

Missing values at predict time (NaN / None, and unseen categories with the default
``handle_unknown="missing"``) are summed out exactly in every ODE: a missing child's
factor drops, and the ODE whose super-parent is missing sums over that parent's states
(Weka's AODE skips such ODEs instead).  ``predict_joint_log_proba`` is
``log sum_u w_u P_u(x_observed, c)`` for BMAAODE and MAPLMG, and for AODE the log of
``(1/n) sum_{u in Q(x)} P_u(c, x)`` (naive Bayes when no super-parent qualifies, Eq. 17)
summed over the completions of the missing features; MAPLMD mixes conditionals and has
no joint.

Missing values in ``X`` at fit time (NaN / None) follow the package policy (see
:class:`bnexplore.data.DiscreteData`): the ODE count tables, and so every ODE's
parameters (Eq. 15-16) and AODE's frequency threshold, are counted by *available
case* (``N_{C,u}`` over the rows where ``u`` is observed, ``N_{C,u,v}`` over the rows
where ``u`` and ``v`` are); the mixture weights, which compare the ODEs (BMAAODE's
evidences ``W_u``, MAPLMD's and MAPLMG's leave-one-out objectives), are those a fit on
the *complete cases* gives (the rows where every feature is observed), so every ODE is
weighed on the same rows and none can gain weight because its attributes are missing
more often.  Without any complete row the weights are uniform (with a warning).

Examples
--------
>>> import bnexplore as bx
>>> from bnexplore.classifiers import AODE, MAPLMG
>>> df = bx.datasets.load("weather.nominal")
>>> X, y = df.drop(columns="play"), df["play"]
>>> clf = AODE().fit(X, y)
>>> clf.predict_proba(X).shape
(14, 2)
>>> w = MAPLMG().fit(X, y).weights_
>>> list(w.index) == list(X.columns), round(float(w.sum()), 9)
(True, 1.0)
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from scipy.special import logsumexp

from .. import mixtures as mx
from .._validation import Interval
from ._base import ArrayLike, DiscreteClassifier, MatrixLike

__all__ = ["AODE", "BMAAODE", "MAPLMD", "MAPLMG"]

def _ode_log_joint_missing(counts: mx.ODECounts, codes: np.ndarray,
                           states: np.ndarray | None = None) -> np.ndarray:
    """``log P_u(c, x_observed)`` (M, n, K) of rows with ``-1`` for missing features.

    A missing child of an ODE drops (its factor sums to one); the ODE whose super-parent
    is missing sums over that parent's states (``states[u]``: which states, default all).
    Rows without missing values use the compiled kernel.
    """
    codes = np.asarray(codes, dtype=np.int32)
    base, cond = counts.log_tables()
    n_attr, A, K = base.shape
    valid = np.arange(A)[None, :] < counts.arities[:, None]
    if states is None:
        states = valid
    out = np.empty((codes.shape[0], n_attr, K))
    miss = (codes < 0).any(axis=1)
    if (~miss).any():
        out[~miss] = mx._ode_log_joint(counts, codes[~miss])   # codes from _encode
    us = np.arange(n_attr)
    for r in np.flatnonzero(miss):
        x = codes[r]
        obs = np.flatnonzero(x >= 0)
        arr = base + cond[:, obs, :, x[obs], :].sum(axis=0)         # (u, i, c)
        with np.errstate(divide="ignore"):
            out[r] = logsumexp(np.where(states[:, :, None], arr, -np.inf), axis=1)
        out[r, obs] = arr[us[obs], x[obs]]
    return out


def _aode_log_joint(counts: mx.ODECounts, codes: np.ndarray, threshold: float) -> np.ndarray:
    """AODE's joint ``(1/n) sum_{u in Q(x)} P_u(c, x)`` (naive Bayes when ``Q(x)`` is empty),
    summed exactly over the states of the missing features (``-1``).

    ``Q(x)`` holds the super-parents whose value was seen more than ``threshold`` times.
    The sum over completions splits into: every observed qualifying ``u`` with its
    marginal ODE, every missing ``u`` over its qualifying states, and naive Bayes over
    the completions in which no super-parent qualifies.
    """
    codes = np.asarray(codes, dtype=np.int32)
    n_attr = counts.n_attributes
    K = counts.n_classes
    nu = counts.attribute_counts()                                  # (u, A)
    if not (codes < 0).any():       # fast path: the compiled kernels, then the 1/n scale
        out = mx._aode_log_joint(counts, codes, threshold)   # codes from _encode
        some = (nu[np.arange(n_attr)[None, :], codes] > threshold).any(axis=1)
        out[some] -= np.log(n_attr)
        return out
    A = nu.shape[1]
    valid = np.arange(A)[None, :] < counts.arities[:, None]
    qual_state = valid & (nu > threshold)
    lj = _ode_log_joint_missing(counts, codes, states=qual_state)   # missing u: qualifying states
    obs = codes >= 0
    safe = np.where(obs, codes, 0)
    qual = np.where(obs, nu[np.arange(n_attr)[None, :], safe] > threshold,
                    qual_state.any(axis=1)[None, :])
    with np.errstate(divide="ignore"):
        mix = logsumexp(np.where(qual[:, :, None], lj, -np.inf), axis=1) - np.log(n_attr)
        # naive Bayes over the completions where no super-parent qualifies
        nbq = np.log(counts.class_counts + 1.0) - np.log(counts.n + K)
        nb = np.broadcast_to(nbq, (codes.shape[0], K)).copy()
        dead = (obs & qual).any(axis=1)          # an observed super-parent qualifies
        ncv = counts.class_counts_by_attribute()
        for v in range(n_attr):
            lp = np.log(counts.pair[v] + 1.0) - np.log(ncv[v] + counts.arities[v])
            lp = np.where(valid[v][:, None], lp, -np.inf)           # (A, K)
            col = obs[:, v]
            nb[col] += lp[codes[col, v]]
            free = valid[v] & ~qual_state[v]
            nb[~col] += logsumexp(np.where(free[:, None], lp, -np.inf), axis=0)
        nb[dead] = -np.inf
    return np.logaddexp(mix, nb)


class _ODEMixture(DiscreteClassifier):
    """Shared fitting of the ODE counts, fast encoding and ``weights_``."""

    def fit(self, X: MatrixLike, y: ArrayLike) -> "_ODEMixture":
        """Count the ODE statistics of ``X, y`` and set ``weights_``.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            Discrete features (categoricals, strings, bools or small integers); NaN /
            None cells are missing values (ODE tables by available case, weights from
            the complete cases: see the module notes).
        y : array-like of shape (n_samples,)
            Class labels (at least two distinct ones).

        Returns
        -------
        self
        """
        data = self._fit_data(X, y)        # checks the parameters too
        self.counts_ = mx.ode_counts(data)     # available cases when cells are missing
        # the weights compare the ODEs: every ODE on the same rows, the complete cases
        self.weight_counts_ = self.counts_
        if self._compares_odes and data.missing is not None:
            self.weight_counts_ = mx.ode_counts(data.complete_cases())
        if self.weight_counts_.n == 0:
            warnings.warn(f"{type(self).__name__}: no training row has every feature observed, so "
                          f"the ODEs cannot be compared on common rows: the weights are uniform",
                          UserWarning, stacklevel=2)
            w = self._uniform_weights(self.weight_counts_)
        else:
            w = self._fit_weights(self.weight_counts_)
        self.weights_ = pd.Series(np.asarray(w, float), index=pd.Index(
            list(self._feature_names), name="super-parent"), name="weight")
        return self

    #: whether the weights compare the ODEs on the data (all but AODE)
    _compares_odes = True

    def _uniform_weights(self, counts) -> np.ndarray:
        return np.full(counts.n_attributes, 1.0 / counts.n_attributes)

    def log_joint_per_ode(self, X: MatrixLike) -> np.ndarray:
        """``log P_u(c, x)`` (Eq. 14-16) of every row, super-parent and class: (M, n, K).

        Missing features are summed out: a missing child drops, and the ODE whose
        super-parent is missing sums over that parent's states.
        """
        codes = self._encode(X)          # checks that the estimator is fitted
        return _ode_log_joint_missing(self.counts_, codes)

    def _joint_log_proba(self, codes: np.ndarray) -> np.ndarray:
        lj = _ode_log_joint_missing(self.counts_, codes)
        return mx.mixture_log_joint(lj, self.weights_.to_numpy())


class AODE(_ODEMixture):
    """Averaged one-dependence estimators (Webb et al. 2005) as in Eq. 14-17.

    Parameters
    ----------
    threshold : float, default 0
        ``t``: the ODE of super-parent ``u`` takes part for an instance only when its value
        ``x_u`` occurred more than ``t`` times in training.  When no attribute qualifies the
        prediction is naive Bayes with Laplace estimates (as Weka's AODE).  ``t = 0`` equals
        Weka's default frequency limit ``m = 1`` (``N_u(x_u) >= 1``).
    handle_unknown : {"missing", "error"}, default "missing"
        A category never seen in training at predict time is summed out like a missing
        value ("missing") or raises a ``ValueError`` ("error").

    Attributes
    ----------
    weights_ : Series
        Uniform ``1/n`` per super-parent (the per-instance threshold only removes
        super-parents; the remaining ones share the weight equally).
    counts_ : ODECounts

    Notes
    -----
    **Missing values** at fit time: the ODE tables (Eq. 15-16) and the counts
    ``N_u(x_u)`` of the threshold are counted by available case: ``N_{C,u}`` over the
    rows where ``u`` is observed, ``N_{C,u,v}`` over the rows where ``u`` and ``v`` are.
    AODE compares no models (its weights are uniform), so nothing else changes. At
    predict time missing features are summed out exactly.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.datasets.load("contact-lenses")
    >>> clf = AODE(threshold=0).fit(df.drop(columns=df.attrs["target"]), df[df.attrs["target"]])
    >>> float(clf.weights_.iloc[0]) == 1 / 4
    True
    """

    _parameter_constraints = {"threshold": Interval(float, 0, None)}

    def __init__(self, threshold: float = 0, handle_unknown: str = "missing"):
        self.threshold = threshold
        self.handle_unknown = handle_unknown

    _compares_odes = False

    def _fit_weights(self, counts):
        return np.full(counts.n_attributes, 1.0 / counts.n_attributes)

    def _joint_log_proba(self, codes: np.ndarray) -> np.ndarray:
        # (1/n) sum_{u in Q(x)} P_u(c, x), naive Bayes when Q(x) is empty (Eq. 17)
        return _aode_log_joint(self.counts_, codes, self.threshold)


class BMAAODE(_ODEMixture):
    """Exact Bayesian model averaging over ODEs (Eq. 18-29) with every hyperparameter 1.

    The posterior root probabilities ``alpha*_u ~ W_u`` (Eq. 22, 25) become ``weights_``;
    the posterior predictive of each root (Eq. 29) with all ``N' = 1`` equals the Laplace
    estimates of Eq. 15-16, so prediction is Eq. 28 over the ODEs of :class:`AODE`.

    Parameters
    ----------
    None: every Dirichlet hyperparameter is 1 (the paper's setting).
    handle_unknown : {"missing", "error"}, default "missing"
        A category never seen in training at predict time is summed out like a missing
        value ("missing") or raises a ``ValueError`` ("error").

    Attributes
    ----------
    weights_ : Series
        Posterior probability that each attribute is the root.
    log_evidence_ : Series
        ``log W_u`` (natural log).
    weight_counts_ : ODECounts
        The counts the weights were fitted on: ``counts_``, or the counts of the
        complete cases when some training cells were missing.

    Notes
    -----
    **Missing values** at fit time: the ODE tables used for prediction are counted by
    available case (``N_{C,u}`` over the rows where ``u`` is observed, ``N_{C,u,v}``
    over the rows where ``u`` and ``v`` are); the evidences ``log W_u`` and so
    ``weights_`` are computed on the complete cases (the rows where every feature is
    observed), the same rows for every root, so that a root cannot gain weight because
    its attributes are missing more often (a marginal likelihood over fewer rows is
    larger). At predict time missing features are summed out exactly.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.datasets.load("vote", missing="drop")
    >>> clf = BMAAODE().fit(df.drop(columns="Class"), df["Class"])
    >>> bool(clf.weights_.max() > 0.9)      # the posterior concentrates on one root
    True
    """

    def __init__(self, handle_unknown: str = "missing"):
        self.handle_unknown = handle_unknown

    def _fit_weights(self, counts):
        logw = mx.bma_log_evidence(counts)
        self.log_evidence_ = pd.Series(logw, index=pd.Index(list(self._feature_names),
                                                            name="super-parent"),
                                       name="log_evidence")
        return mx._bma_weights_from(logw)


class _MAPMixture(_ODEMixture):
    _parameter_constraints = {"max_iter": Interval(int, 1, None),
                              "tol": Interval(float, 0, None, closed="neither")}

    def _keep(self, res: mx.WeightsResult) -> np.ndarray:
        """Set the optimiser's fitted attributes from ``res``; return the weights."""
        self.n_iter_, self.converged_, self.objective_ = res.n_iter, res.converged, res.objective
        self.kkt_ = res.kkt
        return res.weights

    def loo_log_joint(self) -> np.ndarray:
        """Leave-one-out ``log P_u(c, x)`` of the training rows (Eq. 30-32): (M, n, K).

        The rows the weights were fitted on: every training row, or the complete cases
        when some cells were missing (see ``weight_counts_``).
        """
        check_is_fitted(self, "weight_counts_")
        return mx.ode_log_joint_loo(self.weight_counts_)


class MAPLMD(_MAPMixture):
    """MAP linear mixture of discriminative ODEs (MAPLMDODE): EM weights of Eq. 8.

    The component distributions are the leave-one-out ODE conditionals
    ``P_u^LOO(x_C | x_{-C})`` (Eq. 30-32) of the training instances; the prior is Eq. 6.
    Prediction is Eq. 1 with the full-data ODEs: ``sum_u w_u P_u(c | x)``.

    Parameters
    ----------
    max_iter : int, default 5000
        EM iterations.
    tol : float, default 1e-6
        Scaled KKT residual at which EM stops (see :func:`bnexplore.mixtures.kkt_residual`).
    handle_unknown : {"missing", "error"}, default "missing"
        A category never seen in training at predict time is summed out like a missing
        value ("missing") or raises a ``ValueError`` ("error").

    Attributes
    ----------
    weights_ : Series
    n_iter_ : int
    converged_ : bool
    objective_ : float
        Log posterior (Eq. 8, up to a constant) at ``weights_``.
    kkt_ : float
        Scaled KKT residual at ``weights_``.
    weight_counts_ : ODECounts
        The counts the weights were fitted on: ``counts_``, or the counts of the
        complete cases when some training cells were missing.

    Warns
    -----
    bnexplore.mixtures.WeightsConvergenceWarning
        When EM stops at ``max_iter`` (the message gives the iteration count).

    Notes
    -----
    **Missing values** at fit time: the ODE tables used for prediction are counted by
    available case (``N_{C,u}`` over the rows where ``u`` is observed, ``N_{C,u,v}``
    over the rows where ``u`` and ``v`` are); the weights maximise Eq. 8 over the
    complete cases (the rows where every feature is observed) with the leave-one-out
    ODEs of those rows, i.e. they equal the weights of a fit on the complete cases, the
    same rows for every ODE. At predict time missing features are summed out exactly.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.datasets.load("weather.nominal")
    >>> clf = MAPLMD().fit(df.drop(columns="play"), df["play"])
    >>> clf.converged_, round(float(clf.weights_.sum()), 9)
    (True, 1.0)
    >>> clf.predict(df.drop(columns="play").iloc[:3]).tolist()
    ['no', 'no', 'yes']
    """

    def __init__(self, max_iter: int = 5000, tol: float = 1e-6, handle_unknown: str = "missing"):
        self.max_iter = max_iter
        self.tol = tol
        self.handle_unknown = handle_unknown

    def _fit_weights(self, counts):
        lc = mx.loo_conditional(mx.ode_log_joint_loo(counts), counts.y)
        return self._keep(mx._maplmd_em(lc, self.max_iter, self.tol))   # checked at fit

    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """Class probabilities ``sum_u w_u P_u(c | x)`` (Eq. 1); columns follow ``classes_``.

        Missing features are summed out inside every ODE before its conditional is taken.
        """
        lj = self.log_joint_per_ode(X)
        p = mx.mixture_conditional(lj, self.weights_.to_numpy())
        return p / p.sum(axis=1, keepdims=True)

    @property
    def predict_joint_log_proba(self):
        """Absent (``hasattr`` is False; access raises the reason) -- not defined: MAPLMD mixes the ODEs' conditionals ``P_u(c | x)`` (Eq. 1), a
        discriminative model with no joint distribution over ``(x, c)``.

        Raises
        ------
        AttributeError
            On access; use :meth:`log_joint_per_ode` for the ODEs' joints, or
            :class:`MAPLMG` / :class:`BMAAODE` for a generative mixture.
        """
        raise AttributeError("MAPLMD mixes conditional distributions P_u(c | x) (Eq. 1) and "
                             "defines no joint P(x, c): use log_joint_per_ode for the ODEs' "
                             "joints, or MAPLMG / BMAAODE for a generative mixture")


class MAPLMG(_MAPMixture):
    """MAP linear mixture of generative ODEs (MAPLMGODE): weights maximising Eq. 10.

    The components are the leave-one-out ODE joints ``P_u^LOO(c, x_{-C})`` (Eq. 30-32);
    the weights maximise the supervised posterior under the simplex constraints with the
    gradient of Eq. 13: L-BFGS in softmax coordinates (whose stationary points are the
    KKT points of the constrained problem) or SLSQP with explicit constraints; the KKT
    residual is checked at the end.  Prediction is Eq. 2 with the full-data ODEs.

    Parameters
    ----------
    method : {"softmax", "slsqp"}, default "softmax"
        Optimiser: L-BFGS in softmax coordinates or SLSQP with explicit constraints.
    max_iter : int, default 500
        Optimiser iterations.
    tol : float, default 1e-6
        Scaled KKT residual accepted as converged.
    handle_unknown : {"missing", "error"}, default "missing"
        A category never seen in training at predict time is summed out like a missing
        value ("missing") or raises a ``ValueError`` ("error").

    Attributes
    ----------
    weights_ : Series
    n_iter_ : int
    converged_ : bool
    objective_ : float
        Log posterior (Eq. 10, up to a constant) at ``weights_``.
    kkt_ : float
        Scaled KKT residual at ``weights_``.
    weight_counts_ : ODECounts
        The counts the weights were fitted on: ``counts_``, or the counts of the
        complete cases when some training cells were missing.

    Warns
    -----
    bnexplore.mixtures.WeightsConvergenceWarning
        When the KKT residual is above ``tol`` after ``max_iter`` iterations.

    Notes
    -----
    **Missing values** at fit time: the ODE tables used for prediction are counted by
    available case (``N_{C,u}`` over the rows where ``u`` is observed, ``N_{C,u,v}``
    over the rows where ``u`` and ``v`` are); the weights maximise Eq. 10 over the
    complete cases (the rows where every feature is observed) with the leave-one-out
    ODEs of those rows, i.e. they equal the weights of a fit on the complete cases, the
    same rows for every ODE. At predict time missing features are summed out exactly.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.datasets.load("weather.nominal")
    >>> clf = MAPLMG(method="slsqp").fit(df.drop(columns="play"), df["play"])
    >>> clf.converged_, clf.weights_.idxmax()
    (True, 'outlook')
    """

    def __init__(self, method: str = "softmax", max_iter: int = 500, tol: float = 1e-6,
                 handle_unknown: str = "missing"):
        self.method = method
        self.max_iter = max_iter
        self.tol = tol
        self.handle_unknown = handle_unknown

    _parameter_constraints = {"method": mx._LMG_METHODS}

    def _fit_weights(self, counts):
        lj = mx.ode_log_joint_loo(counts)
        return self._keep(mx._maplmg_optimise(lj, counts.y, self.method, self.max_iter,
                                              self.tol))
