"""Counting inside packed parent configurations: the walks of order scoring.

:mod:`bnexplore._order_scores` packs the rows of each configuration ``g`` of the first
one or two members of a parent set into a short bitset (``comp``: one row per
child-value row, ``Wc`` words).  The kernels here score every set ``P + T`` that
extends those members, counting only inside the packed rows.

Family score (Cooper & Herskovits; Dash & Cooper Eq. 6).  The score of child ``v``
with parent set ``S`` is a sum over the configurations ``j`` of ``S`` seen in the data,

    score(v, S) = sum_j t(N_j, N_j1 .. N_jr),
    t = lgamma(a_j) - lgamma(a_j + N_j) + sum_x [lgamma(a_jx + N_jx) - lgamma(a_jx)]

with ``a_jx = 1`` (K2: ``t = log (r-1)! - log (r-1+N_j)! + sum_x log N_jx!``) or
``a_jx = ess / (q r)`` (BDeu).  A configuration of one row gives ``t = -log r`` under
both priors, so single-row configurations are only counted (``nsing``).  The counts are
popcounts: ``N_jx = |B_j & R_vx|`` with ``B_j`` the rows of the configuration and
``R_vx`` the rows where ``v = x``; the last state of ``v`` takes the rows left,
``N_jr = N_j - sum_{x<r} N_jx`` (so only ``r - 1`` *child-value rows* per node are kept).

Split differences (K2).  Adding a member ``x`` to ``S`` splits each configuration ``j``
into its parts ``j_1 .. j_rx`` (the states of ``x``); the K2 term has no ``q``, so

    score(v, S + x) = score(v, S) + sum_j [ sum_c t(j_c) - t(j) ]         (split difference)

and a configuration that ``x`` does not split changes nothing.  :func:`_config_subtree`
walks the configurations depth first and adds the differences (:func:`_k2_part` adds a
part's term, :func:`_k2_unterm` takes the split configuration's out,
:func:`_k2_binary_split` does both for a binary ``x``).  BDeu terms depend on ``q``
through ``a_jx``, so there every configuration of every set is scored in full
(:func:`_bdeu_config`).

Binary set walk (K2, every variable binary, a configuration of at most 64 rows).  A
configuration is one word; ``x`` splits it with one AND, and with the table

    tt[m, c] = log c! + log (m - c)! - log (m + 1)!     (K2 term of m rows, c in state 0)

a split changes the score of child ``v`` by ``tt[m0, c0] + tt[m1, c1] - tt[m, c]``, from
two popcounts per child (:func:`_split_list`).  :func:`_binary_subtree` walks the sets
below one pair configuration, :func:`_binary_whole` the sets below all of them at once.

Glossary
--------
p, vorder, nodepos
    Number of nodes; the nodes sorted by level; each node's position in ``vorder``.
child position i
    Index into ``vorder``; the children of a set are the positions ``i >= i0``.
node_i0, set_i0, i0
    First child position that may have a node (``node_i0[u]``), a listed set
    (``set_i0[j]``: the latest of its members') or the current set as a parent.
rowstart, child-value row d
    Row ``d`` of ``comp`` holds the rows where node ``vorder[i]`` takes state
    ``d - rowstart[i]`` (states ``0 .. r-2``); ``D = rowstart[p]``.
comp, compT, Wc
    The packed child-value rows of one configuration (``Wc`` uint64 words each) and,
    when ``Wc <= 8``, its word-major copy (``compT[w, d] = comp[d, w]``).
bb, cnt, cntd, celld
    One configuration bitset per depth; per child-value row counts (BDeu); per depth
    the K2 counts and per child the sum of ``log N_jx!`` (reused by the split below).
set list: set_last, set_s, set_par, subsz, nsing, acc, cst
    The sets of one work item in preorder (:func:`bnexplore._order_scores._subtree_sets`):
    last member, size, parent in the list, subtree size, single-row configurations,
    accumulated terms per (set, child position), BDeu constants per (set, child
    position): ``(a_jx, a_j, lgamma(a_jx), lgamma(a_j))``.
max_extra
    Most members a walk may add below its configuration's members (``k`` less them).
xs, ds, cid, lft, bcnt, src
    The depth-first stacks: next member to try, its state, the current set's index in
    the set list, rows of the configuration not yet split, its row count, the depth
    whose K2 counts it shares.
lb, lm, nl, tt
    Binary set walk: per depth the listed configurations (bitset, rows), how many,
    and the K2 term table above.
bundles
    The kernels take these arrays in named bundles (:data:`OrderTables`,
    :data:`SetList`, :data:`WalkStacks`, :data:`ConfigCounts`, :data:`PackedRows`,
    :data:`BinaryLists`, :data:`PairConfigs`, :data:`Placement`) and unpack them into
    the short names above at their top.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numba
import numpy as np

from ._bits import _popcount

__all__ = ["OrderTables", "SetList", "WalkStacks", "ConfigCounts", "PackedRows", "BinaryLists", "PairConfigs",
           "Placement"]

# The state of the kernels travels in named bundles of arrays (numba passes them as
# tuples; each kernel unpacks what it reads into the local names used above).

#: read-only tables of one order (:func:`bnexplore._order_scores._order_index`)
OrderTables = namedtuple("OrderTables", ["arities", "level", "vorder", "nodepos", "node_i0", "rowstart",
                                         "obase", "rk", "items"])
#: the sets of one work item in preorder and what is accumulated per (set, child position)
SetList = namedtuple("SetList", ["last", "size", "q", "i0", "parent", "subtree_size", "singles",
                                 "singles_total", "acc", "bdeu_consts"])
#: the depth-first stacks of the walks (one entry per depth)
WalkStacks = namedtuple("WalkStacks", ["next_member", "state", "set_index", "rows_left", "rows", "counts_from",
                                       "member", "first_child", "scores"])
#: per depth: the configuration's bitset; per child-value row counts (BDeu); K2 counts and cell sums
ConfigCounts = namedtuple("ConfigCounts", ["bitsets", "counts", "k2_counts", "k2_cells"])
#: the packed child-value rows of one configuration, their word-major copy and their width in words
PackedRows = namedtuple("PackedRows", ["rows", "rows_t", "n_words"])
#: the binary set walk's configuration lists per depth: bitsets, row counts, how many
BinaryLists = namedtuple("BinaryLists", ["bitsets", "rows", "count"])
#: the configurations of a pair walked at once by :func:`_binary_whole`: rows, packed rows (word-major)
PairConfigs = namedtuple("PairConfigs", ["rows", "rows_t"])
#: where the scores go: the next place of each (child position, size), and the output
Placement = namedtuple("Placement", ["next_place", "out"])


@numba.njit(cache=True, nogil=True)
def _ones(B, m):
    """B[:ceil(m/64)] = the bitset of rows 0 .. m-1."""
    full = m // 64
    for w in range(full):
        B[w] = ~np.uint64(0)
    if m % 64:
        B[full] = (np.uint64(1) << np.uint64(m % 64)) - np.uint64(1)


@numba.njit(cache=True, nogil=True)
def _count_rows(B, Wc, comp, compT, d0, D, cnt):
    """cnt[d] = number of rows of bitset ``B`` (``Wc`` words) in child-value row d of
    the packed rows ``comp`` (``compT`` its word-major copy when ``Wc <= 8``)."""
    if Wc <= 8:  # few words: all rows per word (contiguous, vectorises)
        for d in range(d0, D):
            cnt[d] = 0
        for w in range(Wc):
            x = B[w]
            row = compT[w]
            for d in range(d0, D):
                cnt[d] += _popcount(x & row[d])
        return
    x = B[:Wc]
    d = d0
    while d + 4 <= D:  # many words: vectorised reductions, four rows per pass
        r0 = comp[d, :Wc]
        r1 = comp[d + 1, :Wc]
        r2 = comp[d + 2, :Wc]
        r3 = comp[d + 3, :Wc]
        c0 = np.uint64(0)
        c1 = np.uint64(0)
        c2 = np.uint64(0)
        c3 = np.uint64(0)
        for w in range(Wc):
            xw = x[w]
            c0 += _popcount(xw & r0[w])
            c1 += _popcount(xw & r1[w])
            c2 += _popcount(xw & r2[w])
            c3 += _popcount(xw & r3[w])
        cnt[d] = c0
        cnt[d + 1] = c1
        cnt[d + 2] = c2
        cnt[d + 3] = c3
        d += 4
    while d < D:
        r0 = comp[d, :Wc]
        c0 = np.uint64(0)
        for w in range(Wc):
            c0 += _popcount(x[w] & r0[w])
        cnt[d] = c0
        d += 1


@numba.njit(cache=True, nogil=True, inline="always")
def _bdeu_config(tot, B, packed, i0, tables, cst, acc, cnt):
    """Add the BDeu term of one configuration (``tot`` rows, bitset ``B`` of ``Wc`` words
    over the packed rows ``comp`` / ``compT``) to ``acc[i]`` of every child
    ``vorder[i]``, ``i >= i0``; ``cst[i]`` = (a_ijk, a_ij, lgamma(a_ijk), lgamma(a_ij))."""
    comp, compT, Wc = packed
    arities, vorder, rowstart = tables.arities, tables.vorder, tables.rowstart
    p = vorder.shape[0]
    _count_rows(B, Wc, comp, compT, rowstart[i0], rowstart[p], cnt)
    for i in range(i0, p):
        r = arities[vorder[i]]
        rest = tot
        cell = 0.0
        base = rowstart[i]
        a = cst[i, 0]
        lga = cst[i, 2]
        for x in range(r - 1):
            c = np.int64(cnt[base + x])
            rest -= c
            if c > 0:
                cell += math.lgamma(a + c) - lga
        if rest > 0:
            cell += math.lgamma(a + rest) - lga
        acc[i] += cst[i, 3] - math.lgamma(cst[i, 1] + tot) + cell


@numba.njit(cache=True, nogil=True)
def _transpose_rows(comp, Wc, d0, D, compT):
    if Wc <= 8:
        for d in range(d0, D):
            for w in range(Wc):
                compT[w, d] = comp[d, w]


@numba.njit(cache=True, nogil=True, inline="always")
def _rows_in(bb, b, Wc, comp, compT, d):
    """Number of rows of bitset ``bb[b]`` (``Wc`` words) in packed row ``d`` (2-D arrays
    indexed in place: a row view would cost two atomic reference counts)."""
    c = np.uint64(0)
    if Wc <= 8:
        for w in range(Wc):
            c += _popcount(bb[b, w] & compT[w, d])
    else:
        for w in range(Wc):
            c += _popcount(bb[b, w] & comp[d, w])
    return np.int64(c)


@numba.njit(cache=True, nogil=True, inline="always")
def _k2_part(m, b, packed, i0, tables, logfact, counts, acc, j):
    """Add the K2 term of one configuration (``m`` rows, bitset ``bb[b]``) to ``acc[j, i]``
    of every child ``vorder[i]``, ``i >= i0``; keep its counts in ``cntd[b]`` (per
    child-value row) and the sum of log n_ijk! per child in ``celld[b]``, for the
    splits below it."""
    comp, compT, Wc = packed
    bb, cntd, celld = counts.bitsets, counts.k2_counts, counts.k2_cells
    arities, vorder, rowstart = tables.arities, tables.vorder, tables.rowstart
    p = vorder.shape[0]
    for i in range(i0, p):
        r = arities[vorder[i]]
        base = rowstart[i]
        rest = m
        s = 0.0
        for v in range(r - 1):
            c = _rows_in(bb, b, Wc, comp, compT, base + v)
            cntd[b, base + v] = c
            rest -= c
            s += logfact[c]
        s += logfact[rest]
        celld[b, i] = s
        acc[j, i] += logfact[r - 1] - logfact[r - 1 + m] + s


@numba.njit(cache=True, nogil=True, inline="always")
def _k2_unterm(m, i0, tables, logfact, celld, st, acc, j):
    """Take the K2 term of a configuration (``m`` rows, ``celld[st]`` from
    :func:`_k2_part`) out of ``acc[j, i]``, ``i >= i0``: the configuration is split."""
    arities, vorder = tables.arities, tables.vorder
    for i in range(i0, vorder.shape[0]):
        r = arities[vorder[i]]
        acc[j, i] -= logfact[r - 1] - logfact[r - 1 + m] + celld[st, i]


@numba.njit(cache=True, nogil=True, inline="always")
def _k2_binary_split(t, m, c0, rs, packed, i0, tables, logfact, counts, st, acc, j):
    """K2 change of ``acc[j, i]`` for every child ``vorder[i]``, ``i >= i0``, when a
    binary parent (packed row ``rs`` = its first state) splits the configuration
    ``bb[t]`` (``m`` rows; counts and cell sums at ``st``) into ``c0`` and ``m - c0``
    rows: the first part (into ``bb[t + 1]``) is counted, the second is the rest."""
    comp, compT, Wc = packed
    bb, cntd, celld = counts.bitsets, counts.k2_counts, counts.k2_cells
    arities, vorder, rowstart = tables.arities, tables.vorder, tables.rowstart
    m1 = m - c0
    p = vorder.shape[0]
    for w in range(Wc):
        bb[t + 1, w] = bb[t, w] & comp[rs, w]
    for i in range(i0, p):
        r = arities[vorder[i]]
        base = rowstart[i]
        rest0 = c0
        rest1 = m1
        s = 0.0
        for v in range(r - 1):
            n0 = _rows_in(bb, t + 1, Wc, comp, compT, base + v)
            n1 = cntd[st, base + v] - n0
            rest0 -= n0
            rest1 -= n1
            s += logfact[n0] + logfact[n1]
        s += logfact[rest0] + logfact[rest1]
        acc[j, i] += (logfact[r - 1] - logfact[r - 1 + c0] - logfact[r - 1 + m1] + logfact[r - 1 + m] + s
                      - celld[st, i])


@numba.njit(cache=True, nogil=True)
def _score_block(m, packed, d_from, i0, tables, bdeu, logfact, counts, sets):
    """Score one configuration whose ``m`` rows are all of the packed rows ``comp``
    (``Wc`` words, rows from ``d_from`` filled): the word-major copy, the all-rows
    bitset in ``bb[0]``, and its term in ``acc[0]`` for every child from position
    ``i0`` (under K2 its counts and cell sums go to ``cntd[0]`` and ``celld[0]``)."""
    comp, compT, Wc = packed
    bb, cnt = counts.bitsets, counts.counts
    vorder, rowstart = tables.vorder, tables.rowstart
    cst, acc = sets.bdeu_consts, sets.acc
    p = vorder.shape[0]
    _transpose_rows(comp, Wc, d_from, rowstart[p], compT)
    _ones(bb[0], m)
    if i0 >= p:
        return
    if bdeu:
        _bdeu_config(m, bb[0], packed, i0, tables, cst[0], acc[0], cnt)
    else:
        _k2_part(m, 0, packed, i0, tables, logfact, counts, acc, 0)


@numba.njit(cache=True, nogil=True, inline="always")
def _low_bits(m):
    """The word with bits 0 .. m - 1 set (m <= 64): the rows of a packed configuration."""
    return np.uint64(0xFFFFFFFFFFFFFFFF) if m == 64 else (np.uint64(1) << np.uint64(m)) - np.uint64(1)


@numba.njit(cache=True, nogil=True, inline="always")
def _split_list(lb, lm, du, n, X0, cT, i0, p, tt, accj, deeper):
    """One step of the binary set walk: x (first-state rows ``X0``) splits each of the
    ``n`` configurations listed at depth ``du`` (bitsets ``lb``, rows ``lm``; packed
    child rows ``cT``), ``accj[i]`` of every child position i >= i0 gets the change of
    its K2 terms (table ``tt``), and with ``deeper`` the parts of two rows or more are
    listed at depth du + 1.  Returns how many.  There is no data-dependent branch (a
    branch the CPU cannot guess costs more than the children's loop): a configuration
    x does not split changes nothing, tt[0, 0] + t - t = 0 exactly, and goes down
    whole as its one non-empty part."""
    d1 = du + np.uint64(1)
    n1 = np.uint64(0)
    for c in range(np.uint64(n)):
        b = lb[du, c]
        mb = np.uint64(lm[du, c])
        b0 = b & X0
        m0 = _popcount(b0)
        m1 = mb - m0
        t0 = tt[m0]
        t1 = tt[m1]
        tm = tt[mb]
        for i in range(np.uint64(i0), np.uint64(p)):
            ci = cT[i]
            a = _popcount(b0 & ci)
            cc = _popcount(b & ci)
            accj[i] += t0[a] + t1[cc - a] - tm[cc]
        if deeper:  # each part stored, counted only if kept
            lb[d1, n1] = b0
            lm[d1, n1] = m0
            n1 += np.uint64(m0 >= 2)
            lb[d1, n1] = b ^ b0
            lm[d1, n1] = m1
            n1 += np.uint64(m1 >= 2)
    return n1


@numba.njit(cache=True, nogil=True, inline="always")
def _next_set(xs, d, max_extra, node_i0, p):
    """One step of a depth-first set walk: ``(d, x)``, the next member x added at depth
    ``d`` (``xs[d]`` moves past it), backing up past the depths that are done (``max_extra``
    members reached, or no node left) and skipping the nodes of the last level
    (``node_i0[x] >= p``: no set with one has a child, so such sets are not listed);
    ``d = -1`` when the walk is over."""
    while d >= 0:
        du = np.uint64(d)
        x = xs[du]
        if d >= max_extra or x >= p:
            d -= 1
            continue
        xs[du] = x + 1
        if node_i0[np.uint64(x)] < p:
            return d, x
    return d, -1


@numba.njit(cache=True, nogil=True, _nrt=False)
def _binary_subtree(m, u1, max_extra, packed, lists, stacks, tables, sets, tt):
    """:func:`_config_subtree` under K2 when every variable is binary and the
    configuration of the pair whose sets below are walked has
    at most 64 rows (one word; ``u1`` its last member, the walk's sets add up to
    ``max_extra`` later ones): the same differences, set by set instead of configuration
    by configuration.  Each set holds the list of its configurations of two rows or
    more (bitset ``lb``, rows ``lm``); x splits each configuration in one AND, and a
    split changes ``acc[j, i]`` by the terms of its two parts less its own, from two
    popcounts per child (the configuration's count of the child's state 0 and its
    first part's: recounting costs less than storing the counts for the sets below)
    and the table ``tt[m, n]`` (the K2 term of m rows, n of them in state 0), in
    :func:`_split_list`.  (Child position i has packed row i: every child is binary.)
    The hot loops index with unsigned ints, so numba adds no negative-index wraparound
    (about a fifth of this walk's time)."""
    comp, compT = packed.rows, packed.rows_t
    lb, lm, nl = lists
    xs, cid = stacks.next_member, stacks.set_index
    nodepos, node_i0 = tables.nodepos, tables.node_i0
    set_i0, subsz, acc = sets.i0, sets.subtree_size, sets.acc
    p = nodepos.shape[0]
    lb[0, 0] = _low_bits(m)
    lm[0, 0] = m
    nl[0] = 1
    d = 0
    xs[0] = u1 + 1
    cid[0] = 1
    one = np.uint64(1)
    cT = compT[0]
    while True:
        d, x = _next_set(xs, d, max_extra, node_i0, p)
        if d < 0:
            break
        du = np.uint64(d)
        jj = cid[du]
        j = np.uint64(jj)
        cid[du] = jj + subsz[j]
        i0 = set_i0[j]
        X0 = comp[np.uint64(nodepos[np.uint64(x)]), 0]  # rows where x takes its first state
        deeper = d + 1 < max_extra and subsz[j] > 1
        d1 = du + one
        n1 = _split_list(lb, lm, du, nl[du], X0, cT, i0, p, tt, acc[j], deeper)
        if deeper:
            nl[d1] = n1
            xs[d1] = x + 1
            cid[d1] = jj + 1
            d += 1


@numba.njit(cache=True, nogil=True, _nrt=False)
def _binary_whole(pel, sP, max_extra, ng, configs, lists, stacks, acc0, i0root, tables, tt, placement):
    """Every set P + T below P = ``pel[:sP]`` (one or two members; T of later members,
    at most ``max_extra``) under K2 with every variable binary and each configuration g of
    P in one word (``gm[g]`` rows, packed rows ``cTs[g]``, ``ng`` of them): the binary
    set walk of :func:`_binary_subtree` over all of P's configuration lists at once,
    so that a set is done when it is visited: its scores (its parent's, ``accd`` of
    the depth above, plus its differences) go straight to ``out`` and stay in ``accd``
    for the sets below it; no set list, no accumulator per set.  ``acc0``: the scores of
    P (children from position ``i0root``), ``nxt`` as in :func:`bnexplore._order_scores._write_sets`, carried
    on from P's own.  The sets come in the same order and their scores are summed in
    the same order as through the set list, so the results are the same bit for bit."""
    gm, cTs = configs
    lb2, lm2, nl2 = lists
    xs, mem, i0d, accd = stacks.next_member, stacks.member, stacks.first_child, stacks.scores
    nodepos, node_i0, vorder, obase, rk = tables.nodepos, tables.node_i0, tables.vorder, tables.obase, tables.rk
    nxt, out = placement
    p = nodepos.shape[0]
    one = np.uint64(1)
    for g in range(ng):
        m = gm[g]
        nl2[g, 0] = 0
        if m >= 2:
            lb2[g, 0, 0] = _low_bits(m)
            lm2[g, 0, 0] = m
            nl2[g, 0] = 1
    for i in range(i0root, p):
        accd[0, i] = acc0[i]
    first = pel[sP - 1] + 1
    lastlive = -1  # the last node that may extend a set (not in the last level)
    for x in range(first, p):
        if node_i0[x] < p:
            lastlive = x
    i0d[0] = i0root
    xs[0] = first
    d = 0
    while True:
        d, x = _next_set(xs, d, max_extra, node_i0, p)
        if d < 0:
            break
        du = np.uint64(d)
        i0 = max(i0d[du], node_i0[np.uint64(x)])
        xp = np.uint64(nodepos[np.uint64(x)])
        deeper = d + 1 < max_extra and x < lastlive
        d1 = du + one
        dj = accd[d1]  # the differences, then the set's scores
        for i in range(np.uint64(i0), np.uint64(p)):
            dj[i] = 0.0
        for g in range(np.uint64(ng)):
            cT = cTs[g]
            nl2[g, d1] = _split_list(lb2[g], lm2[g], du, nl2[g, du], cT[xp], cT, i0, p, tt, dj, deeper)
        s = sP + d + 1  # P, the members below it, x
        pj = accd[du]
        for i in range(i0, p):
            val = dj[i] + pj[i]
            dj[i] = val
            at = nxt[i, s]
            if at < 0:  # the first of v's sets of this size here: its place from its members
                v = vorder[i]
                at = obase[v, s] - rk[v, x, 1]
                for e in range(sP):
                    at -= rk[v, pel[e], s - e]
                for t in range(1, d + 1):
                    at -= rk[v, mem[t], s - sP + 1 - t]
            out[at] = val
            nxt[i, s] = at + 1
        if deeper:
            mem[d1] = x
            i0d[d1] = i0
            xs[d1] = x + 1
            d += 1


@numba.njit(cache=True, nogil=True, _nrt=False)
def _config_subtree(m, u1, max_extra, packed, counts, stacks, tables, sets, bdeu, logfact):
    """Inside one configuration of a pair P (its ``m`` rows packed in ``comp``; under K2
    its counts and cell sums in ``cntd[0]``, ``celld[0]``): every configuration of every
    set P + T (T of members after ``u1``, at most ``max_extra``), depth first, one bitset
    per depth.  Single-row configurations are only counted (``nsing``).

    K2 (``bdeu`` false) works by differences: ``acc`` of a set gets the terms of the
    configurations its last member splits, minus those of the configurations split
    (the rest it shares with its parent in the list, added at the end); a
    configuration the last member does not split costs nothing, and a binary last
    member with nothing below is counted on one side only.  BDeu terms depend on the
    number of parent configurations, so there every configuration of every set is
    scored in full.  All arrays are indexed in place (no row views in the loop)."""
    comp, compT, Wc = packed
    bb, cnt = counts.bitsets, counts.counts
    xs, ds, cid = stacks.next_member, stacks.state, stacks.set_index
    lft, bcnt, src = stacks.rows_left, stacks.rows, stacks.counts_from
    arities, rowstart, nodepos, node_i0 = tables.arities, tables.rowstart, tables.nodepos, tables.node_i0
    set_i0, subsz, nsing, acc, cst = sets.i0, sets.subtree_size, sets.singles, sets.acc, sets.bdeu_consts
    p = arities.shape[0]
    delta = not bdeu
    t = 0
    xs[0] = u1 + 1
    ds[0] = 0
    cid[0] = 1
    bcnt[0] = m
    src[0] = 0
    while True:
        x = xs[t]
        if x >= p:
            if t == 0:
                break
            t -= 1
            ds[t] += 1
            continue
        if node_i0[x] >= p:  # the last level: not listed (no child)
            xs[t] = x + 1
            continue
        j = cid[t]
        ax = arities[x]
        mt = bcnt[t]
        if ds[t] == 0:
            i0 = set_i0[j]
            if delta and ax == 2 and subsz[j] == 1:  # binary leaves: a tight run, one side counted
                st = src[t]
                while True:
                    rs = rowstart[nodepos[x]]
                    c0 = _rows_in(bb, t, Wc, comp, compT, rs)
                    if c0 > 0 and c0 < mt:
                        _k2_binary_split(t, mt, c0, rs, packed, i0, tables, logfact, counts, st, acc, j)
                    x += 1
                    while x < p and node_i0[x] >= p:
                        x += 1
                    j += 1
                    if x >= p or arities[x] != 2 or subsz[j] != 1:
                        break
                    i0 = set_i0[j]
                cid[t] = j
                xs[t] = x
                continue
            lft[t] = mt
        d = ds[t]
        if d >= ax or lft[t] == 0:
            cid[t] += subsz[j]
            xs[t] += 1
            ds[t] = 0
            continue
        rs = rowstart[nodepos[x]]
        t1 = t + 1
        if d < ax - 1:
            cu = np.uint64(0)
            for w in range(Wc):
                y = bb[t, w] & comp[rs + d, w]
                bb[t1, w] = y
                cu += _popcount(y)
            c = np.int64(cu)
        else:  # the last state takes the rows left
            c = lft[t]
            if c >= 2:
                for w in range(Wc):
                    y = bb[t, w]
                    for e in range(ax - 1):
                        y &= ~comp[rs + e, w]
                    bb[t1, w] = y
        first = lft[t] == mt
        lft[t] -= c
        if c == 0:
            ds[t] += 1
            continue
        i0 = set_i0[j]
        same = delta and c == mt  # not split: the same configuration, same term, one level down
        if same:
            ds[t] = ax
        else:
            if delta and first:
                _k2_unterm(mt, i0, tables, logfact, counts.k2_cells, src[t], acc, j)
            if c == 1:
                nsing[j] += 1
                ds[t] += 1
                continue
            if delta:
                _k2_part(c, t1, packed, i0, tables, logfact, counts, acc, j)
            else:
                _bdeu_config(c, bb[t1], packed, i0, tables, cst[j], acc[j], cnt)
        if subsz[j] > 1:  # one level down (the return moves this level on)
            xs[t1] = x + 1
            ds[t1] = 0
            cid[t1] = j + 1
            bcnt[t1] = c
            src[t1] = src[t] if same else t1
            t = t1
            continue
        if not same:
            ds[t] += 1


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
