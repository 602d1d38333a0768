"""Averaging over every node order: exact dynamic programming and order MCMC.

Mathematics
-----------
Fix an in-degree bound ``k`` and a log family weight ``w_v(G) = log P(D_v | G) +
log rho_v(G)`` (the K2/BDeu family score plus an optional modular structure prior)
for every node ``v`` and parent set ``G`` of at most ``k`` other nodes.  For a total
order ``<`` let ``U_v`` be the nodes before ``v``.  Summing over the DAGs consistent
with the order factorises per node (Buntine 1991; Dash & Cooper Theorem 1)::

    P(D | <) = prod_v alpha_v(U_v),      alpha_v(U) = sum_{G subset U, |G| <= k} beta_v(G),

with ``beta_v(G) = exp w_v(G)``; ``alpha_v`` is the *local order score*.  Under the
order-modular prior of Koivisto & Sood (2004), ``P(<, G) ∝ prod_v rho_v(G_v)`` for
every DAG ``G`` consistent with ``<``, so a DAG's prior is proportional to
``prod_v rho_v(G_v)`` times its number of linear extensions.

*Exact sum over the n! orders* (Koivisto & Sood 2004, Koivisto 2006).  Three
transforms over subsets of the ``n`` nodes:

* ``alpha_v(U)`` for every ``U subset V - {v}``: the subset-sum (zeta) transform of
  ``beta_v`` over ``n - 1`` bits, ``O(n 2^n)`` per node;
* forward sums ``L(S) = sum_{v in S} L(S - {v}) alpha_v(S - {v})``, ``L({}) = 1``
  (the total over the orders of ``S`` with ``S`` placed first), and backward sums
  ``R(S) = sum_{v notin S} alpha_v(S) R(S + {v})``, ``R(V) = 1`` (the total over the
  orders of ``V - S`` placed after ``S``); ``L(V) = R({}) = sum_< P(D | <)``;
* the arc posteriors of every arc at once: the orders in which the predecessors of
  ``v`` are exactly ``S`` weigh ``L(S) alpha_v(S) R(S + {v})``; replacing
  ``alpha_v(S)`` by the part of it whose parent sets contain ``u`` gives::

      P(u -> v | D) = sum_{G contains u} beta_v(G) Gamma_v(G) / L(V),
      Gamma_v(G) = sum_{G subset S subset V - {v}} L(S) R(S + {v}),

  where ``Gamma_v`` is the superset-sum transform of ``S -> L(S) R(S + {v})``.

The whole computation is ``O(n^2 2^n)`` time and ``O(n 2^n)`` memory (the table of
every ``alpha_v``).

*Order MCMC* (Friedman & Koller 2003): a Metropolis-Hastings chain on the orders
with target ``P(<) P(D | <)`` (orders uniform), proposals that swap two adjacent
nodes or two random nodes (both symmetric), and the log order score
``sum_v log alpha_v(U_v)`` updated for the nodes whose predecessor sets change only.
``log alpha_v(U)`` visits the parent sets inside ``U`` directly: a node's families
are laid out in colex order, so the set of candidate ranks ``c_1 < c_2 < c_3`` sits at
``C(c_1, 1) + C(c_2, 2) + C(c_3, 3)`` past the sets of smaller size, and the sum over
the ``C(|U|, <= k)`` subsets is a few nested loops of additions.  The terms are summed
with a running maximum; those more than ``CUT`` nats below it are left out (at most
``(number of sets) e^-CUT`` of the sum: below 1e-16 relative).  Arc posteriors are
Rao-Blackwellised: each kept order contributes its exact ``P(u -> v | <, D)``, and a
DAG can be drawn from it, each node's parent set with probability ``beta_v(G) /
alpha_v(U_v)``.

Arithmetic
----------
The sums span thousands of nats, more than float64 holds (about 1,400), and a
log-add-exp per term would cost a transcendental function.  The exact DP therefore
works with *extended floats*: a value is a float64 mantissa ``m`` and an integer
exponent ``e`` (``m 2^e``), added by rescaling the one with the smaller exponent
through a table of powers of two, multiplied by multiplying the mantissas and adding
the exponents, and renormalised to ``m in [1, 2)`` after each transform.  Every
quantity is a sum of positive terms, so no digits are lost to cancellation.

The two subset transforms (``alpha_v`` and ``Gamma_v``, two thirds of the work) run in
plain float64 instead, a quarter of the time, for each node whose values fit once
scaled by a power of two: ``alpha_v`` when the weights of v span less than about 1,400
nats (every input then a normal float64, no sum overflowing; :func:`_alpha_scale`),
``Gamma_v`` when every value read at a parent set of v is far enough above the terms
that underflowed (:func:`_gamma_f64`: relative error below 2^-45).  Any other node
takes the extended floats, so the answer is the same either way.

Glossary
--------
family
    a (node, parent set) pair, with its log weight ``w_v(G)``.
mask
    a set of nodes as the bits of an integer (bit ``u`` is node ``u``).
compressed mask
    a subset of ``V - {v}`` as ``n - 1`` bits: bit ``v`` removed, the higher bits
    shifted down (the index into ``alpha_v`` and ``Gamma_v``).
local order score
    ``alpha_v(U)``: the total weight of ``v``'s parent sets inside ``U``.
log order score
    ``log P(D | <) = sum_v log alpha_v(U_v)``: what order MCMC samples from.
candidate rank
    a node's index among the ``n - 1`` possible parents of ``v`` (``u``, or ``u - 1``
    above ``v``).
colex layout
    each node's families by size, then in colex order of their candidate ranks
    (:data:`Lookup`), so that a set's place is a sum of binomial coefficients.
ext (mantissa, exponent)
    the extended floats above; a zero has mantissa 0 and exponent ``EXT_ZERO``.

References
----------
M. Koivisto and K. Sood, "Exact Bayesian structure discovery in Bayesian networks",
JMLR 5, 2004.  M. Koivisto, "Advances in exact Bayesian structure discovery in
Bayesian networks", UAI 2006.  N. Friedman and D. Koller, "Being Bayesian about
network structure", Machine Learning 50, 2003.  A. Vehtari et al., "Rank-normalization,
folding, and localization: an improved R-hat", Bayesian Analysis 16, 2021 (R-hat, ESS).
"""
from __future__ import annotations

