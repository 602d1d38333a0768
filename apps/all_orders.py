"""Averaging over orders.

Dash & Cooper average exactly over the DAGs consistent with one (greedy) order; here the
order is averaged too: exactly over all orders (dynamic programming) where the number of
variables allows, by order MCMC otherwise. Side by side, with their difference.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import panel as pn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (serve, NETWORK, DataSource, cached, describe_source, guarded, load_data,  # noqa: E402
                     make_template, md_text, param_slider, reactive)
from _render import shared_fixed_pane, shared_layout  # noqa: E402

TITLE = "Averaging over orders"
DESCRIPTION = ("Arc posteriors of Dash & Cooper's averaging over one greedy order beside the average "
               "over all orders (exact dynamic programming, or order MCMC with chains, R-hat and "
               "error bars) and their difference.")

pn.extension(sizing_mode="stretch_width", notifications=False)

AUTO, EXACT, MCMC = "Exact where possible", "Exact (all orders)", "Order MCMC"
#: the automatic choice runs the exact DP up to this many variables (about a second)
EXACT_MAX_VARS = 18


def frame(kind: str, name: str, n: int):
    return load_data(kind, name, n).dropna().reset_index(drop=True)


@cached(maxsize=32)
def fixed_order(kind: str, name: str, n_rows: int, k: int):
    """(order, arc posteriors) of Dash & Cooper along the greedy thick-thin order."""
    import networkx as nx

    import bnexplore as bx

    df = frame(kind, name, n_rows)
    names = list(df.columns)
    dag = bx.search.greedy_thick_thin(df, prior="K2").dag
    order = list(nx.lexicographical_topological_sort(dag, key=names.index))
    return order, bx.averaging.OrderedAveraging(df, order=order, max_parents=int(k)).arc_posteriors()


@cached(maxsize=32)
def all_orders(kind: str, name: str, n_rows: int, k: int, method: str, n_iter: int):
    """(method used, arc posteriors, OrderMCMC result or None, log evidence or None, seconds)."""
    import bnexplore as bx

    df = frame(kind, name, n_rows)
    use = method
    if method == AUTO:
        use = EXACT if df.shape[1] <= EXACT_MAX_VARS else MCMC
    t0 = time.perf_counter()
    if use == EXACT:
        ao = bx.averaging.AllOrders(df, max_parents=int(k))
        return use, ao.arc_posteriors(), None, ao.log_evidence, time.perf_counter() - t0
    res = bx.averaging.order_mcmc(df, max_parents=int(k), n_iter=int(n_iter), n_chains=4, random_state=0)
    return use, res.arc_posteriors(), res, None, time.perf_counter() - t0


@guarded
def summary_view(kind, dataset, network, n_rows, k, method, n_iter):
    name = network if kind == NETWORK else dataset
    use, post, res, logz, secs = all_orders(kind, name, n_rows, k, method, n_iter)
    order, _ = fixed_order(kind, name, n_rows, k)
    head = f"<strong>{describe_source(kind, name, n_rows)}</strong> &nbsp;·&nbsp; {post.shape[0]} variables, k = {k}"
    if res is None:
        body = (f"exact over all {post.shape[0]}! orders in {secs:.2f} s, log P(D) = {logz:.2f} "
                f"(orders uniform, 1/N! included)")
    else:
        verdict = "converged" if res.converged(1.05) else "NOT converged: run longer"
        body = (f"order MCMC, 4 chains x {res.n_iter:,} iterations in {secs:.1f} s, acceptance "
                f"{res.acceptance_rate.mean():.2f}, R-hat max {res.rhat_max:.3f} ({verdict}), "
                f"ESS of the log score {res.log_score_ess:.0f}")
    # variable names come from the user (an uploaded file): literal text
    fixed = md_text(" < ".join(order), max_len=300)
    text = f"{head} &nbsp;·&nbsp; {body}<br>fixed (greedy thick-thin) order: {fixed}"
    return pn.pane.Markdown(text, css_classes=["bnx-orders-summary"], margin=(0, 10))


#: size of each heat map (three side by side do not fit a page: one below the other)
HEATMAP_SIZE = dict(width=430, height=400)


def fixed_heatmap(kind, name, n_rows, k):
    """Arc posteriors of Dash & Cooper's averaging over the one greedy order."""
    from bnexplore.viz.averaging import arc_posterior_heatmap

    _, fixed = fixed_order(kind, name, n_rows, k)
    return arc_posterior_heatmap(fixed, title="One order (Dash & Cooper)", **HEATMAP_SIZE)


