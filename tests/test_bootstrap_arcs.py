"""Bootstrap arc strength on data where the answer is known, the Scutari-Nagarajan threshold
against a direct minimisation, and the side-by-side table of every method's arcs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bnexplore as bx
from bnexplore.averaging import inclusion_threshold


def _known(n=400, seed=0):
    """X1 is a copy of X0 (strength 1), X2 and X3 independent of everything (strength ~0)."""
    rng = np.random.default_rng(seed)
    x0 = rng.integers(0, 3, n)
    cols = {"X0": x0, "X1": x0.copy(), "X2": rng.integers(0, 2, n), "X3": rng.integers(0, 3, n)}
    return pd.DataFrame({c: pd.Categorical(v) for c, v in cols.items()})


@pytest.mark.parametrize("method", ["hc", "gtt"])
def test_known_strengths(method):
    boot = bx.averaging.bootstrap_arcs(_known(), n_boot=30, random_state=0, method=method, max_parents=2)
    s = boot.strength
    assert s.loc["X0", "X1"] == 1.0 and s.loc["X1", "X0"] == 1.0
    for a, b in [("X2", "X3"), ("X0", "X2"), ("X1", "X3"), ("X0", "X3")]:
        assert s.loc[a, b] <= 0.2
    d = boot.direction
    assert d.loc["X0", "X1"] + d.loc["X1", "X0"] == pytest.approx(1.0)
    assert boot.arc_strength.loc["X0", "X1"] + boot.arc_strength.loc["X1", "X0"] == pytest.approx(1.0)
    sig = boot.significant()
    assert len(sig) == 1 and set(sig[0]) == {"X0", "X1"}
    assert boot.graph_prior.startswith("none")
    frame = boot.to_frame()
    assert list(frame.columns) == ["from", "to", "strength", "direction"] and len(frame) == 12


def test_reproducible_and_bad_input():
    df = _known(100)
    a = bx.averaging.bootstrap_arcs(df, n_boot=5, random_state=3)
    b = bx.averaging.bootstrap_arcs(df, n_boot=5, random_state=3)
    pd.testing.assert_frame_equal(a.strength, b.strength)
    with pytest.raises(ValueError, match="n_boot"):
        bx.averaging.bootstrap_arcs(df, n_boot=0)
    with pytest.raises(ValueError, match="method"):
        bx.averaging.bootstrap_arcs(df, method="pc")
    with pytest.raises(ValueError, match="max_parents"):
        bx.averaging.bootstrap_arcs(df, max_parents=-1)
    with pytest.raises(ValueError, match="random_state"):
        bx.averaging.bootstrap_arcs(df, random_state="x")
    with pytest.raises(ValueError, match="prior"):
        bx.averaging.bootstrap_arcs(df, prior="AIC")


def test_prior_reaches_the_searches():
    """One resample by hand: the search under prior= and ess= gives the same arcs."""
    df = _known(60)
    data = bx.data.as_discrete(df)
    sample = data.take(np.random.default_rng(4).integers(0, 60, 60))
    for prior, ess in (("K2", 1.0), ("BDeu", 50.0)):
        boot = bx.averaging.bootstrap_arcs(df, n_boot=1, random_state=4, prior=prior, ess=ess)
        dag = bx.search.hill_climb(sample, prior=prior, ess=ess).dag
        assert {(u, v) for u, v in dag.edges()} == {(u, v) for u in boot.names for v in boot.names
                                                    if boot.arc_strength.loc[u, v] == 1.0}


def _direct_threshold(s):
    """p0 by minimising the L1 distance on a fine grid, then R's type-1 quantile."""
    s = np.sort(s)
    xs = np.linspace(0, 1, 20001)[:-1] + 0.5 / 20000
    F = np.searchsorted(s, xs, side="right") / s.size
    ps = np.linspace(0, 1, 2001)
    norms = np.array([np.mean(np.abs(F - p)) for p in ps])
    p0 = ps[np.argmin(norms)]
    return s[max(int(np.ceil(p0 * s.size)) - 1, 0)], norms.min()


@pytest.mark.parametrize("seed", range(5))
def test_threshold_against_direct_minimisation(seed):
    rng = np.random.default_rng(seed)
    s = np.round(np.concatenate([rng.beta(0.3, 3, 40), rng.beta(4, 0.4, 8)]), 2)
    got = inclusion_threshold(s)
    want, _ = _direct_threshold(s)
    # the minimiser can be a flat interval of p: both must give the same L1 distance
    xs = np.linspace(0, 1, 20001)[:-1] + 0.5 / 20000
    F = np.searchsorted(np.sort(s), xs, side="right") / s.size
    l1 = lambda t: np.mean(np.abs(F - np.mean(s <= t)))  # noqa: E731
    assert l1(got) <= l1(want) + 1e-3


def test_threshold_extremes():
    assert inclusion_threshold(np.array([0.0, 0.0, 1.0, 1.0])) == 0.0
    with pytest.raises(ValueError):
        inclusion_threshold(np.array([]))


def test_arc_table_columns_and_values():
    df = _known(200)
    t = bx.averaging.arc_table(df, max_parents=2, n_boot=5, random_state=0)
    labels = list(t.columns)
    assert labels[:2] == ["parent", "child"] and len(t) == 12
    assert any("order-modular" in c for c in labels)
    assert any(c.startswith("all DAGs: uniform over DAGs") for c in labels)
    assert any(c.startswith("bootstrap arc: none") for c in labels)
    exact = bx.averaging.AllDAGs(df, max_parents=2).arc_posteriors()
    col = next(c for c in labels if c.startswith("all DAGs"))
    row = t[(t.parent == "X0") & (t.child == "X1")].index[0]
    assert t.loc[row, col] == pytest.approx(exact.loc["X0", "X1"])
    ao_col = next(c for c in labels if c.startswith("all orders"))
    assert t[ao_col].between(0, 1).all()
