"""Generate notebooks/07_priors_over_structures.ipynb (no outputs): python notebooks/_make_07.py"""
from pathlib import Path

import nbformat as nbf

cells = [
    ("md", """# Priors over structures: order-modular or uniform over DAGs

An arc posterior is only as meaningful as the prior over structures it is computed under.
bnexplore offers two:

* **order-modular** (`AllOrders`, `order_mcmc`): orders uniform, and given an order the DAGs
  consistent with it weighted alike. Summed over the orders, a DAG's prior is proportional to its
  **number of linear extensions**: the empty graph on `N` nodes weighs `N!` times a chain.
* **uniform over DAGs** (`AllDAGs`, `partition_mcmc`): every DAG with at most `k` parents per node
  equally likely a priori, what most users assume they get.

On 5 variables every DAG can be listed, so both posteriors can be computed by brute force and
compared with the exact engines."""),
    ("code", """import itertools, math
import numpy as np
import pandas as pd
import bnexplore as bx
from bnexplore.scores import LocalScore
from scipy.special import logsumexp

asia = bx.networks.load("asia")
cols = ["smoke", "lung", "bronc", "either", "dysp"]
df = asia.sample(500, seed=0)[cols]
k = 2"""),
    ("md", """## Every DAG, listed
Each node picks a parent set of at most `k` others; the assignments without a cycle are the DAGs.
For each DAG: its log score (the sum of its family scores) and its number of linear extensions
(counted by a dynamic programme over the subsets: the orders of `S` whose last node is a sink of
`S`)."""),
    ("code", """def every_dag(df, k):
    ls = LocalScore(df, cache=False)
    p = df.shape[1]
    sets = [[c for s in range(k + 1) for c in itertools.combinations([u for u in range(p) if u != v], s)]
            for v in range(p)]
    masks = [np.array([sum(1 << u for u in c) for c in sv]) for sv in sets]
    scores = [np.array([ls.score(v, list(c)) for c in sv]) for v, sv in enumerate(sets)]
    idx = [g.ravel() for g in np.meshgrid(*[np.arange(len(m)) for m in masks], indexing="ij")]
    pa = np.stack([masks[v][idx[v]] for v in range(p)], axis=1)
    done = np.zeros(len(pa), dtype=np.int64)
    for _ in range(p):  # peel nodes whose parents are all peeled
        done |= (((pa & ~done[:, None]) == 0) * (1 << np.arange(p))).sum(axis=1)
    keep = done == (1 << p) - 1
    pa = pa[keep]
    logscore = sum(scores[v][idx[v][keep]] for v in range(p))
    ext = np.zeros((1 << p, len(pa)))
    ext[0] = 1
    for S in range(1, 1 << p):
        for v in range(p):
            if S >> v & 1:
                sink = (pa[:, v] & ~(S ^ (1 << v))) == 0  # v's parents inside S - v ...
                for w in range(p):  # ... and no child of v inside S
                    if S >> w & 1 and w != v:
                        sink &= (pa[:, w] >> v & 1) == 0
                ext[S] += np.where(sink, ext[S ^ (1 << v)], 0)
    return pa, logscore, ext[-1]

pa, logscore, n_ext = every_dag(df, k)
print(f"{len(pa):,} DAGs with at most {k} parents; linear extensions from {n_ext.min():.0f} to {n_ext.max():.0f}")"""),
    ("md", """## The two priors, DAG by DAG
Uniform: `1 / #DAGs`. Order-modular: `ext(G) / sum ext`. The empty graph and a chain:"""),
    ("code", """prior_u = np.full(len(pa), 1 / len(pa))
prior_om = n_ext / n_ext.sum()
empty = np.flatnonzero((pa == 0).all(axis=1))[0]
chain = np.flatnonzero(n_ext == 1)[0]
pd.DataFrame({"uniform": [prior_u[empty], prior_u[chain]], "order-modular": [prior_om[empty], prior_om[chain]]},
             index=["empty graph", "a chain (one linear extension)"]).assign(
    ratio=lambda t: t["order-modular"] / t["uniform"])"""),
    ("md", """## Posteriors by brute force, and by the exact engines
The posterior of an arc is the posterior mass of the DAGs holding it. `AllDAGs` (uniform) and
`AllOrders` (order-modular) compute the same numbers without listing a single DAG."""),
    ("code", """def arcs(weights):
    w = weights / weights.sum()
    p = pa.shape[1]
    return pd.DataFrame([[w[(pa[:, v] >> u) & 1 == 1].sum() if u != v else 0 for v in range(p)] for u in range(p)],
                        index=pd.Index(cols, name="parent"), columns=pd.Index(cols, name="child"))

brute_u = arcs(np.exp(logscore - logscore.max()))
brute_om = arcs(np.exp(logscore - logscore.max()) * n_ext)
ad = bx.averaging.AllDAGs(df, max_parents=k)
ao = bx.averaging.AllOrders(df, max_parents=k)
print(ad.graph_prior, "| largest difference from brute force:", float((ad.arc_posteriors() - brute_u).abs().max().max()))
print(ao.graph_prior, "| largest difference from brute force:", float((ao.arc_posteriors() - brute_om).abs().max().max()))"""),
    ("code", """diff = ao.arc_posteriors() - ad.arc_posteriors()
print("order-modular minus uniform, per arc (largest |difference| %.3f):" % diff.abs().max().max())
diff.round(3)"""),
    ("md", """## More data does not remove it
With more rows both priors agree on which pairs are joined (the undirected edge posteriors), but
the direction of arcs whose Markov-equivalent orientations score alike is left to the prior."""),
    ("code", """rows = {}
for n in (500, 5000):
    d = asia.sample(n, seed=1)[cols]
    u, o = bx.averaging.AllDAGs(d, max_parents=k), bx.averaging.AllOrders(d, max_parents=k)
    pu, po = u.arc_posteriors().to_numpy(), o.arc_posteriors().to_numpy()
    rows[n] = {"largest edge difference": np.abs((pu + pu.T) - (po + po.T)).max(),
               "largest arc difference": np.abs(pu - po).max()}
pd.DataFrame(rows).T.round(3)"""),
    ("md", """## Beyond exact sums: partition MCMC, and the bootstrap beside them
`partition_mcmc` samples under the uniform prior (Kuipers & Moffa 2017) and says whether its
chains converged; `arc_table` puts every method's arcs side by side, each column labelled with its
prior over structures (the bootstrap has none: its numbers are frequencies of a search's answers)."""),
    ("code", """pm = bx.averaging.partition_mcmc(df, max_parents=k, n_iter=40_000, n_chains=4, random_state=0)
print(pm.convergence)
exact = ad.arc_posteriors()
err = (pm.arc_posteriors() - exact).abs()
z = (err / pm.stderr.where(pm.stderr > 0)).where((exact > 0.01) & (exact < 0.99))
print(f"largest |MCMC - exact| {err.max().max():.4f}; in standard errors, over the arcs with posterior "
      f"in (0.01, 0.99): {z.max().max():.2f}")"""),
    ("md", """The standard errors come from the draws: an arc whose posterior is far below `1 / ESS` lives
in partitions the chains hardly visit, so its error is larger than its standard error says (a few
`1e-5` here), while its absolute error stays tiny."""),
    ("code", """table = bx.averaging.arc_table(df, max_parents=k, n_boot=30, random_state=0)
table.sort_values(table.columns[4], ascending=False).head(10).round(3)"""),
]

nb = nbf.v4.new_notebook()
nb.cells = [nbf.v4.new_markdown_cell(src) if kind == "md" else nbf.v4.new_code_cell(src) for kind, src in cells]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbf.write(nb, Path(__file__).with_name("07_priors_over_structures.ipynb"))
