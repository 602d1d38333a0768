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
import numba
import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import squareform

from ._deprecation import renamed
from ._validation import (check_int, check_number, check_positive_int, check_probability,
                          check_random_state)
from .data.core import DiscreteData, as_discrete
from .scores import LocalScore
from .search import SearchResult, hill_climb

__all__ = ["ClusterNode", "cramers_v", "hierarchy", "incremental_strategy", "random_strategy",
           "greedy_search", "incremental_search", "IncrementalResult", "honeycomb_network",
           "cluster_purity", "connected_clusters"]


# --------------------------------------------------------------------------- association
@numba.njit(cache=True)
def _cross_counts(cols, offs):
    """Joint counts of every pair of (variable, state): the one-hot cross product."""
    p, n = cols.shape
    m = offs[p]
    out = np.zeros((m, m), dtype=np.int64)
    idx = np.empty(p, dtype=np.int64)
    for t in range(n):
        for i in range(p):
            idx[i] = offs[i] + cols[i, t]
        for i in range(p):
            a = idx[i]
            for j in range(i, p):
                out[a, idx[j]] += 1
    for a in range(m):
        for b in range(a + 1, m):
            out[b, a] = out[a, b] = out[a, b] + out[b, a]
    return out


def cramers_v(data: DiscreteData | pd.DataFrame) -> pd.DataFrame:
    """Cramer's V association matrix ``sqrt(chi2 / (N min(r-1, c-1)))``.

    All pairwise contingency tables come from one cross product of the one-hot coded
    data (exact integer counts). ``r`` and ``c`` are the numbers of *observed* states
    of the two variables (empty rows/columns of a table carry no chi-square term); a
    variable with a single observed state has association 0 with every other. The
    diagonal is 1.  With missing cells each pair's table counts the rows where both
    variables are observed.

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
    d = as_discrete(data, missing="keep")
    p, n = d.n_cols, d.n_rows
    if n == 0:
        raise ValueError("cramers_v needs at least one row of data")
    if d.missing is not None:
        return _cramers_v_available(d)
    ar = d.arities.astype(np.int64)
    offs = np.concatenate([[0], np.cumsum(ar)])
    cross = _cross_counts(d.columns, offs)      # every pairwise contingency table
    marg = np.diag(cross).astype(np.float64)
    cross = cross.astype(np.float64)
    # chi2 = N (sum_ab n_ab^2 / (n_a n_b) - 1) over the observed states of each pair
    inv = np.zeros_like(marg)
    inv[marg > 0] = 1.0 / np.sqrt(marg[marg > 0])
    m2 = (cross * inv[:, None] * inv[None, :]) ** 2
    starts = offs[:-1]
    block = np.add.reduceat(np.add.reduceat(m2, starts, axis=0), starts, axis=1)
    observed = np.add.reduceat((marg > 0).astype(np.int64), starts)
    k = np.minimum(observed[:, None], observed[None, :]) - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.sqrt(np.clip(block - 1.0, 0.0, None) / np.where(k > 0, k, 1))
    out = np.where(k > 0, np.minimum(v, 1.0), 0.0)
    np.fill_diagonal(out, 1.0)
    return pd.DataFrame(out, index=list(d.names), columns=list(d.names))


def _cramers_v_available(d: DiscreteData) -> pd.DataFrame:
    """Cramer's V with missing cells: each pair's table over the rows where both are
    observed (a missing cell's one-hot row is zero, so ``H^T H`` counts exactly those)."""
    ar = d.arities.astype(np.int64)
    offs = np.concatenate([[0], np.cumsum(ar)])
    H = np.zeros((d.n_rows, int(offs[-1])))
    for j in range(d.n_cols):
        seen = ~d.missing[:, j]
        H[np.flatnonzero(seen), offs[j] + d.columns[j][seen]] = 1.0
    cross = H.T @ H
    p = d.n_cols
    out = np.eye(p)
    for a in range(p):
        for b in range(a + 1, p):
            t = cross[offs[a]:offs[a + 1], offs[b]:offs[b + 1]]
            ra, cb, N = t.sum(axis=1), t.sum(axis=0), t.sum()
            k = min(int((ra > 0).sum()), int((cb > 0).sum())) - 1
            if k <= 0 or N == 0:
                continue
            e = np.outer(ra[ra > 0], cb[cb > 0]) / N
            chi2 = ((t[np.ix_(ra > 0, cb > 0)] - e) ** 2 / e).sum()
            out[a, b] = out[b, a] = min(np.sqrt(chi2 / (N * k)), 1.0)
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


def hierarchy(data: DiscreteData | pd.DataFrame | None = None,
              association: pd.DataFrame | None = None) -> ClusterNode:
    """Complete-linkage hierarchical clustering of the variables on Cramer's V.

    The distance is ``1 - V``; with complete linkage a cluster's merge height ``h``
    is the largest distance inside it, so its radius (smallest association between
    two of its variables) is ``1 - h``. Children are ordered as scipy's linkage
    gives them (first merged operand first).

    Parameters
    ----------
    data : DataFrame or DiscreteData
    association : DataFrame, optional
        A precomputed symmetric association matrix (e.g. from :func:`cramers_v`);
        then ``data`` is not needed.

    Returns
    -------
    ClusterNode
        The root; ``root.variables`` lists every variable.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(2000, random_state=0)
    >>> root = bx.clustering.hierarchy(df)
    >>> sorted(root.variables) == sorted(df.columns)
    True
    """
    if association is None:
        if data is None:
            raise ValueError("give the data or an association matrix")
        v = cramers_v(data)
    else:
        v = association
        if not isinstance(v, pd.DataFrame) or v.shape[0] != v.shape[1] or list(v.index) != list(v.columns):
            raise ValueError("association must be a square DataFrame with the same variable names "
                             "as index and columns (e.g. from cramers_v)")
    names = list(v.index)
    p = len(names)
    if p == 0:
        raise ValueError("hierarchy needs at least one variable")
    if p == 1:
        return ClusterNode([names[0]], 1.0, [], 0)
    a = v.to_numpy(dtype=float)
    if not np.isfinite(a).all():
        raise ValueError("association matrix has missing or infinite values")
    dist = np.clip(1.0 - a, 0.0, 1.0)
    dist = (dist + dist.T) / 2
    np.fill_diagonal(dist, 0.0)
    z = linkage(squareform(dist, checks=False), method="complete")
    nodes = {i: ClusterNode([names[i]], 1.0, [], i) for i in range(p)}
    for k, (a_, b_, h, _) in enumerate(z):
        left, right = nodes.pop(int(a_)), nodes.pop(int(b_))
        nodes[p + k] = ClusterNode(left.variables + right.variables, float(1.0 - h), [left, right], p + k)
    (root,) = nodes.values()
    return root


def _tree_from_nested(spec) -> ClusterNode:
    """Build a tree from nested lists (leaves are variable names); radius unknown (nan)."""
    if isinstance(spec, ClusterNode):
        return spec
    if isinstance(spec, (list, tuple)):
        if not spec:
            raise ValueError("a nested-list hierarchy may not contain an empty list")
        kids = [_tree_from_nested(s) for s in spec]
        if len(kids) == 1:
            return kids[0]
        return ClusterNode(sum((k.variables for k in kids), []), float("nan"), kids)
    return ClusterNode([spec], 1.0, [])


def _check_cluster_size(cluster_size) -> int:
    if isinstance(cluster_size, bool) or not isinstance(cluster_size, (int, np.integer)):
        raise TypeError(f"cluster_size must be an integer, got {type(cluster_size).__name__} "
                        f"{cluster_size!r}")
    if cluster_size < 1:
        raise ValueError(f"cluster_size must be at least 1, got {cluster_size}")
    return int(cluster_size)


def incremental_strategy(tree: ClusterNode | list, cluster_size: int) -> list[list[str]]:
    """Flatten a hierarchy into an ordered list of clusters (Castelo & Siebes, Figure 1).

    ``incr_strategy(t, top_root, cs, small)``: the children of the root are visited in
    order (depth first). A child with between ``cs - 1`` and ``cs + 1`` variables is
    appended to the strategy and not explored further; a child with fewer than
    ``cs - 1`` variables is appended to the ``small`` list shared by all calls; a
    larger child is explored recursively and its strategy concatenated. When the top
    call has explored all its branches, the small clusters are joined, in the order
    they were met, into a group that is closed (appended) as soon as it holds more
    than ``cs - 1`` variables; a non-empty remainder is appended last. Only the
    children of a node are tested, so the root is never taken as a whole, and a
    single-variable tree gives one cluster.

    Parameters
    ----------
    tree : ClusterNode or nested lists
        The hierarchy (e.g. from :func:`hierarchy`); nested lists of names are
        accepted, e.g. ``[["a", "b"], "c"]``.
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
    cs = _check_cluster_size(cluster_size)
    if not isinstance(tree, (ClusterNode, list, tuple, str)):
        raise TypeError(f"tree must be a ClusterNode (from hierarchy) or nested lists, "
                        f"got {type(tree).__name__}")
    root = _tree_from_nested(tree)
    if len(set(root.variables)) != len(root.variables):
        dup = sorted({str(v) for v in root.variables if root.variables.count(v) > 1})
        raise ValueError(f"the hierarchy names variables more than once: {dup}")
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


@renamed(seed="random_state")
def random_strategy(variables: Sequence[str], cluster_size: int, random_state=None) -> list[list[str]]:
    """The naive split of Section 3: shuffle the variables and cut them into groups.

    Groups have ``cluster_size`` variables; the last one holds the remainder.

    Examples
    --------
    >>> from bnexplore.clustering import random_strategy
    >>> [len(g) for g in random_strategy(list("abcdefg"), 3, random_state=0)]
    [3, 3, 1]
    """
    cs = _check_cluster_size(cluster_size)
    variables = list(variables)
    if not variables:
        raise ValueError("random_strategy needs at least one variable")
    rng = check_random_state(random_state)
    perm = [variables[i] for i in rng.permutation(len(variables))]
    return [perm[i:i + cs] for i in range(0, len(perm), cs)]


# --------------------------------------------------------------------------- searches
@renamed(max_indegree="max_parents")
def greedy_search(data: DiscreteData | pd.DataFrame | None = None, order: Sequence[str] | None = None,
                  start: nx.DiGraph | None = None, score: LocalScore | None = None, prior: str = "K2",
                  ess: float = 1.0, max_parents: int | None = None) -> SearchResult:
    """Greedy selection with add, remove and reverse (consistent with ``order``).

    The score is :func:`bnexplore.search.hill_climb`'s (default "K2", ess 1.0: the
    library's default).

    At every step all legal neighbours of the current model (one arc more, one arc
    less, one arc reversed; acyclic and, with an ``order``, only arcs from earlier to
    later variables - so no reversal is legal) are scored; the best one is taken if
    it improves the score. ``q_trace[i]`` is ``|W_i*|``, the number of neighbours at
    step ``i`` that improve the fit; ``q`` is their sum, the paper's ``q = |W*|`` (the
    improving sets of different steps are disjoint on the runs we checked, see the
    tests).

    Returns a :class:`bnexplore.search.SearchResult`: ``.dag``, ``.q_trace`` and ``.q``.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(3000, random_state=0)
    >>> res = bx.clustering.greedy_search(df, order=list(df.columns))
    >>> res.q == int(res.q_trace.sum())
    True
    """
    return hill_climb(data, score=score, prior=prior, ess=ess, order=order, start=start,
                      max_parents=max_parents)


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
        The variables of every sub-space searched, in order: ``c1, c2, c1+c2, c3,
        c1+c2+c3, ...``.
    q_trace : ndarray
        Improving candidates at every accepted step, all sub-spaces concatenated.
    steps : DataFrame
        All accepted moves with a ``subspace`` column (index into ``subspaces``).
    models : list of networkx.DiGraph
        The model selected in each sub-space (for drawing the growth, Figure 6).
    kinds : list of str
        ``"cluster"`` (searched from the empty graph) or ``"join"`` (started from the
        union of the previous joined model and the last cluster model) per sub-space.
    """

    dag: nx.DiGraph
    score: float
    clusters: list
    subspaces: list
    q_trace: np.ndarray
    steps: pd.DataFrame
    models: list
    kinds: list = field(default_factory=list)

    @property
    def q(self) -> int:
        """Total number of improving models met in all sub-spaces."""
        return int(self.q_trace.sum())

    @property
    def subspace_q(self) -> np.ndarray:
        """``q`` of each sub-space search (0 when it accepted no move)."""
        out = np.zeros(len(self.subspaces), dtype=np.int64)
        if len(self.steps):
            g = self.steps.groupby("subspace")["n_improving"].sum()
            out[g.index.to_numpy(dtype=int)] = g.to_numpy()
        return out

    def model_at(self, k: int) -> nx.DiGraph:
        """The network known after the search in sub-space ``k``.

        The last joined model up to ``k`` together with the cluster models found
        after it (the growing network of Figure 6).
        """
        if not 0 <= k < len(self.models):
            raise IndexError(f"sub-space index {k} out of range 0..{len(self.models) - 1}")
        g = nx.DiGraph()
        g.add_nodes_from(self.dag.nodes)
        last_join = max((i for i in range(k + 1) if self.kinds and self.kinds[i] == "join"), default=None)
        first = 0 if last_join is None else last_join
        for i in range(first, k + 1):
            g.add_edges_from(self.models[i].edges)
        return g


