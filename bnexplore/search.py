"""Greedy structure search over DAGs with a decomposable score.

Hill climbing with add / remove / reverse moves, an optional node order, a maximum
in-degree and a mask of allowed arcs, rescoring only the families a move changes.
Every step records how many legal candidates were evaluated and how many improve
the score (Castelo & Siebes count the latter, ``q``). The greedy thick-thin variant
(GTT; Heckerman 1995, used by Dash & Cooper) first only adds arcs until no addition
helps, then only removes arcs.

On complete data with :class:`~bnexplore.scores.LocalScore`'s own family score the
whole loop runs in one numba kernel (:mod:`bnexplore._climb`); with missing values, or a
score of another kind, in Python over :class:`_State` (the same moves and floats).

A move that would give a node a CPT of more cells than the table budget
(:func:`bnexplore.data.set_table_budget`; parent configurations times states) is not a
candidate: a network is only worth finding if its parameters can be fitted.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Sequence

import networkx as nx
import numba
import numpy as np
import pandas as pd

from ._deprecation import renamed
from ._validation import check_int
from .data.core import DiscreteData, get_table_budget
from .scores import LocalScore

__all__ = ["SearchResult", "hill_climb", "greedy_thick_thin", "transitive_closure"]

#: the columns of :attr:`SearchResult.steps`
_STEP_COLUMNS = ("step", "phase", "op", "edge", "delta", "score", "n_candidates", "n_improving")

_NEG = -np.inf


@dataclass
class SearchResult:
    """Outcome of a greedy search.

    Attributes
    ----------
    dag : networkx.DiGraph
        The final network over the data's column names.
    score : float
        Its total log score (sum of family scores).
    steps : DataFrame
        One row per accepted move: ``step, phase, op, edge, delta, score,
        n_candidates, n_improving``.
    final_candidates : int
        Candidates evaluated at the last (non-improving) iteration.
    n_families : int
        Distinct family scores computed: the growth of the score's cache, or on the
        kernel path (complete data) the families the search scored in its own table
        (which does not fill the score's cache).
    """

    dag: nx.DiGraph
    score: float
    #: the accepted moves as dicts; :attr:`steps` builds the DataFrame on first use (a
    #: DataFrame costs milliseconds, more than a whole search on a small data set)
    step_rows: list = field(default_factory=list, repr=False)
    final_candidates: int = 0
    n_families: int = 0
    extra: dict = field(default_factory=dict)

    @cached_property
    def steps(self) -> pd.DataFrame:
        """One row per accepted move (see the class attributes)."""
        return pd.DataFrame(self.step_rows, columns=list(_STEP_COLUMNS))

    @property
    def q_trace(self) -> np.ndarray:
        """Number of improving candidates at each accepted step (Castelo & Siebes)."""
        return self.steps["n_improving"].to_numpy(dtype=np.int64)

    @property
    def q(self) -> int:
        """Total number of improving models met during the search."""
        return int(self.q_trace.sum())

    def dag_at(self, step: int) -> nx.DiGraph:
        """The network after the first ``step`` accepted moves (0: the start network,
        ``len(step_rows)``: :attr:`dag`), for a step player.

        The moves are undone from the final network backwards, so the start network
        need not be known.

        Examples
        --------
        >>> import bnexplore as bx
        >>> res = bx.search.greedy_thick_thin(bx.networks.load("asia").sample(500, random_state=0), max_parents=2)
        >>> res.dag_at(0).number_of_edges(), set(res.dag_at(len(res.step_rows)).edges) == set(res.dag.edges)
        (0, True)
        """
        n = len(self.step_rows)
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or not 0 <= step <= n:
            raise ValueError(f"step must be an integer from 0 to {n} (the accepted moves), got {step!r}")
        return self._replay[int(step)]

    def iter_steps(self):
        """``(row, dag)`` for every accepted move in order: the row of :attr:`step_rows`
        (``step, phase, op, edge, delta, score, ...``) and the network after it.

        Examples
        --------
        >>> import bnexplore as bx
        >>> res = bx.search.hill_climb(bx.networks.load("asia").sample(500, random_state=0), max_parents=2)
        >>> [row["step"] for row, _ in res.iter_steps()] == list(range(1, len(res.step_rows) + 1))
        True
        """
        dags = self._replay
        return ((row, dags[i + 1]) for i, row in enumerate(self.step_rows))

    @cached_property
    def _replay(self) -> list:
        """The network before the first move and after each move."""
        g = self.dag.copy()
        out = [g]
        for row in reversed(self.step_rows):  # undo each move
            g = g.copy()
            u, v = row["edge"]
            if row["op"] == "add":
                g.remove_edge(u, v)
            elif row["op"] == "remove":
                g.add_edge(u, v)
            else:  # reverse: u -> v became v -> u
                g.remove_edge(v, u)
                g.add_edge(u, v)
            out.append(g)
        return out[::-1]


@numba.njit(cache=True)
def transitive_closure(adj: np.ndarray) -> np.ndarray:
    """Reachability matrix ``R[a, b]`` = there is a directed path of length >= 1 from a to b.

    A depth-first search from every node over adjacency lists, ``O(p (p + e))`` for ``p``
    nodes and ``e`` arcs (Warshall's triple loop is ``O(p^3)`` at worst, and the
    searches ask at every step).  Cycles are allowed (``R[a, a]``: ``a`` is on one).
    The result has the dtype of ``adj``.
    """
    p = adj.shape[0]
    start = np.zeros(p + 1, dtype=np.int64)        # the children of i: nbr[start[i]:start[i + 1]]
    for i in range(p):
        start[i + 1] = start[i]
        for j in range(p):
            if adj[i, j]:
                start[i + 1] += 1
    nbr = np.empty(start[p], dtype=np.int64)
    k = 0
    for i in range(p):
        for j in range(p):
            if adj[i, j]:
                nbr[k] = j
                k += 1
    r = np.zeros_like(adj)
    stack = np.empty(p, dtype=np.int64)            # each node is pushed once per source
    for s in range(p):
        top = 0
        x = s
        while True:
            for k in range(start[x], start[x + 1]):
                c = nbr[k]
                if not r[s, c]:
                    r[s, c] = True
                    stack[top] = c
                    top += 1
            if top == 0:
                break
            top -= 1
            x = stack[top]
    return r


@numba.njit(cache=True, nogil=True)
def _reach_after_add(reach, u, v):
    """:func:`transitive_closure` updated in place for a new arc ``u -> v``: ``a`` now
    reaches ``b`` if it did, or if it reaches ``u`` (or is ``u``) and ``v`` reaches ``b``
    (or is ``v``).  ``O(p^2)``, where the closure from scratch is ``O(p (p + e))``."""
    p = reach.shape[0]
    dst = reach[v].copy()
    dst[v] = True
    for a in range(p):
        if a == u or reach[a, u]:
            for b in range(p):
                if dst[b]:
                    reach[a, b] = True


#: the moves, in the order their best candidates are compared
_OPERATORS = ("add", "remove", "reverse")


@numba.njit(cache=True, nogil=True)
def _best_move(adj, reach, allowed, add_gain, remove_gain, op_codes, tol):
    """The best move of one search step: ``(n_candidates, n_improving, operator, gain, u, v)``.

    For each operator of ``op_codes`` (indices into :data:`_OPERATORS`) the legal arcs
    ``u -> v`` and their score changes are

    * add: allowed, absent, no path ``v ~> u`` (``reach[v, u]``), finite ``add_gain``;
    * remove: present, gain ``remove_gain[u, v]``;
    * reverse: present, ``v -> u`` allowed, no other path ``u ~> v`` (through a child
      ``w`` of u with ``reach[w, v]``), gain ``remove_gain[u, v] + add_gain[v, u]``.

    An operator's best is the first maximum in row-major order (as ``numpy.argmax``: a NaN
    counts as the maximum); it wins when it improves by more than ``tol`` and beats
    the earlier operators' strictly.  ``operator`` is -1 when no move improves."""
    p = adj.shape[0]
    n_cand = 0
    n_impr = 0
    best, best_gain, best_u, best_v = -1, 0.0, 0, 0
    for op in op_codes:
        top, top_u, top_v, nan_seen = -np.inf, 0, 0, False
        for u in range(p):
            for v in range(p):
                if op == 0:
                    ok = allowed[u, v] and not adj[u, v] and not reach[v, u] and np.isfinite(add_gain[u, v])
                    gain = add_gain[u, v]
                elif op == 1:
                    ok = adj[u, v]
                    gain = remove_gain[u, v]
                else:
                    ok = adj[u, v] and allowed[v, u] and np.isfinite(add_gain[v, u])
                    if ok:
                        for w in range(p):  # another path u ~> v exists
                            if adj[u, w] and reach[w, v]:
                                ok = False
                                break
                    gain = remove_gain[u, v] + add_gain[v, u]
                d = gain if ok else -np.inf
                n_cand += ok
                n_impr += d > tol
                if not nan_seen and (np.isnan(d) or d > top):
                    top, top_u, top_v, nan_seen = d, u, v, np.isnan(d)
        if top > tol and (best < 0 or top > best_gain):
            best, best_gain, best_u, best_v = op, top, top_u, top_v
    return n_cand, n_impr, best, best_gain, best_u, best_v


