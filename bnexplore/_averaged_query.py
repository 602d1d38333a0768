"""Queries under the model average: ``P(q | e, D)`` over a weighted set of networks.

Bayesian model averaging answers a query ``q`` given evidence ``e`` with the
posterior-weighted joint, not with the mean of the networks' conditionals:

    P(q | e, D) = sum_G P(G | D) P(q, e | G, D) / sum_G P(G | D) P(e | G, D)      (BMA)
                = sum_G P(G | e, D) P(q | e, G, D),
    P(G | e, D) = P(G | D) P(e | G, D) / sum_G' P(G' | D) P(e | G', D),

so evidence re-weights the structures: one that makes ``e`` unlikely loses weight.
``P(x | G, D)`` is the network with the posterior-mean parameters of its Dirichlet
prior (Eq. 3 of Dash & Cooper), so ``P(q, e | G, D)`` is a query of that network.

Over the DAGs consistent with one order with at most ``k`` parents, the posterior
factorises over the nodes, and the summary network M* (Dash & Cooper, Theorem 2)
has the joint ``sum_G P(G | D) P(x | G, D)`` exactly; one query of M* is therefore
the average over every DAG of the class.  Over sampled DAGs (order MCMC), the draws
stand for ``P(G | D)`` with equal weights.

The *spread* over the structures is that of ``P(q | e, G, D)`` under ``P(G | e, D)``:
its standard deviation and its 5% and 95% weighted quantiles.

Glossary
--------
GTT
    Greedy thick-thin search (Heckerman 1995): the single best network.
BMA
    Bayesian model averaging.
M*
    The summary network of order averaging (Dash & Cooper 2003).

References
----------
D. Dash and G. F. Cooper, "Model averaging with discrete Bayesian network
classifiers", AISTATS 2003.  J. A. Hoeting, D. Madigan, A. E. Raftery and C. T.
Volinsky, "Bayesian model averaging: a tutorial", Statistical Science 14 (1999).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Mapping, Sequence

import networkx as nx
import numpy as np
import pandas as pd

from ._validation import check_int, check_random_state

__all__ = ["AveragedPosteriors", "averaged_posteriors", "AveragedModel", "ask_averaged_model", "greedy_order"]


@dataclass
class AveragedPosteriors:
    """Every node's posterior marginal under the model average, with its spread.

    Attributes
    ----------
    mean : dict of str -> ndarray
        ``P(X_v | e, D)`` under the average (states in ``states[v]`` order).
    sd, low, high : dict of str -> ndarray
        Standard deviation and 5% / 95% quantiles of ``P(X_v | e, G, D)`` over the
        structures weighted by ``P(G | e, D)`` (all zero for one structure).
    structure_weights : ndarray
        ``P(G | e, D)`` of every model given (the evidence re-weights them).
    log_evidence : float
        ``log sum_G P(G | D) P(e | G, D)``.
    mean_of_conditionals : dict of str -> ndarray
        ``sum_G P(G | D) P(X_v | e, G, D)`` over the models under which the evidence is
        possible: what averaging is *not* (the structures keep their weights whatever
        the evidence); for teaching the difference. Equal to ``mean`` without evidence.
    """

    mean: dict
    sd: dict
    low: dict
    high: dict
    structure_weights: np.ndarray
    log_evidence: float
    mean_of_conditionals: dict = field(default_factory=dict)


def _weighted_quantile(x: np.ndarray, w: np.ndarray, qs: Sequence[float]) -> np.ndarray:
    """Quantiles ``qs`` of the rows of ``x`` (models, k) under weights ``w`` (sum 1)."""
    order = np.argsort(x, axis=0, kind="stable")
    xs = np.take_along_axis(x, order, axis=0)
    cw = np.cumsum(w[order], axis=0)
    out = np.empty((len(qs), x.shape[1]))
    for i, q in enumerate(qs):
        idx = (cw < q - 1e-12).sum(axis=0)
        out[i] = xs[np.minimum(idx, x.shape[0] - 1), np.arange(x.shape[1])]
    return out


def averaged_posteriors(models: Sequence, weights: Sequence[float] | np.ndarray | None,
                        evidence: Mapping[str, Hashable] | None = None) -> AveragedPosteriors:
    """Posterior marginals of every node under a weighted set of networks (BMA).

    ``P(q | e, D) = sum_G w_G P(q, e | G) / sum_G w_G P(e | G)``: each network is queried
    exactly (:meth:`~bnexplore.networks.BayesNet.posteriors`) and the networks are
    re-weighted by how well they predict the evidence, which is *not* the mean of
    their conditionals ``sum_G w_G P(q | e, G)`` once evidence is set.

    Parameters
    ----------
    models : sequence of BayesNet
        Networks over the same nodes and states (e.g. DAGs sampled by order MCMC with
        their parameters fitted from the data).
    weights : sequence of float, optional
        ``P(G | D)`` up to a constant (non-negative, not all zero); default equal
        weights (samples from the posterior).
    evidence : dict, optional
        ``{node: state label}``; ``None`` values are no evidence.

    Returns
    -------
    AveragedPosteriors

    Raises
    ------
    ValueError
        Models over different nodes or states, bad weights, unknown node or state;
        :class:`~bnexplore.networks.ImpossibleEvidenceError` when every network gives
        the evidence probability zero.

    Examples
    --------
    >>> import numpy as np, bnexplore as bx
    >>> from bnexplore.networks import BayesNet
    >>> st = {"a": ["0", "1"], "b": ["0", "1"]}
    >>> g1 = BayesNet({"a": [], "b": ["a"]}, st, {"a": np.array([[.5, .5]]), "b": np.array([[.9, .1], [.1, .9]])})
    >>> g0 = BayesNet({"a": [], "b": []}, st, {"a": np.array([[.5, .5]]), "b": np.array([[.9, .1]])})
    >>> avg = bx.averaging.averaged_posteriors([g1, g0], [0.5, 0.5], {"b": "1"})
    >>> avg.structure_weights.round(2).tolist(), avg.mean["a"].round(3).tolist()
    ([0.83, 0.17], [0.167, 0.833])
    """
    from .networks import BayesNet, ImpossibleEvidenceError

    models = list(models)
    if not models:
        raise ValueError("averaged_posteriors needs at least one model")
    for m in models:
        if not isinstance(m, BayesNet):
            raise TypeError(f"models must be BayesNet objects, got {type(m).__name__}")
    first = models[0]
    for i, m in enumerate(models[1:], 1):
        if m.states != first.states:
            raise ValueError(f"model {i} has other nodes or states than model 0: every model must be "
                             f"over the same variables with the same states")
    if weights is None:
        w = np.ones(len(models))
    else:
        w = np.asarray(weights, dtype=float).ravel()
        if w.shape != (len(models),):
            raise ValueError(f"weights has {w.size} entries for {len(models)} models")
        if not np.all(np.isfinite(w)) or w.min() < 0 or w.sum() <= 0:
            raise ValueError("weights must be finite, non-negative and not all zero")
    log_w = np.log(w / w.sum(), where=w > 0, out=np.full(len(w), -np.inf))
    posts, log_pe = [], np.full(len(models), -np.inf)
    for i, m in enumerate(models):
        if w[i] == 0:
            posts.append(None)
            continue
        post, lp = m._infer(evidence)
        posts.append(post)
        log_pe[i] = lp
    joint = log_w + log_pe  # log P(G | D) P(e | G, D)
    top = joint.max()
    if not np.isfinite(top):
        raise ImpossibleEvidenceError(
            f"the evidence {dict(evidence or {})} has probability zero under every model: no posterior "
            f"exists; clear one of the observations")
    post_w = np.exp(joint - top)
    log_evidence = float(top + np.log(post_w.sum()))
    post_w /= post_w.sum()
    used = np.flatnonzero(post_w > 0)
    wu = post_w[used]
    prior_w = w[used] / w[used].sum()  # P(G | D) alone, for the mean of the conditionals
    mean, sd, low, high, naive = {}, {}, {}, {}, {}
    for v in first.states:
        x = np.stack([posts[i][v] for i in used])  # (models, states)
        mu = wu @ x
        mean[v] = mu
        sd[v] = np.sqrt(np.maximum(wu @ (x - mu) ** 2, 0.0))
        low[v], high[v] = _weighted_quantile(x, wu, (0.05, 0.95))
        naive[v] = prior_w @ x
    return AveragedPosteriors(mean, sd, low, high, post_w, log_evidence, naive)


def _distinct(dags: Sequence[nx.DiGraph]) -> tuple[list[nx.DiGraph], np.ndarray]:
    """The distinct DAGs of ``dags`` (first occurrence order) and how often each occurs."""
    seen: dict = {}
    out, counts = [], []
    for g in dags:
        key = frozenset(g.edges)
        if key not in seen:
            seen[key] = len(out)
            out.append(g)
            counts.append(0)
        counts[seen[key]] += 1
    return out, np.asarray(counts, dtype=float)


@dataclass
class AveragedModel:
    """The single best network (GTT) and a model average learnt from one data set.

    Build it with :func:`ask_averaged_model`; query it with :meth:`posteriors` as often
    as the evidence changes (every network keeps its compiled junction tree).

    Attributes
    ----------
    best : BayesNet
        The greedy thick-thin network with posterior-mean parameters.
    method : {"order", "mcmc"}
    averaged : BayesNet or None
        With ``method="order"``: the summary network M* over the order, whose queries
        are the exact average over every DAG consistent with it.
    models, weights : list of BayesNet, ndarray
        The distinct sampled structures with their parameters, and how often each was
        drawn (their spread is what :meth:`posteriors` reports).
    order : list of str
        The order averaged over (``"order"``: GTT's topological order unless given).
    graph_prior : str
        The prior over structures of the average, stated.
    converged : bool or None
        With ``"mcmc"``: whether every arc's split R-hat is below 1.05; ``None`` with
        ``"order"``, whose structures are independent exact draws (nothing to converge).
    """

    best: object
    method: str
    averaged: object
    models: list
    weights: np.ndarray
    order: list
    graph_prior: str
    converged: bool | None = None
    extra: dict = field(default_factory=dict, repr=False)

    def posteriors(self, evidence: Mapping[str, Hashable] | None = None) -> pd.DataFrame:
        """Every node's marginal under the best network and under the average.

        Returns
        -------
        DataFrame
            One row per (node, state), in the nodes' and states' order, with columns
            ``node``, ``state``, ``best`` (GTT), ``averaged`` (BMA), ``sd``, ``low``,
            ``high`` (the spread over the sampled structures), ``mean_of_conditionals``
            (the sampled structures' conditionals averaged with their weights given
            the data alone: what BMA is not) and ``observed``.
            ``best`` is NaN for every row when the evidence is impossible under the
            best network (but not under the average).

        Raises
        ------
        ImpossibleEvidenceError
            When the evidence has probability zero under the average.
        """
        from .networks import ImpossibleEvidenceError

        spread = averaged_posteriors(self.models, self.weights, evidence)
        mean = spread.mean
        if self.averaged is not None:
            post, lp = self.averaged._infer(evidence)
            if lp == -np.inf:
                raise ImpossibleEvidenceError(f"the evidence {dict(evidence or {})} has probability zero "
                                              f"under the model average; clear one of the observations")
            mean = post
        best, lp_best = self.best._infer(evidence)
        observed = {k for k, s in (evidence or {}).items() if s is not None}
        rows = []
        for v, states in self.best.states.items():
            for j, s in enumerate(states):
                rows.append((v, s, best[v][j] if lp_best > -np.inf else np.nan, mean[v][j], spread.sd[v][j],
                             spread.low[v][j], spread.high[v][j], spread.mean_of_conditionals[v][j], v in observed))
        return pd.DataFrame(rows, columns=["node", "state", "best", "averaged", "sd", "low", "high",
                                           "mean_of_conditionals", "observed"])


def greedy_order(data, max_parents: int | None = None, prior: str = "K2", ess: float = 1.0) -> list[str]:
    """The order Dash & Cooper average over: a topological sort of the greedy thick-thin
    network (their heuristic 3), ties broken by the data's column order.

    Parameters
    ----------
    data : DataFrame or DiscreteData
        Discrete data; rows with missing values are dropped (with a warning).
    max_parents : int, optional
        Largest parent set of the search (None: unbounded).
    prior : {"K2", "BDeu"}, default "K2"
        Parameter prior of the search's scores (as :class:`bnexplore.scores.LocalScore`).
    ess : float, default 1.0
        Equivalent sample size of BDeu.

    Examples
    --------
    >>> import bnexplore as bx
    >>> order = bx.averaging.greedy_order(bx.networks.load("asia").sample(500, random_state=0), max_parents=2)
    >>> len(order), sorted(order) == sorted(bx.networks.load("asia").nodes)
    (8, True)
    """
    from .data.core import as_discrete
    from .search import greedy_thick_thin

    d = as_discrete(data, missing="drop")
    return _topological(greedy_thick_thin(d, prior=prior, ess=ess, max_parents=max_parents).dag, d.names)


def _topological(dag: nx.DiGraph, names: Sequence[str]) -> list[str]:
    position = {v: i for i, v in enumerate(names)}
    return list(nx.lexicographical_topological_sort(dag, key=position.__getitem__))


def ask_averaged_model(data, max_parents: int = 2, method: str = "order", random_state=None,
                       n_structures: int = 100, n_iter: int = 20_000, prior: str = "K2", ess: float = 1.0,
                       order: Sequence[str] | None = None, n: int | None | str = "auto",
                       missing: str = "drop") -> AveragedModel:
    """Learn the single best network (GTT) and a model average, ready for queries.

    * ``method="order"``: exact averaging over every DAG consistent with one order
      with at most ``max_parents`` parents (uniform prior over that class): the summary
      network M* with the full parent sets (Eq. 14-15 of Dash & Cooper) answers the
      averaged queries (on many variables, AMA's truncated M*: see ``n``);
      ``n_structures`` DAGs drawn from the order's posterior give the spread.
    * ``method="mcmc"``: order MCMC (Friedman & Koller 2003; order-modular prior),
      one DAG drawn per recorded order; the averaged queries and the spread are over
      the distinct drawn DAGs weighted by how often they were drawn.

    Parameters
    ----------
    data : DataFrame or DiscreteData
        Discrete data; rows with missing values are dropped (with a warning) unless
        ``missing="raise"``.
    max_parents : int
        Largest parent set, of GTT and of the average.
    method : {"order", "mcmc"}
    random_state : None, int or numpy.random.Generator
        Draws of the structures (and the MCMC chains).
    n_structures : int
        ``"order"``: DAGs drawn for the spread; ``"mcmc"``: at most this many of the
        chains' draws, evenly spaced, are kept (each query costs one inference per
        distinct DAG).
    n_iter : int
        ``"mcmc"``: iterations of each of the 4 chains.
    prior : {"K2", "BDeu"}, default "K2"
        The Dirichlet parameter prior of the scores and of the fitted parameters (as
        :class:`bnexplore.scores.LocalScore`).
    ess : float, default 1.0
        Equivalent sample size of BDeu.
    order : sequence of str, optional
        ``"order"``: the order averaged over (default: GTT's topological order).
    n : int, None or "auto"
        ``"order"``: parents of each node in M* (as in
        :meth:`OrderedAveraging.summary_network`): ``None`` is the exact average,
        an integer the approximate one (AMA, Procedure 1); ``"auto"`` is exact when
        M* fits the table budget and its junction tree fits, otherwise the largest ``n``
        that does with junction-tree cliques small enough for interactive queries
        (``extra["exact"]`` and :attr:`AveragedModel.graph_prior` say which).
    missing : {"drop", "raise"}

    Returns
    -------
    AveragedModel

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(500, random_state=0)
    >>> am = bx.averaging.ask_averaged_model(df, max_parents=2, random_state=0, n_structures=20)
    >>> table = am.posteriors({"smoke": "yes"})
    >>> list(table.columns)
    ['node', 'state', 'best', 'averaged', 'sd', 'low', 'high', 'mean_of_conditionals', 'observed']
    >>> bool(abs(table.groupby("node")["averaged"].sum() - 1).max() < 1e-9)
    True
    """
    from .averaging import OrderedAveraging, order_mcmc
    from .data.core import as_discrete
    from .networks import BayesNet
    from .search import greedy_thick_thin
    from .scores import _check_prior

    max_parents = check_int(max_parents, "max_parents", low=0)
    if not (n is None or n == "auto" or isinstance(n, (int, np.integer))) or isinstance(n, bool):
        raise ValueError(f"n must be None, 'auto' or a non-negative int, got {n!r}")
    if method not in ("order", "mcmc"):
        raise ValueError(f"method must be 'order' or 'mcmc', got {method!r}")
    if missing not in ("drop", "raise"):
        raise ValueError(f"missing must be 'drop' or 'raise', got {missing!r}")
    n_structures = check_int(n_structures, "n_structures", low=1)
    n_iter = check_int(n_iter, "n_iter", low=1)
    _check_prior(prior, ess)
    rng = check_random_state(random_state, "random_state")
    d = as_discrete(data, missing=missing)
    gtt = greedy_thick_thin(d, prior=prior, ess=ess, max_parents=max_parents)
    best = BayesNet.fit(gtt.dag, d, prior=prior, ess=ess, name="GTT")
    if method == "order":
        if order is None:
            order = _topological(gtt.dag, d.names)
        avg = OrderedAveraging(d, order=list(order), max_parents=max_parents, prior=prior, ess=ess)
        n_star = _summary_size(avg, n)
        exact = n_star is None
        label = "M* (exact average over the order)" if exact else f"M* (AMA, n={n_star})"
        mstar = avg.summary_network(n_star, lazy=False, name=label)
        dags, counts = _distinct(avg.sample_dags(n_structures, random_state=rng))
        models = [BayesNet.fit(g, d, prior=prior, ess=ess) for g in dags]
        stated = (f"uniform over the DAGs consistent with the order with at most {max_parents} parents"
                  + ("" if exact else f"; averaged queries by AMA: parent sets inside each node's {n_star} "
                                      f"most probable parents (Procedure 1)"))
        return _warm(AveragedModel(best, method, mstar, models, counts, list(order), graph_prior=stated,
                                   extra={"search": gtt, "averaging": avg, "n": n_star, "exact": exact}))
    res = order_mcmc(d, max_parents=max_parents, n_iter=n_iter, n_chains=4, random_state=rng, prior=prior, ess=ess,
                     sample_dags=True)
    draws = res.dags()
    if len(draws) > n_structures:  # evenly spaced draws: still a sample of the posterior
        draws = [draws[i] for i in np.linspace(0, len(draws) - 1, n_structures).round().astype(int)]
    dags, counts = _distinct(draws)
    models = [BayesNet.fit(g, d, prior=prior, ess=ess) for g in dags]
    return _warm(AveragedModel(best, method, None, models, counts, list(d.names),
                               graph_prior="order-modular (uniform over orders, uniform over each order's DAGs)",
                               converged=res.converged(), extra={"search": gtt, "mcmc": res}))


def _warm(model: AveragedModel) -> AveragedModel:
    """Compile every network's junction tree now, so that the first query is as quick
    as the others."""
    for net in [model.best, model.averaged, *model.models]:
        if net is not None:
            net._infer(None)
    return model


#: summary-network sizes tried by ``n="auto"``, largest first (None: every candidate, exact)
_AUTO_SIZES = (None, 10, 8, 6, 5, 4, 3, 2, 1, 0)
#: largest clique table ``n="auto"`` accepts: a query then takes milliseconds
_AUTO_CLIQUE_CELLS = 1 << 17


def _summary_size(avg, n):
    """``n`` of the summary network: as given, or with ``"auto"`` the largest of
    :data:`_AUTO_SIZES` whose dense CPTs fit the table budget and whose junction tree
    has no clique table over :data:`_AUTO_CLIQUE_CELLS` cells (interactive queries)."""
    import math

    from .data.core import get_table_budget
    from .networks._inference import largest_clique_cells

    if n != "auto":
        return None if n is None else check_int(n, "n", low=0)
    names = avg.names
    index = {v: i for i, v in enumerate(names)}
    arity = [len(s) for s in avg.data.states]
    budget = get_table_budget()
    for size in _AUTO_SIZES:
        parents = avg.summary_parents(size)
        cells = sum(math.prod(arity[index[p]] for p in ps) * arity[index[v]] for v, ps in parents.items())
        if cells > budget:
            continue
        if largest_clique_cells([[index[p] for p in parents[v]] for v in names], arity) <= _AUTO_CLIQUE_CELLS:
            return size
    return 0
