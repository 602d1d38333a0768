"""Exact sums over every DAG (not every order): inclusion-exclusion over sink and source sets.

Mathematics
-----------
Fix ``k`` and the family weights ``beta_v(G) = exp w_v(G)`` of :mod:`bnexplore._order_dp`
(score times a modular structure prior ``rho_v(G)``), and the local sums ``alpha_v(U) =
sum_{G subset U, |G| <= k} beta_v(G)`` (the same subset-sum tables).  Under the
structure-modular prior ``P(G) ∝ prod_v rho_v(G_v)`` (uniform over the DAGs with at most
``k`` parents when ``rho = 1``) every DAG counts once, whatever its number of orders.

*Sink recursion* (Robinson 1973; Tian & He 2009).  ``Z(S)``, the total weight of the DAGs
on ``S`` (parents inside ``S``), ``Z({}) = 1``.  A nonempty DAG has a nonempty set of
sinks, and the DAGs whose sinks include ``T`` weigh ``Z(S - T) prod_{w in T}
alpha_w(S - T)``; since ``sum_{{} != T subset sinks} (-1)^{|T|+1} = 1``::

    Z(S) = sum_{{} != T subset S} (-1)^{|T|+1} Z(S - T) prod_{w in T} alpha_w(S - T).  (sinks)

*Source recursion*.  ``R(S)``, the total weight of the parent sets of the nodes outside
``S`` (drawn from all of ``V``) that are acyclic among those nodes, ``R(V) = 1``; by the
nodes whose parents all lie in ``S``::

    R(S) = sum_{{} != T subset V - S} (-1)^{|T|+1} prod_{w in T} alpha_w(S) R(S + T).  (sources)

``Z(V) = R({})`` is the evidence sum.

*Arcs* (all at once, in the spirit of Koivisto 2006).  Let ``A`` be the proper ancestors
of ``v`` in a DAG ``G`` with ``v``'s parents ``P``.  ``A`` is closed under parents,
contains ``P``, and every sink of ``G[A]`` lies in ``P``; conversely the one set with
these properties is ``A``.  So ``G`` splits uniquely into a DAG on ``A`` with no sink
outside ``P``, the family of ``v`` and the rest (counted by ``R(A + v)``).  The sink
condition by inclusion-exclusion over the sinks ``T`` outside ``P`` and ``U = A - T``::

    K_v(P) = sum_{P subset U subset V - v} Z(U) H_v(U),
    H_v(U) = sum_{T subset V - v - U} (-1)^{|T|} prod_{w in T} alpha_w(U) R(U + T + v),
    P(u -> v | D) = sum_{P contains u} beta_v(P) K_v(P) / Z(V);

``K_v`` is the superset-sum transform of ``U -> Z(U) H_v(U)``.  Since ``sum_{T subset V - U} (-1)^|T| prod_{w in T}
alpha_w(U) R(U + T) = 0`` for ``U != V`` (the source recursion at ``U``), the terms with
``v in T`` give ``alpha_v(U) H_v(U) = -sum_{T contains v} F_U(T)`` with ``F_U(T) =
(-1)^|T| prod_{w in T} alpha_w(U) R(U + T)``: one table ``F_U`` per set ``U`` serves every
child.  The whole costs ``O(3^n)`` extended-float products for each recursion and for
the tables ``F_U``, ``O(n 3^(n-1))`` plain additions for the children's sums, and
``O(n 2^n)`` memory: the tables of every ``alpha_v``, and per child the ``Z(U) H_v(U)``
(the children are split into passes when these do not fit).

Arithmetic
----------
Values are the extended floats of :mod:`bnexplore._order_dp` (float64 mantissa, int64
binary exponent).  The alternating sums are never formed term by term: the terms of
each sign are summed apart (sums of positive numbers lose nothing to cancellation) and
subtracted once.  Their *condition* ``(P + N) / |P - N|`` is how much a subtraction
amplifies the relative error of its inputs; for the sink recursion ``P + N <= (2^|S| - 1)
Z(S)`` (each DAG is counted once per nonempty subset of its sinks), so it is at most the
posterior mean of ``2^(number of sinks)``, small for the DAGs that carry the posterior.
The arc numerators keep their positive and negative parts ``K+``, ``K-`` to the end:
``(K+ + K-) / Z(V)`` is the magnitude the rounding of an arc posterior scales with
(:func:`dag_arc_posteriors` returns it).  ``Z(V)`` and ``R({})`` come from two separate
recursions: their difference is a measured estimate of the error of the evidence.

Glossary
--------
sink sums, source sums
    ``Z`` and ``R`` above, as ext (mantissa array, exponent array) indexed by the set's mask.
layers
    the masks sorted by size, and where each size starts (the source sums run a layer
    at a time, the sets of one layer in parallel).
scratch
    ``prod_{w in T} alpha_w(U)`` for every subset ``T`` of the nodes outside ``U``,
    indexed by ``T``'s compressed bits (``T``'s members among the outside nodes).
slot
    a child's row in this pass's tables of ``Z(U) H_v(U)`` (-1: not in this pass).

References
----------
J. Tian and R. He, "Computing posterior probabilities of structural features in Bayesian
networks", UAI 2009.  R. W. Robinson, "Counting labeled acyclic digraphs", 1973.
M. Koivisto, "Advances in exact Bayesian structure discovery in Bayesian networks",
UAI 2006.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from ._bits import _popcount
from ._order_dp import _POW2, EXT_ZERO, _compress, _expand, _ext_add, _ext_norm, _ext_of_log, ext_to_log

__all__ = ["count_dags", "sink_sums", "source_sums", "dag_arc_posteriors", "layers"]


def count_dags(n: int, k: int) -> int:
    """Number of labelled DAGs on ``n`` nodes with at most ``k`` parents per node, exactly
    (the sink recursion with every weight 1: ``alpha(U) = sum_{s <= k} C(|U|, s)``).

    Examples
    --------
    >>> [count_dags(n, n) for n in range(5)]   # OEIS A003024
    [1, 1, 3, 25, 543]
    """
    a = [1]
    for s in range(1, n + 1):
        total = 0
        for t in range(1, s + 1):
            sets = sum(math.comb(s - t, j) for j in range(min(k, s - t) + 1))
            total += (-1) ** (t + 1) * math.comb(s, t) * a[s - t] * sets ** t
        a.append(total)
    return a[n]


# --------------------------------------------------------------------------- small kernels
@numba.njit(cache=True, nogil=True, inline="always")
def _ctz(j):
    """Index of the lowest set bit of ``j`` (> 0)."""
    return np.int64(_popcount(np.uint64((j & -j) - 1)))


@numba.njit(cache=True, nogil=True, inline="always")
def _outside_alphas(U, skip, n, alpha_m, alpha_e, nodes, a_m, a_e):
    """The nodes outside ``U`` (and other than ``skip``), in increasing order, and their
    ``alpha_w(U)``; returns how many."""
    c = 0
    for w in range(n):
        if not (U >> w) & 1 and w != skip:
            t = _compress(U, w)
            nodes[c] = w
            a_m[c] = alpha_m[w, t]
            a_e[c] = alpha_e[w, t]
            c += 1
    return c


@numba.njit(cache=True, nogil=True, inline="always")
def _difference(pm, pe, nm, ne):
    """(m, e, cond) of P - N for ext P, N >= 0, with cond = (P + N) / |P - N| (inf when
    they cancel exactly, 1 when both are 0)."""
    m, e = _ext_add(pm, pe, -nm, ne)
    m, e = _ext_norm(m, e)
    if m == 0.0:
        return 0.0, EXT_ZERO, (1.0 if pm == 0.0 and nm == 0.0 else np.inf)
    sm, se = _ext_add(pm, pe, nm, ne)
    return m, e, math.exp(ext_to_log(sm, se) - ext_to_log(abs(m), e))


@numba.njit(cache=True, nogil=True, inline="always")
def _scratch_products(c, a_m, a_e, p_m, p_e):
    """p[j] = prod over the set bits i of j of a[i] (ext, not renormalised: at most n
    mantissas in [1, 2) are multiplied)."""
    p_m[0] = 1.0
    p_e[0] = 0
    for j in range(1, np.int64(1) << c):
        i = _ctz(j)
        q = j & (j - 1)
        p_m[j] = p_m[q] * a_m[i]
        p_e[j] = p_e[q] + a_e[i]


# --------------------------------------------------------------------------- sink sums
@numba.njit(cache=True, nogil=True)
def sink_sums(n, alpha_m, alpha_e, Z_m, Z_e, cond):
    """Z(S) of the sink recursion for every S (pushed forward: when U is reached, every
    subset of it is final), with each set's condition number."""
    size = np.int64(1) << n
    P_m = np.zeros(size)
    P_e = np.full(size, EXT_ZERO, dtype=np.int64)
    N_m = np.zeros(size)
    N_e = np.full(size, EXT_ZERO, dtype=np.int64)
    nodes = np.empty(max(n, 1), dtype=np.int64)
    a_m = np.empty(max(n, 1))
    a_e = np.empty(max(n, 1), dtype=np.int64)
    p_m = np.empty(size)
    p_e = np.empty(size, dtype=np.int64)
    full = size - 1
    for U in range(size):
        if U == 0:
            Z_m[0], Z_e[0], cond[0] = 1.0, 0, 1.0
        else:
            Z_m[U], Z_e[U], cond[U] = _difference(P_m[U], P_e[U], N_m[U], N_e[U])
        zm = Z_m[U]
        if zm == 0.0 or U == full:
            continue
        ze = np.int64(Z_e[U])
        c = _outside_alphas(U, -1, n, alpha_m, alpha_e, nodes, a_m, a_e)
        _scratch_products(c, a_m, a_e, p_m, p_e)
        C = full ^ U
        T = np.int64(0)
        for j in range(1, np.int64(1) << c):
            T = (T - C) & C  # next subset of C in increasing order: its compressed index is j
            S = U | T
            m = zm * p_m[j]
            e = ze + p_e[j]
            if _popcount(np.uint64(j)) & 1:
                P_m[S], P_e[S] = _ext_add(P_m[S], np.int64(P_e[S]), m, e)
            else:
                N_m[S], N_e[S] = _ext_add(N_m[S], np.int64(N_e[S]), m, e)


