"""Sufficient statistics and decomposable local scores (K2, BDeu): the hot path.

The family score of a node ``X_i`` with parents ``Pa_i`` is the natural log of the
Dirichlet-multinomial marginal likelihood (Cooper & Herskovits 1992; Dash & Cooper
Eq. 6; Heckerman et al. 1995)::

    sum_j [ lgamma(a_ij) - lgamma(a_ij + N_ij) + sum_k ( lgamma(a_ijk + N_ijk) - lgamma(a_ijk) ) ]

with ``a_ijk = 1`` (K2) or ``a_ijk = ess / (q_i r_i)`` (BDeu), ``a_ij = sum_k a_ijk``.
Parent configurations that never occur contribute exactly zero.

Counting runs in numba kernels over mixed-radix codes, one pass over the rows per
family; on complete data the rows are the distinct rows of the data, each weighed by
how often it occurs (the same counts, so the same scores: sampled networks repeat
rows), and the searches score every arc addition into a child in one call, the cells
of its current parents computed once.  A family with few cells is counted on one-hot
bit columns instead (a parent configuration's rows are the AND of its parents' state
bits, a cell's count a population count; :func:`_score_bits`) when that reads fewer
words than the rows would take passes (:func:`_use_bits`), and BDeu's ``lgamma(a + c)``
values are kept per thread and ``a`` across calls (:func:`_memo_row`): the same terms
in the same order either way, so the same floats.  One family named by the caller goes
to its kernel as the address of a per-thread context and five integers
(:func:`_score_family_ctx`): a numba call costs more with every array it is given.
Scores are cached per (child, parent set).  Every family under an order at once
(:func:`score_order_families`) is the engine of :mod:`bnexplore._order_scores` and
:mod:`bnexplore._order_walks`.
"""
from __future__ import annotations

import bisect
import math
import threading
from typing import Iterable, Mapping, Sequence

import numba
import numpy as np
from numba import types
from numba.extending import intrinsic
import pandas as pd
from scipy.special import gammaln

from ._deprecation import renamed
from ._order_scores import order_family_scores
from .data.core import (ColumnIndexError, DiscreteData, MemoryBudgetError, as_discrete,
                        check_table_size)

__all__ = ["LocalScore", "family_counts", "standard_parameters", "score_order_families", "PRIORS"]

PRIORS = ("K2", "BDeu")

# A dense count table is used while q*r stays below this many cells (per family);
# larger tables are counted by sorting the row keys instead.
_DENSE_LIMIT = 1 << 18


@numba.njit(cache=True, nogil=True)
def _keys(cols, child, parents, arities):
    n = cols.shape[1]
    r = arities[child]
    keys = np.empty(n, dtype=np.int64)
    for t in range(n):
        keys[t] = 0
    for p in parents:
        a = arities[p]
        col = cols[p]
        for t in range(n):
            keys[t] = keys[t] * a + col[t]
    ccol = cols[child]
    for t in range(n):
        keys[t] = keys[t] * r + ccol[t]
    return keys


#: entries of a BDeu ``lgamma`` memo row (counts up to this share their lgamma values):
#: shared by the families of a batch, and shorter for one family (less to fill)
_MEMO = 256
_MEMO_ONE = 64


@numba.njit(cache=True, nogil=True)
def _lgamma_memo(memo, a, c):
    """``lgamma(a + c)`` for a whole count ``c``, kept in ``memo[c]`` (NaN: not yet
    computed) while ``c`` fits: one BDeu family meets the same small counts in many cells,
    and the families of one search step share ``a``.  The same call, so the same float."""
    if c < memo.shape[0]:
        v = memo[c]
        if v != v:
            v = math.lgamma(a + c)
            memo[c] = v
        return v
    return math.lgamma(a + c)


@numba.njit(cache=True, nogil=True)
def _config_terms(nj, cell_sum, aj, a, bdeu, logfact, r):
    # contribution of one observed parent configuration
    if bdeu:
        return math.lgamma(aj) - math.lgamma(aj + nj) + cell_sum
    # K2: lgamma(r) - lgamma(r + N_j) + sum_k log(N_jk!)
    return logfact[r - 1] - logfact[r - 1 + nj] + cell_sum


@numba.njit(cache=True, nogil=True)
def _merge_tables(counts, Z):
    """Add the four interleaved count tables of ``Z`` cells into the first and zero the
    other three (one vectorised pass: the scoring loops then read one table)."""
    for i in range(Z):
        counts[i] += counts[Z + i] + counts[2 * Z + i] + counts[3 * Z + i]
    counts[Z:4 * Z] = 0


@numba.njit(cache=True, nogil=True)
def _score_counts(counts, q, r, bdeu, ess, logfact, memo_a, memo_aj):
    """Family score (the equation above) from four interleaved count tables of
    ``Z = q r`` cells in the canonical layout (configuration ``j`` at ``j r``, child
    state fastest), summed over ``j`` in increasing order; zero again on exit.
    ``memo_a``, ``memo_aj``: the lgamma memos of ``a`` and ``aj`` (BDeu).  The layout
    is :func:`_score_split`'s with one parent of ``q`` states."""
    return _score_split(counts, 1, q, 1, r, bdeu, ess, logfact, memo_a, memo_aj)


@numba.njit(cache=True, nogil=True)
def _score_from_keys(keys, ccol, r, q, bdeu, ess, logfact, counts):
    """Family score from precomputed parent-configuration keys (one pass over the rows).

    ``counts`` must hold at least 4 q r zeros on entry; they are zero again on exit.
    Four interleaved histograms: consecutive rows that hit the same cell do not wait
    on each other's increments (skewed data is the common case).
    """
    n = keys.shape[0]
    Z = q * r
    n4 = n - n % 4
    for t in range(0, n4, 4):
        counts[keys[t] * r + ccol[t]] += 1
        counts[Z + keys[t + 1] * r + ccol[t + 1]] += 1
        counts[2 * Z + keys[t + 2] * r + ccol[t + 2]] += 1
        counts[3 * Z + keys[t + 3] * r + ccol[t + 3]] += 1
    for t in range(n4, n):
        counts[keys[t] * r + ccol[t]] += 1
    memo = np.full((2, _MEMO_ONE if bdeu and q * r > _MEMO_ONE else 0), np.nan)
    return _score_counts(counts, q, r, bdeu, ess, logfact, memo[0], memo[1])


@numba.njit(cache=True, nogil=True)
def _count_cells(base, col, stride, w, counts, Z):
    """Four interleaved histograms of the cells ``col[t] stride + base[t]`` of the
    distinct rows ``t``, each weighed by its multiplicity ``w[t]``."""
    n = base.shape[0]
    n4 = n - n % 4
    for t in range(0, n4, 4):
        counts[col[t] * stride + base[t]] += w[t]
        counts[Z + col[t + 1] * stride + base[t + 1]] += w[t + 1]
        counts[2 * Z + col[t + 2] * stride + base[t + 2]] += w[t + 2]
        counts[3 * Z + col[t + 3] * stride + base[t + 3]] += w[t + 3]
    for t in range(n4, n):
        counts[col[t] * stride + base[t]] += w[t]


@numba.njit(cache=True, nogil=True)
def _family_base(ucols, child, parents, arities, base):
    """``base[t]`` = the cell of distinct row ``t`` in the table of ``child`` given
    ``parents`` (mixed radix, the last parent fastest, the child fastest of all);
    returns the number of parent configurations ``q``."""
    r = arities[child]
    ccol = ucols[child]
    for t in range(base.shape[0]):
        base[t] = ccol[t]
    stride = r
    for i in range(parents.shape[0] - 1, -1, -1):
        u = parents[i]
        col = ucols[u]
        for t in range(base.shape[0]):
            base[t] += col[t] * stride
        stride *= arities[u]
    return stride // r


@numba.njit(cache=True, nogil=True)
def _score_split(counts, q_hi, a_u, q_lo, r, bdeu, ess, logfact, memo_a, memo_aj):
    """Family score from four interleaved tables counted with one parent ``u`` as the
    slowest digit (cell ``(c_u q_hi q_lo + j_pa) r + x``, ``j_pa`` the configuration of
    the other parents), summed in the canonical order of the sorted parent set, where
    ``u`` has ``q_hi`` configurations of parents before it and ``q_lo`` after: the same
    terms in the same order as the canonical layout (configuration ``j`` at ``j r``), so
    the same float.  ``memo_a``, ``memo_aj``: the lgamma memos of ``a = ess / (q r)``
    and ``aj = ess / q`` (BDeu)."""
    q = q_hi * a_u * q_lo
    a = ess / (q * r)
    aj = ess / q
    lga = _lgamma_memo(memo_a, a, 0) if bdeu else 0.0       # lgamma(a + 0): kept in the memo too
    lgaj = _lgamma_memo(memo_aj, aj, 0) if bdeu else 0.0
    total = 0.0
    _merge_tables(counts, q * r)
    # the terms written out (no call per cell or configuration: the calls cost more than
    # the terms); a configuration's cells are zeroed as they are read
    for hi in range(q_hi):
        for cu in range(a_u):
            for lo in range(q_lo):
                i0 = (cu * q_hi * q_lo + hi * q_lo + lo) * r
                nj = 0
                cell = 0.0
                for x in range(r):
                    c = counts[i0 + x]
                    if c > 0:
                        nj += c
                        if bdeu:
                            cell += _lgamma_memo(memo_a, a, c) - lga
                        else:
                            cell += logfact[c]
                        counts[i0 + x] = 0
                if nj > 0:
                    if bdeu:
                        total += lgaj - _lgamma_memo(memo_aj, aj, nj) + cell
                    else:
                        total += logfact[r - 1] - logfact[r - 1 + nj] + cell
    return total


