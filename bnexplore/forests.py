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
and the BMA edge posteriors, is the family's gain over the empty family on the rows
where the family's variables are observed (:mod:`bnexplore._available_case`), so an
edge cannot win because its variables are missing more often and a missing cell costs
only the families of its column.  Parameters are
counted by available case: the MAP CPTs over the rows where the family is observed,
the BMA predictive ``p(x_j | x_i, x_s, D)`` over the rows where ``j``, ``i`` and the
conditions ``s`` are observed, a condition's prior over the rows where it is.

The family scores, the edge weights of Eq. 9-10 and the count tables of the BMA
predictive live in :mod:`bnexplore._scf_families` (:class:`SCFFamilies`, re-exported
here), the Chu-Liu/Edmonds step in :mod:`bnexplore._arborescence`, the Matrix-Tree sums in
:mod:`bnexplore._mtree`; this module holds the MAP and BMA searches and the DBNs.

References
----------
B. D. Ziebart, A. K. Dey, J. A. Bagnell. Learning selectively conditioned forest
structures with applications to DBNs and classification. UAI 2007.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import networkx as nx
import numpy as np
import pandas as pd
from scipy.special import logsumexp

from ._deprecation import renamed
from . import _mtree
from ._arborescence import max_arborescence, rooted_trees
from ._scf_families import MAPTables, SCFFamilies, check_scf_parameters
from ._validation import Options, check_int, check_random_state
from .networks import markov_blanket
from .scores import LocalScore

__all__ = ["ROOT", "SCFResult", "SCFAverage", "SCFFamilies", "map_scf", "edge_posteriors",
           "max_arborescence", "two_slice", "random_dbn", "DBNSCF"]

#: label of the virtual root (the "no intra-set parent" choice) in posterior tables.
ROOT = "(root)"


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


def _one_root_tree(w: np.ndarray, m: int) -> np.ndarray | None:
    """The best spanning arborescence of the nodes ``0..m-1`` with exactly one edge out of
    the virtual root ``m``, in one Chu-Liu/Edmonds run instead of one per root.

    Every root edge is made dearer by ``C``, more than any two spanning trees can differ
    by, so the optimum uses as few root edges as possible and, among the trees with that
    many, has the largest weight (Gabow & Tarjan's degree-constrained reduction).  None
    when the best still needs several root edges (then no single-root tree exists or the
    caller's per-root search says why)."""
    fin = w[np.isfinite(w)]
    if not fin.size:
        return None
    c = (float(fin.max()) - float(fin.min())) * (m + 2) + 1.0
    wp = w.copy()
    wp[m, :m] -= c
    try:
        parent = max_arborescence(wp, m)[:m]
    except ValueError:
        return None
    return parent if int((parent == m).sum()) == 1 else None


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
        parent = _one_root_tree(w, m)
    if parent is None:      # no single root found at once: the best tree per root says why
        trees, usable = rooted_trees(w, m)
        tree_lam = lam[np.arange(m), trees[:, :m]]          # row rho: the tree's family scores
        best = -np.inf
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
    prior : {"BDeu", "K2"}, default "BDeu"; ess : float, default 1.0
        Local score (uniform structure prior).  BDeu rather than the library's K2
        because the SCF score of Ziebart, Dey & Bagnell (2007) is BDeu; ess 1 is the
        library's equivalent sample size (the classifiers TAN/FAN/STAN/SFAN use the
        paper's 10, :class:`DBNSCF` its 20).
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
    >>> df = bx.networks.load("asia").sample(2000, random_state=0)
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
    root: TAN / STAN averaging) or "none".  Prior default "BDeu" with ess 1.0: BDeu
    because the SCF score of Ziebart, Dey & Bagnell (2007) is BDeu.

    Attributes
    ----------
    log_evidence : float
        ``log sum_G prod_j exp(score_j)``, the log of the total (penalised) weight of all
        SCFs (uniform structure prior, unnormalised).

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(500, random_state=1)
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

    See :class:`SCFAverage`; prior default "BDeu" with ess 1.0, because the SCF score of
    Ziebart, Dey & Bagnell (2007) is BDeu.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(500, random_state=1)
    >>> P = edge_posteriors(df, ["either", "xray", "dysp"], ["tub", "lung", "bronc"], max_parents=2)
    >>> float(P.loc["either", "xray"] + P.loc["xray", "either"]) > 0.5
    True
    """
    return SCFAverage(data, targets, conditions, max_parents=max_parents, penalty=penalty,
                      prior=prior, ess=ess, score=score).edge_posteriors()


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


@renamed(seed="random_state")
def random_dbn(n_vars: int = 12, max_inter: int = 2, arity: int = 2, p_intra: float = 0.7,
               concentration: float = 0.5, random_state=None) -> dict:
    """A random two-slice DBN with an intra-slice forest and up to ``max_inter`` inter-slice parents.

    Returns a dict with ``names``, ``intra`` (parent index or -1 per variable, a forest
    whose parents precede their children), ``inter`` (list of previous-slice parent
    indices per variable), ``cpts`` (per variable an array (q, arity), parents in the
    order inter then intra, last fastest) and ``arity``.
    """
    n_vars = check_int(n_vars, "n_vars", low=1)
    max_inter = check_int(max_inter, "max_inter", low=0)
    arity = check_int(arity, "arity", low=2)
    rng = check_random_state(random_state)
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


@renamed(seed="random_state")
def sample_dbn(dbn: dict, n_steps: int, random_state=None, burn_in: int = 50) -> pd.DataFrame:
    """Sample ``n_steps`` consecutive slices of :func:`random_dbn` (after a burn-in)."""
    rng = check_random_state(random_state)
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
    prior, ess : local score, default "BDeu" and 20.0: not the library's K2 with
        ess 1 because Ziebart, Dey & Bagnell (2007) learn their DBNs with BDeu at ess 20.

    Examples
    --------
    >>> dbn = random_dbn(6, random_state=0)
    >>> train, test = sample_dbn(dbn, 300, random_state=1), sample_dbn(dbn, 100, random_state=2)
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
        averaging = Options("map", "bma")(self.averaging, "averaging")
        k, penalty, prior, ess, intra = check_scf_parameters(self.max_parents, self.penalty,
                                                             self.prior, self.ess, self.intra)
        pairs, cur, prev = two_slice(seq)
        self.current_, self.previous_ = cur, prev
        conds = prev if k > 0 else []
        fam = SCFFamilies.trusted(pairs, cur, conds, k, penalty, prior, ess, intra)
        self.families_ = fam
        if averaging == "map":
            self.result_ = _result_from_choice(fam, *_map_choice(fam))
            self.graph_ = self.result_.graph
            self._tables = MAPTables(fam, self.result_)
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
