"""The "Learn a structure" app (bnexplore.apps.LearnStructure) without a browser."""
import bnexplore as bx
from bnexplore.apps import LearnStructure


def test_views_follow_the_parameters():
    app = LearnStructure("asia", sample_size=500, max_parents=1)
    first = app.summary_view().object
    assert "log score (K2)" in first
    res = bx.search.greedy_thick_thin(app.data.frame, prior="K2", max_parents=1)
    assert f"{res.score:.3f}" in first            # the page shows the library's result
    assert max(d for _, d in res.dag.in_degree()) <= 1
    app.param.update(score="BDeu", ess=5.0, max_parents=2)
    res2 = bx.search.greedy_thick_thin(app.data.frame, prior="BDeu", ess=5.0, max_parents=2)
    assert f"{res2.score:.3f}" in app.summary_view().object
    steps = app.steps_view()[1][0].value
    assert len(steps) == len(res2.steps) and "edge" in steps


def test_ess_shows_only_for_bdeu():
    app = LearnStructure("asia")
    ess = app.widget("ess")
    assert not ess.visible
    app.score = "BDeu"
    assert ess.visible