def all_heatmap(kind, name, n_rows, k, method, n_iter):
    """Arc posteriors averaged over all orders (exact or order MCMC)."""
    from bnexplore.viz.averaging import arc_posterior_heatmap

    use, post, *_ = all_orders(kind, name, n_rows, k, method, n_iter)
    label = "exact" if use == EXACT else "order MCMC"
    return arc_posterior_heatmap(post, title=f"All orders ({label})", **HEATMAP_SIZE)


def difference_heatmap(kind, name, n_rows, k, method, n_iter):
    """All orders minus one order, arc by arc."""
    from bnexplore.viz.orders import posterior_difference_heatmap

    _, post, *_ = all_orders(kind, name, n_rows, k, method, n_iter)
    _, fixed = fixed_order(kind, name, n_rows, k)
    return posterior_difference_heatmap(post - fixed, title="All orders minus one order",
                                        **HEATMAP_SIZE)


def traces_plot(kind, name, n_rows, k, method, n_iter):
    """Log score of every order MCMC chain."""
    from bnexplore.viz.orders import log_score_traces

    res = all_orders(kind, name, n_rows, k, method, n_iter)[2]
    return log_score_traces(res.traces, thin=res.thin, burn_in=res.burn_in, width=560)


def error_bars_plot(kind, name, n_rows, k, method, n_iter):
    """Monte Carlo error bars of the 20 most uncertain arcs."""
    from bnexplore.viz.orders import arc_error_bars

    res = all_orders(kind, name, n_rows, k, method, n_iter)[2]
    return arc_error_bars(res.summary(), top=20, width=560)


# The pictures are rendered once per setting for all sessions (apps/_render.py).
@guarded
def heatmaps_view(kind, dataset, network, n_rows, k, method, n_iter):
    name = network if kind == NETWORK else dataset
    all_orders(kind, name, n_rows, k, method, n_iter)   # the error box if it fails
    # one below the other, each in a panel that scrolls sideways on a narrow window (three
    # side by side do not fit a page; fixed-size plots in stretching panes make HoloViews warn)
    return shared_layout(
        pn.Column,
        lambda: shared_fixed_pane(fixed_heatmap, kind, name, n_rows, k),
        lambda: shared_fixed_pane(all_heatmap, kind, name, n_rows, k, method, n_iter),
        lambda: shared_fixed_pane(difference_heatmap, kind, name, n_rows, k, method, n_iter),
        sizing_mode="stretch_width")


@guarded
def chains_view(kind, dataset, network, n_rows, k, method, n_iter):
    name = network if kind == NETWORK else dataset
    use, post, res, *_ = all_orders(kind, name, n_rows, k, method, n_iter)
    if res is None:
        return pn.pane.Markdown("The exact average has no Monte Carlo error: choose *Order MCMC* to see "
                                "the chains, R-hat and error bars.", css_classes=["bnx-orders-chains"],
                                margin=(0, 10))
    rhat = pn.pane.Markdown(f"R-hat max {res.rhat_max:.3f}", css_classes=["bnx-orders-chains"],
                            margin=(0, 10))
    return shared_layout(
        pn.Column, lambda: rhat,
        lambda: shared_fixed_pane(traces_plot, kind, name, n_rows, k, method, n_iter),
        lambda: shared_fixed_pane(error_bars_plot, kind, name, n_rows, k, method, n_iter),
        sizing_mode="stretch_width")


def create_app() -> pn.template.FastListTemplate:
    src = DataSource(default_dataset="vote", default_network="asia", default_kind=NETWORK, default_n=1000)
    k = param_slider("k", "k (max parents)")
    method = pn.widgets.Select(name="All orders by", options=[AUTO, EXACT, MCMC], value=AUTO)
    n_iter = pn.widgets.IntSlider(name="MCMC iterations per chain", start=2_000, end=100_000, step=2_000,
                                  value=20_000)

    def view(func):
        # computed in a worker thread with Panel's spinner as the progress indicator
        return reactive(func, src.kind, src.dataset, src.network, src.sample_size, k, method, n_iter)

    main = [pn.Column(view(summary_view), view(heatmaps_view), view(chains_view), sizing_mode="stretch_width")]
    sidebar = [pn.pane.Markdown("### Data"), src.panel(), pn.pane.Markdown("### Averaging"), k, method, n_iter]
    return make_template(TITLE, main=main, sidebar=sidebar, description=DESCRIPTION)


if __name__.startswith("bokeh"):
    serve(create_app)
