"""Partition MCMC (Kuipers & Moffa 2017): a chain over ordered partitions of the nodes whose
target is the posterior under a structure-modular prior over DAGs (uniform by default).

Mathematics
-----------
Peel a DAG by its sources: ``P_1`` its sources, ``P_2`` the sources of what is left, and so
on.  This maps every DAG to one ordered partition ``(P_1, .., P_m)``, and the DAGs of a
partition are exactly those whose nodes in ``P_1`` have no parents and whose node ``v`` in
``P_i`` (``i >= 2``) takes its parents inside ``A_i = P_1 + .. + P_(i-1)`` with at least
one in ``B_i = P_(i-1)``.  So the partitions carry the DAG posterior without the order
prior's count of linear extensions, and it factorises per node::

    P(Lambda | D) ∝ prod_v s_v(Lambda),   s_v = sum_{G subset A_i, G meets B_i, |G| <= k} beta_v(G)
                                            (s_v = beta_v({}) in P_1).       (partition score)

Moves (the first two symmetric, so their Metropolis-Hastings ratio is the score ratio):

* *relocate*: a uniform node ``v`` leaves its part (an emptied part disappears), and joins
  one of the ``m'`` parts of what is left or opens a new part in one of its ``m' + 1``
  gaps, uniformly among the ``2m' + 1``; the way back removes ``v`` from the same
  partition of the other nodes, with the same ``m'``;
* *swap*: two uniform nodes exchange parts (nothing happens when they share one);
* *split or join* (Kuipers & Moffa): one of the ``nbd = (m - 1) + sum_i (2^|P_i| - 2)``
  partitions that join two adjacent parts or split a part in two (its first half a nonempty
  proper subset), uniformly; a join undoes a split, so the proposal ratio is
  ``nbd(old) / nbd(new)``.

Relocating nodes one at a time reaches every ordered partition, so the chain is
irreducible.  A move changes ``A_i``, ``B_i`` of the nodes between the two parts involved
and of the part after them only; their scores are recomputed, the others kept.  ``s_v``
is summed over the parent sets in the colex layout of :mod:`bnexplore._order_dp` with a
running maximum, leaving out the sets without a member of ``B_i``.  Arc posteriors are
Rao-Blackwellised: each recorded partition contributes ``P(u -> v | Lambda, D)``, and a DAG
can be drawn from it, each node's parent set with probability ``beta_v(G) / s_v``.

Glossary
--------
part
    ``part[c, v]``: the index (from 0, the sources) of ``v``'s part in chain ``c``.
pred, last
    ``A_i`` and ``B_i`` of each node's part, as bit masks, kept per chain and node.

References
----------
J. Kuipers and G. Moffa, "Partition MCMC for inference on acyclic digraphs", JASA 112, 2017.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numba
import numpy as np

from ._order_dp import _acc, _candidate_ranks, _family_at, _next_comb, _rand, _take

__all__ = ["PartitionState", "run_partition_chains", "initial_partition_scores"]

#: one chain per row: ``part[c, v]`` v's part, ``n_parts[c]``, ``node_score[c, v]``
#: log s_v, ``pred``/``last`` the masks A_i, B_i of v's part, ``rng`` xorshift64* states.
PartitionState = namedtuple("PartitionState", "part n_parts node_score pred last rng")


@numba.njit(cache=True, nogil=True)
def _part_sets(fam, look, v, u, cl, inb, idx, mode, top, s, floor, draw, last, arc, c, r, want_arcs):
    """Visit v's parent sets drawn from the ``u`` candidate ranks ``cl`` that hold a member
    flagged in ``inb``: mode 0 adds their weights to the running sum (top, s); mode 1 takes
    their shares of the arc probabilities and the DAG draw (:func:`_take`)."""
    lw = fam.log_weight
    lo = fam.offset[v]
    cut = look.cut[v]
    k = min(look.k, u)
    if k >= 1:
        b1 = lo + look.size_base[1]
        b2 = lo + look.size_base[2] if k >= 2 else 0
        for a in range(u):
            ca = cl[a]
            if inb[a]:
                if mode == 0:
                    top, s = _acc(lw[b1 + ca], top, s, cut)
                else:
                    draw, last = _take(fam, b1 + ca, top, s, floor, draw, last, arc, c, r, v, want_arcs)
            if k >= 2 and look.max2[v, ca] > (top - cut if mode == 0 else floor):
                r2 = b2 + look.binom[ca, 2]
                for b in range(a):
                    if inb[a] or inb[b]:
                        if mode == 0:
                            top, s = _acc(lw[r2 + cl[b]], top, s, cut)
                        else:
                            draw, last = _take(fam, r2 + cl[b], top, s, floor, draw, last, arc, c, r, v, want_arcs)
    if k >= 3:
        b3 = lo + look.size_base[3]
        for a in range(2, u):
            ca = cl[a]
            if look.max3[v, ca] <= (top - cut if mode == 0 else floor):
                continue
            ra = b3 + look.binom[ca, 3]
            pa = look.binom[ca, 2]
            for b in range(1, a):
                cb = cl[b]
                if look.pair3[v, pa + cb] <= (top - cut if mode == 0 else floor):
                    continue
                r3 = ra + look.binom[cb, 2]
                for e in range(b):
                    if inb[a] or inb[b] or inb[e]:
                        if mode == 0:
                            top, s = _acc(lw[r3 + cl[e]], top, s, cut)
                        else:
                            draw, last = _take(fam, r3 + cl[e], top, s, floor, draw, last, arc, c, r, v,
                                               want_arcs)
    for size in range(4, k + 1):
        for t in range(size):
            idx[t] = t
        while True:
            hit = False
            for t in range(size):
                hit = hit or inb[idx[t]]
            if hit:
                f = _family_at(fam, look, v, size, cl, idx)
                if mode == 0:
                    top, s = _acc(lw[f], top, s, cut)
                else:
                    draw, last = _take(fam, f, top, s, floor, draw, last, arc, c, r, v, want_arcs)
            if not _next_comb(idx, size, u):
                break
    return top, s, draw, last


@numba.njit(cache=True, nogil=True)
def _ranks_and_flags(v, pred, last, n, cl, inb):
    """Candidate ranks of ``pred``'s nodes (ascending) and whether each is in ``last``."""
    u = _candidate_ranks(v, pred, n, cl)
    j = 0
    for x in range(n):
        if (pred >> np.uint64(x)) & np.uint64(1):
            inb[j] = (last >> np.uint64(x)) & np.uint64(1) != 0
            j += 1
    return u


