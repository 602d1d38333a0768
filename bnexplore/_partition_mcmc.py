"""Partition MCMC: the front of :mod:`bnexplore._partition_dp` (checks, budget, starts, result).

The result is an :class:`bnexplore._all_orders.OrderMCMC` in all but the chain's state
(partitions instead of orders) and the prior it samples under: arc posteriors, standard
errors, rank-normalised R-hat and bulk ESS per arc, traces, DAG samples and
:meth:`~PartitionMCMC.resume` are the same code.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from . import _partition_dp
from ._all_dags import _dag_prior_statement, _uniform_is_none
from ._all_orders import OrderMCMC, _advance, _chain_streams, _chain_tables, _new_record
from ._validation import check_probability
from .data.core import DiscreteData

__all__ = ["PartitionMCMC", "partition_mcmc"]


class PartitionMCMC(OrderMCMC):
    """Result of :func:`partition_mcmc`: samples of ordered partitions, arc posteriors under
    the structure-modular prior over DAGs, and diagnostics.

    Attributes as :class:`OrderMCMC` (``traces`` hold the log partition score), plus
    :attr:`partitions` (each chain's current partition) and :attr:`graph_prior`.
    """

    _label = "partition MCMC"

    def __init__(self, *args, graph_prior: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.graph_prior = graph_prior

    @property
    def partitions(self) -> list[list[list[str]]]:
        """Each chain's current ordered partition: its parts from the sources on."""
        out = []
        for c in range(self.n_chains):
            part = self._state.part[c]
            out.append([[self.names[v] for v in np.flatnonzero(part == i)] for i in range(self._state.n_parts[c])])
        return out

    @property
    def orders(self):
        raise AttributeError("partition MCMC keeps partitions, not orders: see .partitions")

    def _run_chunk(self, step: int) -> None:
        _partition_dp.run_partition_chains(self._fam, self._look, self._state, step, self.thin, self.n_iter,
                                           self.p_adjacent, self._rec, self.n_iter // self.thin, True,
                                           self.sample_dags, self._accepted)

    def __repr__(self) -> str:
        return (f"PartitionMCMC({len(self.names)} nodes, k={self.max_parents}, {self.n_chains} chains x "
                f"{self.n_iter:,} iterations; {self.graph_prior}; {self.convergence})")


def partition_mcmc(data: DiscreteData | pd.DataFrame, max_parents: int = 2, n_iter: int = 10_000, n_chains: int = 4,
                   random_state: int | np.random.Generator | None = 0,
                   prior: str = "K2", ess: float = 1.0,
                   structure_prior: Callable | np.ndarray | pd.DataFrame | str | None = None, thin: int | None = None, burn_in: int | None = None, p_swap: float = 0.5,
                   sample_dags: bool = False, progress: bool | Callable[[int, int], None] = False,
                   budget: int | None = None) -> PartitionMCMC:
    """Partition MCMC (Kuipers & Moffa 2017): sample ordered partitions of the nodes, average
    over their DAGs, under the uniform prior over DAGs (or a structure-modular one).

    Every DAG belongs to exactly one ordered partition (peel its sources, then the sources
    of what is left, ...), so unlike order MCMC the target is the DAG posterior under
    ``P(G) ∝ prod_v rho_v(G_v)`` itself, not weighted by the DAG's number of linear
    extensions; with enough iterations the arc posteriors converge to those of
    :class:`AllDAGs`.  A move relocates one node to another part or to a new part, swaps
    the parts of two nodes, or splits a part or joins two adjacent ones
    (:mod:`bnexplore._partition_dp`).  Chains start dispersed: even chains from one part
    (the empty graph), odd chains from a random total order (one node per part).

    Parameters
    ----------
    data : DataFrame or DiscreteData
        Complete discrete data (a missing value is refused, as by :func:`order_mcmc`), at most
        64 variables.
    max_parents : int
        ``k``, the largest number of parents of a node.
    n_iter : int
        Iterations (proposed moves) per chain, burn-in included.
    n_chains : int
        Independent chains (at least 2 for R-hat).
    random_state : int, None or numpy Generator
        Seeds the starts and every chain's random stream.
    prior : {"K2", "BDeu"}, default "K2"
        Parameter prior of the family scores (as :class:`bnexplore.scores.LocalScore`).
    ess : float, default 1.0
        Equivalent sample size of BDeu.
    structure_prior : None, "uniform", callable, or (p, p) array / DataFrame
        The structure prior's modular factor, as in :class:`AllDAGs` (None or "uniform":
        uniform over DAGs).
    thin : int, optional
        Record a draw every ``thin`` iterations (default: about 1,000 draws per chain).
    burn_in : int, optional
        Iterations of each chain left out of the statistics (default ``n_iter // 4``).
    p_swap : float
        Probability of proposing a swap; the other moves split it evenly between a
        relocation and a split or join of parts.
    sample_dags : bool
        Draw one DAG from each recorded partition (see :meth:`PartitionMCMC.dags`).
    progress : bool or callable
        A tqdm bar, or ``f(done, total)`` called between chunks of iterations.
    budget : int, optional
        Cell budget of the family table and the recorded draws.

    Returns
    -------
    PartitionMCMC
        ``.arc_posteriors()``, ``.stderr``, ``.rhat``, ``.ess``, ``.traces``, ``.convergence``,
        ``.graph_prior``; :meth:`PartitionMCMC.resume` runs further.

    References
    ----------
    J. Kuipers and G. Moffa, "Partition MCMC for inference on acyclic digraphs", JASA 112, 2017.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(300, random_state=0)
    >>> res = bx.averaging.partition_mcmc(df, max_parents=2, n_iter=4_000, n_chains=2, random_state=1)
    >>> res.arc_posteriors().shape, res.traces.shape, res.graph_prior
    ((8, 8), (2, 1000), 'uniform over DAGs with at most 2 parents per node')
    """
    p_swap = check_probability(p_swap, "p_swap")
    structure_prior = _uniform_is_none(structure_prior)
    ch = _chain_tables(data, max_parents, prior, ess, structure_prior, n_iter, n_chains, thin, burn_in, random_state,
                       budget, "partition_mcmc", "partition MCMC")
    p, n_chains = len(ch.names), ch.n_chains
    part = np.zeros((n_chains, p), dtype=np.int64)
    n_parts = np.ones(n_chains, dtype=np.int64)
    for c in range(n_chains):
        if c % 2 == 1 and ch.max_parents >= 1:
            part[c, ch.rng.permutation(p)] = np.arange(p)
            n_parts[c] = p
    state = _partition_dp.PartitionState(part, n_parts, np.zeros((n_chains, p)), np.zeros((n_chains, p), np.uint64),
                                         np.zeros((n_chains, p), np.uint64), _chain_streams(ch.rng, n_chains))
    _partition_dp.initial_partition_scores(ch.fam, ch.look, state)
    graph_prior = _dag_prior_statement(structure_prior, ch.max_parents)
    res = PartitionMCMC(ch.names, ch.max_parents, ch.fam, ch.look, state, _new_record(n_chains, ch.n_draws, p), 0,
                        ch.thin, ch.burn_in, float(p_swap), bool(sample_dags), np.zeros(n_chains, dtype=np.int64),
                        random_state, graph_prior=graph_prior)
    _advance(res, ch.n_iter, progress)
    return res
