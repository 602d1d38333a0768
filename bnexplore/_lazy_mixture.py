"""Mixtures of standard parameters evaluated at the configurations asked for.

Order averaging predicts with, per node ``X_i``, a mixture of the standard parameters
(Dash & Cooper Eq. 3) of the parent sets ``g`` it averages over:

    theta*(x_i | x_S) = sum_g w_g theta_hat_g(x_i | x_g),
    theta_hat_g(y | j) = (N_g(j, y) + a_g) / (N_g(j) + r a_g),

with ``S`` the union of the sets (the star ``P_i^*`` of the summary network M*,
Eq. 14-15, or every candidate parent for exact averaging, Eq. 13), ``w_g`` the
normalised posterior weights, ``a_g = 1`` (K2) or ``ess / (q_g r)`` (BDeu) and
``N_g`` the counts of the family.  A table of ``theta*`` over every configuration of
``S`` has ``prod_{u in S} r_u`` rows (10^12 for twelve 10-state parents), while
prediction reads a few per test row.  Here the rows are computed only where asked:
each set ``g`` is counted once, on first use (a dense table while ``q_g r`` is at most
a few times the rows ``N``, else the sorted keys of its rows, searched by bisection),
and each asked configuration reads its ``r`` counts from every set.  Memory is at
most (number of sets) x (a few times ``N``) integers, whatever the number of parent
configurations; a read of ``m`` rows costs ``sum_g m r`` (dense) or
``sum_g m r log N`` (keys).

**Missing values** (``observed`` given): each family ``g`` is counted over the rows
where the child and every member of ``g`` are observed (available cases, the
package's policy for parameters; see :class:`bnexplore.data.DiscreteData`).

:class:`LazyCPT` wraps one node's mixture as a read-only ``(q, r)`` table that
:class:`bnexplore.networks.BayesNet` indexes like an array (rows by mixed-radix
index, the last parent fastest), computing only the rows read.
"""
from __future__ import annotations

import itertools
import math

import numba
import numpy as np

from .data.core import MemoryBudgetError, config_strides, get_table_budget

__all__ = ["MixtureSpec", "LazyCPT", "mixture_rows"]

# queries evaluated per kernel call (bounds the working memory of a large read)
_CHUNK = 1 << 16


@numba.njit(cache=True, nogil=True, inline="always")
def _lower_bound(keys, lo, hi, x):
    """First position in ``keys[lo:hi]`` (sorted) holding a value >= x."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True, nogil=True)
def _family_keys(cols, observed, arities, child, star, members, s, keys):
    """Row keys ``j r + y`` of the family (child, star[members[:s]]) over the rows where
    it is observed (all rows when ``observed`` is empty) into ``keys``; returns how many."""
    n = cols.shape[1]
    r = arities[child]
    miss = observed.shape[0] > 0
    nk = 0
    for t in range(n):
        if miss:
            ok = observed[child, t]
            for e in range(s):
                ok = ok and observed[star[members[e]], t]
            if not ok:
                continue
        key = 0
        for e in range(s):
            u = star[members[e]]
            key = key * arities[u] + cols[u, t]
        keys[nk] = key * r + cols[child, t]
        nk += 1
    return nk


@numba.njit(cache=True, nogil=True)
def _count_tables(cols, observed, arities, child, star, members, sizes, off, dense, tables):
    """Every family's counts, one after another in ``tables`` at ``off[g]``: a dense
    table of its ``q_g r`` cells where ``dense[g]``, else its sorted row keys (the
    caller sizes ``off`` from the rows each family keeps; an empty slot is skipped)."""
    keys = np.empty(cols.shape[1], dtype=np.int64)
    for g in range(members.shape[0]):
        if off[g + 1] == off[g]:
            continue
        nk = _family_keys(cols, observed, arities, child, star, members[g], sizes[g], keys)
        seg = tables[off[g]:off[g + 1]]
        if dense[g]:
            for c in range(seg.shape[0]):
                seg[c] = 0
            for t in range(nk):
                seg[keys[t]] += 1
        else:
            sk = np.sort(keys[:nk])
            for t in range(nk):
                seg[t] = sk[t]


@numba.njit(cache=True, nogil=True)
def _lookup_rows(arities, child, star, members, sizes, weights, alphas, off, dense, tables, queries, out):
    """``out[i, y] += sum_g weights[g] theta_hat_g(y | queries[i, members of g])`` from
    the families' counts (:func:`_count_tables`)."""
    r = arities[child]
    m = queries.shape[0]
    for g in range(members.shape[0]):
        w = weights[g]
        if w == 0.0:
            continue
        s = sizes[g]
        a = alphas[g]
        ar_ = a * r
        seg = tables[off[g]:off[g + 1]]
        nk = seg.shape[0]
        for i in range(m):
            key = 0  # the configuration of the asked row (the last member fastest, as in the CPT)
            for e in range(s):
                pos = members[g, e]
                key = key * arities[star[pos]] + queries[i, pos]
            b = key * r
            if dense[g]:
                nj = 0
                for y in range(r):
                    nj += seg[b + y]
                f = w / (nj + ar_)
                for y in range(r):
                    out[i, y] += (seg[b + y] + a) * f
            else:  # sorted keys: the configuration's run, then each state's within it
                lo = _lower_bound(seg, 0, nk, b)
                hi = _lower_bound(seg, lo, nk, b + r)
                f = w / ((hi - lo) + ar_)
                prev = lo
                for y in range(r):
                    nxt = hi if y == r - 1 else _lower_bound(seg, prev, hi, b + y + 1)
                    out[i, y] += (nxt - prev + a) * f
                    prev = nxt