import math
import mmap
from collections import namedtuple

import numba
import numpy as np

__all__ = ["Families", "ChainState", "ChainRecord", "Lookup", "colex_families", "dp_tables", "dp_arc_posteriors", "run_chains", "CUT_NATS",
           "EXT_ZERO", "ext_to_log", "big_table"]

#: exponent of an extended-float zero (products of a few zeros stay far inside int64)
EXT_ZERO = -(1 << 40)
#: the exponent of a zero in the tables of local order scores, which keep their exponents
#: as int32 (a third less memory): far below any real exponent (a weight of a billion
#: nats), so adding such a zero leaves every sum as it is
EXT_ZERO32 = -(1 << 30)
#: powers 2^-d for d = 0 .. 1100 (beyond: 0), the rescaling of an ext addition
_POW2 = np.ldexp(1.0, -np.arange(1101)).astype(np.float64)
_LN2 = math.log(2.0)
#: nats below the running maximum where order MCMC stops summing (plus the log of the number of sets)
CUT_NATS = 40.0

#: every family of every node, grouped by node: ``offset[v]:offset[v + 1]`` are v's.
#: ``log_weight`` log score + log structure prior; ``mask`` the parent set as bits (uint64);
#: ``members`` the parents padded with -1 (one row per family); ``size`` how many.
Families = namedtuple("Families", "log_weight offset mask members size")

#: one MH chain per row: ``order[c, i]`` the node at position i, ``node_score[c, v]``
#: log alpha_v(U_v) of the current order, ``rng`` the xorshift64* state.
ChainState = namedtuple("ChainState", "order node_score rng")

#: what the chains record every ``thin`` iterations: the log order score, the
#: Rao-Blackwellised arc probabilities [c, sample, parent, child] and a sampled DAG
#: (the family of each node, a global index into Families; -1 when not asked for).
ChainRecord = namedtuple("ChainRecord", "log_score arc dag_family")


# --------------------------------------------------------------------------- extended floats
@numba.njit(cache=True, nogil=True, inline="always")
def _ext_add(ma, ea, mb, eb):
    """(m, e) of m_a 2^e_a + m_b 2^e_b (nothing is lost: both are >= 0)."""
    if ea >= eb:
        return ma + mb * _POW2[min(ea - eb, 1100)], ea
    return mb + ma * _POW2[min(eb - ea, 1100)], eb


@numba.njit(cache=True, nogil=True, inline="always")
def _ext_norm(m, e):
    """The same value with the mantissa in [1, 2) (a zero gets EXT_ZERO)."""
    if m == 0.0:
        return 0.0, EXT_ZERO
    f, x = math.frexp(m)
    return 2.0 * f, e + x - 1


@numba.njit(cache=True, nogil=True, inline="always")
def _ext_of_log(w):
    """ext of exp(w) (-inf: zero)."""
    if w == -np.inf:
        return 0.0, EXT_ZERO
    e = math.floor(w / _LN2)
    return math.exp(w - e * _LN2), np.int64(e)


@numba.njit(cache=True, nogil=True)
def ext_to_log(m, e):
    """log(m 2^e) (-inf for a zero)."""
    if m == 0.0:
        return -np.inf
    return math.log(m) + e * _LN2


@numba.njit(cache=True, nogil=True, inline="always")
def _compress(mask, v):
    """Subset of V - {v} given as full bits -> n - 1 bits (bit v removed)."""
    low = mask & ((np.int64(1) << v) - 1)
    return ((mask >> (v + 1)) << v) | low


@numba.njit(cache=True, nogil=True, inline="always")
def _expand(t, v):
    """Inverse of :func:`_compress`: n - 1 bits -> full bits without bit v."""
    low = t & ((np.int64(1) << v) - 1)
    return ((t >> v) << (v + 1)) | low


# --------------------------------------------------------------------------- exact DP
#: bits of a block of a subset transform that stays in a core's cache (2^14 entries of
#: 12-16 bytes: 192-256 KiB)
_CACHE_BITS = 14


