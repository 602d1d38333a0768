"""Counts and standard parameters of the subsets of a star, for the M* CPTs of Eq. 15.

The summary network's CPT of node ``X_i`` over its parents ``P_i^*`` (the *star*)
averages the standard parameters (Dash & Cooper, Eq. 3)

    theta_hat_g(x | j) = (N_gjx + alpha_gjx) / (N_gj + alpha_gj),
    alpha_gjx = 1 (K2)  or  ess / (q_g r) (BDeu),  alpha_gj = r alpha_gjx,

of every subset ``g`` of the star of at most ``max_parents`` members (``bnexplore._mstar``
builds Eq. 15 from them).  The subsets are visited depth first, each one a member
longer than its prefix, so a subset's counts ``N_gjx`` come from its prefix's by
splitting every configuration by the new member's state (the new member varies
fastest: configuration ``j a_u + d``).  Three ways of counting, chosen by the number of
rows ``N`` (row bitsets: ``W = ceil(N / 64)`` words of one bit per row):

* **binary**: a binary child over binary members while ``W <= BINARY_WORDS``: the row
  bitset of every configuration, split by one AND with the member's first state; the
  rows of each half and of the child's first state by two popcounts per word;
* **bitsets**: above ``KEY_ROWS`` rows, the row bitsets of the configurations that
  occur (at most :func:`bitset_capacity`), each kept within the word range of its
  prefix's;
* **row keys**: otherwise one key ``y q + j`` per row (``y`` the child's state), counted
  into a table of ``q r`` cells.

Each table is written *weighted* by the subset's posterior weight ``w_g`` and without
the child's last state (Eq. 15 gives it as one minus the others): ``table[x q + j] =
w_g theta_hat_g(x | j)`` for ``x < r - 1``.

Glossary
--------
rows
    :class:`TrainingRows`: the training data as ``codes`` (p, N) int32 states, row
    ``bits`` (p, max arity, W) uint64 of every (column, state), and ``arities``.
counts
    :class:`SubsetCounts`: the per-depth buffers of the three ways of counting.
depth
    The number of members of the subset being counted (the empty set at depth 0).
members
    The members of the current subset, in star order (the last one newest).
configuration
    An index ``j`` over the states of the members, the last member fastest; ``q`` of them.
meta
    Per kept configuration: (rows, configuration index, first word, end word).
k2_inverse
    ``1 / (m + r)`` for ``m`` rows (K2's denominator), empty under BDeu.
"""
from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np

from ._bits import _popcount
from ._order_walks import _ones
from .scores import _keys_of

__all__ = ["TrainingRows", "SubsetCounts", "BINARY_WORDS", "KEY_ROWS", "bitset_capacity", "and_popcount",
           "full_keys", "binary_extend", "extend_set", "eq3_table_binary", "eq3_table_bits", "eq3_table_keys",
           "start_counts"]

#: the training data as the M* kernels read it
TrainingRows = namedtuple("TrainingRows", ["codes", "bits", "arities"])

#: per-depth counting buffers of the subsets of a star (rows indexed by depth)
SubsetCounts = namedtuple("SubsetCounts", [
    "bitsets",            # (depth, capacity, W) row bitsets of the configurations that occur
    "meta",               # (depth, capacity, 4) their (rows, configuration, first word, end word)
    "n_bitsets",          # (depth,) configurations kept as bitsets
    "use_bitsets",        # (depth,) counted from bitsets (else from row keys)
    "keys",               # (depth, N) int32 row keys y q + j (keys[0]: the child's state y)
    "key_counts",         # (1 or 4, q r) int32 counts of the keys (4 interleaved copies on small tables)
    "binary_bitsets",     # (depth, 2^max_size, W) row bitsets of every configuration (binary mode)
    "binary_rows",        # (depth, 2^max_size) rows of each configuration (binary mode)
    "binary_child_rows",  # (depth, 2^max_size) of them, rows of the child's first state
    "binary_mode",        # (depth,) counted in binary mode
    "k2_inverse",         # (N + 1,) 1 / (m + r) under K2; empty under BDeu
])

# How the M* tables are counted: a binary child's, over binary members, from row bitsets
# of every configuration while the rows fit in BINARY_WORDS words (one AND and two
# popcounts per word and configuration); otherwise up to KEY_ROWS rows from row keys
# (one pass over the rows per subset); above it from row bitsets of the configurations
# that occur (one pass over their words), while they fit (see bitset_capacity).
BINARY_WORDS = 4
KEY_ROWS = 512


