"""Generate notebooks/06_all_orders.ipynb (no outputs): python notebooks/_make_06.py"""
from pathlib import Path

import nbformat as nbf

cells = [
    ("md", """# Averaging over the order too: exact DP over all orders and order MCMC

Dash & Cooper (notebook 01) average *exactly* over every DAG consistent with **one** node order,
with at most `k` parents per node. The order usually comes from a greedy search, and the answer
depends on it. This notebook asks what the arc posteriors look like when the order is averaged
as well:

* **exactly**, by dynamic programming over the subsets of the variables (Koivisto & Sood 2004;
  all arc posteriors at once, Koivisto 2006): `O(N^2 2^N)` time, fine up to about 20 variables;
* **by sampling orders** with Metropolis-Hastings (order MCMC, Friedman & Koller 2003) beyond that,
  with the diagnostics that say whether to trust the answer."""),
    ("code", """import itertools, math
import numpy as np
import pandas as pd
import networkx as nx
import bnexplore as bx
from bnexplore.averaging import AllOrders, OrderedAveraging, order_mcmc
from bnexplore.viz.averaging import arc_posterior_heatmap
from bnexplore.viz.orders import arc_error_bars, log_score_traces, posterior_difference_heatmap
import holoviews as hv
hv.extension("bokeh")

asia = bx.networks.load("asia")
df = asia.sample(500, random_state=0)
list(df.columns)"""),
    ("md", """## Why the order matters
Each order gives its own evidence `P(D | order)` (the sum over its DAGs) and its own arc
posteriors. Three orders: one consistent with the true network, its reverse, and the order of
the greedy thick-thin search's DAG."""),
    ("code", """true_order = list(nx.topological_sort(asia.dag))
gtt = bx.search.greedy_thick_thin(df, prior="K2").dag
gtt_order = list(nx.lexicographical_topological_sort(gtt, key=list(df.columns).index))
orders = {"true": true_order, "reversed": true_order[::-1], "greedy": gtt_order}
fixed = {name: OrderedAveraging(df, order=o, max_parents=2) for name, o in orders.items()}
pd.DataFrame({name: {"log P(D | order)": avg.log_evidence,
                     "P(either -> xray)": avg.arc_posteriors().loc["either", "xray"],
                     "P(xray -> either)": avg.arc_posteriors().loc["xray", "either"]}
              for name, avg in fixed.items()}).T.round(3)"""),
    ("md", """The reversed order cannot have `either -> xray` at all: a fixed order decides the direction of
every arc before the data are looked at. Averaging over orders lets the data decide."""),
    ("md", """## Exact averaging over all orders
`AllOrders` sums over all `8! = 40,320` orders and, for each, over all its DAGs with at most `k`
parents. Its `log_evidence` is the log of the **mean** over orders of `P(D | order)` (the uniform
prior `1/N!` over orders is included)."""),
    ("code", """ao = AllOrders(df, max_parents=2)
print(ao)
every = [OrderedAveraging(df, order=list(o), max_parents=2).log_evidence
         for o in itertools.islice(itertools.permutations(df.columns), 0, None, 997)]  # a sample of orders
print(f"log evidence: all orders {ao.log_evidence:.2f}; single orders from {min(every):.2f} to {max(every):.2f}")"""),
    ("code", """post = ao.arc_posteriors()
(arc_posterior_heatmap(fixed["greedy"].arc_posteriors(), title="One (greedy) order", width=420, height=380)
 + arc_posterior_heatmap(post, title="All orders (exact)", width=420, height=380)
 + posterior_difference_heatmap(post - fixed["greedy"].arc_posteriors(), width=420, height=380))"""),
    ("md", """## What the order-modular prior does
The exact sum factorises only under the **order-modular prior**: orders uniform, and given an
order, DAGs weighted by a modular prior. Summing out the order, a DAG gets prior weight
proportional to its **number of linear extensions** (the orders it is consistent with). For
three variables:"""),
    ("code", """def n_extensions(g):
    return sum(1 for _ in nx.all_topological_sorts(g))

examples = {"empty": [], "one arc A->B": [("A", "B")], "V: A->C<-B": [("A", "C"), ("B", "C")],
            "fork: A->B, A->C": [("A", "B"), ("A", "C")], "chain A->B->C": [("A", "B"), ("B", "C")],
            "complete": [("A", "B"), ("A", "C"), ("B", "C")]}
rows = {}
for name, arcs in examples.items():
    g = nx.DiGraph(arcs); g.add_nodes_from("ABC")
    rows[name] = n_extensions(g)
pd.Series(rows, name="linear extensions (relative prior weight)")"""),
    ("md", """The empty graph weighs six times a chain, and the two Markov-equivalent structures
`A->B->C` and the fork `A->B, A->C` get different prior weights (1 and 2). The bias is towards
sparse, shallow DAGs; it is the price of an exact sum over orders. A modular structure prior can be
added on top (`structure_prior=`, as in `OrderedAveraging`), e.g. a penalty per parent:"""),
    ("code", """sparse = AllOrders(df, max_parents=2, structure_prior=lambda child, parents: -2.0 * len(parents))
(sparse.arc_posteriors() - post).abs().max().max()"""),
    ("md", """## Order MCMC
Beyond about 20 variables the `2^N` tables do not fit (AllOrders refuses *before* allocating
them). Order MCMC walks over orders: propose swapping two nodes (adjacent, or a random pair),
accept with the Metropolis-Hastings rule on `P(D | order)`. Every family score is computed once;
a move recomputes only the nodes between the swapped positions. Several chains start from
dispersed orders (a random order and its reverse)."""),
    ("code", """res = order_mcmc(df, max_parents=2, n_iter=20_000, n_chains=4, random_state=0)
print(res)
table = res.summary().head(10)
table["exact"] = [post.loc[p, c] for p, c in zip(table.parent, table.child)]
table.round(4)"""),
    ("md", """## Reading convergence
* **Traces** of the log order score should overlap and look like noise around a level (the grey
  band is the burn-in, left out of the statistics).
* **R-hat** compares the spread between chains with the spread within them: near 1 (below 1.05)
  means the chains agree. Arcs whose R-hat is large are the ones to distrust.
* **ESS**, the effective sample size, is how many independent draws the correlated chain is
  worth; the Monte Carlo standard error is the posterior sd over its square root."""),
    ("code", """log_score_traces(res.traces, thin=res.thin, burn_in=res.burn_in) + arc_error_bars(res.summary())"""),
    ("code", """err = (res.arc_posteriors() - post).abs()
print(f"R-hat max {res.rhat_max:.3f}, log-score ESS {res.log_score_ess:.0f}, "
      f"largest error {err.max().max():.4f}, largest error in standard errors "
      f"{np.nanmax((err / res.stderr.replace(0, np.nan)).to_numpy()):.1f}")"""),
    ("md", """A chain that has not converged: ALARM's 37 variables with 2,000 rows and very short chains.
The diagnostics say so; `resume` runs the same chains further."""),
    ("code", """alarm = bx.networks.load("alarm").sample(2_000, random_state=0)
short = order_mcmc(alarm, max_parents=2, n_iter=2_000, n_chains=4, random_state=0, thin=10)
print(f"after {short.n_iter:,} iterations: R-hat max {short.rhat_max:.2f}, converged: {short.converged()}")
short.resume(8_000)
print(f"after {short.n_iter:,} iterations: R-hat max {short.rhat_max:.2f}, converged: {short.converged()}")
log_score_traces(short.traces, thin=short.thin, burn_in=short.burn_in, title="ALARM: log order score")"""),
    ("md", """## DAGs drawn from the sampled orders
With `sample_dags=True`, each kept order also yields one DAG drawn from its exact posterior; arc
frequencies over these DAGs estimate the same posteriors (with more noise)."""),
    ("code", """res = order_mcmc(df, max_parents=2, n_iter=8_000, n_chains=2, random_state=1, sample_dags=True)
dags = res.dags()
freq = pd.Series([e for g in dags for e in g.edges]).value_counts() / len(dags)
freq.head(8).round(3)"""),
    ('md', "## Explore: one order against all orders\nThe Averaging over orders app as a component on this notebook's `df`: move k (`max_parents`), switch to order MCMC and change its iterations or `random_state`."),
    ('code', 'import panel as pn\npn.extension("tabulator", inline=True)   # offline: Panel\'s scripts go into the notebook\napp = bx.apps.AllOrders(df, max_parents=1)\napp'),
]
nb = nbf.v4.new_notebook()
nb.cells = [nbf.v4.new_markdown_cell(src) if kind == "md" else nbf.v4.new_code_cell(src) for kind, src in cells]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
out = Path(__file__).parent / "06_all_orders.ipynb"
nbf.write(nb, out)
print(out)