#: what the searches do with missing cells (see :func:`hill_climb`)
_MISSING = ("keep", "em", "drop", "raise")


def _as_score(data, score, prior, ess, missing: str = "raise") -> LocalScore:
    if missing not in _MISSING:
        raise ValueError(f"missing must be one of {list(_MISSING)}, got {missing!r}")
    if score is not None:
        if not isinstance(score, LocalScore):
            raise TypeError(f"score must be a bnexplore.scores.LocalScore, got {type(score).__name__}")
        return score
    if data is None:
        raise ValueError("give the data or a LocalScore")
    return LocalScore(data, prior=prior, ess=ess, missing="keep" if missing == "em" else missing)


def _allowed_matrix(ls: LocalScore, order, allowed) -> np.ndarray:
    p = ls.n_nodes
    names = ls.names
    mask = ~np.eye(p, dtype=bool)
    if order is not None:
        order = list(order)
        if sorted(ls.data.indices(order)) != list(range(p)):
            missing = sorted(set(names) - {names[i] for i in ls.data.indices(order)})
            raise ValueError(f"order must list every column exactly once; missing or repeated: {missing}")
        pos = np.empty(p, dtype=np.int64)
        pos[ls.data.indices(order)] = np.arange(p)
        mask &= pos[:, None] < pos[None, :]
    if allowed is not None:
        if isinstance(allowed, np.ndarray) and allowed.dtype == bool:
            if allowed.shape != (p, p):
                raise ValueError(f"allowed mask must have shape {(p, p)}, got {allowed.shape}")
            mask &= allowed
        else:
            m = np.zeros((p, p), dtype=bool)
            for u, v in allowed:
                m[ls.data.index(u), ls.data.index(v)] = True
            mask &= m
    return mask


