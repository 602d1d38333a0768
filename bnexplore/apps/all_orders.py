"""Averaging over orders: one greedy order (Dash & Cooper) beside the average over all orders.

The average over all orders is exact (dynamic programming) where the number of variables
allows, order MCMC otherwise (chains, R-hat, Monte Carlo error bars). Prior:
order-modular, orders uniform.
"""
from __future__ import annotations

import time

import panel as pn
import param

from bnexplore.experiments.compare import PARAM_RANGES

from ._base import NETWORK, App, guarded
from ._cache import cached
from .data import Data
from .text import md_strong, md_text

AUTO, EXACT, MCMC = "exact where possible", "exact (all orders)", "order MCMC"
#: the automatic choice runs the exact DP up to this many variables (about a second)
EXACT_MAX_VARS = 18
#: size of each heat map (one below the other)
HEATMAP_SIZE = dict(width=430, height=400)


def _complete(data: Data):
    return data.frame.dropna().reset_index(drop=True)


@cached(max_items=32)
def fixed_order(data: Data, max_parents: int):
    """(order, arc posteriors) of Dash & Cooper along the greedy thick-thin order."""
    import networkx as nx

    import bnexplore as bx

    df = _complete(data)
    names = list(df.columns)
    dag = bx.search.greedy_thick_thin(df, prior="K2").dag
    order = list(nx.lexicographical_topological_sort(dag, key=names.index))
    post = bx.averaging.OrderedAveraging(df, order=order, max_parents=int(max_parents))
    return order, post.arc_posteriors()


@cached(max_items=32)
def all_orders(data: Data, max_parents: int, method: str, n_iter: int, random_state: int):
    """(method used, arc posteriors, OrderMCMC result or None, log evidence or None, seconds)."""
    import bnexplore as bx

    df = _complete(data)
    use = method
    if method == AUTO:
        use = EXACT if df.shape[1] <= EXACT_MAX_VARS else MCMC
    t0 = time.perf_counter()
    if use == EXACT:
        ao = bx.averaging.AllOrders(df, max_parents=int(max_parents))
        return use, ao.arc_posteriors(), None, ao.log_evidence, time.perf_counter() - t0
    res = bx.averaging.order_mcmc(df, max_parents=int(max_parents), n_iter=int(n_iter),
                                  n_chains=4, random_state=int(random_state))
    return use, res.arc_posteriors(), res, None, time.perf_counter() - t0


