"""Instance-specific Markov blanket model averaging (Visweswaran & Cooper, ISMB).

The model space is the set of *Markov blanket (MB) structures* of a target ``Z``: DAGs
over all variables whose every arc is a blanket arc, i.e. points into ``Z`` or into a
child of ``Z`` (section 5.1).  Nodes fall into five groups (Figure 4): the target (T),
its parents (P), children (C), spouses (S: other parents of children) and the rest (O).

Operators (section 5.7, Figures 4 and 5).  An operator is valid exactly when it yields a
legal MB structure; the rules below are what this means arc by arc (``*`` = only if the
result is acyclic), see :data:`OPERATOR_TABLE`:

* add ``X -> Z`` for X in S or O; add ``X -> C`` for any X not already a parent of C
  (``*`` when X is itself a child); add ``Z -> X`` for X in S or O (X becomes a child).
* delete any arc; deleting ``Z -> C`` also removes the arcs into C, which stop being
  blanket arcs (Figure 5).
* reverse ``P -> Z``; reverse ``Z -> C`` (C becomes a parent and loses its incoming arcs,
  Figure 5); reverse ``C1 -> C2`` between children (``*``).  Reversing an arc into a child
  from a parent/spouse would create an arc into a non-child: invalid.

Scores.  The phase-1 score of a structure is its log marginal likelihood (Eq. 10-11,
Cooper-Herskovits/K2 parameter prior, uniform structure prior), the sum of
:class:`bnexplore.scores.LocalScore` family scores over every node.  Prediction with
one structure (Eq. 6, section 5.3) uses only the families of Z and of its children with
posterior-mean K2 parameters.  Selective model averaging (Eq. 13) and the phase-2 score
(Eq. 14, KL divergence between the averaged estimate over R and over R plus a
candidate) are computed from log scores with log-sum-exp.

Search (section 5.6, Figure 6).  Phase 1: greedy hill climbing from the empty structure
on the phase-1 score; the start and every improving best successor go into R.  Phase 2:
best-first search with a priority queue of capacity ``w`` (the worst dropped when full);
candidates are ranked by the phase-2 score against the current R; the best is moved to R
at every iteration; the search stops when no queued structure has a score above
``epsilon`` for ``patience`` consecutive iterations, or when ``time_limit`` seconds pass.

Missing values (training data with :attr:`~bnexplore.data.DiscreteData.missing` cells)
follow the package policy: every structure score (phase 1, the phase-2 candidates'
weights in Eq. 13-14) is a sum of family terms, each family's gain over the empty family
counted on the rows where the family's variables are observed
(:mod:`bnexplore._available_case` Eq. 2-3), so a structure cannot win because the
variables it uses are missing more often and a missing cell costs only the families of
its column (the complete cases of every variable may be no row at all); the parameters of the prediction families
(the target's and its children's, section 5.3) and the marginals of missing roots are
counted by *available case*, each family over the rows where all its variables are
observed.  Rows whose target is missing enter no prediction family and are dropped.

Missing values in a test instance are summed out within each structure G.  The parents
of the target and the spouses are roots of G and take their K2 marginal, so G defines
a joint over the target and its blanket; with ``M_G`` the missing members of the blanket

    P(Z, x_obs | G) ∝ sum over the states m of M_G of
        prod_{v in M_G, v a root} P(v = m_v) · P(Z | pa_Z) · prod_{C child} P(C | pa_C, Z).

A missing non-member would only contribute its marginal, which sums to one, and so would
a missing child that no other family holds (a barren child, removed repeatedly, with the
missing spouses only it held).  The remaining families with a missing variable split into
groups linked by shared missing variables; each group is summed over its own members'
states (at most :data:`MAX_MISSING_COMPLETIONS`) and cached per instance, so the
successors of the search that share a group share its sum.  The result equals the sum
over every completion of every missing variable, however many are missing.

Everything that does not depend on the test instance (phase 1, the successors of every
structure met with their scores and prediction-family ids, phase 2's first queue - the
successors of the phase-1 models -, the NISMB sequence) is computed once per
:class:`MBModel` and shared by all test instances; per instance only the family terms
(counted in one numba pass, :mod:`bnexplore._ismb_counts`) and the KL scores are new.
Family scores are cached by :class:`~bnexplore.scores.LocalScore`.  Structures are
parent masks held as Python integers, so any number of variables is accepted.
The engine: :mod:`bnexplore._mb_space` (structures as parent masks),
:mod:`bnexplore._ismb_predict` (Eq. 6, missing sums), :mod:`bnexplore._ismb_search` (phase 2).

References
----------
S. Visweswaran and G. F. Cooper. Learning instance-specific predictive models.
Journal of Machine Learning Research 11:3333-3369, 2010.
"""
from __future__ import annotations

