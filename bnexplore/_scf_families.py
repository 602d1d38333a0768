"""Family scores and count tables of selectively conditioned forests (Ziebart, Dey & Bagnell).

An SCF over the targets ``S_t`` given the conditions ``S_{t-1}`` gives every target ``j``
one *intra-set parent* ``i`` (another target, or none: ``i = root``) and a set ``S`` of at
most ``k`` condition parents.  Its log score decomposes over the targets, so everything
the MAP and BMA searches need is one table of *family scores*

    score_j(i, S) = log BD(x_j | x_i, x_S) - alpha [S = {}]                  (Eq. 13)

with ``log BD`` the Bayesian-Dirichlet family score (K2 or BDeu, :mod:`bnexplore.scores`)
and ``alpha`` the exclusion penalty (``penalty``) charged to a target with no condition
parent (``alpha = inf`` forces one).  ``score_j(j, S) = -inf``; with ``intra="none"``
every ``score_j(i, S)`` with ``i`` a target is ``-inf``.

The condition parents enter only through a sum or a maximum over ``S``:

    lambda_j(i) = max_S score_j(i, S)                   (MAP, Algorithm 1)
    W_ij = sum_S exp(score_j(i, S)),  r_j = sum_S exp(score_j(root, S))      (BMA, Eq. 9-10)

A test row ``x`` multiplies every term by the posterior-mean predictive probability of
its family,

    p(x_j | x_i, x_S, D) = (N(z, x_i, x_j) + a) / (N(z, x_i) + r_j a),
    a = ess / (q_S r_i r_j)  (BDeu)  or  1  (K2),

with ``z`` the configuration of ``S`` in the row and ``q_S`` the number of them (no
``x_i`` and no ``r_i`` for the root); so ``W_ij(x) = sum_S exp(score_j(i, S))
p(x_j | x_i, x_S, D)`` and the BMA predictive is the ratio of the Matrix-Tree sums over
``W(x)`` and ``W`` (:mod:`bnexplore._mtree`).  The counts come from pairwise tables of
one-hot target states per configuration of ``S``, built once:
``N2[S][z] = H_z^T H_z`` (pairs of target states), ``N1[S][z]`` (single states) and
``N0[S][z]`` (rows), with ``H_z`` the one-hot rows of configuration ``z``.

Missing cells: every family score is ``s(j | {}) + g_j(i, S)``, its gain over the empty
family counted on the rows where ``j``, ``i`` and ``S`` are observed
(:mod:`bnexplore._available_case` Eq. 2-3): so the choice between two parents of ``j`` is
judged on the rows where each pair is seen, and a missing cell costs only the families
of its column (the complete cases of all targets and conditions may be no row at all);
the counts by available case,
with the denominators ``D1``, ``D0`` counting only the rows where the child is observed.

Glossary
--------
m, k
    The number of targets; the largest number of condition parents (``max_parents``).
subsets
    Every condition set ``S`` of size ``0 .. k`` (sorted column indices); ``S = ()`` first.
raw, scores
    ``raw[j, i, s]`` the family score of target ``j`` with intra-set parent ``i`` (``i = m``:
    the root) and condition parents ``subsets[s]``; ``scores`` the same less the penalty
    (and ``-inf`` where the structure is not allowed).
lW, lr
    ``log W`` (``lW[i, j]``) and ``log r`` (Eq. 9-10); ``lWt``, ``lrt`` per test row.
penalty
    The exclusion penalty ``alpha`` of Eq. 13 (not a Dirichlet parameter).
pseudo-count
    ``a``, the Dirichlet hyperparameter of one parameter cell (1 under K2, ``ess / (q r)``
    under BDeu); it only enters the posterior means.
off, tar
    The one-hot block of every target: columns ``off[j] .. off[j] + tar[j]``, ``tar`` the arities.
z, q
    The configuration index of the condition parents in a row, and their number.
N2, N1, N0, D1, D0
    The count tables above, one per condition set.
"""
from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np
from scipy.special import logsumexp

from ._available_case import available_case, warn_unusable
from ._validation import Options, check_int, check_number, check_prior_ess
from .data.core import as_discrete, check_table_size, config_index
from .scores import PRIORS, LocalScore, family_counts, standard_parameters

__all__ = ["SCFFamilies", "MAPTables", "check_scf_parameters", "INTRA"]

#: the structures allowed among the targets
INTRA = ("forest", "tree", "none")


