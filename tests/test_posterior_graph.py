"""SCF classifiers' posterior_graph: the BMA edges over a threshold, as the Forests app draws them."""
import pytest

import bnexplore as bx
from bnexplore.classifiers import SFAN, TAN


@pytest.fixture(scope="module")
def vote():
    df = bx.datasets.load("vote", discretize="mdl", missing="state")
    return df.drop(columns="Class"), df["Class"]


@pytest.mark.parametrize("threshold", [0.05, 0.3, 0.9])
def test_edges_are_the_posteriors_over_the_threshold(vote, threshold):
    X, y = vote
    clf = SFAN(penalty=2.0, averaging="bma").fit(X, y)
    post = clf.edge_posteriors()
    g = clf.posterior_graph(threshold)
    cls, feats = clf.class_column, list(X.columns)
    assert set(g.nodes) == {cls, *feats}
    expected = {(p, c) for p in feats + [cls] for c in feats
                if p != c and post.loc[p, c] >= threshold}
    assert set(g.edges) == expected and expected                       # not empty
    mb = bx.networks.markov_blanket(g, cls)
    assert set(mb) >= {c for c in feats if post.loc[cls, c] >= threshold}


def test_fewer_edges_at_a_higher_threshold_and_bad_thresholds(vote):
    X, y = vote
    clf = TAN(averaging="bma").fit(X, y)
    assert set(clf.posterior_graph(0.9).edges) <= set(clf.posterior_graph(0.2).edges)
    for bad in (0.0, 1.5, True):
        with pytest.raises(ValueError, match="threshold"):
            clf.posterior_graph(bad)