@numba.njit(cache=True, nogil=True)
def _dense(q, r, n):
    """Whether a table of ``q r`` cells is counted densely (else by sorting the keys)."""
    return q * r <= max(_DENSE_LIMIT, 4 * n)


@numba.njit(cache=True, nogil=True)
def _score_family_rows(ucols, w, cols, child, parents, arities, bdeu, ess, logfact):
    """:func:`_score_family` counted over the distinct rows ``ucols`` weighed by their
    multiplicities ``w`` (the same counts, so the same score): the first parent is
    the slowest digit, the cells of the others and the child come from one base key
    per row.  A table past the dense limit is counted over every row ``cols``."""
    q = 1
    for p in parents:
        q *= arities[p]
    r = arities[child]
    if not _dense(q, r, cols.shape[1]):
        return _score_family(cols, child, parents, arities, bdeu, ess, logfact)
    base = np.empty(ucols.shape[1], dtype=np.int64)
    counts = np.zeros(4 * q * r, dtype=np.int64)
    memo = np.full((2, _MEMO_ONE if bdeu and q * r > _MEMO_ONE else 0), np.nan)
    return _score_dense_rows(ucols, w, child, parents, arities, bdeu, ess, logfact, q, base, counts,
                             memo[0], memo[1])


@numba.njit(cache=True, nogil=True)
def _score_dense_rows(ucols, w, child, parents, arities, bdeu, ess, logfact, q, base, counts, memo_a, memo_aj):
    """:func:`_score_family_rows` of a dense table of ``q`` parent configurations in a
    workspace: ``base`` one entry per distinct row, ``counts`` at least ``4 q r`` zeros
    (zero again on exit), ``memo_a``, ``memo_aj`` the lgamma memos of ``a = ess / (q r)``
    and ``aj = ess / q`` (BDeu; NaN where not yet computed), so a batch allocates them once."""
    r = arities[child]
    if parents.shape[0] == 0:
        _family_base(ucols, child, parents, arities, base)
        _count_cells(base, ucols[child], 0, w, counts, r)
        return _score_counts(counts, 1, r, bdeu, ess, logfact, memo_a, memo_aj)
    q_lo = _family_base(ucols, child, parents[1:], arities, base)
    _count_cells(base, ucols[parents[0]], q_lo * r, w, counts, q * r)
    return _score_split(counts, 1, arities[parents[0]], q_lo, r, bdeu, ess, logfact, memo_a, memo_aj)