# --------------------------------------------------------------------------- source sums
@numba.njit(cache=True, nogil=True)
def _source_one(S, n, alpha_m, alpha_e, R_m, R_e, nodes, a_m, a_e, p_m, p_e):
    """(m, e, cond) of R(S) from the R of its supersets."""
    full = (np.int64(1) << n) - 1
    c = _outside_alphas(S, -1, n, alpha_m, alpha_e, nodes, a_m, a_e)
    _scratch_products(c, a_m, a_e, p_m, p_e)
    C = full ^ S
    T = np.int64(0)
    pm, pe, nm, ne = 0.0, EXT_ZERO, 0.0, EXT_ZERO
    for j in range(1, np.int64(1) << c):
        T = (T - C) & C
        X = S | T
        m = p_m[j] * R_m[X]
        e = p_e[j] + np.int64(R_e[X])
        if _popcount(np.uint64(j)) & 1:
            pm, pe = _ext_add(pm, pe, m, e)
        else:
            nm, ne = _ext_add(nm, ne, m, e)
    return _difference(pm, pe, nm, ne)


@numba.njit(cache=True, nogil=True, parallel=True)
def _source_layer(sets, n, alpha_m, alpha_e, R_m, R_e, cond, n_parts):
    """R of every set in ``sets`` (one layer: their supersets are final), in parallel parts."""
    per = (sets.size + n_parts - 1) // n_parts
    for part in numba.prange(n_parts):
        lo = part * per
        hi = min(lo + per, sets.size)
        if lo >= hi:
            continue
        c_max = n - _popcount(np.uint64(sets[lo]))
        nodes = np.empty(max(n, 1), dtype=np.int64)
        a_m = np.empty(max(n, 1))
        a_e = np.empty(max(n, 1), dtype=np.int64)
        p_m = np.empty(np.int64(1) << c_max)
        p_e = np.empty(np.int64(1) << c_max, dtype=np.int64)
        for i in range(lo, hi):
            S = sets[i]
            R_m[S], R_e[S], cond[S] = _source_one(S, n, alpha_m, alpha_e, R_m, R_e, nodes, a_m, a_e, p_m, p_e)


