"""Edge confidence by the nonparametric bootstrap, and every method's arc posteriors side by side.

Bootstrap arc strength (Friedman, Goldszmidt & Wyner 1999; bnlearn's ``boot.strength``):
learn a network on each of ``B`` resamples of the rows (with replacement) and count

    strength(u, v)  = #{b : u and v adjacent in G_b} / B                  (strength)
    direction(u, v) = #{b : u -> v in G_b} / #{b : u and v adjacent}      (direction)

(direction 0.5 when never adjacent, as bnlearn reports it).  Significance threshold
(Scutari & Nagarajan 2013): with ``F`` the empirical CDF of the strengths of all pairs,
the threshold is the strength quantile at ``p0`` minimising the L1 distance between ``F``
and the CDF of the ideal strengths (0 for ``p0`` of the pairs, 1 for the rest),

    p0 = argmin_p integral_0^1 |F(x) - p| dx,   threshold = F^-1(p0)        (threshold)

``p0`` is the median of ``F`` weighted by the lengths of its steps; an arc is significant
when its strength exceeds the threshold.  The bootstrap has no prior over structures: the
strengths are frequencies of a search's answers, not posteriors.

Glossary
--------
pair
    an unordered pair of variables; the strengths of the ``p (p - 1) / 2`` pairs are what
    the threshold is fitted to.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ._validation import check_int, check_random_state
from .data.core import DiscreteData, as_discrete
from .scores import _check_prior

__all__ = ["BootstrapArcs", "bootstrap_arcs", "inclusion_threshold", "arc_table"]


def inclusion_threshold(strengths: np.ndarray) -> float:
    """Scutari & Nagarajan's (2013) threshold of the strengths (see the module docstring).

    Examples
    --------
    >>> inclusion_threshold(np.array([0.0, 0.02, 0.05, 0.1, 0.95, 1.0]))
    0.1
    """
    s = np.sort(np.asarray(strengths, dtype=float).ravel())
    if s.size == 0:
        raise ValueError("no strengths to fit the threshold to")
    knots = np.unique(np.concatenate([[0.0], s[s < 1.0], [1.0]]))
    F = np.searchsorted(s, knots[:-1], side="right") / s.size  # F on each step [knot_i, knot_i+1)
    w = np.diff(knots)
    order = np.argsort(F, kind="stable")
    cum = np.cumsum(w[order])
    p0 = float(F[order][np.searchsorted(cum, cum[-1] / 2)]) if cum[-1] > 0 else 1.0
    # the smallest strength whose CDF reaches p0 (R's quantile type 1)
    return float(s[min(max(int(np.ceil(p0 * s.size)) - 1, 0), s.size - 1)])


class BootstrapArcs:
    """Result of :func:`bootstrap_arcs`.

    Attributes
    ----------
    strength : DataFrame
        ``strength.loc[u, v]``: fraction of the bootstrap networks where ``u`` and ``v`` are
        adjacent (symmetric).
    direction : DataFrame
        ``direction.loc[u, v]``: among those, the fraction with ``u -> v`` (0.5 if never adjacent).
    arc_strength : DataFrame
        ``strength * direction``: the fraction of networks holding the arc ``u -> v``,
        comparable with an arc posterior.
    threshold : float
        The significance threshold of the strengths (Scutari & Nagarajan 2013).
    graph_prior : str
        Says that there is none: these are bootstrap frequencies.
    n_boot : int
    """

    def __init__(self, names, counts, adjacent, n_boot, method, max_parents):
        self.names = list(names)
        self.n_boot = n_boot
        self.method = method
        self.max_parents = max_parents
        idx = pd.Index(self.names, name="parent")
        cols = pd.Index(self.names, name="child")
        strength = adjacent / n_boot
        with np.errstate(invalid="ignore", divide="ignore"):
            direction = np.where(adjacent > 0, counts / np.maximum(adjacent, 1), 0.5)
        np.fill_diagonal(direction, 0.0)
        self.strength = pd.DataFrame(strength, index=idx, columns=cols)
        self.direction = pd.DataFrame(direction, index=idx, columns=cols)
        self.arc_strength = pd.DataFrame(counts / n_boot, index=idx, columns=cols)
        iu = np.triu_indices(len(self.names), 1)
        self.threshold = inclusion_threshold(strength[iu]) if iu[0].size else 1.0
        self.graph_prior = (f"none: nonparametric bootstrap frequencies of {method} searches "
                            f"({n_boot} resamples), not posteriors")

    def significant(self) -> list[tuple[str, str]]:
        """Arcs ``(u, v)`` whose pair's strength exceeds the threshold, oriented as most
        resamples orient them (both ways when the direction is exactly 0.5)."""
        s, d = self.strength.to_numpy(), self.direction.to_numpy()
        p = len(self.names)
        return [(self.names[u], self.names[v]) for u in range(p) for v in range(p)
                if u != v and s[u, v] > self.threshold and d[u, v] >= 0.5]

    def to_frame(self) -> pd.DataFrame:
        """bnlearn's layout: one row per ordered pair, ``from, to, strength, direction``."""
        p = len(self.names)
        u, v = np.nonzero(~np.eye(p, dtype=bool))
        return pd.DataFrame({"from": [self.names[i] for i in u], "to": [self.names[j] for j in v],
                             "strength": self.strength.to_numpy()[u, v],
                             "direction": self.direction.to_numpy()[u, v]})

    def __repr__(self) -> str:
        return (f"BootstrapArcs({len(self.names)} nodes, {self.n_boot} resamples of {self.method}, threshold "
                f"{self.threshold:.3f}, {len(self.significant())} significant arcs)")


