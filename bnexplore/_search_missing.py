"""The greedy searches' delta tables over data with missing cells.

:class:`AvailableCaseState` is :class:`bnexplore.search._State` (adjacency, family scores,
the tables of score changes of every addition and removal) with every change judged by
Eq. (1) of :mod:`bnexplore._available_case`: a move of ``X_v``'s parents from ``A`` to
``B`` on the rows where ``X_v``, ``A`` and ``B`` are observed.  A reversal changes two
families, each judged on its own rows, and the move's change is their sum.  The complete-
data state and its counting kernels are left as they are; the search (``_run``) takes
this state when ``ls.data.missing`` is set.

Glossary
--------
fam
    ``fam[v]``: the family of ``v`` on the rows where it is observed (what the search
    reports as the score; with missing cells a sum over differently sized row sets).
add_raw, rem
    ``add_raw[u, v]``, ``rem[u, v]``: Eq. (1) for adding / removing ``u -> v``.
"""
from __future__ import annotations

import math

import numpy as np

from ._available_case import available_case
from .data.core import get_table_budget
from .scores import LocalScore
from .search import _State

__all__ = ["AvailableCaseState"]


class AvailableCaseState(_State):
    """Search state whose score changes are available-case comparisons (Eq. 1)."""

    def __init__(self, ls: LocalScore, adj: np.ndarray, max_indegree: int):
        self.ls = ls
        self.ac = available_case(ls)
        self.p = adj.shape[0]
        self.adj = adj
        self.k = max_indegree
        self.arities = [int(a) for a in ls.data.arities]
        self.budget = get_table_budget()   # a CPT over it could not be fitted: no such move
        self.parents = [tuple(np.nonzero(adj[:, v])[0].tolist()) for v in range(self.p)]
        self.fam = np.array([self.ac.family(v, self.parents[v]) for v in range(self.p)])
        self.add_raw = np.full((self.p, self.p), -np.inf)
        self.rem = np.full((self.p, self.p), -np.inf)
        for v in range(self.p):
            self.refresh(v)

    def refresh(self, v: int) -> None:
        """Eq. (1) for every addition into ``v`` (when it may take one more parent within
        the table budget) and every removal, each on its own rows."""
        pa = self.parents[v]
        cells = math.prod(self.arities[u] for u in pa) * self.arities[v]
        added = [u for u in range(self.p) if u != v and u not in pa
                 and cells * self.arities[u] <= self.budget] if len(pa) < self.k else []
        sets = [tuple(sorted(pa + (u,))) for u in added] + [tuple(x for x in pa if x != u) for u in pa]
        col_add = np.full(self.p, -np.inf)
        col_rem = np.full(self.p, -np.inf)
        if sets:
            delta = self.ac.deltas(v, pa, sets)
            col_add[added] = delta[:len(added)]
            col_rem[list(pa)] = delta[len(added):]
        self.add_raw[:, v] = col_add
        self.rem[:, v] = col_rem

    def set_parents(self, v: int, pa: tuple[int, ...]) -> None:
        self.parents[v] = tuple(sorted(pa))
        self.fam[v] = self.ac.family(v, self.parents[v])
        self.refresh(v)
