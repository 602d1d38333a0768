"""Dash & Cooper's classifiers: naive model averaging, greedy thick-thin and AMA.

* :class:`NaiveAveraging` (NMA; Dash & Cooper 2002): exact model averaging over all
  2^N selective naive structures (the class may or may not be a parent of each
  feature), computed as order averaging with levels ``[[class], features]`` and
  ``k = 1``.
* :class:`GreedyThickThin` (GTT): a single network found by greedy thick-thin search
  over all DAGs (arc additions, then removals), with the standard parameters.
* :class:`AMA`: approximate model averaging over ``L_k^n(pi | D)``: the summary
  network :math:`M^*` of Theorem 2 truncated by Procedure 1 to ``n`` parents, with
  ``pi`` a topological sort of the GTT graph (the paper's choice), a random order,
  two opposite random orders (predictions averaged) or an explicit order.

The single naive network (SNN) is :class:`bnexplore.classifiers.NaiveBayes`.
"""
from __future__ import annotations

import collections.abc
import itertools
import math

import networkx as nx
import numpy as np
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._deprecation import DEPRECATED, deprecated_param
from .._lazy_mixture import LazyCPT
from .._validation import ESS, Interval, Options, Prior, RandomState, check_int, check_random_state
from ..averaging import OrderedAveraging
from ..data.core import DiscreteData
from ..networks import BayesNet
from ..scores import family_counts, standard_parameters
from ..search import SearchResult, greedy_thick_thin
from ._base import ArrayLike, DiscreteClassifier, MatrixLike, normalize_log
from ._missing import MAX_CELLS, cpt_log_joint, enumerate_log_joint, relevant_missing

__all__ = ["NaiveAveraging", "GreedyThickThin", "AMA", "CLASS"]

#: the name of the class variable inside an explicit AMA order
CLASS = DiscreteClassifier.class_column


class _LazyFactor:
    """A lazy M* CPT (:class:`~bnexplore._lazy_mixture.LazyCPT`) as a factor of
    :func:`cpt_log_joint`: its log values are read only at the configurations the
    rows meet (observed parents fixed, the ``keep`` variables at every state)."""

    def __init__(self, table: LazyCPT, vars_: tuple[int, ...], arities: list[int]):
        self.table = table
        self.vars = vars_
        self.arities = arities

    def gather(self, vars_, codes: np.ndarray, keep) -> np.ndarray:
        m = codes.shape[0]
        keep = list(keep)
        shape = tuple(self.arities[v] for v in keep)
        K = math.prod(shape)                             # 1 (the empty product) without keep
        if m * K > MAX_CELLS:                            # before enumerating anything
            raise MemoryError(f"summing out {len(keep)} variables reads {m * K:,} rows of the M* CPT of "
                              f"{self.table.name!r} (limit {MAX_CELLS:,}): impute some of the missing "
                              f"values of these rows")
        combos = np.array(list(itertools.product(*[range(a) for a in shape])), dtype=np.int64)
        combos = combos.reshape(K, len(keep))
        full = np.empty((m, K, len(self.vars)), dtype=np.int64)
        for i, u in enumerate(self.vars):
            full[:, :, i] = combos[None, :, keep.index(u)] if u in keep else codes[:, u][:, None]
        flat = full.reshape(m * K, len(self.vars))
        logs = self.table.rows(flat[:, 1:])                         # (m K, r), logs
        vals = logs[np.arange(m * K), flat[:, 0]]
        return vals.reshape((m,) + shape)

    def child_logs(self, codes: np.ndarray) -> np.ndarray:
        """``log P(child | parents)`` at the rows' parent codes, (m, states of the child)."""
        return self.table.rows(codes[:, list(self.vars[1:])])


def _network_factors(net: BayesNet, data: DiscreteData) -> list:
    """The CPTs of ``net`` as (variables, log table) factors, child first, in ``data``'s
    column indices (for :func:`cpt_log_joint`); lazy CPTs stay lazy."""
    factors = []
    arities = [int(a) for a in data.arities]
    for v in net.nodes:
        ps = net.parents(v)
        if isinstance(net.cpts[v], LazyCPT):
            vars_ = (data.index(v),) + tuple(data.index(p) for p in ps)
            factors.append((vars_, _LazyFactor(np.log(net.cpts[v]), vars_, arities)))
            continue
        lt = net._log_cpt(v)                     # cached inside the network
        t = lt.reshape(tuple(len(net.states[p]) for p in ps) + (lt.shape[1],))
        factors.append(((data.index(v),) + tuple(data.index(p) for p in ps),
                        np.moveaxis(t, -1, 0)))
    return factors