@intrinsic
def _popcount(typingctx, x):
    """The number of set bits of a uint64 (one ``popcnt`` instruction)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.uint64(types.uint64), codegen


def bit_columns(cols: np.ndarray, arities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(bits, off)``: the one-hot bit columns of the data ``cols`` (p, n): row ``t`` is
    bit ``t % 64`` of word ``t // 64`` of ``bits[off[u] + s]`` when column ``u`` holds
    state ``s`` (what :func:`_score_bits` counts with)."""
    p, n = cols.shape
    off = np.concatenate([[0], np.cumsum(arities)]).astype(np.int64)
    nw = max(1, -(-n // 64))
    bits = np.zeros((int(off[-1]), nw), dtype=np.uint64)
    for u in range(p):
        hot = cols[u][None, :] == np.arange(arities[u])[:, None]
        packed = np.packbits(hot, axis=1, bitorder="little")
        bits[off[u]:off[u + 1]].view(np.uint8)[:, :packed.shape[1]] = packed
    return bits, off


@numba.njit(cache=True, nogil=True)
def _and_into(dst, a, b):
    """``dst = a & b`` word by word; the number of bits set in it."""
    c = np.uint64(0)
    for i in range(dst.shape[0]):
        v = a[i] & b[i]
        dst[i] = v
        c += _popcount(v)
    return np.int64(c)


@numba.njit(cache=True, nogil=True)
def _and_count(a, b):
    """The number of bits set in ``a & b``."""
    c = np.uint64(0)
    for i in range(a.shape[0]):
        c += _popcount(a[i] & b[i])
    return np.int64(c)


@numba.njit(cache=True, nogil=True)
def _bits_cost(nw, child, parents, arities):
    """Word operations of :func:`_score_bits` on a family when every configuration is
    observed: one AND per word for each configuration of every prefix of the parents,
    and ``r - 1`` AND-counts per word for each full configuration."""
    work = 0
    q = 1
    for i in range(parents.shape[0]):
        q *= arities[parents[i]]
        work += q
    return nw * (work + q * (arities[child] - 1))


@numba.njit(cache=True, nogil=True)
def _use_bits(bits, n_distinct, child, parents, arities):
    """Whether a dense family is counted on the bit columns rather than the distinct
    rows: measured on ALARM, a word of :func:`_bits_cost` costs about 0.3 ns and a
    distinct row about 0.4 ns per pass of :func:`_family_base` and :func:`_count_cells`
    (``k + 2`` passes); ``bits`` empty: none kept (too many states)."""
    if bits.shape[0] == 0:
        return False
    return 3 * _bits_cost(bits.shape[1], child, parents, arities) <= 4 * n_distinct * (parents.shape[0] + 2)


@numba.njit(cache=True, nogil=True)
def _score_bits(bits, off, n, child, parents, arities, bdeu, ess, logfact, memo_a, memo_aj):
    """Family score (the equation above) counted on the bit columns (:func:`bit_columns`)
    of ``n`` rows: the rows of a parent configuration are the AND of its parents' state
    bits, built prefix by prefix in the canonical order (the first parent slowest) and
    skipped, with every configuration below it, as soon as a prefix has no row; a cell's
    count is the population count of the configuration's rows AND the child state's
    (the last state's by subtraction).  The terms and their order are those of
    :func:`_score_split`, so is the float."""
    k = parents.shape[0]
    return _score_bits_in(bits, off, n, child, parents, arities, bdeu, ess, logfact, memo_a, memo_aj,
                          np.empty((k + 1, bits.shape[1]), dtype=np.uint64), np.empty(2 * k + 2, dtype=np.int64))


@numba.njit(cache=True, nogil=True)
def _score_bits_in(bits, off, n, child, parents, arities, bdeu, ess, logfact, memo_a, memo_aj, level, marks):
    """:func:`_score_bits` in a workspace: ``level`` at least ``k + 1`` rows of the
    words of ``bits`` (the rows of each prefix of the parents), ``marks`` at least
    ``2 k + 2`` integers (the size of each prefix, then its digits), ``k`` parents."""
    k = parents.shape[0]
    r = arities[child]
    q = 1
    for i in range(k):
        q *= arities[parents[i]]
    a = ess / (q * r)
    aj = ess / q
    lga = _lgamma_memo(memo_a, a, 0) if bdeu else 0.0       # lgamma(a + 0): kept in the memo too
    lgaj = _lgamma_memo(memo_aj, aj, 0) if bdeu else 0.0
    cb = off[child]
    level[0, :] = ~np.uint64(0)                 # depth 0: every row (the padding never meets a state bit)
    size = marks[:k + 1]
    size[0] = n
    digits = marks[k + 1:2 * k + 2]
    digits[:] = 0
    total = 0.0
    d = 0                                        # parents fixed so far: level[d] holds their rows
    while True:
        if d < k:
            if digits[d] == arities[parents[d]]:    # every state of parent d done: back up
                if d == 0:
                    break
                digits[d] = 0
                d -= 1
                digits[d] += 1
                continue
            size[d + 1] = _and_into(level[d + 1], level[d], bits[off[parents[d]] + digits[d]])
            if size[d + 1] == 0:                     # no row: nothing below adds to the score
                digits[d] += 1
            else:
                d += 1
            continue
        rows = level[k]
        nj = size[k]
        cell = 0.0
        rest = nj
        for x in range(r):
            c = rest if x == r - 1 else _and_count(rows, bits[cb + x])
            rest -= c
            if c > 0:
                if bdeu:
                    cell += _lgamma_memo(memo_a, a, c) - lga
                else:
                    cell += logfact[c]
        if nj == 0:                              # no rows at all (k = 0)
            pass
        elif bdeu:
            total += lgaj - _lgamma_memo(memo_aj, aj, nj) + cell
        else:
            total += logfact[r - 1] - logfact[r - 1 + nj] + cell
        if k == 0:
            break
        d -= 1
        digits[d] += 1
    return total


#: the memo of K2 (none: K2 reads its log-factorials from a table)
_NO_MEMO = (np.empty(0, dtype=np.int64), np.empty((1, 0)))

#: a thread's BDeu lgamma memo: rows for this many values of ``x`` (``a = ess / x``), each
#: holding ``lgamma(a + c)`` for the counts ``c`` below its length
_MEMO_SLOTS = 64
_MEMO_LONG = 1024


@numba.njit(cache=True, nogil=True)
def _memo_row(keys, vals, x):
    """The row of the lgamma memo ``vals`` for ``a = ess / x`` (``x`` = ``q r`` for the
    cells of a BDeu family, ``q`` for its configurations: families of the same ``x``
    share ``a``, so their values), found or claimed in the open-addressing table
    ``keys`` (-1: free).  A full table, or none (K2: ``keys`` empty), gives a fresh row."""
    n_slots = keys.shape[0]
    if n_slots == 0:
        return vals[0, :0]
    h = x % n_slots
    for _ in range(n_slots):
        k = keys[h]
        if k == x:
            return vals[h]
        if k < 0:
            keys[h] = x
            return vals[h]
        h = h + 1 if h + 1 < n_slots else 0
    return np.full(vals.shape[1], np.nan)


@intrinsic
def _address(typingctx, addr):
    """The memory at the address ``addr`` (an integer) as a ``void *`` for :func:`numba.carray`."""
    if not isinstance(addr, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.voidptr))
    return types.voidptr(addr), codegen


# The family-score context: what one call of :func:`_score_family_ctx` reads, as one int64
# array passed by its address (a numba call costs about 0.1 us per array argument and
# 0.05 us more for an array than for an integer: as much as counting a small family on
# 1,000 rows).  The slots hold the addresses and shapes of the scorer's arrays, which the
# scorer keeps alive with the context (:meth:`LocalScore._context`), ``ess`` (its float64
# bits) and a workspace of the calling thread.
_CX_UCOLS, _CX_W, _CX_ND = 0, 1, 2             # distinct rows (p, nd) int32, their weights (nd,) int64
_CX_COLS, _CX_N = 3, 4                          # every row (p, n) int32
_CX_BITS, _CX_NS, _CX_NW, _CX_OFF = 5, 6, 7, 8  # bit columns (ns, nw) uint64, their offsets (p + 1,)
_CX_P, _CX_ARITIES = 9, 10                      # columns, arities (p,) int64
_CX_LOGFACT, _CX_NLF = 11, 12                   # log-factorials (nlf,) float64
_CX_KEYS, _CX_VALS, _CX_SLOTS, _CX_LONG = 13, 14, 15, 16   # lgamma memo keys (slots,), values (slots, long)
_CX_BDEU, _CX_ESS = 17, 18
_CX_LEVEL = 19                                  # workspace: (_CX_MOST + 1, nw) uint64 of _score_bits_in
_CX_PARENTS = 20                                # workspace: the sorted parents, then the marks of _score_bits_in
_CX_MOST = 3                                    # parents of a family scored through the context
_CX_SIZE = _CX_PARENTS + 3 * _CX_MOST + 2


@numba.njit(cache=True, nogil=True)
def _context_arrays(ctx):
    """The data arrays of a family-score context (the slots above)."""
    p = ctx[_CX_P]
    ucols = numba.carray(_address(ctx[_CX_UCOLS]), (p, ctx[_CX_ND]), np.int32)
    w = numba.carray(_address(ctx[_CX_W]), ctx[_CX_ND], np.int64)
    cols = numba.carray(_address(ctx[_CX_COLS]), (p, ctx[_CX_N]), np.int32)
    bits = numba.carray(_address(ctx[_CX_BITS]), (ctx[_CX_NS], ctx[_CX_NW]), np.uint64)
    off = numba.carray(_address(ctx[_CX_OFF]), p + 1, np.int64)
    arities = numba.carray(_address(ctx[_CX_ARITIES]), p, np.int64)
    logfact = numba.carray(_address(ctx[_CX_LOGFACT]), ctx[_CX_NLF], np.float64)
    keys = numba.carray(_address(ctx[_CX_KEYS]), ctx[_CX_SLOTS], np.int64)
    vals = numba.carray(_address(ctx[_CX_VALS]), (max(ctx[_CX_SLOTS], 1), ctx[_CX_LONG]), np.float64)
    return ucols, w, cols, bits, off, arities, logfact, keys, vals


@numba.njit(cache=True, nogil=True)
def _score_family_ctx(at, child, k, p0, p1, p2):
    """:func:`_score_family_rows` of ``child`` given ``k <= 3`` parents ``p0``, ``p1``,
    ``p2`` (the first ``k``, in any order: no array to build per call), the data, bit
    columns, BDeu lgamma memo and workspace from the context at the address ``at`` (the
    slots above).  Counted on the bit columns when :func:`_use_bits` says so, the
    lgamma values kept across calls (:func:`_memo_row`): the same terms, so the same
    score.  NaN when the family is refused (a position out of range, the child among its
    parents, a repeated parent, more than 3 parents): the caller's checks then say why."""
    ctx = numba.carray(_address(at), _CX_SIZE, np.int64)
    ucols, w, cols, bits, off, arities, logfact, keys, vals = _context_arrays(ctx)
    p = arities.shape[0]
    if not (0 <= child < p and 0 <= k <= _CX_MOST):
        return np.nan
    parents = ctx[_CX_PARENTS:_CX_PARENTS + k]
    q = 1
    for j in range(k):      # insertion sort: a few members
        u = p0 if j == 0 else (p1 if j == 1 else p2)
        if not 0 <= u < p or u == child:
            return np.nan
        h = j
        while h > 0 and parents[h - 1] > u:
            parents[h] = parents[h - 1]
            h -= 1
        parents[h] = u
        q *= arities[u]
    for j in range(1, k):
        if parents[j] == parents[j - 1]:
            return np.nan
    bdeu = ctx[_CX_BDEU] != 0
    ess = ctx[_CX_ESS:_CX_ESS + 1].view(np.float64)[0]
    r = arities[child]
    if not _dense(q, r, cols.shape[1]):
        return _score_family(cols, child, parents, arities, bdeu, ess, logfact)
    empty = parents[:0]             # the rows' workspace: allocated when they are counted
    level = numba.carray(_address(ctx[_CX_LEVEL]), (_CX_MOST + 1, bits.shape[1]), np.uint64)
    marks = ctx[_CX_PARENTS + _CX_MOST:_CX_SIZE]
    return _score_dense_family(ucols, w, bits, off, cols.shape[1], child, parents, q, arities, bdeu, ess,
                               logfact, keys, vals, (empty, empty, level, marks))


@numba.njit(cache=True, nogil=True, inline="always")
def _score_dense_family(ucols, w, bits, off, n, child, parents, q, arities, bdeu, ess, logfact, keys, vals, ws):
    """A dense family's score (``q`` parent configurations): counted on the bit columns
    when :func:`_use_bits` says so, else over the distinct rows; BDeu's lgamma values
    from the memo ``keys``, ``vals``.  The workspace ``ws`` = ``(base, counts, level,
    marks)``: those of :func:`_score_dense_rows` and of :func:`_score_bits_in`, each
    allocated here when too small.  Inlined into its callers (numba IR): as a call, its
    arrays cost about 0.1 us per family, as much as counting one on 1,000 rows."""
    base, counts, level, marks = ws
    r = arities[child]
    memo_a = _memo_row(keys, vals, q * r)
    memo_aj = _memo_row(keys, vals, q)
    if _use_bits(bits, ucols.shape[1], child, parents, arities):
        k = parents.shape[0]
        if level.shape[0] < k + 1 or level.shape[1] < bits.shape[1]:
            level = np.empty((k + 1, bits.shape[1]), dtype=np.uint64)
        if marks.shape[0] < 2 * k + 2:
            marks = np.empty(2 * k + 2, dtype=np.int64)
        return _score_bits_in(bits, off, n, child, parents, arities, bdeu, ess, logfact, memo_a, memo_aj, level,
                              marks)
    if base.shape[0] < ucols.shape[1]:
        base = np.empty(ucols.shape[1], dtype=np.int64)
    if counts.shape[0] < 4 * q * r:
        counts = np.zeros(4 * q * r, dtype=np.int64)
    return _score_dense_rows(ucols, w, child, parents, arities, bdeu, ess, logfact, q, base, counts, memo_a, memo_aj)


@numba.njit(cache=True, nogil=True)
def _score_batch_rows(ucols, w, cols, bits, off, child, parent_sets, sizes, arities, bdeu, ess, logfact, keys,
                      vals):
    """:func:`_score_family_ctx` of every parent set ``parent_sets[i, :sizes[i]]``, the
    dense tables counted in one workspace (the same kernels, so the same floats)."""
    m = parent_sets.shape[0]
    out = np.empty(m, dtype=np.float64)
    r = arities[child]
    n = cols.shape[1]
    qs = np.empty(m, dtype=np.int64)
    most = 0
    for i in range(m):
        q = 1
        for j in range(sizes[i]):
            q *= arities[parent_sets[i, j]]
        qs[i] = q
        if _dense(q, r, n):
            most = max(most, q * r)
    k = parent_sets.shape[1]
    ws = (np.empty(ucols.shape[1], dtype=np.int64), np.zeros(4 * most, dtype=np.int64),
          np.empty((k + 1, bits.shape[1]), dtype=np.uint64), np.empty(2 * k + 2, dtype=np.int64))
    for i in range(m):
        ps = parent_sets[i, :sizes[i]]
        if not _dense(qs[i], r, n):
            out[i] = _score_family(cols, child, ps, arities, bdeu, ess, logfact)
            continue
        out[i] = _score_dense_family(ucols, w, bits, off, n, child, ps, qs[i], arities, bdeu, ess, logfact,
                                     keys, vals, ws)
    return out


@numba.njit(cache=True, nogil=True)
def _score_batch_flat(ucols, w, cols, bits, off, child, flat, sizes, arities, bdeu, ess, logfact, keys, vals, out):
    """:func:`_score_batch_rows` of the parent sets laid end to end in ``flat`` (set ``i``
    has ``sizes[i]`` members, in any order) into ``out``: each set sorted first.  Returns
    -1, or the first set that holds ``child`` or a repeated member (nothing scored)."""
    m = sizes.shape[0]
    width = max(1, sizes.max())
    arr = np.zeros((m, width), dtype=np.int64)
    at = 0
    for i in range(m):
        row = arr[i]
        for j in range(sizes[i]):      # insertion sort: a few members
            u = flat[at + j]
            h = j
            while h > 0 and row[h - 1] > u:
                row[h] = row[h - 1]
                h -= 1
            row[h] = u
        for j in range(sizes[i]):
            if row[j] == child or (j > 0 and row[j] == row[j - 1]):
                return i
        at += sizes[i]
    out[:] = _score_batch_rows(ucols, w, cols, bits, off, child, arr, sizes, arities, bdeu, ess, logfact, keys, vals)
    return -1


@numba.njit(cache=True, nogil=True)
def _score_additions(ucols, w, cols, child, pa, added, arities, bdeu, ess, logfact):
    """Scores of the parent sets ``pa + {u}`` of ``child`` for every ``u`` of ``added``
    (``pa`` sorted, no ``u`` in it): the cells of ``pa`` and the child are one base key
    per distinct row, computed once, and each candidate is one weighted pass adding
    ``c_u`` as the slowest digit."""
    m = added.shape[0]
    out = np.empty(m, dtype=np.float64)
    r = arities[child]
    base = np.empty(ucols.shape[1], dtype=np.int64)
    q_pa = _family_base(ucols, child, pa, arities, base)
    n = cols.shape[1]
    # the candidates of one arity share q, so their lgamma memo: one per distinct arity
    slot = np.full(arities.max() + 1, -1, dtype=np.int64)
    n_slots = 0
    for i in range(m):
        if slot[arities[added[i]]] < 0:
            slot[arities[added[i]]] = n_slots
            n_slots += 1
    memo = np.full((n_slots, 2, _MEMO if bdeu else 0), np.nan)
    most = 0       # one count table for every candidate: the scoring leaves it zero
    for i in range(m):
        if _dense(q_pa * arities[added[i]], r, n):
            most = max(most, 4 * q_pa * arities[added[i]] * r)
    table = np.zeros(most, dtype=np.int64)
    for i in range(m):
        u = added[i]
        a_u = arities[u]
        pos = 0
        q_hi = 1
        while pos < pa.shape[0] and pa[pos] < u:
            q_hi *= arities[pa[pos]]
            pos += 1
        if _dense(q_pa * a_u, r, n):
            counts = table[:4 * q_pa * a_u * r]
            _count_cells(base, ucols[u], q_pa * r, w, counts, q_pa * a_u * r)
            ma = memo[slot[a_u]]
            out[i] = _score_split(counts, q_hi, a_u, q_pa // q_hi, r, bdeu, ess, logfact, ma[0], ma[1])
        else:
            ps = np.empty(pa.shape[0] + 1, dtype=np.int64)
            ps[:pos] = pa[:pos]
            ps[pos] = u
            ps[pos + 1:] = pa[pos:]
            out[i] = _score_family(cols, child, ps, arities, bdeu, ess, logfact)
    return out


@numba.njit(cache=True, nogil=True)
def _score_pairs(ucols, w, arities, todo, bdeu, ess, logfact, out):
    """``out[u, v]`` = score of ``v`` given the one parent ``u`` for every ``todo[u, v]``:
    the table of a pair ``u < v`` is counted once (cell ``c_u a_v + c_v``) and scored
    both ways (child ``v``: configuration ``c_u`` at ``c_u a_v``; child ``u``:
    configuration ``c_v`` at the cells ``c_v + c_u a_v``)."""
    p = ucols.shape[0]
    # lgamma memos shared by the pairs of the same arities while there are few: the cells
    # by (a_u, a_v), the configurations by the parent's arity (else fresh for each pair)
    amax = arities.max()
    share = bdeu and amax <= 16
    na = amax + 1 if share else 2
    cells = np.full((na, na, _MEMO if bdeu else 0), np.nan)
    configs = np.full((na, _MEMO if bdeu else 0), np.nan)
    table = np.zeros(4 * amax * amax, dtype=np.int64)     # zero again after each pair
    flipped = np.zeros(4 * amax * amax, dtype=np.int64)
    for u in range(p):
        for v in range(u + 1, p):
            if not (todo[u, v] or todo[v, u]):
                continue
            au = arities[u]
            av = arities[v]
            Z = au * av
            counts = table[:4 * Z]
            _count_cells(ucols[v], ucols[u], av, w, counts, Z)
            if share:
                cell_memo, memo_u, memo_v = cells[min(au, av), max(au, av)], configs[av], configs[au]
            else:
                cells[:] = np.nan
                configs[:] = np.nan
                cell_memo, memo_u, memo_v = cells[0, 0], configs[0], configs[1]
            if todo[v, u]:   # child u, parent v: configuration c_v, child state c_u, transposed
                _merge_tables(counts, Z)
                flip = flipped[:4 * Z]
                for cu in range(au):
                    for cv in range(av):
                        flip[cv * au + cu] = counts[cu * av + cv]
                out[v, u] = _score_counts(flip, av, au, bdeu, ess, logfact, cell_memo, memo_u)
            if todo[u, v]:
                out[u, v] = _score_counts(counts, au, av, bdeu, ess, logfact, cell_memo, memo_v)
            else:           # merged above, not read: cleared for the next pair
                counts[:Z] = 0


@numba.njit(cache=True, nogil=True, _nrt=False)
def _keys_of(cols, arities, elems, s, out):
    n = cols.shape[1]
    for t in range(n):
        out[t] = 0
    for i in range(s):
        u = elems[i]
        a = arities[u]
        c = cols[u]
        for t in range(n):
            out[t] = out[t] * a + c[t]


@numba.njit(cache=True, nogil=True)
def _score_family(cols, child, parents, arities, bdeu, ess, logfact):
    r = arities[child]
    q = 1
    for p in parents:
        q *= arities[p]
    n = cols.shape[1]
    if q * r <= max(_DENSE_LIMIT, 4 * n):
        # dense table: parent-configuration key per row built column by column
        keys = np.empty(n, dtype=np.int64)
        _keys_of(cols, arities, parents, parents.shape[0], keys)
        counts = np.zeros(4 * q * r, dtype=np.int64)
        return _score_from_keys(keys, cols[child], r, q, bdeu, ess, logfact, counts)
    # sparse: sort the keys and walk the runs
    return _score_sorted_keys(np.sort(_keys(cols, child, parents, arities)), n, r, q, bdeu, ess, logfact)


@numba.njit(cache=True, nogil=True)
def _score_sorted_keys(keys, n, r, q, bdeu, ess, logfact):
    """Family score from the sorted keys ``keys[:n]`` (``configuration * r + child state``
    of each row; ``q`` parent configurations): one walk over the runs."""
    a = ess / (q * r)
    aj = ess / q
    lga = math.lgamma(a) if bdeu else 0.0
    total = 0.0
    t = 0
    while t < n:
        cfg = keys[t] // r
        nj = 0
        cell = 0.0
        while t < n and keys[t] // r == cfg:
            k0 = keys[t]
            c = 0
            while t < n and keys[t] == k0:
                c += 1
                t += 1
            nj += c
            if bdeu:
                cell += math.lgamma(a + c) - lga
            else:
                cell += logfact[c]
        total += _config_terms(nj, cell, aj, a, bdeu, logfact, r)
    return total


@numba.njit(cache=True, nogil=True)
def _score_batch(cols, child, parent_sets, sizes, arities, bdeu, ess, logfact):
    m = parent_sets.shape[0]
    out = np.empty(m, dtype=np.float64)
    for i in range(m):
        out[i] = _score_family(cols, child, parent_sets[i, :sizes[i]], arities, bdeu, ess, logfact)
    return out


@numba.njit(cache=True, nogil=True)
def _dense_counts(cols, child, parents, arities, q):
    r = arities[child]
    n = cols.shape[1]
    counts = np.zeros((q, r), dtype=np.int64)
    ccol = cols[child]
    for t in range(n):
        key = 0
        for p in parents:
            key = key * arities[p] + cols[p, t]
        counts[key, ccol[t]] += 1
    return counts


#: below this many rows the data are counted as they are (finding the distinct rows
#: would cost more than it saves)
_DISTINCT_MIN_ROWS = 4096


def _distinct_rows(cols: np.ndarray, arities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ucols, w)``: the distinct rows of the columns ``cols`` (p, n) and how often each
    occurs, in the order of their mixed-radix codes.  A family's counts over them,
    each row weighed by ``w``, are its counts over the data, so every score is the
    same; sampled networks repeat rows (10,000 ALARM rows hold about 6,000 distinct
    ones, 100,000 about 40,000).  The row code is renumbered densely (``np.unique``)
    whenever another column could overflow it.  The data are kept as they are (weights
    1) when they are small or when fewer than a quarter of the rows repeat."""
    p, n = cols.shape
    keep = (cols, np.ones(n, dtype=np.int64))
    if n < _DISTINCT_MIN_ROWS:
        return keep
    key = np.zeros(n, dtype=np.int64)
    bound = 1
    for c in range(p):
        a = int(arities[c])
        if bound * a >= 1 << 62:
            key = np.unique(key, return_inverse=True)[1].astype(np.int64).ravel()
            bound = int(key.max()) + 1
        key = key * a + cols[c]
        bound *= a
    _, first, count = np.unique(key, return_index=True, return_counts=True)
    if first.size > 0.75 * n:
        return keep
    return np.ascontiguousarray(cols[:, first]), count.astype(np.int64)


def family_counts(data: DiscreteData | pd.DataFrame, child: str | int,
                  parents: Sequence[str | int] = ()) -> np.ndarray:
    """Contingency table ``N[j, k]`` of a family.

    Rows enumerate parent configurations in mixed radix over ``parents`` in the
    given order (the last parent varies fastest); columns are the child's states.
    With missing cells (``data.missing``) the family is counted over the rows where
    the child and all its parents are observed (available cases).

    Raises
    ------
    MemoryBudgetError
        If ``q * r`` exceeds the table budget (see ``bnexplore.data.set_table_budget``).

    Examples
    --------
    >>> import pandas as pd
    >>> from bnexplore.scores import family_counts
    >>> df = pd.DataFrame({"a": ["x", "y", "y"], "b": ["u", "u", "v"]})
    >>> family_counts(df, "b", ["a"]).tolist()
    [[1, 0], [1, 1]]
    """
    data = as_discrete(data, missing="keep")
    c = data.index(child)
    ps = np.array(data.indices(parents), dtype=np.int64)
    check_table_size([data.arities[p] for p in ps] + [data.arities[c]],
                     [data.names[p] for p in ps] + [data.names[c]], what="count table")
    q = int(np.prod(data.arities[ps])) if ps.size else 1
    columns = data.columns
    if data.missing is not None:     # available cases: the rows where the family is observed
        columns = np.ascontiguousarray(columns[:, data.observed_rows([c, *ps.tolist()])])
    return _dense_counts(columns, c, ps, data.arities, q)


def standard_parameters(counts: np.ndarray, prior: str = "K2", ess: float = 1.0) -> np.ndarray:
    """CPT from a (q, r) count table: the standard parametrisation (Dash & Cooper Eq. 3).

    ``theta_jk = (alpha_jk + N_jk) / (alpha_j + N_j)``, the posterior mean under the
    Dirichlet prior of the score: ``alpha_jk = 1`` (K2) or ``ess / (q r)`` (BDeu).
    ``prior="mle"`` gives relative frequencies, with uniform rows for configurations
    never observed.

    Examples
    --------
    >>> import numpy as np
    >>> standard_parameters(np.array([[3, 1], [0, 0]])).round(3).tolist()
    [[0.667, 0.333], [0.5, 0.5]]
    >>> standard_parameters(np.array([[3, 1]]), prior="mle").tolist()
    [[0.75, 0.25]]
    """
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2:
        raise ValueError(f"counts must be a (q, r) table, got shape {counts.shape}")
    q, r = counts.shape
    tot = counts.sum(axis=1, keepdims=True)
    if prior == "mle":
        return np.where(tot > 0, counts / np.where(tot > 0, tot, 1.0), 1.0 / r)
    if prior == "K2":
        a = 1.0
    elif prior == "BDeu":
        a = float(ess) / (q * r)
    else:
        raise ValueError(f"prior must be 'K2', 'BDeu' or 'mle', got {prior!r}")
    return (counts + a) / (tot + r * a)


def _check_prior(prior: str, ess: float) -> None:
    """The Dirichlet prior of a score: K2 or BDeu with a positive equivalent sample size."""
    from ._validation import check_prior_ess   # the one set of checks (bnexplore._validation)
    check_prior_ess(prior, ess, PRIORS)


def _addition_keys(c: int, pa: tuple[int, ...], added: list[int]) -> list[tuple[int, tuple[int, ...]]]:
    """The cache keys ``(c, sorted(pa + (u,)))`` of the families ``pa + {u}`` for every ``u``
    of ``added`` (``pa`` sorted, no ``u`` in it).  When ``added`` is increasing (the
    searches' case, hundreds of candidates at every step on wide data) it is cut where
    the members of ``pa`` fall, and each piece's ``u`` goes between the same members:
    no sort per family."""
    if not pa:
        return [(c, (u,)) for u in added]
    if added != sorted(added):
        return [(c, tuple(sorted(pa + (u,)))) for u in added]
    cuts = [0, *(bisect.bisect_left(added, x) for x in pa), len(added)]
    return [(c, head + (u,) + tail) for i in range(len(pa) + 1)
            for head, tail in ((pa[:i], pa[i:]),) for u in added[cuts[i]:cuts[i + 1]]]


class LocalScore:
    """Cached decomposable family scores over a discrete data set.

    Parameters
    ----------
    data : DataFrame or DiscreteData
        Discrete data (see :class:`bnexplore.data.DiscreteData` for what is accepted).
    prior : {"K2", "BDeu"}, default "K2"
        Parameter prior: K2 (all Dirichlet hyperparameters 1) or BDeu with
        equivalent sample size ``ess``.
    ess : float, default 1.0
        Equivalent sample size of the BDeu prior (ignored by K2).
    cache : bool
        Keep every computed family score (keyed by child and sorted parent set).
    missing : {"raise", "drop", "keep"}
        Missing cells: refused (default), incomplete rows dropped with a warning, or
        kept (see Notes).
    candidates : mapping of column name -> list of names, optional
        With ``missing="keep"``: the candidate parents of each child (default: every
        other column).  They fix the rows the child's parent sets are compared on.

    Notes
    -----
    **What a score compares with missing values** (``missing="keep"``): every parent
    set of a child is scored on the same rows, those where the child and all its
    candidate parents are observed (:meth:`rows`).  Two parent sets of one child are
    thus compared on one data set, and a set can never win because its own members
    have more missing rows (available-case counting per family would reward that:
    fewer rows give a larger log marginal likelihood).  Scores of different children
    may use different rows, so a sum of family scores is a sum of per-child terms.
    A parent outside the child's candidates is refused.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(1000, random_state=0)
    >>> ls = bx.scores.LocalScore(df, prior="BDeu", ess=1.0)
    >>> s = ls.score("dysp", ["bronc", "either"])
    >>> bool(s > ls.score("dysp", []))  # the true parents explain dysp far better
    True
    """

    def __init__(self, data: DiscreteData | pd.DataFrame, prior: str = "K2", ess: float = 1.0,
                 cache: bool = True, missing: str = "raise",
                 candidates: Mapping[str, Sequence[str]] | None = None):
        _check_prior(prior, ess)
        self.data = as_discrete(data, missing=missing)
        # missing values: each child's candidate parents (a bool mask per child) and,
        # on first use, its columns restricted to the rows it is scored on
        self._pool: dict[int, np.ndarray] = {}
        self._child_cols: dict[int, np.ndarray] = {}
        if candidates is not None:
            for child, ps in candidates.items():
                c = self.data.index(child)
                mask = np.zeros(self.data.n_cols, dtype=bool)
                mask[self.data.indices(ps)] = True
                if mask[c]:
                    raise ValueError(f"{self.data.names[c]!r} is among its own candidate parents")
                self._pool[c] = mask
        self.prior = prior
        self.ess = float(ess)
        self._bdeu = prior == "BDeu"
        self._cols = self.data.columns
        self._arities = self.data.arities.astype(np.int64)
        n = self.data.n_rows
        self._logfact = gammaln(np.arange(n + int(self._arities.max()) + 2) + 1.0)
        # up to this many parents no configuration key can overflow (size * max arity < 2^62)
        lg = math.log2(max(int(self._arities.max()), 1))
        self._safe_parents = int(61.5 / lg) - 1 if lg > 0 else 1 << 62
        self.use_cache = cache
        self._cache: dict[tuple[int, tuple[int, ...]], float] = {}
        self._distinct: tuple[np.ndarray, np.ndarray] | None = None
        self._bits: tuple[np.ndarray, np.ndarray] | None = None
        self._local = threading.local()     # each thread's BDeu lgamma memo and kernel context
        # families of up to this many parents, named in a list or tuple, take score()'s
        # direct path to the kernel (:func:`_score_family_ctx`); -1: none (missing values,
        # or a subclass with a family score of its own)
        own = type(self)._computed is LocalScore._computed
        self._direct_parents = min(_CX_MOST, self._safe_parents) if own and self.data.missing is None else -1

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_local"]                 # thread-local: cannot be pickled or deep-copied
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._local = threading.local()

    def _memo(self) -> tuple[np.ndarray, np.ndarray]:
        """This thread's BDeu lgamma memo ``(keys, values)`` for ``ess`` (:func:`_memo_row`):
        ``lgamma(ess / x + c)`` computed once per ``x`` and count, not once per family;
        one per thread, so the kernels never share a row being filled.  Empty for K2."""
        if not self._bdeu:
            return _NO_MEMO
        memo = getattr(self._local, "memo", None)
        if memo is None or memo[0] != self.ess:
            memo = self._local.memo = (self.ess, np.full(_MEMO_SLOTS, -1, dtype=np.int64),
                                       np.full((_MEMO_SLOTS, min(_MEMO_LONG, self.data.n_rows + 1)), np.nan))
        return memo[1], memo[2]

    def _context(self) -> int:
        """The address of this thread's context of :func:`_score_family_ctx` (complete
        data): the addresses and shapes of the distinct rows, the columns, the bit
        columns, the arities, the log-factorials, this thread's lgamma memo for ``ess``
        and a workspace.  The thread's record ``(ess, address, context, arrays)`` holds
        the context and the arrays, so they live as long as the address is used."""
        rec = getattr(self._local, "ctx", None)
        if rec is not None and rec[0] == self.ess:
            return rec[1]
        ucols, w = self._rows()
        bits, off = self._bit_columns()
        keys, vals = self._memo()
        level = np.empty((_CX_MOST + 1, bits.shape[1]), dtype=np.uint64)
        arrays = (ucols, w, self._cols, bits, off, self._arities, self._logfact, keys, vals, level)
        slots = (_CX_UCOLS, _CX_W, _CX_COLS, _CX_BITS, _CX_OFF, _CX_ARITIES, _CX_LOGFACT, _CX_KEYS, _CX_VALS,
                 _CX_LEVEL)
        want = (np.int32, np.int64, np.int32, np.uint64, np.int64, np.int64, np.float64, np.int64, np.float64,
                np.uint64)
        ctx = np.zeros(_CX_SIZE, dtype=np.int64)
        for slot, a, dt in zip(slots, arrays, want):
            if a.dtype != dt or not a.flags.c_contiguous:     # the kernel reads them as such
                raise TypeError(f"internal: a {a.dtype} array where the kernel reads {np.dtype(dt)} in C order")
            ctx[slot] = a.ctypes.data
        ctx[_CX_ND] = ucols.shape[1]
        ctx[_CX_N] = self._cols.shape[1]
        ctx[_CX_NS], ctx[_CX_NW] = bits.shape
        ctx[_CX_P] = self._cols.shape[0]
        ctx[_CX_NLF] = self._logfact.shape[0]
        ctx[_CX_SLOTS] = keys.shape[0]
        ctx[_CX_LONG] = vals.shape[1]
        ctx[_CX_BDEU] = self._bdeu
        ctx[_CX_ESS] = np.float64(self.ess).view(np.int64)
        self._local.ctx = (self.ess, ctx.ctypes.data, ctx, arrays)
        return ctx.ctypes.data

    # ------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return self.data.names

    def _candidate_mask(self, c: int) -> np.ndarray:
        mask = self._pool.get(c)
        if mask is None:
            mask = np.ones(self.data.n_cols, dtype=bool)
            mask[c] = False
        return mask

    def rows(self, node: str | int) -> np.ndarray:
        """Boolean mask of the rows the parent sets of ``node`` are scored on: those
        where the node and all its candidate parents are observed (every row when
        nothing is missing)."""
        c = self.data.index(node)
        return self.data.observed_rows([c, *np.flatnonzero(self._candidate_mask(c)).tolist()])

    def _cols_for(self, c: int, parents=()) -> np.ndarray:
        """The columns (p, rows) child ``c`` is scored on: every row when complete,
        else :meth:`rows` (its parents must be candidates)."""
        if self.data.missing is None:
            return self._cols
        if len(parents):
            ps = np.asarray(parents, dtype=np.int64).ravel()
            bad = ps[~self._candidate_mask(c)[ps]]
            if bad.size:
                raise ValueError(f"{self.data.names[int(bad[0])]!r} is not a candidate parent of "
                                 f"{self.data.names[c]!r}: with missing values a child's parent sets "
                                 f"are compared on the rows where its candidates are observed; pass "
                                 f"candidates= to widen them")
        cols = self._child_cols.get(c)
        if cols is None:
            cols = self._child_cols[c] = np.ascontiguousarray(self._cols[:, self.rows(c)])
        return cols

    def _rows(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct rows of the (complete) data and their multiplicities, what the
        dense kernels count over (:func:`_distinct_rows`, found on first use)."""
        if self._distinct is None:
            self._distinct = _distinct_rows(self._cols, self._arities)
        return self._distinct

    def _bit_columns(self) -> tuple[np.ndarray, np.ndarray]:
        """The one-hot bit columns of the (complete) data (:func:`bit_columns`), built on
        first use; none (an empty table) when they would take more than twice the memory
        of the columns and 16 MiB (many states)."""
        if self._bits is None:
            n_states = int(self._arities.sum())
            if n_states * -(-self.data.n_rows // 64) * 8 > 2 * self._cols.nbytes + (16 << 20):
                self._bits = (np.zeros((0, 1), dtype=np.uint64), np.zeros(self.n_nodes + 1, dtype=np.int64))
            else:
                self._bits = bit_columns(self._cols, self._arities)
        return self._bits

    @property
    def n_nodes(self) -> int:
        return self.data.n_cols

    def _key(self, node, parents) -> tuple[int, tuple[int, ...]]:
        names = self.data._index            # a column name -> its position (what index() does for str)
        c = names.get(node) if type(node) is str else None
        if c is None:
            c = self.data.index(node)
        return c, self._parent_key(c, parents)

    def _parent_key(self, c: int, parents) -> tuple[int, ...]:
        """The sorted positions of ``parents`` (names or indices) of the checked child ``c``."""
        names = self.data._index            # a column name -> its position
        if type(parents) is not tuple and type(parents) is not list:
            parents = list(parents)         # read twice below when not all names
        try:
            ps = tuple(sorted([names[p] for p in parents]))
        except (KeyError, TypeError):       # positions, labels or an unknown name: index() decides
            ps = tuple(sorted([self.data.index(p) for p in parents]))
        if c in ps:
            raise ValueError(f"{self.data.names[c]!r} cannot be its own parent")
        if len(ps) > 1 and len(set(ps)) != len(ps):
            raise ValueError(f"repeated parent in {list(parents)}")
        return ps

    def _parent_keys(self, c: int, parent_sets) -> list[tuple[int, ...]]:
        """:meth:`_parent_key` of every parent set: lists or tuples of names in one pass,
        anything else (or a failed check, for its message) set by set."""
        parent_sets = list(parent_sets)
        if all(type(ps) is list or type(ps) is tuple for ps in parent_sets):
            names = self.data._index
            try:
                sets = [tuple(sorted([names[p] for p in ps])) for ps in parent_sets]
            except (KeyError, TypeError):
                pass
            else:
                if not any(c in ps or (len(ps) > 1 and len(set(ps)) != len(ps)) for ps in sets):
                    return sets
        return [self._parent_key(c, ps) for ps in parent_sets]

    def _wide_keys(self, width: int) -> bool:
        """Whether ``width`` parents (and the child) of the largest arity could overflow
        an int64 configuration key (only then are parent sets checked one by one)."""
        return width > self._safe_parents

    def _check_keys(self, ps: tuple[int, ...]):
        # keys are int64 mixed-radix codes: refuse if they could overflow
        size = 1
        for p in ps:
            size *= int(self._arities[p])
        if size * int(self._arities.max()) >= 2**62:
            raise MemoryBudgetError(
                f"parent set {[self.data.names[p] for p in ps]} has {size:,} configurations, too many "
                f"to index: use fewer parents"
            )

    def score(self, node: str | int, parents: Iterable[str | int] = ()) -> float:
        """Natural-log family score of ``node`` given ``parents`` (names or indices)."""
        if not self.use_cache and (type(parents) is list or type(parents) is tuple) \
                and len(parents) <= self._direct_parents:
            # the direct path: names to positions, then the kernel, which sorts and checks
            # them (NaN: refused, and the general path below says why)
            k = len(parents)
            names = self.data._index
            try:
                c = names[node]
                u = names[parents[0]] if k > 0 else 0
                v = names[parents[1]] if k > 1 else 0
                x = names[parents[2]] if k > 2 else 0
            except (KeyError, TypeError):       # positions, labels or an unknown name
                pass
            else:
                rec = getattr(self._local, "ctx", None)
                at = rec[1] if rec is not None and rec[0] == self.ess else self._context()
                val = _score_family_ctx(at, c, k, u, v, x)
                if val == val:
                    return val
        key = self._key(node, parents)
        if self.use_cache:
            hit = self._cache.get(key)
            if hit is not None:
                return hit
        return self._computed(key)

    def _computed(self, key: tuple[int, tuple[int, ...]]) -> float:
        """The score of a checked family ``(child, sorted parents)`` not in the cache,
        computed (and cached when caching)."""
        c, ps = key
        if len(ps) > self._safe_parents:  # only then can a configuration key overflow
            self._check_keys(ps)
        if self.data.missing is None:
            k = len(ps)
            if k <= _CX_MOST:
                val = _score_family_ctx(self._context(), c, k, ps[0] if k > 0 else 0, ps[1] if k > 1 else 0,
                                        ps[2] if k > 2 else 0)
            else:       # the kernel of a batch, one family: the same kernels, so the same float
                val = float(_score_batch_rows(*self._rows(), self._cols, *self._bit_columns(), c,
                                              np.array([ps], dtype=np.int64), np.array([k], dtype=np.int64),
                                              self._arities, self._bdeu, self.ess, self._logfact, *self._memo())[0])
        else:
            val = _score_family(self._cols_for(c, ps), c, np.array(ps, dtype=np.int64), self._arities,
                                self._bdeu, self.ess, self._logfact)
        if self.use_cache:
            self._cache[key] = val
        return val

    def score_idx(self, c: int, ps: tuple[int, ...]) -> float:
        """Fast path for an integer node and a *sorted* tuple of integer parents.

        Only the cheap checks are made (on a cache miss: the node and the parents are
        column indices, the node is not among them); a cached family is returned at
        once.  Use :meth:`score` for names and unsorted or repeated parents.

        Raises
        ------
        IndexError
            If the node or a parent is not a column index ``0 .. n_nodes - 1``.
        ValueError
            If the node is among its parents.
        """
        key = (c, ps)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        p = self._cols.shape[0]
        if not (0 <= c < p and (not ps or (0 <= min(ps) and max(ps) < p))):
            raise ColumnIndexError(f"score_idx: node {c!r} or parents {ps!r} are not column indices 0 .. {p - 1}: "
                             f"use score() with column names")
        if c in ps:
            raise ValueError(f"score_idx: node {c} is among its own parents {ps}")
        return self._computed(key)

    def _score_sets_idx(self, c: int, sets: list[tuple[int, ...]]) -> list[float]:
        """:meth:`score_idx` of many *sorted* tuples of parents of one child, the families
        missing from the cache scored in one kernel call (the same kernel per family, so
        the same values).  Trusts its input: the searches build the sets from column
        indices.  A subclass with a family score of its own (an overridden
        :meth:`score_idx`) is asked family by family."""
        if type(self).score_idx is not LocalScore.score_idx:
            return [self.score_idx(c, ps) for ps in sets]
        cache = self._cache
        out = [cache.get((c, ps)) for ps in sets]
        todo = [i for i, val in enumerate(out) if val is None]
        if not todo:
            return out
        size = [len(sets[i]) for i in todo]
        width = max(1, max(size))
        if width > self._safe_parents:
            for i in todo:
                if len(sets[i]) > self._safe_parents:
                    self._check_keys(sets[i])
        pad = (0,) * width
        arr = np.array([sets[i] + pad[:width - m] for i, m in zip(todo, size)], dtype=np.int64)
        sizes = np.array(size, dtype=np.int64)
        # with missing values the parents are checked against the child's candidates
        members = () if self.data.missing is None else np.unique(arr[np.arange(width) < sizes[:, None]])
        vals = self._batch(c, members, arr, sizes).tolist()
        for row, i in enumerate(todo):
            out[i] = vals[row]
            if self.use_cache:
                cache[(c, sets[i])] = vals[row]
        return out

    def score_many(self, node: str | int, parent_sets: Sequence[Iterable[str | int]]) -> np.ndarray:
        """Scores of many parent sets of one node, computed in one kernel call.

        Returns an array aligned with ``parent_sets``. Cached sets are not recomputed.
        """
        c = self.data.index(node)
        if not self.use_cache and self.data.missing is None and type(self)._batch is LocalScore._batch:
            parent_sets = list(parent_sets)
            vals = self._score_many_flat(c, parent_sets)
            if vals is not None:
                return vals
        sets = self._parent_keys(c, parent_sets)
        if self.use_cache:
            get = self._cache.get
            hits = [get((c, ps)) for ps in sets]
            todo = [i for i, val in enumerate(hits) if val is None]
        else:
            hits, todo = None, range(len(sets))
        out = np.array(hits, dtype=np.float64) if hits is not None and not todo else np.empty(len(sets))
        if todo:
            mine = [sets[i] for i in todo]
            sizes = [len(ps) for ps in mine]
            width = max(1, max(sizes))
            if width > self._safe_parents:   # only then can a configuration key overflow
                for ps in mine:
                    if len(ps) > self._safe_parents:
                        self._check_keys(ps)
            pad = (0,) * width
            arr = np.array([ps + pad[len(ps):] for ps in mine], dtype=np.int64)
            members = () if self.data.missing is None else np.unique(
                [u for ps in mine for u in ps]).astype(np.int64)
            vals = self._batch(c, members, arr, np.array(sizes, dtype=np.int64))
            if hits is None:
                return vals
            for i, val in zip(todo, vals.tolist()):
                hits[i] = val
            self._cache.update(zip([(c, ps) for ps in mine], vals.tolist()))
            out = np.array(hits, dtype=np.float64)
        return out

    def _score_many_flat(self, c: int, parent_sets: list) -> np.ndarray | None:
        """Uncached :meth:`score_many` on complete data, the sets given as lists or tuples
        of names: their positions in one flat array, sorted and checked in the kernel
        (:func:`_score_batch_flat`); None where that does not apply (positions, labels,
        iterators, many parents), and the set-by-set path raises for a set it refuses."""
        if not all(type(ps) is list or type(ps) is tuple for ps in parent_sets):
            return None
        names = self.data._index
        try:
            flat = np.array([names[p] for ps in parent_sets for p in ps], dtype=np.int64)
        except (KeyError, TypeError):
            return None
        sizes = [len(ps) for ps in parent_sets]
        if not sizes or max(sizes) > self._safe_parents:
            return None
        out = np.empty(len(sizes))
        bad = _score_batch_flat(*self._rows(), self._cols, *self._bit_columns(), c, flat,
                                np.array(sizes, dtype=np.int64), self._arities, self._bdeu, self.ess, self._logfact,
                                *self._memo(), out)
        if bad >= 0:
            self._parent_key(c, parent_sets[bad])    # raises, naming the set
            return None
        return out

    def score_array(self, node: int, parent_array: np.ndarray, sizes: np.ndarray | None = None) -> np.ndarray:
        """Uncached batch scoring from an integer array of parent sets (rows; -1 or ``sizes`` pads).

        For callers that enumerate many parent sets as arrays (e.g. order averaging).

        Parameters
        ----------
        node : int
            Column index of the child.
        parent_array : array of int, shape (m, w)
            One parent set per row, column indices; without ``sizes``, entries < 0 are
            padding (the members first).
        sizes : array of int, shape (m,), optional
            Number of members of each row (its first ``sizes[i]`` entries).

        Raises
        ------
        IndexError
            If ``node`` or a member is not a column index ``0 .. n_nodes - 1``.
        ValueError
            On a bad shape, or ``sizes`` outside ``0 .. w``.
        """
        p = self._cols.shape[0]
        if isinstance(node, (bool, np.bool_)) or not isinstance(node, (int, np.integer)):
            raise TypeError(f"node must be a column index (int), got {node!r}: use score_many() with names")
        node = int(node)
        if not 0 <= node < p:
            raise ColumnIndexError(f"node {node} is not a column index 0 .. {p - 1}")
        arr = np.ascontiguousarray(parent_array, dtype=np.int64)
        if arr.ndim != 2:
            raise ValueError("parent_array must be 2-D (one parent set per row)")
        w = arr.shape[1]
        if sizes is None:
            member = arr >= 0
            sizes = member.sum(axis=1).astype(np.int64)
            if w > 1 and (member[:, 1:] > member[:, :-1]).any():
                raise ValueError("parent_array: the padding (-1) of a row must follow its members, or pass sizes")
        else:
            sizes = np.asarray(sizes, dtype=np.int64)
            if sizes.shape != (arr.shape[0],):
                raise ValueError(f"sizes must give one size per row of parent_array ({arr.shape[0]}), "
                                 f"got shape {sizes.shape}")
            if sizes.size and (sizes.min() < 0 or sizes.max() > w):
                raise ValueError(f"sizes must lie in 0 .. {w} (the width of parent_array)")
            member = np.arange(w)[None, :] < sizes[:, None]
            if (arr[member] < 0).any():
                raise ColumnIndexError("parent_array has a negative member within sizes: members are column indices")
        arr = np.where(member, arr, 0)
        if arr.size:
            if arr.max() >= p:
                raise ColumnIndexError(f"parent_array holds {int(arr.max())}, not a column index 0 .. {p - 1}")
            if ((arr == node) & member).any():
                raise ValueError(f"node {node} is among its own parents in parent_array")
            if self._wide_keys(w) and sizes.max() > 0:  # mixed-radix keys could overflow: check each row
                bits = (np.log2(self._arities)[arr] * member).sum(axis=1)
                if bits.max() + np.log2(self._arities.max()) >= 62:
                    i = int(np.argmax(bits))
                    self._check_keys(tuple(int(u) for u in arr[i, :sizes[i]]))
        if w == 0:
            arr = np.zeros((arr.shape[0], 1), dtype=np.int64)
        members = () if self.data.missing is None else np.unique(arr[member])
        return self._batch(node, members, arr, sizes)

    def _batch(self, c: int, members, arr: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """Scores of the parent sets ``arr[i, :sizes[i]]`` of ``c`` in one kernel call:
        over the distinct rows when the data are complete, else over the child's rows."""
        if self.data.missing is None:
            return _score_batch_rows(*self._rows(), self._cols, *self._bit_columns(), c, arr, sizes, self._arities,
                                     self._bdeu, self.ess, self._logfact, *self._memo())
        return _score_batch(self._cols_for(c, members), c, arr, sizes, self._arities, self._bdeu, self.ess,
                            self._logfact)

    def _score_additions_idx(self, c: int, pa: tuple[int, ...], added: list[int]) -> np.ndarray:
        """Scores of ``pa + (u,)`` (sorted) for every ``u`` of ``added``: the searches'
        rescoring of every arc addition into ``c``, the families missing from the cache
        scored in one kernel call that computes the cells of ``pa`` once.  Complete data
        and this class's own family score only (else :meth:`_score_sets_idx`)."""
        keys = _addition_keys(c, pa, added)
        if (type(self).score_idx is not LocalScore.score_idx or self.data.missing is not None
                or len(pa) + 1 > self._safe_parents):
            return np.array(self._score_sets_idx(c, [ps for _, ps in keys]), dtype=np.float64)
        get = self._cache.get
        hits = [get(key) for key in keys]
        todo = [i for i, val in enumerate(hits) if val is None]
        if not todo:
            return np.array(hits, dtype=np.float64)
        us = added if len(todo) == len(keys) else [added[i] for i in todo]
        vals = _score_additions(*self._rows(), self._cols, c, np.array(pa, dtype=np.int64),
                                np.array(us, dtype=np.int64), self._arities, self._bdeu, self.ess,
                                self._logfact).tolist()
        if self.use_cache:
            self._cache.update(zip([keys[i] for i in todo], vals))
        for i, val in zip(todo, vals):
            hits[i] = val
        return np.array(hits, dtype=np.float64)

    def _score_pairs_idx(self, todo: np.ndarray) -> np.ndarray:
        """``S[u, v]`` = score of ``v`` given the one parent ``u`` for every ``todo[u, v]``
        (else -inf), the table of each pair counted once for both directions; cached
        families are not recounted.  Complete data and this class's own family score
        only (else family by family)."""
        p = self.n_nodes
        out = np.full((p, p), -np.inf)
        todo = todo & ~np.eye(p, dtype=bool)
        if type(self).score_idx is not LocalScore.score_idx or self.data.missing is not None:
            for u, v in zip(*np.nonzero(todo)):
                out[u, v] = self.score_idx(int(v), (int(u),))
            return out
        cache = self._cache
        need = todo.copy()
        if cache:   # the cached one-parent families among todo, looked up from the smaller side
            if len(cache) < int(todo.sum()):
                hits = [(ps[0], v, val) for (v, ps), val in cache.items() if len(ps) == 1 and todo[ps[0], v]]
            else:
                hits = [(u, v, cache.get((v, (u,)))) for u, v in zip(*(x.tolist() for x in np.nonzero(todo)))]
                hits = [h for h in hits if h[2] is not None]
            for u, v, val in hits:
                out[u, v] = val
                need[u, v] = False
        if need.any():
            fresh = np.full((p, p), -np.inf)
            _score_pairs(*self._rows(), self._arities, need, self._bdeu, self.ess, self._logfact, fresh)
            out[need] = fresh[need]
            if self.use_cache:
                us, vs = np.nonzero(need)
                cache.update(zip([(v, (u,)) for u, v in zip(us.tolist(), vs.tolist())], fresh[need].tolist()))
        return out

    def total(self, dag) -> float:
        """Score of a whole DAG (networkx.DiGraph over the data's column names): sum of family scores."""
        return float(sum(self.score(v, list(dag.predecessors(v))) for v in dag.nodes))

    def clear_cache(self) -> None:
        self._cache.clear()

    def __repr__(self) -> str:
        extra = f", ess={self.ess}" if self._bdeu else ""
        return f"LocalScore({self.data!r}, prior={self.prior!r}{extra}, cached={len(self._cache)})"


# --------------------------------------------------------------------------- all parent sets under an order
@renamed(k="max_parents")
def score_order_families(data: DiscreteData | pd.DataFrame, level: Sequence[int], max_parents: int,
                         prior: str = "K2", ess: float = 1.0) -> list[np.ndarray]:
    """Scores of every parent set of size <= ``max_parents`` of every node under a (partial) order.

    Node ``v`` may take parents among the nodes ``u`` with ``level[u] < level[v]``
    (a total order gives every node its own level).  The sets of ``v`` are its
    candidates (sorted by column index) taken by size, then in lexicographic order,
    as ``itertools.combinations`` lists them.  A parent set is counted once for every
    node it can be a parent set of: the rows of each configuration of its first one
    or two members are packed into short bitsets (with the BMI2 ``pext`` instruction
    where the CPU has it), and the sets that extend it are counted inside those packed
    rows only, one configuration at a time, with row bitsets throughout (so there is
    no table of parent configurations, however many states the parents have).  Under
    K2 a set's score is that of the set without its last member plus the change from
    the configurations the last member splits (BDeu terms depend on the number of
    parent configurations, so there every configuration is scored).  The work is
    spread over all numba threads.

    Parameters
    ----------
    data : DataFrame or DiscreteData
    level : sequence of int
        Level of each column (the position in a total order, or the block of a
        partial order).
    max_parents : int
        Largest parent-set size.
    prior, ess
        As in :class:`LocalScore`.

    Returns
    -------
    list of ndarray
        One array of scores per column, in the enumeration order described above.

    Examples
    --------
    >>> import itertools, numpy as np, bnexplore as bx
    >>> df = bx.networks.load("asia").sample(500, random_state=0)
    >>> level = list(range(df.shape[1]))            # the column order is a total order
    >>> scores = score_order_families(df, level, max_parents=2)
    >>> ls = LocalScore(df, cache=False)
    >>> last = df.shape[1] - 1
    >>> sets = [c for s in range(3) for c in itertools.combinations(range(last), s)]
    >>> bool(np.allclose(scores[last], [ls.score(last, list(c)) for c in sets]))
    True
    """
    flat, off = _score_order_flat(data, level, max_parents, prior, ess)
    return [flat[off[v]:off[v + 1]] for v in range(off.size - 1)]


def _score_order_flat(data: DiscreteData | pd.DataFrame, level: Sequence[int], k: int, prior: str = "K2",
                      ess: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`score_order_families` as one array and the offsets of each node's scores
    (the checks at the public edge; the engine is :mod:`bnexplore._order_scores`)."""
    _check_prior(prior, ess)
    data = as_discrete(data)
    p = data.n_cols
    level = np.asarray(level, dtype=np.int64)
    if level.shape != (p,):
        raise ValueError(f"level must give one level per column ({p}), got shape {level.shape}")
    k = int(k)
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    return order_family_scores(data, level, k, prior == "BDeu", float(ess))


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