def check_scf_parameters(max_parents, penalty, prior, ess, intra, prior_checked: bool = False
                         ) -> tuple[int, float, str, float, str]:
    """The parameters of an SCF search, checked once at the public edge and canonical.

    ``max_parents`` an int >= 0, ``penalty`` a number >= 0 (``inf`` allowed), ``prior``
    and ``ess`` a Dirichlet prior (not checked with ``prior_checked``, when a
    :class:`LocalScore` brings its own), ``intra`` one of :data:`INTRA`.

    Examples
    --------
    >>> check_scf_parameters(1, 2, "BDeu", 10, "tree")
    (1, 2.0, 'BDeu', 10.0, 'tree')
    """
    max_parents = check_int(max_parents, "max_parents", low=0)
    penalty = check_number(penalty, "penalty", low=0, allow_inf=True)
    if not prior_checked:
        prior, ess = check_prior_ess(prior, ess, PRIORS)
    intra = Options(*INTRA)(intra, "intra")
    return max_parents, penalty, prior, ess, intra


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
    prior, ess : see :class:`bnexplore.scores.LocalScore`; default "BDeu" and 1.0
        (BDeu as the SCF score of Ziebart, Dey & Bagnell (2007); see
        :class:`~bnexplore.forests.SCFAverage`).
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
        The family scores (over data with missing cells, if any: each family is then
        scored as its gain over the empty family on the rows where the family is
        observed, :mod:`bnexplore._available_case` Eq. 2-3).

    Raises
    ------
    ValueError, TypeError
        A parameter out of its range (checked here, once: :func:`check_scf_parameters`;
        :meth:`trusted` skips the check for callers that made it at their own edge), or
        targets and conditions that are not disjoint columns of ``data``.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(300, random_state=0)
    >>> fam = SCFFamilies(df, ["lung", "either", "xray"], ["smoke"], max_parents=1, penalty=1.0)
    >>> fam.scores.shape                  # (targets, targets + root, condition sets)
    (3, 4, 2)
    """

    def __init__(self, data, targets: Sequence[str], conditions: Sequence[str] = (),
                 max_parents: int = 1, penalty: float = 0.0, prior: str = "BDeu",
                 ess: float = 1.0, intra: str = "forest", score: LocalScore | None = None):
        if score is not None and not isinstance(score, LocalScore):
            raise TypeError(f"score must be a LocalScore, got {type(score).__name__}")
        max_parents, penalty, prior, ess, intra = check_scf_parameters(
            max_parents, penalty, prior, ess, intra, prior_checked=score is not None)
        self._setup(data, targets, conditions, max_parents, penalty, prior, ess, intra, score)

    @classmethod
    def trusted(cls, data, targets: Sequence[str], conditions: Sequence[str], max_parents: int,
                penalty: float, prior: str, ess: float, intra: str) -> "SCFFamilies":
        """The families of parameters already checked at a public edge (an estimator's
        ``fit`` through its ``_parameter_constraints``, or :func:`check_scf_parameters`):
        ``max_parents`` an int >= 0, ``penalty`` a float >= 0 or inf, ``prior`` and
        ``intra`` spelt exactly, ``ess`` > 0."""
        self = cls.__new__(cls)
        self._setup(data, targets, conditions, max_parents, penalty, prior, ess, intra, None)
        return self

    def _setup(self, data, targets, conditions, max_parents: int, penalty: float, prior: str,
               ess: float, intra: str, score: LocalScore | None) -> None:
        if score is not None:
            self.data = score.data
            self.ls = score
        else:
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
            self.ls = LocalScore(d, prior=prior, ess=ess, missing="keep")
        # missing cells: each family scored as its gain over the empty family on the rows
        # where the family is observed (bnexplore._available_case, Eq. 2-3)
        self._ac = available_case(self.ls)
        if self._ac is not None:
            warn_unusable(d, self.t_idx + self.c_idx, what="the forest search", stacklevel=5)
        self.max_parents = min(max_parents, len(self.c_idx))
        self.penalty = penalty
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
        width = self.max_parents + 1
        # parents[i, s]: the sorted parent columns of intra-set parent i (i = m: none) and
        # condition set subsets[s], padded with -1 (a subset leaves the last slot free)
        pad = np.iinfo(np.int64).max
        parents = np.full((m + 1, nS, width), pad, dtype=np.int64)
        for s, subset in enumerate(self.subsets):
            parents[:, s, :len(subset)] = subset
        parents[:m, :, width - 1] = np.asarray(self.t_idx, dtype=np.int64)[:, None]
        parents.sort(axis=2)
        parents[parents == pad] = -1
        every = np.arange(m + 1)
        for jj, j in enumerate(self.t_idx):
            keep = every != jj
            if self._ac is None:
                vals = self.ls.score_array(j, parents[keep].reshape(m * nS, width))
            else:
                sets = [tuple(int(u) for u in row if u >= 0) for row in parents[keep].reshape(m * nS, width)]
                vals = self._ac.family(j, ()) + self._ac.gains(j, sets)
            out[jj, keep, :] = vals.reshape(m, nS)
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
        n = codes.shape[0]
        return [config_index([codes[:, c] for c in s], [ar[c] for c in s], n) for s in self.subsets]

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
            pc = self._pseudo_count(1, r)          # of a state (no parents)
            out += np.log((cnt[codes[:, c]] + pc) / (col.shape[0] + r * pc))
        return out


class MAPTables:
    """Posterior-mean CPTs of a chosen SCF (``res``, an :class:`~bnexplore.forests.SCFResult`),
    for ``log P(x_targets | x_conditions)``: ``theta_jxz = (N_jxz + a) / (N_jz + r_j a)``
    over the rows where the family is observed."""

    def __init__(self, fam: SCFFamilies, res):
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
            z = config_index([codes[:, p] for p in ps], ar, codes.shape[0])
            out += logcpt[z, codes[:, j]]
        return out
