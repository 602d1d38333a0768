"""Edge confidence: arc posteriors under two priors over structures beside the bootstrap.

Three answers to "how sure are we of the arc u -> v?", one column each, each saying what
it is computed under:

* **order-modular** (:class:`~bnexplore.averaging.AllOrders`, exact; order MCMC beyond
  :data:`EXACT_MAX_VARS` variables): orders uniform, so a DAG weighs as many times as it
  has linear extensions;
* **uniform over DAGs** (:class:`~bnexplore.averaging.AllDAGs`, exact; partition MCMC
  beyond, with standard errors and a convergence verdict): every DAG with at most
  ``max_parents`` parents per node equally likely;
* **bootstrap** (:func:`~bnexplore.averaging.bootstrap_arcs`): the fraction of hill-climbing
  networks on resampled rows holding the arc (no prior: a frequency), with the
  significance threshold of Scutari & Nagarajan (2013) on the pair strengths.

The per-arc difference (uniform minus order-modular) is the prior's effect alone (same
data, same scores); arcs where the uniform-prior posterior and the bootstrap frequency
differ by more than :data:`DISAGREE` are flagged. With BDeu, ``ess`` moves every
posterior (Silander, Kontkanen & Myllymaki, UAI 2007): the slider re-averages.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
import panel as pn
import param

from bnexplore.experiments.compare import PARAM_RANGES

from ._base import NETWORK, App, guarded
from ._cache import cached
from .data import Data
from .text import md_join, md_strong

AUTO, EXACT, MCMC = "exact where possible", "exact", "MCMC"
#: the two priors over structures, as the columns name them
ORDER_PRIOR, UNIFORM_PRIOR = "order-modular", "uniform over DAGs"
#: the automatic choice runs the exact DP up to this many variables, MCMC beyond: all
#: orders takes about a second at 18, all DAGs about 10-20 s at 17 on a loaded 2-core
#: machine (on vote's 17 variables, k = 2, both exact took 22 s where 50,000 MCMC
#: iterations took 49 s and had not converged)
EXACT_MAX_VARS = {ORDER_PRIOR: 18, UNIFORM_PRIOR: 17}
#: arcs whose uniform-prior posterior and bootstrap frequency differ by more are flagged
DISAGREE = 0.3
#: the ess values of the slider (BDeu's equivalent sample size)
ESS_VALUES = [0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
NO_PRIOR = "bootstrap, no prior"
FLAG = f"flag: |{UNIFORM_PRIOR} - bootstrap (no prior)| > {DISAGREE}"


def engine_keywords(score: str, ess: float) -> dict:
    """The K2/BDeu choice and ``ess`` as every engine takes them (``prior=``, ``ess=``)."""
    return {"prior": score, "ess": float(ess)}


def _complete(data: Data) -> pd.DataFrame:
    return data.frame.dropna().reset_index(drop=True)


def _use(method: str, prior: str, p: int) -> str:
    if method == AUTO:
        return EXACT if p <= EXACT_MAX_VARS[prior] else MCMC
    return method


@cached(max_items=32)
def posteriors(data: Data, prior: str, max_parents: int, score: str, ess: float, method: str,
               n_iter: int, random_state: int) -> dict:
    """Arc posteriors under ``prior`` (:data:`ORDER_PRIOR` or :data:`UNIFORM_PRIOR`).

    A dict: ``post`` (DataFrame), ``stderr`` (DataFrame or None, MCMC only), ``how`` (what
    computed it), ``graph_prior`` (the engine's own statement), ``convergence`` (MCMC's
    statement or ""), ``converged`` (bool), ``seconds``.
    """
    import bnexplore as bx

    df = _complete(data)
    order = prior == ORDER_PRIOR
    use = _use(method, prior, df.shape[1])
    kw = engine_keywords(score, ess)
    t0 = time.perf_counter()
    if use == EXACT:
        engine = bx.averaging.AllOrders if order else bx.averaging.AllDAGs
        res = engine(df, max_parents=int(max_parents), **kw)
        how = "exact, all orders" if order else "exact, all DAGs"
        return dict(post=res.arc_posteriors(), stderr=None, how=how, graph_prior=res.graph_prior,
                    convergence="", converged=True, seconds=time.perf_counter() - t0)
    sampler = bx.averaging.order_mcmc if order else bx.averaging.partition_mcmc
    res = sampler(df, max_parents=int(max_parents), n_iter=int(n_iter), n_chains=4,
                  random_state=int(random_state), **kw)
    how = "order MCMC" if order else "partition MCMC"
    return dict(post=res.arc_posteriors(), stderr=res.stderr, how=how, graph_prior=res.graph_prior,
                convergence=res.convergence, converged=res.converged(1.05),
                seconds=time.perf_counter() - t0)


@cached(max_items=32)
def bootstrap(data: Data, max_parents: int, score: str, ess: float, n_boot: int,
              random_state: int) -> dict:
    """The bootstrap's arc and pair strengths, threshold and statement (a dict)."""
    import bnexplore as bx

    t0 = time.perf_counter()
    res = bx.averaging.bootstrap_arcs(_complete(data), n_boot=int(n_boot),
                                      random_state=int(random_state), max_parents=int(max_parents),
                                      **engine_keywords(score, ess))
    return dict(arc=res.arc_strength, pair=res.strength, threshold=res.threshold,
                graph_prior=res.graph_prior, seconds=time.perf_counter() - t0)


