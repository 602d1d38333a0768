"""Generate notebooks/02_mixture_weights.ipynb (no outputs): python notebooks/_make_02.py"""
from pathlib import Path

import nbformat as nbf

cells = [
    nbf.v4.new_markdown_cell(
        "# Mixture weights of one-dependence estimators\n\n"
        "Cerquides & Lopez de Mantaras, *Robust Bayesian linear classifier ensembles* (2005). "
        "An ODE with super-parent `u` models `P_u(c, x) = P_u(c, x_u) prod_v P_u(x_v | c, x_u)` "
        "(Eq. 14-16). AODE averages them uniformly (Eq. 17), BMAAODE weights them by the "
        "posterior probability of each root (Theorems 1-2), MAPLMD and MAPLMG learn MAP weights "
        "of a linear mixture (Eq. 8, Eq. 10) from leave-one-out ODE estimates (Eq. 30-32)."),
    nbf.v4.new_code_cell(
        "import warnings\nimport numpy as np\nimport pandas as pd\nimport holoviews as hv\n"
        "import bnexplore as bx\n"
        "from bnexplore.classifiers import AODE, BMAAODE, MAPLMD, MAPLMG\n"
        "from bnexplore.viz.mixtures import weights_bars, bma_collapse_plot\n"
        "hv.extension('bokeh')"),
    nbf.v4.new_markdown_cell("## Weights on the *vote* data (missing votes as their own state)"),
    nbf.v4.new_code_cell(
        "df = bx.datasets.load('vote', missing='state')\n"
        "X, y = df.drop(columns='Class'), df['Class']\n"
        "idx = np.random.default_rng(0).permutation(len(df))\n"
        "train, test = idx[:290], idx[290:]\n"
        "models = {'uniform (AODE)': AODE(), 'BMA': BMAAODE(), 'MAPLMD': MAPLMD(), 'MAPLMG': MAPLMG()}\n"
        "for m in models.values():\n    m.fit(X.iloc[train], y.iloc[train])\n"
        "W = pd.DataFrame({k: m.weights_ for k, m in models.items()})\n"
        "W.round(3)"),
    nbf.v4.new_code_cell("weights_bars(W)"),
    nbf.v4.new_markdown_cell(
        "MAPLMG's weights satisfy the KKT conditions of Eq. 10 on the simplex: every component "
        "of the gradient (Eq. 13) equals the multiplier `n` (the number of super-parents)."),
    nbf.v4.new_code_cell(
        "from bnexplore import mixtures as mx\n"
        "g = models['MAPLMG']\n"
        "f, grad = mx.maplmg_objective(g.weights_.to_numpy(), mx.ode_log_joint_loo(g.counts_), g.counts_.y)\n"
        "print('gradient range', grad.min().round(4), grad.max().round(4), '  n =', len(grad))"),
    nbf.v4.new_markdown_cell("## Test-set performance"),
    nbf.v4.new_code_cell(
        "from bnexplore.metrics import auc, error_rate, log_loss\n"
        "rows = []\n"
        "for k, m in models.items():\n"
        "    p = m.predict_proba(X.iloc[test])\n"
        "    yt = y.iloc[test].to_numpy()\n"
        "    rows.append({'method': k, 'AUC': auc(yt, p, classes=m.classes_),\n"
        "                 'error': error_rate(yt, p, classes=m.classes_),\n"
        "                 'log loss': log_loss(yt, p, classes=m.classes_)})\n"
        "pd.DataFrame(rows).round(4)"),
    nbf.v4.new_markdown_cell(
        "## BMA collapses onto one root as the sample grows\n\n"
        "The paper's explanation of BMAAODE's poor results: the posterior assumes that one ODE "
        "generated the data, so after a few observations almost all weight sits on one model."),
    nbf.v4.new_code_cell(
        "rows = []\n"
        "for n in [10, 20, 40, 80, 160, 290]:\n"
        "    w = BMAAODE().fit(X.iloc[train[:n]], y.iloc[train[:n]]).weights_\n"
        "    rows += [{'n_train': n, 'attribute': a, 'weight': v} for a, v in w.items()]\n"
        "path = pd.DataFrame(rows)\n"
        "print(path.groupby('n_train').weight.max().round(4))\n"
        "bma_collapse_plot(path)"),
    nbf.v4.new_markdown_cell(
        "## A reduced run of the paper's random-network experiment (Table 2)\n\n"
        "The full grid is `bnexplore run cerquides_random_bn --size full`; see "
        "`docs/reproduction/cerquides.md` for the larger run."),
    nbf.v4.new_code_cell(
        "from bnexplore.experiments import run\n"
        "from bnexplore.experiments.cerquides import random_bn_trial, wdl_table\n"
        "with warnings.catch_warnings():\n    warnings.simplefilter('ignore')\n"
        "    res = run(random_bn_trial, {'n_attributes': [5], 'max_arity': [5], 'max_parents': [2],\n"
        "                                'max_size': 400}, random_states=range(4), progress=False)\n"
        "wdl_table(res, ['n_attributes', 'max_arity', 'max_parents', 'n_train'])"),
    nbf.v4.new_markdown_cell("## Explore: the training size\nThe Mixture weights app as a component: move the training size (`n_train`) and watch BMA's weight collapse onto one super-parent while the mixtures keep theirs."),
    nbf.v4.new_code_cell('import panel as pn\npn.extension("tabulator", inline=True)   # offline: Panel\'s scripts go into the notebook\napp = bx.apps.MixtureWeights("vote", n_train=60)\napp'),
]
nb = nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                               "display_name": "Python 3",
                                                               "language": "python"}})
nbf.write(nb, Path(__file__).with_name("02_mixture_weights.ipynb"))
