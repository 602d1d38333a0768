"""Averaging over every order (issue 20): how much the Dash & Cooper order matters, and
whether order MCMC reaches the exact answer.

* ``orders_exact_vs_mcmc``: a random network (in-degree <= 2, binary) of ``n_vars``
  variables sampled ``n_rows`` times; the arc posteriors of Dash & Cooper along the
  greedy thick-thin order, of the exact DP over all orders, and of order MCMC (4
  chains of ``n_iter`` iterations).  One row per trial: the largest and mean absolute
  differences (fixed order vs all orders; MCMC vs exact, also in standard errors), the
  diagnostics and the times.
* ``orders_network_mcmc``: order MCMC on a bundled network's sample (ALARM by
  default); one row per arc with posterior >= 0.05: posterior, standard error, R-hat,
  ESS and whether the arc is in the true network.

Each trial takes ``max_parents`` (the largest parent set of the averaged structures)
and its replicate's ``random_state`` (an int); ``k=`` and ``seed=`` are their deprecated
names.  Each trial is one run, so the runner's CSV keeps every finished trial and a rerun
resumes (``bnexplore run orders_network_mcmc --size full``).  Module-level imports are
light; the trials import what they need.
"""
from __future__ import annotations

from .registry import register
from .._deprecation import renamed

__all__ = ["exact_vs_mcmc_trial", "network_mcmc_trial"]


@renamed(k="max_parents", seed="random_state")
def exact_vs_mcmc_trial(n_vars: int, n_rows: int, max_parents: int, n_iter: int,
                        random_state: int) -> dict:
    """Fixed order vs all orders vs order MCMC on one random network's sample.

    Examples
    --------
    >>> row = exact_vs_mcmc_trial(n_vars=5, n_rows=200, max_parents=2, n_iter=2_000,
    ...                           random_state=0)
    >>> 0 <= row["mcmc_max_abs_diff"] <= 1 and row["rhat_max"] >= 1
    True
    """
    import time

    import networkx as nx
    import numpy as np

    import bnexplore as bx
    from bnexplore.search import greedy_thick_thin

    df = bx.networks.random_network(n_nodes=n_vars, max_parents=2, random_state=random_state
                                    ).sample(n_rows, random_state=random_state)
    names = list(df.columns)
    dag = greedy_thick_thin(df, prior="K2").dag
    order = list(nx.lexicographical_topological_sort(dag, key=names.index))
    fixed = bx.averaging.OrderedAveraging(df, order=order, max_parents=max_parents
                                          ).arc_posteriors().to_numpy()
    t0 = time.perf_counter()
    exact = bx.averaging.AllOrders(df, max_parents=max_parents).arc_posteriors().to_numpy()
    t_exact = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = bx.averaging.order_mcmc(df, max_parents=max_parents, n_iter=n_iter, n_chains=4,
                                  random_state=random_state)
    t_mcmc = time.perf_counter() - t0
    diff = np.abs(res.arc_posteriors().to_numpy() - exact)
    se = res.stderr.to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(diff > 1e-9, diff / se, 0.0)
    off = ~np.eye(n_vars, dtype=bool)
    return {"fixed_max_abs_diff": float(np.abs(fixed - exact)[off].max()),
            "fixed_mean_abs_diff": float(np.abs(fixed - exact)[off].mean()),
            "mcmc_max_abs_diff": float(diff[off].max()), "mcmc_mean_abs_diff": float(diff[off].mean()),
            "mcmc_max_z": float(np.nanmax(z[off])), "rhat_max": res.rhat_max,
            "log_score_ess": res.log_score_ess, "acceptance": float(res.acceptance_rate.mean()),
            "t_exact_s": t_exact, "t_mcmc_s": t_mcmc}


@renamed(k="max_parents", seed="random_state")
def network_mcmc_trial(network: str, n_rows: int, max_parents: int, n_iter: int,
                       random_state: int, min_posterior: float = 0.05) -> list[dict]:
    """Order MCMC on a sample of a bundled network: the arcs with posterior >= ``min_posterior``.

    Examples
    --------
    >>> rows = network_mcmc_trial("asia", n_rows=300, max_parents=2, n_iter=2_000,
    ...                           random_state=0)
    >>> {"parent", "child", "posterior", "stderr", "rhat", "true_arc"} <= set(rows[0])
    True
    """
    import bnexplore as bx

    bn = bx.networks.load(network)
    df = bn.sample(n_rows, random_state=random_state)
    res = bx.averaging.order_mcmc(df, max_parents=max_parents, n_iter=n_iter, n_chains=4,
                                  random_state=random_state)
    true = set(bn.dag.edges)
    rows = []
    for r in res.summary().itertuples():
        if r.posterior < min_posterior:
            break
        rows.append({"parent": r.parent, "child": r.child, "posterior": r.posterior, "stderr": r.stderr,
                     "rhat": r.rhat, "ess": r.ess, "true_arc": (r.parent, r.child) in true,
                     "rhat_max": res.rhat_max})
    return rows


register("orders_exact_vs_mcmc", exact_vs_mcmc_trial,
         grid={"n_vars": [8, 10, 12, 16], "n_rows": [100, 1000], "max_parents": [2, 3], "n_iter": [100_000]},
         reduced_grid={"n_vars": [6], "n_rows": [200], "max_parents": [2], "n_iter": [4_000]},
         random_states=range(5), reduced_random_states=(0,),
         description="Issue 20: fixed-order (Dash & Cooper) vs exact all-orders vs order MCMC arc posteriors")
register("orders_network_mcmc", network_mcmc_trial,
         grid={"network": ["alarm"], "n_rows": [1000, 10_000], "max_parents": [3], "n_iter": [100_000]},
         reduced_grid={"network": ["asia"], "n_rows": [500], "max_parents": [2], "n_iter": [4_000]},
         random_states=range(3), reduced_random_states=(0,),
         description="Issue 20: order MCMC arc posteriors, R-hat and ESS on a bundled network")
