"""Every family score under a (partial) order in one pass: the order-scoring engine.

Under an order given by ``level``, node ``v`` may take parents among its *candidates*
``C_v = {u : level[u] < level[v]}``, and order averaging (Dash & Cooper, Eq. 13-15)
needs the score of every ``S`` in ``C_v`` with ``|S| <= max_parents``, for every ``v``:

    score(v, S) = sum_j t(N_j, N_j1 .. N_jr)                          (family score)

summed over the configurations ``j`` of ``S`` seen in the data (Dash & Cooper Eq. 6, the
term ``t`` is written out in :mod:`bnexplore._order_walks`).  A set ``S`` is a
candidate set of every ``v`` on a later level than all its members, so each set is
counted once and scored for all those children together.

Work items.  Item ``u0`` is every set whose smallest member is ``u0`` (item ``-1``: the
empty set).  The rows of each configuration of ``u0`` (and then of each pair
``{u0, u1}``) are packed into short bitsets with BMI2 ``pext`` (:mod:`bnexplore._bits`),
child-value rows included, and the sets that extend them are counted inside the packed
rows only (:mod:`bnexplore._order_walks`): the cost of a set falls with the rows of its
configurations, not the rows of the data.  Items are handed to the workers one at a time
through an atomic counter, largest first; a worker is one launch of the serial kernel
from a Python thread (:mod:`bnexplore._threads`).

Set list.  The sets ``P + T`` of an item (``P`` its first one or two members, ``T`` at
most ``max_extra`` later members) are listed in lexicographic depth-first preorder
(:func:`_subtree_sets`); the walks accumulate terms per (set, child) and
:func:`_write_sets` adds ``-log r`` per single-row configuration and, under K2, the
parent set's score (the split differences), then writes every score to its place.

Places.  The sets of ``v`` come by size, then in lexicographic order (as
``itertools.combinations`` lists them).  With ``c`` the number of candidates of ``v``,
``pos(u)`` the position of ``u`` among them and ``C(a, b)`` binomials, the set
``u_1 < .. < u_s`` has its lexicographic rank counted from the last,

    rank = sum_e C(c - 1 - pos(u_e), s - e + 1)                        (combinatorial rank)

so it goes to ``out[obase[v, s] - sum_e rk[v, u_e, s - e + 1]]`` (:func:`_order_index`
builds ``obase`` and ``rk``); a walk computes the place of the first of ``v``'s sets of
one size and counts on from there (``nxt``).

Glossary
--------
level, vorder, nodepos
    The level of each node; the nodes sorted by level; each node's position there.
max_parents
    Largest parent-set size asked for; the index clamps it to the most candidates.
max_extra
    Most members a walk adds below the members it starts from.
node_i0
    ``node_i0[u]``: first position in ``vorder`` whose node may have ``u`` as parent.
rowstart, row_node, row_state
    Child-value rows: row ``d`` is state ``row_state[d]`` of ``row_node[d]``, states
    ``0 .. r-2`` of each node in ``vorder`` order from ``rowstart[i]``; ``D`` rows in all.
bits, rbits
    ``bits[u, x]``: bitset (uint64 words) of the rows where ``u = x``; ``rbits[d]``:
    that of child-value row ``d``.
items, max_sets
    The work items; the most sets one item lists.
out_off, obase, rk
    Offsets of each node's scores in the flat output; the place tables above.
done
    ``done[0]``: work items finished (a worker that cannot allocate takes none).
"""
from __future__ import annotations

import functools
import math
from collections import namedtuple

import numba
import numpy as np
from scipy.special import gammaln

from ._bits import _compress, _fetch_add, _popcount
from ._order_walks import (BinaryLists, ConfigCounts, OrderTables, PackedRows, PairConfigs, Placement, SetList,
                           WalkStacks, _binary_subtree, _binary_whole, _config_subtree, _ones, _score_block)
from ._threads import n_parts, run_parts
from .data.core import DiscreteData, MemoryBudgetError, get_table_budget