def bitset_capacity(n_rows: int) -> int:
    """Most parent configurations kept as row bitsets (configurations x words <= rows);
    0 (row keys throughout) up to ``KEY_ROWS`` rows.

    Examples
    --------
    >>> bitset_capacity(100), bitset_capacity(6400)
    (0, 64)
    """
    if n_rows <= KEY_ROWS:
        return 0
    W = max(1, (n_rows + 63) // 64)
    return max(1, n_rows // W)


@numba.njit(cache=True, nogil=True, inline="always")
def and_popcount(x, y, lo, hi):
    """Number of rows in both bitsets, whose words outside [lo, hi) are known zero in x."""
    c = np.uint64(0)
    if hi - lo <= 8:  # short: no slicing overhead
        for w in range(lo, hi):
            c += _popcount(x[w] & y[w])
        return np.int64(c)
    xs = x[lo:hi]
    ys = y[lo:hi]
    for w in range(xs.shape[0]):  # non-negative indices: the loop vectorises
        c += _popcount(xs[w] & ys[w])
    return np.int64(c)


@numba.njit(cache=True, nogil=True, _nrt=False)
def extend_bitsets(bitsets_in, meta_in, n_in, member_bits, member_arity, bitsets_out, meta_out):
    """Configurations of S + {u} that occur, from those of S: their row bitsets and
    ``meta`` (rows, index, first word, end word); u varies fastest in the index; a
    configuration's words stay within its parent's range.

    Returns the number kept, or -1 if more than ``bitsets_out`` holds.
    """
    cap = bitsets_out.shape[0]
    nz = 0
    for j in range(n_in):
        left = meta_in[j, 0]
        lo = meta_in[j, 2]
        hi = meta_in[j, 3]
        short = hi - lo <= 8
        for d in range(member_arity):
            if left == 0:
                break
            if d == member_arity - 1:  # the last state takes what is left
                for w in range(lo, hi):
                    x = bitsets_in[j, w]
                    for dd in range(member_arity - 1):
                        x &= ~member_bits[dd, w]
                    bitsets_out[nz, w] = x
                c = left
            elif short:  # few words: plain loop, no slicing overhead
                cu = np.uint64(0)
                for w in range(lo, hi):
                    x = bitsets_in[j, w] & member_bits[d, w]
                    bitsets_out[nz, w] = x
                    cu += _popcount(x)
                c = np.int64(cu)
            else:
                src = bitsets_in[j, lo:hi]
                dst = bitsets_out[nz, lo:hi]
                ub = member_bits[d, lo:hi]
                cu = np.uint64(0)
                for w in range(dst.shape[0]):  # non-negative indices: vectorises
                    x = src[w] & ub[w]
                    dst[w] = x
                    cu += _popcount(x)
                c = np.int64(cu)
            if c > 0:
                meta_out[nz, 0] = c
                meta_out[nz, 1] = meta_in[j, 1] * member_arity + d
                meta_out[nz, 2] = lo
                meta_out[nz, 3] = hi
                left -= c
                nz += 1
                if nz >= cap and (left > 0 or j < n_in - 1):
                    return -1
    return nz


@numba.njit(cache=True, nogil=True, _nrt=False)
def full_keys(rows, members, depth, keys):
    """``keys[depth]`` = the row keys ``y q + j`` of the set ``members[:depth]`` from
    scratch (``keys[0]`` holds the child's states y)."""
    arities = rows.arities
    _keys_of(rows.codes, arities, members, depth, keys[depth])
    q = 1
    for i in range(depth):
        q *= arities[members[i]]
    for t in range(keys.shape[1]):
        keys[depth, t] += keys[0, t] * q


@numba.njit(cache=True, nogil=True, _nrt=False)
def start_counts(rows, child, counts):
    """The empty set's counts at depth 0: every row in one configuration; binary mode
    when a binary child's rows fit (``counts.binary_bitsets`` has room), else row
    bitsets when ``counts.bitsets`` has room, else row keys."""
    n = rows.codes.shape[1]
    W = rows.bits.shape[2]
    child_bits = rows.bits[child]
    ccol = rows.codes[child]
    for t in range(n):
        counts.keys[0, t] = ccol[t]
    counts.binary_mode[0] = counts.binary_bitsets.shape[1] > 0
    if counts.binary_mode[0]:
        _ones(counts.binary_bitsets[0, 0], n)
        counts.binary_rows[0, 0] = n
        counts.binary_child_rows[0, 0] = 0
        for w in range(W):
            counts.binary_child_rows[0, 0] += np.int64(_popcount(child_bits[0, w]))
    counts.use_bitsets[0] = counts.bitsets.shape[1] > 0 and not counts.binary_mode[0]
    if counts.use_bitsets[0]:
        _ones(counts.bitsets[0, 0], n)
        counts.meta[0, 0, 0] = n
        counts.meta[0, 0, 1] = 0
        counts.meta[0, 0, 2] = 0
        counts.meta[0, 0, 3] = W
        counts.n_bitsets[0] = 1


@numba.njit(cache=True, nogil=True, _nrt=False, inline="always")
def binary_extend(counts, depth, n_configs, member_first, child_first, keep):
    """Binary child and binary new member u: the configurations of S + {u} from the
    ``n_configs`` of S at ``depth`` (u fastest: 2 j + its state), each with its rows and
    its rows of the child's first state, from one AND (``member_first``: u's first
    state) and two popcounts per word; the second of each pair is the rest.  With
    ``keep`` their row bitsets too (for the sets below)."""
    bs = counts.binary_bitsets
    bn = counts.binary_rows
    bc = counts.binary_child_rows
    W = bs.shape[2]
    s1 = depth + 1
    for c in range(n_configs):
        n = bn[depth, c]
        j = 2 * c
        m0 = 0
        c0 = 0
        for w in range(W):
            b = bs[depth, c, w]
            b0 = b & member_first[w]
            m0 += np.int64(_popcount(b0))
            c0 += np.int64(_popcount(b0 & child_first[w]))
            if keep:
                bs[s1, j, w] = b0
                bs[s1, j + 1, w] = b ^ b0
        bn[s1, j] = m0
        bn[s1, j + 1] = n - m0
        bc[s1, j] = c0
        bc[s1, j + 1] = bc[depth, c] - c0


@numba.njit(cache=True, nogil=True, _nrt=False)
def extend_set(rows, members, depth, bitsets, meta, n_bitsets, use_bitsets, keys):
    """Configurations of the set ``members[:depth + 1]`` from those of
    ``members[:depth]`` (not in binary mode): row bitsets while they fit
    (:func:`extend_bitsets`), otherwise row keys ``y q + j`` (the new member fastest).
    Sets ``use_bitsets`` and the bitsets or the keys at ``depth + 1``.  Takes the
    fields of :class:`SubsetCounts` it uses, not the bundle: it runs once per subset,
    and a bundle passed to a call costs its every field."""
    s1 = depth + 1
    u = members[depth]
    arities = rows.arities
    use_bitsets[s1] = False
    if use_bitsets[depth]:
        nz = extend_bitsets(bitsets[depth], meta[depth], n_bitsets[depth], rows.bits[u], arities[u], bitsets[s1],
                            meta[s1])
        if nz >= 0:
            use_bitsets[s1] = True
            n_bitsets[s1] = nz
            return
        full_keys(rows, members, s1, keys)  # the first set past the bitsets
        return
    au = arities[u]
    cu = rows.codes[u]
    for t in range(keys.shape[1]):
        keys[s1, t] = keys[depth, t] * au + cu[t]


@numba.njit(cache=True, nogil=True, _nrt=False)
def eq3_table_binary(table, weight, n_configs, alpha, config_rows, child_rows, k2_inverse):
    """``table[j]`` = ``weight`` x the standard parameter (Eq. 3) of a binary child's first
    state in configuration j, from the counts of :func:`binary_extend` (``alpha`` the
    pseudo-count of a cell)."""
    k2 = k2_inverse.shape[0] > 0
    for j in range(n_configs):
        f = weight * k2_inverse[config_rows[j]] if k2 else weight / (config_rows[j] + 2.0 * alpha)
        table[j] = (child_rows[j] + alpha) * f


@numba.njit(cache=True, nogil=True, _nrt=False)
def eq3_table_bits(table, weight, n_configs, r, alpha, bitsets, meta, n_bitsets, child_bits):
    """``table[x q + j]`` (x < r - 1) = ``weight`` x the standard parameter (Eq. 3) of child
    state x in configuration j, from the row bitsets of the configurations that occur
    (the others keep the uniform 1 / r)."""
    uniform = weight / r
    for c in range((r - 1) * n_configs):
        table[c] = uniform
    for j in range(n_bitsets):
        cfg = meta[j, 1]
        f = weight / (meta[j, 0] + alpha * r)  # one division per configuration
        for x in range(r - 1):
            table[x * n_configs + cfg] = (and_popcount(bitsets[j], child_bits[x], meta[j, 2], meta[j, 3]) + alpha) * f


@numba.njit(cache=True, nogil=True, _nrt=False)
def eq3_table_keys(table, weight, n_configs, r, alpha, keys, key_counts, k2_inverse):
    """:func:`eq3_table_bits` from the row keys ``y q + j``: counted into ``key_counts``
    (four interleaved copies when it has four rows, so that repeated keys do not wait
    on one another), then one division per configuration (none under K2)."""
    q = n_configs
    qr = q * r
    n = keys.shape[0]
    cnt = key_counts
    nc = cnt.shape[0]
    for h in range(nc):
        for c in range(qr):
            cnt[h, c] = 0
    t = 0
    if nc == 4:
        while t + 4 <= n:
            cnt[0, keys[t]] += 1
            cnt[1, keys[t + 1]] += 1
            cnt[2, keys[t + 2]] += 1
            cnt[3, keys[t + 3]] += 1
            t += 4
        for c in range(qr):
            cnt[0, c] += cnt[1, c] + cnt[2, c] + cnt[3, c]
    while t < n:
        cnt[0, keys[t]] += 1
        t += 1
    ar_ = alpha * r
    k2 = k2_inverse.shape[0] > 0
    for j in range(q):
        nj = 0
        for x in range(r):
            nj += cnt[0, x * q + j]
        f = weight * k2_inverse[nj] if k2 else weight / (nj + ar_)
        for x in range(r - 1):
            table[x * q + j] = (cnt[0, x * q + j] + alpha) * f


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