def _network_log_joint(net: BayesNet, data: DiscreteData, codes: np.ndarray,
                       who: str = "this classifier") -> np.ndarray:
    """``log P(x_observed, c)`` (n, n_classes) in ``net``, missing features (-1) summed out
    (estimated, with a warning, for rows too costly to sum exactly: :func:`cpt_log_joint`)."""
    return cpt_log_joint(_network_factors(net, data), codes,
                         [int(a) for a in data.arities], int(data.arities[-1]), who=who)


def _averaging_log_joint(avg: OrderedAveraging, codes: np.ndarray, who: str) -> np.ndarray:
    """Exact model-averaged ``log P(x_observed, c | D)`` (Eq. 13) with missing features
    (-1) summed out.

    Every factor of Eq. 13 is a mixture of conditionals of its node, so a missing feature
    that no observed feature nor the class may descend from drops (its factor sums to
    one).  Rows whose missing features all drop are computed together from one pass over
    the nodes; the missing features of the other rows are enumerated.
    """
    n, p = codes.shape
    K = int(avg.data.arities[-1])
    cand = [avg.candidates[v].tolist() if avg.max_parents > 0 else [] for v in range(p + 1)]

    def node_logs(comp: np.ndarray) -> np.ndarray:
        m = comp.shape[0]
        test = np.empty((K, p + 1, m), dtype=np.int64)
        test[:, :p, :] = comp.T[None]
        test[:, p, :] = np.arange(K)[:, None]
        with np.errstate(divide="ignore"):
            return np.stack([np.log(avg._node_mixture(v, test)).T for v in range(p + 1)])

    def joint(comp: np.ndarray, drop) -> np.ndarray:
        L = node_logs(comp)                                        # (p + 1, m, K)
        keep = np.ones(p + 1, dtype=bool)
        keep[list(drop)] = False
        return L[keep].sum(axis=0)

    miss = codes < 0
    rel_rows = np.zeros(n, dtype=bool)
    for i in np.flatnonzero(miss.any(axis=1)):
        m_idx = np.flatnonzero(miss[i]).tolist()
        rel_rows[i] = bool(relevant_missing(m_idx, cand, p, np.flatnonzero(~miss[i]).tolist()))
    out = np.empty((n, K))
    easy = ~rel_rows
    if easy.any():                 # complete rows, or every missing feature drops
        L = node_logs(np.where(miss[easy], 0, codes[easy]))
        keep = np.concatenate([~miss[easy], np.ones((int(easy.sum()), 1), dtype=bool)], axis=1)
        out[easy] = np.where(keep.T[:, :, None], L, 0.0).sum(axis=0)
    if rel_rows.any():
        out[rel_rows] = enumerate_log_joint(
            joint, codes[rel_rows], [int(a) for a in avg.data.arities], K,
            relevant=lambda m_idx, obs: relevant_missing(m_idx, cand, p, obs), who=who)
    return out


#: GTT with no in-degree given (GreedyThickThin's default, AMA's order="gtt") is
#: unrestricted on data with at most WIDE_FEATURES features and keeps at most
#: WIDE_MAX_PARENTS parents per node on wider data: the thick phase adds parents while
#: the K2 score improves, so its steps (each over every arc) grow with both; 400
#: binary features x 300 rows took over a minute unrestricted, about 4 s with 3.
WIDE_FEATURES = 60
WIDE_MAX_PARENTS = 3


def _structure_search(data: DiscreteData, prior: str, ess: float, max_parents: int | None = None,
                      missing: str = "keep", max_iter: int = 10, random_state=None) -> SearchResult:
    """Greedy thick-thin search; with missing values every move compared on the rows
    where the variables of its two families are observed (``missing="keep"``, see
    :mod:`bnexplore._available_case`) or structural EM (``"em"``).  ``max_parents``
    None: see :data:`WIDE_FEATURES`."""
    if max_parents is None and data.n_cols - 1 > WIDE_FEATURES:
        max_parents = WIDE_MAX_PARENTS
    return greedy_thick_thin(data, prior=prior, ess=ess, max_parents=max_parents, missing=missing,
                             max_iter=max_iter, random_state=random_state)