def layers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The masks 0 .. 2^n - 1 sorted by size (stable) and the start of each size."""
    masks = np.arange(1 << n, dtype=np.int64)
    sizes = np.zeros(1 << n, dtype=np.int64)
    for b in range(n):
        sizes += (masks >> b) & 1
    order = np.argsort(sizes, kind="stable")
    starts = np.searchsorted(sizes[order], np.arange(n + 2))
    return masks[order], starts


def source_sums(n, alpha_m, alpha_e, R_m, R_e, cond, layer_masks, starts, n_parts: int) -> None:
    """R(S) of the source recursion for every S, a layer at a time from the largest."""
    full = (1 << n) - 1
    R_m[full], R_e[full], cond[full] = 1.0, 0, 1.0
    for s in range(n - 1, -1, -1):
        sets = layer_masks[starts[s]:starts[s + 1]]
        _source_layer(sets, n, alpha_m, alpha_e, R_m, R_e, cond, max(1, min(n_parts, sets.size)))


# --------------------------------------------------------------------------- arcs
@numba.njit(cache=True, nogil=True)
def _signed_terms(U, n, alpha_m, alpha_e, R_m, R_e, nodes, a_m, a_e, p_m, p_e, F, A):
    """F[j] = (-1)^|T| prod_{w in T} alpha_w(U) R(U + T) and A[j] = |F[j]| for every subset
    T of the nodes outside U (compressed index j), as float64 times 2^top; returns (c, top).
    (A term below 2^-1100 of the largest is dropped: beneath the rounding of any sum of them.)"""
    full = (np.int64(1) << n) - 1
    c = _outside_alphas(U, -1, n, alpha_m, alpha_e, nodes, a_m, a_e)
    _scratch_products(c, a_m, a_e, p_m, p_e)
    C = full ^ U
    T = np.int64(0)
    top = EXT_ZERO
    for j in range(np.int64(1) << c):
        if j > 0:
            T = (T - C) & C
        X = U | T
        m = p_m[j] * R_m[X]
        e = p_e[j] + np.int64(R_e[X]) if m != 0.0 else EXT_ZERO
        F[j] = m
        p_e[j] = e
        top = max(top, e)
    for j in range(np.int64(1) << c):
        x = F[j] * _POW2[min(top - p_e[j], 1100)]
        A[j] = x
        F[j] = -x if _popcount(np.uint64(j)) & 1 else x
    return c, top


@numba.njit(cache=True, nogil=True)
def _child_terms(U, c, top, nodes, a_m, a_e, F, A, zm, ze, slot, g_pm, g_pe, g_nm, g_ne):
    """Z(U) H_w(U) of every node w outside U with a slot in this pass, its positive and
    negative parts apart: alpha_w(U) H_w(U) = -sum_{T contains w} F(T) (the source sums
    of U vanish: sum_T F(T) = 0), summed over the runs of indices with bit i set."""
    for i in range(c):
        w = nodes[i]
        g = slot[w]
        if g < 0:
            continue
        t = _compress(U, w)
        if a_m[i] == 0.0:
            g_pm[g, t], g_pe[g, t], g_nm[g, t], g_ne[g, t] = 0.0, EXT_ZERO, 0.0, EXT_ZERO
            continue
        s = 0.0
        a = 0.0
        step = np.int64(1) << i
        for hi in range(0, np.int64(1) << c, 2 * step):
            for j in range(hi + step, hi + 2 * step):
                s += F[j]
                a += A[j]
        e = ze + top - np.int64(a_e[i])
        g_pm[g, t], g_pe[g, t] = _ext_norm(zm * max(a - s, 0.0) * 0.5 / a_m[i], e)
        g_nm[g, t], g_ne[g, t] = _ext_norm(zm * max(a + s, 0.0) * 0.5 / a_m[i], e)


@numba.njit(cache=True, nogil=True, parallel=True)
def _ancestor_pass(n, alpha_m, alpha_e, Z_m, Z_e, R_m, R_e, slot, g_pm, g_pe, g_nm, g_ne, n_parts):
    """Z(U) H_w(U) for every U and every node w with a slot; part p takes U = p, p + n_parts, ..."""
    size = np.int64(1) << n
    for part in numba.prange(n_parts):
        nodes = np.empty(max(n, 1), dtype=np.int64)
        a_m = np.empty(max(n, 1))
        a_e = np.empty(max(n, 1), dtype=np.int64)
        p_m = np.empty(size)
        p_e = np.empty(size, dtype=np.int64)
        F = np.empty(size)
        A = np.empty(size)
        for U in range(part, size - 1, n_parts):
            zm = Z_m[U]
            if zm == 0.0:
                for w in range(n):
                    if not (U >> w) & 1 and slot[w] >= 0:
                        t = _compress(U, w)
                        g = slot[w]
                        g_pm[g, t], g_pe[g, t], g_nm[g, t], g_ne[g, t] = 0.0, EXT_ZERO, 0.0, EXT_ZERO
                continue
            c, top = _signed_terms(U, n, alpha_m, alpha_e, R_m, R_e, nodes, a_m, a_e, p_m, p_e, F, A)
            _child_terms(U, c, top, nodes, a_m, a_e, F, A, zm, np.int64(Z_e[U]), slot, g_pm, g_pe, g_nm, g_ne)


@numba.njit(cache=True, nogil=True, inline="always")
def _superset_sums(g_m, g_e, n_bits):
    """In place: g(U) <- sum of g over the supersets of U (ext, values >= 0)."""
    M = np.int64(1) << n_bits
    for i in range(n_bits):
        step = np.int64(1) << i
        for base in range(0, M, 2 * step):
            for s in range(base, base + step):
                g_m[s], g_e[s] = _ext_add(g_m[s], np.int64(g_e[s]), g_m[s + step], np.int64(g_e[s + step]))


@numba.njit(cache=True, nogil=True, parallel=True)
def _arc_kernel(fam, n, children, Z_m, Z_e, g_pm, g_pe, g_nm, g_ne, post, spread):
    """post[u, v] = P(u -> v | D) for the children v of this pass: K_v = superset sums of
    Z(U) H_v(U) read at each parent set, times beta_v, over Z(V); spread the same with
    K+ + K-."""
    full = (np.int64(1) << n) - 1
    zv_m = Z_m[full]
    zv_e = np.int64(Z_e[full])
    for g in numba.prange(children.size):
        v = children[g]
        _superset_sums(g_pm[g], g_pe[g], n - 1)
        _superset_sums(g_nm[g], g_ne[g], n - 1)
        for f in range(fam.offset[v], fam.offset[v + 1]):
            if fam.size[f] == 0:
                continue
            t = _compress(np.int64(fam.mask[f]), v)
            bm, be = _ext_of_log(fam.log_weight[f])
            ep = be + np.int64(g_pe[g, t]) - zv_e
            en = be + np.int64(g_ne[g, t]) - zv_e
            xp = 0.0 if ep < -1100 else math.ldexp(bm * g_pm[g, t] / zv_m, ep)
            xn = 0.0 if en < -1100 else math.ldexp(bm * g_nm[g, t] / zv_m, en)
            for a in range(fam.size[f]):
                u = fam.members[f, a]
                post[u, v] += xp - xn
                spread[u, v] += xp + xn


def dag_arc_posteriors(fam, n: int, alpha_m, alpha_e, Z_m, Z_e, R_m, R_e, per_pass: int,
                       n_parts: int) -> tuple[np.ndarray, np.ndarray]:
    """(posteriors, spread): the (n, n) arc posteriors (rows parent, columns child) and
    ``(K+ + K-) / Z(V)`` summed like them, the magnitude their rounding scales with.
    ``per_pass`` children are done per pass over the sets (each pass keeps four words per
    child and set of the other nodes)."""
    post = np.zeros((n, n))
    spread = np.zeros((n, n))
    if n < 2:
        return post, spread
    M = 1 << (n - 1)
    per_pass = max(1, min(per_pass, n))
    g_pm, g_nm = np.empty((per_pass, M)), np.empty((per_pass, M))
    g_pe, g_ne = np.empty((per_pass, M), dtype=np.int64), np.empty((per_pass, M), dtype=np.int64)
    for lo in range(0, n, per_pass):
        children = np.arange(lo, min(lo + per_pass, n), dtype=np.int64)
        slot = np.full(n, -1, dtype=np.int64)
        slot[children] = np.arange(children.size)
        _ancestor_pass(n, alpha_m, alpha_e, Z_m, Z_e, R_m, R_e, slot, g_pm, g_pe, g_nm, g_ne, n_parts)
        _arc_kernel(fam, n, children, Z_m, Z_e, g_pm, g_pe, g_nm, g_ne, post, spread)
    return post, spread


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