def _start_adjacency(ls: LocalScore, start) -> np.ndarray:
    p = ls.n_nodes
    adj = np.zeros((p, p), dtype=bool)
    if start is None:
        return adj
    edges = start.edges if isinstance(start, nx.DiGraph) else start
    for u, v in edges:
        adj[ls.data.index(u), ls.data.index(v)] = True
    if transitive_closure(adj).diagonal().any():
        raise ValueError("start graph has a cycle")
    return adj


class _State:
    """Adjacency, family scores and the delta tables of one search."""

    def __init__(self, ls: LocalScore, adj: np.ndarray, max_indegree: int):
        self._start(ls, adj, max_indegree)
        orphan = np.array([not pa for pa in self.parents]) if self.k > 0 else np.zeros(self.p, dtype=bool)
        if orphan.any():   # every first parent of the parentless nodes: each pair's table counted once
            self.add_raw[:, orphan] = (ls._score_pairs_idx(np.broadcast_to(orphan, (self.p, self.p)))
                                       - self.fam)[:, orphan]
            ar = np.array(self.arities, dtype=float)
            self.add_raw[np.outer(ar, ar) > self.budget] = _NEG   # u -> v needs a_u * a_v cells
        for v in range(self.p):
            if not orphan[v]:
                self.refresh(v)

    def _start(self, ls: LocalScore, adj: np.ndarray, max_indegree: int) -> None:
        """The adjacency, every family's score and empty delta tables."""
        self.ls = ls
        self.p = adj.shape[0]
        self.adj = adj
        self.k = max_indegree
        self.arities = [int(a) for a in ls.data.arities]
        self.budget = get_table_budget()   # a CPT over it could not be fitted: no such move
        self.parents = [tuple(np.nonzero(adj[:, v])[0].tolist()) for v in range(self.p)]
        self.fam = np.array([self.family_score(v, self.parents[v]) for v in range(self.p)])
        self.add_raw = np.full((self.p, self.p), _NEG)   # score change of adding u -> v (ignoring cycles)
        self.rem = np.full((self.p, self.p), _NEG)       # score change of removing u -> v

    def family_score(self, v: int, pa: tuple[int, ...]) -> float:
        """The score of ``v``'s family with the sorted parents ``pa``."""
        return self.ls.score_idx(v, pa)

    def addable(self, v: int, pa: tuple[int, ...]) -> list[int]:
        """The nodes that may become one more parent of ``v`` (parents ``pa``): none at
        ``max_parents``, and only those keeping the CPT within the table budget."""
        if len(pa) >= self.k:
            return []
        cells = math.prod(self.arities[u] for u in pa) * self.arities[v]   # Python ints: no overflow
        most = self.budget // cells          # the largest arity of a parent to add
        ar = self.arities
        return [u for u in range(self.p) if ar[u] <= most and u != v and u not in pa]

    def refresh(self, v: int) -> None:
        """Rescore the arcs into ``v``: every addition (:meth:`addable`) and every
        removal, the new families scored in one kernel call."""
        pa = self.parents[v]
        added = self.addable(v, pa)
        col_add = self.add_raw[:, v]
        col_rem = self.rem[:, v]
        col_add[:] = _NEG
        col_rem[:] = _NEG
        if added:
            col_add[added] = self.ls._score_additions_idx(v, pa, added) - self.fam[v]
        if pa:
            col_rem[list(pa)] = np.array(self.ls._score_sets_idx(v, [tuple(x for x in pa if x != u)
                                                                    for u in pa])) - self.fam[v]

    def set_parents(self, v: int, pa: tuple[int, ...]) -> None:
        self.parents[v] = tuple(sorted(pa))
        self.fam[v] = self.family_score(v, self.parents[v])
        self.refresh(v)


