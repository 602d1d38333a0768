"""Generate notebooks/04_clustering.ipynb (no outputs): python notebooks/_make_04.py"""
from pathlib import Path

import nbformat as nbf

cells = [
    nbf.v4.new_markdown_cell(
        "# Incremental model selection from a clustering hierarchy (Castelo & Siebes)\n\n"
        "Greedy model selection looks at many candidate models; Castelo & Siebes count "
        "`q`, the candidates that *improve the fit* at each step, and show that selecting "
        "models first in small sub-spaces - clusters of variables found by a Cramer's V "
        "hierarchy - and joining them (union of arcs) as starting models for larger "
        "sub-spaces cuts `q` several times while ending at the same model."),
    nbf.v4.new_code_cell(
        "import networkx as nx\n"
        "import holoviews as hv\n"
        "import bnexplore as bx\n"
        "from bnexplore import clustering as C\n"
        "from bnexplore.viz import clustering as V\n"
        "hv.extension('bokeh')\n"
        "bn = bx.networks.load('alarm')\n"
        "df = bn.sample(5000, random_state=0)\n"
        "order = list(nx.topological_sort(bn.dag))   # the paper uses the true order\n"
        "ls = bx.scores.LocalScore(df, prior='K2')"),
    nbf.v4.new_markdown_cell("## 1. Cramer's V and the complete-linkage hierarchy\n"
                             "The radius of a cluster is the smallest association inside it."),
    nbf.v4.new_code_cell(
        "v = C.cramers_v(df)\n"
        "root = C.hierarchy(association=v)\n"
        "clusters = C.incremental_strategy(root, 4)   # Figure 1\n"
        "print([len(c) for c in clusters])\n"
        "V.dendrogram_plot(root, clusters, title='ALARM: hierarchy and clusters for cs = 4')"),
    nbf.v4.new_markdown_cell("Figure 1 on the eight-variable example of Figure 2: root children of "
                             "sizes 3 and 5, cluster size 4."),
    nbf.v4.new_code_cell(
        "C.incremental_strategy([[['a', 'b'], 'c'], [['d', 'e'], [['f', 'g'], 'h']]], 4)"),
    nbf.v4.new_markdown_cell("## 2. Greedy against incremental selection (Table 1, Figures 4 and 8)"),
    nbf.v4.new_code_cell(
        "import pandas as pd\n"
        "g = C.greedy_search(score=ls, order=order)\n"
        "rows = []\n"
        "for cs in (4, 5, 6):\n"
        "    for strategy, seed in (('hc', 0), ('random', 0), ('random', 1)):\n"
        "        inc = C.incremental_search(score=ls, cluster_size=cs, strategy=strategy, random_state=seed, order=order)\n"
        "        rows.append({'cs': cs, 'strategy': strategy, 'grouping': seed if strategy == 'random' else '',\n"
        "                     'q': inc.q, 'ratio': round(g.q / inc.q, 2),\n"
        "                     'same model': set(inc.dag.edges) == set(g.dag.edges)})\n"
        "print('greedy q =', g.q)\n"
        "pd.DataFrame(rows)"),
    nbf.v4.new_code_cell(
        "inc = C.incremental_search(score=ls, cluster_size=4, order=order)\n"
        "traces = {'greedy': g.q_trace, 'incremental (hc, cs=4)': inc.q_trace}\n"
        "(V.q_timeline_plot(traces, normalize_by=len(g.q_trace), title='improving models per step')\n"
        " + V.q_timeline_plot(traces, cumulative=True, normalize_by=len(g.q_trace), title='q')).cols(1)"),
    nbf.v4.new_markdown_cell("## 3. The honeycomb network (Figures 5-7)\n"
                             "Eight hexagonal cells of six variables; fresh CPTs per sample. "
                             "Do the clusters of the hierarchy follow the cells?"),
    nbf.v4.new_code_cell(
        "hb, cells = C.honeycomb_network(random_state=0)\n"
        "hdf = hb.sample(5000, random_state=0)\n"
        "horder = list(nx.topological_sort(hb.dag))\n"
        "hinc = C.incremental_search(hdf, cluster_size=4, order=horder)\n"
        "hg = C.greedy_search(hdf, order=horder)\n"
        "print('purity', round(C.cluster_purity(hinc.clusters, cells), 2),\n"
        "      'connected', sum(C.connected_clusters(hinc.clusters, hb.dag)), 'of', len(hinc.clusters),\n"
        "      'q ratio', round(hg.q / hinc.q, 2))\n"
        "V.strategy_frame(hinc.clusters, cells)"),
    nbf.v4.new_markdown_cell("The first four sub-spaces of the incremental search (Figure 6): the "
                             "network found so far, the sub-space being explored outlined."),
    nbf.v4.new_code_cell(
        "pos = V.honeycomb_layout(cells)\n"
        "hv.Layout([V.subspace_plot(hinc.model_at(k), hinc.subspaces[k], layout=pos, clusters=hinc.clusters,\n"
        "                           title=f'sub-space {k + 1} ({hinc.kinds[k]})', width=450, height=300)\n"
        "           for k in range(4)]).cols(2)"),
    nbf.v4.new_markdown_cell('## Explore: the cluster size\nMove `cluster_size`: the incremental strategy cuts the hierarchy into other clusters.'),
    nbf.v4.new_code_cell('import panel as pn\npn.extension("tabulator", inline=True)   # offline: Panel\'s scripts go into the notebook\ncs = pn.widgets.IntSlider(name="cluster_size", start=2, end=10, value=4)\npn.Column(cs, pn.bind(lambda cluster_size: V.dendrogram_plot(\n    root, C.incremental_strategy(root, cluster_size),\n    title=f"ALARM: hierarchy and clusters for cluster_size = {cluster_size}"), cs))'),
]
nb = nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                               "language": "python"}})
nbf.write(nb, Path(__file__).with_name("04_clustering.ipynb"))
