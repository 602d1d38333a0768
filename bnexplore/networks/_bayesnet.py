"""The :class:`BayesNet` class: a DAG plus one CPT per node, with vectorised forward
sampling, log-probability, one-target inference through the Markov blanket, exact
posterior marginals given evidence (:meth:`BayesNet.posteriors`, a junction tree in
``_inference``), CPT estimation and pgmpy conversion.

CPT layout
----------
``bn.cpts[name]`` has shape ``(q, r)``: ``r`` states of the node in the columns and
``q = prod(parent arities)`` parent configurations in the rows, in mixed radix over
``bn.parents(name)`` with the **last parent varying fastest** (C order), the layout of
:func:`bnexplore._validation.config_index`.
"""
from __future__ import annotations

import warnings
from typing import Hashable, Iterable, Mapping, Sequence

import networkx as nx
import numpy as np
import pandas as pd

from .._deprecation import REMOVED_IN, RenamedParameterWarning, renamed
from .._validation import check_ess, check_positive_int, check_prior, check_random_state
from ..data.core import DiscreteData, as_discrete, check_table_size, config_index
from ._graph import _lexicographic_topological_order, markov_blanket

#: tolerance on CPT row sums accepted by :class:`BayesNet` (rows are then renormalised).
ROW_SUM_TOL = 1e-6


def _label_lookup(states: Sequence[Hashable]) -> dict:
    lookup: dict = {}
    for i, s in enumerate(states):
        lookup.setdefault(str(s), i)
    for i, s in enumerate(states):  # exact labels take precedence over string forms
        lookup[s] = i
    return lookup


def _map_labels(column: str, src_labels: Sequence, src_codes: np.ndarray,
                states: Sequence[Hashable]) -> np.ndarray:
    """Re-code ``src_codes`` (indices into ``src_labels``, -1 = missing) to ``states`` codes."""
    lookup = _label_lookup(states)
    mapping = np.empty(len(src_labels) + 1, dtype=np.int64)
    for i, lab in enumerate(src_labels):
        try:
            code = lookup.get(lab, None)
        except TypeError:  # unhashable label
            code = None
        if code is None:
            code = lookup.get(str(lab), -1)
        mapping[i] = code
    mapping[-1] = -2  # missing value
    out = mapping[np.asarray(src_codes, dtype=np.int64)]  # -1 indexes the sentinel
    if out.size and out.min() < 0:
        row = int(np.argmax(out < 0))
        if out[row] == -2:
            raise ValueError(f"column {column!r} has a missing value (row {row}): "
                             f"the network needs a complete row; drop or impute it")
        bad = src_labels[int(src_codes[row])]
        raise ValueError(f"column {column!r} has value {bad!r} (row {row}) which is not a state of "
                         f"{column!r}; its states are {list(states)}")
    return out


def _logsumexp_rows(a: np.ndarray) -> np.ndarray:
    m = a.max(axis=1, keepdims=True)
    finite = np.isfinite(m)
    m = np.where(finite, m, 0.0)
    with np.errstate(divide="ignore"):
        return (np.log(np.exp(a - m).sum(axis=1, keepdims=True)) + m)[:, 0]


