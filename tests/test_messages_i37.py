"""Messages and parameters under hostile use (issue 37, point 5): each message tested."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bnexplore.data import set_table_budget


def _wide_classes(n: int = 400, r: int = 12, k: int = 30, seed: int = 0):
    """Features of ``r`` states that copy the class (``k`` classes) and one another."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    cols = {}
    for j in range(3):
        cols[f"f{j}"] = np.where(rng.random(n) < 0.8, (y + j) % r, rng.integers(0, r, n)).astype(str)
    return pd.DataFrame(cols), y.astype(str)


def test_gtt_never_picks_a_structure_whose_table_exceeds_the_budget():
    from bnexplore.classifiers import GreedyThickThin

    X, y = _wide_classes()
    budget = 12 * 30 - 1             # the class and a feature cannot share a family
    old = set_table_budget(budget)
    try:
        clf = GreedyThickThin().fit(X, y)           # raised MemoryBudgetError before
        p = clf.predict_proba(X.iloc[:5])
    finally:
        set_table_budget(old)
    net = clf.network_
    for v in net.nodes:
        cells = np.prod([len(net.states[u]) for u in net.parents(v)]) * len(net.states[v])
        assert cells <= budget, (v, net.parents(v))
    assert p.shape == (5, 30) and np.allclose(p.sum(axis=1), 1.0)
    # unbudgeted, the search does pick a larger family (the case above is not vacuous)
    big = GreedyThickThin().fit(X, y).network_
    assert max(np.prod([len(big.states[u]) for u in big.parents(v)]) * len(big.states[v])
               for v in big.nodes) > budget