def edge_table(order: dict, uniform: dict, boot: dict) -> pd.DataFrame:
    """One row per arc ``parent -> child``, a column per method, each naming its prior.

    Sorted by the largest of the three arc columns; the flag column marks the arcs whose
    uniform-prior posterior and bootstrap arc frequency differ by more than
    :data:`DISAGREE`.
    """
    names = list(uniform["post"].index)
    p = len(names)
    u, v = np.nonzero(~np.eye(p, dtype=bool))

    def cells(frame):
        return frame.loc[names, names].to_numpy()[u, v]

    o_col = f"P(arc), {ORDER_PRIOR} ({order['how']})"
    u_col = f"P(arc), {UNIFORM_PRIOR} ({uniform['how']})"
    b_col = f"arc frequency ({NO_PRIOR})"
    out = pd.DataFrame({"parent": [names[i] for i in u], "child": [names[j] for j in v]})
    out[o_col] = cells(order["post"])
    if order["stderr"] is not None:
        out[f"s.e., {ORDER_PRIOR}"] = cells(order["stderr"])
    out[u_col] = cells(uniform["post"])
    if uniform["stderr"] is not None:
        out[f"s.e., {UNIFORM_PRIOR}"] = cells(uniform["stderr"])
    out[f"difference: {UNIFORM_PRIOR} - {ORDER_PRIOR}"] = out[u_col] - out[o_col]
    out[b_col] = cells(boot["arc"])
    out[f"pair strength ({NO_PRIOR}; significant above {boot['threshold']:.3f})"] = cells(boot["pair"])
    out[f"significant pair ({NO_PRIOR})"] = cells(boot["pair"]) > boot["threshold"]
    diff = out[u_col] - out[b_col]
    out[f"difference: {UNIFORM_PRIOR} - bootstrap (no prior)"] = diff
    out[FLAG] = diff.abs() > DISAGREE
    top = out[[o_col, u_col, b_col]].max(axis=1)
    return (out.assign(_top=top).sort_values(["_top", "parent", "child"], ascending=[False, True, True],
                                              kind="stable")
            .drop(columns="_top").reset_index(drop=True))