@numba.njit(cache=True, nogil=True)
def _passes(bits):
    """The passes of a subset (or superset) transform over ``bits`` bits, blocked for
    the cache: ``(lo, hi, first bit, end bit)`` runs the bits ``first .. end - 1`` over
    the entries ``lo .. hi - 1``.  The bits below ``_CACHE_BITS`` pair entries inside
    one block of ``2^_CACHE_BITS``, so each block takes all of them while it is in cache;
    the higher bits then run over the whole table.  Every entry receives the same
    additions in the same order as bit after bit over the whole table would give it."""
    b = min(bits, _CACHE_BITS)
    size = np.int64(1) << bits
    block = np.int64(1) << b
    out = [(np.int64(0), np.int64(0), 0, 0)]
    out.pop()
    for lo in range(0, size, block):
        out.append((np.int64(lo), np.int64(lo + block), 0, b))
    if bits > b:
        out.append((np.int64(0), size, b, bits))
    return out


@numba.njit(cache=True, nogil=True, inline="always")
def _ext_transform(am, ae, bits, superset):
    """The subset-sum (zeta) transform of the ext table ``(am, ae)`` over ``bits`` bits
    in place: every entry gets the sum over its subsets, or with ``superset`` over its
    supersets; the passes of :func:`_passes`, each pair added target first."""
    for lo, hi, lo_bit, hi_bit in _passes(bits):
        for i in range(lo_bit, hi_bit):
            step = np.int64(1) << i
            for base in range(lo, hi, 2 * step):
                for s in range(base, base + step):  # s lacks bit i, s + step has it
                    t, u = (s, s + step) if superset else (s + step, s)
                    m, e = _ext_add(am[t], np.int64(ae[t]), am[u], np.int64(ae[u]))
                    am[t] = m
                    ae[t] = e


#: float64 holds 2^-1022 .. 2^1023 as normal numbers: a table scaled so that its largest
#: sum stays below 2^_F64_TOP keeps every input at or above 2^-_F64_BOTTOM normal
_F64_TOP = 1021
_F64_BOTTOM = 1020


@numba.njit(cache=True, nogil=True, inline="always")
def _f64_transform(a, bits, superset):
    """The subset-sum (or superset-sum) transform of the float64 table ``a`` in place,
    in the passes of :func:`_passes`.  Above the cache block two bits go in one sweep
    over the table (half the memory traffic), each sum associated as bit after bit would
    (so the floats are the same)."""
    for lo, hi, lo_bit, hi_bit in _passes(bits):
        i = lo_bit
        while i < hi_bit:
            step = np.int64(1) << i
            if lo_bit > 0 and i + 1 < hi_bit:
                for base in range(lo, hi, 4 * step):
                    if superset:
                        for s in range(base, base + step):
                            x0, x1, x2, x3 = a[s], a[s + step], a[s + 2 * step], a[s + 3 * step]
                            a[s] = (x0 + x1) + (x2 + x3)
                            a[s + step] = x1 + x3
                            a[s + 2 * step] = x2 + x3
                    else:
                        for s in range(base, base + step):
                            x0, x1, x2, x3 = a[s], a[s + step], a[s + 2 * step], a[s + 3 * step]
                            a[s + step] = x1 + x0
                            a[s + 2 * step] = x2 + x0
                            a[s + 3 * step] = (x3 + x2) + (x1 + x0)
                i += 2
                continue
            for base in range(lo, hi, 2 * step):
                if superset:
                    for s in range(base, base + step):
                        a[s] += a[s + step]
                else:
                    for s in range(base, base + step):
                        a[s + step] += a[s]
            i += 1


@numba.njit(cache=True, nogil=True, inline="always")
def _split_f64(am, ae, sc, M):
    """In place, ``am[t] 2^sc`` (normal float64 or zero) as ext with the mantissa in
    [1, 2): the exponent bits read off the float's bits (no frexp call per entry)."""
    bits = am.view(np.int64)
    for t in range(M):
        x = bits[t]
        if x == 0:
            ae[t] = EXT_ZERO32
        else:
            ae[t] = sc + ((x >> 52) & 0x7FF) - 1023
            bits[t] = (x & 0xFFFFFFFFFFFFF) | (np.int64(1023) << 52)


@numba.njit(cache=True, nogil=True, inline="always")
def _alpha_scale(fam, v):
    """(ok, s): the power of two ``2^s`` that the float64 path divides node v's weights by.

    ``s`` puts the largest ``beta_v`` below ``2^(_F64_TOP - b)`` with ``2^b`` above the
    number of v's families, so that every subset sum stays below ``2^_F64_TOP``
    (no overflow).  ``ok`` when the smallest positive weight then lies at or above
    ``2^-_F64_BOTTOM``: every input is a normal float64 and every sum of non-negative
    terms is at least its largest input, so no value underflows and each keeps float64's
    relative precision (the weights of a node span at most about 1,400 nats).  Otherwise
    (or when v has no finite weight) the extended-float path is taken."""
    lo = fam.offset[v]
    hi = fam.offset[v + 1]
    wmax = -np.inf
    wmin = np.inf
    for f in range(lo, hi):
        w = fam.log_weight[f]
        if w > -np.inf:
            wmax = max(wmax, w)
            wmin = min(wmin, w)
    if wmax == -np.inf or not (wmax < np.inf):
        return False, np.int64(0)
    b = 1
    while (np.int64(1) << b) <= hi - lo:
        b += 1
    s = np.int64(math.floor(wmax / _LN2)) + 1 - (_F64_TOP - b)
    return wmin - s * _LN2 >= -_F64_BOTTOM * _LN2, s