@numba.njit(cache=True, nogil=True)
def _node_sum(fam, look, v, pred, last, n, cl, inb, idx, arc, c):
    """(top, s) with log s_v = top + log s (the partition score's factor of v)."""
    if pred == 0:
        return fam.log_weight[fam.offset[v]], 1.0  # the sources: the empty parent set
    u = _ranks_and_flags(v, pred, last, n, cl, inb)
    top, s, _, _ = _part_sets(fam, look, v, u, cl, inb, idx, 0, -np.inf, 0.0, 0.0, -0.5, -1, arc, c, 0, False)
    return top, s


@numba.njit(cache=True, nogil=True)
def _masks(part, n_parts, n, pred, last, pm):
    """A_i and B_i of every node's part (``pm`` scratch of one mask per part)."""
    for i in range(n_parts):
        pm[i] = np.uint64(0)
    for v in range(n):
        pm[part[v]] |= np.uint64(1) << np.uint64(v)
    acc = np.uint64(0)
    for i in range(n_parts):
        x = pm[i]
        pm[i] = acc  # now: the union of the parts before i
        acc |= x
    for v in range(n):
        i = part[v]
        pred[v] = pm[i]
        last[v] = pm[i] ^ pm[i - 1] if i > 0 else np.uint64(0)


@numba.njit(cache=True, nogil=True)
def _split_join_count(part, m, n, sizes):
    """Neighbours of a partition by one split or join: ``(m - 1) + sum_i (2^|P_i| - 2)``."""
    for i in range(m):
        sizes[i] = 0
    for v in range(n):
        sizes[part[v]] += 1
    total = float(m - 1)
    for i in range(m):
        total += 2.0 ** sizes[i] - 2.0
    return total