import math
import threading
import time
from typing import Iterator, Sequence

import numpy as np
import pandas as pd

from ._ismb_result import ISMBResult
from ._ismb_predict import (MAX_MISSING_COMPLETIONS, _Instance, _logsumexp_rows,  # noqa: F401
                            _MissingInstance, _Prediction)
from ._ismb_search import (SEARCH_CONSTRAINTS, ModelsInR, best_successor, fresh_successors,
                           nismb_sequence, phase2)
from ._mb_space import MarkovBlanket, _bits, _enumerate_masks, _n_labelled_dags, _successor_masks
from ._validation import Options, check_int
from .data.core import DiscreteData, as_discrete
from ._available_case import available_case, warn_unusable
from .scores import LocalScore

__all__ = [
    "MarkovBlanket", "OPERATOR_TABLE", "count_markov_blankets", "enumerate_markov_blankets",
    "successors", "apply_operator", "MBModel", "ISMBResult", "VARIANTS",
]

VARIANTS = ("ismb", "ms", "nismb")
#: the variants one search runs (ISMB-MS is read off the ISMB search)
_SEARCH_VARIANTS = Options("ismb", "nismb")

# --------------------------------------------------------------------------- operators

#: Figure 4 reconstructed: validity of each operator by the groups of the arc's tail
#: (rows) and head (columns).  "valid", "acyclic" (valid only if the result is
#: acyclic), "cleanup" (valid; arcs that leave the blanket are removed, Figure 5),
#: "present" (the arc already exists in every such structure), "absent" (no such arc
#: can exist), "invalid".
OPERATOR_TABLE = pd.DataFrame(
    [
        # add                                       delete                        reverse
        ("add", "T", "T", "invalid"), ("add", "T", "P", "invalid"), ("add", "T", "C", "present"),
        ("add", "T", "S", "valid"), ("add", "T", "O", "valid"),
        ("add", "P", "T", "present"), ("add", "P", "P", "invalid"), ("add", "P", "C", "valid"),
        ("add", "P", "S", "invalid"), ("add", "P", "O", "invalid"),
        ("add", "C", "T", "invalid"), ("add", "C", "P", "invalid"), ("add", "C", "C", "acyclic"),
        ("add", "C", "S", "invalid"), ("add", "C", "O", "invalid"),
        ("add", "S", "T", "valid"), ("add", "S", "P", "invalid"), ("add", "S", "C", "valid"),
        ("add", "S", "S", "invalid"), ("add", "S", "O", "invalid"),
        ("add", "O", "T", "valid"), ("add", "O", "P", "invalid"), ("add", "O", "C", "valid"),
        ("add", "O", "S", "invalid"), ("add", "O", "O", "invalid"),
        ("delete", "P", "T", "valid"), ("delete", "T", "C", "cleanup"),
        ("delete", "P", "C", "valid"), ("delete", "C", "C", "valid"), ("delete", "S", "C", "valid"),
        ("reverse", "P", "T", "valid"), ("reverse", "T", "C", "cleanup"),
        ("reverse", "P", "C", "invalid"), ("reverse", "C", "C", "acyclic"),
        ("reverse", "S", "C", "invalid"),
    ],
    columns=["operator", "tail", "head", "validity"],
)


def successors(mb: MarkovBlanket) -> list[tuple[str, tuple[str, str], MarkovBlanket]]:
    """Every structure one valid operation away from ``mb`` (Figures 4 and 5).

    Returns
    -------
    list of (operator, (tail, head), MarkovBlanket)

    Examples
    --------
    >>> mb = MarkovBlanket(["Z", "A", "B"], "Z")
    >>> sorted((op, arc) for op, arc, _ in successors(mb))
    [('add', ('A', 'Z')), ('add', ('B', 'Z')), ('add', ('Z', 'A')), ('add', ('Z', 'B'))]
    """
    out = []
    for op, x, y, new, _ in _successor_masks(mb._pa, mb._t):
        out.append((op, (mb.names[x], mb.names[y]), MarkovBlanket._from_masks(mb.names, mb._t, new)))
    return out