def _fit_network(dag: nx.DiGraph, data: DiscreteData, prior: str, ess: float,
                 cpts: dict | None = None) -> BayesNet:
    """Standard parameters of ``dag``; with missing values each family counted by
    available case (the rows where the node and its parents are observed), or the
    given ``cpts`` (structural EM's, parents in column order)."""
    if data.missing is None:
        return BayesNet.fit(dag, data, prior=prior, ess=ess)
    parents = {v: sorted((str(u) for u in dag.predecessors(v)), key=data.index) for v in data.names}
    if cpts is None:
        cpts = {v: standard_parameters(family_counts(data, v, ps), prior, ess) for v, ps in parents.items()}
    states = {v: list(data.states[data.index(v)]) for v in data.names}
    return BayesNet(parents, states, cpts)


class _SummaryNetworks(collections.abc.Sequence):
    """The summary networks M* of fitted averagings with at most ``n`` parents (none when
    ``n`` is None), a read-only sequence whose networks are built on first use (their
    CPTs, Eq. 15, cost far more than the rest of a fit).  Building them fills this object
    in place, so a prediction leaves the estimator's attributes as they were."""

    def __init__(self, averagings: list[OrderedAveraging], n: int | None):
        self._averagings = averagings
        self._n = n
        self._networks: list[BayesNet] | None = None

    def _built(self) -> list[BayesNet]:
        if self._networks is None:
            n = self._n
            self._networks = [] if n is None else [a.summary_network(n) for a in self._averagings]
        return self._networks

    def __len__(self) -> int:                         # known without building anything
        return 0 if self._n is None else len(self._averagings)

    def __getitem__(self, i):
        return self._built()[i]

    def __repr__(self) -> str:
        return repr(self._built())


class _BNClassifier(DiscreteClassifier):
    """Shared prediction: the joint of the fitted network(s) with missing features summed out."""


class NaiveAveraging(_BNClassifier):
    """Exact model averaging over all selective naive Bayes structures (NMA).

    Every feature either has the class as its only parent or no parent; the
    2^N structures are averaged exactly with a uniform structure prior, which
    amounts to mixing, per feature, ``P(f | c)`` and ``P(f)`` with the posterior
    probability of the arc ``class -> f``.

    Parameters
    ----------
    prior : {"K2", "BDeu"}, default "K2"
        Score and parameter prior (the library's default, as Dash & Cooper's NMA).
    ess : float, default 1.0
        Equivalent sample size of BDeu (K2 does not use it).
    handle_unknown : {"missing", "error"}, default "missing"
        A category never seen in training at predict time is summed out like a missing
        value ("missing") or raises a ``ValueError`` ("error").

    Attributes
    ----------
    averaging_ : OrderedAveraging
    arc_posteriors_ : ndarray (n_features,)
        ``P(class -> feature | D)``.

    Notes
    -----
    Missing values at fit: the two structures of a feature (with and without the arc
    from the class) are compared on the rows where that feature is observed; the
    parameters are counted by available case (see :class:`OrderedAveraging`).

    Examples
    --------
    >>> import bnexplore as bx
    >>> from bnexplore.classifiers import NaiveAveraging
    >>> df = bx.datasets.load("vote", missing="drop")
    >>> clf = NaiveAveraging().fit(df.drop(columns="Class"), df["Class"])
    >>> clf.score(df.drop(columns="Class"), df["Class"]) > 0.85
    True
    """

    _parameter_constraints = {"prior": Prior("K2", "BDeu"), "ess": ESS()}

    def __init__(self, prior: str = "K2", ess: float = 1.0, handle_unknown: str = "missing"):
        self.prior = prior
        self.ess = ess
        self.handle_unknown = handle_unknown

    def fit(self, X: MatrixLike, y: ArrayLike) -> "NaiveAveraging":
        data = self._fit_data(X, y)        # checks the parameters too
        feats = data.names[:-1]
        levels = [[self.class_column], feats] if feats else [[self.class_column]]
        self.averaging_ = OrderedAveraging(data, levels=levels, max_parents=1, prior=self.prior,
                                           ess=float(self.ess), missing="keep")
        # the class is the last column of data_, the features the first ones
        self.arc_posteriors_ = self.averaging_.arc_posteriors().to_numpy()[-1, :len(feats)]
        return self

    def _joint_log_proba(self, codes: np.ndarray) -> np.ndarray:
        # model-averaged P(x, c | D): a missing feature's factor sums to one and drops
        return _averaging_log_joint(self.averaging_, codes, type(self).__name__)


