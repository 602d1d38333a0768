"""Structure comparisons on incomplete data: available case per comparison.

A structure search compares candidates two at a time.  With missing cells, a move that
changes the parents of ``X_v`` from the set ``A`` to the set ``B`` is judged by

    delta_v(A -> B) = s(v | B ; O(W)) - s(v | A ; O(W)),      W = {v} u A u B        (1)

where ``s(v | A ; R)`` is the family score of :mod:`bnexplore.scores` (K2 or BDeu)
counted on the rows ``R`` only, and ``O(W)`` is the set of rows where every variable of
``W`` is observed.  Both candidates are counted on the same rows, so neither can win
because its own variables are missing more often (a family counted on fewer rows has a
larger log marginal likelihood), and a missing cell costs only the comparisons whose
variables include its column (pairwise deletion).  The complete-case rule instead
scores every comparison on ``O(all columns)``, which is empty as soon as every row
misses one value somewhere.  :class:`bnexplore.scores.LocalScore` (``missing="keep"``)
compares the parent sets of one child on the rows where the child and all its
*candidates* are observed; here the rows follow each comparison, which is what a search
over all columns needs.

A search that needs one number per structure (the forests' arborescences and
Matrix-Tree sums, ISMB's weights over its structures) uses each family's *gain* over
the empty family, on the family's own rows,

    g_v(A) = delta_v({} -> A) = s(v | A ; O({v} u A)) - s(v | {} ; O({v} u A))       (2)

and scores a structure by

    S(G) = sum_v [ s(v | {} ; O({v})) + g_v(Pa_v) ].                                 (3)

With nothing missing, (1) is the ordinary score difference and (3) the ordinary score.
The changes (1) of different moves are counted on different rows, so they are not the
differences of one function of the structure: a greedy search by (1) could come back to
a structure, and stops when it does.  Under (3) two non-empty parent sets of one node are
compared through the empty set, each on its own rows; a gain counted on fewer rows is
smaller in size, so (3) leans towards families whose variables are observed more often.
Order averaging over incomplete data weighs each family by (3) too
(:mod:`bnexplore._order_available`).

Glossary
--------
O(W), rows
    The rows where all of the columns ``W`` are observed (a boolean mask).
key
    The columns of ``W`` that have a missing cell somewhere, sorted: ``O(W)`` depends on
    them only, so scores are cached per ``(key, child, parents)``.
scorer
    A :class:`~bnexplore.scores.LocalScore` over the columns of one comparison on the
    rows ``O(key)`` (complete data there): the same kernels and prior as the search's own.
"""
from __future__ import annotations

import warnings
from typing import Iterable, Sequence

import numpy as np

from .data.core import DiscreteData
from .scores import LocalScore

__all__ = ["AvailableCaseScore", "available_case", "warn_unusable"]