class AllOrders(App):
    """Arc posteriors over one greedy order beside the average over all orders.

    Parameters
    ----------
    data : DataFrame or str, optional
        Your table, or a bundled data set or network (default: a sample of ``"asia"``).
    max_parents : int
        Most parents of a node.
    method : str
        ``"exact where possible"`` (exact up to 18 variables), ``"exact (all orders)"``
        or ``"order MCMC"``.
    n_iter, random_state : int
        Order MCMC: iterations per chain (4 chains) and the seed.

    Examples
    --------
    >>> import bnexplore as bx
    >>> app = bx.apps.AllOrders("asia", max_parents=1)
    >>> app.data.label, app.method
    ('asia, 1000 samples', 'exact where possible')
    """

    title = "Averaging over orders"
    description = ("Arc posteriors of Dash & Cooper's averaging over one greedy order beside the "
                   "average over all orders (exact dynamic programming, or order MCMC with "
                   "chains, R-hat and error bars) and their difference.")
    default_source = NETWORK
    controls = ("max_parents", "method", "n_iter", "random_state", "threshold")
    widget_types = {"random_state": pn.widgets.IntInput}
    warm_settings = ({"max_parents": 2, "method": EXACT},
                     {"max_parents": 2, "method": MCMC, "n_iter": 2_000})

    max_parents = param.Integer(default=2, bounds=PARAM_RANGES["max_parents"], label="k (max parents)")
    method = param.Selector(default=AUTO, objects=[AUTO, EXACT, MCMC], label="All orders by")
    n_iter = param.Integer(default=20_000, bounds=(2_000, 100_000), step=2_000,
                           label="MCMC iterations per chain")
    random_state = param.Integer(default=0, bounds=(0, 2**31 - 1), label="Random state (MCMC)")
    threshold = param.Number(default=0.0, bounds=(0.0, 0.95), step=0.05,
                             label="Arc-posterior threshold",
                             doc="Arcs whose posterior is below it are left blank in the "
                                 "heat maps (in the difference map: below it under both).")

    def _run(self):
        return all_orders(self.data, self.max_parents, self.method, self.n_iter,
                          self.random_state)

    def results(self) -> list:
        return [self._run(), fixed_order(self.data, self.max_parents)]

    def views(self) -> list:
        return [self.summary_view, self.heatmaps_view, self.chains_view]

    @param.depends("data", "max_parents", "method", "n_iter", "random_state")
    @guarded
    def summary_view(self):
        use, post, res, logz, secs = self._run()
        order, _ = fixed_order(self.data, self.max_parents)
        head = (f"{md_strong(self.data.label)} · {post.shape[0]} variables, "
                f"k = {self.max_parents}")
        if res is None:
            body = (f"exact over all {post.shape[0]}! orders in {secs:.2f} s, log P(D) = "
                    f"{logz:.2f} (order-modular prior, orders uniform, 1/N! included)")
        else:
            verdict = "converged" if res.converged(1.05) else "NOT converged: run longer"
            body = (f"order MCMC, 4 chains x {res.n_iter:,} iterations in {secs:.1f} s, "
                    f"acceptance {res.acceptance_rate.mean():.2f}, R-hat max "
                    f"{res.rhat_max:.3f} ({verdict}), ESS of the log score "
                    f"{res.log_score_ess:.0f}")
        fixed = md_text(" < ".join(order), max_len=300)
        return pn.pane.Markdown(f"{head} · {body}<br>fixed (greedy thick-thin) order: {fixed}",
                                css_classes=["bnx-orders-summary"], margin=(0, 10))

    @param.depends("data", "max_parents", "method", "n_iter", "random_state", "threshold",
                   "presentation")
    @guarded
    def heatmaps_view(self):
        from bnexplore.viz.averaging import arc_posterior_heatmap
        from bnexplore.viz.orders import posterior_difference_heatmap

        use, post, *_ = self._run()
        order, fixed = fixed_order(self.data, self.max_parents)
        label = "exact" if use == EXACT else "order MCMC"
        # rows and columns in the printed greedy order; thinned and sized for a projector
        look = dict(HEATMAP_SIZE, order=list(order), threshold=self.threshold or None,
                    presentation=self.presentation)
        diff = post - fixed
        table = diff.stack().rename("all minus one").reset_index()
        table.columns = ["parent", "child", "all minus one"]
        return pn.Column(
            pn.pane.HoloViews(arc_posterior_heatmap(fixed, title="One order (Dash & Cooper)",
                                                    **look)),
            pn.pane.HoloViews(arc_posterior_heatmap(post, title=f"All orders ({label})",
                                                    **look)),
            pn.pane.HoloViews(posterior_difference_heatmap(
                diff, title="All orders minus one order", posteriors=(post, fixed), **look)),
            self.csv(post.reset_index(names="parent"), "arc-posteriors-all-orders"),
            self.csv(table, "difference"), sizing_mode="stretch_width")

    @param.depends("data", "max_parents", "method", "n_iter", "random_state", "presentation")
    @guarded
    def chains_view(self):
        from bnexplore.viz.orders import arc_error_bars, log_score_traces

        use, post, res, *_ = self._run()
        if res is None:
            return pn.pane.Markdown("The exact average has no Monte Carlo error: choose *order "
                                    "MCMC* to see the chains, R-hat and error bars.",
                                    css_classes=["bnx-orders-chains"], margin=(0, 10))
        return pn.Column(
            pn.pane.Markdown(f"R-hat max {res.rhat_max:.3f}", css_classes=["bnx-orders-chains"],
                             margin=(0, 10)),
            pn.pane.HoloViews(self.look(log_score_traces(
                res.traces, thin=res.thin, burn_in=res.burn_in, width=560))),
            pn.pane.HoloViews(self.look(arc_error_bars(res.summary(), top=20, width=560))),
            self.csv_table(res.summary().reset_index(), "order-mcmc-summary"),
            sizing_mode="stretch_width")