def bootstrap_arcs(data: DiscreteData | pd.DataFrame, n_boot: int = 200,
                   random_state: int | np.random.Generator | None = None, method: str = "hc",
                   max_parents: int | None = None, prior: str = "K2", ess: float = 1.0) -> BootstrapArcs:
    """Nonparametric bootstrap arc strength and direction (Friedman, Goldszmidt & Wyner 1999).

    Learns a network by greedy search on each of ``n_boot`` resamples of the rows (drawn
    with replacement, the states of every variable kept) and reports how often each pair is
    adjacent and in which direction, with the significance threshold of Scutari & Nagarajan
    (2013), as bnlearn's ``boot.strength`` and ``averaged.network`` do.

    Parameters
    ----------
    data : DataFrame or DiscreteData
        Complete discrete data.
    n_boot : int
        Number of resamples.
    random_state : int, None or numpy Generator
        Seeds the resamples.
    method : {"hc", "gtt"}
        :func:`bnexplore.search.hill_climb` or :func:`bnexplore.search.greedy_thick_thin`.
    max_parents : int, optional
        Largest number of parents in the searches (None: unbounded).
    prior : {"K2", "BDeu"}, default "K2"
        Parameter prior of the searches' scores (as :class:`bnexplore.scores.LocalScore`).
    ess : float, default 1.0
        Equivalent sample size of BDeu.

    Returns
    -------
    BootstrapArcs
        ``.strength``, ``.direction``, ``.arc_strength``, ``.threshold``, ``.significant()``.

    References
    ----------
    N. Friedman, M. Goldszmidt and A. Wyner, "Data analysis with Bayesian networks: a
    bootstrap approach", UAI 1999.  M. Scutari and R. Nagarajan, "Identifying significant
    edges in graphical models of molecular networks", Artificial Intelligence in Medicine
    57, 2013.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(500, random_state=0)
    >>> boot = bx.averaging.bootstrap_arcs(df, n_boot=10, random_state=0, max_parents=2)
    >>> float(boot.strength.loc["either", "xray"])
    1.0
    """
    from . import search

    n_boot = check_int(n_boot, "n_boot", low=1)
    if method not in ("hc", "gtt"):
        raise ValueError(f"method must be 'hc' (hill climbing) or 'gtt' (greedy thick thinning), got {method!r}")
    if max_parents is not None:
        max_parents = check_int(max_parents, "max_parents", low=0)
    _check_prior(prior, ess)
    rng = check_random_state(random_state, "random_state")
    data = as_discrete(data)
    if data.missing is not None and data.missing.any():
        raise ValueError("bootstrap_arcs needs complete data: drop or impute the missing values first")
    n, p = data.codes.shape
    if n < 2:
        raise ValueError(f"bootstrap_arcs needs at least 2 rows, got {n}")
    learn = search.hill_climb if method == "hc" else search.greedy_thick_thin
    index = {name: i for i, name in enumerate(data.names)}
    counts = np.zeros((p, p))
    for _ in range(n_boot):
        sample = data.take(rng.integers(0, n, n))
        dag = learn(sample, prior=prior, ess=ess, max_parents=max_parents).dag
        for u, v in dag.edges():
            counts[index[u], index[v]] += 1
    return BootstrapArcs(data.names, counts, counts + counts.T, n_boot, method, max_parents)


