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

import numpy as np

from ._available_case import available_case
from .scores import LocalScore
from .search import _State

__all__ = ["AvailableCaseState"]


class AvailableCaseState(_State):
    """Search state whose score changes are available-case comparisons (Eq. 1)."""

    def __init__(self, ls: LocalScore, adj: np.ndarray, max_indegree: int):
        self.ac = available_case(ls)
        self._start(ls, adj, max_indegree)
        for v in range(self.p):
            self.refresh(v)

    def family_score(self, v: int, pa: tuple[int, ...]) -> float:
        """The family on the rows where it is observed."""
        return self.ac.family(v, pa)

    def refresh(self, v: int) -> None:
        """Eq. (1) for every addition into ``v`` (:meth:`addable`) and every removal,
        each on its own rows."""
        pa = self.parents[v]
        added = self.addable(v, pa)
        sets = [tuple(sorted(pa + (u,))) for u in added] + [tuple(x for x in pa if x != u) for u in pa]
        col_add = np.full(self.p, -np.inf)
        col_rem = np.full(self.p, -np.inf)
        if sets:
            delta = self.ac.deltas(v, pa, sets)
            col_add[added] = delta[:len(added)]
            col_rem[list(pa)] = delta[len(added):]
        self.add_raw[:, v] = col_add
        self.rem[:, v] = col_rem
