"""Generate notebooks/05_ismb.ipynb (no outputs): python notebooks/_make_05.py"""
from pathlib import Path

import nbformat as nbf

cells = [
    nbf.v4.new_markdown_cell(
        "# Instance-specific Markov blanket model averaging (ISMB)\n\n"
        "Visweswaran & Cooper: search the space of Markov blanket (MB) structures of the target "
        "in two phases - greedy hill climbing on the K2 marginal likelihood, then best-first "
        "search on an instance-specific KL score - and average the predictions of the models "
        "found, weighted by their scores (Eq. 13)."),
    nbf.v4.new_code_cell(
        "import holoviews as hv\nimport numpy as np\nimport bnexplore as bx\n"
        "from bnexplore import ismb\nfrom bnexplore.viz import ismb as vz\nhv.extension('bokeh')"),
    nbf.v4.new_markdown_cell("## The model space\nNumber of MB structures for n predictors "
                             "(enumerated; the paper's 15, 153, 3567) and the operator rules of Figure 4."),
    nbf.v4.new_code_cell(
        "print([ismb.count_markov_blankets(n) for n in (2, 3, 4)])\n"
        "print([ismb.count_markov_blankets(n, method='formula') for n in range(2, 9)])\n"
        "ismb.OPERATOR_TABLE.pivot_table(index=['operator', 'tail'], columns='head', "
        "values='validity', aggfunc='first').fillna('-')"),
    nbf.v4.new_code_cell(
        "mb = ismb.MarkovBlanket(['Z', 'X4', 'X5'], 'Z', {'X4': ['Z'], 'X5': ['Z', 'X4']})\n"
        "print(mb)\nprint('delete Z->X5: ', ismb.apply_operator(mb, 'delete', 'Z', 'X5'))\n"
        "print('reverse Z->X5:', ismb.apply_operator(mb, 'reverse', 'Z', 'X5'))  # Figure 5 clean-up"),
    nbf.v4.new_markdown_cell(
        "## The synthetic domain of section 6.4\nZ = A or (B and C and D); 69 training cases with "
        "A = T only 5 times, three A = T test cases. Complete model averaging over all 3567 "
        "blankets is the reference (Table 3)."),
    nbf.v4.new_code_cell(
        "from bnexplore.experiments.ismb import synthetic_domain, ismb_synthetic, SPLIT_PAPER\n"
        "per_case, results = synthetic_domain()\nper_case.round(3)"),
    nbf.v4.new_code_cell(
        "import pandas as pd\npd.DataFrame(ismb_synthetic(SPLIT_PAPER, 1000, 1e-3, random_state=0))"
        "[['method', 'misclassification', 'log_loss', 'squared_error', 'cal']].round(4)"),
    nbf.v4.new_markdown_cell("## Figure 8: the estimate as models are added\nBlack: running "
                             "estimate P(Z = T | x, D); grey: log score of each model; dashed: end of phase 1."),
    nbf.v4.new_code_cell(
        "r = results[0]\nvz.trace_pair(r['ismb'].trace(), r['nismb'].trace(), 'T')"),
    nbf.v4.new_code_cell(
        "top = r['ismb'].top_models(3)\nvz.blanket_grid([m for m, _, _ in top], [w for _, _, w in top])"),
    nbf.v4.new_markdown_cell("## As a classifier\n`ISMB` follows scikit-learn conventions; "
                             "`predict_report` returns the search behind each prediction "
                             "(its statistics and the trace of every instance)."),
    nbf.v4.new_code_cell(
        "from bnexplore.classifiers import ISMB\n"
        "df = bx.datasets.load('vote', missing='state')\nX, y = df.drop(columns='Class'), df['Class']\n"
        "clf = ISMB(queue_width=1000, epsilon=1e-3).fit(X.iloc[10:], y.iloc[10:])\n"
        "report = clf.predict_report(X.iloc[:10])\nprint(report.proba.round(3))\n"
        "print(report.search_stats)\nreport.trace().tail()"),
    nbf.v4.new_markdown_cell('## Explore: the queue width\nMove `queue_width` (the number of blankets ISMB keeps per phase) and compare the methods on the synthetic domain.'),
    nbf.v4.new_code_cell('import panel as pn\npn.extension("tabulator", inline=True)   # offline: Panel\'s scripts go into the notebook\nimport pandas as pd\nw = pn.widgets.DiscreteSlider(name="queue_width", options=[10, 30, 100, 300, 1000], value=100)\npn.Column(w, pn.bind(lambda queue_width: pd.DataFrame(ismb_synthetic(SPLIT_PAPER, queue_width, 1e-3, random_state=0))\n                     [["method", "misclassification", "log_loss", "squared_error", "cal"]].round(4), w))'),
]
nb = nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                               "language": "python"}})
out = Path(__file__).resolve().parent / "05_ismb.ipynb"
nbf.write(nb, out)
print("wrote", out)