@numba.njit(cache=True, nogil=True)
def _split_join(state, c, n, newpart, sizes, hastings):
    """Join two adjacent parts or split one in two (the first part a nonempty proper subset),
    uniformly among the neighbours; ``hastings[0]`` gets log nbd(old) - log nbd(new)."""
    part = state.part[c]
    m = state.n_parts[c]
    nbd = _split_join_count(part, m, n, sizes)
    r = _rand(state.rng, c) * nbd
    if r < m - 1:
        j = min(int(r), m - 2)
        for w in range(n):
            if part[w] > j:
                newpart[w] = part[w] - 1
        m_new = m - 1
    else:
        r -= m - 1
        i = 0
        while i < m - 1 and r >= 2.0 ** sizes[i] - 2.0:
            r -= 2.0 ** sizes[i] - 2.0
            i += 1
        sub = min(max(np.int64(r) + 1, 1), (np.int64(1) << sizes[i]) - 2)
        t = 0
        for w in range(n):
            if part[w] > i:
                newpart[w] = part[w] + 1
            elif part[w] == i:
                newpart[w] = i if (sub >> t) & 1 else i + 1
                t += 1
        m_new = m + 1
    hastings[0] = math.log(nbd) - math.log(_split_join_count(newpart, m_new, n, sizes))
    return m_new


@numba.njit(cache=True, nogil=True)
def _propose(state, c, n, p_swap, newpart, sizes, hastings):
    """A proposal into ``newpart``, with its log Hastings ratio in ``hastings[0]`` (0 for
    the symmetric ones); returns its number of parts (0: no change)."""
    part = state.part[c]
    m = state.n_parts[c]
    hastings[0] = 0.0
    for v in range(n):
        newpart[v] = part[v]
    x = _rand(state.rng, c)
    if x >= p_swap + (1.0 - p_swap) / 2:
        return _split_join(state, c, n, newpart, sizes, hastings)
    if x < p_swap:
        a = min(int(_rand(state.rng, c) * n), n - 1)
        b = min(int(_rand(state.rng, c) * (n - 1)), n - 2)
        if b >= a:
            b += 1
        if part[a] == part[b]:
            return 0
        newpart[a], newpart[b] = part[b], part[a]
        return m
    v = min(int(_rand(state.rng, c) * n), n - 1)
    i = part[v]
    alone = True
    for w in range(n):
        if w != v and part[w] == i:
            alone = False
    mm = m - 1 if alone else m  # parts of the others
    if alone:
        for w in range(n):
            if newpart[w] > i:
                newpart[w] -= 1
    slot = min(int(_rand(state.rng, c) * (2 * mm + 1)), 2 * mm)
    if slot < mm:  # join part `slot` of the others
        newpart[v] = slot
        return mm
    g = slot - mm  # open a new part before part g of the others
    for w in range(n):
        if w != v and newpart[w] >= g:
            newpart[w] += 1
    newpart[v] = g
    return mm + 1


@numba.njit(cache=True, nogil=True)
def _record_partition(fam, look, state, c, r, rec, want_arcs, want_dags, n, cl, inb, idx):
    """Rao-Blackwellised arc probabilities of chain c's partition and a DAG drawn from it."""
    for v in range(n):
        pred = state.pred[c, v]
        score = state.node_score[c, v]
        if pred == 0:
            if want_dags:
                rec.dag_family[c, r, v] = fam.offset[v]
            continue
        u = _ranks_and_flags(v, pred, state.last[c, v], n, cl, inb)
        top, s = _node_sum(fam, look, v, pred, state.last[c, v], n, cl, inb, idx, rec.arc, c)
        if top == -np.inf or not math.isfinite(score):
            continue
        floor = top - look.cut[v]
        draw = _rand(state.rng, c) * s if want_dags else -0.5
        _, _, draw, last = _part_sets(fam, look, v, u, cl, inb, idx, 1, top, s, floor, draw, -1, rec.arc, c, r,
                                      want_arcs)
        if want_dags:
            rec.dag_family[c, r, v] = int(-1.0 - draw) if draw <= -1.0 else last