@renamed(max_indegree="max_parents", seed="random_state")
def incremental_search(data: DiscreteData | pd.DataFrame | None = None, cluster_size: int = 4,
                       strategy: str = "hc", order: Sequence[str] | None = None, random_state=0,
                       clusters: list | None = None, score: LocalScore | None = None, prior: str = "K2",
                       ess: float = 1.0, max_parents: int | None = None) -> IncrementalResult:
    """Incremental model selection from sub-spaces of lower dimension (Sections 3-5).

    The variables are split into clusters (``strategy="hc"``: :func:`hierarchy` +
    :func:`incremental_strategy`; ``"random"``: :func:`random_strategy` with ``random_state``;
    or explicit ``clusters``). A model is selected by :func:`greedy_search` in the
    sub-space of the first cluster (arcs inside it only, from the empty graph). For
    every further cluster a model is selected in its own sub-space, then the union of
    its arcs with the current model (the combining function ``g``) starts a search in
    the joined space of all the variables seen so far. The last joined space holds
    every variable, so the final model is a model of the whole space. ``q`` sums the
    improving candidates over all sub-space searches.

    Parameters
    ----------
    data : DataFrame or DiscreteData (or give ``score``)
    cluster_size : int
        ``cs`` of the strategy.
    strategy : {"hc", "random"}
    order : sequence of names, optional
        A node order every search respects.
    random_state : int or Generator
        For ``strategy="random"``.
    clusters : list of list of str, optional
        Use these clusters (in this order) instead of a strategy.
    score : LocalScore, optional
        Reuse a scorer and its cache.
    prior, ess, max_parents : see :func:`bnexplore.search.hill_climb` (default "K2", 1.0 and None).

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(3000, random_state=0)
    >>> inc = bx.clustering.incremental_search(df, cluster_size=3, order=list(df.columns))
    >>> sorted(inc.subspaces[-1]) == sorted(df.columns)
    True
    """
    if strategy not in ("hc", "random"):
        raise ValueError(f"strategy must be 'hc' or 'random', got {strategy!r}")
    # missing cells: every move compared on the rows its variables are observed in
    ls = score if score is not None else LocalScore(data, prior=prior, ess=ess, missing="keep")
    if not isinstance(ls, LocalScore):
        raise TypeError(f"score must be a bnexplore.scores.LocalScore, got {type(ls).__name__}")
    names = list(ls.names)
    if clusters is None:
        if strategy == "hc":
            clusters = incremental_strategy(hierarchy(ls.data), cluster_size)
        else:
            clusters = random_strategy(names, cluster_size, random_state=random_state)
    else:
        if isinstance(clusters, (str, bytes)) or not all(isinstance(c, (list, tuple)) for c in clusters):
            raise TypeError("clusters must be a list of lists of variable names")
        clusters = [list(c) for c in clusters]
        if any(not c for c in clusters):
            raise ValueError("clusters may not be empty")
        flat = [v for c in clusters for v in c]
        unknown = sorted({str(v) for v in flat} - set(map(str, names)))
        repeated = sorted({str(v) for v in flat if flat.count(v) > 1})
        missing = sorted(set(names) - set(flat))
        if unknown or repeated or missing:
            raise ValueError(f"clusters must cover every variable exactly once; unknown: {unknown}, "
                             f"repeated: {repeated}, missing: {missing}")
    idx = {v: i for i, v in enumerate(names)}
    p = len(names)

    def mask_for(vars_):
        m = np.zeros((p, p), dtype=bool)
        ii = [idx[v] for v in vars_]
        m[np.ix_(ii, ii)] = True
        return m

    subspaces, traces, frames, models, kinds = [], [], [], [], []

    def run(vars_, start, kind):
        res = hill_climb(score=ls, order=order, start=start, allowed=mask_for(vars_), max_parents=max_parents)
        k = len(subspaces)
        subspaces.append(list(vars_))
        traces.append(res.q_trace)
        frames.append(res.steps.assign(subspace=k))
        models.append(res.dag)
        kinds.append(kind)
        return res

    current: nx.DiGraph | None = None
    seen: list[str] = []
    for cluster in clusters:
        res = run(cluster, None, "cluster")
        if current is None:
            current, seen = res.dag, list(cluster)
            continue
        start = nx.DiGraph()
        start.add_nodes_from(names)
        start.add_edges_from(current.edges)
        start.add_edges_from(res.dag.edges)
        seen = seen + list(cluster)
        current = run(seen, start, "join").dag
    steps = pd.concat(frames, ignore_index=True)
    return IncrementalResult(dag=current, score=float(ls.total(current)), clusters=[list(c) for c in clusters],
                             subspaces=subspaces, q_trace=np.concatenate(traces).astype(np.int64),
                             steps=steps, models=models, kinds=kinds)