def arc_table(data: DiscreteData | pd.DataFrame, max_parents: int = 2, n_boot: int = 200,
              random_state: int | np.random.Generator | None = 0, order=None, prior: str = "K2",
              ess: float = 1.0, method: str = "hc", n_iter: int = 50_000) -> pd.DataFrame:
    """One table of every arc ``u -> v`` with a column per method, each labelled with its
    prior over structures.

    Columns: the fixed order (:class:`OrderedAveraging` over ``order``, default the
    columns' order: uniform over the DAGs consistent with it), all orders
    (:class:`AllOrders`: order-modular), all DAGs (:class:`AllDAGs`: uniform over DAGs;
    by :func:`partition_mcmc` with its standard error when the exact tables do not fit
    the budget), and the bootstrap's ``arc_strength`` (no prior) with its pair strength.
    All orders is left out (NaN, and said in the column name) when it does not fit either.

    Parameters
    ----------
    data : DataFrame or DiscreteData
        Complete discrete data.
    max_parents : int
        Largest number of parents, of every method.
    n_boot, method : int, {"hc", "gtt"}
        Resamples and search of :func:`bootstrap_arcs`.
    random_state : int, None or numpy Generator
        Seeds the bootstrap (and partition MCMC when it runs).
    order : sequence of str, optional
        The fixed order (default: the columns' order).
    prior : {"K2", "BDeu"}, default "K2"
        Parameter prior of every method's scores (as :class:`bnexplore.scores.LocalScore`).
    ess : float, default 1.0
        Equivalent sample size of BDeu.
    n_iter : int
        Iterations per chain of :func:`partition_mcmc`, when the exact tables over all
        DAGs do not fit the budget.

    Returns
    -------
    DataFrame
        Columns ``parent``, ``child`` and one per method.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(300, random_state=0)
    >>> t = bx.averaging.arc_table(df, max_parents=2, n_boot=5)
    >>> [c.split(":")[0] for c in t.columns[2:]]
    ['fixed order', 'all orders', 'all DAGs', 'bootstrap arc', 'bootstrap pair']
    """
    from ._all_dags import AllDAGs
    from ._all_orders import AllOrders
    from ._partition_mcmc import partition_mcmc
    from .averaging import OrderedAveraging
    from .data.core import MemoryBudgetError

    data = as_discrete(data)
    names = list(data.names)
    p = len(names)
    u, v = np.nonzero(~np.eye(p, dtype=bool))
    out = pd.DataFrame({"parent": [names[i] for i in u], "child": [names[j] for j in v]})

    def put(label, frame):
        out[label] = frame.loc[names, names].to_numpy()[u, v]

    fixed = OrderedAveraging(data, order=order, max_parents=max_parents, prior=prior, ess=ess)
    put("fixed order: uniform over the DAGs consistent with the order", fixed.arc_posteriors())
    try:
        put("all orders: order-modular", AllOrders(data, max_parents=max_parents, prior=prior, ess=ess).arc_posteriors())
    except MemoryBudgetError:
        out["all orders: order-modular (too large for the exact DP: not computed)"] = np.nan
    try:
        ad = AllDAGs(data, max_parents=max_parents, prior=prior, ess=ess)
        put(f"all DAGs: {ad.graph_prior} (exact)", ad.arc_posteriors())
    except MemoryBudgetError:
        res = partition_mcmc(data, max_parents=max_parents, n_iter=n_iter, random_state=random_state, prior=prior,
                             ess=ess)
        put(f"all DAGs: {res.graph_prior} (partition MCMC, {res.convergence.split(':')[0]})", res.arc_posteriors())
        put("all DAGs: standard error", res.stderr)
    boot = bootstrap_arcs(data, n_boot=n_boot, random_state=random_state, method=method, max_parents=max_parents,
                          prior=prior, ess=ess)
    put(f"bootstrap arc: {boot.graph_prior}", boot.arc_strength)
    put(f"bootstrap pair: strength, significant above {boot.threshold:.3f}", boot.strength)
    return out
