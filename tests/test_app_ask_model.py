"""The "Ask the averaged model" app (bnexplore.apps.AskModel) without a browser: the
posteriors it shows are exact inference in the learnt networks (checked by enumerating
their joints) and follow the evidence set through its widgets."""
import itertools

import numpy as np
import pandas as pd
import pytest

from bnexplore.apps import AskModel
from bnexplore.apps.ask_model import NOT_OBSERVED, averaged_model


def brute_force(bn, evidence):
    """Every node's marginal given ``evidence``, by summing the network's joint."""
    nodes = list(bn.states)
    rows = pd.DataFrame(list(itertools.product(*[bn.states[v] for v in nodes])), columns=nodes)
    p = np.exp(bn.log_prob(rows))
    keep = np.ones(len(rows), bool)
    for k, s in evidence.items():
        keep &= rows[k].astype(str).to_numpy() == str(s)
    p = np.where(keep, p, 0.0)
    p /= p.sum()
    return {v: np.array([p[rows[v].astype(str).to_numpy() == str(s)].sum() for s in bn.states[v]])
            for v in nodes}


def shown(app, column):
    t = app.table()
    return {v: g[column].to_numpy(float) for v, g in t.groupby("node", sort=False)}


@pytest.fixture(scope="module")
def app():
    return AskModel("asia", sample_size=500, max_parents=1)


def test_evidence_through_the_widgets_moves_the_posteriors(app):
    view = app.evidence_view()
    app._selects["smoke"].value = "yes"
    app._selects["xray"].value = "yes"
    assert app.evidence == {"smoke": "yes", "xray": "yes"}
    model = averaged_model(app.data, 1, "order", 0)
    for column, bn in (("best", model.best), ("averaged", model.averaged)):
        expect = brute_force(bn, app.evidence)
        got = shown(app, column)
        for v in expect:
            np.testing.assert_allclose(got[v], expect[v], atol=1e-9, err_msg=f"{column} {v}")
    assert model.extra["exact"]          # so M*'s answers are the exact order average
    # the plot's bars are the table's numbers; clearing observes nothing
    assert "smoke = yes (observed)" in str(app.posterior_view().object.opts.get().kwargs["yticks"])
    view[2].clicks += 1
    assert app.evidence == {} and app._selects["smoke"].value == NOT_OBSERVED
    prior = brute_force(model.best, {})
    np.testing.assert_allclose(shown(app, "best")["lung"], prior["lung"], atol=1e-9)


def test_summary_states_the_prior_and_the_evidence(app):
    app.set_evidence("tub", "no")
    text = app.summary_view().object
    assert "Prior" in text and "uniform over the DAGs consistent with the order" in text
    assert "tub" in text
    app.set_evidence("tub", None)
    assert app.evidence == {}


def test_bad_evidence_is_refused_by_name(app):
    with pytest.raises(ValueError, match="no state 'maybe'"):
        app.set_evidence("smoke", "maybe")
    with pytest.raises(ValueError, match="unknown node 'nope'"):
        app.set_evidence("nope", "yes")


def test_new_data_clears_the_evidence_and_reset_restores_defaults():
    a = AskModel("asia", sample_size=500, max_parents=1)
    a.set_evidence("smoke", "yes")
    a.sample_size = 200
    assert a.evidence == {}
    a.param.update(presentation=True, method="mcmc")
    a.reset()
    assert (a.presentation, a.method, a.max_parents) == (False, "order", 2)
    assert a.sample_size == 200          # the data stay


def test_abbreviations_spelled_out_with_a_hover_and_a_glossary_card():
    from bnexplore.apps.text import glossed

    text = glossed("GTT and BMA; GTT again")
    assert text.count("<abbr") == 2 and "(Greedy thick-thin)" in text
    assert text.endswith("GTT again")                      # spelled out on first use only
    a = AskModel("asia", sample_size=500, max_parents=1)
    card = a.main()[-1]
    assert card.title == "Glossary" and card.collapsed
    assert "SNN" in card[0][0].value["abbreviation"].tolist()
    a.presentation = True
    assert a.main().styles.get("font-size") == "19px"


def test_a_click_on_a_node_cycles_its_evidence_through_the_tap_stream():
    """The picture's Tap stream (what a click in the page sends) observes the clicked
    node's states in turn, then clears it; the posteriors shown follow (brute force)."""
    import holoviews as hv

    from bnexplore.viz.graphs import node_boxes

    a = AskModel("asia", sample_size=500, max_parents=1)
    model = averaged_model(a.data, 1, "order", 0)

    def click(node):
        plot = a.network_view()[1].object
        b = node_boxes(plot).set_index("name")
        name = f"{node} = {a.evidence[node]}" if node in a.evidence else node
        x, y = (b.loc[name, "x0"] + b.loc[name, "x1"]) / 2, (b.loc[name, "y0"] + b.loc[name, "y1"]) / 2
        boxes = next(iter(plot.traverse(lambda e: e, [hv.Rectangles])))
        (tap,) = hv.streams.Stream.registry[boxes]
        tap.event(x=x, y=y)

    seen = []
    for _ in range(3):
        click("xray")
        seen.append(a.evidence.get("xray"))
        if seen[-1] is not None:
            expect = brute_force(model.best, a.evidence)["lung"]
            np.testing.assert_allclose(shown(a, "best")["lung"], expect, atol=1e-9)
    assert seen == [*a.states()["xray"], None]
    # a click beside every box changes nothing; the picture names the observed node
    a.click_node("smoke")
    plot = a.network_view()[1].object
    assert a.node_at(plot, 1e6, 1e6) is None
    assert f"smoke = {a.evidence['smoke']}" in node_boxes(plot)["name"].tolist()
    with pytest.raises(ValueError, match="unknown node 'nope'"):
        a.click_node("nope")