class BayesNet:
    """A discrete Bayesian network: DAG plus one CPT per node.

    Parameters
    ----------
    dag : networkx.DiGraph or mapping
        The structure; nodes are variable names. A mapping ``name -> list of parents``
        is accepted too and fixes the parent order.
    states : mapping
        ``name -> list of state labels`` (at least one state each, labels unique).
    cpts : mapping
        ``name -> array of shape (q, r)``: rows are parent configurations in mixed
        radix over ``parents`` (last parent fastest), columns the node's states;
        every row sums to 1 (within ``atol``; rows are then renormalised).
    parents : mapping, optional
        ``name -> ordered list of parents``. Defaults to the order of
        ``dag.predecessors(name)`` (edge insertion order).
    name : str, optional
        A label shown in ``repr``.
    atol : float
        Tolerance on row sums.

    Attributes
    ----------
    dag : networkx.DiGraph
    states : dict of str -> list
    cpts : dict of str -> ndarray of shape (q, r)
    nodes : list of str
        A topological order (ties broken by declaration order); ``sample`` uses it
        for its columns.
    em : dict or None
        What EM did when :meth:`fit` estimated the CPTs with ``missing="em"`` on data
        with missing cells (``n_iter``, ``converged``, ``log_likelihood``,
        ``log_likelihoods``); None otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from bnexplore.networks import BayesNet
    >>> bn = BayesNet({"rain": [], "wet": ["rain"]},
    ...               states={"rain": ["no", "yes"], "wet": ["no", "yes"]},
    ...               cpts={"rain": np.array([[0.8, 0.2]]),
    ...                     "wet": np.array([[0.9, 0.1], [0.2, 0.8]])})
    >>> bn
    BayesNet(2 nodes, 1 arcs, 3 parameters)
    >>> df = bn.sample(5, random_state=0)
    >>> list(df.columns), df.shape
    (['rain', 'wet'], (5, 2))
    >>> float(np.exp(bn.log_prob(pd.DataFrame({"rain": ["yes"], "wet": ["yes"]})))[0])
    0.16000000000000003
    """

    def __init__(self, dag: nx.DiGraph | Mapping[str, Sequence[str]], states: Mapping[str, Sequence],
                 cpts: Mapping[str, np.ndarray], parents: Mapping[str, Sequence[str]] | None = None,
                 name: str | None = None, atol: float = ROW_SUM_TOL):
        if isinstance(dag, Mapping):
            if parents is None:
                parents = dag
            g = nx.DiGraph()
            g.add_nodes_from(str(v) for v in dag)
            for v, ps in dag.items():
                for p in ps:
                    g.add_edge(str(p), str(v))
            dag = g
        if not isinstance(dag, nx.DiGraph):
            raise TypeError(f"dag must be a networkx.DiGraph or a mapping name -> parents, "
                            f"got {type(dag).__name__}")
        if not nx.is_directed_acyclic_graph(dag):
            cycle = nx.find_cycle(dag)
            raise ValueError(f"the graph has a cycle {' -> '.join(str(u) for u, _ in cycle)} -> "
                             f"{cycle[0][0]}: a Bayesian network needs a DAG")
        node_names = [str(v) for v in dag.nodes]
        if set(node_names) != set(map(str, dag.nodes)) or len(set(node_names)) != len(node_names):
            raise ValueError("node names must be distinct as strings")
        if len(node_names) == 0:
            raise ValueError("the network has no nodes")
        missing = [v for v in node_names if v not in states]
        if missing:
            raise ValueError(f"no states given for nodes {missing}")
        missing = [v for v in node_names if v not in cpts]
        if missing:
            raise ValueError(f"no CPT given for nodes {missing}")
        extra = sorted(set(map(str, states)) - set(node_names)) + sorted(set(map(str, cpts)) - set(node_names))
        if extra:
            raise ValueError(f"states/CPTs given for nodes {extra} that are not in the graph")
        if parents is None:
            parents = {v: list(dag.predecessors(v)) for v in dag.nodes}

        self.dag = nx.DiGraph()
        self.dag.add_nodes_from(node_names)
        self.name = name
        self.em: dict | None = None
        self.states: dict[str, list] = {}
        self.cpts: dict[str, np.ndarray] = {}
        self._parents: dict[str, list[str]] = {}
        for v in node_names:
            st = list(states[v])
            if len(st) == 0:
                raise ValueError(f"node {v!r} has no states")
            if len({str(s) for s in st}) != len(st):
                raise ValueError(f"node {v!r} has duplicate state labels {st}")
            self.states[v] = st
        for v in node_names:
            ps = [str(p) for p in parents.get(v, [])] if v in parents else None
            if ps is None:
                raise ValueError(f"no parent list given for node {v!r}")
            if sorted(ps) != sorted(map(str, dag.predecessors(v))) or len(set(ps)) != len(ps):
                raise ValueError(f"parents of {v!r} given as {ps} but the graph has "
                                 f"{sorted(map(str, dag.predecessors(v)))}")
            self._parents[v] = ps
            for p in ps:
                self.dag.add_edge(p, v)
        for v in node_names:
            ps = self._parents[v]
            r = len(self.states[v])
            par = [len(self.states[p]) for p in ps]
            q = check_table_size(par + [r], ps + [v], what=f"CPT of {v!r}") // r
            t = np.asarray(cpts[v], dtype=np.float64)
            if t.ndim != 2 and t.size == q * r:
                t = t.reshape(q, r)
            if t.shape != (q, r):
                raise ValueError(f"CPT of {v!r} has shape {t.shape}; expected (q, r) = ({q}, {r}) for "
                                 f"{r} states and parents {ps} with arities {par}")
            if not np.all(np.isfinite(t)) or t.min() < 0:
                raise ValueError(f"CPT of {v!r} has negative or non-finite entries")
            sums = t.sum(axis=1)
            bad = np.nonzero(np.abs(sums - 1.0) > atol)[0]
            if bad.size:
                raise ValueError(f"CPT of {v!r}: row {int(bad[0])} sums to {sums[bad[0]]:.6g}, not 1 "
                                 f"(tolerance {atol}); every row is a distribution over {self.states[v]}")
            t = t / sums[:, None]
            t.setflags(write=False)
            self.cpts[v] = t
        self._start_caches(node_names)

    @classmethod
    def _from_valid(cls, parents: Mapping[str, list[str]], states: Mapping[str, list],
                    cpts: Mapping[str, np.ndarray], name: str | None = None) -> "BayesNet":
        """Build from parts a caller has already validated (no checks, no copies).

        For code that constructs networks it knows to be valid (e.g. the summary
        network of order averaging): ``parents`` (declaration order = its keys) in
        CPT order, an acyclic graph, and (q, r) CPTs whose rows sum to 1.
        """
        self = cls.__new__(cls)
        declared = list(parents)
        self._dag = None  # built on first use
        self.name = name
        self.em: dict | None = None
        self.states = {v: list(states[v]) for v in declared}
        self._parents = {v: list(parents[v]) for v in declared}
        self.cpts = {}
        for v in declared:
            t = cpts[v]
            t.setflags(write=False)
            self.cpts[v] = t
        self._start_caches(declared)
        return self

    def _start_caches(self, declared: list[str]) -> None:
        # the declaration order, and what is derived from the network on first use
        self._declared = declared
        self._topo_list = None  # topological order
        self._compiled = None
        self._dtypes = None
        self._log_cpts: dict[str, np.ndarray] = {}
        self._jtree = None  # the junction tree of posteriors(), compiled on first use

    @property
    def _topo(self) -> list[str]:
        """Topological order, ties broken by declaration order."""
        if self._topo_list is None:
            self._topo_list = _lexicographic_topological_order(self._declared, self._parents)
        return self._topo_list

    @property
    def dag(self) -> nx.DiGraph:
        """The graph (networkx), nodes in declaration order."""
        if self._dag is None:
            g = nx.DiGraph()
            g.add_nodes_from(self._declared)
            g.add_edges_from((p, v) for v in self._declared for p in self._parents[v])
            self._dag = g
        return self._dag

    @dag.setter
    def dag(self, g: nx.DiGraph) -> None:
        self._dag = g

    # ----------------------------------------------------------------- accessors
    def parents(self, name: str) -> list[str]:
        """Ordered parents of ``name`` (the order of the CPT's mixed radix)."""
        self._check_node(name)
        return list(self._parents[name])

    def children(self, name: str) -> list[str]:
        """Children of ``name``."""
        self._check_node(name)
        return list(self.dag.successors(name))

    def markov_blanket(self, name: str) -> list[str]:
        """Parents, children and the children's other parents of ``name`` (topological order)."""
        self._check_node(name)
        mb = set(markov_blanket(self.dag, name))
        return [v for v in self._topo if v in mb]

    @property
    def nodes(self) -> list[str]:
        """Nodes in a topological order (ties broken by declaration order)."""
        return list(self._topo)

    @property
    def arities(self) -> dict[str, int]:
        """``name -> number of states``."""
        return {v: len(s) for v, s in self.states.items()}

    @property
    def n_parameters(self) -> int:
        """Number of free parameters, ``sum_i q_i (r_i - 1)``."""
        return int(sum(t.shape[0] * (t.shape[1] - 1) for t in self.cpts.values()))

    def __len__(self) -> int:
        return self.dag.number_of_nodes()

    def __repr__(self) -> str:
        label = f"{self.name!r}, " if self.name else ""
        return (f"BayesNet({label}{self.dag.number_of_nodes()} nodes, {self.dag.number_of_edges()} arcs, "
                f"{self.n_parameters} parameters)")

    def _check_node(self, name: str) -> None:
        if name not in self.states:
            raise ValueError(f"unknown node {name!r}; nodes are {self._declared}")

    # --------------------------------------------------------------- compilation
    def _compile(self):
        """Integer-indexed arrays for the vectorised kernels (built once, lazily)."""
        if self._compiled is None:
            pos = {v: i for i, v in enumerate(self._topo)}
            comp = []
            for v in self._topo:
                ps = self._parents[v]
                par = [len(self.states[p]) for p in ps]
                t = self.cpts[v]
                # thresholds: state k is drawn when thr[k-1] <= u < thr[k]; states after the
                # last one with positive probability get an unreachable threshold.
                cum = np.cumsum(t, axis=1)[:, :-1]
                tail = np.cumsum(t[:, ::-1], axis=1)[:, ::-1][:, 1:]  # mass strictly after k
                thr = np.where(tail > 0, np.minimum(cum, 1.0), np.inf)
                comp.append((pos[v], np.array([pos[p] for p in ps], dtype=np.int64), par,
                             np.ascontiguousarray(thr.T)))
            self._compiled = (pos, comp)
        return self._compiled

    def _log_cpt(self, v: str) -> np.ndarray:
        lt = self._log_cpts.get(v)
        if lt is None:
            with np.errstate(divide="ignore"):
                lt = np.log(self.cpts[v])
            self._log_cpts[v] = lt
        return lt

    # ------------------------------------------------------------------ sampling
    def _sample_codes(self, n: int, seed) -> np.ndarray:
        n = check_positive_int(n, "n (number of rows)")
        rng = check_random_state(seed)
        pos, comp = self._compile()
        codes = np.empty((len(comp), n), dtype=np.int32)
        uniforms = rng.random((len(comp), n))
        for i, pidx, par, thr in comp:
            u = uniforms[i]
            out = codes[i]
            out[:] = 0
            if pidx.size:
                cfg = config_index([codes[p] for p in pidx], par, n)
                for k in range(thr.shape[0]):  # thr is (r - 1, q): one gather per threshold
                    out += u >= thr[k][cfg]
            else:
                for k in range(thr.shape[0]):
                    out += u >= thr[k, 0]
        return codes

    @renamed(seed="random_state")
    def sample(self, n: int, random_state=None, *, as_frame: bool = True,
               target: str | None = None) -> pd.DataFrame | DiscreteData:
        """Draw ``n`` rows by vectorised forward (ancestral) sampling.

        Parameters
        ----------
        n : int
            Number of rows (> 0).
        random_state : None, int or numpy.random.Generator
            Source of randomness (``seed=`` is its deprecated name).
        as_frame : bool, default True
            Return a DataFrame (True) or a :class:`~bnexplore.data.DiscreteData`
            (False: the integer codes without building categorical columns, the faster
            form for the library's engines).
        target : str, optional
            A node to mark as the class: ``df.attrs["target"]`` of the frame (as
            :func:`bnexplore.datasets.load` does) or the ``target`` of the DiscreteData.

        Returns
        -------
        DataFrame or DiscreteData
            One categorical column per node, in :attr:`nodes` (topological) order,
            with the state labels as categories.

        Examples
        --------
        >>> import bnexplore as bx
        >>> df = bx.networks.load("asia").sample(1000, random_state=1)
        >>> df.shape, str(df["either"].dtype)
        ((1000, 8), 'category')
        >>> d = bx.networks.load("asia").sample(100, random_state=0, as_frame=False, target="lung")
        >>> d.n_rows, d.target
        (100, 'lung')
        """
        if target is not None:
            self._check_node(target)
        codes = self._sample_codes(n, random_state)
        if not as_frame:
            return DiscreteData(codes.T, self._topo, [self.states[v] for v in self._topo],
                                target=target)
        if self._dtypes is None:
            self._dtypes = [pd.CategoricalDtype(pd.Index(self.states[v])) for v in self._topo]
        cols = {v: pd.Categorical.from_codes(codes[i], dtype=self._dtypes[i], validate=False)
                for i, v in enumerate(self._topo)}
        out = pd.DataFrame(cols, copy=False)
        if target is not None:
            out.attrs["target"] = target
        return out

    @renamed(seed="random_state")
    def sample_data(self, n: int, random_state=None, target: str | None = None) -> DiscreteData:
        """Deprecated (removed in 0.3.0): use ``sample(n, random_state, as_frame=False)``."""
        warnings.warn("BayesNet.sample(, as_frame=False) is deprecated and will be removed in "
                      f"{REMOVED_IN}: use sample(n, random_state=..., as_frame=False) instead",
                      RenamedParameterWarning, stacklevel=3)
        return self.sample(n, random_state, as_frame=False, target=target)

    # ---------------------------------------------------------------- inference
    def _encode(self, data, needed: Iterable[str]) -> dict[str, np.ndarray]:
        """Codes (in this network's states) of the ``needed`` columns of ``data``."""
        needed = list(needed)
        out: dict[str, np.ndarray] = {}
        if isinstance(data, DiscreteData):
            have = set(data.names)
            miss = [v for v in needed if v not in have]
            if miss:
                raise ValueError(f"the data lack columns {miss} needed by the network")
            for v in needed:
                j = data.index(v)
                out[v] = _map_labels(v, data.states[j], data.columns[j], self.states[v])
            return out
        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"expected a DataFrame or DiscreteData, got {type(data).__name__}")
        cols = {str(c): c for c in data.columns}
        miss = [v for v in needed if v not in cols]
        if miss:
            raise ValueError(f"the data frame lacks columns {miss} needed by the network")
        for v in needed:
            s = data[cols[v]]
            if isinstance(s.dtype, pd.CategoricalDtype):
                labels = list(s.cat.categories)
                if labels == self.states[v]:
                    codes = s.cat.codes.to_numpy().astype(np.int64)
                    if codes.size and codes.min() < 0:
                        row = int(np.argmax(codes < 0))
                        raise ValueError(f"column {v!r} has a missing value (row {row}): "
                                         f"the network needs a complete row; drop or impute it")
                    out[v] = codes
                    continue
                src = s.cat.codes.to_numpy()
            else:
                src, uniq = pd.factorize(s, use_na_sentinel=True)
                labels = list(uniq)
            out[v] = _map_labels(v, labels, src, self.states[v])
        return out

    def log_prob(self, data) -> np.ndarray:
        """Natural log of the joint probability of every row.

        Parameters
        ----------
        data : DataFrame or DiscreteData
            Must hold every node as a column (labels as in :attr:`states`, or their
            string forms); extra columns are ignored.

        Returns
        -------
        ndarray of shape (n_rows,)
            ``-inf`` for rows of probability zero.

        Examples
        --------
        >>> import numpy as np, bnexplore as bx
        >>> bn = bx.networks.load("asia")
        >>> lp = bn.log_prob(bn.sample(3, random_state=0))
        >>> lp.shape, bool(np.all(lp <= 0))
        ((3,), True)
        """
        enc = self._encode(data, self._topo)
        n = len(next(iter(enc.values())))
        total = np.zeros(n)
        with np.errstate(divide="ignore"):
            for v in self._topo:
                ps = self._parents[v]
                cfg = config_index([enc[p] for p in ps], [len(self.states[p]) for p in ps], n)
                total += self._log_cpt(v)[cfg, enc[v]]
        return total

    def predict_proba(self, data, target: str) -> np.ndarray:
        """P(target | all other variables) for every row, via the Markov blanket.

        The target is named per call (unlike a classifier's ``predict_proba(X)``, fixed
        to the class it was fitted on): a network models every variable.

        ``P(t | x) ∝ P(t | pa(t)) * prod_{c in children(t)} P(c | pa(c))``, computed
        in log space and normalised with log-sum-exp. Only the Markov-blanket columns
        are read; the target column may be absent. Rows whose evidence has
        probability zero for every target state get a uniform distribution and a
        ``RuntimeWarning``.

        Parameters
        ----------
        data : DataFrame or DiscreteData
        target : str
            A node of the network.

        Returns
        -------
        ndarray of shape (n_rows, r_target)
            Columns follow ``states[target]``.

        Examples
        --------
        >>> import bnexplore as bx
        >>> bn = bx.networks.load("asia")
        >>> p = bn.predict_proba(bn.sample(4, random_state=0), target="lung")
        >>> p.shape, bool(abs(p.sum(axis=1) - 1).max() < 1e-12)
        ((4, 2), True)
        """
        if not isinstance(target, str):
            raise TypeError(f"target must be a node name (str), got {type(target).__name__}")
        self._check_node(target)
        mb = self.markov_blanket(target)
        enc = self._encode(data, mb)
        n = len(next(iter(enc.values()))) if enc else (
            data.n_rows if isinstance(data, DiscreteData) else len(data))
        r = len(self.states[target])
        logp = np.zeros((n, r))
        with np.errstate(divide="ignore"):
            for v in [target] + list(self.dag.successors(target)):
                base = np.zeros(n, dtype=np.int64)
                t_stride = 0
                for p in self._parents[v]:
                    ar = len(self.states[p])
                    base = base * ar
                    t_stride *= ar
                    if p == target:
                        t_stride = 1
                    else:
                        base = base + enc[p]
                lt = self._log_cpt(v)
                if v == target:
                    logp += lt[base]
                else:
                    cfg = base[:, None] + t_stride * np.arange(r)[None, :]
                    logp += lt[cfg, enc[v][:, None]]
        norm = _logsumexp_rows(logp)
        bad = ~np.isfinite(norm)
        if bad.any():
            warnings.warn(f"{int(bad.sum())} rows have probability zero under the network for every "
                          f"state of {target!r} (first row {int(np.argmax(bad))}); returning uniform "
                          f"probabilities for them", RuntimeWarning, stacklevel=2)
        out = np.exp(logp - np.where(bad, 0.0, norm)[:, None])
        out[bad] = 1.0 / r
        return out

    # ------------------------------------------------------- exact inference
    def _evidence_codes(self, evidence) -> dict[int, int]:
        """``{node index in nodes order: state index}`` of ``{node: state label}``
        (``None`` values are no evidence)."""
        if evidence is None:
            return {}
        if not isinstance(evidence, Mapping):
            raise TypeError(f"evidence must be a dict {{node: state}}, got {type(evidence).__name__}")
        pos = {v: i for i, v in enumerate(self._topo)}
        out: dict[int, int] = {}
        for node, state in evidence.items():
            if state is None:
                continue
            if not isinstance(node, str) or node not in self.states:
                raise ValueError(f"evidence names unknown node {node!r}; nodes are {self._declared}")
            lookup = _label_lookup(self.states[node])
            try:
                code = lookup.get(state)
            except TypeError:  # unhashable
                code = None
            if code is None:
                code = lookup.get(str(state))
            if code is None:
                raise ValueError(f"evidence gives node {node!r} the state {state!r}, which it does not "
                                 f"have; its states are {self.states[node]}")
            out[pos[node]] = code
        return out

    def _infer(self, evidence) -> tuple[dict[str, np.ndarray], float]:
        """Every node's posterior marginal and ``log P(e)`` by the junction tree."""
        from ._inference import compile_tree, node_marginals, propagate

        ev = self._evidence_codes(evidence)
        if self._jtree is None:
            pos = {v: i for i, v in enumerate(self._topo)}
            self._jtree = compile_tree([[pos[p] for p in self._parents[v]] for v in self._topo],
                                       [np.asarray(self.cpts[v]) for v in self._topo],
                                       [len(self.states[v]) for v in self._topo])
        tables, log_pe = propagate(self._jtree, ev)
        if log_pe == -np.inf:
            return {}, log_pe
        marg = node_marginals(self._jtree, tables)
        for i, s in ev.items():  # exactly one-hot (no rounding residue)
            marg[i] = np.zeros_like(marg[i])
            marg[i][s] = 1.0
        by_name = dict(zip(self._topo, marg))
        return {v: by_name[v] for v in self._declared}, log_pe

    def posteriors(self, evidence: Mapping[str, Hashable] | None = None) -> dict[str, np.ndarray]:
        """Every node's posterior marginal ``P(X_v | evidence)``, by exact inference.

        A junction tree (min-fill triangulation, Hugin propagation; see
        :mod:`bnexplore.networks._inference`) is compiled on the first call and kept;
        each call then costs one collect and one distribute pass.

        Parameters
        ----------
        evidence : dict, optional
            ``{node: state label}`` (labels as in :attr:`states` or their string
            forms); a value ``None`` means the node is not observed.

        Returns
        -------
        dict of str -> ndarray
            For every node (declaration order), its probabilities in the order of
            ``states[node]``; an observed node gets its one-hot vector.

        Raises
        ------
        ValueError
            For an unknown node or state (naming it), evidence of probability zero
            under the network (:class:`ImpossibleEvidenceError`), or a network so densely
            connected that a clique table would exceed
            ``bnexplore.networks._inference.MAX_CLIQUE_CELLS`` cells (refused before
            allocating).

        Examples
        --------
        >>> import bnexplore as bx
        >>> bn = bx.networks.load("asia")
        >>> post = bn.posteriors({"smoke": "yes", "xray": "yes"})
        >>> bn.states["lung"], post["lung"].round(3).tolist()
        (['yes', 'no'], [0.646, 0.354])
        """
        post, log_pe = self._infer(evidence)
        if log_pe == -np.inf:
            from ._inference import ImpossibleEvidenceError

            raise ImpossibleEvidenceError(
                f"the evidence {dict(evidence)} has probability zero under the network: no posterior "
                f"exists; clear one of the observations")
        return post

    def log_prob_evidence(self, evidence: Mapping[str, Hashable] | None = None) -> float:
        """Natural log of ``P(evidence)`` (``-inf`` when it is impossible), by the
        junction tree of :meth:`posteriors`.

        Examples
        --------
        >>> import numpy as np, bnexplore as bx
        >>> bn = bx.networks.load("asia")
        >>> round(float(np.exp(bn.log_prob_evidence({"smoke": "yes"}))), 3)
        0.5
        """
        return float(self._infer(evidence)[1])

    # --------------------------------------------------------------- estimation
    @classmethod
    def fit(cls, dag: nx.DiGraph | Mapping[str, Sequence[str]] | "BayesNet", data,
            prior: str = "BDeu", ess: float = 1.0, name: str | None = None, missing: str = "raise",
            max_iter: int = 100, tol: float = 1e-6) -> "BayesNet":
        """Estimate the CPTs of ``dag`` from discrete data.

        Parameters
        ----------
        dag : networkx.DiGraph, mapping name -> parents, or BayesNet
            Structure; its nodes must be columns of ``data``.
        data : DataFrame or DiscreteData
        prior : {"BDeu", "K2", "mle"}
            Posterior mean under a Dirichlet prior with ``alpha_ijk = ess / (q_i r_i)``
            (BDeu) or ``alpha_ijk = 1`` (K2); ``"mle"`` gives relative frequencies and
            a uniform row for parent configurations never seen.
        ess : float
            Equivalent sample size for BDeu (> 0).
        name : str, optional
        missing : {"raise", "drop", "keep", "em"}, default "raise"
            Missing cells: refuse them, drop the incomplete rows (with a warning), count
            each family on the rows where it is observed (available case), or EM
            (Dempster, Laird & Rubin 1977) from those available-case CPTs, with the exact
            E-step of :mod:`bnexplore._em_counts` (every row's missing cells summed out):
            the CPTs maximise the observed-data log-likelihood plus the prior's log
            density (``"mle"``: the log-likelihood alone).
        max_iter : int, default 100
            Largest number of EM iterations (``missing="em"``).
        tol : float, default 1e-6
            EM stops when its objective rises by less than ``tol`` per row.

        Returns
        -------
        BayesNet
            With ``missing="em"`` on data with missing cells, its :attr:`em` holds
            ``n_iter``, ``converged``, ``log_likelihood`` (observed-data, of the returned
            CPTs) and ``log_likelihoods`` (of the starting CPTs, then after each
            iteration); otherwise :attr:`em` is None.

        Examples
        --------
        >>> import bnexplore as bx
        >>> asia = bx.networks.load("asia")
        >>> fitted = bx.networks.BayesNet.fit(asia.dag, asia.sample(5000, random_state=0), prior="K2")
        >>> fitted.cpts["smoke"].round(1).tolist()
        [[0.5, 0.5]]
        >>> df = asia.sample(2000, random_state=1)
        >>> df = df.mask(np.random.default_rng(2).random(df.shape) < 0.2)
        >>> em = bx.networks.BayesNet.fit(asia.dag, df, prior="K2", missing="em")
        >>> em.em["converged"], em.em["log_likelihood"] >= em.em["log_likelihoods"][0]
        (True, True)
        """
        prior = check_prior(prior, allowed=("BDeu", "K2", "mle"), ignore_case=True)
        if prior == "BDeu":
            ess = check_ess(ess)
        if isinstance(dag, BayesNet):
            parents = {v: dag.parents(v) for v in dag._declared}
        elif isinstance(dag, nx.DiGraph):
            parents = {str(v): [str(p) for p in dag.predecessors(v)] for v in dag.nodes}
        elif isinstance(dag, Mapping):
            parents = {str(v): [str(p) for p in ps] for v, ps in dag.items()}
            for ps in list(parents.values()):
                for p in ps:
                    parents.setdefault(p, [])
        else:
            raise TypeError(f"dag must be a networkx.DiGraph, a mapping name -> parents or a BayesNet, "
                            f"got {type(dag).__name__}")
        if missing not in ("raise", "drop", "keep", "em"):
            raise ValueError(f"missing must be 'raise', 'drop', 'keep' or 'em', got {missing!r}")
        if missing == "em":
            max_iter = check_positive_int(max_iter, "max_iter")
            if not (isinstance(tol, (int, float)) and np.isfinite(tol) and tol >= 0):
                raise ValueError(f"tol must be a finite number >= 0, got {tol!r}")
            if prior == "mle":
                raise ValueError("missing='em' needs a Dirichlet prior (prior='K2' or 'BDeu'): maximum-"
                                 "likelihood CPTs can give an observed row probability 0")
        how = "keep" if missing == "em" else missing
        if isinstance(data, pd.DataFrame):
            data = DiscreteData.from_frame(data, target=None, check_target=False, missing=how)
        elif isinstance(data, DiscreteData):
            data = as_discrete(data, missing=how)
        else:
            raise TypeError(f"data must be a DataFrame or DiscreteData, got {type(data).__name__}")
        miss = [v for v in parents if v not in data.names]
        if miss:
            raise ValueError(f"nodes {miss} of the graph are not columns of the data; columns are {data.names}")
        states = {v: list(data.states[data.index(v)]) for v in parents}
        g = nx.DiGraph()
        g.add_nodes_from(parents)
        g.add_edges_from((p, v) for v, ps in parents.items() for p in ps)
        if not nx.is_directed_acyclic_graph(g):
            cycle = nx.find_cycle(g)
            raise ValueError(f"the graph has a cycle {' -> '.join(u for u, _ in cycle)} -> {cycle[0][0]}")
        from ..scores import standard_parameters  # Eq. 3; imported here to keep this module light

        cpts = {}
        for v, ps in parents.items():
            r = len(states[v])
            par = [len(states[p]) for p in ps]
            size = check_table_size(par + [r], ps + [v], what=f"CPT of {v!r}")
            q = size // r
            rows = (np.ones(data.n_rows, dtype=bool) if data.missing is None       # available case
                    else ~data.missing[:, data.indices([v, *ps])].any(axis=1))
            cfg = config_index([data.column(p)[rows] for p in ps], par, int(rows.sum()))
            counts = np.bincount(cfg * r + data.column(v)[rows], minlength=q * r).reshape(q, r)
            cpts[v] = standard_parameters(counts, prior, ess)
        info = None
        if missing == "em" and data.missing is not None:
            cpts, info = _em_cpts(data, parents, cpts, prior, ess, max_iter, tol)
        net = cls(parents, states, cpts, name=name)
        net.em = info
        return net

    # ------------------------------------------------------------- conversion
    def to_networkx(self) -> nx.DiGraph:
        """A copy of the DAG with node attributes ``states``, ``parents`` and ``cpt``.

        Examples
        --------
        >>> import bnexplore as bx
        >>> g = bx.networks.load("asia").to_networkx()
        >>> g.nodes["either"]["parents"]
        ['lung', 'tub']
        """
        g = nx.DiGraph()
        for v in self._declared:
            g.add_node(v, states=list(self.states[v]), parents=list(self._parents[v]),
                       cpt=self.cpts[v].copy())
        for v in self._declared:
            for p in self._parents[v]:
                g.add_edge(p, v)
        return g

    def to_pgmpy(self):
        """The same network as a pgmpy ``DiscreteBayesianNetwork`` (needs pgmpy).

        Examples
        --------
        >>> import bnexplore as bx
        >>> m = bx.networks.load("asia").to_pgmpy()  # doctest: +SKIP
        >>> m.check_model()  # doctest: +SKIP
        True
        """
        try:
            from pgmpy.factors.discrete import TabularCPD
            try:
                from pgmpy.models import DiscreteBayesianNetwork as _BN
            except ImportError:  # pgmpy < 1.0
                from pgmpy.models import BayesianNetwork as _BN
        except ImportError as exc:
            raise ImportError("to_pgmpy needs pgmpy: pip install pgmpy") from exc
        model = _BN()
        model.add_nodes_from(self._declared)
        model.add_edges_from((p, v) for v in self._declared for p in self._parents[v])
        for v in self._declared:
            ps = self._parents[v]
            cpd = TabularCPD(v, len(self.states[v]), np.asarray(self.cpts[v]).T,
                             evidence=ps or None,
                             evidence_card=[len(self.states[p]) for p in ps] or None,
                             state_names={u: [str(s) for s in self.states[u]] for u in [v] + ps})
            model.add_cpds(cpd)
        return model

    def to_pyagrum(self):
        """The same network as a pyAgrum ``BayesNet`` (needs pyagrum), state labels as
        strings; e.g. to check :meth:`posteriors` against ``pyagrum.LazyPropagation``.

        Examples
        --------
        >>> import bnexplore as bx
        >>> g = bx.networks.load("asia").to_pyagrum()  # doctest: +SKIP
        >>> g.size(), g.sizeArcs()  # doctest: +SKIP
        (8, 8)
        """
        try:
            import pyagrum as gum
        except ImportError as exc:
            raise ImportError("to_pyagrum needs pyAgrum: pip install pyagrum") from exc
        g = gum.BayesNet(self.name or "")
        ids = {v: g.add(gum.LabelizedVariable(v, v, [str(s) for s in self.states[v]])) for v in self._declared}
        for v in self._declared:
            for p in self._parents[v]:
                g.addArc(ids[p], ids[v])
        for v in self._declared:
            fam = self._parents[v] + [v]
            t = np.asarray(self.cpts[v]).reshape([len(self.states[u]) for u in fam])
            pot = g.cpt(ids[v])
            # pyAgrum's flat order: its first variable varies fastest
            order = [pot.variable(i).name() for i in range(pot.nbrDim())]
            pot.fillWith(np.transpose(t, [fam.index(nm) for nm in reversed(order)]).ravel().tolist())
        return g

    @classmethod
    def from_pgmpy(cls, model, name: str | None = None) -> "BayesNet":
        """Build a BayesNet from a pgmpy discrete Bayesian network with CPDs.

        Examples
        --------
        >>> import bnexplore as bx
        >>> bn = bx.networks.load("asia")
        >>> bx.networks.BayesNet.from_pgmpy(bn.to_pgmpy())  # doctest: +SKIP
        BayesNet(8 nodes, 8 arcs, 18 parameters)
        """
        parents, states, cpts = {}, {}, {}
        for v in model.nodes():
            cpd = model.get_cpds(v)
            if cpd is None:
                raise ValueError(f"the pgmpy model has no CPD for {v!r}")
            var, *ev = cpd.variables
            vals = np.asarray(cpd.values)
            r = vals.shape[0]
            parents[str(var)] = [str(p) for p in ev]
            states[str(var)] = list(cpd.state_names[var]) if cpd.state_names else list(range(r))
            cpts[str(var)] = vals.reshape(r, -1).T
        return cls(parents, states, cpts, name=name)