def _run(ls: LocalScore, order, max_indegree, start, allowed, phases, max_steps, tol,
         compiled: bool = True) -> SearchResult:
    """The search: in one numba kernel (:mod:`bnexplore._climb`) on complete data with
    this module's family score, else (or with ``compiled=False``, the reference the
    tests compare the kernel with) the Python loop over :class:`_State`."""
    p = ls.n_nodes
    if max_indegree is None:
        max_indegree = p - 1
    max_indegree = check_int(max_indegree, "max_parents", low=0)
    if max_steps is not None and max_steps < 0:
        raise ValueError(f"max_steps must be non-negative, got {max_steps!r}")
    mask = _allowed_matrix(ls, order, allowed)
    adj = _start_adjacency(ls, start)
    if (adj & ~mask).any():
        u, v = np.argwhere(adj & ~mask)[0]
        raise ValueError(f"start arc {ls.names[u]} -> {ls.names[v]} is not allowed by the order/mask")
    if (adj.sum(axis=0) > max_indegree).any():
        raise ValueError(f"start graph exceeds max_parents={max_indegree}")
    if compiled and ls.data.missing is None and type(ls) is LocalScore:
        return _run_compiled(ls, mask, adj, int(max_indegree), phases, max_steps, tol)
    n0 = len(ls._cache)
    if ls.data.missing is None:
        st = _State(ls, adj, int(max_indegree))
    else:   # each move compared on the rows where its variables are observed
        from ._search_missing import AvailableCaseState
        st = AvailableCaseState(ls, adj, int(max_indegree))
    rows = []
    final_candidates = 0
    total_steps = 0
    # with missing cells each move is compared on its own rows, which is no total order
    # of the structures: a structure met before ends the search
    seen = None if ls.data.missing is None else {st.adj.tobytes()}
    reach = None         # the closure of st.adj, kept up to date through additions
    for phase, ops in phases:
        op_codes = np.array([i for i, op in enumerate(_OPERATORS) if op in ops], dtype=np.int64)
        while max_steps is None or total_steps < max_steps:
            A = st.adj
            if reach is None:
                reach = transitive_closure(A)
            n_cand, n_impr, best, val, u, v = _best_move(A, reach, mask, st.add_raw, st.rem, op_codes, tol)
            if best < 0:
                final_candidates = n_cand
                break
            op = _OPERATORS[best]
            if op == "add":
                st.adj[u, v] = True
                _reach_after_add(reach, u, v)
                st.set_parents(v, st.parents[v] + (u,))
            elif op == "remove":
                st.adj[u, v] = False
                reach = None     # the closure is computed again after a removal or reversal
                st.set_parents(v, tuple(x for x in st.parents[v] if x != u))
            else:
                reach = None
                st.adj[u, v] = False
                st.adj[v, u] = True
                st.set_parents(v, tuple(x for x in st.parents[v] if x != u))
                st.set_parents(u, st.parents[u] + (v,))
            total_steps += 1
            if seen is not None:
                if st.adj.tobytes() in seen:
                    break
                seen.add(st.adj.tobytes())
            rows.append({"step": total_steps, "phase": phase, "op": op,
                         "edge": (ls.names[u], ls.names[v]), "delta": float(val),
                         "score": float(st.fam.sum()), "n_candidates": n_cand, "n_improving": n_impr})
    dag = nx.DiGraph()
    dag.add_nodes_from(ls.names)
    dag.add_edges_from((ls.names[u], ls.names[v]) for u, v in zip(*np.nonzero(st.adj)))
    return SearchResult(dag=dag, score=float(st.fam.sum()), step_rows=rows, final_candidates=final_candidates,
                        n_families=len(ls._cache) - n0)