class AvailableCaseScore:
    """Family-score comparisons of Eq. (1)-(3) over data with missing cells.

    Parameters
    ----------
    ls : LocalScore
        A scorer over data with missing cells (``ls.data.missing`` set); its prior and
        ``ess`` are used.

    Examples
    --------
    >>> import numpy as np, bnexplore as bx
    >>> df = bx.networks.load("asia").sample(400, random_state=0)
    >>> df.loc[::3, "xray"] = np.nan
    >>> ac = AvailableCaseScore(bx.scores.LocalScore(df, missing="keep"))
    >>> d = ac.deltas(ac.index("xray"), (), [(ac.index("either"),)])[0]
    >>> rows = df["xray"].notna()                   # (1): the rows where xray, either are seen
    >>> sub = bx.scores.LocalScore(df[rows])
    >>> bool(np.isclose(d, sub.score("xray", ["either"]) - sub.score("xray", [])))
    True
    """

    def __init__(self, ls: LocalScore):
        data = ls.data
        if data.missing is None:
            raise ValueError("AvailableCaseScore is for data with missing cells; use the LocalScore itself")
        self.ls = ls
        self.data = data
        self._has_missing = data.missing.any(axis=0)
        self._cache: dict[tuple, float] = {}

    def index(self, name) -> int:
        return self.data.index(name)

    # ------------------------------------------------------------------ rows
    def key(self, variables: Iterable[int]) -> tuple[int, ...]:
        """The columns of ``variables`` with missing cells: they alone fix ``O(W)``."""
        return tuple(sorted({int(u) for u in variables if self._has_missing[u]}))

    def rows(self, variables: Iterable[int]) -> np.ndarray:
        """``O(W)``: the rows where every column of ``variables`` is observed."""
        key = self.key(variables)
        if not key:
            return np.ones(self.data.n_rows, dtype=bool)
        return ~self.data.missing[:, list(key)].any(axis=1)

    def _scorer(self, key: tuple[int, ...], members: list[int]) -> LocalScore:
        """A scorer over the columns ``members`` (in this order) on the rows ``O(key)``."""
        d = self.data
        rows = self.rows(key)
        sub = DiscreteData(d.codes[np.ix_(rows, members)], [d.names[u] for u in members],
                           [d.states[u] for u in members])          # complete on these rows
        return LocalScore(sub, prior=self.ls.prior, ess=self.ls.ess, cache=False)

    # ------------------------------------------------------------------ scores
    def scores_on(self, key: tuple[int, ...], child: int, sets: Sequence[tuple[int, ...]]) -> list[float]:
        """``s(child | A ; O(key))`` for every sorted tuple ``A`` of ``sets`` (cached)."""
        out = [self._cache.get((key, child, ps)) for ps in sets]
        todo = [i for i, v in enumerate(out) if v is None]
        if todo:
            members = sorted({child, *(u for i in todo for u in sets[i])})
            pos = {u: j for j, u in enumerate(members)}
            sc = self._scorer(key, members)
            if sc.data.n_rows == 0:
                vals = [0.0] * len(todo)          # no row: every candidate explains nothing
            else:
                vals = sc._score_sets_idx(pos[child], [tuple(pos[u] for u in sets[i]) for i in todo])
            for i, v in zip(todo, vals):
                out[i] = float(v)
                self._cache[(key, child, sets[i])] = float(v)
        return out

    def deltas(self, child: int, old: tuple[int, ...], news: Sequence[tuple[int, ...]]) -> np.ndarray:
        """Eq. (1): ``delta_child(old -> new)`` for every ``new`` of ``news`` (sorted tuples)."""
        out = np.empty(len(news))
        groups: dict[tuple[int, ...], list[int]] = {}
        base = (child, *old)
        for i, new in enumerate(news):
            groups.setdefault(self.key(base + tuple(new)), []).append(i)
        for key, idx in groups.items():
            vals = self.scores_on(key, child, [old] + [news[i] for i in idx])
            out[idx] = np.asarray(vals[1:]) - vals[0]
        return out

    def family(self, child: int, parents: tuple[int, ...]) -> float:
        """``s(child | Pa ; O({child} u Pa))``: the family on its own rows."""
        return self.scores_on(self.key((child, *parents)), child, [tuple(parents)])[0]

    def gain(self, child: int, parents: tuple[int, ...]) -> float:
        """Eq. (2): the family's gain over the empty family, on the family's rows."""
        return float(self.deltas(child, (), [tuple(parents)])[0])

    def gains(self, child: int, sets: Sequence[tuple[int, ...]]) -> np.ndarray:
        """Eq. (2) for many sorted parent tuples of one child."""
        return self.deltas(child, (), list(sets))

    def structure_score(self, parents: Sequence[tuple[int, ...]]) -> float:
        """Eq. (3) of the structure with ``parents[v]`` the sorted parents of ``v``."""
        return float(sum(self.family(v, ()) + (self.gain(v, pa) if pa else 0.0)
                         for v, pa in enumerate(parents)))


def available_case(ls: LocalScore) -> AvailableCaseScore | None:
    """The available-case comparisons of ``ls`` (kept on it), or None when its data is complete."""
    if ls.data.missing is None:
        return None
    ac = getattr(ls, "_available_case", None)
    if ac is None:
        ac = ls._available_case = AvailableCaseScore(ls)
    return ac


def warn_unusable(data: DiscreteData, variables: Sequence[int] | None = None, what: str = "the search",
                  min_rows: int = 10, stacklevel: int = 3) -> list[str]:
    """Warn (UserWarning) about columns missing on so many rows that no comparison can use them.

    A column observed on fewer than ``min_rows`` rows, or together with every other
    (not so rare) column of ``variables`` on fewer than ``min_rows`` rows, gives each
    comparison that involves it (Eq. 1-2) almost no rows (on fewer than ``10 * min_rows``
    rows, ``min_rows`` is a tenth of them, at least 2):
    the learner then leaves it out of the structure, whatever its relation to the other
    columns.  Returns the columns named (empty: nothing to say).

    Examples
    --------
    >>> import warnings, pandas as pd
    >>> from bnexplore.data import DiscreteData
    >>> df = pd.DataFrame({"a": list("xy") * 60, "b": ["u"] * 5 + [None] * 115})
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     warn_unusable(DiscreteData.from_frame(df, missing="keep"))
    ['b']
    """
    miss = data.missing
    if miss is None:
        return []
    idx = list(range(data.n_cols)) if variables is None else [int(v) for v in variables]
    if len(idx) < 2:
        return []
    min_rows = min(min_rows, max(2, data.n_rows // 10))    # small data sets: a tenth of the rows
    obs = (~miss[:, idx]).astype(np.int64)
    together = obs.T @ obs
    rare = np.diag(together) < min_rows              # observed on too few rows at all
    np.fill_diagonal(together, -1)
    # the others: shared too few rows with every column that is not rare itself
    shared = np.where(rare[None, :], -1, together).max(axis=1)
    poor = np.flatnonzero(rare | ((shared >= 0) & (shared < min_rows)))
    names = [data.names[idx[i]] for i in poor]
    if names:
        seen = ", ".join(f"{data.names[idx[i]]!r} observed on {int(obs[:, i].sum())} of {data.n_rows} rows"
                         for i in poor)
        warnings.warn(f"{what} cannot use the columns {names}: {seen}, with fewer than {min_rows} rows "
                      f"shared with any other column, so the structure leaves them unconnected; drop "
                      f"or impute them", UserWarning, stacklevel=stacklevel)
    return names
