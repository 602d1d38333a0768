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

import functools
import math
from typing import Iterable, Mapping, Sequence

import numba
import numpy as np
import pandas as pd
from scipy.special import gammaln

from ._bits import _compress, _fetch_add, _popcount
from ._parallel import PARALLEL_LOCK
from .data.core import DiscreteData, MemoryBudgetError, as_discrete, check_table_size, get_table_budget

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
    >>> df = bx.networks.load("asia").sample(1000, seed=0)
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
        key = self._key(node, parents)
        if self.use_cache:
            hit = self._cache.get(key)
            if hit is not None:
                return hit
        c, ps = key
        self._check_keys(ps)
        val = _score_family(self._cols_for(c, ps), c, np.array(ps, dtype=np.int64), self._arities, self._bdeu,
                            self.ess, self._logfact)
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
            raise IndexError(f"score_idx: node {c!r} or parents {ps!r} are not column indices 0 .. {p - 1}: "
                             f"use score() with column names")
        if c in ps:
            raise ValueError(f"score_idx: node {c} is among its own parents {ps}")
        if len(ps) > self._safe_parents:
            self._check_keys(ps)
        val = _score_family(self._cols_for(c, ps), c, np.array(ps, dtype=np.int64), self._arities, self._bdeu,
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
            members = () if self.data.missing is None else np.unique(
                [u for i in todo for u in keys[i][1]]).astype(np.int64)
            vals = _score_batch(self._cols_for(c, members), c, arr, sizes, self._arities, self._bdeu, self.ess,
                                self._logfact)
            for row, i in enumerate(todo):
                out[i] = vals[row]
                if self.use_cache:
                    self._cache[keys[i]] = vals[row]
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
            raise IndexError(f"node {node} is not a column index 0 .. {p - 1}")
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
                raise IndexError("parent_array has a negative member within sizes: members are column indices")
        arr = np.where(member, arr, 0)
        if arr.size:
            if arr.max() >= p:
                raise IndexError(f"parent_array holds {int(arr.max())}, not a column index 0 .. {p - 1}")
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
        return _score_batch(self._cols_for(node, members), node, arr, sizes, self._arities,
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


@numba.njit(cache=True, nogil=True)
def _ones(B, m):
    """B[:ceil(m/64)] = the bitset of rows 0 .. m-1."""
    full = m // 64
    for w in range(full):
        B[w] = ~np.uint64(0)
    if m % 64:
        B[full] = (np.uint64(1) << np.uint64(m % 64)) - np.uint64(1)


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
def _bdeu_config(tot, B, Wc, comp, compT, i0, rowstart, vorder, arities, cst, acc, cnt):
    """Add the BDeu term of one configuration (``tot`` rows, bitset ``B`` of ``Wc`` words
    over the packed rows ``comp`` / ``compT``) to ``acc[i]`` of every child
    ``vorder[i]``, ``i >= i0``; ``cst[i]`` = (a_ijk, a_ij, lgamma(a_ijk), lgamma(a_ij))."""
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
def _subtree_sets(pel, sP, first, maxext, arities, node_i0, vorder, bdeu, ess,
                  set_last, set_s, set_q, set_i0, set_par, subsz, cst, acc, nsing):
    """Preorder list of the sets P + T of one work item (P = ``pel[:sP]``, T any subset of
    ``first .. p-1`` with at most ``maxext`` members, in lexicographic depth-first
    order), leaving out the members of the last level (a set with one has no child;
    the walks skip them too).  Per set: last member (the others are its parent's),
    size, first admissible child (position in ``vorder``: the latest ``node_i0`` of its
    members), parent in the list and subtree size, and under BDeu its q; also zeroes
    its accumulators and fills the BDeu constants.  Returns the number of sets."""
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
    if maxext > 0 and first < p:
        st = np.zeros(maxext + 1, dtype=np.int64)
        nx = np.zeros(maxext + 1, dtype=np.int64)
        nx[0] = first
        t = 0
        while t >= 0:
            cur = st[t]
            if t >= maxext or nx[t] >= p:
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
def _write_sets(nsets, psingles, pel, set_last, set_s, set_i0, set_par, nsing, acc, mlogr, vorder, bdeu, obase, rk,
                sing, nxt, out):
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
def _transpose_rows(comp, Wc, d0, D, compT):
    if Wc <= 8:
        for d in range(d0, D):
            for w in range(Wc):
                compT[w, d] = comp[d, w]


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
def _k2_part(m, bb, b, Wc, comp, compT, i0, rowstart, vorder, arities, logfact, cntd, celld, acc, j):
    """Add the K2 term of one configuration (``m`` rows, bitset ``bb[b]``) to ``acc[j, i]``
    of every child ``vorder[i]``, ``i >= i0``; keep its counts in ``cntd[b]`` (per
    child-value row) and the sum of log n_ijk! per child in ``celld[b]``, for the
    splits below it."""
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
def _k2_unterm(m, i0, vorder, arities, logfact, celld, st, acc, j):
    """Take the K2 term of a configuration (``m`` rows, ``celld[st]`` from
    :func:`_k2_part`) out of ``acc[j, i]``, ``i >= i0``: the configuration is split."""
    for i in range(i0, vorder.shape[0]):
        r = arities[vorder[i]]
        acc[j, i] -= logfact[r - 1] - logfact[r - 1 + m] + celld[st, i]


@numba.njit(cache=True, nogil=True, inline="always")
def _k2_binary_split(bb, t, Wc, m, c0, rs, comp, compT, i0, rowstart, vorder, arities, logfact, cntd, celld, st,
                     acc, j):
    """K2 change of ``acc[j, i]`` for every child ``vorder[i]``, ``i >= i0``, when a
    binary parent (packed row ``rs`` = its first state) splits the configuration
    ``bb[t]`` (``m`` rows; counts and cell sums at ``st``) into ``c0`` and ``m - c0``
    rows: the first part (into ``bb[t + 1]``) is counted, the second is the rest."""
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
def _score_block(m, Wc, comp, compT, d_from, i0, bb, rowstart, vorder, arities, bdeu, logfact, cst, acc, cnt,
                 cntd, celld):
    """Score one configuration whose ``m`` rows are all of the packed rows ``comp``
    (``Wc`` words, rows from ``d_from`` filled): the word-major copy, the all-rows
    bitset in ``bb[0]``, and its term in ``acc[0]`` for every child from position
    ``i0`` (under K2 its counts and cell sums go to ``cntd[0]`` and ``celld[0]``)."""
    p = vorder.shape[0]
    _transpose_rows(comp, Wc, d_from, rowstart[p], compT)
    _ones(bb[0], m)
    if i0 >= p:
        return
    if bdeu:
        _bdeu_config(m, bb[0], Wc, comp, compT, i0, rowstart, vorder, arities, cst[0], acc[0], cnt)
    else:
        _k2_part(m, bb, 0, Wc, comp, compT, i0, rowstart, vorder, arities, logfact, cntd, celld, acc, 0)


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


@numba.njit(cache=True, nogil=True, _nrt=False)
def _binary_subtree(m, u1, maxext, comp, compT, lb, lm, nl, xs, cid, nodepos, node_i0, set_i0, subsz, acc, tt):
    """:func:`_config_subtree` under K2 when every variable is binary and the
    configuration of the pair whose sets below are walked has
    at most 64 rows (one word; ``u1`` its last member, the walk's sets add up to
    ``maxext`` later ones): the same differences, set by set instead of configuration
    by configuration.  Each set holds the list of its configurations of two rows or
    more (bitset ``lb``, rows ``lm``); x splits each configuration in one AND, and a
    split changes ``acc[j, i]`` by the terms of its two parts less its own, from two
    popcounts per child (the configuration's count of the child's state 0 and its
    first part's: recounting costs less than storing the counts for the sets below)
    and the table ``tt[m, n]`` (the K2 term of m rows, n of them in state 0), in
    :func:`_split_list`.  (Child position i has packed row i: every child is binary.)
    The hot loops index with unsigned ints, so numba adds no negative-index wraparound
    (about a fifth of this walk's time)."""
    p = nodepos.shape[0]
    lb[0, 0] = _low_bits(m)
    lm[0, 0] = m
    nl[0] = 1
    d = 0
    xs[0] = u1 + 1
    cid[0] = 1
    one = np.uint64(1)
    cT = compT[0]
    while d >= 0:
        du = np.uint64(d)
        x = xs[du]
        if d >= maxext or x >= p:
            d -= 1
            continue
        xs[du] = x + 1
        if node_i0[np.uint64(x)] >= p:  # the last level: not listed (no child)
            continue
        jj = cid[du]
        j = np.uint64(jj)
        cid[du] = jj + subsz[j]
        i0 = set_i0[j]
        X0 = comp[np.uint64(nodepos[np.uint64(x)]), 0]  # rows where x takes its first state
        deeper = d + 1 < maxext and subsz[j] > 1
        d1 = du + one
        n1 = _split_list(lb, lm, du, nl[du], X0, cT, i0, p, tt, acc[j], deeper)
        if deeper:
            nl[d1] = n1
            xs[d1] = x + 1
            cid[d1] = jj + 1
            d += 1


@numba.njit(cache=True, nogil=True, _nrt=False)
def _binary_whole(pel, sP, maxext, ng, gm, cTs, lb2, lm2, nl2, accd, acc0, i0root, xs, mem, i0d, nodepos,
                  node_i0, vorder, obase, rk, nxt, tt, out):
    """Every set P + T below P = ``pel[:sP]`` (one or two members; T of later members,
    at most ``maxext``) under K2 with every variable binary and each configuration g of
    P in one word (``gm[g]`` rows, packed rows ``cTs[g]``, ``ng`` of them): the binary
    set walk of :func:`_binary_subtree` over all of P's configuration lists at once,
    so that a set is done when it is visited: its scores (its parent's, ``accd`` of
    the depth above, plus its differences) go straight to ``out`` and stay in ``accd``
    for the sets below it; no set list, no accumulator per set.  ``acc0``: the scores of
    P (children from position ``i0root``), ``nxt`` as in :func:`_write_sets`, carried
    on from P's own.  The sets come in the same order and their scores are summed in
    the same order as through the set list, so the results are the same bit for bit."""
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
    while d >= 0:
        du = np.uint64(d)
        x = xs[du]
        if d >= maxext or x >= p:
            d -= 1
            continue
        xs[du] = x + 1
        if node_i0[np.uint64(x)] >= p:  # the last level: no set with it has a child
            continue
        i0 = max(i0d[du], node_i0[np.uint64(x)])
        xp = np.uint64(nodepos[np.uint64(x)])
        deeper = d + 1 < maxext and x < lastlive
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
def _config_subtree(m, Wc, u1, maxext, comp, compT, bb, cnt, xs, ds, cid, lft, bcnt, src, cntd, celld,
                    arities, rowstart, nodepos, node_i0, vorder, set_i0, subsz, nsing, acc, cst, bdeu, logfact):
    """Inside one configuration of a pair P (its ``m`` rows packed in ``comp``; under K2
    its counts and cell sums in ``cntd[0]``, ``celld[0]``): every configuration of every
    set P + T (T of members after ``u1``, at most ``maxext``), depth first, one bitset
    per depth.  Single-row configurations are only counted (``nsing``).

    K2 (``bdeu`` false) works by differences: ``acc`` of a set gets the terms of the
    configurations its last member splits, minus those of the configurations split
    (the rest it shares with its parent in the list, added at the end); a
    configuration the last member does not split costs nothing, and a binary last
    member with nothing below is counted on one side only.  BDeu terms depend on the
    number of parent configurations, so there every configuration of every set is
    scored in full.  All arrays are indexed in place (no row views in the loop)."""
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
                        _k2_binary_split(bb, t, Wc, mt, c0, rs, comp, compT, i0, rowstart, vorder, arities,
                                         logfact, cntd, celld, st, acc, j)
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
                _k2_unterm(mt, i0, vorder, arities, logfact, celld, src[t], acc, j)
            if c == 1:
                nsing[j] += 1
                ds[t] += 1
                continue
            if delta:
                _k2_part(c, bb, t1, Wc, comp, compT, i0, rowstart, vorder, arities, logfact, cntd, celld, acc, j)
            else:
                _bdeu_config(c, bb[t1], Wc, comp, compT, i0, rowstart, vorder, arities, cst[j], acc[j], cnt)
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


@numba.njit(cache=True, nogil=True)
def _order_family_scores(arities, level, k, bdeu, ess, logfact, bits, rbits, rowstart, vorder, nodepos,
                         obase, rk, items, maxsets, n_rows, n_workers, done, out):
    """Every parent set of size <= k of every node under a (partial) order.

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
    left undone would leave its places of ``out`` unwritten).
    """
    p = arities.shape[0]
    D = rowstart[p]
    W = rbits.shape[1]
    mr = bits.shape[1]
    maxlev = level.max()
    node_i0 = np.searchsorted(level[vorder], level, side="right")  # first position of a node's children
    kx = max(k, 2)
    n_items = items.shape[0]
    binary_k2 = not bdeu  # every variable binary: the set-by-set path inside one-word pair configurations
    for v in range(p):
        if arities[v] != 2:
            binary_k2 = False
    nxt = np.zeros(1, dtype=np.int64)  # items handed out one at a time: threads stay busy
    for _worker in numba.prange(min(n_workers, n_items)):
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
        set_last = np.zeros(maxsets, dtype=np.int64)
        set_s = np.zeros(maxsets, dtype=np.int64)
        set_q = np.zeros(maxsets)
        set_i0 = np.zeros(maxsets, dtype=np.int64)
        set_par = np.zeros(maxsets, dtype=np.int64)
        subsz = np.zeros(maxsets, dtype=np.int64)
        nsing = np.zeros(maxsets, dtype=np.int64)
        sing = np.zeros(maxsets, dtype=np.int64)
        acc = np.zeros((maxsets, p))
        cst = np.zeros((maxsets if bdeu else 1, p, 4))
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
        taken = -1  # the items this worker has taken (each is finished when it comes back here)
        while True:
            taken += 1
            ii = _fetch_add(nxt, 0, 1)
            if ii >= n_items:
                break
            u0 = items[ii]
            if u0 < 0:  # the empty set: one configuration, every row
                ns = _subtree_sets(pel, 0, 0, 0, arities, node_i0, vorder, bdeu, ess, set_last, set_s,
                                   set_q, set_i0, set_par, subsz, cst, acc, nsing)
                psingles = 0
                if n_rows == 1:
                    psingles = 1
                elif n_rows >= 2:
                    i0 = set_i0[0]
                    _score_block(n_rows, W, rbits, compT, rowstart[i0], i0, bb, rowstart, vorder, arities, bdeu,
                                 logfact, cst, acc, cnt, cntd, celld)
                _write_sets(ns, psingles, pel, set_last, set_s, set_i0, set_par, nsing, acc, mlogr, vorder, bdeu, obase,
                            rk, sing, wnxt, out)
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
            whole = binary_k2 and k >= 2
            for a in range(au0):
                whole = whole and bm[a] <= 64
            pel[0] = u0
            ns = _subtree_sets(pel, 1, 0, 0, arities, node_i0, vorder, bdeu, ess, set_last, set_s, set_q, set_i0,
                               set_par, subsz, cst, acc, nsing)
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
                _score_block(m, Wa, comp, compT, d0, i0, bb, rowstart, vorder, arities, bdeu, logfact,
                             cst, acc, cnt, cntd, celld)
                if whole:  # keep state a's packed rows for the walk below
                    for dd in range(d0, D):
                        cTs[a, dd] = compT[0, dd]
            if i0 < p:
                _write_sets(ns, psingles, pel, set_last, set_s, set_i0, set_par, nsing, acc, mlogr, vorder, bdeu,
                            obase, rk, sing, wnxt, out)
                if whole:  # every set below {u0}: one walk over both states, written as it goes
                    _binary_whole(pel, 1, k - 1, au0, bm, cTs, lb2, lm2, nl2, accd, acc[0], i0, xs, mem, i0d,
                                  nodepos, node_i0, vorder, obase, rk, wnxt, tt, out)
            if k < 2 or whole:
                continue
            # ---- pairs {u0, u1} and the sets below them
            for u1 in range(u0 + 1, p):
                if max(level[u0], level[u1]) >= maxlev:
                    continue
                pel[1] = u1
                rs1 = rowstart[nodepos[u1]]
                # binary K2 with every configuration of the pair in one word: the sets below
                # it in one walk (_binary_whole), as below a single parent
                fused = binary_k2 and k >= 3
                for a in range(au0 if fused else 0):
                    if bm[a] >= 2:
                        c0 = 0
                        for w in range((bm[a] + 63) // 64):
                            c0 += np.int64(_popcount(blk[rs1, boff[a] + w]))
                        fused = fused and c0 <= 64 and bm[a] - c0 <= 64
                ns = _subtree_sets(pel, 2, u1 + 1, 0 if fused else k - 2, arities, node_i0, vorder, bdeu, ess,
                                   set_last, set_s, set_q, set_i0, set_par, subsz, cst, acc, nsing)
                ng = 0
                i0 = set_i0[0]
                lo1 = _first_row(u1, i0, rowstart, nodepos)
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
                        _score_block(m, Wc, comp, compT, lo1, i0, bb, rowstart, vorder, arities, bdeu, logfact,
                                     cst, acc, cnt, cntd, celld)
                        if fused:  # keep this configuration's packed rows for the walk below
                            for dd in range(lo1, D):
                                cTs[ng, dd] = compT[0, dd]
                            gm[ng] = m
                            ng += 1
                        if ns > 1 and i0 < p:
                            if binary_k2 and Wc == 1:
                                _binary_subtree(m, u1, k - 2, comp, compT, lb2[0], lm2[0], nl2[0], xs, cid, nodepos,
                                                node_i0, set_i0, subsz, acc, tt)
                            else:
                                _config_subtree(m, Wc, u1, k - 2, comp, compT, bb, cnt, xs, ds, cid, lft, bcnt, src,
                                                cntd, celld, arities, rowstart, nodepos, node_i0, vorder, set_i0,
                                                subsz, nsing, acc, cst, bdeu, logfact)
                _write_sets(ns, psingles, pel, set_last, set_s, set_i0, set_par, nsing, acc, mlogr, vorder, bdeu, obase,
                            rk, sing, wnxt, out)
                if fused and i0 < p:
                    _binary_whole(pel, 2, k - 2, ng, gm, cTs, lb2, lm2, nl2, accd, acc[0], i0, xs, mem, i0d, nodepos,
                                  node_i0, vorder, obase, rk, wnxt, tt, out)
        _fetch_add(done, 0, taken)
    return out


def score_order_families(data: DiscreteData | pd.DataFrame, level: Sequence[int], k: int,
                         prior: str = "K2", ess: float = 1.0) -> list[np.ndarray]:
    """Scores of every parent set of size <= ``k`` of every node under a (partial) order.

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
    flat, off = _score_order_flat(data, level, k, prior, ess)
    return [flat[off[v]:off[v + 1]] for v in range(off.size - 1)]


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
def _order_index(level_key: bytes, arity_key: bytes, k: int) -> tuple:
    """Index tables of :func:`_score_order_flat` for one (partial) order, arities and k;
    they depend on nothing else, so they are kept between calls (read only).

    Returns (kk, out_off, items, maxsets, vorder, nodepos, rowstart, row_node,
    row_state, obase, rk): kk = min(k, most candidates); the offsets of each node's
    scores; the work items; the most sets below a pair; the nodes by level and each
    node's position there; the first child-value row of each position; each
    child-value row's node and state; and the place tables of :func:`_write_sets`."""
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
    return kk, out_off, items, maxsets, vorder, nodepos, rowstart, row_node, row_state, obase, rk


def _score_order_flat(data: DiscreteData | pd.DataFrame, level: Sequence[int], k: int, prior: str = "K2",
                      ess: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`score_order_families` as one array and the offsets of each node's scores."""
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
    # ---- memory guard, before any table: the index tables, the row bitsets and every
    # worker's arrays (the per-set accumulators grow as C(nodes, k - 2) x nodes), and the output
    kk, maxsets, n_out = _order_sizes(level, k)
    budget = get_table_budget()
    n_threads = numba.get_num_threads()
    W = max(1, (n + 63) // 64)
    D = int((arities - 1).sum())
    mr = int(arities.max(initial=1))
    bdeu = prior == "BDeu"
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
    kk, out_off, items, maxsets, vorder, nodepos, rowstart, row_node, row_state, obase, rk = _order_index(
        level.tobytes(), arities.tobytes(), k)
    bits = _row_bitsets(data.columns, arities)
    rbits = np.ascontiguousarray(bits[row_node, row_state])  # child-value rows: states but the last
    logfact = _logfact(n + mr + 1)
    out = np.empty(int(out_off[-1]))  # every place is written
    done = np.zeros(1, dtype=np.int64)
    with PARALLEL_LOCK:  # one worker per thread (the default split); they share items through a counter
        try:
            _order_family_scores(arities, level, kk, bdeu, float(ess), logfact, bits, rbits, rowstart,
                                 vorder, nodepos, obase, rk, items, maxsets, n, n_threads, done, out)
        except (MemoryError, SystemError) as exc:  # an allocation failed inside the parallel region
            raise MemoryError(_KERNEL_ALLOC_FAILED.format(k=k, got=int(done[0]), n=items.size)) from exc
    if done[0] != items.size:  # a worker could not allocate its arrays: never return unwritten scores
        raise MemoryError(_KERNEL_ALLOC_FAILED.format(k=k, got=int(done[0]), n=items.size))
    return out, out_off


_KERNEL_ALLOC_FAILED = (
    "scoring every family (k={k}) could not allocate its per-thread working memory ({got} of {n} "
    "work items done): the machine has less free memory than the budget assumes; use a smaller k "
    "(max_parents), fewer variables, or lower the budget (bnexplore.data.set_table_budget) so that "
    "such runs are refused before they start")


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