class GreedyThickThin(_BNClassifier):
    """A single network learned by greedy thick-thin search (GTT), standard parameters.

    Parameters
    ----------
    max_parents : int or None
        Largest number of parents.  None: unrestricted, as in the paper, on data with
        at most 60 features; on wider data at most 3 parents per node
        (:data:`WIDE_FEATURES`, :data:`WIDE_MAX_PARENTS`: unrestricted, the thick phase
        took over a minute on 400 binary features).
    prior : {"K2", "BDeu"}, default "K2"
        Score and parameter prior (the project's default, as in Dash & Cooper's GTT).
    ess : float, default 1.0
        Equivalent sample size of BDeu (K2 does not use it).
    handle_unknown : {"missing", "error"}, default "missing"
        A category never seen in training at predict time is summed out like a missing
        value ("missing") or raises a ``ValueError`` ("error").
    missing : {"keep", "em"}, default "keep"
        Missing values at fit: ``"keep"`` compares every move of the search on the rows
        where the variables of the families it changes are observed, and counts the
        parameters by available case; ``"em"`` runs structural EM (Friedman 1997),
        whose expected counts also give the parameters.
    max_iter : int, default 10
        Largest number of structural-EM iterations (``missing="em"``).
    random_state : None, int or numpy.random.Generator
        The E-step's draws (``missing="em"``).
    max_indegree : int or None
        Deprecated name of ``max_parents`` (removed in 0.3.0; warns in ``fit``).

    Attributes
    ----------
    search_ : bnexplore.search.SearchResult
    network_ : bnexplore.networks.BayesNet
    n_iter_ : int
        Structural-EM iterations run (1, the one search, without EM or without missing
        values).
    log_likelihood_ : float or None
        The observed-data log-likelihood of the fitted network, missing values summed
        out (set by structural EM; None otherwise).

    Notes
    -----
    Missing values at fit (see :mod:`bnexplore._available_case`): a missing value
    costs only the comparisons whose variables include its column, so data without a
    single complete row still gives a network.  Columns observed too rarely to be
    compared with the others are named in a ``UserWarning``.

    The search adds no arc that would give a node a CPT over the table budget
    (:func:`bnexplore.data.set_table_budget`), so the network found can always be
    fitted (many classes and many-state features keep smaller families).

    Examples
    --------
    >>> import bnexplore as bx
    >>> from bnexplore.classifiers import GreedyThickThin
    >>> df = bx.datasets.load("vote", missing="drop")
    >>> clf = GreedyThickThin().fit(df.drop(columns="Class"), df["Class"])
    >>> clf.score(df.drop(columns="Class"), df["Class"]) > 0.85
    True
    """

    _parameter_constraints = {"max_parents": Interval(int, 0, None, allow_none=True),
                              "prior": Prior("K2", "BDeu"), "ess": ESS(),
                              "missing": Options("keep", "em"), "max_iter": Interval(int, 1, None),
                              "random_state": RandomState()}

    def __init__(self, max_parents: int | None = None, prior: str = "K2", ess: float = 1.0,
                 handle_unknown: str = "missing", missing: str = "keep", max_iter: int = 10,
                 random_state=None, max_indegree=DEPRECATED):
        self.max_parents = max_parents
        self.prior = prior
        self.ess = ess
        self.handle_unknown = handle_unknown
        self.missing = missing
        self.max_iter = max_iter
        self.random_state = random_state
        self.max_indegree = max_indegree

    def fit(self, X: MatrixLike, y: ArrayLike) -> "GreedyThickThin":
        data = self._fit_data(X, y)        # checks the parameters too
        k = Interval(int, 0, None, allow_none=True)(
            deprecated_param(self, "max_indegree", "max_parents"), "max_parents")
        self.search_ = _structure_search(data, self.prior, float(self.ess), k, self.missing,
                                         int(self.max_iter), self.random_state)
        extra = self.search_.extra
        self.network_ = _fit_network(self.search_.dag, data, self.prior, float(self.ess), extra.get("cpts"))
        self.n_iter_ = int(extra.get("n_iter", 1))
        self.log_likelihood_ = extra.get("log_likelihood")
        return self

    def _joint_log_proba(self, codes: np.ndarray) -> np.ndarray:
        # the GTT network's joint, missing features eliminated (barren ones dropped)
        return _network_log_joint(self.network_, self.data_, codes, "GreedyThickThin")


