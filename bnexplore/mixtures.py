"""Linear mixtures of one-dependence estimators (Cerquides & Lopez de Mantaras, 2005).

A one-dependence estimator (ODE, "SPODE") with super-parent ``u`` models the joint
``P_u(c, x) = P_u(c, x_u) prod_{v != u} P_u(x_v | c, x_u)`` with the Laplace estimates
of Eq. 15-16 (note the extra ``#C`` in the denominator of Eq. 15)::

    P_u(c, i)        = (N_{C,u}(c, i) + 1) / (N + #C #A_u)
    P_u(j | c, i)    = (N_{C,u,v}(c, i, j) + 1) / (N_{C,u}(c, i) + #A_v)

This module computes, from one pass of counting,

* the log joint ``log P_u(c, x)`` of every instance, super-parent and class
  (:func:`ode_log_joint`), vectorised over instances (numba kernel);
* AODE (Eq. 17): the uniform mixture over the super-parents with ``N_u(x_u) > t``,
  naive Bayes (Weka's Laplace estimates) when none qualifies (:func:`aode_log_joint`);
* exact Bayesian model averaging over ODEs under the decomposable prior with every
  hyperparameter 1 (Theorems 1-2, Eq. 18-29): the log evidence ``log W_u`` of every root
  (Eq. 25, :func:`bma_log_evidence`) and the posterior root weights ``alpha*_u``
  (Eq. 22, :func:`bma_weights`);
* leave-one-out ODE estimates ``P_u^LOO`` (Eq. 30-32) from the counts without refitting
  (:func:`ode_log_joint_loo`);
* MAP weights of the linear mixture of discriminative distributions (Eq. 8) by EM with
  the prior of Eq. 6 (:func:`maplmd_weights`), and of the linear mixture of generative
  distributions (Eq. 10) by constrained optimisation with the gradient of Eq. 13
  (:func:`maplmg_weights`).

Everything is in natural-log space.  The kernels are in :mod:`bnexplore._ode_kernels`.

Missing values.  :func:`ode_counts` of data with missing cells counts by available
case: ``N_{C,u}(c, i)`` over the rows where ``u`` is observed, ``N_{C,u,v}(c, i, j)``
over the rows where ``u`` and ``v`` are, and Eq. 15-16 then use, per family, the number
of rows it was counted on (``N_u`` for ``N``, ``sum_j N_{C,u,v}(c, i, j)`` for
``N_{C,u}(c, i)``; :attr:`ODECounts.n_observed`, :attr:`ODECounts.pair_given`).  The
model weights compare ODEs and must see the same rows for every ODE:
:func:`bma_log_evidence` and :func:`ode_log_joint_loo` refuse such counts and take the
counts of the complete cases (``ode_counts(data.complete_cases())``).

References
----------
J. Cerquides and R. Lopez de Mantaras. Robust Bayesian linear classifier ensembles.
IIIA Research Report RR-IIIA-2005-03 (ECML 2005).
G. I. Webb, J. Boughton and Z. Wang. Not so naive Bayes: aggregating one-dependence
estimators. Machine Learning 58(1):5-24, 2005.

Examples
--------
>>> import bnexplore as bx
>>> from bnexplore.mixtures import ode_counts, aode_log_joint, bma_weights
>>> data = bx.data.DiscreteData.from_frame(bx.datasets.load("weather.nominal"))
>>> counts = ode_counts(data)
>>> counts.n_attributes, counts.n_classes, counts.n
(4, 2, 14)
>>> lj = aode_log_joint(counts, counts.codes)       # (14, 2) log P_AODE(c, x)
>>> w = bma_weights(counts)
>>> round(float(w.sum()), 12)
1.0
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize
from scipy.special import gammaln, logsumexp

from ._ode_kernels import log_sum_over_models, loo_true_class, ode_family_counts, ode_log_joints
from ._parallel import PARALLEL_LOCK
from .data.core import DiscreteData, as_discrete, check_table_size

__all__ = [
    "ODECounts",
    "ode_counts",
    "ode_log_joint",
    "ode_log_joint_loo",
    "naive_bayes_log_joint",
    "aode_log_joint",
    "mixture_log_joint",
    "mixture_conditional",
    "bma_log_evidence",
    "bma_weights",
    "loo_conditional",
    "maplmd_objective",
    "maplmd_weights",
    "maplmg_objective",
    "maplmg_weights",
    "kkt_residual",
    "WeightsResult",
    "WeightsConvergenceWarning",
]


class WeightsConvergenceWarning(UserWarning):
    """The mixture weights did not reach the optimum within ``max_iter`` iterations."""


# --------------------------------------------------------------------------- counts
@dataclass
class ODECounts:
    """Sufficient statistics of all ODEs of a classified data set.

    Attributes
    ----------
    names : list of str
        Attribute names (class excluded), in column order.
    arities : ndarray (n,)
        ``#A_u``.
    n_classes : int
        ``#C``.
    n : int
        ``N``, number of training instances.
    class_counts : ndarray (K,)
        ``N_C(c)``.
    pair : ndarray (n, A, K)
        ``pair[u, i, c] = N_{C,u}(c, i)`` (``A`` = largest arity, padded with zeros).
    triple : ndarray (n, n, A, A, K)
        ``triple[u, v, i, j, c] = N_{C,u,v}(c, i, j)``.
    codes : ndarray (N, n) int32
        The training attribute codes (``-1`` where missing); ``y`` (N,) the class codes.
    n_observed : ndarray (n,) or None
        With missing cells: ``N_u``, the rows where attribute ``u`` is observed (the
        ``N`` of Eq. 15 for root ``u``); ``None`` when nothing is missing.
    pair_given : ndarray (n, n, A, K) or None
        With missing cells: ``pair_given[u, v, i, c] = sum_j N_{C,u,v}(c, i, j)``, the
        count of ``(c, i)`` over the rows where ``v`` is observed too (the denominator
        of Eq. 16); ``None`` when nothing is missing (it equals ``pair`` then).
    """

    names: list
    arities: np.ndarray
    n_classes: int
    n: int
    class_counts: np.ndarray
    pair: np.ndarray
    triple: np.ndarray
    codes: np.ndarray
    y: np.ndarray
    n_observed: np.ndarray | None = None
    pair_given: np.ndarray | None = None
    _tables: tuple | None = field(default=None, repr=False)

    @property
    def n_attributes(self) -> int:
        return len(self.names)

    @property
    def has_missing(self) -> bool:
        """Whether some training cell was missing (the counts are available-case counts)."""
        return self.n_observed is not None

    def class_counts_by_attribute(self) -> np.ndarray:
        """``N_C(c)`` over the rows where each attribute is observed, (n, K): naive Bayes's
        denominators (every row equals ``class_counts`` when nothing is missing)."""
        if self.n_observed is None:
            return np.broadcast_to(self.class_counts, (self.n_attributes, self.n_classes))
        return self.pair.sum(axis=1)

    def attribute_counts(self) -> np.ndarray:
        """``N_u(i)`` as an (n, A) array."""
        return self.pair.sum(axis=2)

    def log_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """``(base, cond)``: ``base[u, i, c] = log P_u(c, i)`` (Eq. 15) and
        ``cond[u, v, i, j, c] = log P_u(j | c, i)`` (Eq. 16), zero on ``v == u``."""
        if self._tables is None:
            K = self.n_classes
            ar = self.arities.astype(float)
            if self.n_observed is None:
                base = np.log(self.pair + 1.0) - np.log(self.n + K * ar)[:, None, None]
                denom = np.log(self.pair[:, None, :, None, :] + ar[None, :, None, None, None])
            else:     # available cases: each family over the rows it was counted on
                base = np.log(self.pair + 1.0) - np.log(self.n_observed + K * ar)[:, None, None]
                denom = np.log(self.pair_given[:, :, :, None, :]
                               + ar[None, :, None, None, None])
            cond = np.log(self.triple + 1.0) - denom
            idx = np.arange(self.n_attributes)
            cond[idx, idx] = 0.0
            self._tables = (np.ascontiguousarray(base), np.ascontiguousarray(cond))
        return self._tables


def ode_counts(data: DiscreteData, target: str | None = None) -> ODECounts:
    """Count ``N_C(c)``, ``N_{C,u}(c, i)`` and ``N_{C,u,v}(c, i, j)`` in one pass.

    Parameters
    ----------
    data : DiscreteData or DataFrame
        Discrete data with a class column (``data.target`` or ``target``).  Missing
        attribute cells are counted by available case (see the module notes); rows
        whose class is missing are left out.
    target : str, optional
        Class column (default ``data.target``).

    Returns
    -------
    ODECounts

    Raises
    ------
    ValueError
        If there is no class column or no attribute besides it;
        :class:`~bnexplore.data.MemoryBudgetError` when the pair table would not fit.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": ["x", "y", "x"], "b": ["p", "p", "q"], "c": [0, 1, 0]})
    >>> cnt = ode_counts(df, target="c")
    >>> cnt.pair[0, :, 0].tolist()     # N_{C,a}(c=0, a=x), N_{C,a}(c=0, a=y)
    [2.0, 0.0]
    """
    data = as_discrete(data, target=target, missing="keep")
    if data.target is None:
        raise ValueError("the data has no class column: pass target='<class column>'")
    t = data.index(data.target)
    if data.missing is not None and data.missing[:, t].any():
        data = data.take(~data.missing[:, t])     # a row without its class counts nowhere
    attrs = [j for j in range(data.n_cols) if j != t]
    if not attrs:
        raise ValueError("the data has no attribute besides the class "
                         f"{data.target!r}: an ODE needs at least one attribute")
    names = [data.names[j] for j in attrs]
    arities = data.arities[attrs].astype(np.int64)
    K = int(data.arities[t])
    A = int(arities.max())
    n_attr = len(attrs)
    check_table_size([n_attr, n_attr, A, A, K], ["attribute", "attribute", "max arity",
                                                 "max arity", data.target],
                     what="ODE count table N_{C,u,v}")
    codes = np.ascontiguousarray(data.codes[:, attrs], dtype=np.int32)
    y = np.ascontiguousarray(data.codes[:, t], dtype=np.int32)
    class_counts = np.bincount(y, minlength=K).astype(float)
    if data.missing is None:
        pair, triple = ode_family_counts(codes, y, n_attr, A, K)
        return ODECounts(names=names, arities=arities, n_classes=K, n=int(len(y)),
                         class_counts=class_counts, pair=pair, triple=triple, codes=codes, y=y)
    codes[data.missing[:, attrs]] = -1
    pair, triple = ode_family_counts(codes, y, n_attr, A, K)
    return ODECounts(names=names, arities=arities, n_classes=K, n=int(len(y)),
                     class_counts=class_counts, pair=pair, triple=triple, codes=codes, y=y,
                     n_observed=pair.sum(axis=(1, 2)), pair_given=triple.sum(axis=3))


# --------------------------------------------------------------------------- ODE joints
def _lse_over_models(lj: np.ndarray, logw: np.ndarray | None = None,
                     mask: np.ndarray | None = None) -> np.ndarray:
    """``log sum_u [mask] exp(lj[:, u, :] + logw[u])`` for (M, n, K) arrays (numba).

    Rows where the mask excludes every model get ``-inf``.
    """
    M, n, _ = lj.shape
    logw = np.zeros(n) if logw is None else np.ascontiguousarray(logw, dtype=float)
    mask = np.ones((M, n), dtype=np.bool_) if mask is None else np.ascontiguousarray(mask)
    with PARALLEL_LOCK:
        return log_sum_over_models(np.ascontiguousarray(lj, dtype=float), logw, mask)


def _refuse_missing(counts: ODECounts, who: str) -> None:
    """Model comparisons need every ODE counted on the same rows."""
    if counts.has_missing:
        raise ValueError(f"{who} compares ODEs, which must be counted on the same rows: these "
                         f"counts are available-case counts of data with missing values; pass "
                         f"ode_counts(data.complete_cases())")


def _check_codes(counts: ODECounts, codes) -> np.ndarray:
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    if codes.ndim != 2 or codes.shape[1] != counts.n_attributes:
        raise ValueError(f"codes must have shape (n_rows, {counts.n_attributes}), "
                         f"got {codes.shape}")
    if codes.size:
        bad = np.nonzero((codes.min(axis=0) < 0) | (codes.max(axis=0) >= counts.arities))[0]
        if bad.size:
            raise ValueError(f"column {counts.names[bad[0]]!r} has a code outside its "
                             f"{counts.arities[bad[0]]} states (unseen category?)")
    return codes


def ode_log_joint(counts: ODECounts, codes: np.ndarray) -> np.ndarray:
    """``log P_u(c, x)`` (Eq. 14-16) for every row, super-parent and class.

    Parameters
    ----------
    counts : ODECounts
    codes : int array (M, n)
        Attribute codes in the training coding.

    Returns
    -------
    ndarray (M, n, K)

    Examples
    --------
    >>> import bnexplore as bx
    >>> cnt = ode_counts(bx.data.DiscreteData.from_frame(bx.datasets.load("weather.nominal")))
    >>> ode_log_joint(cnt, cnt.codes[:3]).shape
    (3, 4, 2)
    """
    codes = _check_codes(counts, codes)
    base, cond = counts.log_tables()
    with PARALLEL_LOCK:
        out = ode_log_joints(np.ascontiguousarray(codes.T), base, cond)
    return np.ascontiguousarray(out.transpose(1, 0, 2))


def ode_log_joint_loo(counts: ODECounts, codes: np.ndarray | None = None,
                      y: np.ndarray | None = None) -> np.ndarray:
    """Leave-one-out ``log P_u^LOO(c, x)`` (Eq. 30-32) of the training instances.

    Each instance is removed from the counts it was part of: for the true class
    ``c = x_C`` one is subtracted from ``N``, ``N_{C,u}`` and ``N_{C,u,v}`` (the other
    classes are unchanged), which equals refitting the ODEs without that instance.

    Parameters
    ----------
    counts : ODECounts
    codes, y : arrays, optional
        Training rows and their class codes (default: all training rows). Every row
        must be one of the counted instances.

    Returns
    -------
    ndarray (M, n, K)
    """
    _refuse_missing(counts, "ode_log_joint_loo")
    if codes is None:
        codes, y = counts.codes, counts.y
    codes = _check_codes(counts, codes)
    y = np.ascontiguousarray(y, dtype=np.int32)
    out = ode_log_joint(counts, codes)
    if len(y) and np.any(counts.triple[np.arange(counts.n_attributes)[None, :],
                                       np.arange(counts.n_attributes)[None, :],
                                       codes, codes, y[:, None]] < 1):
        raise ValueError("ode_log_joint_loo: some rows are not training instances of "
                         "these counts (leave-one-out needs the counted rows)")
    with PARALLEL_LOCK:
        return loo_true_class(out, codes, y, counts.pair, counts.triple,
                               counts.arities.astype(float), float(counts.n), counts.n_classes)


def naive_bayes_log_joint(counts: ODECounts, codes: np.ndarray) -> np.ndarray:
    """Naive Bayes ``log P(c, x)`` with Weka's Laplace estimates (AODE's fallback).

    ``P(c) = (N_C(c) + 1) / (N + #C)`` and ``P(x_v | c) = (N_{C,v}(c, x_v) + 1) /
    (N_C(c) + #A_v)``.

    Returns
    -------
    ndarray (M, K)
    """
    codes = _check_codes(counts, codes)
    K = counts.n_classes
    out = np.log(counts.class_counts + 1.0) - math.log(counts.n + K)
    out = np.broadcast_to(out, (codes.shape[0], K)).copy()
    ncv = counts.class_counts_by_attribute()      # available cases: rows where v is observed
    for v in range(counts.n_attributes):
        out += np.log(counts.pair[v, codes[:, v], :] + 1.0)
        out -= np.log(ncv[v] + counts.arities[v])[None, :]
    return out


def aode_log_joint(counts: ODECounts, codes: np.ndarray, threshold: float = 0,
                   log_joint: np.ndarray | None = None) -> np.ndarray:
    """AODE ``log sum_{u: N_u(x_u) > t} P_u(c, x)`` (Eq. 17), naive Bayes if no ``u`` qualifies.

    The result is proportional (per row) to the class distribution; normalise with
    :func:`bnexplore.classifiers._base.normalize_log`.

    Parameters
    ----------
    counts : ODECounts
    codes : int array (M, n)
    threshold : float
        ``t``: super-parent ``u`` takes part only when its value was seen more than
        ``t`` times in training.
    log_joint : ndarray (M, n, K), optional
        Precomputed :func:`ode_log_joint`.

    Returns
    -------
    ndarray (M, K)
    """
    codes = _check_codes(counts, codes)
    lj = ode_log_joint(counts, codes) if log_joint is None else log_joint
    nu = counts.attribute_counts()
    qual = nu[np.arange(counts.n_attributes)[None, :], codes] > threshold   # (M, n)
    out = _lse_over_models(lj, mask=qual)
    none = ~qual.any(axis=1)
    if none.any():
        out[none] = naive_bayes_log_joint(counts, codes[none])
    return out


def mixture_log_joint(log_joint: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``log sum_u alpha_u P_u(c, x)`` (Eq. 2 / Eq. 28) from ``(M, n, K)`` log joints."""
    w = np.asarray(weights, dtype=float)
    with np.errstate(divide="ignore"):
        return _lse_over_models(log_joint, np.log(w))


def mixture_conditional(log_joint: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``sum_u alpha_u P_u(c | x)`` (Eq. 1 / Eq. 12): mix the per-ODE conditionals."""
    cond = np.exp(log_joint - logsumexp(log_joint, axis=2, keepdims=True))
    return np.tensordot(cond, np.asarray(weights, float), axes=([1], [0]))


# --------------------------------------------------------------------------- BMA over ODEs
def bma_log_evidence(counts: ODECounts) -> np.ndarray:
    """``log W_u`` of Eq. 25 with every hyperparameter ``N'`` equal to 1.

    ``W_u`` is the marginal likelihood of the data under root ``u``: a Dirichlet(1) over
    the ``#C x #A_u`` cells of ``(C, A_u)`` times, for every other attribute ``v``, a
    Dirichlet(1) over ``A_v`` for every ``(c, i)`` (``u,s(v)N' = #A_v``, Eq. 27)::

        log W_u = lgamma(#C#A_u) - lgamma(N + #C#A_u) + sum_{c,i} lgamma(N_{C,u}(c,i) + 1)
                  + sum_{v != u} sum_{c,i} [ lgamma(#A_v) - lgamma(N_{C,u}(c,i) + #A_v)
                                            + sum_j lgamma(N_{C,u,v}(c,i,j) + 1) ]

    Raises
    ------
    ValueError
        For available-case counts of data with missing values: the roots must be
        compared on the same rows (pass the counts of the complete cases).

    Returns
    -------
    ndarray (n,)
    """
    _refuse_missing(counts, "bma_log_evidence")
    K = counts.n_classes
    ar = counts.arities.astype(float)
    n_attr = counts.n_attributes
    # padded cells have count 0 and contribute lgamma(1) = 0; padded (c, i) rows of the
    # v-terms contribute lgamma(A_v) - lgamma(0 + A_v) = 0
    root = gammaln(K * ar) - gammaln(counts.n + K * ar) + gammaln(counts.pair + 1.0).sum(axis=(1, 2))
    cell = gammaln(counts.triple + 1.0).sum(axis=(3,))                  # (u, v, i, c)
    rows = gammaln(ar)[None, :, None, None] - gammaln(counts.pair[:, None, :, :]
                                                      + ar[None, :, None, None])
    fam = (cell + rows).sum(axis=(2, 3))                                # (u, v)
    fam[np.arange(n_attr), np.arange(n_attr)] = 0.0
    return root + fam.sum(axis=1)


def bma_weights(counts: ODECounts, prior: np.ndarray | None = None) -> np.ndarray:
    """Posterior root probabilities ``alpha*_u / sum alpha*`` (Eq. 22), in log space.

    Parameters
    ----------
    counts : ODECounts
    prior : array (n,), optional
        Root hyperparameters ``alpha_u`` (default all 1).
    """
    return _bma_weights_from(bma_log_evidence(counts), prior)


def _bma_weights_from(logw: np.ndarray, prior: np.ndarray | None = None) -> np.ndarray:
    """:func:`bma_weights` from the log evidences ``logw`` already computed."""
    if prior is not None:
        prior = np.asarray(prior, float)
        if prior.shape != logw.shape or np.any(prior <= 0):
            raise ValueError(f"prior must be {logw.shape[0]} positive numbers")
        logw = logw + np.log(prior)
    return np.exp(logw - logsumexp(logw))


# --------------------------------------------------------------------------- MAP weights
@dataclass
class WeightsResult:
    """Outcome of a weight optimisation.

    Attributes
    ----------
    weights : ndarray (n,)
        On the simplex, every entry > 0.
    objective : float
        Log posterior (up to a constant) at ``weights``.
    n_iter : int
    converged : bool
    kkt : float
        Scaled KKT residual ``max_u |g_u - lambda| / (M + n)`` (see :func:`kkt_residual`).
    method : str
    history : list of float
        Objective after each iteration (EM) or at the end of each solver call.
    """

    weights: np.ndarray
    objective: float
    n_iter: int
    converged: bool
    kkt: float
    method: str
    history: list = field(default_factory=list)


def loo_conditional(log_joint_loo: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``log P_u^LOO(x_C | x_{-C})`` (M, n): the true class's conditional per ODE."""
    y = np.asarray(y)
    return log_joint_loo[np.arange(len(y)), :, y] - logsumexp(log_joint_loo, axis=2)


def maplmd_objective(weights: np.ndarray, log_cond: np.ndarray) -> tuple[float, np.ndarray]:
    """Log of Eq. 8 and its gradient: ``sum_x log sum_u a_u p_u(x) + sum_u log a_u``.

    ``log_cond`` is (M, n): ``log P_DPD_u(x_C | x_{-C})`` of every training instance.
    """
    a = np.asarray(weights, float)
    with np.errstate(divide="ignore"):
        la = np.log(a)
    z = log_cond + la[None, :]
    lse = logsumexp(z, axis=1)
    f = float(lse.sum() + la.sum())
    g = np.exp(log_cond - lse[:, None]).sum(axis=0) + 1.0 / a
    return f, g


def _lmg_terms(log_joint: np.ndarray, y: np.ndarray):
    """Row-scaled ``p_{u, x_C}`` and ``p_u`` of Eq. 13 plus the removed log constant.

    Returns ``(A, B, const)`` with ``A[m, u] = p_{u, x_C} / max_u p_{u, x_C}``,
    ``B[m, u] = p_u / max_u p_u`` and ``const = sum_m log max_u p_{u,x_C} - log max_u p_u``
    (the scaling cancels in the ratio of Eq. 10 up to this constant).
    """
    y = np.asarray(y)
    a = log_joint[np.arange(len(y)), :, y]
    mj = log_joint.max(axis=2, keepdims=True)
    b = np.log(np.exp(log_joint - mj).sum(axis=2)) + mj[:, :, 0]
    am, bm = a.max(axis=1, keepdims=True), b.max(axis=1, keepdims=True)
    return np.exp(a - am), np.exp(b - bm), float((am - bm).sum())


def maplmg_objective(weights: np.ndarray, log_joint: np.ndarray | None = None,
                     y: np.ndarray | None = None, terms=None) -> tuple[float, np.ndarray]:
    """Log of Eq. 10 and its gradient (the bracket of Eq. 13).

    ``f(a) = sum_x [log sum_u a_u p_{u,x_C} - log sum_u a_u p_u] + sum_u log a_u`` with
    ``p_{u,c} = P_u(c, x_{-C})`` and ``p_u = sum_c p_{u,c}``; the gradient is
    ``g_u = sum_x [p_{u,x_C} / sum_v a_v p_{v,x_C} - p_u / sum_v a_v p_v] + 1 / a_u``.
    Pass either ``log_joint`` (M, n, K) and ``y`` or precomputed
    ``terms = _lmg_terms(log_joint, y)``.
    """
    A, B, const = _lmg_terms(log_joint, y) if terms is None else terms
    a = np.asarray(weights, float)
    with np.errstate(divide="ignore"):
        la = np.log(a)
        sa, sb = A @ a, B @ a
        f = float(np.log(sa).sum() - np.log(sb).sum() + const + la.sum())
    g = A.T @ (1.0 / sa) - B.T @ (1.0 / sb) + 1.0 / a
    return f, g


def kkt_residual(weights: np.ndarray, grad: np.ndarray, n_rows: int) -> float:
    """Scaled KKT residual of ``max f(a)`` on the open simplex.

    With every ``a_u > 0`` the inequality multipliers vanish and stationarity of the
    Lagrangian requires ``g_u = lambda`` for every ``u``, where
    ``lambda = sum_u a_u g_u`` (for Eq. 10: ``lambda = n``; for Eq. 8: ``lambda = M + n``).
    Returns ``max_u |g_u - lambda| / (M + n)`` (``M = n_rows``): the violation relative to
    the number of terms of the log posterior.
    """
    a = np.asarray(weights, float)
    g = np.asarray(grad, float)
    lam = float(a @ g)
    return float(np.max(np.abs(g - lam)) / (int(n_rows) + a.size))


def _finish(weights: np.ndarray) -> np.ndarray:
    w = np.clip(np.asarray(weights, float), 1e-300, None)
    return w / w.sum()


def _warn(name: str, res: "WeightsResult", tol: float) -> None:
    warnings.warn(f"{name}: the weights did not converge after {res.n_iter} iterations "
                  f"(scaled KKT residual {res.kkt:.2e} > tol {tol:.1e}); the returned "
                  f"weights are the last finite iterate: raise max_iter",
                  WeightsConvergenceWarning, stacklevel=3)


def maplmd_weights(log_cond: np.ndarray, max_iter: int = 5000, tol: float = 1e-6,
                   init: np.ndarray | None = None, warn: bool = True) -> WeightsResult:
    """MAP weights of the linear mixture of discriminative distributions (Eq. 8) by EM.

    Each instance gets a hidden indicator of the component that generated its class;
    with the prior ``P(a) ~ prod_u a_u`` (Eq. 6) the M-step is
    ``a_u = (sum_x r_{x,u} + 1) / (M + n)`` where ``r_{x,u}`` are the responsibilities.
    The objective (log of Eq. 8) is concave, so the optimum is unique.  EM is accelerated
    with SQUAREM (Varadhan & Roland 2008): two EM steps define a squared extrapolation,
    followed by a stabilising EM step, and the plain EM step is kept whenever the
    extrapolation does not increase the objective, so the objective never decreases.  Iteration stops when the relative KKT residual falls below ``tol``.

    Parameters
    ----------
    log_cond : ndarray (M, n)
        ``log P_u(x_C | x_{-C})`` of every training instance (leave-one-out for ODEs).
    max_iter : int
    tol : float
    init : array (n,), optional
        Starting weights (default uniform).
    warn : bool
        Emit :class:`WeightsConvergenceWarning` when not converged.

    Returns
    -------
    WeightsResult

    Examples
    --------
    >>> import numpy as np
    >>> lc = np.log([[0.9, 0.5], [0.8, 0.5], [0.7, 0.5]])
    >>> r = maplmd_weights(lc)
    >>> r.converged, bool(r.weights[0] > r.weights[1])
    (True, True)
    """
    log_cond = np.asarray(log_cond, float)
    if log_cond.ndim != 2 or log_cond.shape[1] == 0:
        raise ValueError(f"log_cond must be (n_rows, n_models), got shape {log_cond.shape}")
    if not np.all(np.isfinite(log_cond)):
        raise ValueError("log_cond has non-finite entries: every model must give every "
                         "instance a positive probability")
    _check_iter(max_iter, tol)
    M, n = log_cond.shape
    # work with the row-scaled probabilities: the mixture only needs ratios per row
    P = np.exp(log_cond - log_cond.max(axis=1, keepdims=True))
    shift = float(log_cond.max(axis=1).sum())

    def step(a):
        """One EM step from ``a``: (new weights, objective at a, KKT residual at a)."""
        mix = P @ a
        f = float(np.log(mix).sum() + shift + np.log(a).sum())
        R = a * (P.T @ (1.0 / mix))          # sum of responsibilities per component
        new = (R + 1.0) / (M + n)
        # g_u = (R_u + 1) / a_u, lambda = M + n: residual = max |new_u / a_u - 1|
        kkt = float(np.max(np.abs(new / a - 1.0)))
        return _finish(new), f, kkt

    a = np.full(n, 1.0 / n) if init is None else _finish(init)
    history = []
    a1, f, kkt = step(a)
    history.append(f)
    it = 0
    while kkt > tol and it < max_iter:
        if n > 1 and it + 3 <= max_iter:
            a2, f1, _ = step(a1)
            r = a1 - a
            v = a2 - a1 - r
            nv = float(np.sqrt(v @ v))
            it += 2
            cand = None
            if nv > 0:
                alpha = -float(np.sqrt(r @ r)) / nv
                ext = a - 2 * alpha * r + alpha * alpha * v
                if np.all(ext > 0):
                    cand, _, _ = step(_finish(ext))   # stabilising EM step
                    it += 1
            a_next = a2
            if cand is not None:
                fc = step(cand)[1]
                f2 = step(a2)[1]
                if fc >= f2:
                    a_next = cand
        else:
            a_next = a1
            it += 1
        a = a_next
        a1, f, kkt = step(a)
        history.append(f)
    res = WeightsResult(a, f, it, bool(kkt <= tol), kkt, "em", history)
    if warn and not res.converged:
        _warn("MAPLMD (EM)", res, tol)
    return res


def _check_iter(max_iter, tol) -> None:
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    if not (isinstance(tol, (int, float, np.floating)) and tol > 0 and np.isfinite(tol)):
        raise ValueError(f"tol must be a positive number, got {tol!r}")


def _softmax(z):
    z = np.concatenate([[0.0], z])
    e = np.exp(z - z.max())
    return e / e.sum()


#: the BLAS libraries loaded in the process (found at the first optimisation)
_BLAS = None


def _one_blas_thread():
    """A context with one BLAS thread: scipy's L-BFGS-B makes many tiny BLAS calls, and
    on a busy machine OpenBLAS threads waking up for each of them turn a 2 ms
    optimisation into 100 ms (its numbers are the same with one thread; SLSQP's are not
    quite, so it keeps the default threads)."""
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController   # a dependency of scikit-learn
        _BLAS = ThreadpoolController().select(user_api="blas")
    return _BLAS.limit(limits=1)


def _solve_softmax(fun, n, x0, max_iter, scale):
    """Maximise ``fun(a) -> (f, g)`` over the simplex in softmax coordinates (L-BFGS-B).

    ``a = softmax([0, z])``; ``df/dz_k = a_k (g_k - a.g)``.  Stationary points in ``z``
    are exactly the KKT points on the open simplex.
    """
    z0 = np.log(np.clip(x0, 1e-300, None))
    z0 = z0[1:] - z0[0]

    def obj(z):
        a = _softmax(z)
        f, g = fun(a)
        gz = a * (g - a @ g)
        return -f / scale, -gz[1:] / scale

    with _one_blas_thread():
        r = minimize(obj, z0, jac=True, method="L-BFGS-B",
                     options={"maxiter": int(max_iter), "gtol": 1e-13, "ftol": 1e-16,
                              "maxcor": 30})
    return _softmax(r.x), int(r.nit)


def _solve_slsqp(fun, n, x0, max_iter, lower, scale):
    def obj(a):
        f, g = fun(a)
        return -f / scale, -g / scale

    cons = ({"type": "eq", "fun": lambda a: a.sum() - 1.0,
             "jac": lambda a: np.ones_like(a)},)
    r = minimize(obj, x0, jac=True, method="SLSQP", bounds=[(lower, 1.0)] * n,
                 constraints=cons, options={"maxiter": int(max_iter), "ftol": 1e-14})
    return _finish(r.x), int(r.nit)


def maplmg_weights(log_joint: np.ndarray, y: np.ndarray, method: str = "softmax",
                   max_iter: int = 500, tol: float = 1e-6, init: np.ndarray | None = None,
                   warn: bool = True) -> WeightsResult:
    """MAP weights of the linear mixture of generative distributions (Eq. 10).

    Maximises ``log P_LMG(a | D)`` subject to ``sum_u a_u = 1``, ``a_u > 0`` using the
    analytic gradient (Eq. 13).  The prior term ``sum_u log a_u`` keeps the optimum
    inside the simplex, and at the optimum ``g_u = n`` for all ``u`` (hence
    ``a_u >= 1 / (M + n)``, used as the lower bound).  The objective is not concave, so
    this is a local optimum from the uniform start; it is checked with the KKT residual.

    Parameters
    ----------
    log_joint : ndarray (M, n, K)
        ``log P_u(c, x_{-C})`` of every training instance (leave-one-out for ODEs).
    y : int array (M,)
        Class codes.
    method : {"softmax", "slsqp"}
        ``"softmax"`` (default): L-BFGS on ``a = softmax([0, z])``, which satisfies the
        constraints by construction; its stationary points are exactly the KKT points of
        the constrained problem (``df/dz_k = a_k (g_k - a.g)``).  ``"slsqp"``: sequential
        least squares on ``a`` with the explicit bound and equality constraints (the
        second optimiser; slower for many attributes), followed, if the KKT residual is
        still above ``tol``, by a polish in softmax coordinates.
    max_iter : int
        Iteration limit of each solver call.
    tol : float
        Tolerance on the scaled KKT residual (:func:`kkt_residual`).
    init : array (n,), optional
        Starting weights (default uniform).
    warn : bool
        Emit :class:`WeightsConvergenceWarning` when the residual stays above ``tol``.

    Returns
    -------
    WeightsResult
    """
    log_joint = np.asarray(log_joint, float)
    if log_joint.ndim != 3:
        raise ValueError(f"log_joint must be (n_rows, n_models, n_classes), got {log_joint.shape}")
    if not np.all(np.isfinite(log_joint)):
        raise ValueError("log_joint has non-finite entries")
    if method not in ("slsqp", "softmax"):
        raise ValueError(f"method must be 'slsqp' or 'softmax', got {method!r}")
    _check_iter(max_iter, tol)
    M, n, _ = log_joint.shape
    terms = _lmg_terms(log_joint, y)
    fun = lambda a: maplmg_objective(a, terms=terms)  # noqa: E731
    x0 = np.full(n, 1.0 / n) if init is None else _finish(init)
    if n == 1:
        f, g = fun(x0)
        return WeightsResult(x0, f, 0, True, 0.0, method, [f])
    lower = 0.5 / (M + n)
    history = []
    if method == "slsqp":
        a, nit = _solve_slsqp(fun, n, x0, max_iter, lower, scale=float(M + n))
    else:
        a, nit = _solve_softmax(fun, n, x0, max_iter, float(M + n))
    f, g = fun(a)
    history.append(f)
    kkt = kkt_residual(a, g, M)
    if kkt > tol and max_iter > 1:     # polish (a fresh L-BFGS memory from the iterate)
        a2, nit2 = _solve_softmax(fun, n, a, max_iter, float(M + n))
        f2, g2 = fun(a2)
        history.append(f2)
        nit += nit2
        if f2 >= f or kkt_residual(a2, g2, M) < kkt:
            a, f, g = a2, f2, g2
            kkt = kkt_residual(a, g, M)
    if not np.all(np.isfinite(a)):  # never hand back NaN
        a = x0
        f, g = fun(a)
        kkt = kkt_residual(a, g, M)
    res = WeightsResult(_finish(a), f, nit, bool(kkt <= tol), kkt, method, history)
    if warn and not res.converged:
        _warn(f"MAPLMG ({method})", res, tol)
    return res