def apply_operator(mb: MarkovBlanket, operator: str, tail: str, head: str) -> MarkovBlanket:
    """Apply ``operator`` ("add", "delete" or "reverse") to the arc ``tail -> head``.

    Raises a ``ValueError`` saying why when the operation is not valid for ``mb``.

    Examples
    --------
    >>> mb = MarkovBlanket(["Z", "A", "B"], "Z", {"A": ["Z", "B"]})
    >>> apply_operator(mb, "delete", "Z", "A")  # B -> A leaves the blanket too (Figure 5)
    MarkovBlanket(target='Z': no arcs)
    """
    if operator not in ("add", "delete", "reverse"):
        raise ValueError(f"operator must be 'add', 'delete' or 'reverse', got {operator!r}")
    for name in (tail, head):
        if name not in mb.names:
            raise ValueError(f"unknown variable {name!r}; variables are {mb.names}")
    x, y = mb.names.index(tail), mb.names.index(head)
    for op, a, b, new, _ in _successor_masks(mb._pa, mb._t):
        if op == operator and a == x and b == y:
            return MarkovBlanket._from_masks(mb.names, mb._t, new)
    raise ValueError(
        f"{operator} {tail}->{head} is not valid here ({tail} is {mb.category(tail)}, {head} is "
        f"{mb.category(head)}; see bnexplore.ismb.OPERATOR_TABLE): it would not give a legal "
        f"Markov blanket structure of {mb.target!r}")


# --------------------------------------------------------------------------- counting


def count_markov_blankets(n: int, method: str = "enumerate") -> int:
    """Number of Markov blanket structures of a target with ``n`` predictors.

    ``method="enumerate"`` counts the structures one by one (feasible up to n = 5);
    ``method="formula"`` uses ``sum_k C(n,k) 2^(n-k) 2^(k(n-k)) a_k`` (k children, each
    with any set of non-child parents, a DAG among the children; ``a_k`` labelled DAGs).

    Examples
    --------
    >>> [count_markov_blankets(n) for n in (1, 2, 3, 4)]
    [3, 15, 153, 3567]
    >>> count_markov_blankets(4, method="formula")
    3567
    """
    n = check_int(n, "n", low=0)          # the number of predictors
    if method == "formula":
        return sum(math.comb(n, k) * 2 ** (n - k) * 2 ** (k * (n - k)) * _n_labelled_dags(k)
                   for k in range(n + 1))
    if method != "enumerate":
        raise ValueError(f"method must be 'enumerate' or 'formula', got {method!r}")
    if n > 5:
        raise ValueError(f"enumerating the {count_markov_blankets(n, 'formula'):,} structures of "
                         f"n={n} predictors is too slow: use method='formula'")
    return sum(1 for _ in _enumerate_masks(n + 1, 0))


def enumerate_markov_blankets(names: Sequence[str], target: str,
                              max_structures: int = 2_000_000) -> Iterator[MarkovBlanket]:
    """Iterate over every MB structure of ``target`` over ``names`` (small problems).

    Examples
    --------
    >>> sum(1 for _ in enumerate_markov_blankets(["Z", "A", "B", "C"], "Z"))
    153
    """
    names = [str(n) for n in names]
    if target not in names:
        raise ValueError(f"target {target!r} is not one of the variables {names}")
    total = count_markov_blankets(len(names) - 1, method="formula")
    if total > max_structures:
        raise ValueError(f"{len(names) - 1} predictors have {total:,} Markov blanket structures, "
                         f"more than max_structures={max_structures:,}: use the ISMB search")
    t = names.index(target)
    for pa in _enumerate_masks(len(names), t):
        yield MarkovBlanket._from_masks(names, t, pa)


# --------------------------------------------------------------------------- the model


