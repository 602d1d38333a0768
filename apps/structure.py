"""Learn a structure.

Run greedy thick-thin search (K2 or BDeu score, bounded in-degree) on a bundled data set
or a sample of a bundled network, and inspect the learned DAG and every accepted step.
"""
from __future__ import annotations

import sys
from pathlib import Path

import panel as pn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (serve, NETWORK, DataSource, cached, describe_source, guarded,  # noqa: E402
                     load_data, make_template, param_slider, reactive, widget)
from _render import shared_dag_pane  # noqa: E402

from bnexplore.viz import dag_plot  # noqa: E402

TITLE = "Learn a structure"
DESCRIPTION = ("Greedy thick-thin search with a K2 or BDeu score on bundled data or network "
               "samples. See the learned DAG, its score and every accepted step.")

pn.extension("tabulator", sizing_mode="stretch_width", notifications=False)


@cached(maxsize=64)
def learn(kind: str, name: str, n: int, prior: str, ess: float, max_indegree: int):
    """Cached greedy thick-thin run for one setting: ``(result, states, n_rows)``."""
    import bnexplore as bx

    df = load_data(kind, name, n)
    res = bx.search.greedy_thick_thin(df, prior=prior, ess=float(ess), order=None,
                                      max_parents=int(max_indegree))
    states = {c: [str(s) for s in df[c].cat.categories] if hasattr(df[c], "cat")
              else sorted(map(str, df[c].unique())) for c in df.columns}
    return res, states, len(df)


def _ess(prior: str, ess: float) -> float:
    return float(ess) if prior == "BDeu" else 1.0  # K2 ignores ess: keep cache keys stable


@guarded
def summary_view(kind, name, n, prior, ess, max_indegree):
    res, _, rows = learn(kind, name, n, prior, _ess(prior, ess), max_indegree)
    text = (f"**log score ({prior})**: <span class='bnx-score'>{res.score:.3f}</span>"
            f" &nbsp;·&nbsp; **{res.dag.number_of_edges()} arcs** over "
            f"{res.dag.number_of_nodes()} variables &nbsp;·&nbsp; "
            f"<span class='bnx-source'>{describe_source(kind, name, n)}</span>, {rows} rows"
            f" &nbsp;·&nbsp; "
            f"{len(res.steps)} accepted steps")
    return pn.pane.Markdown(text, css_classes=["bnx-summary"], margin=(0, 10))


def graph_plot(kind, name, n, prior, ess, max_indegree):
    """The learned DAG, the class variable of a data set highlighted."""
    res, states, _ = learn(kind, name, n, prior, ess, max_indegree)
    target = None if kind == NETWORK else load_data(kind, name, n).attrs.get("target")
    return dag_plot(res.dag, states=states, highlight=[target] if target in res.dag else None,
                    class_node=target, title=f"GTT structure, max in-degree {max_indegree}",
                    width=1000, height=520, responsive=True)


# The DAG is laid out and rendered once per setting for all sessions (apps/_render.py):
# a class moving to the same setting costs one layout and one render, not one each.
@guarded
def graph_view(kind, name, n, prior, ess, max_indegree):
    return shared_dag_pane(graph_plot, kind, name, n, prior, _ess(prior, ess), max_indegree)


@guarded
def steps_view(kind, name, n, prior, ess, max_indegree):
    res, _, _ = learn(kind, name, n, prior, _ess(prior, ess), max_indegree)
    steps = res.steps.copy()
    if "edge" in steps:
        steps["edge"] = [f"{e[0]} \u2192 {e[1]}" if isinstance(e, tuple) and len(e) == 2
                         else str(e) for e in steps["edge"]]
    cols = [c for c in ("step", "phase", "op", "edge", "delta", "score", "n_candidates",
                        "n_improving") if c in steps]
    steps = steps[cols] if cols else steps
    # two decimals and short titles: the table fits its panel
    steps = steps.round({"delta": 2, "score": 2}).rename(
        columns={"n_candidates": "candidates", "n_improving": "improving"})
    return pn.widgets.Tabulator(steps.reset_index(drop=True), show_index=False, disabled=True,
                                pagination="local", page_size=12, layout="fit_data_stretch",
                                formatters={"edge": {"type": "textarea"}},
                                sizing_mode="stretch_width")


def create_app() -> pn.template.FastListTemplate:
    """Build the page (one per session)."""
    src = DataSource(default_dataset="vote", default_network="asia")
    prior = widget(pn.widgets.RadioButtonGroup, "Score", options=["K2", "BDeu"], value="K2",
                   color="primary")
    ess = widget(pn.widgets.FloatSlider, "Equivalent sample size (BDeu)", start=0.5, end=50.0,
                 step=0.5, value=1.0, visible=False)
    prior.param.watch(lambda e: setattr(ess, "visible", e.new == "BDeu"), "value")
    indeg = param_slider("k", "Max in-degree", value=3)

    def view(func):
        return reactive(src.bind(func, prior=prior, ess=ess, max_indegree=indeg))

    main = [
        pn.Column(view(summary_view), view(graph_view),
                  pn.pane.Markdown("### Accepted steps", margin=(10, 10, 0, 10)),
                  view(steps_view), sizing_mode="stretch_width"),
    ]
    sidebar = [pn.pane.Markdown("### Data"), src.panel(),
               pn.pane.Markdown("### Search"), pn.pane.Markdown("Score", margin=(0, 10)),
               prior, ess, indeg]
    return make_template(TITLE, main=main, sidebar=sidebar, description=DESCRIPTION)


if __name__.startswith("bokeh"):
    serve(create_app)