@numba.njit(cache=True, nogil=True)
def _partition_steps(fam, look, state, c, n_steps, thin, step0, p_swap, rec, r0, want_arcs, want_dags, accepted):
    n = state.part.shape[1]
    newpart = np.empty(n, dtype=np.int64)
    pred = np.empty(n, dtype=np.uint64)
    last = np.empty(n, dtype=np.uint64)
    pm = np.empty(n + 1, dtype=np.uint64)
    sizes = np.empty(n + 1, dtype=np.int64)
    hastings = np.zeros(1)
    new = np.empty(n)
    cl = np.empty(max(n, 1), dtype=np.int64)
    inb = np.empty(max(n, 1), dtype=np.bool_)
    idx = np.empty(max(look.k, 1), dtype=np.int64)
    r = r0
    for it in range(n_steps):
        if n >= 2:
            m = _propose(state, c, n, p_swap, newpart, sizes, hastings)
            if m > 0:
                _masks(newpart, m, n, pred, last, pm)
                delta = 0.0
                for v in range(n):
                    if pred[v] == state.pred[c, v] and last[v] == state.last[c, v]:
                        new[v] = state.node_score[c, v]
                        continue
                    top, s = _node_sum(fam, look, v, pred[v], last[v], n, cl, inb, idx, rec.arc, c)
                    new[v] = top + math.log(s) if top > -np.inf else -np.inf
                    delta += new[v] - state.node_score[c, v]
                if not math.isnan(delta) and math.log(1.0 - _rand(state.rng, c)) < delta + hastings[0]:
                    for v in range(n):
                        state.part[c, v] = newpart[v]
                        state.pred[c, v] = pred[v]
                        state.last[c, v] = last[v]
                        state.node_score[c, v] = new[v]
                    state.n_parts[c] = m
                    accepted[c] += 1
        if (step0 + it + 1) % thin == 0:
            total = 0.0
            for v in range(n):
                total += state.node_score[c, v]
            rec.log_score[c, r] = total
            _record_partition(fam, look, state, c, r, rec, want_arcs, want_dags, n, cl, inb, idx)
            r += 1


@numba.njit(cache=True, nogil=True, parallel=True)
def run_partition_chains(fam, look, state, n_steps, thin, step0, p_swap, rec, r0, want_arcs, want_dags, accepted):
    """Advance every chain ``n_steps`` MH steps (steps ``step0 + 1 ..``), recording at the
    multiples of ``thin`` into rows ``r0 + ..`` of ``rec`` (as :func:`bnexplore._order_dp.run_chains`)."""
    for c in numba.prange(state.part.shape[0]):
        _partition_steps(fam, look, state, c, n_steps, thin, step0, p_swap, rec, r0, want_arcs, want_dags, accepted)


@numba.njit(cache=True, nogil=True)
def initial_partition_scores(fam, look, state):
    """Fill ``pred``, ``last`` and ``node_score`` of every chain from its ``part``."""
    n_chains, n = state.part.shape
    pm = np.empty(n + 1, dtype=np.uint64)
    cl = np.empty(max(n, 1), dtype=np.int64)
    inb = np.empty(max(n, 1), dtype=np.bool_)
    idx = np.empty(max(look.k, 1), dtype=np.int64)
    arc = np.zeros((1, 1, 1, 1))
    for c in range(n_chains):
        _masks(state.part[c], state.n_parts[c], n, state.pred[c], state.last[c], pm)
        for v in range(n):
            top, s = _node_sum(fam, look, v, state.pred[c, v], state.last[c, v], n, cl, inb, idx, arc, c)
            state.node_score[c, v] = top + math.log(s) if top > -np.inf else -np.inf


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
