"""The counting and mixing kernels of linear mixtures of one-dependence estimators.

Counts (one pass over the rows, :func:`ode_family_counts`): for every class ``c``,
attributes ``u, v`` and their states ``i, j``

    N_{C,u}(c, i) = #{m : y_m = c, x_mu = i},
    N_{C,u,v}(c, i, j) = #{m : y_m = c, x_mu = i, x_mv = j}           (ODE counts)

over the rows where the attributes are observed (a missing cell, code -1, is skipped).

ODE joints (Cerquides & Lopez de Mantaras Eq. 14-16, :func:`ode_log_joints`): with the
log tables ``base[u, i, c] = log P_u(c, i)`` and ``cond[u, v, i, j, c] = log P_u(j | c, i)``

    log P_u(c, x) = base[u, x_u, c] + sum_{v != u} cond[u, v, x_u, x_v, c]     (Eq. 14)

Mixtures (:func:`log_sum_over_models`): ``log sum_u [mask_u] exp(lj[u, c] + log w_u)``,
max-shifted so that no term overflows; rows with no model left get ``-inf``.

Leave-one-out (Eq. 30-32, :func:`loo_true_class`): removing instance ``m`` (class
``c``) from the counts changes ``N`` to ``N - 1`` for every class and ``N_{C,u}``,
``N_{C,u,v}`` for the true class only, so

    log P_u^LOO(c, x_m) = log N_{C,u}(c, i) - log(N + K #A_u - 1)
                          + sum_{v != u} [log N_{C,u,v}(c, i, j) - log(N_{C,u}(c, i) + #A_v - 1)]

(the counts include ``m``, hence ``- 1`` in place of the ``+ 1`` of the Laplace
estimates), and the other classes' entries are shifted by
``log(N + K #A_u) - log(N + K #A_u - 1)``.

Glossary
--------
codes, y
    Attribute codes ``(M, n)`` (int32, -1 missing) and class codes ``(M,)``.
n_attr, A, K
    Number of attributes, largest attribute arity, number of classes.
pair, triple
    ``N_{C,u}`` as ``pair[u, i, c]`` and ``N_{C,u,v}`` as ``triple[u, v, i, j, c]``.
lj, logw, mask
    Log joints ``(M, n, K)``, log model weights ``(n,)``, models allowed per row.
"""
from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["ode_family_counts", "ode_log_joints", "log_sum_over_models", "loo_true_class"]


@numba.njit(cache=True, nogil=True)
def ode_family_counts(codes, y, n_attr, A, K):
    """N_{C,u}(c, i) and N_{C,u,v}(c, i, j) in one pass over the rows. A missing cell
    (code -1) is skipped: pair[u] counts the rows where u is observed and triple[u, v]
    those where u and v are (available cases)."""
    N = codes.shape[0]
    pair = np.zeros((n_attr, A, K), dtype=np.float64)
    triple = np.zeros((n_attr, n_attr, A, A, K), dtype=np.float64)
    for m in range(N):
        c = y[m]
        for u in range(n_attr):
            i = codes[m, u]
            if i < 0:
                continue
            pair[u, i, c] += 1.0
            for v in range(n_attr):
                j = codes[m, v]
                if j >= 0:
                    triple[u, v, i, j, c] += 1.0
    return pair, triple

@numba.njit(cache=True, nogil=True)
def ode_log_joints(codes_t, base, cond):
    # codes_t is (n, M). Loop order u (parallel) -> v -> rows keeps the (A, A, K) slice
    # cond[u, v] in cache and writes the (M, K) block of u sequentially.
    n, M = codes_t.shape
    K = base.shape[2]
    out = np.empty((n, M, K))
    for u in numba.prange(n):
        cu = codes_t[u]
        blk = out[u]
        bu = base[u]
        for m in range(M):
            i = cu[m]
            for c in range(K):
                blk[m, c] = bu[i, c]
        for v in range(n):
            if v == u:
                continue
            tab = cond[u, v]
            cv = codes_t[v]
            for m in range(M):
                i = cu[m]
                j = cv[m]
                for c in range(K):
                    blk[m, c] += tab[i, j, c]
    return out


@numba.njit(cache=True, nogil=True)
def log_sum_over_models(lj, logw, mask):
    M, n, K = lj.shape
    out = np.empty((M, K))
    for m in numba.prange(M):
        for c in range(K):
            best = -np.inf
            for u in range(n):
                if mask[m, u]:
                    z = lj[m, u, c] + logw[u]
                    if z > best:
                        best = z
            if best == -np.inf:
                out[m, c] = -np.inf
                continue
            s = 0.0
            for u in range(n):
                if mask[m, u]:
                    s += math.exp(lj[m, u, c] + logw[u] - best)
            out[m, c] = best + math.log(s)
    return out

@numba.njit(cache=True, nogil=True)
def loo_true_class(out, codes, y, pair, triple, arities, N, K):
    # replace the true-class entry by the leave-one-out estimate (Eq. 30-32)
    M, n = codes.shape
    for m in numba.prange(M):
        c = y[m]
        for u in range(n):
            i = codes[m, u]
            # every class: N -> N - 1 in the denominator of Eq. 31
            shift = math.log(N + K * arities[u]) - math.log(N + K * arities[u] - 1.0)
            for cc in range(K):
                out[m, u, cc] += shift
            npair = pair[u, i, c]          # includes instance m
            s = math.log(npair) - math.log(N + K * arities[u] - 1.0)
            for v in range(n):
                if v == u:
                    continue
                j = codes[m, v]
                s += math.log(triple[u, v, i, j, c]) - math.log(npair + arities[v] - 1.0)
            out[m, u, c] = s
    return out


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