@numba.njit(cache=True, nogil=True)
def _family_rows_counts(cols, observed, arities, child, star, members, sizes):
    """How many rows each family keeps (all of them when nothing is missing)."""
    keys = np.empty(cols.shape[1], dtype=np.int64)
    out = np.empty(members.shape[0], dtype=np.int64)
    for g in range(members.shape[0]):
        out[g] = _family_keys(cols, observed, arities, child, star, members[g], sizes[g], keys)
    return out


class MixtureSpec:
    """One node's mixture ``theta*(. | x_S) = sum_g w_g theta_hat_g(. | x_g)``.

    Parameters
    ----------
    columns : ndarray (p, N)
        Training codes, one row per variable (``DiscreteData.columns``).
    observed : ndarray of bool (p, N) or None
        Observed cells (``None``: all).
    arities : ndarray of int64 (p,)
    child : int
    star : sequence of int
        The union ``S`` of the sets, in CPT order (the last varies fastest).
    sets : list of tuple of int
        The parent sets ``g``, as positions in ``star``.
    weights : ndarray (G,)
        Their normalised weights.
    prior, ess
        The Dirichlet prior of the standard parameters (``"K2"`` or ``"BDeu"``).
    scale : float, default 1
        The columns hold ``scale`` copies of every row, completed differently (structural
        EM's draws of the missing cells): the prior's ``alpha`` is scaled with the counts,
        so ``theta_hat`` is the posterior mean of the counts over ``scale``.
    """

    def __init__(self, columns, observed, arities, child: int, star, sets, weights, prior: str, ess: float,
                 scale: float = 1.0):
        self.columns = columns
        self.observed = (np.zeros((0, 0), dtype=np.bool_) if observed is None
                         else np.ascontiguousarray(observed, dtype=np.bool_))
        self.arities = np.asarray(arities, dtype=np.int64)
        self.child = int(child)
        self.star = np.asarray(star, dtype=np.int64).reshape(-1)
        self.r = int(self.arities[self.child])
        width = max(1, max((len(g) for g in sets), default=0))
        self.members = np.full((len(sets), width), -1, dtype=np.int64)
        self.sizes = np.array([len(g) for g in sets], dtype=np.int64)
        q = np.ones(len(sets))
        for i, g in enumerate(sets):
            self.members[i, :len(g)] = g
            q[i] = float(math.prod(int(self.arities[self.star[e]]) for e in g))
        self.weights = np.ascontiguousarray(weights, dtype=np.float64)
        self.alphas = float(scale) * (ess / (q * self.r) if prior == "BDeu" else np.ones(len(sets)))
        n = columns.shape[1]
        # dense count tables while they are no larger than a few times the rows
        self.dense_cells = int(max(4096, 4 * n))
        self.star_arities = [int(self.arities[u]) for u in self.star]
        self.dense = (q * self.r <= self.dense_cells) & (self.weights > 0)
        self._tables: tuple | None = None

    def _counts(self) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, tables): every family's counts, built on first use and kept: a
        dense table (at most ``dense_cells``) or the sorted keys of its rows, so the
        memory is at most (sets x a few times the rows) integers."""
        if self._tables is None:
            if self.observed.shape[0] > 0 and not self.dense.all():  # rows each sparse family keeps
                kept = _family_rows_counts(self.columns, self.observed, self.arities, self.child, self.star,
                                           self.members, self.sizes)
            else:
                kept = np.full(self.sizes.size, self.columns.shape[1], dtype=np.int64)
            dense_size = [math.prod(int(self.arities[self.star[e]]) for e in row[:s]) * self.r
                          for row, s in zip(self.members.tolist(), self.sizes.tolist())]
            cells = np.where(self.dense, dense_size, kept)
            cells = np.where(self.weights > 0, cells, 0)  # a family of weight 0 is never read
            off = np.zeros(cells.size + 1, dtype=np.int64)
            np.cumsum(cells, out=off[1:])
            budget = get_table_budget()
            if off[-1] > budget:
                raise MemoryBudgetError(
                    f"the counts of the {self.sizes.size:,} parent sets mixed at one node take {int(off[-1]):,} "
                    f"cells, over the budget of {budget:,}: use a smaller n or k (max_parents)")
            tables = np.empty(int(off[-1]), dtype=np.int64)
            if off[-1]:
                _count_tables(self.columns, self.observed, self.arities, self.child, self.star, self.members,
                              self.sizes, off, self.dense, tables)
            self._tables = (off, tables)
        return self._tables

    def rows(self, codes: np.ndarray) -> np.ndarray:
        """``theta*(. | codes[i])`` for star configurations ``codes`` (m, |S|) -> (m, r)."""
        codes = np.ascontiguousarray(_as_codes(codes, self.star.size))
        out = np.zeros((codes.shape[0], self.r))
        off, tables = self._counts()
        for lo in range(0, codes.shape[0], _CHUNK):
            _lookup_rows(self.arities, self.child, self.star, self.members, self.sizes, self.weights, self.alphas,
                         off, self.dense, tables, codes[lo:lo + _CHUNK], out[lo:lo + _CHUNK])
        return out


def _as_codes(codes, width: int) -> np.ndarray:
    """Codes as an int64 (m, width) array (a 1-D array is one configuration)."""
    codes = np.asarray(codes, dtype=np.int64)
    if codes.ndim == 2 and codes.shape[1] == width:
        return codes
    if codes.ndim == 1 and codes.size == width:
        return codes[None]
    raise ValueError(f"codes must have shape (m, {width}), got {codes.shape}")


def mixture_rows(spec: MixtureSpec, codes: np.ndarray) -> np.ndarray:
    """:meth:`MixtureSpec.rows`, also for a star without members (one row, repeated).
    Repeated configurations are not merged: a read costs less than sorting them."""
    codes = _as_codes(codes, spec.star.size)
    if spec.star.size == 0:
        return np.repeat(spec.rows(np.zeros((1, 0), dtype=np.int64)), codes.shape[0], axis=0)
    return spec.rows(codes)


def lex_set_index(cand_pos: np.ndarray, m: int, k: int) -> np.ndarray:
    """Index of each set (rows of candidate positions, increasing, -1 padded) in the
    :func:`bnexplore._order_posterior.lex_parent_sets` list of ``m`` candidates and sizes <= ``k``:
    the sets of smaller sizes, then the lexicographic rank, which counts the sets
    after it from the end (``C(m, s) - 1 - sum_e C(m - 1 - c_e, s - e)``)."""
    cand_pos = np.asarray(cand_pos, dtype=np.int64)
    out = np.empty(cand_pos.shape[0], dtype=np.int64)
    for i, row in enumerate(cand_pos.tolist()):
        c = [x for x in row if x >= 0]
        s = len(c)
        idx = sum(math.comb(m, t) for t in range(s)) + math.comb(m, s) - 1
        idx -= sum(math.comb(m - 1 - ce, s - e) for e, ce in enumerate(c))
        out[i] = idx
    return out


def star_sets(ns: int, k: int) -> list[tuple[int, ...]]:
    """Every subset of ``range(ns)`` of size <= ``k``, by size, then lexicographic."""
    return [c for s in range(min(k, ns) + 1) for c in itertools.combinations(range(ns), s)]


class LazyCPT:
    """The ``(q, r)`` CPT of one node of M*, its rows computed when read (Eq. 15).

    Indexing follows a dense CPT: ``t[rows]`` gives those rows (mixed radix over the
    parents, the last fastest), ``t[rows, states]`` single entries (broadcast as
    NumPy does).  ``np.log(t)`` gives the same table in logs, still lazy, and
    :meth:`rows` reads rows by the parents' codes (no index limit).
    ``numpy.asarray(t)`` materialises every row, refused (``MemoryBudgetError``) over
    the table budget.

    Examples
    --------
    >>> import numpy as np, bnexplore as bx
    >>> df = bx.networks.load("asia").sample(300, random_state=1)
    >>> avg = bx.averaging.OrderedAveraging(df, max_parents=2)
    >>> lazy = avg.summary_network(3, lazy=True)
    >>> dense = avg.summary_network(3, lazy=False)
    >>> bool(np.allclose(lazy.cpts["dysp"][[0, 5]], dense.cpts["dysp"][[0, 5]], atol=1e-12))
    True
    """

    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(self, spec: MixtureSpec, name: str = "", log: bool = False):
        self.spec = spec
        self.name = name
        self.log = log
        q = math.prod(spec.star_arities)
        self.shape = (q, spec.r)
        ar = spec.star_arities
        self._strides = config_strides(ar).tolist()

    @property
    def size(self) -> int:
        return self.shape[0] * self.shape[1]

    def _check_index(self) -> None:
        if self.size >= 2**62:
            raise MemoryBudgetError(
                f"the M* CPT of {self.name!r} has {self.shape[0]:,} parent configurations, too many to "
                f"index by row number: read rows by the parents' codes (.rows()), or use a smaller n")

    def rows(self, codes: np.ndarray) -> np.ndarray:
        """Rows at parent configurations ``codes`` (m, n_parents) -> (m, r)."""
        vals = mixture_rows(self.spec, codes)
        if self.log:
            with np.errstate(divide="ignore"):
                return np.log(vals)
        return vals

    def _decode(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, dtype=np.int64).ravel()
        if idx.size and (idx.min() < 0 or idx.max() >= self.shape[0]):
            raise IndexError(f"row index out of range 0 .. {self.shape[0] - 1} of the M* CPT of {self.name!r}")
        codes = np.empty((idx.size, len(self._strides)), dtype=np.int64)
        for i, (st, a) in enumerate(zip(self._strides, self.spec.star_arities)):
            codes[:, i] = (idx // st) % a
        return codes

    def __getitem__(self, key):
        self._check_index()
        if isinstance(key, tuple):
            if len(key) != 2:
                raise IndexError("a CPT has two axes: t[rows] or t[rows, states]")
            rows, states = key
        else:
            rows, states = key, slice(None)
        if isinstance(rows, slice):
            rows = np.arange(*rows.indices(self.shape[0]))
        rows = np.asarray(rows)
        if isinstance(states, slice):
            uniq, inv = np.unique(rows.ravel(), return_inverse=True)
            tab = self.rows(self._decode(uniq))[np.asarray(inv).ravel()]
            return tab.reshape(rows.shape + (self.shape[1],))[..., states]
        R, S = np.broadcast_arrays(rows, np.asarray(states))
        uniq, inv = np.unique(R.ravel(), return_inverse=True)
        tab = self.rows(self._decode(uniq))
        return tab[np.asarray(inv).ravel(), S.ravel()].reshape(R.shape)

    def __array__(self, dtype=None, copy=None):
        budget = get_table_budget()
        if self.size > budget:
            raise MemoryBudgetError(
                f"materialising the M* CPT of {self.name!r} needs {self.size:,} cells, over the budget of "
                f"{budget:,}: read the rows you need (t[rows], t.rows(codes)), or use a smaller n")
        out = self[np.arange(self.shape[0])]
        return out if dtype is None else out.astype(dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is np.log and method == "__call__" and len(inputs) == 1 and not kwargs and not self.log:
            return LazyCPT(self.spec, self.name, log=True)
        return NotImplemented

    def setflags(self, **_) -> None:
        """Read-only already (kept for :class:`~bnexplore.networks.BayesNet`)."""

    def copy(self) -> "LazyCPT":
        """The same table: it is immutable."""
        return self

    def __repr__(self) -> str:
        kind = "log " if self.log else ""
        return f"LazyCPT({self.name!r}, {kind}shape={self.shape}, {self.spec.members.shape[0]} parent sets)"