__all__ = ["order_family_scores"]

#: what :func:`_order_index` knows of one order: the kernel's tables and the Python side's
OrderIndex = namedtuple("OrderIndex", ["max_parents", "out_off", "max_sets", "row_node", "row_state", "tables"])


@numba.njit(cache=True, nogil=True)
def _row_bitsets(cols, arities):
    """bits[v, x] = bitset (uint64 words) of the rows where column v takes value x.

    Each output word is assembled in a register from 64 consecutive rows, one state
    at a time, so no word is read back from memory while it is built.
    """
    p, n = cols.shape
    W = max(1, (n + 63) // 64)
    mr = 1
    for v in range(p):
        mr = max(mr, arities[v])
    bits = np.zeros((p, mr, W), dtype=np.uint64)
    for v in range(p):
        col = cols[v]
        for w in range(W):
            t0 = w * 64
            m = min(64, n - t0)
            seg = col[t0:t0 + m]
            for x in range(arities[v]):
                word = np.uint64(0)
                for b in range(m):  # independent compares: no read-after-write chain
                    word |= np.uint64(seg[b] == x) << np.uint64(b)
                bits[v, x, w] = word
    return bits


@numba.njit(cache=True, nogil=True)
def _mask_words(mask, W, words, pk):
    """List the non-zero words of ``mask[:W]`` and their popcounts; returns (count, rows)."""
    nw = 0
    m = 0
    for w in range(W):
        x = mask[w]
        if x:
            words[nw] = w
            c = np.int64(_popcount(x))
            pk[nw] = c
            m += c
            nw += 1
    return nw, m


@numba.njit(cache=True, nogil=True)
def _first_row(u, i0, rowstart, nodepos):
    """First child-value row a work item below ``u`` reads: its admissible children's
    (from position ``i0``) and those of every later node it may extend by."""
    p = nodepos.shape[0]
    lo = rowstart[i0]
    for x in range(u + 1, p):
        lo = min(lo, rowstart[nodepos[x]])
    return lo


@numba.njit(cache=True, nogil=True)
def _subtree_sets(pel, sP, first, max_extra, tables, bdeu, ess, sets):
    """Preorder list of the sets P + T of one work item (P = ``pel[:sP]``, T any subset of
    ``first .. p-1`` with at most ``max_extra`` members, in lexicographic depth-first
    order), leaving out the members of the last level (a set with one has no child;
    the walks skip them too).  Per set: last member (the others are its parent's),
    size, first admissible child (position in ``vorder``: the latest ``node_i0`` of its
    members), parent in the list and subtree size, and under BDeu its q; also zeroes
    its accumulators and fills the BDeu constants.  Returns the number of sets."""
    arities, node_i0, vorder = tables.arities, tables.node_i0, tables.vorder
    set_last, set_s, set_q, set_i0, set_par = sets.last, sets.size, sets.q, sets.i0, sets.parent
    subsz, nsing, acc, cst = sets.subtree_size, sets.singles, sets.acc, sets.bdeu_consts
    p = arities.shape[0]
    q = 1.0
    i0 = 0
    for e in range(sP):
        q *= arities[pel[e]]
        i0 = max(i0, node_i0[pel[e]])
    set_last[0] = pel[sP - 1] if sP > 0 else -1
    set_s[0] = sP
    set_q[0] = q
    set_i0[0] = i0
    set_par[0] = -1
    subsz[0] = 1
    n = 1
    if max_extra > 0 and first < p:
        st = np.zeros(max_extra + 1, dtype=np.int64)
        nx = np.zeros(max_extra + 1, dtype=np.int64)
        nx[0] = first
        t = 0
        while t >= 0:
            cur = st[t]
            if t >= max_extra or nx[t] >= p:
                subsz[cur] = n - cur
                t -= 1
                continue
            x = nx[t]
            nx[t] += 1
            if node_i0[x] >= p:  # x is in the last level: no set with it has a child
                continue
            j = n
            n += 1
            set_last[j] = x
            set_s[j] = set_s[cur] + 1
            if bdeu:
                set_q[j] = set_q[cur] * arities[x]
            set_i0[j] = max(set_i0[cur], node_i0[x])
            set_par[j] = cur
            t += 1
            st[t] = j
            nx[t] = x + 1
    for j in range(n):
        nsing[j] = 0
        for i in range(set_i0[j], p):
            acc[j, i] = 0.0
    if not bdeu:
        return n
    for j in range(n):
        for i in range(set_i0[j], p):
            r = arities[vorder[i]]
            a = ess / (set_q[j] * r)
            aj = ess / set_q[j]
            cst[j, i, 0] = a
            cst[j, i, 1] = aj
            cst[j, i, 2] = math.lgamma(a)
            cst[j, i, 3] = math.lgamma(aj)
    return n


@numba.njit(cache=True, nogil=True)
def _write_sets(nsets, psingles, pel, sets, mlogr, tables, bdeu, placement):
    """Final scores of a work item's sets: the accumulated terms plus -log r per
    single-row configuration (``mlogr[i]`` = -log r of child ``vorder[i]``).  Under
    BDeu a set has the single-row configurations of its parent in the list
    (``psingles`` for the first) plus its own new ones; under K2 it has its parent's
    whole score plus its own differences (see :func:`_config_subtree`).  A set of
    size s goes to ``out[obase[v, s] - sum_e rk[v, member_e, s - e]]`` for child v
    (its place among v's sets, by size then lexicographic).  The list is in
    lexicographic order and holds every set with its first members, so v's sets of
    one size follow one another in ``out``: the place is worked out for the first of
    them only (``nxt[i, s]``: the next place, -1 before the first)."""
    set_last, set_s, set_i0, set_par = sets.last, sets.size, sets.i0, sets.parent
    nsing, sing, acc = sets.singles, sets.singles_total, sets.acc
    vorder, obase, rk = tables.vorder, tables.obase, tables.rk
    nxt, out = placement
    p = mlogr.shape[0]
    for i in range(p):
        for s in range(nxt.shape[1]):
            nxt[i, s] = -1
    for j in range(nsets):
        par = set_par[j]
        s = set_s[j]
        if bdeu:
            sing[j] = (psingles if par < 0 else sing[par]) + nsing[j]
            ns = sing[j]
        else:
            ns = psingles if par < 0 else nsing[j]
        for i in range(set_i0[j], p):
            val = acc[j, i] + ns * mlogr[i]
            if not bdeu:
                if par >= 0:
                    val += acc[par, i]
                acc[j, i] = val
            at = nxt[i, s]
            if at < 0:  # members: the last ones up the parents, then the work item's own (pel)
                v = vorder[i]
                at = obase[v, s]
                e = s - 1
                jj = j
                while jj > 0:
                    at -= rk[v, set_last[jj], s - e]
                    e -= 1
                    jj = set_par[jj]
                for e in range(set_s[0]):
                    at -= rk[v, pel[e], s - e]
            out[at] = val
            nxt[i, s] = at + 1


@numba.njit(cache=True, nogil=True)
def _order_family_scores(tables, max_parents, max_sets, bdeu, ess, logfact, bits, rbits, n_rows, n_workers, done,
                         out):
    """Every parent set of size <= ``max_parents`` of every node under a (partial) order.

    Work item ``u0`` (in ``items``; -1 is the empty set) scores {u0} and every set
    whose smallest member is u0.  The rows of each configuration of the first one or
    two members are packed into short bitsets (BMI2 ``pext``), child-value rows
    included, so the sets below it count only inside that configuration's rows; the
    score of a set is the sum of its configurations' terms over those blocks.  Under
    K2 with every variable binary, when each state of u0 has at most 64 rows, one
    binary set walk from u0's configurations does every set below {u0}
    (:func:`_binary_whole`), so the pairs are not packed apart.
    ``rbits[d]`` is the row bitset of child-value row d (the states but the last of
    each node in ``vorder``, from ``rowstart``); ``bits[u, x]`` of column u's state x.
    ``done[0]`` counts the work items finished: a worker whose arrays cannot be
    allocated takes no item, so the caller checks ``done[0] == items.size`` (an item
    left undone would leave its places of ``out`` unwritten); ``done[1]`` is the next
    item to hand out, shared by every launch of the kernel on the same arrays (the
    launches of :func:`order_family_scores`'s Python threads, see
    :mod:`bnexplore._threads`).
    """
    arities, level, vorder, rowstart = tables.arities, tables.level, tables.vorder, tables.rowstart
    nodepos, node_i0, items = tables.nodepos, tables.node_i0, tables.items
    p = arities.shape[0]
    D = rowstart[p]
    W = rbits.shape[1]
    mr = bits.shape[1]
    maxlev = level.max()
    kx = max(max_parents, 2)
    n_items = items.shape[0]
    binary_k2 = not bdeu  # every variable binary: the set-by-set path inside one-word pair configurations
    for v in range(p):
        if arities[v] != 2:
            binary_k2 = False
    for _worker in range(min(n_workers, n_items)):
        blk = np.zeros((D, W + mr), dtype=np.uint64)  # u0's configurations, packed one after another
        boff = np.zeros(mr + 1, dtype=np.int64)
        bm = np.zeros(mr, dtype=np.int64)
        comp = np.zeros((D, W), dtype=np.uint64)
        compT = np.zeros((8, D), dtype=np.uint64)
        bb = np.zeros((kx + 1, W), dtype=np.uint64)
        pm = np.zeros(W, dtype=np.uint64)
        words = np.zeros(W, dtype=np.int64)
        pk = np.zeros(W, dtype=np.int64)
        cnt = np.zeros(max(D, 1), dtype=np.uint64)
        cntd = np.zeros((kx + 1, max(D, 1)), dtype=np.int64)  # K2: counts and cell sums per depth
        celld = np.zeros((kx + 1, p))
        src = np.zeros(kx + 1, dtype=np.int64)
        mlogr = np.empty(p)
        for i in range(p):
            mlogr[i] = -math.log(arities[vorder[i]])
        set_last = np.zeros(max_sets, dtype=np.int64)
        set_s = np.zeros(max_sets, dtype=np.int64)
        set_q = np.zeros(max_sets)
        set_i0 = np.zeros(max_sets, dtype=np.int64)
        set_par = np.zeros(max_sets, dtype=np.int64)
        subsz = np.zeros(max_sets, dtype=np.int64)
        nsing = np.zeros(max_sets, dtype=np.int64)
        sing = np.zeros(max_sets, dtype=np.int64)
        acc = np.zeros((max_sets, p))
        cst = np.zeros((max_sets if bdeu else 1, p, 4))
        xs = np.zeros(kx + 1, dtype=np.int64)
        ds = np.zeros(kx + 1, dtype=np.int64)
        cid = np.zeros(kx + 1, dtype=np.int64)
        lft = np.zeros(kx + 1, dtype=np.int64)
        bcnt = np.zeros(kx + 1, dtype=np.int64)
        pel = np.zeros(2, dtype=np.int64)
        # the binary K2 walks' configuration lists (bitset, rows; how many per depth), one per
        # configuration of the first one or two members (_binary_whole; _binary_subtree: the first)
        lb2 = np.zeros((4, kx + 1, 64), dtype=np.uint64)
        lm2 = np.zeros((4, kx + 1, 64), dtype=np.int64)
        nl2 = np.zeros((4, kx + 1), dtype=np.int64)
        cTs = np.zeros((4, D), dtype=np.uint64)
        gm = np.zeros(4, dtype=np.int64)
        accd = np.zeros((kx + 1, p))
        mem = np.zeros(kx + 1, dtype=np.int64)
        i0d = np.zeros(kx + 1, dtype=np.int64)
        wnxt = np.zeros((p, kx + 1), dtype=np.int64)
        tt = np.zeros((65, 65))  # K2 term of m <= 64 rows (binary child), n of them in state 0
        if binary_k2:
            for a in range(min(n_rows, 64) + 1):
                for b in range(a + 1):
                    tt[a, b] = logfact[b] + logfact[a - b] - logfact[a + 1]
        sets = SetList(set_last, set_s, set_q, set_i0, set_par, subsz, nsing, sing, acc, cst)
        stacks = WalkStacks(xs, ds, cid, lft, bcnt, src, mem, i0d, accd)
        counts = ConfigCounts(bb, cnt, cntd, celld)
        lists = BinaryLists(lb2, lm2, nl2)
        configs = PairConfigs(gm, cTs)
        placement = Placement(wnxt, out)
        taken = -1  # the items this worker has taken (each is finished when it comes back here)
        while True:
            taken += 1
            ii = _fetch_add(done, 1, 1)  # items handed out one at a time: threads stay busy
            if ii >= n_items:
                break
            u0 = items[ii]
            if u0 < 0:  # the empty set: one configuration, every row
                ns = _subtree_sets(pel, 0, 0, 0, tables, bdeu, ess, sets)
                psingles = 0
                if n_rows == 1:
                    psingles = 1
                elif n_rows >= 2:
                    i0 = set_i0[0]
                    _score_block(n_rows, PackedRows(rbits, compT, W), rowstart[i0], i0, tables, bdeu, logfact,
                                 counts, sets)
                _write_sets(ns, psingles, pel, sets, mlogr, tables, bdeu, placement)
                continue
            # ---- pack u0's configurations: every child-value row a later set may need
            lo = _first_row(u0, node_i0[u0], rowstart, nodepos)
            au0 = arities[u0]
            for a in range(au0):
                nw, m = _mask_words(bits[u0, a], W, words, pk)
                bm[a] = m
                boff[a + 1] = boff[a] + (m + 63) // 64
                if m >= 2:
                    for d in range(lo, D):
                        _compress(rbits[d], bits[u0, a], words, pk, nw, blk[d, boff[a]:])
            # ---- the single parent {u0}; with every state of u0 in one word (binary K2),
            # every set below it too, in one walk over both states (no pairs packed apart)
            whole = binary_k2 and max_parents >= 2
            for a in range(au0):
                whole = whole and bm[a] <= 64
            pel[0] = u0
            ns = _subtree_sets(pel, 1, 0, 0, tables, bdeu, ess, sets)
            psingles = 0
            i0 = set_i0[0]
            d0 = lo if whole else rowstart[i0]  # the rows the walk reads, or the children's
            for a in range(au0):
                m = bm[a]
                if m == 1:
                    psingles += 1
                if m < 2 or i0 >= p:
                    continue
                Wa = (m + 63) // 64
                for d in range(d0, D):
                    for w in range(Wa):
                        comp[d, w] = blk[d, boff[a] + w]
                _score_block(m, PackedRows(comp, compT, Wa), d0, i0, tables, bdeu, logfact, counts, sets)
                if whole:  # keep state a's packed rows for the walk below
                    for dd in range(d0, D):
                        cTs[a, dd] = compT[0, dd]
            if i0 < p:
                _write_sets(ns, psingles, pel, sets, mlogr, tables, bdeu, placement)
                if whole:  # every set below {u0}: one walk over both states, written as it goes
                    _binary_whole(pel, 1, max_parents - 1, au0, PairConfigs(bm, cTs), lists, stacks, acc[0], i0,
                                  tables, tt, placement)
            if max_parents < 2 or whole:
                continue
            # ---- pairs {u0, u1} and the sets below them
            for u1 in range(u0 + 1, p):
                if max(level[u0], level[u1]) >= maxlev:
                    continue
                pel[1] = u1
                rs1 = rowstart[nodepos[u1]]
                # binary K2 with every configuration of the pair in one word: the sets below
                # it in one walk (_binary_whole), as below a single parent
                fused = binary_k2 and max_parents >= 3
                for a in range(au0 if fused else 0):
                    if bm[a] >= 2:
                        c0 = 0
                        for w in range((bm[a] + 63) // 64):
                            c0 += np.int64(_popcount(blk[rs1, boff[a] + w]))
                        fused = fused and c0 <= 64 and bm[a] - c0 <= 64
                ns = _subtree_sets(pel, 2, u1 + 1, 0 if fused else max_parents - 2, tables, bdeu, ess, sets)
                ng = 0
                i0 = set_i0[0]
                # the rows the sets below the pair read, or (none below) its children's only
                lo1 = _first_row(u1, i0, rowstart, nodepos) if ns > 1 or fused else rowstart[min(i0, p)]
                au1 = arities[u1]
                psingles = 0
                for a in range(au0):
                    ma = bm[a]
                    if ma == 1:
                        psingles += 1
                    if ma < 2:
                        continue
                    Wa = (ma + 63) // 64
                    off = boff[a]
                    left = ma
                    for b in range(au1):
                        if left == 0:
                            break
                        if b < au1 - 1:
                            for w in range(Wa):
                                pm[w] = blk[rs1 + b, off + w]
                        else:  # u1's last state: the rows of the block left
                            _ones(pm, ma)
                            for w in range(Wa):
                                y = pm[w]
                                for e in range(au1 - 1):
                                    y &= ~blk[rs1 + e, off + w]
                                pm[w] = y
                        nw, m = _mask_words(pm, Wa, words, pk)
                        left -= m
                        if m == 1:
                            psingles += 1
                        if m < 2:
                            continue
                        Wc = (m + 63) // 64
                        for d in range(lo1, D):
                            _compress(blk[d, off:off + Wa], pm, words, pk, nw, comp[d])
                        packed = PackedRows(comp, compT, Wc)
                        _score_block(m, packed, lo1, i0, tables, bdeu, logfact, counts, sets)
                        if fused:  # keep this configuration's packed rows for the walk below
                            for dd in range(lo1, D):
                                cTs[ng, dd] = compT[0, dd]
                            gm[ng] = m
                            ng += 1
                        if ns > 1 and i0 < p:
                            if binary_k2 and Wc == 1:
                                first_lists = BinaryLists(lb2[0], lm2[0], nl2[0])
                                _binary_subtree(m, u1, max_parents - 2, packed, first_lists, stacks, tables, sets, tt)
                            else:
                                _config_subtree(m, u1, max_parents - 2, packed, counts, stacks, tables, sets, bdeu,
                                                logfact)
                _write_sets(ns, psingles, pel, sets, mlogr, tables, bdeu, placement)
                if fused and i0 < p:
                    _binary_whole(pel, 2, max_parents - 2, ng, configs, lists, stacks, acc[0], i0, tables, tt,
                                  placement)
        _fetch_add(done, 0, taken)
    return out


@functools.lru_cache(maxsize=64)
def _pascal(m: int, b: int) -> np.ndarray:
    """C(a, c) for a <= m, c <= b (0 above the diagonal), kept between calls: read only."""
    out = np.zeros((m + 1, b + 1), dtype=np.int64)
    out[:, 0] = 1
    for c in range(1, b + 1):
        out[1:, c] = np.cumsum(out[:-1, c - 1])
    return out


@functools.lru_cache(maxsize=32)
def _logfact(m: int) -> np.ndarray:
    """log(x!) for x = 0 .. m (kept between calls: read only)."""
    return gammaln(np.arange(m + 1) + 1.0)


def _order_sizes(level: np.ndarray, k: int) -> tuple[int, int, int]:
    """(kk, maxsets, n_out) of an order, in Python integers, without building any table:
    kk = min(k, most candidates); the most sets a work item lists (the sets below a
    pair {u0, u1}: those of at most kk - 2 further members, every member outside the
    last level, as :func:`_subtree_sets` lists them); the number of scores."""
    if level.size == 0:
        return 0, 1, 0
    srt = np.sort(level)
    n_cand = np.searchsorted(srt, level, side="left")  # nodes on a lower level
    live = int(np.searchsorted(srt, srt[-1], side="left"))  # nodes outside the last level
    kk = min(int(k), live)
    maxsets = sum(math.comb(live - 2, s) for s in range(kk - 1)) if kk >= 2 else 1
    m, count = np.unique(n_cand, return_counts=True)
    n_out = sum(int(c) * sum(math.comb(int(a), s) for s in range(min(kk, int(a)) + 1))
                for a, c in zip(m.tolist(), count.tolist()))
    return kk, maxsets, n_out


@functools.lru_cache(maxsize=32)
def _order_index(level_key: bytes, arity_key: bytes, k: int) -> OrderIndex:
    """Index tables of :func:`order_family_scores` for one (partial) order, arities and
    k; they depend on nothing else, so they are kept between calls (read only).

    Returns an :data:`OrderIndex`: ``max_parents`` = min(k, most candidates); the
    offsets of each node's scores; the most sets below a pair; each child-value row's
    node and state; and the kernel's :data:`~bnexplore._order_walks.OrderTables` (the
    nodes by level and each node's position there, the first child position of each
    node's children, the first child-value row of each position, the place tables of
    :func:`_write_sets` and the work items)."""
    level = np.frombuffer(level_key, dtype=np.int64)
    arities = np.frombuffer(arity_key, dtype=np.int64)
    p = level.size
    lower = level[None, :] < level[:, None]  # [v, u]: u may be a parent of v
    n_cand = lower.sum(axis=1).astype(np.int64)
    kk = min(k, int(n_cand.max(initial=0)))
    cand_pos = np.where(lower, np.cumsum(lower, axis=1) - 1, -1).astype(np.int64)
    binom = _pascal(p, kk + 1)
    size_off = np.zeros((p, kk + 2), dtype=np.int64)
    size_off[:, 1:] = np.cumsum(binom[n_cand, :kk + 1], axis=1)
    out_off = np.concatenate([[0], np.cumsum(size_off[:, kk + 1])]).astype(np.int64)
    # work items: the empty set, then each smallest member (largest subtrees first,
    # handed out one at a time to the threads)
    maxlev = level.max(initial=0)
    firsts = np.nonzero(level < maxlev)[0] if kk >= 1 else np.zeros(0, dtype=np.int64)
    cost = binom[p - 1 - firsts, :kk].sum(axis=1) if kk else np.zeros(firsts.size)
    items = np.concatenate([[-1], firsts[np.argsort(-cost, kind="stable")]]).astype(np.int64)
    maxsets = _order_sizes(level, k)[1]
    vorder = np.argsort(level, kind="stable").astype(np.int64)
    nodepos = np.empty(p, dtype=np.int64)
    nodepos[vorder] = np.arange(p)
    rowstart = np.concatenate([[0], np.cumsum(arities[vorder] - 1)]).astype(np.int64)
    row_node = np.repeat(vorder, arities[vorder] - 1)
    row_state = np.arange(row_node.size) - rowstart[nodepos[row_node]]
    # where a set goes: out[obase[v, s] - sum_e rk[v, u_e, s - e]] for child v and members u_e
    # (the lexicographic rank among v's sets of size s, counted from the last)
    obase = (out_off[:-1, None] + size_off[:, :kk + 1] + binom[n_cand, :kk + 1] - 1).astype(np.int64)
    rk = np.zeros((p, p, kk + 1), dtype=np.int64)
    below = np.where(lower, n_cand[:, None] - 1 - cand_pos, 0)
    for t in range(1, kk + 1):
        rk[:, :, t] = np.where(lower, binom[below, t], 0)
    node_i0 = np.searchsorted(level[vorder], level, side="right").astype(np.int64)  # first child position
    tables = OrderTables(arities, level, vorder, nodepos, node_i0, rowstart, obase, rk, items)
    return OrderIndex(kk, out_off, maxsets, row_node, row_state, tables)


def order_family_scores(data: DiscreteData, level: np.ndarray, k: int, bdeu: bool,
                        ess: float) -> tuple[np.ndarray, np.ndarray]:
    """Every family score under ``level`` as one array and the offsets of each node's
    scores (see :func:`bnexplore.scores.score_order_families`).  The arguments are
    trusted (checked by :func:`bnexplore.scores._score_order_flat`): ``level`` one int64
    per column, ``k >= 0``; the memory budget is checked here, before any table."""
    p, n = data.n_cols, data.n_rows
    arities = data.arities.astype(np.int64)
    # ---- memory guard, before any table: the index tables, the row bitsets and every
    # worker's arrays (the per-set accumulators grow as C(nodes, k - 2) x nodes), and the output
    kk, maxsets, n_out = _order_sizes(level, k)
    budget = get_table_budget()
    n_threads = numba.get_num_threads()
    W = max(1, (n + 63) // 64)
    D = int((arities - 1).sum())
    mr = int(arities.max(initial=1))
    per_set = 8 + p * (5 if bdeu else 1)  # the set list, acc and (BDeu) its constants
    per_worker = 2 * D * (W + mr) + 8 * D + (kk + 3) * (2 * D + 4 * p) + maxsets * per_set
    words = (p * mr + D) * W + n_threads * per_worker + p * p * (kk + 3)
    if words > budget:
        acc = n_threads * maxsets * per_set
        raise MemoryBudgetError(
            f"scoring every family (k={k}) keeps row bitsets, index tables and per-thread accumulators of "
            f"{words:,} words ({words * 8 / 2**20:,.0f} MiB: {n:,} rows, {p:,} variables, {D:,} child "
            f"states; the accumulators of {n_threads} threads {acc * 8 / 2**20:,.0f} MiB for up to "
            f"{maxsets:,} parent sets each), over the budget of {budget:,} cells: use a smaller k "
            f"(max_parents), fewer rows or variables, merge states, or raise the budget "
            f"(bnexplore.data.set_table_budget)")
    if n_out > budget:
        raise MemoryBudgetError(
            f"scoring every family (k={k}) gives {n_out:,} scores, over the budget of {budget:,} cells: "
            f"use a smaller k (max_parents), an order with fewer candidate parents, or raise the budget "
            f"(bnexplore.data.set_table_budget)")
    index = _order_index(level.tobytes(), arities.tobytes(), k)
    items = index.tables.items
    bits = _row_bitsets(data.columns, arities)
    rbits = np.ascontiguousarray(bits[index.row_node, index.row_state])  # child-value rows: states but the last
    logfact = _logfact(n + mr + 1)
    out = np.empty(int(index.out_off[-1]))  # every place is written
    done = np.zeros(2, dtype=np.int64)  # items finished, next item to hand out

    def worker(_part: int) -> None:  # one worker per thread; they share items through done[1]
        _order_family_scores(index.tables, index.max_parents, index.max_sets, bdeu, float(ess), logfact, bits,
                             rbits, n, 1, done, out)

    try:
        run_parts(worker, n_parts(n_out * W, SPLIT_WORK, most=items.size))
    except (MemoryError, SystemError) as exc:  # an allocation failed inside the kernel
        raise MemoryError(_KERNEL_ALLOC_FAILED.format(k=k, got=int(done[0]), n=items.size)) from exc
    if done[0] != items.size:  # a worker could not allocate its arrays: never return unwritten scores
        raise MemoryError(_KERNEL_ALLOC_FAILED.format(k=k, got=int(done[0]), n=items.size))
    return out, index.out_off


#: families x row words from which the scoring is split over the calling thread's numba
#: threads (below it a thread hand-off costs more than it saves)
SPLIT_WORK = 15_000

_KERNEL_ALLOC_FAILED = (
    "scoring every family (k={k}) could not allocate its per-thread working memory ({got} of {n} "
    "work items done): the machine has less free memory than the budget assumes; use a smaller k "
    "(max_parents), fewer variables, or lower the budget (bnexplore.data.set_table_budget) so that "
    "such runs are refused before they start")


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