class MBModel(_Prediction):
    """Markov-blanket model space over training data: scores, prediction, search.

    Parameters
    ----------
    data : DataFrame or DiscreteData
        Discrete training data; missing cells are allowed (structures and parameters
        by available case: see the module notes).
    target : str, optional
        Target variable; default ``data.target`` / ``df.attrs["target"]``.
    score : LocalScore, optional
        A K2 family-score cache over the same data, to share (over its complete cases
        when cells are missing: structures are then scored on those rows only).

    Notes
    -----
    Any number of variables: parent sets are Python integers used as bitsets of any
    width.  The first phase-2 queue (the successors of the phase-1 models) holds about
    ``(2 + children) * p`` structures per phase-1 model, so time and memory grow with
    the square of ``p``; the ISMB classifier pre-selects at most ``max_candidates``
    features.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.datasets.load("weather.nominal")
    >>> m = MBModel(df)
    >>> res = m.search(df.drop(columns="play").iloc[0], queue_width=100)
    >>> float(res.proba.sum().round(6))
    1.0
    """

    def __init__(self, data, target: str | None = None, score: LocalScore | None = None):
        if isinstance(data, pd.DataFrame) and target is None:
            target = data.attrs.get("target")
        if not isinstance(data, DiscreteData):
            data = as_discrete(data, target=target, missing="keep")
        target = target if target is not None else data.target
        if target is None:
            raise ValueError("no target: pass target= (the class column) or data with a target")
        if target not in data.names:
            raise ValueError(f"target {target!r} is not a column; columns are {data.names}")
        if data.missing is not None and data.missing[:, data.index(target)].any():
            # every prediction family holds the target: such a row counts nowhere
            data = data.take(~data.missing[:, data.index(target)])
        if data.n_rows == 0:
            raise ValueError("cannot fit on 0 rows")
        self.data = data
        self.target = target
        self.t = data.index(target)
        self.p = data.n_cols
        self.names = list(data.names)
        self.classes = list(data.states[self.t])
        self.r = int(data.arities[self.t])
        if score is None:
            score = LocalScore(data, prior="K2", missing="keep")
        elif not isinstance(score, LocalScore) or score.prior != "K2" \
                or score.data.n_rows not in (data.n_rows, data.complete_cases().n_rows) \
                or score.data.names != data.names:
            raise ValueError("score must be a K2 LocalScore over the same data (or over its "
                             "complete cases when cells are missing)")
        self.local = score
        # missing cells: a family's score is its gain over the empty family on the rows
        # where the family is observed (bnexplore._available_case, Eq. 2-3)
        self._ac = available_case(score)
        if self._ac is not None:
            warn_unusable(data, what="the Markov-blanket search", stacklevel=3)
        self._cols = data.columns
        self._obs = None               # (p, n) observed cells; None when nothing is missing
        self._n_obs = [data.n_rows] * data.n_cols
        if data.missing is not None:
            # a missing cell is coded -1, which no instance value matches
            self._obs = np.ascontiguousarray(~data.missing.T)
            self._cols = np.where(self._obs, data.columns, -1).astype(data.columns.dtype)
            self._n_obs = [int(k) for k in self._obs.sum(axis=1)]
        self._zcol = np.ascontiguousarray(data.columns[self.t]).astype(np.int64)
        self._arity = [int(a) for a in data.arities]
        self._fam: dict[tuple[int, int], float] = {}
        # prediction families (v, mask) -> id; id 0 is the zero padding family
        self._fid: dict[tuple[int, int], int] = {}
        self._fams: list[tuple[int, int]] = [(-1, 0)]
        self._empty = tuple([0] * self.p)
        self.base_score = float(sum(self.family_score(v, 0) for v in range(self.p)))
        self._phase1: tuple | None = None
        self._nismb: dict | None = None
        self._succ_cache: dict[tuple[int, ...], list] = {}
        self._queue0: tuple | None = None     # phase 2's first queue (instance independent)
        self._toggles: dict[tuple[int, int], dict] = {}   # phase-1 score differences
        self._ids_cache: dict[tuple[int, ...], tuple[int, ...]] = {}
        self._logmarg: dict[int, np.ndarray] = {}   # log K2 marginals of missing roots
        # the caches above are shared by every search; the lock keeps the family ids and
        # the NISMB sequence consistent when several threads search one fitted model
        self._lock = threading.RLock()

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_lock"]              # a lock cannot be pickled or deep-copied
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_logmarg", {})
        self.__dict__.setdefault("_toggles", {})
        self.__dict__.setdefault("_queue0", None)
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ scores
    def family_score(self, v: int, mask: int) -> float:
        """log marginal likelihood of node ``v`` with parent mask ``mask`` (cached)."""
        key = (v, mask)
        s = self._fam.get(key)
        if s is None:
            pa = tuple(_bits(mask))
            if self._ac is None:
                s = self.local.score_idx(v, pa)
            else:
                s = self._ac.family(v, ()) + (self._ac.gain(v, pa) if pa else 0.0)
            self._fam[key] = s
        return s

    def _score_masks(self, pa: tuple[int, ...]) -> float:
        return self.base_score + sum(self.family_score(v, m) - self.family_score(v, 0)
                                     for v, m in enumerate(pa) if m)

    def _check_mb(self, mb: MarkovBlanket) -> MarkovBlanket:
        if not isinstance(mb, MarkovBlanket):
            raise TypeError(f"expected a MarkovBlanket, got {type(mb).__name__}")
        if mb.names != self.names or mb.target != self.target:
            raise ValueError("the structure is over other variables or another target than the "
                             "model: build it with MarkovBlanket(model.names, model.target, ...)")
        return mb

    def log_score(self, mb: MarkovBlanket) -> float:
        """Phase-1 score (Eq. 11): log P(D | G) with the K2 parameter prior."""
        return self._score_masks(self._check_mb(mb)._pa)

    def empty(self) -> MarkovBlanket:
        return MarkovBlanket._from_masks(self.names, self.t, self._empty)

    # ------------------------------------------------------------------ instances
    def _instance(self, x) -> _Instance | _MissingInstance:
        if isinstance(x, (_Instance, _MissingInstance)):
            return x
        codes = self._as_codes(x)
        miss = [int(v) for v in np.flatnonzero(codes < 0)]
        if not miss:
            return _Instance(self._cols, codes, self.r)
        # the observed values; the eq rows of the missing variables are never read
        base = _Instance(self._cols, codes, self.r)
        base.eq[miss] = False
        return _MissingInstance(codes, sum(1 << v for v in miss), base)

    def _as_codes(self, x) -> np.ndarray:
        """Codes of one instance over all variables (the target entry is ignored)."""
        if isinstance(x, pd.DataFrame):
            if len(x) != 1:
                raise ValueError(f"pass a single instance (one row), got {len(x)} rows")
            x = x.iloc[0]
        if isinstance(x, (pd.Series, dict)):
            s = pd.Series(x)
            missing = [n for n in self.names if n != self.target and n not in s.index]
            if missing:
                raise ValueError(f"instance lacks the variables {missing}")
            codes = np.zeros(self.p, dtype=np.int64)
            for i, n in enumerate(self.names):
                if i == self.t:
                    continue
                val = s[n]
                states = self.data.states[i]
                hit = [j for j, st in enumerate(states) if st == val or str(st) == str(val)]
                if not hit:
                    raise ValueError(f"value {val!r} of {n!r} was not seen in training; "
                                     f"known values are {states}")
                codes[i] = hit[0]
            return codes
        arr = np.asarray(x)
        if arr.ndim != 1 or arr.shape[0] not in (self.p, self.p - 1):
            raise ValueError(f"an instance is {self.p} codes (all variables) or {self.p - 1} "
                             f"(without the target), got shape {arr.shape}")
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError("integer codes expected; pass a pandas Series or dict for labels")
        if arr.shape[0] == self.p - 1:
            arr = np.insert(arr, self.t, 0)
        arr = arr.astype(np.int64).copy()
        arr[self.t] = 0
        ar = np.asarray(self._arity)
        bad = np.nonzero((arr < -1) | (arr >= ar))[0]     # -1: a missing value, summed out
        if bad.size:
            b = int(bad[0])
            raise ValueError(f"code {arr[b]} of {self.names[b]!r} is outside its "
                             f"{self._arity[b]} states")
        return arr

    def predict_structure(self, mb: MarkovBlanket, x) -> np.ndarray:
        """P(Z | x, G, D) of one structure (Eq. 6 parameters, section 5.3), over ``classes``."""
        return np.exp(self._log_pred(self._instance(x), self._check_mb(mb)._pa))

    # ------------------------------------------------------------------ successors (shared)
    def _successors(self, pa: tuple[int, ...]) -> tuple[list, np.ndarray]:
        """Successors of a structure: (masks list, log scores), deduplicated, cached per
        structure (shared by all test instances)."""
        hit = self._succ_cache.get(pa)
        if hit is None:
            hit = self._successor_entry(pa)
        return hit[0], hit[1]

    def _successor_entry(self, pa: tuple[int, ...]) -> list:
        """[keys, log scores, id matrix (made on demand), nodes changed per key]."""
        base = self._score_masks(pa)
        out: dict[tuple[int, ...], float] = {}
        changes: list[tuple[int, ...]] = []
        fam = self._fam
        for _, _, _, new, changed in _successor_masks(pa, self.t):
            if new in out:
                continue
            s = base
            for v in changed:
                s += (fam.get((v, new[v])) or self.family_score(v, new[v])) \
                    - (fam.get((v, pa[v])) or self.family_score(v, pa[v]))
            out[new] = s
            changes.append(changed)
        keys = list(out)
        res = [keys, np.fromiter(out.values(), dtype=float, count=len(keys)), None, changes]
        if len(self._succ_cache) < 100_000:
            self._succ_cache[pa] = res
        return res

    def _successor_block(self, pa: tuple[int, ...]) -> tuple[list, np.ndarray, np.ndarray]:
        """Successors of ``pa`` (in the order of :meth:`_successors`) with their log scores
        and the ids of their prediction families as rows of a zero-padded matrix, made
        when a phase-2 search first needs them (shared by all test instances)."""
        hit = self._succ_cache.get(pa)
        if hit is None:
            hit = self._successor_entry(pa)
        if hit[2] is None:
            hit[2] = self._successor_ids(pa, hit[0], hit[3])
        return hit[0], hit[1], hit[2]

    def _initial_queue(self) -> tuple[list, np.ndarray, np.ndarray, np.ndarray]:
        """Phase 2's first queue, the same for every instance: the successors of the
        phase-1 models not in R (first occurrences, in order), their log scores, their
        prediction-family id matrix and its distinct ids (cached)."""
        with self._lock:
            if self._queue0 is None:
                models, _ = self.phase1()
                keys, S, mat = fresh_successors(self, models, set(models), set())
                fids = np.unique(mat)
                self._queue0 = (keys, S, mat, fids[fids > 0])
            return self._queue0

    # ------------------------------------------------------------------ phase 1
    def phase1(self) -> tuple[list[tuple[int, ...]], list[float]]:
        """Greedy hill climbing from the empty structure (instance independent, cached).

        Returns the masks and log scores of R after phase 1: the start and every improving
        best successor, in order.
        """
        if self._phase1 is None:
            cur = self._empty
            cur_s = self.base_score
            models, scores = [cur], [cur_s]
            while True:
                step = best_successor(self, cur)     # the argmax of _successors(cur)
                if step is None or not step[0] > cur_s + 1e-9:
                    break
                cur_s, cur = step
                models.append(cur)
                scores.append(cur_s)
            self._phase1 = (models, scores)
        return list(self._phase1[0]), list(self._phase1[1])

    def phase1_models(self) -> list[MarkovBlanket]:
        return [MarkovBlanket._from_masks(self.names, self.t, m) for m in self.phase1()[0]]

    # ------------------------------------------------------------------ NISMB sequence
    def _nismb_sequence(self, n: int, queue_width: int) -> list[tuple[tuple[int, ...], float]]:
        """The first ``n`` phase-2 models of NISMB: best-first search on the phase-1 score
        (instance independent, so cached and extended on demand)."""
        with self._lock:
            return nismb_sequence(self, n, queue_width)

    # ------------------------------------------------------------------ the search
    def search(self, x, queue_width: int = 1000, epsilon: float = 1e-3, patience: int = 10,
               time_limit: float | None = None, variant: str = "ismb",
               n_phase2: int | None = None) -> ISMBResult:
        """Run the two-phase search for one instance and return R with its estimates.

        Parameters
        ----------
        x : pandas Series / dict of labels, or integer codes
            The instance (the target value, if present, is ignored).
        queue_width : int
            Capacity ``w`` of the phase-2 priority queue.
        epsilon : float
            Phase-2 score threshold.
        patience : int
            Stop after this many consecutive iterations in which no queued structure
            scores above ``epsilon`` (the models moved to R meanwhile are kept).
        time_limit : float, optional
            Seconds after which phase 2 stops.
        variant : {"ismb", "nismb"}
            "nismb" runs phase 2 on the phase-1 score for ``n_phase2`` models (by default
            as many as ISMB adds for this instance, Table 2).
        n_phase2 : int, optional
            Only for "nismb".

        Returns
        -------
        ISMBResult
        """
        given = {"queue_width": queue_width, "epsilon": epsilon, "patience": patience,
                 "time_limit": time_limit}
        for name, check in SEARCH_CONSTRAINTS.items():
            check(given[name], name)
        _SEARCH_VARIANTS(variant, "variant")
        if n_phase2 is not None:
            check_int(n_phase2, "n_phase2", low=0)
        return self._search(x, queue_width, epsilon, patience, time_limit, variant, n_phase2)

    def _search(self, x, queue_width: int, epsilon: float = 1e-3, patience: int = 10,
                time_limit: float | None = None, variant: str = "ismb",
                n_phase2: int | None = None) -> ISMBResult:
        """:meth:`search` with checked parameters."""
        t0 = time.perf_counter()
        inst = self._instance(x)
        models, scores = self.phase1()
        phases = [1] * len(models)
        p2 = [np.nan] * len(models)
        if variant == "nismb":
            if n_phase2 is None:
                n_phase2 = self._search(inst, queue_width, epsilon, patience, time_limit).n_phase2
            for m, s in self._nismb_sequence(int(n_phase2), queue_width):
                models.append(m)
                scores.append(s)
                phases.append(2)
                p2.append(np.nan)
            preds = self._log_pred_batch(inst, [self._pred_ids(m) for m in models])
            return self._result(models, phases, scores, preds, p2, "nismb", t0, "count")
        preds = list(self._log_pred_batch(inst, [self._pred_ids(m) for m in models]))
        stopped = phase2(self, inst, ModelsInR(models, scores, preds, phases, p2), queue_width, epsilon,
                         patience, time_limit, t0)
        return self._result(models, phases, scores, np.vstack(preds), p2, "ismb", t0, stopped)

    def _result(self, models, phases, scores, preds, p2, variant, t0, stopped) -> ISMBResult:
        return ISMBResult(
            models=[MarkovBlanket._from_masks(self.names, self.t, m) for m in models],
            phases=np.asarray(phases, dtype=int), log_scores=np.asarray(scores, dtype=float),
            log_pred=np.asarray(preds, dtype=float), phase2_scores=np.asarray(p2, dtype=float),
            classes=self.classes, variant=variant, elapsed=time.perf_counter() - t0,
            stopped_by=stopped)

    # ------------------------------------------------------------------ complete averaging
    def complete_average(self, x, max_structures: int = 200_000) -> tuple[np.ndarray, int]:
        """P(Z | x, D) by model averaging over *every* MB structure (Eq. 5, small problems).

        Returns the probabilities over ``classes`` and the number of structures.
        """
        inst = self._instance(x)
        total = count_markov_blankets(self.p - 1, method="formula")
        if total > max_structures:
            raise ValueError(f"{self.p - 1} predictors have {total:,} MB structures, more than "
                             f"max_structures={max_structures:,}: use search()")
        pas = list(_enumerate_masks(self.p, self.t))
        S = np.array([self._score_masks(pa) for pa in pas])
        L = self._log_pred_batch(inst, [self._pred_ids(pa) for pa in pas])
        w = S - _logsumexp_rows(S)[0]
        logp = _logsumexp_rows((w[:, None] + L).T)[:, 0]
        return np.exp(logp), len(pas)

    def complete_average_many(self, X) -> np.ndarray:
        """:meth:`complete_average` for many instances (rows of codes), enumerating once."""
        pas = list(_enumerate_masks(self.p, self.t))
        S = np.array([self._score_masks(pa) for pa in pas])
        w = S - _logsumexp_rows(S)[0]
        ids = [self._pred_ids(pa) for pa in pas]
        out = []
        for x in X:
            L = self._log_pred_batch(self._instance(x), ids)
            out.append(np.exp(_logsumexp_rows((w[:, None] + L).T)[:, 0]))
        return np.array(out)