# --------------------------------------------------------------------------- evaluation
def cluster_purity(clusters: Sequence[Sequence[str]], groups: Sequence[Sequence[str]]) -> float:
    """Share of variables that fall in the majority group of their cluster.

    1.0 when every cluster lies inside one group (e.g. one honeycomb cell).

    Examples
    --------
    >>> cluster_purity([["a", "b"], ["c", "d"]], [["a", "b", "c"], ["d"]])
    0.75
    """
    where = {v: g for g, vs in enumerate(groups) for v in vs}
    flat = [v for c in clusters for v in c]
    missing = sorted({str(v) for v in flat} - set(map(str, where)))
    if missing:
        raise ValueError(f"variables {missing} are in no group")
    if not flat:
        raise ValueError("clusters are empty")
    hits = sum(int(np.bincount([where[v] for v in c]).max()) for c in clusters if len(c))
    return hits / len(flat)


def connected_clusters(clusters: Sequence[Sequence[str]], dag: nx.DiGraph) -> list[bool]:
    """For each cluster, whether it induces a connected part of ``dag``'s skeleton.

    Examples
    --------
    >>> import networkx as nx
    >>> connected_clusters([["a", "b"], ["a", "c"]], nx.DiGraph([("a", "b"), ("b", "c")]))
    [True, False]
    """
    und = dag.to_undirected()
    return [bool(len(c)) and nx.is_connected(und.subgraph(c)) for c in clusters]


