"""Generate notebooks/07_priors.ipynb (no outputs): python notebooks/_make_07.py"""
from pathlib import Path

import nbformat as nbf

cells = [
    ("md", """# Priors over structures: order-modular or uniform over DAGs?

Averaging over every node order (`AllOrders`, order MCMC) is exact and fast, but it puts a prior
on the structures that most users do not expect: orders are uniform, and a DAG is counted once
**per order it is consistent with** (its number of *linear extensions*). So a DAG's prior weight is
proportional to its number of linear extensions: the empty graph, consistent with every order,
weighs `N!` times a chain. `AllDAGs` (exact, Tian & He 2009) and `partition_mcmc` (Kuipers &
Moffa 2017) average under the prior most users believe they get: **every DAG equally likely**.

On five variables every DAG can be listed (29,281 of them), so both priors and both posteriors
can be computed by brute force, one DAG at a time, and checked against the engines."""),
    ("code", """import itertools, math
import numpy as np
import pandas as pd
import bnexplore as bx
from bnexplore.averaging import AllDAGs, AllOrders

names = ["smoke", "lung", "bronc", "either", "dysp"]
df = bx.networks.load("asia").sample(200, random_state=0)[names].reset_index(drop=True)
n = len(names)
df.head()"""),
    ("md", """## Every DAG on five nodes
A graph is a set of the 20 possible arcs, so a 20-bit number. For each of the `5! = 120` orders,
the arcs pointing backwards are forbidden; a graph is consistent with the order when it has none
of them. Counting the orders each of the `2^20` graphs is consistent with gives at once which are
DAGs (at least one order) and their numbers of linear extensions."""),
    ("code", """arcs = [(u, v) for u in range(n) for v in range(n) if u != v]      # bit i is arc arcs[i]
graphs = np.arange(1 << len(arcs), dtype=np.int64)
extensions = np.zeros(graphs.size, dtype=np.int64)
for order in itertools.permutations(range(n)):
    pos = np.argsort(order)
    backwards = sum(1 << i for i, (u, v) in enumerate(arcs) if pos[u] > pos[v])
    extensions += (graphs & backwards) == 0
dags, extensions = graphs[extensions > 0], extensions[extensions > 0]
has = np.array([(dags >> i) & 1 for i in range(len(arcs))], dtype=bool).T   # (DAG, arc)
in_degree = np.stack([has[:, [i for i, (u, w) in enumerate(arcs) if w == v]].sum(axis=1)
                      for v in range(n)], axis=1)
print(f"{dags.size:,} DAGs (the known count for 5 labelled nodes is 29,281); "
      f"{extensions.sum():,} (order, DAG) pairs = 5! x 2^10 = {math.factorial(5) * 2**10:,}")"""),
    ("md", """## The prior each prior gives every DAG
With at most `k` parents per node, the uniform prior gives every allowed DAG `1 / #DAGs`; the
order-modular prior gives it `extensions / sum of extensions`. Every DAG is listed below (sorted by
its order-modular prior; pandas shows the first and last rows)."""),
    ("code", """def listing(k):
    keep = (in_degree <= k).all(axis=1)
    ext = extensions[keep]
    return pd.DataFrame({
        "arcs": [", ".join(f"{names[u]}->{names[v]}" for (u, v), h in zip(arcs, row) if h) or "(empty)"
                 for row in has[keep]],
        "n_arcs": has[keep].sum(axis=1),
        "linear extensions": ext,
        "prior, uniform over DAGs": 1.0 / keep.sum(),
        "prior, order-modular": ext / ext.sum(),
    }).sort_values("prior, order-modular", ascending=False, kind="stable").reset_index(drop=True)

every = listing(4)
every"""),
    ("code", """empty = every[every.arcs == "(empty)"].iloc[0]
print(f"empty graph: {empty['prior, order-modular'] / empty['prior, uniform over DAGs']:.1f} times more "
      f"likely a priori under the order-modular prior than under the uniform one")
every.groupby("n_arcs")[["linear extensions", "prior, uniform over DAGs", "prior, order-modular"]].agg(
    {"linear extensions": "mean", "prior, uniform over DAGs": "sum", "prior, order-modular": "sum"}).round(4)"""),
    ("md", """The order-modular prior puts far more mass on sparse graphs, and it even separates
Markov-equivalent DAGs, which the data can never tell apart: the chain `smoke->lung->either` and
the fork `lung->smoke, lung->either` encode the same independences, yet the fork has twice the
linear extensions of the chain, so twice its prior (the collider `smoke->lung<-either`, which the
data *can* tell apart, has as many as the fork). Whatever the data say about *which* pairs are
joined, the prior alone decides part of *how* they are oriented."""),
    ("code", """def arcs_of(text):
    return every[every.arcs == text][["arcs", "linear extensions", "prior, order-modular"]]

pd.concat([arcs_of("smoke->lung, lung->either"), arcs_of("lung->smoke, lung->either"),
           arcs_of("smoke->lung, either->lung")])"""),
    ("md", """## Arc posteriors under both priors, by brute force
Each DAG's log posterior is the sum of its five family scores (K2 here) plus its log prior.
The family scores come from `bx.scores.LocalScore`; every arc posterior is the posterior mass of
the DAGs holding the arc. The engines compute the same numbers without listing any DAG:
`AllDAGs` (uniform) and `AllOrders` (order-modular)."""),
    ("code", """ls = bx.scores.LocalScore(df)
subsets = {v: [tuple(s) for m in range(n) for s in itertools.combinations([u for u in range(n) if u != v], m)]
           for v in range(n)}
family = {(v, s): ls.score(names[v], [names[u] for u in s]) for v in range(n) for s in subsets[v]}
bit = {a: i for i, a in enumerate(arcs)}
parents = [[tuple(u for u in range(n) if u != v and row[bit[u, v]]) for v in range(n)] for row in has]
log_lik = np.array([sum(family[v, ps[v]] for v in range(n)) for ps in parents])

def brute_force(k):
    keep = (in_degree <= k).all(axis=1)
    out = {}
    for label, log_prior in (("uniform over DAGs", np.zeros(keep.sum())),
                             ("order-modular", np.log(extensions[keep]))):
        w = log_lik[keep] + log_prior
        w = np.exp(w - w.max()); w /= w.sum()
        post = w @ has[keep]
        out[label] = pd.DataFrame([[post[bit[u, v]] if u != v else 0.0 for v in range(n)]
                                   for u in range(n)], index=names, columns=names)
    return out

bf = brute_force(2)
exact_u = AllDAGs(df, max_parents=2).arc_posteriors()
exact_o = AllOrders(df, max_parents=2).arc_posteriors()
err_u = float((bf["uniform over DAGs"] - exact_u).abs().max().max())
err_o = float((bf["order-modular"] - exact_o).abs().max().max())
print(f"brute force vs AllDAGs: {err_u:.1e}; vs AllOrders: {err_o:.1e}")
assert err_u < 1e-9 and err_o < 1e-9"""),
    ("code", """def side_by_side(post):
    rows = [(names[u], names[v]) for u in range(n) for v in range(n) if u != v]
    t = pd.DataFrame(rows, columns=["parent", "child"])
    for label, frame in post.items():
        t[f"P(arc), {label}"] = [frame.loc[a, b] for a, b in rows]
    t["difference"] = t["P(arc), uniform over DAGs"] - t["P(arc), order-modular"]
    return t.sort_values("difference", key=abs, ascending=False).reset_index(drop=True)

side_by_side(bf).head(10).round(3)"""),
    ("md", """## Joined, or oriented?
The difference between the priors sits mostly in the *direction* of arcs. Adding the two
directions gives the posterior that the pair is joined at all, which the data decide much more
firmly; splitting it into `u->v` and `v->u` is where Markov equivalence leaves room for the prior."""),
    ("code", """edge = {label: frame + frame.T for label, frame in bf.items()}
print(f"largest difference: arcs {max(abs(side_by_side(bf).difference)):.3f}, "
      f"pairs {float((edge['uniform over DAGs'] - edge['order-modular']).abs().max().max()):.3f}")"""),
    ("md", """## More parents allowed
The bias depends on `k` (the largest parent set): with more parents the DAG space grows and the
spread of linear extensions with it. Move `max_parents` (brute force over the listed DAGs, K2)."""),
    ("code", """import panel as pn
pn.extension("tabulator", inline=True)   # offline: Panel's scripts go into the notebook

k_slider = pn.widgets.IntSlider(name="max_parents", start=1, end=4, value=2)

def compare(max_parents):
    t = side_by_side(brute_force(max_parents)).round(3)
    return pn.Column(f"**k = {max_parents}**: {int((in_degree <= max_parents).all(axis=1).sum()):,} DAGs; "
                     f"largest arc difference {t.difference.abs().max():.3f}",
                     pn.widgets.Tabulator(t.head(10), show_index=False, disabled=True))

pn.Column(k_slider, pn.bind(compare, k_slider))"""),
    ("md", """## Edge confidence, side by side
The Edge confidence app on this notebook's `df`: both priors, their difference, the bootstrap arc
frequency (hill climbing on resampled rows, no prior) with its significance threshold (Scutari &
Nagarajan 2013), and the arcs where Bayes and bootstrap disagree by more than 0.3. Its `ess` slider
re-averages under BDeu: Silander, Kontkanen & Myllymaki (2007) showed that the learned structure
can change a lot with it. Move `max_parents` and `ess`."""),
    ("code", """app = bx.apps.EdgeConfidence(df, max_parents=2, n_boot=20)
app"""),
]
nb = nbf.v4.new_notebook()
nb.cells = [nbf.v4.new_markdown_cell(src) if kind == "md" else nbf.v4.new_code_cell(src) for kind, src in cells]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
out = Path(__file__).parent / "07_priors.ipynb"
nbf.write(nb, out)
print(out)