class AMA(_BNClassifier):
    """Approximate model averaging (Dash & Cooper 2003): the summary network M*.

    Model averaging over the DAGs consistent with an order ``pi`` with at most
    ``max_parents`` parents per node, approximated by one network whose nodes keep
    at most ``n`` parents (Procedure 1); prediction is then single-network inference.

    Parameters
    ----------
    max_parents : int
        ``k``: largest parent set averaged over.
    n : int or None
        Largest number of parents in the summary network (>= 0; an ``n`` at least the
        number of features keeps every candidate parent, and any larger ``n`` means
        the same).  ``None`` predicts by exact model averaging over ``L_k(pi)``
        (Eq. 13) instead of a summary network.  CPTs of the summary network too
        large to build (many parents with many states) are lazy: only the rows that
        prediction meets are computed (see
        :meth:`~bnexplore.averaging.OrderedAveraging.summary_network`).
    order : "gtt", "random", "two-random" or list of names
        ``"gtt"``: a topological sort of the network found by greedy thick-thin search
        (the paper's choice; unrestricted in-degree up to 60 features, at most 3
        parents per node on wider data, as :class:`GreedyThickThin`'s default); ``"random"``: a random order; ``"two-random"``: two
        opposite random orders whose predictions are averaged; or an explicit list of
        the feature names, in which the class is :data:`CLASS` (``"__class__"``; it is
        put first when left out).
    prior : {"K2", "BDeu"}, default "K2"
        Score and parameter prior: K2, as Dash & Cooper (2004) use.
    ess : float, default 1.0
        Equivalent sample size of BDeu (K2 does not use it).
    random_state : None, int or numpy.random.Generator
        For the random orders. With ``None`` every fit draws new orders, so give an
        int for reproducible results.
    handle_unknown : {"missing", "error"}, default "missing"
        A category never seen in training at predict time is summed out like a missing
        value ("missing") or raises a ``ValueError`` ("error").
    seed : None, int or numpy.random.Generator
        Deprecated name of ``random_state`` (removed in 0.3.0; warns in ``fit``).

    Attributes
    ----------
    orders_ : list of list of str
        The order(s) used (the class appears as ``"__class__"``).
    averagings_ : list of OrderedAveraging
    networks_ : sequence of BayesNet
        The summary networks (empty when ``n`` is None), built on first use (the first
        prediction or access), not by ``fit``.
    order_search_ : SearchResult or None
        The GTT search behind ``order="gtt"``.

    Notes
    -----
    Missing values at fit: the GTT order is searched on the complete cases; the
    averaging weighs each family by its gain over the empty family on the rows where
    its node and parents are observed, and counts parameters by available case (see
    :class:`~bnexplore.averaging.OrderedAveraging`).

    Missing values at predict: they are summed out of the summary network exactly for
    every row whose sum fits ``bnexplore.classifiers._missing.MAX_CELLS`` cells (the
    cost is computed per row before anything is read); a row that needs more (say 11
    missing forty-state features among the parents of an observed one) gets a
    likelihood-weighting estimate, and an ``ApproximationWarning`` lists those rows.

    Examples
    --------
    >>> import bnexplore as bx
    >>> from bnexplore.classifiers import AMA
    >>> df = bx.datasets.load("vote", missing="drop")
    >>> X, y = df.drop(columns="Class"), df["Class"]
    >>> clf = AMA(max_parents=2, n=12).fit(X, y)
    >>> clf.predict_proba(X).shape
    (232, 2)
    """

    _parameter_constraints = {"max_parents": Interval(int, 0, None),
                              "n": Interval(int, 0, None, allow_none=True),
                              "prior": Prior("K2", "BDeu"), "ess": ESS(),
                              "random_state": RandomState()}

    def __init__(self, max_parents: int = 2, n: int | None = 12, order="gtt", prior: str = "K2",
                 ess: float = 1.0, random_state=None, handle_unknown: str = "missing",
                 seed=DEPRECATED):
        self.max_parents = max_parents
        self.n = n
        self.order = order
        self.prior = prior
        self.ess = ess
        self.random_state = random_state
        self.handle_unknown = handle_unknown
        self.seed = seed

    def _orders(self, data: DiscreteData, random_state=None) -> list[list[str]]:
        names = data.names
        order = self.order
        self.order_search_ = None
        if isinstance(order, str):
            if order == "gtt":
                res = _structure_search(data, self.prior, float(self.ess))
                self.order_search_ = res
                pos = {v: i for i, v in enumerate(names)}
                return [list(nx.lexicographical_topological_sort(res.dag, key=lambda v: pos[v]))]
            if order in ("random", "two-random"):
                rng = check_random_state(random_state, "random_state")
                perm = [names[i] for i in rng.permutation(len(names))]
                return [perm] if order == "random" else [perm, perm[::-1]]
            raise ValueError(f"order must be 'gtt', 'random', 'two-random' or a list of feature "
                             f"names, got {order!r}")
        try:
            given = [str(v) for v in order]
        except TypeError:
            raise TypeError(f"order must be 'gtt', 'random', 'two-random' or a list of feature names, "
                            f"got {type(order).__name__}") from None
        if self.class_column not in given:
            given = [self.class_column] + given
        if sorted(given) != sorted(names) or len(set(given)) != len(given):
            missing = sorted(set(names) - set(given))
            extra = sorted(set(given) - set(names))
            raise ValueError(f"order must list every feature exactly once (and optionally "
                             f"{self.class_column!r}); missing {missing}, unknown {extra}")
        return [given]

    def fit(self, X: MatrixLike, y: ArrayLike) -> "AMA":
        data = self._fit_data(X, y)        # checks the parameters too
        k, n = int(self.max_parents), None if self.n is None else int(self.n)
        self.orders_ = self._orders(data, deprecated_param(self, "seed", "random_state"))
        self.averagings_ = [OrderedAveraging(data, order=o, max_parents=k, prior=self.prior,
                                             ess=float(self.ess), missing="keep") for o in self.orders_]
        # the summary networks are built on first use (the first prediction): their CPTs
        # (Eq. 15) cost far more than the rest of fit and nothing in fit reads them
        self.networks_ = _SummaryNetworks(self.averagings_, n)
        return self

    def summary_proba(self, X, n: int | None) -> np.ndarray:
        """P(class | x) from summary networks with ``n`` parents (None: exact MA),
        reusing the fitted averaging (no refit); missing features are summed out."""
        n = check_int(n, "n", low=0, allow_none=True)
        codes = self._encode(X)
        if n is None:
            joints = [_averaging_log_joint(a, codes, "AMA") for a in self.averagings_]
        else:               # the fitted n: the summary networks of networks_ (built once)
            nets = self.networks_ if n == self.networks_._n else [a.summary_network(n) for a in self.averagings_]
            joints = [_network_log_joint(net, self.data_, codes, "AMA") for net in nets]
        return np.mean([normalize_log(j) for j in joints], axis=0)

    def _joints(self, codes: np.ndarray) -> list[np.ndarray]:
        check_is_fitted(self, "averagings_")
        if self.networks_:
            return [_network_log_joint(net, self.data_, codes, "AMA") for net in self.networks_]
        return [_averaging_log_joint(a, codes, "AMA(n=None)") for a in self.averagings_]

    def _joint_log_proba(self, codes: np.ndarray) -> np.ndarray:
        # one order (two-random offers no joint: see predict_joint_log_proba)
        return self._joints(codes)[0]

    def _has_joint(self) -> bool:
        return not (isinstance(self.order, str) and self.order == "two-random")

    @available_if(_has_joint)
    def predict_joint_log_proba(self, X: MatrixLike) -> np.ndarray:
        """``log P(x_observed, c)`` under the summary network (or the exact average).

        Absent with ``order="two-random"``: there ``predict_proba`` is the mean of the two
        orders' conditionals (Dash & Cooper's choice), which is not the softmax of any
        one joint distribution, so no joint is offered (``hasattr`` is False).
        """
        return super().predict_joint_log_proba(X)

    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """P(class | x_observed); with ``order="two-random"`` the average of the two orders'
        conditionals (the paper's choice; :meth:`predict_joint_log_proba` is then absent),
        otherwise the softmax of :meth:`predict_joint_log_proba`.  Missing features are
        summed out."""
        js = self._joints(self._encode(X))
        return np.mean([normalize_log(j) for j in js], axis=0)
