"""The CPTs of the summary network M* (Dash & Cooper, Theorem 2, Eq. 14-15).

Node ``X_i`` of :math:`M^*` gets the parents ``P_i^*`` (the *star*, from Procedure 1)
and the CPT

    theta*(x | x_star) = sum_{g subset of star, |g| <= max_parents} w_g theta_hat_g(x | x_g),
    w_g = exp(w_i^g) / sum_{g'} exp(w_i^g')                                   (Eq. 14-15)

(the posterior weights of the admissible parent sets inside the star, normalised
over them; ``theta_hat_g`` the standard parameters of Eq. 3, counted by
``bnexplore._mstar_counts``).  Written out per subset the CPT costs ``Q`` cells for
every one of the ``sum_s C(n_star, s)`` subsets (``Q`` the star's configurations).
Instead each term is rewritten in **Moebius form** with respect to state 0 of its
members,

    psi_g(z) = sum_{y <= z, y_u in {0, z_u}} (-1)^{#(u : y_u != z_u)} theta_hat_g(y),
    so that  theta_hat_g(x_g) = sum_{z <= x_g} psi_g(z),

where ``z <= x`` means ``z_u in {0, x_u}`` for every member.  The forms of all subsets
are added into one table ``Psi`` at the star configurations they name (state 0 outside
``g``), and one **zeta transform** over the star's coordinates gives every cell at
once,

    theta*(x) = sum_{z <= x} Psi(z).

The work is ``|g| q_g`` per subset plus ``Q n_star / 2`` per child state, and nothing
the size of the CPT is kept per subset.  The child's last state is not transformed:
a row of Eq. 15 is a convex combination of distributions, so it is one minus the
others.

**All-binary stars** (binary child and members) halve the work once more: a subset
``g = h + {u}`` split by u's state has, in Moebius form, its first-state part where
``h``'s own table lands, so it is added into ``h``'s table before ``h`` is
transformed, and only the second-state part less the first is transformed and
placed (:func:`fold_binary`, :func:`binary_leaf_block`).

Glossary
--------
star
    :class:`Star`: the parents ``P_i^*`` of the child in star order, each one's
    ``stride`` in the star configurations (the last fastest), their number of
    configurations ``n_configs`` (``Q``), ``max_size`` (``min(max_parents, n_star)``),
    and the subsets' weights ``w_g`` at ``size_off[|g|] + colex rank of g``.
walk
    :class:`StarWalk`: the depth-first walk over the subsets, per depth: the members so
    far, their colex rank, configurations, the next star position to try, and the star
    configuration (``places``) of each configuration of the set at that depth (``places
    [places_off[d]:]``).
tables
    :class:`MoebiusTables`: the current subset's weighted table, each depth's table
    (all-binary stars), a set's second-state part, and ``psi`` ((r - 1) Q cells).
rows, counts
    As in ``bnexplore._mstar_counts``.
max_parents
    ``k``, the largest size of a parent set in the averaging.
"""
from __future__ import annotations

import math
import threading
from collections import namedtuple

import numba
import numpy as np

from ._bits import _popcount
from ._order_posterior import ParentSetLists
from ._mstar_counts import (BINARY_WORDS, SubsetCounts, TrainingRows, binary_extend, eq3_table_binary,
                            eq3_table_bits, eq3_table_keys, extend_set, full_keys, start_counts)

__all__ = ["Star", "StarWalk", "MoebiusTables", "Stars", "Batches", "CPTCells", "prefix_places", "moebius_scatter",
           "zeta_cpt", "binary_leaf_block", "fold_binary", "star_walk", "star_weights", "eq15_star_cpt",
           "eq15_star_cpts", "eq15_star_cpts_of", "mstar_work", "psi_scratch"]

#: the star of one child and the weights of its subsets
Star = namedtuple("Star", ["members", "stride", "n_configs", "max_size", "weight", "binom", "size_off"])

#: the depth-first walk over the subsets of a star (each array indexed by depth)
StarWalk = namedtuple("StarWalk", ["members", "colex_rank", "n_configs", "next_position", "places", "places_off"])

#: the tables of the Moebius forms and the Moebius table Psi
MoebiusTables = namedtuple("MoebiusTables", ["table", "depth_tables", "second_state", "psi"])

#: the summary network's parents: row v of ``members`` holds node v's star, ``length[v]`` of them
Stars = namedtuple("Stars", ["members", "length"])

