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

Everything is in natural-log space.  The kernels are in :mod:`bnexplore._ode_kernels`,
the MAP weight optimisers in :mod:`bnexplore._mixture_weights`.

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
from dataclasses import dataclass, field

import numpy as np
from scipy.special import gammaln, logsumexp

from ._ode_kernels import log_sum_over_models, loo_true_class, ode_family_counts, ode_log_joints
from ._parallel import PARALLEL_LOCK
from ._mixture_weights import (_LMG_METHODS, WeightsConvergenceWarning,  # noqa: F401
                               WeightsResult, _lmg_terms, _maplmd_em, _maplmg_optimise,
                               kkt_residual, loo_conditional, maplmd_objective, maplmd_weights,
                               maplmg_objective, maplmg_weights)
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
    return _ode_log_joint(counts, _check_codes(counts, codes))


def _ode_log_joint(counts: ODECounts, codes: np.ndarray) -> np.ndarray:
    """:func:`ode_log_joint` of checked codes (int32, in range)."""
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
    out = _ode_log_joint(counts, codes)
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
    return _naive_bayes_log_joint(counts, _check_codes(counts, codes))


def _naive_bayes_log_joint(counts: ODECounts, codes: np.ndarray) -> np.ndarray:
    """:func:`naive_bayes_log_joint` of checked codes."""
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
    return _aode_log_joint(counts, _check_codes(counts, codes), threshold, log_joint)


def _aode_log_joint(counts: ODECounts, codes: np.ndarray, threshold: float,
                    log_joint: np.ndarray | None = None) -> np.ndarray:
    """:func:`aode_log_joint` of checked codes."""
    lj = _ode_log_joint(counts, codes) if log_joint is None else log_joint
    nu = counts.attribute_counts()
    qual = nu[np.arange(counts.n_attributes)[None, :], codes] > threshold   # (M, n)
    out = _lse_over_models(lj, mask=qual)
    none = ~qual.any(axis=1)
    if none.any():
        out[none] = _naive_bayes_log_joint(counts, codes[none])
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