# --------------------------------------------------------------------------- honeycomb
@renamed(seed="random_state")
def honeycomb_network(n_cells: int = 8, arity: int = 2, random_state=None, concentration: float = 1.0,
                      dependence: float = 0.6):
    """A honeycombed Bayesian network: ``n_cells`` hexagonal cells of six variables.

    Each cell is a hexagon of arcs oriented from its first to its fourth variable
    (two directed paths around the ring, ``v0->v1->v2->v3`` and ``v0->v5->v4->v3``),
    and consecutive cells are joined by the single arc ``v3 -> v0`` of the next cell,
    so variables interact through two paths inside a cell and one across (our
    reading of Castelo & Siebes' Figure 5a, whose picture is not in the text;
    8 cells = 48 nodes).

    CPTs are drawn afresh for every random state, as the paper regenerates the probabilities
    for each sample: each row is ``dependence * e_d + (1 - dependence) * Dirichlet
    (concentration)``, where ``e_d`` puts all mass on a dominant state ``d`` that
    follows the parents (the rounded mean of the parents' states; ties broken at
    random). ``dependence=0`` gives plain Dirichlet rows, whose arcs are often too
    weak for the clusters to follow the cells (see docs/reproduction/castelo_siebes.md).

    Parameters
    ----------
    n_cells : int
    arity : int
        States per variable (>= 2).
    random_state : int or Generator
    concentration : float
        Symmetric Dirichlet parameter of the random part of every row.
    dependence : float in [0, 1]
        Weight of the parent-following dominant state.

    Returns
    -------
    (BayesNet, list of list of str)
        The network and its cells.

    Examples
    --------
    >>> bn, cells = honeycomb_network(n_cells=2, random_state=0)
    >>> bn.dag.number_of_nodes(), bn.dag.number_of_edges(), len(cells)
    (12, 13, 2)
    """
    from .networks import BayesNet

    n_cells = check_positive_int(n_cells, "n_cells")
    arity = check_int(arity, "arity", low=2)
    concentration = check_number(concentration, "concentration", low=0, closed="neither")
    dependence = check_probability(dependence, "dependence")
    rng = check_random_state(random_state)
    parents: dict[str, list[str]] = {}
    cells = []
    for c in range(n_cells):
        v = [f"C{c}_{i}" for i in range(6)]
        cells.append(v)
        parents[v[0]] = [cells[c - 1][3]] if c > 0 else []
        parents[v[1]] = [v[0]]
        parents[v[2]] = [v[1]]
        parents[v[5]] = [v[0]]
        parents[v[4]] = [v[5]]
        parents[v[3]] = [v[2], v[4]]
    names = [v for cell in cells for v in cell]
    parents = {v: parents[v] for v in names}
    states = {v: [str(s) for s in range(arity)] for v in names}
    cpts = {}
    for v in names:
        k = len(parents[v])
        q = arity ** k
        table = rng.dirichlet(np.full(arity, float(concentration)), size=q)
        if k:
            configs = np.array(np.unravel_index(np.arange(q), (arity,) * k)).T  # last parent fastest
            mean = configs.mean(axis=1)
            dom = np.floor(mean + 0.5).astype(int)
            ties = np.isclose(mean % 1.0, 0.5)
            dom[ties] = np.floor(mean[ties]).astype(int) + rng.integers(0, 2, ties.sum())
            table = (1.0 - dependence) * table
            table[np.arange(q), np.clip(dom, 0, arity - 1)] += dependence
        cpts[v] = table
    return BayesNet(parents, states, cpts, name=f"honeycomb{n_cells}"), cells


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