def _workspace(p: int) -> tuple[int, int]:
    """First sizes of :func:`_run_compiled`'s workspace for ``p`` nodes: family-table
    slots (a power of two, twice the families of every pair and a few hundred moves)
    and move records."""
    return 1 << int(4 * (p * p + 16 * p + 256)).bit_length(), 4 * p + 64


def _run_compiled(ls: LocalScore, mask, adj, max_indegree: int, phases, max_steps, tol) -> SearchResult:
    """:func:`_run` on complete data, the loop in :func:`bnexplore._climb._climb`: the
    same moves, scores and step rows as the Python loop."""
    from ._climb import _climb
    p = ls.n_nodes
    ops = np.full((len(phases), len(_OPERATORS)), -1, dtype=np.int64)
    n_ops = np.zeros(len(phases), dtype=np.int64)
    for f, (_, names) in enumerate(phases):
        codes = [i for i, op in enumerate(_OPERATORS) if op in names]
        ops[f, :len(codes)] = codes
        n_ops[f] = len(codes)
    budget = min(int(get_table_budget()), 1 << 62)
    k = min(max_indegree, max(p - 1, 0))
    ucols, w = ls._rows()
    pair = np.full((p, p), _NEG)
    if k > 0:     # the first parent of every parentless node: each pair's table counted once
        from .scores import _score_pairs
        need = ~adj.any(axis=0)[None, :] & ~np.eye(p, dtype=bool)
        _score_pairs(ucols, w, ls._arities, need, ls._bdeu, ls.ess, ls._logfact, pair)
    slots, n_rows = _workspace(p)
    while True:   # a workspace too small (reported by the kernel) is doubled
        tab = np.full(slots, -1, dtype=np.int64)
        pool = np.empty(slots // 2 * min(k + 2, 6), dtype=np.int64)
        fill = np.zeros(3, dtype=np.int64)
        moves = np.empty((n_rows, 6), dtype=np.int64)
        trace = np.empty((n_rows, p + 1))
        end = adj.copy()
        fam, n_moves, final_candidates = _climb(
            ucols, w, ls._cols, ls._arities, ls._bdeu, ls.ess, ls._logfact, ls._safe_parents, end, mask, k,
            budget, ops, n_ops, -1 if max_steps is None else int(max_steps), float(tol), pair, tab,
            np.empty(slots), pool, fill, moves, trace)
        if n_moves >= 0:
            break
        slots, n_rows = (2 * slots, n_rows) if fill[2] else (slots, 2 * n_rows)
    adj = end
    moves, trace, n_families = moves[:n_moves], trace[:n_moves], fill[1]
    names = ls.names
    totals = np.ascontiguousarray(trace[:, 1:]).sum(axis=1).tolist()   # numpy's sum, as st.fam.sum()
    rows = [{"step": i + 1, "phase": phases[f][0], "op": _OPERATORS[op], "edge": (names[u], names[v]),
             "delta": gain, "score": total, "n_candidates": n_cand, "n_improving": n_impr}
            for i, ((f, op, u, v, n_cand, n_impr), gain, total)
            in enumerate(zip(moves.tolist(), trace[:, 0].tolist(), totals))]
    dag = nx.DiGraph()
    dag.add_nodes_from(names)
    dag.add_edges_from((names[u], names[v]) for u, v in zip(*np.nonzero(adj)))
    return SearchResult(dag=dag, score=float(fam.sum()), step_rows=rows, final_candidates=int(final_candidates),
                        n_families=int(n_families))


@renamed(max_indegree="max_parents")
def hill_climb(data: DiscreteData | pd.DataFrame | None = None, score: LocalScore | None = None,
               prior: str = "K2", ess: float = 1.0, order: Sequence[str] | None = None,
               max_parents: int | None = None, start: nx.DiGraph | Iterable | None = None,
               allowed: np.ndarray | Iterable | None = None,
               operators: Sequence[str] = ("add", "remove", "reverse"),
               max_steps: int | None = None, tol: float = 1e-9, missing: str = "keep",
               max_iter: int = 10, random_state=None) -> SearchResult:
    """Greedy hill climbing: apply the best improving move until none improves.

    Parameters
    ----------
    data : DataFrame or DiscreteData, optional
        The data (or pass a ready ``score``).
    score : LocalScore, optional
        Reuse a scorer (and its cache) across searches.
    prior, ess : default "K2" and 1.0; see :class:`bnexplore.scores.LocalScore`.
    order : sequence of column names, optional
        Only arcs from earlier to later nodes are allowed (reversals are then never legal).
    max_parents : int, optional
        Largest number of parents per node (besides, no node gets a CPT over the
        table budget, :func:`bnexplore.data.set_table_budget`).
    start : DiGraph or iterable of (u, v), optional
        Initial network (default: empty).
    allowed : bool matrix (p, p) or iterable of (u, v), optional
        Arcs the search may use (e.g. a sub-space of variables).
    operators : subset of {"add", "remove", "reverse"}
    max_steps : int, optional
        Stop after this many accepted moves.
    tol : float
        A move must improve the score by more than this.
    missing : {"keep", "em", "drop", "raise"}, default "keep"
        Missing cells (NaN) in ``data``.  ``"keep"``: every move is compared on the rows
        where all the variables of the two families it compares are observed (available
        case per comparison, :mod:`bnexplore._available_case`), so a missing cell costs
        only the comparisons it touches; ``"em"``: structural EM (Friedman 1997): parameter
        EM with an exact E-step, then the search from the current structure on K2/BDeu
        of expected counts, repeated (:mod:`bnexplore._structural_em`), with
        ``result.extra["n_iter"]``, ``["log_likelihood"]``, ``["log_likelihoods"]``,
        ``["converged"]``, ``["cpts"]`` (the returned structure's EM parameters) and
        ``["iterations"]`` (each iteration's expected scores and structure); ``"drop"``:
        complete cases only; ``"raise"``: refuse.
        A ready ``score`` over data with missing cells is used as ``"keep"``.
    max_iter : int
        Largest number of structural-EM iterations (``missing="em"``).
    random_state : None, int or numpy.random.Generator
        The draws of structural EM's E-step (``missing="em"``).

    Returns
    -------
    SearchResult

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(2000, random_state=1)
    >>> res = bx.search.hill_climb(df, max_parents=2)
    >>> res.dag.number_of_nodes(), res.score < 0
    (8, True)
    """
    ops = tuple(operators)
    bad = set(ops) - {"add", "remove", "reverse"}
    if bad or not ops:
        raise ValueError(f"operators must be a non-empty subset of add/remove/reverse, got {list(operators)}")
    ls = _as_score(data, score, prior, ess, missing)
    return _searched(ls, order, max_parents, start, allowed, [("hc", ops)], max_steps, tol, missing,
                     max_iter, random_state)


@renamed(max_indegree="max_parents")
def greedy_thick_thin(data: DiscreteData | pd.DataFrame | None = None, score: LocalScore | None = None,
                      prior: str = "K2", ess: float = 1.0, order: Sequence[str] | None = None,
                      max_parents: int | None = None, start: nx.DiGraph | Iterable | None = None,
                      allowed: np.ndarray | Iterable | None = None, tol: float = 1e-9,
                      missing: str = "keep", max_iter: int = 10, random_state=None) -> SearchResult:
    """Greedy thick-thin search (GTT): greedy arc additions, then greedy arc removals.

    Same parameters as :func:`hill_climb` (default "K2" with ess 1.0, as in Dash &
    Cooper's GTT; ``missing``: available case per comparison, structural EM, complete
    cases or refuse). The ``phase`` column of ``steps`` says
    "thick" or "thin".

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(2000, random_state=1)
    >>> res = bx.search.greedy_thick_thin(df, max_parents=2)
    >>> set(res.steps["phase"]) <= {"thick", "thin"}
    True
    """
    ls = _as_score(data, score, prior, ess, missing)
    return _searched(ls, order, max_parents, start, allowed, [("thick", ("add",)), ("thin", ("remove",))],
                     None, tol, missing, max_iter, random_state)


def _searched(ls: LocalScore, order, max_parents, start, allowed, phases, max_steps, tol, missing,
              max_iter, random_state) -> SearchResult:
    """The search, or structural EM around it (``missing="em"`` on data with missing cells)."""
    if ls.data.missing is not None:
        from ._available_case import warn_unusable
        warn_unusable(ls.data, what="the structure search", stacklevel=4)
    if missing != "em" or ls.data.missing is None:
        return _run(ls, order, max_parents, start, allowed, phases, max_steps, tol)
    from ._structural_em import structural_em
    max_iter = check_int(max_iter, "max_iter", low=1)
    return structural_em(ls.data, lambda sc, g: _run(sc, order, max_parents, g, allowed, phases, max_steps, tol),
                         start, ls.prior, ls.ess, max_iter=max_iter, random_state=random_state)


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