class EdgeConfidence(App):
    """Arc posteriors under the order-modular and the uniform prior over DAGs, beside the bootstrap.

    Parameters
    ----------
    data : DataFrame or str, optional
        Your table, or a bundled data set or network (default: a sample of ``"asia"``).
    max_parents : int
        Most parents of a node.
    score : {"K2", "BDeu"}
        Parameter prior of the family scores.
    ess : float
        BDeu's equivalent sample size (one of :data:`ESS_VALUES`).
    method : str
        ``"exact where possible"`` (order-modular exact up to 18 variables, uniform up to
        17, MCMC beyond), ``"exact"`` or ``"MCMC"`` (order MCMC and partition MCMC).
    n_iter, n_boot, random_state : int
        MCMC iterations per chain (4 chains), bootstrap resamples, and the seed of both.
    threshold : float
        Arcs whose posterior is below it under both priors are left out of the pictures
        (blank in the heat map, not drawn in the scatter plot); the table keeps every arc.

    Examples
    --------
    >>> import bnexplore as bx
    >>> app = bx.apps.EdgeConfidence("asia", max_parents=1, n_boot=20)
    >>> app.data.label, app.score, app.ess
    ('asia, 1000 samples', 'BDeu', 1.0)
    """

    title = "Edge confidence"
    description = ("How sure is each arc? Posteriors under the order-modular prior and the uniform "
                   "prior over DAGs side by side, their difference, the bootstrap arc frequency "
                   "with its significance threshold, and the arcs where Bayes and bootstrap disagree.")
    default_source = NETWORK
    controls = ("max_parents", "score", "ess", "method", "n_iter", "n_boot", "random_state",
                "threshold")
    widget_types = {"random_state": pn.widgets.IntInput, "ess": pn.widgets.DiscreteSlider}
    warm_settings = ({"max_parents": 2, "method": EXACT, "n_boot": 2},
                     {"max_parents": 2, "method": MCMC, "n_iter": 2_000, "n_boot": 2})

    max_parents = param.Integer(default=2, bounds=PARAM_RANGES["max_parents"], label="k (max parents)")
    score = param.Selector(default="BDeu", objects=["BDeu", "K2"], label="Score")
    ess = param.Selector(default=1.0, objects=ESS_VALUES, label="ess (BDeu equivalent sample size)")
    method = param.Selector(default=AUTO, objects=[AUTO, EXACT, MCMC], label="Posteriors by")
    n_iter = param.Integer(default=50_000, bounds=(2_000, 200_000), step=2_000,
                           label="MCMC iterations per chain")
    n_boot = param.Integer(default=200, bounds=(2, 1_000), step=10, label="Bootstrap resamples")
    random_state = param.Integer(default=0, bounds=(0, 2**31 - 1), label="Random state")
    threshold = param.Number(default=0.0, bounds=(0.0, 0.95), step=0.05,
                             label="Arc-posterior threshold",
                             doc="Arcs whose posterior is below it under both priors are left "
                                 "out of the pictures (the table keeps them).")

    # ------------------------------------------------------------------ results
    def _ess(self) -> float:
        """ess as the engines see it (K2 ignores it: one result for every slider position)."""
        return float(self.ess) if self.score == "BDeu" else 1.0

    def _posteriors(self, prior: str) -> dict:
        return posteriors(self.data, prior, self.max_parents, self.score, self._ess(), self.method,
                          self.n_iter, self.random_state)

    def _bootstrap(self) -> dict:
        return bootstrap(self.data, self.max_parents, self.score, self._ess(), self.n_boot,
                         self.random_state)

    def _results(self) -> tuple[dict, dict, dict]:
        """(order-modular, uniform over DAGs, bootstrap) of the current settings."""
        return self._posteriors(ORDER_PRIOR), self._posteriors(UNIFORM_PRIOR), self._bootstrap()

    def table(self) -> pd.DataFrame:
        """The edge table of the current settings (:func:`edge_table`)."""
        return edge_table(*self._results())

    def results(self) -> list:
        return [self.table()]

    def widget(self, name: str) -> pn.widgets.Widget:
        w = super().widget(name)
        if name == "ess":   # BDeu only
            w.visible = self.score == "BDeu"
            self.param.watch(lambda e: setattr(w, "visible", e.new == "BDeu"), "score")
        return w

    def views(self) -> list:
        return [self.summary_view, self.plots_view, self.table_view]

    # ------------------------------------------------------------------ views
    @param.depends("data", "max_parents", "score", "ess", "method", "n_iter", "n_boot",
                   "random_state")
    @guarded
    def summary_view(self):
        order, uniform, boot = self._results()
        frame = edge_table(order, uniform, boot)
        flagged = frame[frame[FLAG]]
        score = f"BDeu, ess = {self._ess():g}" if self.score == "BDeu" else "K2"
        p = order["post"].shape[0]
        lines = [f"{md_strong(self.data.label)} · {p} variables, k = {self.max_parents}, {score}"]
        for res, prior in ((order, ORDER_PRIOR), (uniform, UNIFORM_PRIOR)):
            conv = f"; {res['convergence']}" if res["convergence"] else ""
            said = res["graph_prior"]
            if said == ORDER_PRIOR:
                said += " (orders uniform: a DAG weighs as many times as it has linear extensions)"
            lines.append(f"- **{prior}** ({res['how']}, {res['seconds']:.1f} s): the prior is "
                         f"{said}{conv}")
        diff = (uniform["post"] - order["post"]).abs().to_numpy()
        lines.append(f"- **prior effect**: the two priors differ by up to {diff.max():.3f} on an arc "
                     f"(same data, same scores)")
        lines.append(f"- **bootstrap** ({boot['seconds']:.1f} s): {boot['graph_prior']}; pairs "
                     f"significant above strength {boot['threshold']:.3f} (Scutari & Nagarajan 2013)")
        arcs = [f"{a} → {b}" for a, b in zip(flagged["parent"], flagged["child"])]
        plural = "" if len(flagged) == 1 else "s"
        lines.append(f"- **{len(flagged)} arc{plural} flagged** (|{UNIFORM_PRIOR} - bootstrap| > "
                     f"{DISAGREE})" + (": " + md_join(arcs, max_items=12) if arcs else ""))
        return pn.pane.Markdown("\n".join(lines), css_classes=["bnx-edge-summary"], margin=(0, 10),
                                sizing_mode="stretch_width")

    @param.depends("data", "max_parents", "score", "ess", "method", "n_iter", "n_boot",
                   "random_state", "threshold", "presentation")
    @guarded
    def plots_view(self):
        import holoviews as hv

        from bnexplore.viz.orders import posterior_difference_heatmap

        order, uniform, boot = self._results()
        side = 560 if self.presentation else 430
        heat = posterior_difference_heatmap(
            uniform["post"] - order["post"], width=side, height=side - 30,
            title=f"{UNIFORM_PRIOR} minus {ORDER_PRIOR}", threshold=self.threshold or None,
            posteriors=(uniform["post"], order["post"]), presentation=self.presentation)
        frame = edge_table(order, uniform, boot)
        u_col = next(c for c in frame.columns if c.startswith(f"P(arc), {UNIFORM_PRIOR}"))
        o_col = next(c for c in frame.columns if c.startswith(f"P(arc), {ORDER_PRIOR}"))
        b_col = f"arc frequency ({NO_PRIOR})"
        frame = frame[np.maximum(frame[u_col], frame[o_col]) >= self.threshold]
        pts = pd.DataFrame({"bayes": frame[u_col], "boot": frame[b_col],
                            "flagged": frame[FLAG],
                            "arc": frame["parent"] + " → " + frame["child"]})
        opts = dict(size=10 if self.presentation else 7, tools=["hover"],
                    xlim=(-0.02, 1.02), ylim=(-0.02, 1.02))
        scatter = (hv.Scatter(pts[~pts.flagged], "bayes", ["boot", "arc"], label="agree")
                   .opts(color="#1f5f8b", **opts)
                   * hv.Scatter(pts[pts.flagged], "bayes", ["boot", "arc"], label="flagged")
                   .opts(color="#c0392b", marker="triangle", **opts)
                   * hv.Curve([(0, DISAGREE), (1 - DISAGREE, 1)]).opts(color="grey", line_dash="dashed")
                   * hv.Curve([(DISAGREE, 0), (1, 1 - DISAGREE)]).opts(color="grey", line_dash="dashed")
                   ).opts(width=side, height=side - 30,
                          title="Bayes (uniform over DAGs) vs bootstrap",
                          xlabel=f"P(arc), {UNIFORM_PRIOR}", ylabel="bootstrap arc frequency",
                          legend_position="bottom_right")
        # side by side when the window is wide enough, one below the other otherwise
        return pn.FlexBox(pn.pane.HoloViews(heat), pn.pane.HoloViews(self.look(scatter)),
                          sizing_mode="stretch_width", css_classes=["bnx-edge-plots"])

    @param.depends("data", "max_parents", "score", "ess", "method", "n_iter", "n_boot",
                   "random_state")
    @guarded
    def table_view(self):
        frame = self.table()
        return pn.Column(
            pn.pane.Markdown("Every arc, most confident first; each column says its prior. "
                             "The CSV holds the whole table.", margin=(0, 10)),
            self.csv_table(frame.round(4), "edge-confidence"), sizing_mode="stretch_width")
