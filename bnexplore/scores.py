"""Sufficient statistics and decomposable local scores (K2, BDeu): the hot path.

The family score of a node ``X_i`` with parents ``Pa_i`` is the natural log of the
Dirichlet-multinomial marginal likelihood (Cooper & Herskovits 1992; Dash & Cooper
Eq. 6; Heckerman et al. 1995)::

    sum_j [ lgamma(a_ij) - lgamma(a_ij + N_ij) + sum_k ( lgamma(a_ijk + N_ijk) - lgamma(a_ijk) ) ]

with ``a_ijk = 1`` (K2) or ``a_ijk = ess / (q_i r_i)`` (BDeu), ``a_ij = sum_k a_ijk``.
Parent configurations that never occur contribute exactly zero.

Counting runs in numba kernels over mixed-radix codes, one pass over the rows per
family; scores are cached per (child, parent set).
"""
from __future__ import annotations

import math
from typing import Iterable, Sequence

import numba
import numpy as np
import pandas as pd
from numba import types
from numba.extending import intrinsic
from scipy.special import gammaln

from ._parallel import PARALLEL_LOCK
from .data.core import DiscreteData, MemoryBudgetError, as_discrete, check_table_size

__all__ = ["LocalScore", "family_counts", "standard_parameters", "score_order_families", "PRIORS"]

PRIORS = ("K2", "BDeu")

# A dense count table is used while q*r stays below this many cells (per family);
# larger tables are counted by sorting the row keys instead.
_DENSE_LIMIT = 1 << 18
# Largest memory for the per-first-parent sorted row bitsets of score_order_families.
_SORTED_BITS_BYTES = 1 << 28
# Sort the rows by the first parent only when bitsets are at least this many words long.
_SORT_MIN_WORDS = 4


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


@numba.njit(cache=True, nogil=True)
def _config_terms(nj, cell_sum, aj, a, bdeu, logfact, r):
    # contribution of one observed parent configuration
    if bdeu:
        return math.lgamma(aj) - math.lgamma(aj + nj) + cell_sum
    # K2: lgamma(r) - lgamma(r + N_j) + sum_k log(N_jk!)
    return logfact[r - 1] - logfact[r - 1 + nj] + cell_sum


@numba.njit(cache=True, nogil=True)
def _score_family(cols, child, parents, arities, bdeu, ess, logfact):
    r = arities[child]
    q = 1
    for p in parents:
        q *= arities[p]
    a = ess / (q * r)
    aj = ess / q
    lga = math.lgamma(a) if bdeu else 0.0
    n = cols.shape[1]
    total = 0.0
    if q * r <= max(_DENSE_LIMIT, 4 * n):
        # dense table: parent-configuration key per row built column by column
        keys = np.empty(n, dtype=np.int64)
        _keys_of(cols, arities, parents, parents.shape[0], keys)
        counts = np.zeros(4 * q * r, dtype=np.int64)
        return _score_from_keys(keys, cols[child], r, q, bdeu, ess, logfact, counts)
    # sparse: sort the keys and walk the runs
    keys = np.sort(_keys(cols, child, parents, arities))
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