@numba.njit(cache=True, nogil=True, parallel=True)
def _alpha_tables(fam, n, alpha_m, alpha_e):
    """alpha_v(U) for every node v and U subset V - {v} (compressed masks), as ext:
    beta_v placed at its parent sets, then the subset-sum transform over n - 1 bits.
    The exponents are kept as int32, a zero's as ``EXT_ZERO32``.  A node whose weights
    fit float64 once scaled (:func:`_alpha_scale`) is transformed in plain float64 in
    ``alpha_m`` (a quarter of the time of ext additions) and split into ext after."""
    M = np.int64(1) << (n - 1)
    for v in numba.prange(n):
        am = alpha_m[v]
        ae = alpha_e[v]
        ok, sc = _alpha_scale(fam, v)
        if ok:
            for t in range(M):
                am[t] = 0.0
            for f in range(fam.offset[v], fam.offset[v + 1]):
                w = fam.log_weight[f]
                if w > -np.inf:
                    am[_compress(np.int64(fam.mask[f]), v)] += math.exp(w - sc * _LN2)
            _f64_transform(am, n - 1, False)
            _split_f64(am, ae, sc, M)
            continue
        for t in range(M):
            am[t] = 0.0
            ae[t] = EXT_ZERO32
        for f in range(fam.offset[v], fam.offset[v + 1]):
            t = _compress(np.int64(fam.mask[f]), v)
            m, e = _ext_of_log(fam.log_weight[f])
            m, e = _ext_add(am[t], np.int64(ae[t]), m, e)
            am[t] = m
            ae[t] = e
        _ext_transform(am, ae, n - 1, False)
        for t in range(M):
            m, e = _ext_norm(am[t], np.int64(ae[t]))
            am[t] = m
            ae[t] = max(e, EXT_ZERO32)


@numba.njit(cache=True, nogil=True, inline="always")
def _order_sum_at(S, n, alpha_m, alpha_e, T_m, T_e, inside):
    """One forward or backward sum at ``S``, over v in increasing order: with
    ``inside``, L(S) = sum_{v in S} L(S - v) alpha_v(S - v); without,
    R(S) = sum_{v notin S} alpha_v(S) R(S + v).  Either way the term of v reads
    ``T`` at ``S ^ {v}`` and alpha_v at ``S`` without bit v."""
    am = 0.0
    ae = EXT_ZERO
    for v in range(n):
        bit = np.int64(1) << v
        if ((S & bit) != 0) == inside:
            t = _compress(S, v)
            m = T_m[S ^ bit] * alpha_m[v, t]
            e = T_e[S ^ bit] + np.int64(alpha_e[v, t])
            am, ae = _ext_add(am, ae, m, e)
    return _ext_norm(am, ae)


@numba.njit(cache=True, nogil=True, parallel=True)
def _forward_backward_blocks(n, h, blocks, level_off, alpha_m, alpha_e, L_m, L_e, R_m, R_e):
    """Forward and backward sums split over the threads.  A set ``S`` is a block (its
    ``h`` highest bits ``H``) and a place in it (the low bits ``l``): ``L(S)`` reads
    ``L`` of its own block at smaller places and of the blocks ``H - {u}`` at the same
    place, so the blocks of one level ``|H|`` are independent once the lower levels
    are done (``blocks[level_off[j]:level_off[j + 1]]`` hold the ``H`` with ``|H| = j``),
    and each block is one thread's loop over increasing places; ``R`` likewise from the
    top level down, decreasing places.  Every ``L(S)`` and ``R(S)`` is the same sum in
    the same order as one thread's loop over ``S`` would compute."""
    low = n - h
    B = np.int64(1) << low
    full = (np.int64(1) << n) - 1
    for j in range(h + 1):
        a = level_off[j]
        for b in numba.prange(level_off[j + 1] - a):
            base = blocks[a + b] << low
            for l in range(B):
                S = base | l
                if S == 0:
                    L_m[0] = 1.0
                    L_e[0] = 0
                else:
                    L_m[S], L_e[S] = _order_sum_at(S, n, alpha_m, alpha_e, L_m, L_e, True)
    for j in range(h, -1, -1):
        a = level_off[j]
        for b in numba.prange(level_off[j + 1] - a):
            base = blocks[a + b] << low
            for l in range(B - 1, -1, -1):
                S = base | l
                if S == full:
                    R_m[full] = 1.0
                    R_e[full] = 0
                else:
                    R_m[S], R_e[S] = _order_sum_at(S, n, alpha_m, alpha_e, R_m, R_e, False)


#: highest bits of a set that make its block in the forward and backward sums: 2^8
#: blocks, at least 28 (C(8, 4) = 70) side by side in the middle levels
_BLOCK_BITS = 8


def _forward_backward(n, alpha_m, alpha_e, L_m, L_e, R_m, R_e):
    """Forward sums L(S) (S first) and backward sums R(S) (V - S after S), as ext."""
    h = min(_BLOCK_BITS, n)
    H = np.arange(1 << h, dtype=np.int64)
    size = np.array([bin(x).count("1") for x in range(1 << h)], dtype=np.int64)
    blocks = H[np.argsort(size, kind="stable")]
    level_off = np.concatenate([[0], np.cumsum(np.bincount(size, minlength=h + 1))]).astype(np.int64)
    _forward_backward_blocks(n, h, blocks, level_off, alpha_m, alpha_e, L_m, L_e, R_m, R_e)