#: the nodes dealt to the threads: batch b is ``nodes[off[b]:off[b + 1]]``, with its row of ``scratch`` for Psi
Batches = namedtuple("Batches", ["nodes", "off", "scratch"])

#: every node's CPT, node v's at ``cells[off[v]:off[v + 1]]``; ``done[v]`` once written
CPTCells = namedtuple("CPTCells", ["cells", "off", "done"])


# --------------------------------------------------------------------------- Moebius and zeta
@numba.njit(cache=True, nogil=True, _nrt=False, inline="always")
def prefix_places(star, walk, size):
    """(where the places of the prefix's configurations begin, the stride of the last
    member) of the set of ``size`` members on the walk; (0, 0) for the empty set."""
    if size > 0:
        return walk.places_off[size - 1], star.stride[walk.next_position[size - 1] - 1]
    return np.int64(0), np.int64(0)


@numba.njit(cache=True, nogil=True, _nrt=False)
def moebius_scatter(table, n_configs, n_planes, size, shift, arities, members, places, places_start, last_stride,
                    psi, n_star_configs):
    """Moebius form (state 0 of each member as the reference) of ``table`` (``n_planes``
    child states x ``n_configs`` configurations of ``members[:size]``, the last
    fastest), added into ``psi`` (planes of ``n_star_configs`` cells) at the star
    configurations: configuration j a + d (a the last member's states) at
    ``places[places_start + j] + d last_stride + shift`` (the prefix's places and the
    last member's stride, :func:`prefix_places`).  Plain arrays, not the walk's
    bundles: it runs once per subset and passing a bundle costs its every field.  The
    hot loops index with unsigned ints, so numba adds no negative-index wraparound."""
    tb = table
    q = n_configs
    rm = n_planes
    s = size
    elems = members
    io = places_start
    st = last_stride
    idx = places
    Q = n_star_configs
    ls = 1
    top = s - 1
    if s >= 3 and arities[elems[s - 1]] == 2 and arities[elems[s - 2]] == 2 and arities[elems[s - 3]] == 2:
        for o in range(np.uint64(0), np.uint64(rm * q), np.uint64(8)):  # the three fastest members binary
            v0 = tb[o]
            v1 = tb[o + 1]
            v2 = tb[o + 2]
            v3 = tb[o + 3]
            v4 = tb[o + 4]
            v5 = tb[o + 5]
            v6 = tb[o + 6]
            v7 = tb[o + 7]
            d1 = v1 - v0
            d3 = v3 - v2
            d5 = v5 - v4
            d7 = v7 - v6
            tb[o + 1] = d1
            tb[o + 2] = v2 - v0
            tb[o + 3] = d3 - d1
            tb[o + 4] = v4 - v0
            tb[o + 5] = d5 - d1
            tb[o + 6] = v6 - v4 - v2 + v0
            tb[o + 7] = d7 - d5 - d3 + d1
        ls = 8
        top = s - 4
    for i in range(top, -1, -1):
        a = arities[elems[i]]
        blk = ls * a
        if a == 2:
            for o in range(np.uint64(0), np.uint64(rm * q), np.uint64(blk)):
                for l in range(o, o + np.uint64(ls)):
                    tb[l + np.uint64(ls)] -= tb[l]
        else:
            for o in range(0, rm * q, blk):
                for d in range(1, a):
                    for l in range(o, o + ls):
                        tb[l + d * ls] -= tb[l]
        ls = blk
    a = np.uint64(arities[elems[s - 1]] if s > 0 else 1)
    for x in range(np.uint64(rm)):
        px = x * np.uint64(Q)
        tx = x * np.uint64(q)
        for j in range(np.uint64(q) // a):
            b = px + np.uint64(idx[np.uint64(io) + j] + shift)
            for d in range(a):
                psi[b + d * np.uint64(st)] += tb[tx + j * a + d]


@numba.njit(cache=True, nogil=True, _nrt=False)
def zeta_coord(psi, N, a, st):
    """psi(x) += psi(x with this digit 0) for the digits 1 .. a - 1 of the coordinate
    with stride ``st``, over ``psi[:N]``: long runs as views (they vectorise), the
    fastest coordinate as one tight loop."""
    blk = st * a
    if st >= 8:
        for o in range(0, N, blk):
            src = psi[o:o + st]
            for d in range(1, a):
                dst = psi[o + d * st:o + (d + 1) * st]
                for l in range(st):
                    dst[l] += src[l]
    elif st == 1:
        for o in range(0, N, a):
            v = psi[o]
            for d in range(1, a):
                psi[o + d] += v
    else:
        for o in range(0, N, blk):
            for d in range(1, a):
                for l in range(st):
                    psi[o + d * st + l] += psi[o + l]


@numba.njit(cache=True, nogil=True, _nrt=False)
def zeta_cpt(psi, Q, r, ar, stride, out):
    """theta*(x) = sum over z <= x of Psi(z) (``psi``: (r - 1) planes of Q cells; ``ar``
    and ``stride`` the star's arities and strides), then the CPT row-major (Q, r) into
    ``out``, the last state 1 minus the others."""
    rm = r - 1
    ns = ar.shape[0]
    N = rm * Q
    tail = ns >= 3 and ar[ns - 1] == 2 and ar[ns - 2] == 2 and ar[ns - 3] == 2
    for j in range(ns - 3 if tail else ns):
        zeta_coord(psi, N, ar[j], stride[j])
    if tail:  # the three fastest coordinates binary: all three on each block of 8 cells at once
        for o in range(0, N, 8):
            v0 = psi[o]
            v1 = psi[o + 1] + v0
            v2 = psi[o + 2] + v0
            v3 = psi[o + 3] + psi[o + 2] + v1
            v4 = psi[o + 4] + v0
            v5 = psi[o + 5] + psi[o + 4] + v1
            v6 = psi[o + 6] + psi[o + 4] + v2
            v7 = psi[o + 7] + psi[o + 6] + psi[o + 5] + psi[o + 4] + v3
            psi[o + 1] = v1
            psi[o + 2] = v2
            psi[o + 3] = v3
            psi[o + 4] = v4
            psi[o + 5] = v5
            psi[o + 6] = v6
            psi[o + 7] = v7
    for J in range(Q):
        tot = 0.0
        for x in range(rm):
            v = psi[x * Q + J]
            out[J * r + x] = v
            tot += v
        out[J * r + rm] = 1.0 - tot


# --------------------------------------------------------------------------- all-binary stars
@numba.njit(cache=True, nogil=True, _nrt=False)
def binary_leaf_block(size, rows, child, bdeu, ess, star, walk, counts, tables):
    """The leaves h + {u} (u at the star positions from ``walk.next_position[size]`` on)
    of the set h of ``size`` binary members at that depth (a binary child; h's
    weighted table in its depth table, its configurations' row bitsets, rows and child
    first-state rows in ``counts``).  In Moebius form a leaf's table splits by u's
    state: the part at u's first state lands where h's own table does, so it is added
    into h's table (transformed with it later, see :func:`fold_binary`); only the
    second-state part less the first (over h's configurations) is transformed per leaf
    and placed into ``psi`` with u's stride added."""
    s = size
    leaf = s + 1  # the leaves' size
    q = walk.n_configs[s]
    tb = tables.depth_tables[walk.places_off[s]:walk.places_off[s + 1]]
    lt = tables.second_state
    hb = counts.binary_bitsets[s]
    hn = counts.binary_rows[s]
    hc = counts.binary_child_rows[s]
    inv = counts.k2_inverse
    Y = rows.bits[child, 0]
    bits = rows.bits
    members = star.members
    ns = members.shape[0]
    colex = walk.colex_rank[s]
    places_start, last_stride = prefix_places(star, walk, s)
    W = hb.shape[1]
    two = W == 2  # up to 128 rows: two words, no word loop
    ag = ess / (4 * q) if bdeu else 1.0  # BDeu: ess / (a leaf's configurations x 2 child states)
    for pos in range(walk.next_position[s], ns):
        wg = star.weight[star.size_off[leaf] + colex + star.binom[pos, leaf]]
        if wg <= 0:
            continue
        X = bits[members[pos], 0]
        X0 = X[0]
        X1 = X[1] if two else np.uint64(0)
        Y0 = Y[0]
        Y1 = Y[1] if two else np.uint64(0)
        for c in range(np.uint64(q)):
            if W <= 2:
                b0 = hb[c, 0] & X0
                b1 = hb[c, 1] & X1 if two else np.uint64(0)
                m0 = np.int64(_popcount(b0) + _popcount(b1))
                c0 = np.int64(_popcount(b0 & Y0) + _popcount(b1 & Y1))
            else:
                m0 = 0
                c0 = 0
                for ww in range(W):
                    b0 = hb[c, ww] & X[ww]
                    m0 += np.int64(_popcount(b0))
                    c0 += np.int64(_popcount(b0 & Y[ww]))
            m1 = hn[c] - m0
            if bdeu:
                f0 = wg / (m0 + 2.0 * ag)
                f1 = wg / (m1 + 2.0 * ag)
            else:
                f0 = wg * inv[m0]
                f1 = wg * inv[m1]
            t0 = (c0 + ag) * f0
            tb[c] += t0
            lt[c] = (hc[c] - c0 + ag) * f1 - t0
        moebius_scatter(lt, q, 1, s, star.stride[pos], rows.arities, walk.members, walk.places, places_start,
                        last_stride, tables.psi, star.n_configs)
    walk.next_position[s] = ns


@numba.njit(cache=True, nogil=True, _nrt=False, inline="always")
def fold_binary(depth, arities, star, walk, tables):
    """All-binary stars: the set g = h + {u} at ``depth`` whose sets below are done, its
    table (h's configurations x u's state, u fastest, with the first-state parts of
    the sets below already added) split by u's state in Moebius form: the first-state
    part is added into h's table (it lands where h's does), the second less the first
    is transformed over h's members and placed with u's stride added.  So each table
    is transformed over all but one of its members, on half its cells."""
    h = depth - 1
    off = walk.places_off
    tg = tables.depth_tables[off[depth]:off[depth + 1]]
    th = tables.depth_tables[off[h]:off[h + 1]]
    lt = tables.second_state
    for c in range(np.uint64(walk.n_configs[h])):
        t0 = tg[c + c]
        th[c] += t0
        lt[c] = tg[c + c + np.uint64(1)] - t0
    places_start, last_stride = prefix_places(star, walk, h)
    moebius_scatter(lt, walk.n_configs[h], 1, h, star.stride[walk.next_position[h] - 1], arities, walk.members,
                    walk.places, places_start, last_stride, tables.psi, star.n_configs)


# --------------------------------------------------------------------------- the walk
@numba.njit(cache=True, nogil=True, _nrt=False)
def star_walk(rows, child, bdeu, ess, star, walk, counts, tables):
    """Every subset g (size <= ``star.max_size``) of the star, depth first (members in
    star order): its configurations' counts from its prefix's (``counts``: binary
    bitsets at depths in binary mode; else row bitsets of the configurations that
    occur where they fit; else row keys), its weighted table, and that table's
    Moebius form added into ``tables.psi`` (``(r - 1) Q`` cells, zeroed here).  With a
    binary child and an all-binary star each depth keeps its set's table until the
    sets below are done, and the set is then folded into its prefix's
    (:func:`fold_binary`; leaves in blocks, :func:`binary_leaf_block`).  A set's
    configurations' star places are written only for a set with sets below it (its
    own places are its prefix's plus its last member's state).  Runs on the caller's
    buffers (no reference counting)."""
    arities = rows.arities
    bits = rows.bits
    max_size = star.max_size
    members = star.members
    stride = star.stride
    ns = members.shape[0]
    r = arities[child]
    rm = r - 1
    child_bits = bits[child]
    elems = walk.members
    prank = walk.colex_rank
    qs = walk.n_configs
    nxt = walk.next_position
    idx = walk.places
    idx_off = walk.places_off
    psi = tables.psi
    tbd = tables.depth_tables
    for c in range(rm * star.n_configs):
        psi[c] = 0.0
    start_counts(rows, child, counts)
    bmode = counts.binary_mode
    allbin = bmode[0]  # binary child, few rows: binary bitsets while the members are binary
    for i in range(ns):
        allbin = allbin and arities[members[i]] == 2
    qs[0] = 1
    prank[0] = 0
    nxt[0] = 0
    idx[0] = 0
    depth = -1
    s1 = 0  # the empty set first
    while True:
        if s1 > depth:  # a new set at depth s1: its table, in Moebius form, into psi
            w = star.weight[star.size_off[s1] + prank[s1]]
            q = qs[s1]
            a = ess / (q * r) if bdeu else 1.0
            if allbin:  # its table, kept until the sets below it are done (fold_binary)
                tbs = tbd[idx_off[s1]:idx_off[s1 + 1]]
                eq3_table_binary(tbs, w, q, a, counts.binary_rows[s1], counts.binary_child_rows[s1],
                                 counts.k2_inverse)
                if s1 == max_size - 1 and s1 > 0 and nxt[s1] < ns:  # the sets below are all leaves: in one block
                    binary_leaf_block(s1, rows, child, bdeu, ess, star, walk, counts, tables)
            elif w > 0:
                tb = tables.table
                if bmode[s1]:
                    eq3_table_binary(tb, w, q, a, counts.binary_rows[s1], counts.binary_child_rows[s1],
                                     counts.k2_inverse)
                elif counts.use_bitsets[s1]:
                    eq3_table_bits(tb, w, q, r, a, counts.bitsets[s1], counts.meta[s1], counts.n_bitsets[s1],
                                   child_bits)
                else:
                    eq3_table_keys(tb, w, q, r, a, counts.keys[s1], counts.key_counts, counts.k2_inverse)
                # its configurations' places: its prefix's plus the last member's state
                places_start, last_stride = prefix_places(star, walk, s1)
                moebius_scatter(tb, q, rm, s1, 0, arities, elems, idx, places_start, last_stride, psi, star.n_configs)
            depth = s1
        if depth >= max_size or nxt[depth] >= ns:
            if allbin and depth > 0:  # the set and all below it done: into its prefix's table and psi
                fold_binary(depth, arities, star, walk, tables)
            depth -= 1
            if depth < 0:
                break
            s1 = depth
            continue
        pos = nxt[depth]
        nxt[depth] += 1
        u = members[pos]
        s1 = depth + 1
        elems[depth] = u
        prank[s1] = prank[depth] + star.binom[pos, s1]  # colex rank: members join in increasing position
        au = arities[u]
        q0 = qs[depth]
        qs[s1] = q0 * au
        keep = s1 < max_size and pos + 1 < ns  # sets below it: they need its configurations' places
        if keep:
            i0 = np.uint64(idx_off[depth])
            i1 = np.uint64(idx_off[s1])
            aw = np.uint64(au)
            sp = stride[pos]
            for j in range(np.uint64(q0)):  # (unsigned: no index wraparound)
                b = idx[i0 + j]
                for d in range(aw):
                    idx[i1 + j * aw + d] = b + np.int64(d) * sp
        bmode[s1] = bmode[depth] and au == 2
        if bmode[s1]:
            binary_extend(counts, depth, q0, bits[u, 0], child_bits[0], keep)
        elif bmode[depth]:  # a member with more states: row keys from here down
            counts.use_bitsets[s1] = False
            full_keys(rows, elems, s1, counts.keys)
        else:
            extend_set(rows, elems, depth, counts.bitsets, counts.meta, counts.n_bitsets, counts.use_bitsets,
                       counts.keys)
        nxt[s1] = pos + 1
    if allbin:
        psi[0] += tbd[0]  # the empty set's table, with the first-state parts of the sets below


# --------------------------------------------------------------------------- one CPT, every CPT
@numba.njit(cache=True, nogil=True)
def star_weights(members, max_parents, candidates, log_weight, binom):
    """The star's :class:`Star` (without strides): the weights ``w_g`` of the averaged
    sets (those inside the star, normalised over them), placed by size and colex rank,
    each looked up in the node's parent-set list (``log_weight`` over the
    :func:`~bnexplore._order_posterior.lex_parent_sets` list of ``candidates``)."""
    ns = members.shape[0]
    max_size = min(max_parents, ns)
    star_binom = np.zeros((ns + 1, max_size + 2), dtype=np.int64)
    for a in range(ns + 1):
        star_binom[a, 0] = 1
        for b in range(1, min(a, max_size + 1) + 1):
            star_binom[a, b] = star_binom[a - 1, b - 1] + (star_binom[a - 1, b] if b <= a - 1 else 0)
    size_off = np.zeros(max_size + 2, dtype=np.int64)
    for t in range(max_size + 1):
        size_off[t + 1] = size_off[t] + star_binom[ns, t]
    n_sub = size_off[max_size + 1]
    # the star's subsets depth first, each one's index in the candidates' list,
    # C(m, s) - 1 + sum_{t < s} C(m, t) - sum_e C(m - 1 - c_e, s - e) for members at
    # candidate positions c_0 < c_1 < ..., from running sums, one per size it may grow to
    m = candidates.shape[0]
    cp = np.empty(ns, dtype=np.int64)  # candidate position of each star member
    c = 0
    for i in range(ns):
        while candidates[c] != members[i]:
            c += 1
        cp[i] = c
    first = np.empty(max_size + 1, dtype=np.int64)  # the index of a set of size s, less its sum
    for sz in range(max_size + 1):
        first[sz] = binom[m, sz] - 1
        for t in range(sz):
            first[sz] += binom[m, t]
    part = np.zeros((max_size + 1, max_size + 1), dtype=np.int64)  # [depth, size]: the sum over the members so far
    colex = np.zeros(max_size + 1, dtype=np.int64)
    nxt = np.zeros(max_size + 1, dtype=np.int64)
    wr = np.empty(n_sub)
    top = log_weight[0]
    wr[0] = top  # the empty set
    d = 0
    while d >= 0:
        if d >= max_size or nxt[d] >= ns:
            d -= 1
            continue
        pos = nxt[d]
        nxt[d] += 1
        d1 = d + 1
        for sz in range(d1, max_size + 1):
            part[d1, sz] = part[d, sz] + binom[m - 1 - cp[pos], sz - d]
        colex[d1] = colex[d] + star_binom[pos, d1]
        lw = log_weight[first[d1] - part[d1, d1]]
        wr[size_off[d1] + colex[d1]] = lw
        top = max(top, lw)
        nxt[d1] = pos + 1
        d = d1
    tot = 0.0
    for i in range(n_sub):
        wr[i] = np.exp(wr[i] - top)
        tot += wr[i]
    for i in range(n_sub):
        wr[i] /= tot
    return wr, star_binom, size_off


@numba.njit(cache=True, nogil=True)
def eq15_star_cpt(rows, sets, child, members, max_parents, bdeu, ess, bitset_cap, scratch, out):
    """CPT (Q, r) of ``child`` in M*, row-major into ``out``: Eq. 15 over the parent
    sets inside the star ``members`` (see the module's docstring), whose weights
    follow the child's list in ``sets`` (:class:`~bnexplore._order_posterior.ParentSetLists`);
    ``scratch`` holds Psi."""
    candidates = sets.cand_flat[sets.cand_off[child]:sets.cand_off[child + 1]]
    log_weight = sets.log_weight[sets.set_off[child]:sets.set_off[child + 1]]
    arities = rows.arities
    n = rows.codes.shape[1]
    ns = members.shape[0]
    r = arities[child]
    rm = r - 1
    max_size = min(max_parents, ns)
    wr, star_binom, size_off = star_weights(members, max_parents, candidates, log_weight, sets.binom)
    # star strides (the last position fastest); the largest configuration count per depth
    ar = np.empty(ns, dtype=np.int64)
    stride = np.empty(ns, dtype=np.int64)
    Q = 1
    for i in range(ns - 1, -1, -1):
        ar[i] = arities[members[i]]
        stride[i] = Q
        Q *= ar[i]
    big = np.sort(ar)[::-1]
    idx_off = np.zeros(max_size + 2, dtype=np.int64)
    qd = 1
    for d in range(max_size + 1):
        idx_off[d + 1] = idx_off[d] + qd
        if d < max_size:
            qd *= big[d]
    qmax = qd
    W = rows.bits.shape[2]
    depths = max_size + 1
    nb = 1 << max_size if r == 2 and W <= BINARY_WORDS and max_size <= 8 else 0  # binary bitsets: every configuration
    counts = SubsetCounts(
        np.empty((depths, bitset_cap, W), dtype=np.uint64),
        np.zeros((depths, bitset_cap, 4), dtype=np.int64),
        np.zeros(depths, dtype=np.int64),
        np.zeros(depths, dtype=np.bool_),
        np.zeros((depths, n), dtype=np.int32),  # y q + j < 2^31: the caller's guard
        np.zeros((4 if qmax * r <= 4096 else 1, qmax * r), dtype=np.int32),
        np.empty((depths, nb, W), dtype=np.uint64),
        np.zeros((depths, nb), dtype=np.int64),
        np.zeros((depths, nb), dtype=np.int64),
        np.zeros(depths, dtype=np.bool_),
        np.empty(0 if bdeu else n + 1))  # K2: 1 / (rows + r) of a configuration
    inv = counts.k2_inverse
    for m in range(inv.shape[0]):
        inv[m] = 1.0 / (m + r)
    walk = StarWalk(np.zeros(depths, dtype=np.int64), np.zeros(depths, dtype=np.int64),
                    np.zeros(depths, dtype=np.int64), np.zeros(depths, dtype=np.int64),
                    np.zeros(idx_off[max_size + 1], dtype=np.int64), idx_off)
    tables = MoebiusTables(np.zeros(max(rm * qmax, 1)),
                           np.zeros(idx_off[max_size + 1] if nb > 0 else 0),  # each depth's table (all-binary)
                           np.zeros(max(qmax // 2, 1)),  # a set's second-state part (all-binary stars)
                           scratch[:rm * Q])
    star = Star(members, stride, Q, max_size, wr, star_binom, size_off)
    star_walk(rows, child, bdeu, ess, star, walk, counts, tables)
    # every row is a convex combination (weights summing to 1) of distributions
    zeta_cpt(tables.psi, Q, r, ar, stride, out)


@numba.njit(cache=True, nogil=True)
def eq15_star_cpts(codes, bits, arities, cand_flat, cand_off, log_weight, set_off, binom, star_members, star_len,
                   max_parents, bdeu, ess, bitset_cap, batch_nodes, batch_off, scratch, cpt_cells, cpt_off, done):
    """Every node's M* CPT (called from Python, so the bundles come as plain arrays:
    numba types a namedtuple argument in Python at every call, some microseconds each).
    The arguments, in order, are the fields of :class:`~bnexplore._mstar_counts.TrainingRows`,
    of :class:`~bnexplore._order_posterior.ParentSetLists` and of :class:`Stars`, then
    ``max_parents``, the prior, the bitset capacity, and the fields of :class:`Batches`
    and :class:`CPTCells`; see :func:`eq15_star_cpts_of`."""
    sets = ParentSetLists(cand_flat, cand_off, log_weight, set_off, binom)
    eq15_star_cpts_of(TrainingRows(codes, bits, arities), sets, Stars(star_members, star_len), max_parents, bdeu,
                      ess, bitset_cap, Batches(batch_nodes, batch_off, scratch), CPTCells(cpt_cells, cpt_off, done))


@numba.njit(cache=True, nogil=True)
def eq15_star_cpts_of(rows, sets, stars, max_parents, bdeu, ess, bitset_cap, batches, cpts):
    """Every node's M* CPT into ``cpts`` (:class:`CPTCells`; ``stars`` the parents,
    ``sets`` the parent-set lists); the node ``batches`` each with its row of scratch
    (:func:`~bnexplore._mstar_plan.star_cpts` launches one batch per Python thread,
    balanced by cells).  ``cpts.done[v]`` is set once node v's CPT is written (a failed
    allocation leaves it unset)."""
    for b in range(batches.off.shape[0] - 1):
        for i in range(batches.off[b], batches.off[b + 1]):
            v = batches.nodes[i]
            eq15_star_cpt(rows, sets, v, stars.members[v, :stars.length[v]], max_parents, bdeu, ess, bitset_cap,
                          batches.scratch[b], cpts.cells[cpts.off[v]:cpts.off[v + 1]])
            cpts.done[v] = True


def mstar_work(star_arities: list[int], r: int, max_parents: int) -> int:
    """Working cells of one M* CPT: the Moebius table Psi ((r - 1) Q) and the largest
    subset's table, counts and configuration indices.

    Examples
    --------
    >>> mstar_work([2, 2, 3], 2, 2)   # Psi: 12 cells; the largest subset: 5 x 6
    42
    """
    max_size = min(max_parents, len(star_arities))
    qmax = math.prod(sorted(star_arities, reverse=True)[:max_size])
    return (r - 1) * math.prod(star_arities) + (2 * r + 1) * qmax


_SCRATCH = threading.local()  # per thread: M* Psi tables, kept between calls (pages mapped)
_SCRATCH_KEEP = 1 << 23  # cells (64 MiB) of scratch kept between calls


def psi_scratch(rows: int, cells: int) -> np.ndarray:
    """A (rows, cells) float buffer for the M* Moebius tables, the calling thread's own
    (two sessions may build M* at the same time)."""
    buf = getattr(_SCRATCH, "buf", None)
    if buf is not None and buf.shape[0] >= rows and buf.shape[1] >= cells:
        return buf
    buf = np.empty((rows, max(cells, 1 << 16)))
    if buf.size <= _SCRATCH_KEEP:
        _SCRATCH.buf = buf
    return buf


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
