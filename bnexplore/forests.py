"""Selectively conditioned forests (Ziebart, Dey & Bagnell): MAP and BMA.

A *selectively conditioned forest* (SCF) over a target set ``S_t`` given a condition
set ``S_{t-1}`` lets every target have at most one parent inside ``S_t`` (the targets
form a forest) and at most ``k`` parents from ``S_{t-1}``.  Because only intra-set
parents can close a cycle,

* the MAP SCF (Algorithm 1) picks, for every target and every possible intra-set
  parent (or none), the best set of at most ``k`` condition parents, and then finds
  the maximum directed spanning forest with root weights, solved as a maximum
  spanning arborescence from a virtual root (Chu-Liu/Edmonds);
* Bayesian model averaging over all SCFs (Eq. 7-10) sums, for every edge, the family
  weights over the inter-set parent sets, and then sums over all forests with the
  directed Matrix-Tree theorem and a virtual root.  The determinants are computed by
  a subtraction-free (GTH-style) elimination in log space, see :mod:`bnexplore._mtree`,
  which stays accurate when the Laplacian is nearly singular.

The exclusion penalty ``penalty`` (the paper's alpha, Eq. 13) is subtracted from the
log family score of every target none of whose parents is a condition variable; with the
class as the only condition this gives SFAN (``penalty = 0``) ... FAN (``penalty = inf``).
The Dirichlet hyperparameter of a parameter cell is its *pseudo-count* ``a_ijk`` (1 under
K2, ``ess / (q r)`` under BDeu), a different thing: it only enters the posterior means.

Missing values (data with :attr:`~bnexplore.data.DiscreteData.missing` cells) follow the
package policy.  Every family score, and so the MAP SCF, the edge weights of Eq. 9-10
and the BMA edge posteriors, is computed on one set of rows: the complete cases of
the targets and conditions (every candidate forest is compared on the same rows, so an
edge cannot win because its variables are missing more often).  Parameters are
counted by available case: the MAP CPTs over the rows where the family is observed,
the BMA predictive ``p(x_j | x_i, x_s, D)`` over the rows where ``j``, ``i`` and the
conditions ``s`` are observed, a condition's prior over the rows where it is.

References
----------
B. D. Ziebart, A. K. Dey, J. A. Bagnell. Learning selectively conditioned forest
structures with applications to DBNs and classification. UAI 2007.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import networkx as nx
import numpy as np
import pandas as pd
from scipy.special import logsumexp

from . import _mtree
from ._arborescence import max_arborescence, rooted_trees
from .networks import markov_blanket
from .data.core import as_discrete, check_table_size
from .scores import PRIORS, LocalScore, family_counts, standard_parameters

__all__ = ["ROOT", "SCFResult", "SCFAverage", "SCFFamilies", "map_scf", "edge_posteriors",
           "max_arborescence", "two_slice", "random_dbn", "DBNSCF"]

#: label of the virtual root (the "no intra-set parent" choice) in posterior tables.
ROOT = "(root)"

_INTRA = ("forest", "tree", "none")


# =========================================================================== families
def _check_penalty(penalty) -> float:
    if isinstance(penalty, bool) or not isinstance(penalty, (int, float, np.integer, np.floating)):
        raise TypeError(f"penalty must be a number >= 0 (or float('inf')), got {penalty!r}")
    penalty = float(penalty)
    if math.isnan(penalty) or penalty < 0:
        raise ValueError(f"penalty must be >= 0 (use float('inf') for FAN), got {penalty!r}")
    return penalty


def _check_k(max_parents) -> int:
    if isinstance(max_parents, bool) or not isinstance(max_parents, (int, np.integer)):
        raise TypeError(f"max_parents must be a non-negative integer, got {max_parents!r}")
    if max_parents < 0:
        raise ValueError(f"max_parents must be >= 0, got {max_parents}")
    return int(max_parents)


class SCFFamilies:
    """Every family score an SCF over ``targets`` given ``conditions`` can use.

    ``scores[j, i, s]`` is the log family score of target ``j`` with intra-set parent
    ``i`` (``i = m`` means none) and condition parents ``subsets[s]``, minus the
    exclusion penalty when ``subsets[s]`` is empty; ``-inf`` for ``i = j`` (and for all
    intra-set parents when ``intra="none"``).

    Parameters
    ----------
    data : DataFrame or DiscreteData
    targets, conditions : sequence of str
        Disjoint column names.  ``conditions`` may be empty (a plain forest).
    max_parents : int
        ``k``, the largest number of condition parents per target.
    penalty : float
        Exclusion penalty ``>= 0`` (the paper's alpha, Eq. 13; ``inf`` forces a condition parent).
    prior, ess : see :class:`bnexplore.scores.LocalScore`
    intra : {"forest", "tree", "none"}
        Structure allowed among the targets ("none": inter-set parents only).
    score : LocalScore, optional
        Reuse a score cache built on the same data (its prior and ess win).

    Attributes
    ----------
    data : DiscreteData
        The data (with its missing cells, if any): parameters are counted on it by
        available case.
    ls : LocalScore
        The family scores, over the complete cases of ``targets + conditions`` when
        cells are missing (every structure is compared on these rows).
    score_rows : ndarray of bool
        The rows ``ls`` scores.
    """

    def __init__(self, data, targets: Sequence[str], conditions: Sequence[str] = (),
                 max_parents: int = 1, penalty: float = 0.0, prior: str = "BDeu",
                 ess: float = 1.0, intra: str = "forest", score: LocalScore | None = None):
        if score is not None:
            if not isinstance(score, LocalScore):
                raise TypeError(f"score must be a LocalScore, got {type(score).__name__}")
            self.data = score.data
            self.ls = score
        else:
            if prior not in PRIORS:
                raise ValueError(f"prior must be one of {PRIORS}, got {prior!r}")
            self.data = as_discrete(data, missing="keep")
            self.ls = None            # built below, once the compared columns are known
        d = self.data
        if isinstance(targets, str) or isinstance(conditions, str):
            raise TypeError("targets and conditions must be lists of column names, not a single string")
        targets = list(targets)
        conditions = list(conditions)
        if not targets:
            raise ValueError("targets is empty: give at least one target column")
        for what, lst in (("targets", targets), ("conditions", conditions)):
            dup = sorted({str(x) for x in lst if lst.count(x) > 1})
            if dup:
                raise ValueError(f"{what} repeats {dup}")
            for x in lst:
                if isinstance(x, str) and x not in d.names:
                    raise ValueError(f"{what}: unknown column {x!r}; columns are {d.names}")
        self.t_idx = d.indices(targets)
        self.c_idx = d.indices(conditions)
        both = set(self.t_idx) & set(self.c_idx)
        if both:
            raise ValueError(f"columns {[d.names[i] for i in sorted(both)]} are both targets and "
                             f"conditions: the two sets must be disjoint")
        self.targets = [d.names[i] for i in self.t_idx]
        self.conditions = [d.names[i] for i in self.c_idx]
        if self.ls is None:
            # structures are compared on one set of rows: those where every target and
            # condition is observed (the data itself when nothing is missing)
            compared = self.targets + self.conditions
            self.score_rows = d.observed_rows(compared)
            self.ls = LocalScore(d.complete_cases(compared), prior=prior, ess=ess)
        else:
            self.score_rows = np.ones(d.n_rows, dtype=bool)
        self.max_parents = min(_check_k(max_parents), len(self.c_idx))
        self.penalty = _check_penalty(penalty)
        if intra not in _INTRA:
            raise ValueError(f"intra must be one of {_INTRA}, got {intra!r}")
        self.intra = intra
        if self.penalty == math.inf and self.max_parents == 0:
            raise ValueError("penalty=inf forces a condition parent on every target, which needs "
                             "max_parents >= 1 and at least one condition column")
        self.prior = self.ls.prior
        self.ess = self.ls.ess
        self.m = len(self.t_idx)
        self.subsets: list[tuple[int, ...]] = [()]
        for size in range(1, self.max_parents + 1):
            self.subsets += [tuple(sorted(s)) for s in itertools.combinations(self.c_idx, size)]
        self._check_budget()
        self.raw = self._score_all()           # without the penalty
        self.scores = self.raw.copy()
        self.scores[:, :, 0] -= self.penalty
        if self.intra == "none":
            self.scores[:, :self.m, :] = -np.inf
        self._tables = None

    @property
    def k(self) -> int:
        """Former name of :attr:`max_parents` (kept for old callers)."""
        return self.max_parents

    # ------------------------------------------------------------------
    def _check_budget(self) -> None:
        ar = self.data.arities
        if not self.m:
            return
        tmax = [int(ar[j]) for j in self.t_idx]
        conds = sorted((int(ar[c]), self.data.names[c]) for c in self.c_idx)[::-1][:self.max_parents]
        # the largest family: the largest target with the largest other target as parent
        order = np.argsort(tmax)[::-1]
        names = [self.targets[order[0]]] + ([self.targets[order[1]]] if self.m > 1 else [])
        sizes = [tmax[order[0]]] + ([tmax[order[1]]] if self.m > 1 else [])
        check_table_size(sizes + [a for a, _ in conds], names + [n for _, n in conds],
                         what="SCF family table")

    def _score_all(self) -> np.ndarray:
        m, nS = self.m, len(self.subsets)
        out = np.full((m, m + 1, nS), -np.inf)
        width = max(self.max_parents + 1, 1)
        for jj, j in enumerate(self.t_idx):
            rows = []
            for ii in range(m + 1):
                if ii == jj:
                    continue
                extra = (self.t_idx[ii],) if ii < m else ()
                for s in self.subsets:
                    ps = sorted(s + extra)
                    rows.append(ps + [-1] * (width - len(ps)))
            arr = np.array(rows, dtype=np.int64).reshape(len(rows), width)
            vals = self.ls.score_array(j, arr).reshape(m, nS)
            keep = [ii for ii in range(m + 1) if ii != jj]
            out[jj, keep, :] = vals
        return out

    # ------------------------------------------------------------------ log weights
    def edge_log_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lW, lr)``: ``lW[i, j] = log sum_s exp(scores[j, i, s])`` (Eq. 9), ``lr`` (Eq. 10)."""
        lam = logsumexp(self.scores, axis=2)  # (m, m+1): [j, i]
        lW = lam[:, :self.m].T.copy()
        np.fill_diagonal(lW, -np.inf)
        return lW, lam[:, self.m].copy()

    # ------------------------------------------------------------------ tables
    def _condition_codes(self, codes: np.ndarray) -> list[np.ndarray]:
        """Configuration index of every row under every condition subset."""
        ar = self.data.arities
        out = []
        for s in self.subsets:
            z = np.zeros(codes.shape[0], dtype=np.int64)
            for c in s:
                z = z * int(ar[c]) + codes[:, c]
            out.append(z)
        return out

    def tables(self):
        """Pairwise count tables per condition subset (one-hot products), built once.

        ``(off, tar, N2, N1, N0, D1, D0)``: per condition subset ``s`` and configuration
        ``z``, ``N2[s][z]`` counts pairs of target states (one-hot block ``off[j] ..
        off[j] + tar[j]`` per target), ``N1[s][z]`` single target states and ``N0[s][z]``
        rows.  With missing cells every count is an available-case count (a missing
        target's one-hot row is zero, a row with a missing condition of ``s`` is left out
        of ``s``'s tables), and the denominators of the posterior means differ per
        family: ``D1[s][z, i-state, j] = sum_{x_j} N2[s][z, i-state, x_j]`` (rows where
        ``i``, ``j`` and ``s`` are observed) and ``D0[s][z, j] = sum_{x_j} N1[s][z, x_j]``.
        ``D1`` and ``D0`` are ``None`` when nothing is missing (they equal ``N1`` and
        ``N0`` then).
        """
        if self._tables is not None:
            return self._tables
        d = self.data
        ar = d.arities
        tar = np.array([int(ar[j]) for j in self.t_idx])
        off = np.concatenate([[0], np.cumsum(tar)])
        R = int(off[-1])
        n = d.n_rows
        H = np.zeros((n, R))
        codes = d.codes
        miss = d.missing
        for jj, j in enumerate(self.t_idx):
            H[np.arange(n), off[jj] + codes[:, j]] = 1.0
            if miss is not None:        # a missing target counts in no table
                H[miss[:, j], off[jj]:off[jj + 1]] = 0.0
        N2, N1, N0 = [], [], []
        D1 = D0 = None
        if miss is not None:
            D1, D0 = [], []
        for s, z in zip(self.subsets, self._condition_codes(codes)):
            q = int(np.prod([ar[c] for c in s])) if s else 1
            n2 = np.zeros((q, R, R))
            n1 = np.zeros((q, R))
            n0 = np.zeros(q)
            seen = None if miss is None or not s else ~miss[:, list(s)].any(axis=1)
            for v in range(q):
                rows = z == v
                if seen is not None:
                    rows &= seen
                if not rows.any():
                    continue
                Hz = H[rows]
                n2[v] = Hz.T @ Hz
                n1[v] = Hz.sum(axis=0)
                n0[v] = rows.sum()
            N2.append(n2)
            N1.append(n1)
            N0.append(n0)
            if miss is not None:
                D1.append(np.add.reduceat(n2, off[:-1], axis=2))   # sum over x_j
                D0.append(np.add.reduceat(n1, off[:-1], axis=1))
        self._tables = (off, tar, N2, N1, N0, D1, D0)
        return self._tables

    def _pseudo_count(self, q: np.ndarray | int, r: np.ndarray | int):
        """Dirichlet pseudo-count ``a_ijk`` of a cell of a family with ``q`` parent
        configurations and ``r`` states: ``ess / (q r)`` (BDeu) or 1 (K2)."""
        if self.prior == "BDeu":
            return self.ess / (q * r)
        return np.ones_like(np.asarray(q * r, dtype=float))

    def test_log_weights(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Predictive edge weights of test rows (full data coding, shape (T, p)).

        ``lWt[t, i, j] = log sum_s exp(scores[j, i, s]) p(x_j | x_i, x_s, D)`` with the
        posterior-mean (Dirichlet) conditional probabilities, and ``lrt`` likewise.
        """
        codes = np.asarray(codes, dtype=np.int64)
        off, tar, N2, N1, N0, D1, D0 = self.tables()
        m = self.m
        T = codes.shape[0]
        X = codes[:, self.t_idx]                   # (T, m)
        ridx = off[:-1][None, :] + X               # (T, m)
        ar = self.data.arities
        lWt = np.full((T, m, m), -np.inf)
        lrt = np.full((T, m), -np.inf)
        for s_i, (s, z) in enumerate(zip(self.subsets, self._condition_codes(codes))):
            q = int(np.prod([ar[c] for c in s])) if s else 1
            # pairs: [t, i, j] = N2[z, ridx_i, ridx_j]
            num = N2[s_i][z[:, None, None], ridx[:, :, None], ridx[:, None, :]]
            pc = self._pseudo_count(q * tar[:, None], tar[None, :])  # (m_i, m_j)
            if D1 is None:
                den = N1[s_i][z[:, None], ridx][:, :, None]  # (T, m, 1) count of (z, x_i)
            else:     # available cases: count of (z, x_i) where x_j is observed too
                den = D1[s_i][z[:, None, None], ridx[:, :, None], np.arange(m)[None, None, :]]
            with np.errstate(divide="ignore", invalid="ignore"):
                lp = np.log(num + pc[None]) - np.log(den + (pc * tar[None, :])[None])
            np.logaddexp(lWt, self.scores[:, :m, s_i].T[None] + lp, out=lWt)   # [t, i, j]
            num0 = N1[s_i][z[:, None], ridx]                  # (T, m)
            den0 = N0[s_i][z][:, None] if D0 is None else D0[s_i][z]
            pc0 = self._pseudo_count(q, tar)
            lp0 = np.log(num0 + pc0[None]) - np.log(den0 + (pc0 * tar)[None])
            np.logaddexp(lrt, self.scores[:, m, s_i][None] + lp0, out=lrt)
        idx = np.arange(m)
        lWt[:, idx, idx] = -np.inf
        return lWt, lrt

    def condition_log_prior(self, codes: np.ndarray) -> np.ndarray:
        """``log P(x_conditions | D)`` of test rows under independent Dirichlet posteriors.

        Used by classifiers (the class is the only condition).  With several
        conditions they are treated as independent (they are outside the SCF).
        """
        codes = np.asarray(codes, dtype=np.int64)
        out = np.zeros(codes.shape[0])
        miss = self.data.missing
        for c in self.c_idx:
            r = int(self.data.arities[c])
            col = self.data.codes[:, c]
            if miss is not None and miss[:, c].any():    # available cases
                col = col[~miss[:, c]]
            cnt = np.bincount(col, minlength=r).astype(float)
            pc = self.ess / r if self.prior == "BDeu" else 1.0   # the pseudo-count of a state
            out += np.log((cnt[codes[:, c]] + pc) / (col.shape[0] + r * pc))
        return out


# =========================================================================== MAP
@dataclass
class SCFResult:
    """A MAP selectively conditioned forest.

    Attributes
    ----------
    graph : networkx.DiGraph
        Nodes: conditions then targets; edges parent -> child.
    score : float
        Sum of the chosen family scores minus the exclusion penalties (the MAP objective).
    log_marginal : float
        The same without penalties: ``log P(D_targets | G, D_conditions)``.
    parents : dict
        Target -> its parent list (intra-set parent first, then condition parents).
    intra_parent : dict
        Target -> its intra-set parent or None (a root).
    """

    graph: nx.DiGraph
    score: float
    log_marginal: float
    parents: dict
    intra_parent: dict
    targets: list
    conditions: list
    max_parents: int
    penalty: float

    @property
    def roots(self) -> list[str]:
        return [t for t in self.targets if self.intra_parent[t] is None]

    def markov_blanket(self, node: str) -> list[str]:
        """Markov blanket of ``node`` in :attr:`graph` (parents, children, co-parents)."""
        return markov_blanket(self.graph, node)


def _map_choice(fam: SCFFamilies, intra: str | None = None):
    intra = fam.intra if intra is None else intra
    m = fam.m
    lam = fam.scores.max(axis=2)                 # [j, i]
    arg = fam.scores.argmax(axis=2)
    w = np.full((m + 1, m + 1), -np.inf)         # node m is the virtual root
    w[:, :m] = lam.T                              # w[i, j] = lam[j, i]
    np.fill_diagonal(w, -np.inf)
    w[:, m] = -np.inf
    if intra == "none" or m == 1:
        parent = np.full(m, m)
    elif intra == "forest":
        if not np.isfinite(w[m, :m]).any():
            raise ValueError("no target can be a root (all root weights are -inf)")
        parent = max_arborescence(w, m)[:m]
    else:  # a spanning tree: exactly one root, the best over every choice of the root
        trees, usable = rooted_trees(w, m)
        tree_lam = lam[np.arange(m), trees[:, :m]]          # row rho: the tree's family scores
        best, parent = -np.inf, None
        for rho in np.flatnonzero(usable):
            val = tree_lam[rho].sum()
            if val > best:
                best, parent = val, trees[rho, :m]
        if parent is None:
            raise ValueError("no target can be the root of a spanning tree")
    total = float(lam[np.arange(m), parent].sum())
    if not np.isfinite(total):
        raise ValueError("no SCF with finite score exists under these constraints")
    subset = arg[np.arange(m), parent]
    return parent, subset, total


def _result_from_choice(fam: SCFFamilies, parent, subset, total) -> SCFResult:
    d = fam.data
    m = fam.m
    g = nx.DiGraph()
    g.add_nodes_from(fam.conditions, role="condition")
    g.add_nodes_from(fam.targets, role="target")
    parents, intra, log_marg = {}, {}, 0.0
    for jj, t in enumerate(fam.targets):
        pi = int(parent[jj])
        conds = [d.names[c] for c in fam.subsets[int(subset[jj])]]
        ip = fam.targets[pi] if pi < m else None
        intra[t] = ip
        parents[t] = ([ip] if ip is not None else []) + conds
        for c in conds:
            g.add_edge(c, t, kind="inter")
        if ip is not None:
            g.add_edge(ip, t, kind="intra")
        log_marg += float(fam.raw[jj, pi, int(subset[jj])])
    g.graph.update(score=total, penalty=fam.penalty, max_parents=fam.max_parents)
    return SCFResult(graph=g, score=total, log_marginal=log_marg, parents=parents,
                     intra_parent=intra, targets=list(fam.targets), conditions=list(fam.conditions),
                     max_parents=fam.max_parents, penalty=fam.penalty)


def map_scf(data, targets: Sequence[str], conditions: Sequence[str] = (), max_parents: int = 1,
            penalty: float = 0.0, prior: str = "BDeu", ess: float = 1.0, intra: str = "forest",
            score: LocalScore | None = None) -> SCFResult:
    """MAP selectively conditioned forest (Algorithm 1 of Ziebart, Dey & Bagnell).

    Parameters
    ----------
    data : DataFrame or DiscreteData
        Discrete data; with missing cells the structure is scored on the complete
        cases of ``targets + conditions`` (see the module notes).
    targets : list of str
        The target set ``S_t``: connected by a forest (at most one parent each among them).
    conditions : list of str
        The condition set ``S_{t-1}``: each target takes at most ``max_parents`` of them.
    max_parents : int, default 1
        ``k``.
    penalty : float, default 0.0
        Exclusion penalty (the paper's alpha, Eq. 13), subtracted from the family score of every
        target without a condition parent; ``float('inf')`` forces one.
    prior : {"BDeu", "K2"}, ess : float
        Local score (uniform structure prior).
    intra : {"forest", "tree", "none"}
        "tree" asks for a spanning tree (one root) among the targets, "none" for no
        intra-set edges.
    score : LocalScore, optional
        Reuse a score cache.

    Returns
    -------
    SCFResult
        ``.graph`` (networkx.DiGraph) and ``.score``.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(2000, seed=0)
    >>> res = map_scf(df, targets=["tub", "lung", "either", "xray", "dysp"],
    ...               conditions=["asia", "smoke", "bronc"], max_parents=1)
    >>> res.graph.has_edge("smoke", "lung") or res.graph.has_edge("lung", "smoke")
    True
    """
    fam = SCFFamilies(data, targets, conditions, max_parents=max_parents, penalty=penalty,
                      prior=prior, ess=ess, intra=intra, score=score)
    return _result_from_choice(fam, *_map_choice(fam))


# =========================================================================== BMA
class SCFAverage:
    """Bayesian model averaging over every SCF (Eq. 7-10, directed Matrix-Tree theorem).

    Parameters are those of :func:`map_scf`; ``intra`` may be "forest", "tree" (one
    root: TAN / STAN averaging) or "none".

    Attributes
    ----------
    log_evidence : float
        ``log sum_G prod_j exp(score_j)``, the log of the total (penalised) weight of all
        SCFs (uniform structure prior, unnormalised).

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(500, seed=1)
    >>> avg = SCFAverage(df, targets=["tub", "lung", "either"], conditions=["smoke"])
    >>> P = avg.edge_posteriors()
    >>> bool(abs(P.loc[["tub", "lung", "either", ROOT]].sum().sum() - 3) < 1e-9)
    True
    """

    def __init__(self, data, targets: Sequence[str], conditions: Sequence[str] = (),
                 max_parents: int = 1, penalty: float = 0.0, prior: str = "BDeu",
                 ess: float = 1.0, intra: str = "forest", score: LocalScore | None = None,
                 families: SCFFamilies | None = None):
        if families is None:
            families = SCFFamilies(data, targets, conditions, max_parents=max_parents,
                                   penalty=penalty, prior=prior, ess=ess, intra=intra, score=score)
        self.families = fam = families
        self.lW, self.lr = fam.edge_log_weights()
        self._P = None
        if fam.intra == "forest":
            self.log_evidence = float(_mtree.log_partition(self.lW, self.lr))
        elif fam.intra == "tree":
            self.log_evidence = float(_mtree.log_tree_partition(self.lW, self.lr))
        else:
            self.log_evidence = float(self.lr.sum())
        if not np.isfinite(self.log_evidence):
            raise ValueError("no SCF has positive weight under these constraints")

    @property
    def targets(self) -> list[str]:
        return self.families.targets

    @property
    def conditions(self) -> list[str]:
        return self.families.conditions

    def parent_posteriors(self) -> np.ndarray:
        """``(m + 1, m)`` array: posterior that row ``i`` is the intra-set parent of column ``j``.

        Row ``m`` is the posterior of being a root (with ``intra="tree"`` it sums to
        one: a spanning tree has exactly one root).
        """
        if self._P is None:
            m = self.families.m
            if self.families.intra == "none":
                P = np.zeros((m + 1, m))
                P[m] = 1.0
            elif self.families.intra == "tree":
                P, _ = _mtree.tree_parent_posteriors(self.lW, self.lr)
            else:
                P, _ = _mtree.parent_posteriors(self.lW, self.lr)
            self._P = P
        return self._P

    def edge_posteriors(self) -> pd.DataFrame:
        """Posterior of every edge: rows are parents (targets, ``ROOT``, conditions), columns targets.

        Target and ``ROOT`` rows give the intra-set parent distribution of every target
        (each column sums to one over them); condition rows give the posterior that the
        condition variable is among the target's parents.
        """
        fam = self.families
        P = self.parent_posteriors()
        m = fam.m
        rows = fam.targets + [ROOT]
        out = pd.DataFrame(P, index=rows, columns=fam.targets)
        if fam.conditions:
            # P(c in pa_j) = sum_i P(intra parent i) P(c in S | i, j)
            with np.errstate(invalid="ignore"):
                within = np.exp(fam.scores - logsumexp(fam.scores, axis=2, keepdims=True))  # [j,i,s]
            within = np.nan_to_num(within)
            member = np.array([[c in s for s in fam.subsets] for c in fam.c_idx], dtype=float)  # (nc, nS)
            pc = np.einsum("jis,cs->jic", within, member)                  # [j, i, c]
            cond = np.clip(np.einsum("ij,jic->cj", P, pc), 0.0, 1.0)
            out = pd.concat([out, pd.DataFrame(cond, index=fam.conditions, columns=fam.targets)])
        return out

    def log_predictive(self, X) -> np.ndarray:
        """BMA ``log P(x_targets | x_conditions, D)`` of every row of ``X`` (Eq. 7: ratio of determinants).

        ``X`` is a DataFrame holding (at least) the target and condition columns, or an
        integer code array in the data's full column coding.
        """
        codes = self._codes(X)
        lWt, lrt = self.families.test_log_weights(codes)
        intra = self.families.intra
        if intra == "forest":
            lz = _mtree.log_partition(lWt, lrt)
        elif intra == "tree":
            lz = _mtree.log_tree_partition(lWt, lrt)
        else:
            lz = lrt.sum(axis=1)
        return lz - self.log_evidence

    def _codes(self, X) -> np.ndarray:
        d = self.families.data
        if isinstance(X, pd.DataFrame):
            need = self.families.targets + self.families.conditions
            miss = [c for c in need if c not in X.columns]
            if miss:
                raise ValueError(f"X lacks columns {miss}")
            codes = np.zeros((len(X), d.n_cols), dtype=np.int64)
            sub = d.encode(X[need], unseen="raise")
            codes[:, d.indices(need)] = sub
            return codes
        codes = np.asarray(X)
        if codes.ndim != 2 or codes.shape[1] != d.n_cols:
            raise ValueError(f"code array must be (n, {d.n_cols}), got {codes.shape}")
        return codes.astype(np.int64)


def edge_posteriors(data, targets: Sequence[str], conditions: Sequence[str] = (), max_parents: int = 1,
                    penalty: float = 0.0, prior: str = "BDeu", ess: float = 1.0,
                    score: LocalScore | None = None) -> pd.DataFrame:
    """Posterior of every SCF edge under BMA (rows parents incl. ``ROOT`` and conditions, columns targets).

    See :class:`SCFAverage`.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(500, seed=1)
    >>> P = edge_posteriors(df, ["either", "xray", "dysp"], ["tub", "lung", "bronc"], max_parents=2)
    >>> float(P.loc["either", "xray"] + P.loc["xray", "either"]) > 0.5
    True
    """
    return SCFAverage(data, targets, conditions, max_parents=max_parents, penalty=penalty,
                      prior=prior, ess=ess, score=score).edge_posteriors()


# =========================================================================== MAP predictive
class _MAPTables:
    """Posterior-mean CPTs of a chosen SCF, for log P(x_targets | x_conditions)."""

    def __init__(self, fam: SCFFamilies, res: SCFResult):
        d = fam.data
        self.items = []
        for t in fam.targets:
            ps = res.parents[t]
            logcpt = np.log(standard_parameters(family_counts(d, t, ps), fam.prior, fam.ess))
            pidx = d.indices(ps)
            self.items.append((d.index(t), pidx, [int(d.arities[p]) for p in pidx], logcpt))

    def log_prob(self, codes: np.ndarray) -> np.ndarray:
        out = np.zeros(codes.shape[0])
        for j, ps, ar, logcpt in self.items:
            z = np.zeros(codes.shape[0], dtype=np.int64)
            for p, a in zip(ps, ar):
                z = z * a + codes[:, p]
            out += logcpt[z, codes[:, j]]
        return out


# =========================================================================== DBNs
def two_slice(seq: pd.DataFrame, suffix: str = "[t-1]") -> tuple[pd.DataFrame, list[str], list[str]]:
    """Pair every step of a sequence with its predecessor.

    Returns ``(pairs, current, previous)``: a frame with the columns of ``seq`` for
    step ``t`` and renamed copies (``name + suffix``) for step ``t - 1``.
    """
    if not isinstance(seq, pd.DataFrame):
        raise TypeError(f"seq must be a DataFrame (one row per time step), got {type(seq).__name__}")
    if len(seq) < 2:
        raise ValueError("a sequence needs at least two time steps")
    cur = [str(c) for c in seq.columns]
    prev = [c + suffix for c in cur]
    clash = set(prev) & set(cur)
    if clash:
        raise ValueError(f"column names {sorted(clash)} clash with the lagged names; choose another suffix")
    a = seq.iloc[1:].reset_index(drop=True)
    b = seq.iloc[:-1].reset_index(drop=True)
    b.columns = prev
    a.columns = cur
    return pd.concat([b, a], axis=1), cur, prev


def random_dbn(n_vars: int = 12, max_inter: int = 2, arity: int = 2, p_intra: float = 0.7,
               concentration: float = 0.5, seed=None) -> dict:
    """A random two-slice DBN with an intra-slice forest and up to ``max_inter`` inter-slice parents.

    Returns a dict with ``names``, ``intra`` (parent index or -1 per variable, a forest
    whose parents precede their children), ``inter`` (list of previous-slice parent
    indices per variable), ``cpts`` (per variable an array (q, arity), parents in the
    order inter then intra, last fastest) and ``arity``.
    """
    rng = np.random.default_rng(seed)
    if n_vars < 1 or max_inter < 0 or arity < 2:
        raise ValueError("need n_vars >= 1, max_inter >= 0, arity >= 2")
    names = [f"V{i}" for i in range(n_vars)]
    intra = np.full(n_vars, -1)
    inter, cpts = [], []
    for i in range(n_vars):
        if i > 0 and rng.random() < p_intra:
            intra[i] = int(rng.integers(0, i))
        k = int(rng.integers(1, max_inter + 1)) if max_inter > 0 else 0
        others = [j for j in range(n_vars) if j != i]
        pa = sorted([i] + list(rng.choice(others, size=k - 1, replace=False))) if k else []
        inter.append(pa)
        q = arity ** (len(pa) + (intra[i] >= 0))
        cpts.append(rng.dirichlet(np.full(arity, concentration), size=q))
    return {"names": names, "intra": intra, "inter": inter, "cpts": cpts, "arity": arity}


def sample_dbn(dbn: dict, n_steps: int, seed=None, burn_in: int = 50) -> pd.DataFrame:
    """Sample ``n_steps`` consecutive slices of :func:`random_dbn` (after a burn-in)."""
    rng = np.random.default_rng(seed)
    m, ar = len(dbn["names"]), dbn["arity"]
    x = rng.integers(0, ar, size=m)
    out = np.empty((n_steps, m), dtype=np.int64)
    u = rng.random((n_steps + burn_in, m))
    for t in range(n_steps + burn_in):
        new = np.empty(m, dtype=np.int64)
        for i in range(m):  # intra parents precede children
            z = 0
            for p in dbn["inter"][i]:
                z = z * ar + x[p]
            if dbn["intra"][i] >= 0:
                z = z * ar + new[dbn["intra"][i]]
            cdf = np.cumsum(dbn["cpts"][i][z])
            new[i] = min(int(np.searchsorted(cdf, u[t, i] * cdf[-1], side="right")), ar - 1)
        x = new
        if t >= burn_in:
            out[t - burn_in] = x
    return pd.DataFrame({n: pd.Categorical(out[:, i], categories=list(range(ar)))
                         for i, n in enumerate(dbn["names"])})


class DBNSCF:
    """A two-slice DBN whose repeated slice is an SCF given the previous slice.

    Parameters
    ----------
    max_parents : int
        ``k`` inter-slice parents per variable.
    averaging : {"map", "bma"}
    intra : {"forest", "none"}
        "none" gives the *Inter(k)* model; ``max_parents=0`` with "forest" the *Intra*
        model; ``max_parents=0`` with "none" the *No structure* model.
    prior, ess : local score (the paper uses BDeu with ess 20).

    Examples
    --------
    >>> dbn = random_dbn(6, seed=0)
    >>> train, test = sample_dbn(dbn, 300, seed=1), sample_dbn(dbn, 100, seed=2)
    >>> m = DBNSCF(max_parents=1).fit(train)
    >>> bool(m.mean_log_prob(test) < 0)
    True
    """

    def __init__(self, max_parents: int = 1, averaging: str = "map", intra: str = "forest",
                 prior: str = "BDeu", ess: float = 20.0, penalty: float = 0.0):
        self.max_parents = max_parents
        self.averaging = averaging
        self.intra = intra
        self.prior = prior
        self.ess = ess
        self.penalty = penalty

    def fit(self, seq: pd.DataFrame) -> "DBNSCF":
        if self.averaging not in ("map", "bma"):
            raise ValueError(f"averaging must be 'map' or 'bma', got {self.averaging!r}")
        pairs, cur, prev = two_slice(seq)
        self.current_, self.previous_ = cur, prev
        conds = prev if self.max_parents > 0 else []
        fam = SCFFamilies(pairs, cur, conds, max_parents=self.max_parents, penalty=self.penalty,
                          prior=self.prior, ess=self.ess, intra=self.intra)
        self.families_ = fam
        if self.averaging == "map":
            self.result_ = _result_from_choice(fam, *_map_choice(fam))
            self.graph_ = self.result_.graph
            self._tables = _MAPTables(fam, self.result_)
        else:
            self.average_ = SCFAverage(None, cur, conds, families=fam)
        return self

    def log_prob(self, seq: pd.DataFrame) -> np.ndarray:
        """``log P(X_t | X_{t-1})`` of every consecutive pair of ``seq`` (parameters from training)."""
        pairs, _, _ = two_slice(seq)
        d = self.families_.data
        codes = d.encode(pairs[d.names], unseen="raise").astype(np.int64)
        if self.averaging == "map":
            return self._tables.log_prob(codes)
        return self.average_.log_predictive(codes)

    def mean_log_prob(self, seq: pd.DataFrame) -> float:
        """Average withheld ``log P(X_t | X_{t-1})`` per time step (Figure 4)."""
        return float(np.mean(self.log_prob(seq)))