#: the float64 path of the arc posteriors puts the largest ``L(S) R(S + v)`` below
#: ``2^_ARC_TOP``; superset sums of at most 2^(n - 1) such terms stay below 2^_F64_TOP
#: for n <= 33 (:data:`_ARC_POW2` rescales by a table lookup)
_ARC_TOP = _F64_TOP - 34
_ARC_POW2 = np.ldexp(1.0, _ARC_TOP - np.arange(2200)).astype(np.float64)
#: relative accuracy that a float64 Gamma_v(G) must have, else node v is redone in ext
_ARC_BITS = 45


@numba.njit(cache=True, nogil=True, inline="always")
def _gamma_f64(n, v, L_m, L_e, R_m, R_e, hm):
    """Gamma_v in float64 scaled by ``2^-top``: ``h(S) = L(S) R(S + v)``, the terms
    ``2^(_ARC_TOP + 2)`` below the largest underflowing to 0 (each off by at most 2^-1073), and
    the superset transform.  Returns ``top`` and the smallest trustworthy value: the
    terms lost add up to at most 2^(n - 1 - 1073), so an entry at or above
    ``2^(n - 1 - 1073 + _ARC_BITS)`` carries a relative error below ``2^-_ARC_BITS``."""
    M = np.int64(1) << (n - 1)
    bit = np.int64(1) << v
    top = EXT_ZERO
    for t in range(M):
        S = _expand(t, v)
        top = max(top, np.int64(L_e[S]) + np.int64(R_e[S | bit]))
    top += 2  # mantissa products are below 4
    for t in range(M):
        S = _expand(t, v)
        d = top - (np.int64(L_e[S]) + np.int64(R_e[S | bit]))
        hm[t] = L_m[S] * R_m[S | bit] * _ARC_POW2[min(d, 2199)]
    _f64_transform(hm, n - 1, True)
    return top - _ARC_TOP, math.ldexp(1.0, n - 1 - 1073 + _ARC_BITS)


@numba.njit(cache=True, nogil=True, inline="always")
def _gamma_ext(n, v, L_m, L_e, R_m, R_e, hm, he):
    """Gamma_v as ext (mantissa ``hm``, exponent ``he``): any range."""
    M = np.int64(1) << (n - 1)
    bit = np.int64(1) << v
    for t in range(M):
        S = _expand(t, v)
        m, e = _ext_norm(L_m[S] * R_m[S | bit], np.int64(L_e[S]) + np.int64(R_e[S | bit]))
        hm[t] = m
        he[t] = e
    _ext_transform(hm, he, n - 1, True)


@numba.njit(cache=True, nogil=True, parallel=True)
def _arc_kernel(fam, n, L_m, L_e, R_m, R_e, post, scratch):
    """post[u, v] = P(u -> v | D): Gamma_v (superset sums of L(S) R(S + v)) read at
    each parent set of v, times beta_v, over L(V).  Thread ``c`` takes the nodes
    ``c, c + T, ..`` with its row of ``scratch`` (T rows of 2^(n - 1) float64, touched
    once per run).  Gamma_v is computed in float64 (:func:`_gamma_f64`); when a parent
    set of v reads a value below the trustworthy floor, v is redone in ext."""
    full = (np.int64(1) << n) - 1
    lv_m = L_m[full]
    lv_e = np.int64(L_e[full])
    T = scratch.shape[0]
    for c in numba.prange(T):
        hm = scratch[c]
        for v in range(c, n, T):
            shift, floor = _gamma_f64(n, v, L_m, L_e, R_m, R_e, hm)
            ok = True
            for f in range(fam.offset[v], fam.offset[v + 1]):
                if fam.size[f] > 0 and fam.log_weight[f] > -np.inf \
                        and hm[_compress(np.int64(fam.mask[f]), v)] < floor:
                    ok = False
                    break
            he = np.empty(0, dtype=np.int64)
            if not ok:
                he = np.empty(hm.size, dtype=np.int64)
                _gamma_ext(n, v, L_m, L_e, R_m, R_e, hm, he)
            for f in range(fam.offset[v], fam.offset[v + 1]):
                if fam.size[f] == 0:
                    continue
                t = _compress(np.int64(fam.mask[f]), v)
                if ok:
                    gm, ge = _ext_norm(hm[t], shift)
                else:
                    gm, ge = hm[t], he[t]
                bm, be = _ext_of_log(fam.log_weight[f])
                x = bm * gm / lv_m
                ex = be + ge - lv_e
                val = 0.0 if ex < -1100 else math.ldexp(x, ex)
                for a in range(fam.size[f]):
                    post[fam.members[f, a], v] += val