def family_counts(data: DiscreteData | pd.DataFrame, child: str | int,
                  parents: Sequence[str | int] = ()) -> np.ndarray:
    """Contingency table ``N[j, k]`` of a family.

    Rows enumerate parent configurations in mixed radix over ``parents`` in the
    given order (the last parent varies fastest); columns are the child's states.

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
    data = as_discrete(data)
    c = data.index(child)
    ps = np.array(data.indices(parents), dtype=np.int64)
    check_table_size([data.arities[p] for p in ps] + [data.arities[c]],
                     [data.names[p] for p in ps] + [data.names[c]], what="count table")
    q = int(np.prod(data.arities[ps])) if ps.size else 1
    return _dense_counts(data.columns, c, ps, data.arities, q)


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
    if prior not in PRIORS:
        raise ValueError(f"prior must be one of {PRIORS}, got {prior!r}")
    if not (isinstance(ess, (int, float, np.floating, np.integer)) and math.isfinite(ess) and ess > 0):
        raise ValueError(f"ess (equivalent sample size) must be a positive number, got {ess!r}")


class LocalScore:
    """Cached decomposable family scores over a discrete data set.

    Parameters
    ----------
    data : DataFrame or DiscreteData
        Discrete data (see :class:`bnexplore.data.DiscreteData` for what is accepted).
    prior : {"K2", "BDeu"}
        Parameter prior: K2 (all Dirichlet hyperparameters 1) or BDeu with
        equivalent sample size ``ess``.
    ess : float
        Equivalent sample size of the BDeu prior (ignored by K2).
    cache : bool
        Keep every computed family score (keyed by child and sorted parent set).

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(1000, seed=0)
    >>> ls = bx.scores.LocalScore(df, prior="BDeu", ess=1.0)
    >>> s = ls.score("dysp", ["bronc", "either"])
    >>> bool(s > ls.score("dysp", []))  # the true parents explain dysp far better
    True
    """

    def __init__(self, data: DiscreteData | pd.DataFrame, prior: str = "K2", ess: float = 1.0,
                 cache: bool = True, missing: str = "raise"):
        _check_prior(prior, ess)
        self.data = as_discrete(data, missing=missing)
        self.prior = prior
        self.ess = float(ess)
        self._bdeu = prior == "BDeu"
        self._cols = self.data.columns
        self._arities = self.data.arities.astype(np.int64)
        n = self.data.n_rows
        self._logfact = gammaln(np.arange(n + int(self._arities.max()) + 2) + 1.0)
        self.use_cache = cache
        self._cache: dict[tuple[int, tuple[int, ...]], float] = {}

    # ------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return self.data.names

    @property
    def n_nodes(self) -> int:
        return self.data.n_cols

    def _key(self, node, parents) -> tuple[int, tuple[int, ...]]:
        c = self.data.index(node)
        ps = tuple(sorted(self.data.index(p) for p in parents))
        if c in ps:
            raise ValueError(f"{self.data.names[c]!r} cannot be its own parent")
        if len(set(ps)) != len(ps):
            raise ValueError(f"repeated parent in {list(parents)}")
        return c, ps

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
        key = self._key(node, parents)
        if self.use_cache:
            hit = self._cache.get(key)
            if hit is not None:
                return hit
        c, ps = key
        self._check_keys(ps)
        val = _score_family(self._cols, c, np.array(ps, dtype=np.int64), self._arities, self._bdeu,
                            self.ess, self._logfact)
        if self.use_cache:
            self._cache[key] = val
        return val

    def score_idx(self, c: int, ps: tuple[int, ...]) -> float:
        """Fast path for integer node and a *sorted* tuple of integer parents (no validation)."""
        key = (c, ps)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        val = _score_family(self._cols, c, np.array(ps, dtype=np.int64), self._arities, self._bdeu,
                            self.ess, self._logfact)
        if self.use_cache:
            self._cache[key] = val
        return val

    def score_many(self, node: str | int, parent_sets: Sequence[Iterable[str | int]]) -> np.ndarray:
        """Scores of many parent sets of one node, computed in one kernel call.

        Returns an array aligned with ``parent_sets``. Cached sets are not recomputed.
        """
        c = self.data.index(node)
        keys = [self._key(c, ps) for ps in parent_sets]
        out = np.empty(len(keys), dtype=np.float64)
        todo = []
        for i, key in enumerate(keys):
            hit = self._cache.get(key) if self.use_cache else None
            if hit is None:
                todo.append(i)
            else:
                out[i] = hit
        if todo:
            kmax = max(len(keys[i][1]) for i in todo)
            arr = np.zeros((len(todo), max(kmax, 1)), dtype=np.int64)
            sizes = np.empty(len(todo), dtype=np.int64)
            for row, i in enumerate(todo):
                ps = keys[i][1]
                self._check_keys(ps)
                arr[row, :len(ps)] = ps
                sizes[row] = len(ps)
            vals = _score_batch(self._cols, c, arr, sizes, self._arities, self._bdeu, self.ess,
                                self._logfact)
            for row, i in enumerate(todo):
                out[i] = vals[row]
                if self.use_cache:
                    self._cache[keys[i]] = vals[row]
        return out

    def score_array(self, node: int, parent_array: np.ndarray, sizes: np.ndarray | None = None) -> np.ndarray:
        """Uncached batch scoring from an integer array of parent sets (rows; -1 or ``sizes`` pads).

        For callers that enumerate many parent sets as arrays (e.g. order averaging).
        """
        arr = np.ascontiguousarray(parent_array, dtype=np.int64)
        if arr.ndim != 2:
            raise ValueError("parent_array must be 2-D (one parent set per row)")
        if sizes is None:
            sizes = (arr >= 0).sum(axis=1).astype(np.int64)
        arr = np.where(arr < 0, 0, arr)
        if arr.shape[1] == 0:
            arr = np.zeros((arr.shape[0], 1), dtype=np.int64)
        return _score_batch(self._cols, int(node), arr, np.asarray(sizes, dtype=np.int64), self._arities,
                            self._bdeu, self.ess, self._logfact)

    def total(self, dag) -> float:
        """Score of a whole DAG (networkx.DiGraph over the data's column names): sum of family scores."""
        return float(sum(self.score(v, list(dag.predecessors(v))) for v in dag.nodes))

    def clear_cache(self) -> None:
        self._cache.clear()

    def __repr__(self) -> str:
        extra = f", ess={self.ess}" if self._bdeu else ""
        return f"LocalScore({self.data!r}, prior={self.prior!r}{extra}, cached={len(self._cache)})"


# --------------------------------------------------------------------------- all parent sets under an order
@numba.njit(cache=True, nogil=True)
def _score_from_keys(keys, ccol, r, q, bdeu, ess, logfact, counts):
    """Family score from precomputed parent-configuration keys (one pass over the rows).

    ``counts`` must hold at least 4 q r zeros on entry; they are zero again on exit.
    Four interleaved histograms: consecutive rows that hit the same cell do not wait
    on each other's increments (skewed data is the common case).
    """
    n = keys.shape[0]
    a = ess / (q * r)
    aj = ess / q
    lga = math.lgamma(a) if bdeu else 0.0
    total = 0.0
    Z = q * r
    n4 = n - n % 4
    for t in range(0, n4, 4):
        counts[keys[t] * r + ccol[t]] += 1
        counts[Z + keys[t + 1] * r + ccol[t + 1]] += 1
        counts[2 * Z + keys[t + 2] * r + ccol[t + 2]] += 1
        counts[3 * Z + keys[t + 3] * r + ccol[t + 3]] += 1
    for t in range(n4, n):
        counts[keys[t] * r + ccol[t]] += 1
    for j in range(q):
        nj = 0
        cell = 0.0
        for x in range(r):
            i = j * r + x
            c = counts[i] + counts[Z + i] + counts[2 * Z + i] + counts[3 * Z + i]
            if c > 0:
                nj += c
                if bdeu:
                    cell += math.lgamma(a + c) - lga
                else:
                    cell += logfact[c]
                counts[i] = 0
                counts[Z + i] = 0
                counts[2 * Z + i] = 0
                counts[3 * Z + i] = 0
        if nj > 0:
            total += _config_terms(nj, cell, aj, a, bdeu, logfact, r)
    return total


@intrinsic
def _popcount(typingctx, x):
    """Number of set bits of a uint64 (LLVM ctpop)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return sig, codegen


@numba.njit(cache=True, nogil=True, inline="always")
def _and_popcount(x, y, lo, hi):
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


@numba.njit(cache=True, nogil=True)
def _score_set_bits(cb, meta, nz, singles, q, ml, s, elems, tbits, rbits, rowstart, vorder, lev_sorted,
                    arities, bdeu, ess, logfact, cand_pos, n_cand, size_off, binom, out_off, cnt, acc, consts,
                    out):
    """Scores of one parent set (its configurations as row bitsets) for every child the
    order allows, all children at once.

    Configuration j has row bitset ``cb[j]`` (uint64 words, zero outside words
    ``meta[j, 2]:meta[j, 3]``) and holds ``meta[j, 0]`` rows; ``singles`` more
    configurations hold one row each (their term does not depend on the child's
    value).  ``tbits[w, d] = rbits[d, w]`` is word w of the bitset of child-value row d: the
    children in ``vorder`` (sorted by level), each with its states but the last, so
    the admissible children (level > ml) are a suffix and one pass of popcounts per
    configuration gives every N_jx; the last state's count is the rest.
    """
    p = vorder.shape[0]
    i0 = np.searchsorted(lev_sorted, ml, side="right")
    if i0 >= p:
        return
    d0 = rowstart[i0]
    D = rowstart[p]
    for i in range(i0, p):  # per-child prior constants: a_ijk, a_ij, lgamma(a_ijk), one-row term
        r = arities[vorder[i]]
        acc[i] = 0.0
        if bdeu:
            a = ess / (q * r)
            aj = ess / q
            lga = math.lgamma(a)
            consts[i, 0] = a
            consts[i, 1] = aj
            consts[i, 2] = lga
            consts[i, 3] = _config_terms(1, math.lgamma(a + 1) - lga, aj, a, bdeu, logfact, r)
        else:
            consts[i, 0] = 1.0
            consts[i, 1] = 1.0
            consts[i, 2] = 0.0
            consts[i, 3] = logfact[r - 1] - logfact[r]
    for j in range(nz):
        tot = meta[j, 0]
        lo = meta[j, 2]
        hi = meta[j, 3]
        if hi - lo <= 8:  # few words: all rows per word (contiguous, vectorises)
            for d in range(d0, D):
                cnt[d] = 0
            for w in range(lo, hi):
                x = cb[j, w]
                row = tbits[w]
                for d in range(d0, D):
                    cnt[d] += _popcount(x & row[d])
        else:  # many words: vectorised reductions, four rows per pass over the words
            x = cb[j, lo:hi]
            d = d0
            while d + 4 <= D:
                r0 = rbits[d, lo:hi]
                r1 = rbits[d + 1, lo:hi]
                r2 = rbits[d + 2, lo:hi]
                r3 = rbits[d + 3, lo:hi]
                c0 = np.uint64(0)
                c1 = np.uint64(0)
                c2 = np.uint64(0)
                c3 = np.uint64(0)
                for w in range(x.shape[0]):
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
                cnt[d] = _and_popcount(cb[j], rbits[d], lo, hi)
                d += 1
        for i in range(i0, p):
            r = arities[vorder[i]]
            rest = tot
            cell = 0.0
            base = rowstart[i]
            for x in range(r - 1):
                c = np.int64(cnt[base + x])
                rest -= c
                if c > 0:
                    cell += (math.lgamma(consts[i, 0] + c) - consts[i, 2]) if bdeu else logfact[c]
            if rest > 0:
                cell += (math.lgamma(consts[i, 0] + rest) - consts[i, 2]) if bdeu else logfact[rest]
            acc[i] += _config_terms(tot, cell, consts[i, 1], consts[i, 0], bdeu, logfact, r)
    for i in range(i0, p):
        v = vorder[i]
        m = n_cand[v]
        rank = binom[m, s] - 1
        for e in range(s):
            rank -= binom[m - 1 - cand_pos[v, elems[e]], s - e]
        out[out_off[v] + size_off[v, s] + rank] = acc[i] + singles * consts[i, 3]


@numba.njit(cache=True, nogil=True)
def _score_children(cols, arities, level, elems, s, keys, q, ml, bdeu, ess, logfact, cand_pos, n_cand,
                    size_off, binom, out_off, counts, out):
    """Score the parent set ``elems[:s]`` (given its row keys) for every node the order
    allows it for, one child at a time."""
    p = cols.shape[0]
    dense = counts.shape[0]
    for v in range(p):
        if level[v] <= ml:
            continue
        r = arities[v]
        m = n_cand[v]
        rank = binom[m, s] - 1
        for i in range(s):
            rank -= binom[m - 1 - cand_pos[v, elems[i]], s - i]
        slot = out_off[v] + size_off[v, s] + rank
        if 4 * q * r <= dense:
            out[slot] = _score_from_keys(keys, cols[v], r, q, bdeu, ess, logfact, counts)
        else:
            out[slot] = _score_family(cols, v, elems[:s].copy(), arities, bdeu, ess, logfact)


@numba.njit(cache=True, nogil=True)
def _extend_bits(cb_in, meta_in, nz_in, ubits, au, cb_out, meta_out, drop_single):
    """Configurations of S + {u} that occur, from those of S (row bitsets and
    ``meta`` as in :func:`_score_from_bits`; u varies fastest in the index; a
    configuration's words stay within its parent's range).

    Returns (number kept, number of single-row configurations dropped); the first
    is -1 if more than ``cb_out`` holds.  With ``drop_single`` a configuration met
    by one row is only counted: it stays a single-row configuration in every
    superset, and its score term does not depend on the row.
    """
    cap = cb_out.shape[0]
    nz = 0
    singles = 0
    for j in range(nz_in):
        left = meta_in[j, 0]
        lo = meta_in[j, 2]
        hi = meta_in[j, 3]
        short = hi - lo <= 8
        for d in range(au):
            if left == 0:
                break
            if d == au - 1:  # the last state takes what is left
                for w in range(lo, hi):
                    x = cb_in[j, w]
                    for dd in range(au - 1):
                        x &= ~ubits[dd, w]
                    cb_out[nz, w] = x
                c = left
            elif short:  # few words: plain loop, no slicing overhead
                cu = np.uint64(0)
                for w in range(lo, hi):
                    x = cb_in[j, w] & ubits[d, w]
                    cb_out[nz, w] = x
                    cu += _popcount(x)
                c = np.int64(cu)
            else:
                src = cb_in[j, lo:hi]
                dst = cb_out[nz, lo:hi]
                ub = ubits[d, lo:hi]
                cu = np.uint64(0)
                for w in range(dst.shape[0]):  # non-negative indices: vectorises
                    x = src[w] & ub[w]
                    dst[w] = x
                    cu += _popcount(x)
                c = np.int64(cu)
            if c == 1 and drop_single:
                singles += 1
                left -= 1
            elif c > 0:
                meta_out[nz, 0] = c
                meta_out[nz, 1] = meta_in[j, 1] * au + d
                meta_out[nz, 2] = lo
                meta_out[nz, 3] = hi
                left -= c
                nz += 1
                if nz >= cap and (left > 0 or j < nz_in - 1):
                    return -1, singles
    return nz, singles


@numba.njit(cache=True, nogil=True)
def _tighten(cb, meta, nz):
    """Shrink each configuration's word range to its first and last non-zero word."""
    for j in range(nz):
        lo = meta[j, 2]
        hi = meta[j, 3]
        while lo < hi and cb[j, lo] == 0:
            lo += 1
        while hi > lo and cb[j, hi - 1] == 0:
            hi -= 1
        meta[j, 2] = lo
        meta[j, 3] = hi


@numba.njit(cache=True, nogil=True)
def _all_rows(n, W, cb, meta):
    """The empty parent set: one configuration (index 0) holding every row."""
    for w in range(W):
        cb[0, w] = ~np.uint64(0)
    if n % 64:
        cb[0, W - 1] = (np.uint64(1) << np.uint64(n % 64)) - np.uint64(1)
    meta[0, 0] = n
    meta[0, 1] = 0
    meta[0, 2] = 0
    meta[0, 3] = W


@numba.njit(cache=True, nogil=True)
def _row_bitsets(cols, arities):
    """bits[v, x] = bitset (uint64 words) of the rows where column v takes value x."""
    p, n = cols.shape
    return _row_bitsets_perm(cols, arities, np.arange(n))


@numba.njit(cache=True, nogil=True)
def _row_bitsets_perm(cols, arities, perm):
    """Like :func:`_row_bitsets` with the rows taken in the order ``perm``.

    Each output word is assembled in a register from 64 consecutive rows, one state
    at a time, so no word is read back from memory while it is built.
    """
    p, n = cols.shape
    W = max(1, (n + 63) // 64)
    mr = 1
    for v in range(p):
        mr = max(mr, arities[v])
    bits = np.zeros((p, mr, W), dtype=np.uint64)
    col = np.empty(n, dtype=cols.dtype)
    for v in range(p):
        c = cols[v]
        for t in range(n):
            col[t] = c[perm[t]]
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


@numba.njit(cache=True, nogil=True, parallel=True)
def _sorted_bitsets(cols, arities, firsts):
    """For each column u in ``firsts``: the row bitsets of every column with the rows
    stably sorted by u's value (the configurations of any parent set containing u then
    sit inside the block of u's value)."""
    p, n = cols.shape
    W = max(1, (n + 63) // 64)
    mr = 1
    for v in range(p):
        mr = max(mr, arities[v])
    out = np.zeros((firsts.shape[0], p, mr, W), dtype=np.uint64)
    for i in numba.prange(firsts.shape[0]):
        u = firsts[i]
        c = cols[u]
        start = np.zeros(arities[u] + 1, dtype=np.int64)  # counting sort: stable, O(n)
        for t in range(n):
            start[c[t] + 1] += 1
        for x in range(arities[u]):
            start[x + 1] += start[x]
        perm = np.empty(n, dtype=np.int64)
        for t in range(n):
            perm[start[c[t]]] = t
            start[c[t]] += 1
        out[i] = _row_bitsets_perm(cols, arities, perm)
    return out


@numba.njit(cache=True, nogil=True)
def _child_rows(sbits, arities, vorder):
    """tbits[c, w, d] = rbits[c, d, w]: word w of child-value row d of copy c, the
    rows being the states but the last of each child in ``vorder``; rowstart[i] =
    first row of child vorder[i].  Two layouts: word-major for short bitsets (one
    pass over the rows per word), row-major for long ones (one reduction per row)."""
    p = vorder.shape[0]
    rowstart = np.zeros(p + 1, dtype=np.int64)
    for i in range(p):
        rowstart[i + 1] = rowstart[i] + arities[vorder[i]] - 1
    C, _, _, W = sbits.shape
    D = max(rowstart[p], 1)
    tbits = np.zeros((C, W, D), dtype=np.uint64)
    rbits = np.zeros((C, D, W), dtype=np.uint64)
    for c in range(C):
        for i in range(p):
            v = vorder[i]
            for x in range(arities[v] - 1):
                d = rowstart[i] + x
                for w in range(W):
                    tbits[c, w, d] = sbits[c, v, x, w]
                    rbits[c, d, w] = sbits[c, v, x, w]
    return tbits, rbits, rowstart


def bitset_capacity(n_rows: int) -> int:
    """Most parent configurations kept as row bitsets (configurations x words <= rows)."""
    W = max(1, (n_rows + 63) // 64)
    return max(1, n_rows // W)


@numba.njit(cache=True, nogil=True)
def _extend_set(cols, arities, bits, elems, depth, cb, meta, nzs, usebits, keys, drop_single):
    """Configurations of the set ``elems[:depth + 1]`` from those of ``elems[:depth]``
    (depth-first search over parent sets): row bitsets while they fit
    (:func:`_extend_bits`), mixed-radix row keys otherwise.  Sets ``usebits``,
    ``nzs``, ``cb``, ``meta`` or ``keys`` at ``depth + 1``; returns the number of
    single-row configurations dropped (``drop_single``)."""
    s1 = depth + 1
    u = elems[depth]
    usebits[s1] = False
    if usebits[depth]:
        nz, singles = _extend_bits(cb[depth], meta[depth], nzs[depth], bits[u], arities[u], cb[s1],
                                   meta[s1], drop_single)
        if nz >= 0:
            usebits[s1] = True
            nzs[s1] = nz
            return singles
        _keys_of(cols, arities, elems, s1, keys[s1])
        return 0
    au = arities[u]
    cu = cols[u]
    for t in range(keys.shape[1]):
        keys[s1, t] = keys[depth, t] * au + cu[t]
    return 0


@numba.njit(cache=True, nogil=True)
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


@numba.njit(cache=True, nogil=True, parallel=True)
def _order_family_scores(cols, arities, level, k, bdeu, ess, logfact, sbits, tbits, rbits, rowstart, vorder,
                         slot, cap, cand_pos, n_cand, size_off, binom, out_off, items, dense, out):
    """Every parent set of size <= k of every node under a (partial) order, one DFS.

    Work item ``(u0, u1)``: the empty set (-1, -1), a single parent (u0, -1), or the
    subtree of sets whose two smallest members are u0 < u1.  A set's configurations
    are built once from its prefix's (row bitsets of the configurations that occur
    while they are few, mixed-radix row keys otherwise) and shared by every node the
    set can be a parent set of.  The bitsets of item (u0, .) index the rows sorted by
    u0 (``sbits[slot[u0]]``, and ``tbits`` as child-value rows), so every configuration's
    words lie inside the block of its u0 value and only those are visited.
    """
    p, n = cols.shape
    W = sbits.shape[3]
    maxlev = level.max()
    for ii in numba.prange(items.shape[0]):
        u0 = items[ii, 0]
        u1 = items[ii, 1]
        bits = sbits[slot[max(u0, 0)]]
        tb = tbits[slot[max(u0, 0)]]
        rb = rbits[slot[max(u0, 0)]]
        lev_sorted = level[vorder]
        cnt = np.zeros(tb.shape[1], dtype=np.uint64)
        acc = np.zeros(p)
        consts = np.zeros((p, 4))
        counts = np.zeros(dense, dtype=np.int64)
        keys = np.zeros((k + 1, n), dtype=np.int64)
        cb = np.empty((k + 1, cap, W), dtype=np.uint64)
        meta = np.zeros((k + 1, cap, 4), dtype=np.int64)
        nzs = np.zeros(k + 1, dtype=np.int64)
        n1s = np.zeros(k + 1, dtype=np.int64)
        usebits = np.zeros(k + 1, dtype=np.bool_)
        elems = np.zeros(k + 1, dtype=np.int64)
        qs = np.ones(k + 1, dtype=np.int64)
        mls = np.full(k + 1, -1, dtype=np.int64)
        nxt = np.zeros(k + 2, dtype=np.int64)
        _all_rows(n, W, cb[0], meta[0])
        nzs[0] = 1
        usebits[0] = True
        if u0 < 0:
            _score_set_bits(cb[0], meta[0], 1, 0, 1, -1, 0, elems, tb, rb, rowstart, vorder, lev_sorted,
                            arities, bdeu, ess, logfact, cand_pos, n_cand, size_off, binom, out_off, cnt,
                            acc, consts, out)
            continue
        last = 2 if u1 >= 0 else 1
        depth = 0
        while True:
            # ---- build the set of size depth + 1 (elems[depth] = u)
            if depth < last:
                u = u0 if depth == 0 else u1
            else:
                if depth >= k or nxt[depth] >= p:
                    depth -= 1
                    if depth < last:
                        break
                    continue
                u = nxt[depth]
                nxt[depth] += 1
            ml = max(mls[depth], level[u])
            if ml >= maxlev:
                if depth < last:
                    break
                continue
            s1 = depth + 1
            elems[depth] = u
            qs[s1] = qs[depth] * arities[u]
            mls[s1] = ml
            singles = _extend_set(cols, arities, bits, elems, depth, cb, meta, nzs, usebits, keys, True)
            if usebits[s1]:
                n1s[s1] = n1s[depth] + singles
                if s1 == 1:
                    _tighten(cb[1], meta[1], nzs[1])
            if s1 >= last:
                if usebits[s1]:
                    _score_set_bits(cb[s1], meta[s1], nzs[s1], n1s[s1], qs[s1], ml, s1, elems, tb, rb,
                                    rowstart, vorder, lev_sorted, arities, bdeu, ess, logfact, cand_pos,
                                    n_cand, size_off, binom, out_off, cnt, acc, consts, out)
                else:
                    _score_children(cols, arities, level, elems, s1, keys[s1], qs[s1], ml, bdeu, ess,
                                    logfact, cand_pos, n_cand, size_off, binom, out_off, counts, out)
            depth = s1
            nxt[depth] = u + 1
            if depth == last and last == 1:
                break  # single-parent items do not extend
    return out


def score_order_families(data: DiscreteData | pd.DataFrame, level: Sequence[int], k: int,
                         prior: str = "K2", ess: float = 1.0) -> list[np.ndarray]:
    """Scores of every parent set of size <= ``k`` of every node under a (partial) order.

    Node ``v`` may take parents among the nodes ``u`` with ``level[u] < level[v]``
    (a total order gives every node its own level).  The sets of ``v`` are its
    candidates (sorted by column index) taken by size, then in lexicographic order,
    as ``itertools.combinations`` lists them.  A parent set's configuration codes
    are computed once (from the codes of its prefix) and shared by every node it can
    be a parent set of, and the work runs on all numba threads.

    Parameters
    ----------
    data : DataFrame or DiscreteData
    level : sequence of int
        Level of each column (the position in a total order, or the block of a
        partial order).
    k : int
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
    >>> df = bx.networks.load("asia").sample(500, seed=0)
    >>> level = list(range(df.shape[1]))            # the column order is a total order
    >>> scores = score_order_families(df, level, k=2)
    >>> ls = LocalScore(df, cache=False)
    >>> last = df.shape[1] - 1
    >>> sets = [c for s in range(3) for c in itertools.combinations(range(last), s)]
    >>> bool(np.allclose(scores[last], [ls.score(last, list(c)) for c in sets]))
    True
    """
    _check_prior(prior, ess)
    data = as_discrete(data)
    p, n = data.n_cols, data.n_rows
    level = np.asarray(level, dtype=np.int64)
    if level.shape != (p,):
        raise ValueError(f"level must give one level per column ({p}), got shape {level.shape}")
    k = int(k)
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    arities = data.arities.astype(np.int64)
    cols = data.columns
    cand = [np.nonzero(level < level[v])[0] for v in range(p)]
    n_cand = np.array([c.size for c in cand], dtype=np.int64)
    kk = min(k, int(n_cand.max(initial=0)))
    cand_pos = np.full((p, p), -1, dtype=np.int64)
    for v in range(p):
        cand_pos[v, cand[v]] = np.arange(cand[v].size)
    binom = np.array([[math.comb(a, b) for b in range(kk + 2)] for a in range(p + 1)], dtype=np.int64)
    size_off = np.zeros((p, kk + 2), dtype=np.int64)
    counts_v = np.zeros(p, dtype=np.int64)
    for v in range(p):
        for s in range(1, kk + 2):
            add = binom[n_cand[v], s - 1] if s - 1 <= min(kk, n_cand[v]) else 0
            size_off[v, s] = size_off[v, s - 1] + add
        counts_v[v] = size_off[v, min(kk, n_cand[v]) + 1]
    out_off = np.concatenate([[0], np.cumsum(counts_v)]).astype(np.int64)
    # work items: the empty set, single parents, and the subtrees under each pair
    maxlev = level.max()
    blocks = [np.array([[-1, -1]], dtype=np.int64)]
    if kk >= 1:
        single = np.nonzero(level < maxlev)[0]
        blocks.append(np.stack([single, np.full(single.size, -1)], axis=1))
    if kk >= 2:
        iu, iw = np.triu_indices(p, 1)
        keep = np.maximum(level[iu], level[iw]) < maxlev
        pairs = np.stack([iu[keep], iw[keep]], axis=1)
        rng = np.random.default_rng(0)  # interleave big and small subtrees across threads
        blocks.append(pairs[rng.permutation(pairs.shape[0])])
    items = np.ascontiguousarray(np.concatenate(blocks).astype(np.int64))
    dense = int(4 * max(2 * n, 64))  # key-mode tables up to 2n cells (4 lanes)
    cap = bitset_capacity(n)
    W = max(1, (n + 63) // 64)
    firsts = np.unique(items[:, 0][items[:, 0] >= 0]).astype(np.int64)
    slot = np.zeros(p, dtype=np.int64)
    sorted_bytes = firsts.size * p * int(arities.max()) * W * 8
    if W >= _SORT_MIN_WORDS and firsts.size and sorted_bytes <= _SORTED_BITS_BYTES:
        with PARALLEL_LOCK:
            sbits = _sorted_bitsets(cols, arities, firsts)
        slot[firsts] = np.arange(firsts.size)
    else:  # few words per bitset (or too much memory): one unsorted copy
        sbits = _row_bitsets(cols, arities)[None]
    vorder = np.argsort(level, kind="stable").astype(np.int64)
    tbits, rbits, rowstart = _child_rows(sbits, arities, vorder)
    logfact = gammaln(np.arange(n + int(arities.max()) + 2) + 1.0)
    out = np.full(int(out_off[-1]), np.nan)
    with PARALLEL_LOCK:
        _order_family_scores(cols, arities, level, kk, prior == "BDeu", float(ess), logfact, sbits, tbits,
                             rbits, rowstart, vorder, slot, cap, cand_pos, n_cand, size_off, binom, out_off,
                             items, dense, out)
    return [out[out_off[v]:out_off[v + 1]] for v in range(p)]
