"""Discrete Bayesian networks: CPTs, sampling, log-probability, one-target inference.

A :class:`BayesNet` is a DAG (``networkx.DiGraph``) plus one conditional probability
table (CPT) per node. It is the generating model of every synthetic experiment in
bnexplore and the output type of the model-averaging summary network.

CPT layout
----------
``bn.cpts[name]`` has shape ``(q, r)``: ``r`` states of the node in the columns and
``q = prod(parent arities)`` parent configurations in the rows, in mixed radix over
``bn.parents(name)`` with the **last parent varying fastest** (C order). Row ``j`` of
a node with parents ``(A, B)`` of arities ``(2, 3)`` is ``j = 3 * a + b``. This is the
transpose of pgmpy's ``TabularCPD.values`` reshaped to ``(r, q)``.

Modules (one job each; this package re-exports their public names)
------------------------------------------------------------------
``_bayesnet``  :class:`BayesNet`: sampling, log-probability, inference, CPT estimation.
``_bif``       :func:`read_bif` (own regex-based reader), :func:`load`, :func:`names`.
``_random``    :func:`random_network` (Dash & Cooper, Procedure 2), :func:`count_dags`.
``_graph``     :func:`markov_blanket` and a declaration-order topological sort.
``_inference`` the junction tree of :meth:`BayesNet.posteriors` (exact inference).

References
----------
D. Dash and G. F. Cooper, "Model averaging with discrete Bayesian network classifiers",
AISTATS 2003, Section 4.1 and Procedure 2.

J. Kuipers and G. Moffa, "Uniform random generation of large acyclic digraphs",
Statistics and Computing 25 (2015) -- the sink-layer recursion used for uniform DAGs.
"""
from ._bayesnet import ROW_SUM_TOL, BayesNet
from ._bif import _NETWORK_DIR, load, names, read_bif
from ._graph import markov_blanket
from ._inference import ImpossibleEvidenceError
from ._random import count_dags, random_network

__all__ = ["BayesNet", "read_bif", "load", "names", "random_network", "count_dags",
           "markov_blanket", "ImpossibleEvidenceError"]