def big_table(shape, dtype=np.float64) -> np.ndarray:
    """An uninitialised array in an anonymous memory map of its own, advised against
    transparent huge pages.  numpy advises huge pages for large arrays; where the kernel
    then compacts memory on the first touch (``defrag`` = ``madvise``), that took 3.8 s
    of system time per GiB here (N = 25: 18 s for the local order scores), against
    0.9 s per GiB for 4 KiB pages, which the DP's passes run as fast on."""
    dtype = np.dtype(dtype)
    nbytes = max(int(math.prod(np.atleast_1d(shape))) * dtype.itemsize, 1)
    buf = mmap.mmap(-1, nbytes)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):
        buf.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(buf, dtype=dtype, count=nbytes // dtype.itemsize).reshape(shape)


def dp_tables(fam: Families, n: int) -> tuple[np.ndarray, ...]:
    """(alpha_m, alpha_e, L_m, L_e, R_m, R_e) of the exact DP; the caller guards memory."""
    M = 1 << (n - 1)
    alpha_m = big_table((n, M))
    alpha_e = big_table((n, M), np.int32)
    _alpha_tables(fam, n, alpha_m, alpha_e)
    L_m = big_table(1 << n)
    L_e = big_table(1 << n, np.int64)
    R_m = big_table(1 << n)
    R_e = big_table(1 << n, np.int64)
    _forward_backward(n, alpha_m, alpha_e, L_m, L_e, R_m, R_e)
    return alpha_m, alpha_e, L_m, L_e, R_m, R_e


def dp_arc_posteriors(fam: Families, n: int, L_m, L_e, R_m, R_e) -> np.ndarray:
    """(n, n) matrix of arc posteriors, rows parent, columns child."""
    post = np.zeros((n, n))
    scratch = big_table((max(1, min(numba.get_num_threads(), n)), 1 << (n - 1)))
    _arc_kernel(fam, n, L_m, L_e, R_m, R_e, post, scratch)
    return post


# --------------------------------------------------------------------------- order MCMC
@numba.njit(cache=True, nogil=True, inline="always")
def _rand(rng, c):
    """Next uniform [0, 1) of chain c (xorshift64*, 53 bits)."""
    x = rng[c]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[c] = x
    return float((x * np.uint64(2685821657736338717)) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


#: how order MCMC finds a family: node v's families in colex order, the set of candidate
#: ranks c_1 < .. < c_s (a node's rank among v's candidates: u, or u - 1 above v) at
#: ``offset[v] + size_base[s] + sum_t binom[c_t, t + 1]``; ``cut[v]`` in nats; ``k``.
#: Bounds that let whole loops be skipped: ``max2[v, c]`` the best weight of a pair holding
#: rank c, ``max3[v, c]`` of a triple holding c, ``pair3[v, C(c_2, 2) + c_1]`` of a triple
#: holding the pair c_1 < c_2 (-inf where there is none).
Lookup = namedtuple("Lookup", "binom size_base cut k max2 max3 pair3")


@numba.njit(cache=True, nogil=True, inline="always")
def _next_comb(idx, s, u):
    """Next s-combination of 0 .. u - 1 in lexicographic order, in place; False after the last."""
    i = s - 1
    while i >= 0 and idx[i] == u - s + i:
        i -= 1
    if i < 0:
        return False
    idx[i] += 1
    for j in range(i + 1, s):
        idx[j] = idx[j - 1] + 1
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def _candidate_ranks(v, pred, n, cl):
    """Ranks among v's candidates of the nodes in ``pred``, ascending, into ``cl``; how many."""
    u = 0
    for x in range(n):
        if (pred >> np.uint64(x)) & np.uint64(1):
            cl[u] = x if x < v else x - 1
            u += 1
    return u


@numba.njit(cache=True, nogil=True, inline="always")
def _family_at(fam, look, v, size, cl, idx):
    f = fam.offset[v] + look.size_base[size]
    for t in range(size):
        f += look.binom[cl[idx[t]], t + 1]
    return f


@numba.njit(cache=True, nogil=True, inline="always")
def _acc(w, top, s, cut):
    """Add exp(w) to the running sum exp(top) s; terms ``cut`` nats below the top are left out."""
    if w > top:
        s = s * math.exp(top - w) + 1.0
        top = w
    elif w > top - cut:
        s += math.exp(w - top)
    return top, s


@numba.njit(cache=True, nogil=True)
def _local_score(fam, look, v, u, cl, idx):
    """(top, s) with log alpha_v = top + log s over the parent sets drawn from the ``u``
    candidate ranks in ``cl``: every subset of at most k of them looked up directly, summed
    with a running maximum, terms more than ``cut[v]`` nats below it left out.  Sets of
    up to three parents in nested loops (their colex ranks are partial sums), pairs before
    triples so that the running maximum is high when the triples come, and a loop skipped
    when the bound of every set it would visit (:data:`Lookup`) is already below the
    window; larger sets through :func:`_next_comb`."""
    lw = fam.log_weight
    lo = fam.offset[v]
    cut = look.cut[v]
    k = min(look.k, u)
    top, s = _acc(lw[lo], -np.inf, 0.0, cut)
    if k >= 1:
        b1 = lo + look.size_base[1]
        b2 = lo + look.size_base[2] if k >= 2 else 0
        for a in range(u):
            ca = cl[a]
            top, s = _acc(lw[b1 + ca], top, s, cut)
            if k >= 2 and look.max2[v, ca] > top - cut:
                r2 = b2 + look.binom[ca, 2]
                for b in range(a):
                    top, s = _acc(lw[r2 + cl[b]], top, s, cut)
    if k >= 3:
        b3 = lo + look.size_base[3]
        for a in range(2, u):
            ca = cl[a]
            if look.max3[v, ca] <= top - cut:
                continue
            ra = b3 + look.binom[ca, 3]
            pa = look.binom[ca, 2]
            for b in range(1, a):
                cb = cl[b]
                if look.pair3[v, pa + cb] <= top - cut:
                    continue
                r3 = ra + look.binom[cb, 2]
                for c in range(b):
                    top, s = _acc(lw[r3 + cl[c]], top, s, cut)
    for size in range(4, k + 1):
        for t in range(size):
            idx[t] = t
        while True:
            top, s = _acc(lw[_family_at(fam, look, v, size, cl, idx)], top, s, cut)
            if not _next_comb(idx, size, u):
                break
    return top, s


@numba.njit(cache=True, nogil=True)
def _node_score(fam, look, v, pred, n, cl, idx):
    """log alpha_v(pred)."""
    u = _candidate_ranks(v, pred, n, cl)
    top, s = _local_score(fam, look, v, u, cl, idx)
    if top == -np.inf:
        return -np.inf
    return top + math.log(s)


@numba.njit(cache=True, nogil=True, inline="always")
def _take(fam, f, top, s, floor, draw, last, arc, c, r, v, want_arcs):
    """One parent set of the second pass of :func:`_record`: its share of the arc
    probabilities, and the DAG draw (``draw`` counts down through the weights)."""
    w = fam.log_weight[f]
    if w > floor:
        pw = math.exp(w - top)
        last = f
        if want_arcs:
            for a in range(fam.size[f]):
                arc[c, r, fam.members[f, a], v] += pw / s
        if draw >= 0.0:
            draw -= pw
            if draw < 0.0:
                draw = -1.0 - f  # chosen: encoded below -1
    return draw, last


@numba.njit(cache=True, nogil=True)
def _record(fam, look, order, c, r, rec, want_arcs, want_dags, rng, n, cl, idx):
    """Rao-Blackwellised arc probabilities of the current order and a DAG drawn from it:
    a first pass for log alpha_v, a second over the same parent sets for their shares."""
    pred = np.uint64(0)
    arc = rec.arc
    for i in range(n):
        v = order[i]
        u = _candidate_ranks(v, pred, n, cl)
        top, s = _local_score(fam, look, v, u, cl, idx)
        pred |= np.uint64(1) << np.uint64(v)
        if top == -np.inf:
            continue
        floor = top - look.cut[v]
        draw = _rand(rng, c) * s if want_dags else -0.5
        last = -1
        lo = fam.offset[v]
        k = min(look.k, u)
        draw, last = _take(fam, lo, top, s, floor, draw, last, arc, c, r, v, want_arcs)
        if k >= 1:
            b1 = lo + look.size_base[1]
            b2 = lo + look.size_base[2] if k >= 2 else 0
            for a in range(u):
                ca = cl[a]
                draw, last = _take(fam, b1 + ca, top, s, floor, draw, last, arc, c, r, v, want_arcs)
                if k >= 2 and look.max2[v, ca] > floor:
                    r2 = b2 + look.binom[ca, 2]
                    for b in range(a):
                        draw, last = _take(fam, r2 + cl[b], top, s, floor, draw, last, arc, c, r, v, want_arcs)
        if k >= 3:
            b3 = lo + look.size_base[3]
            for a in range(2, u):
                ca = cl[a]
                if look.max3[v, ca] <= floor:
                    continue
                ra = b3 + look.binom[ca, 3]
                pa = look.binom[ca, 2]
                for b in range(1, a):
                    cb = cl[b]
                    if look.pair3[v, pa + cb] <= floor:
                        continue
                    r3 = ra + look.binom[cb, 2]
                    for e in range(b):
                        draw, last = _take(fam, r3 + cl[e], top, s, floor, draw, last, arc, c, r, v, want_arcs)
        for size in range(4, k + 1):
            for t in range(size):
                idx[t] = t
            while True:
                draw, last = _take(fam, _family_at(fam, look, v, size, cl, idx), top, s, floor, draw, last, arc,
                                   c, r, v, want_arcs)
                if not _next_comb(idx, size, u):
                    break
        if want_dags:
            # a chosen set is encoded as -1 - f; rounding may leave the draw past the end: the last set
            rec.dag_family[c, r, v] = int(-1.0 - draw) if draw <= -1.0 else last


@numba.njit(cache=True, nogil=True)
def _chain_steps(fam, look, state, c, n_steps, thin, step0, p_adjacent, rec, r0, want_arcs, want_dags, accepted):
    """Advance chain ``c`` (see :func:`run_chains`)."""
    n = state.order.shape[1]
    order = state.order[c]
    score = state.node_score[c]
    new = np.empty(n)
    cl = np.empty(max(n, 1), dtype=np.int64)
    idx = np.empty(max(look.k, 1), dtype=np.int64)
    r = r0
    for it in range(n_steps):
        if n >= 2:
            if _rand(state.rng, c) < p_adjacent:
                i = min(int(_rand(state.rng, c) * (n - 1)), n - 2)
                j = i + 1
            else:
                i = min(int(_rand(state.rng, c) * n), n - 1)
                j = min(int(_rand(state.rng, c) * (n - 1)), n - 2)
                if j >= i:
                    j += 1
                else:
                    i, j = j, i
            pred = np.uint64(0)
            for a in range(i):
                pred |= np.uint64(1) << np.uint64(order[a])
            delta = 0.0
            for a in range(i, j + 1):  # the order with i and j swapped
                v = order[j] if a == i else (order[i] if a == j else order[a])
                new[a] = _node_score(fam, look, v, pred, n, cl, idx)
                delta += new[a] - score[v]
                pred |= np.uint64(1) << np.uint64(v)
            if not math.isnan(delta) and math.log(1.0 - _rand(state.rng, c)) < delta:
                vi = order[i]
                order[i] = order[j]
                order[j] = vi
                for a in range(i, j + 1):
                    score[order[a]] = new[a]
                accepted[c] += 1
        if (step0 + it + 1) % thin == 0:
            total = 0.0
            for v in range(n):
                total += score[v]
            rec.log_score[c, r] = total
            _record(fam, look, order, c, r, rec, want_arcs, want_dags, state.rng, n, cl, idx)
            r += 1


@numba.njit(cache=True, nogil=True, parallel=True)
def run_chains(fam, look, state, n_steps, thin, step0, p_adjacent, rec, r0, want_arcs, want_dags, accepted):
    """Advance every chain ``n_steps`` MH steps (steps ``step0 + 1 ..``), recording at
    the steps that are multiples of ``thin`` into row ``r0 + ...`` of ``rec``.

    A move swaps the nodes at positions i < j (adjacent with probability
    ``p_adjacent``, else a uniform pair); the nodes at positions i .. j change their
    predecessor sets, so only their local scores are recomputed.  (Each chain runs in
    a plain kernel: numba's parallel loops drop writes made through a namedtuple's
    fields.)
    """
    n_chains = state.order.shape[0]
    for c in numba.prange(n_chains):
        _chain_steps(fam, look, state, c, n_steps, thin, step0, p_adjacent, rec, r0, want_arcs, want_dags, accepted)


@numba.njit(cache=True, nogil=True)
def initial_scores(fam, look, order):
    """log alpha_v(U_v) of every node of every chain's order."""
    n_chains, n = order.shape
    out = np.empty((n_chains, n))
    cl = np.empty(max(n, 1), dtype=np.int64)
    idx = np.empty(max(look.k, 1), dtype=np.int64)
    for c in range(n_chains):
        pred = np.uint64(0)
        for i in range(n):
            v = order[c, i]
            out[c, v] = _node_score(fam, look, v, pred, n, cl, idx)
            pred |= np.uint64(1) << np.uint64(v)
    return out


def colex_families(fam: Families, n: int, k: int, binom: np.ndarray) -> tuple[Families, Lookup]:
    """The families of every node (each node's candidates being all other nodes, any
    order inside a node) rearranged into the colex layout of :data:`Lookup`.

    ``binom[a, b]`` must hold C(a, b) for a <= n, b <= k + 1.
    """
    m = max(n - 1, 0)
    kk = min(k, m)
    size_base = np.zeros(kk + 2, dtype=np.int64)
    size_base[1:] = np.cumsum([math.comb(m, s) for s in range(kk + 1)])
    node = np.repeat(np.arange(n), np.diff(fam.offset))
    mem = fam.members[:, :max(kk, 1)]
    rank = np.where(mem < node[:, None], mem, mem - 1)  # candidate ranks (padding: ignored below)
    pos = fam.offset[node] + size_base[fam.size]
    for t in range(kk):
        use = fam.size > t
        pos[use] += binom[rank[use, t], t + 1]
    if np.unique(pos).size != pos.size or pos.max(initial=-1) >= fam.log_weight.size:
        raise AssertionError("colex layout: the family table is not every set of at most k other nodes")
    inv = np.empty_like(pos)
    inv[pos] = np.arange(pos.size)
    out = Families(np.ascontiguousarray(fam.log_weight[inv]), fam.offset, np.ascontiguousarray(fam.mask[inv]),
                   np.ascontiguousarray(fam.members[inv]), np.ascontiguousarray(fam.size[inv]))
    per_node = np.diff(fam.offset).astype(float)
    cut = CUT_NATS + np.log(np.maximum(per_node, 1.0))
    # loop bounds: the best weight of the pairs / triples holding a rank, of the triples holding a pair
    max2 = np.full((n, max(m, 1)), -np.inf)
    max3 = np.full((n, max(m, 1)), -np.inf)
    pair3 = np.full((n, max(math.comb(m, 2), 1)), -np.inf)
    for size, table in ((2, max2), (3, max3))[:max(kk - 1, 0)]:
        rows = np.flatnonzero(fam.size == size)
        for t in range(size):
            np.maximum.at(table, (node[rows], rank[rows, t]), fam.log_weight[rows])
    rows = np.flatnonzero(fam.size == 3)
    for t1, t2 in ((0, 1), (0, 2), (1, 2)) if kk >= 3 else ():
        np.maximum.at(pair3, (node[rows], binom[rank[rows, t2], 2] + rank[rows, t1]), fam.log_weight[rows])
    return out, Lookup(np.ascontiguousarray(binom, dtype=np.int64), size_base, cut, int(kk), max2, max3, pair3)
