"""Incremental model selection from a clustering hierarchy (Castelo & Siebes).

Variables are clustered by Cramer's V with complete linkage; the hierarchy is
flattened into an ordered list of clusters by ``incr_strategy`` (their Figure 1);
greedy selection is run in each cluster's sub-space in turn and the selected
models are joined (union of arcs) as the starting model of the larger space.
``q`` counts the candidate models that improve the fit at each step, the paper's
measure of the models taken into consideration.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import networkx as nx
import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import squareform

from .data.core import DiscreteData, as_discrete
from .scores import LocalScore
from .search import SearchResult, hill_climb

__all__ = ["ClusterNode", "cramers_v", "hierarchy", "incremental_strategy", "random_strategy",
           "greedy_search", "incremental_search", "IncrementalResult", "honeycomb_network"]


# --------------------------------------------------------------------------- association
def cramers_v(data: DiscreteData | pd.DataFrame) -> pd.DataFrame:
    """Cramer's V association matrix ``sqrt(chi2 / (N min(r-1, c-1)))``.

    All pairwise contingency tables come from one cross product of the one-hot coded
    data (exact integer counts). ``r`` and ``c`` are the numbers of *observed* states
    of the two variables (empty rows/columns of a table carry no chi-square term); a
    variable with a single observed state has association 0 with every other. The
    diagonal is 1.

    Parameters
    ----------
    data : DataFrame of categoricals or DiscreteData

    Returns
    -------
    DataFrame
        Symmetric ``(p, p)`` matrix indexed by the variable names, values in [0, 1].

    Examples
    --------
    >>> import pandas as pd
    >>> from bnexplore.clustering import cramers_v
    >>> df = pd.DataFrame({"a": list("xxyy"), "b": list("uuvv"), "c": list("uvuv")})
    >>> cramers_v(df).round(3).loc["a"].tolist()
    [1.0, 1.0, 0.0]
    """
    d = as_discrete(data)
    p, n = d.n_cols, d.n_rows
    if n == 0:
        raise ValueError("cramers_v needs at least one row of data")
    ar = d.arities.astype(np.int64)
    offs = np.concatenate([[0], np.cumsum(ar)])
    onehot = np.zeros((n, int(offs[-1])), dtype=np.float64)
    rows = np.arange(n)
    for i in range(p):
        onehot[rows, offs[i] + d.columns[i]] = 1.0
    cross = onehot.T @ onehot                      # all contingency tables at once
    marg = onehot.sum(axis=0)
    out = np.eye(p)
    for i in range(p):
        mi = marg[offs[i]:offs[i + 1]]
        oi = mi > 0
        ri = int(oi.sum())
        if ri < 2:
            continue
        for j in range(i + 1, p):
            mj = marg[offs[j]:offs[j + 1]]
            oj = mj > 0
            rj = int(oj.sum())
            if rj < 2:
                continue
            table = cross[offs[i]:offs[i + 1], offs[j]:offs[j + 1]][np.ix_(oi, oj)]
            expected = np.outer(mi[oi], mj[oj]) / n
            chi2 = float(((table - expected) ** 2 / expected).sum())
            v = float(np.sqrt(chi2 / (n * (min(ri, rj) - 1))))
            out[i, j] = out[j, i] = min(v, 1.0)
    return pd.DataFrame(out, index=list(d.names), columns=list(d.names))


# --------------------------------------------------------------------------- hierarchy
@dataclass
class ClusterNode:
    """A node of the variable hierarchy.

    Attributes
    ----------
    variables : list of str
        The variables in the cluster (in leaf order).
    radius : float
        Smallest association between two variables of the cluster (1.0 for a leaf).
    children : list of ClusterNode
        Sub-clusters (empty for a leaf).
    id : int
        scipy linkage id (leaves 0..p-1, merges p..2p-2).
    """

    variables: list
    radius: float
    children: list = field(default_factory=list)
    id: int = -1

    def __len__(self) -> int:
        return len(self.variables)

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def walk(self):
        """Nodes in depth-first pre-order."""
        yield self
        for c in self.children:
            yield from c.walk()

    def __repr__(self) -> str:
        return f"ClusterNode({self.variables}, radius={self.radius:.3f}, {len(self.children)} children)"


def hierarchy(data: DiscreteData | pd.DataFrame, association: pd.DataFrame | None = None) -> ClusterNode:
    """Complete-linkage hierarchical clustering of the variables on Cramer's V.

    The distance is ``1 - V``; with complete linkage a cluster's merge height ``h``
    is the largest distance inside it, so its radius (smallest association) is
    ``1 - h``.

    Parameters
    ----------
    data : DataFrame or DiscreteData
    association : DataFrame, optional
        A precomputed association matrix (e.g. from :func:`cramers_v`).

    Returns
    -------
    ClusterNode
        The root; ``root.variables`` lists every variable.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(2000, seed=0)
    >>> root = bx.clustering.hierarchy(df)
    >>> sorted(root.variables) == sorted(df.columns)
    True
    """
    v = cramers_v(data) if association is None else association
    names = list(v.index)
    p = len(names)
    if p == 1:
        return ClusterNode([names[0]], 1.0, [], 0)
    dist = np.clip(1.0 - v.to_numpy(dtype=float), 0.0, 1.0)
    np.fill_diagonal(dist, 0.0)
    dist = (dist + dist.T) / 2
    z = linkage(squareform(dist, checks=False), method="complete")
    nodes = {i: ClusterNode([names[i]], 1.0, [], i) for i in range(p)}
    for k, (a, b, h, _) in enumerate(z):
        left, right = nodes.pop(int(a)), nodes.pop(int(b))
        nodes[p + k] = ClusterNode(left.variables + right.variables, float(1.0 - h), [left, right], p + k)
    (root,) = nodes.values()
    return root


def _tree_from_nested(spec) -> ClusterNode:
    """Build a tree from nested lists (leaves are variable names); radius unknown (nan)."""
    if isinstance(spec, ClusterNode):
        return spec
    if isinstance(spec, (list, tuple)):
        kids = [_tree_from_nested(s) for s in spec]
        if len(kids) == 1:
            return kids[0]
        return ClusterNode(sum((k.variables for k in kids), []), float("nan"), kids)
    return ClusterNode([spec], 1.0, [])


def incremental_strategy(tree: ClusterNode | list, cluster_size: int) -> list[list[str]]:
    """Flatten a hierarchy into an ordered list of clusters (Castelo & Siebes, Figure 1).

    Depth-first over the children of each node: a child with between
    ``cluster_size - 1`` and ``cluster_size + 1`` variables is taken as a cluster and
    not explored further; a smaller child goes to the global ``small`` list; a larger
    child is explored recursively. At the top call the small clusters are merged,
    in the order met, into groups that are closed as soon as they hold more than
    ``cluster_size - 1`` variables; a remainder forms the last group.

    Parameters
    ----------
    tree : ClusterNode or nested lists
        The hierarchy (e.g. from :func:`hierarchy`); nested lists of names are accepted.
    cluster_size : int
        ``cs`` >= 1.

    Returns
    -------
    list of list of str
        The clusters in the order their sub-spaces are explored; together they cover
        every variable exactly once.

    Examples
    --------
    >>> from bnexplore.clustering import incremental_strategy
    >>> incremental_strategy([[["a", "b"], "c"], [["d", "e"], [["f", "g"], "h"]]], 4)
    [['a', 'b', 'c'], ['d', 'e', 'f', 'g', 'h']]
    """
    if isinstance(cluster_size, bool) or not isinstance(cluster_size, (int, np.integer)) or cluster_size < 1:
        raise ValueError(f"cluster_size must be a positive integer, got {cluster_size!r}")
    root = _tree_from_nested(tree)
    cs = int(cluster_size)
    if root.is_leaf:
        return [list(root.variables)]
    small: list[ClusterNode] = []

    def rec(r: ClusterNode) -> list[list[str]]:
        inc = []
        for s in r.children:
            if cs - 1 <= len(s) <= cs + 1:
                inc.append(list(s.variables))
            elif len(s) < cs - 1:
                small.append(s)
            else:
                inc.extend(rec(s))
        if r is root:
            w: list[str] = []
            for s in small:
                w.extend(s.variables)
                if len(w) > cs - 1:
                    inc.append(w)
                    w = []
            if w:
                inc.append(w)
        return inc

    return rec(root)


def random_strategy(variables: Sequence[str], cluster_size: int, seed=None) -> list[list[str]]:
    """The naive split: shuffle the variables and cut them into groups of ``cluster_size``.

    Examples
    --------
    >>> from bnexplore.clustering import random_strategy
    >>> [len(g) for g in random_strategy(list("abcdefg"), 3, seed=0)]
    [3, 3, 1]
    """
    if isinstance(cluster_size, bool) or not isinstance(cluster_size, (int, np.integer)) or cluster_size < 1:
        raise ValueError(f"cluster_size must be a positive integer, got {cluster_size!r}")
    rng = np.random.default_rng(seed)
    perm = [variables[i] for i in rng.permutation(len(variables))]
    return [perm[i:i + cluster_size] for i in range(0, len(perm), cluster_size)]


# --------------------------------------------------------------------------- searches
def greedy_search(data: DiscreteData | pd.DataFrame | None = None, order: Sequence[str] | None = None,
                  start: nx.DiGraph | None = None, score: LocalScore | None = None, prior: str = "K2",
                  ess: float = 1.0, max_indegree: int | None = None) -> SearchResult:
    """Greedy selection with add, remove and reverse (consistent with ``order``).

    Returns a :class:`bnexplore.search.SearchResult`: ``.dag``, ``.q_trace`` (the
    number of candidates that improve the fit at each step) and ``.q`` (its sum).

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(3000, seed=0)
    >>> res = bx.clustering.greedy_search(df, order=list(df.columns))
    >>> bool(res.q == res.q_trace.sum())
    True
    """
    return hill_climb(data, score=score, prior=prior, ess=ess, order=order, start=start,
                      max_indegree=max_indegree)


@dataclass
class IncrementalResult:
    """Outcome of :func:`incremental_search`.

    Attributes
    ----------
    dag : networkx.DiGraph
        The model selected in the whole space.
    score : float
    clusters : list of list of str
        The clusters, in the order used.
    subspaces : list of list of str
        The variables of every sub-space searched, in order (clusters and their unions).
    q_trace : ndarray
        Improving candidates at every step, all sub-spaces concatenated.
    steps : DataFrame
        All accepted moves with a ``subspace`` column (index into ``subspaces``).
    models : list of networkx.DiGraph
        The model selected in each sub-space (for drawing the growth, Figure 6).
    """

    dag: nx.DiGraph
    score: float
    clusters: list
    subspaces: list
    q_trace: np.ndarray
    steps: pd.DataFrame
    models: list

    @property
    def q(self) -> int:
        return int(self.q_trace.sum())


def incremental_search(data: DiscreteData | pd.DataFrame, cluster_size: int = 4, strategy: str = "hc",
                       order: Sequence[str] | None = None, seed=0, clusters: list | None = None,
                       score: LocalScore | None = None, prior: str = "K2", ess: float = 1.0,
                       max_indegree: int | None = None) -> IncrementalResult:
    """Incremental model selection from sub-spaces of lower dimension.

    The variables are split into clusters (``strategy="hc"``: :func:`hierarchy` +
    :func:`incremental_strategy`; ``"random"``: :func:`random_strategy` with ``seed``;
    or explicit ``clusters``). For each cluster in turn a model is selected in its
    sub-space from the empty graph; from the second cluster on, the union of its
    arcs with the current model starts a search in the joined space (the variables
    seen so far). The last joined space holds every variable.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(3000, seed=0)
    >>> inc = bx.clustering.incremental_search(df, cluster_size=3, order=list(df.columns))
    >>> sorted(inc.subspaces[-1]) == sorted(df.columns)
    True
    """
    ls = score if score is not None else LocalScore(data, prior=prior, ess=ess)
    names = ls.names
    if clusters is None:
        if strategy == "hc":
            clusters = incremental_strategy(hierarchy(ls.data), cluster_size)
        elif strategy == "random":
            clusters = random_strategy(names, cluster_size, seed=seed)
        else:
            raise ValueError(f"strategy must be 'hc' or 'random', got {strategy!r}")
    flat = [v for c in clusters for v in c]
    if sorted(flat) != sorted(names):
        raise ValueError("clusters must cover every variable exactly once")
    idx = {v: i for i, v in enumerate(names)}
    p = len(names)

    def mask_for(vars_):
        m = np.zeros((p, p), dtype=bool)
        ii = [idx[v] for v in vars_]
        m[np.ix_(ii, ii)] = True
        return m

    subspaces, traces, frames, models = [], [], [], []
    current: nx.DiGraph | None = None
    seen: list[str] = []

    def run(vars_, start):
        res = hill_climb(score=ls, order=order, start=start, allowed=mask_for(vars_), max_indegree=max_indegree)
        k = len(subspaces)
        subspaces.append(list(vars_))
        traces.append(res.q_trace)
        frames.append(res.steps.assign(subspace=k))
        models.append(res.dag)
        return res

    res = None
    for cluster in clusters:
        res = run(cluster, None)
        if current is None:
            current, seen = res.dag, list(cluster)
            continue
        start = nx.DiGraph()
        start.add_nodes_from(names)
        start.add_edges_from(current.edges)
        start.add_edges_from(res.dag.edges)
        seen = seen + list(cluster)
        res = run(seen, start)
        current = res.dag
    if len(clusters) == 1 and sorted(clusters[0]) != sorted(names):  # pragma: no cover - guarded above
        raise AssertionError
    steps = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return IncrementalResult(dag=current, score=float(ls.total(current)), clusters=[list(c) for c in clusters],
                             subspaces=subspaces, q_trace=np.concatenate(traces) if traces else np.zeros(0, int),
                             steps=steps, models=models)


# --------------------------------------------------------------------------- honeycomb
def honeycomb_network(n_cells: int = 8, arity: int = 2, seed=None, concentration: float = 1.0):
    """A honeycombed Bayesian network: ``n_cells`` hexagonal cells of six variables.

    Each cell is a hexagon of arcs oriented from its first to its last variable
    (two directed paths around the ring), and consecutive cells are joined by a
    single arc, so that cells interact strongly inside and weakly across (the
    structure of Castelo & Siebes' Figure 5a; 8 cells = 48 nodes). CPTs are drawn
    afresh from a symmetric Dirichlet with ``concentration`` for every seed, as the
    paper regenerates the probabilities for each sample.

    Returns
    -------
    (BayesNet, list of list of str)
        The network and its cells.
    """
    from .networks import BayesNet

    if n_cells < 1:
        raise ValueError(f"n_cells must be at least 1, got {n_cells}")
    rng = np.random.default_rng(seed)
    dag = nx.DiGraph()
    cells = []
    for c in range(n_cells):
        v = [f"C{c}_{i}" for i in range(6)]
        cells.append(v)
        dag.add_nodes_from(v)
        # hexagon 0-1-2-3-4-5-0 oriented as two paths from v0 to v3
        dag.add_edges_from([(v[0], v[1]), (v[1], v[2]), (v[2], v[3]), (v[0], v[5]), (v[5], v[4]), (v[4], v[3])])
        if c > 0:
            dag.add_edge(cells[c - 1][3], v[0])
    states = {v: [str(s) for s in range(arity)] for v in dag.nodes}
    cpts = {}
    for v in dag.nodes:
        q = arity ** dag.in_degree(v)
        table = rng.dirichlet(np.full(arity, concentration), size=q)
        # keep dependencies visible: make every row lean towards a different state
        cpts[v] = table
    order = list(nx.topological_sort(dag))
    sub = nx.DiGraph()
    sub.add_nodes_from(order)
    sub.add_edges_from(dag.edges)
    return BayesNet(sub, states, cpts), cells