def _reorder_cpt(t: np.ndarray, arity: dict, frm: Sequence[str], to: Sequence[str], r: int) -> np.ndarray:
    """A (q, r) CPT whose rows run over the parents ``frm`` (mixed radix, last fastest)
    with its rows over the parents ``to`` (the same set)."""
    if list(frm) == list(to):
        return np.asarray(t)
    cube = np.asarray(t).reshape([arity[u] for u in frm] + [r])
    return np.transpose(cube, [list(frm).index(u) for u in to] + [len(frm)]).reshape(-1, r)


def _em_cpts(data: DiscreteData, parents: Mapping[str, list[str]], start: Mapping[str, np.ndarray], prior: str,
             ess: float, max_iter: int, tol: float) -> tuple[dict, dict]:
    """CPTs of ``parents`` by EM from ``start`` (:func:`bnexplore._em_counts.fit_parameters`,
    exact E-step; the columns outside the network are left out) and its report."""
    from .._em_counts import fit_parameters
    nodes = list(parents)
    cols = data.indices(nodes)
    code = np.where(data.missing[:, cols], -1, data.codes[:, cols]).astype(np.int64)
    pos = {v: i for i, v in enumerate(nodes)}
    arity = {v: int(data.arities[c]) for v, c in zip(nodes, cols)}
    ordered = {v: sorted(parents[v], key=pos.__getitem__) for v in nodes}
    init = [_reorder_cpt(start[v], arity, parents[v], ordered[v], arity[v]) for v in nodes]
    fitted, lls, objs = fit_parameters(code, data.arities[cols], [tuple(pos[u] for u in ordered[v]) for v in nodes],
                                       prior, ess, cpts=init, max_iter=max_iter, tol=tol)
    cpts = {v: _reorder_cpt(fitted[i], arity, ordered[v], parents[v], arity[v]) for i, v in enumerate(nodes)}
    converged = len(objs) >= 2 and objs[-1] - objs[-2] < tol * code.shape[0]
    return cpts, {"n_iter": len(lls) - 1, "converged": bool(converged), "log_likelihood": lls[-1],
                  "log_likelihoods": lls}
