"""Every classifier fits and predicts wide data with its defaults (issue 38, point 5):
300 rows x 400 binary features (marked slow; the reduced size 150 x 120 is not) and 300
rows with 200 classes, the shapes benchmarks/bench_wide.py times; and the one-run
single-root tree of the forests equals the per-root search."""
import importlib.util
import pathlib
import warnings

import numpy as np
import pytest

from bnexplore import classifiers
from bnexplore._arborescence import rooted_trees
from bnexplore.forests import _one_root_tree

_spec = importlib.util.spec_from_file_location(
    "bench_wide", pathlib.Path(__file__).parents[1] / "benchmarks" / "bench_wide.py")
bench_wide = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_wide)


@pytest.mark.parametrize("seed", range(20))
def test_one_root_tree_is_the_best_tree_over_every_root(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 9))
    w = np.full((m + 1, m + 1), -np.inf)
    w[:, :m] = rng.normal(size=(m + 1, m)) * rng.choice([1, 50], size=(m + 1, m))
    np.fill_diagonal(w, -np.inf)
    if seed % 3 == 0:
        w[rng.random((m + 1, m + 1)) < 0.2] = -np.inf
    parent = _one_root_tree(w, m)
    trees, usable = rooted_trees(w, m) if np.isfinite(w[m, :m]).any() else (None, None)
    vals = [] if trees is None else [
        (w[trees[r, :m], np.arange(m)].sum(), r) for r in np.flatnonzero(usable)
        if np.isfinite(w[trees[r, :m], np.arange(m)]).all()]
    if not vals:
        assert parent is None
        return
    best, r = max(vals, key=lambda v: (v[0], -v[1]))
    assert parent is not None and (parent == m).sum() == 1
    assert w[parent, np.arange(m)].sum() == pytest.approx(best, rel=1e-12)
    np.testing.assert_array_equal(parent, trees[r, :m])


SHAPES = {"wide": bench_wide.wide, "classes": bench_wide.many_classes,
          # the reduced size: still past the 60 features where the wide defaults start
          "wide-reduced": lambda: bench_wide.wide(n=150, p=120)}


@pytest.mark.parametrize("shape", [pytest.param("wide", marks=pytest.mark.slow), "wide-reduced",
                                   "classes"])
@pytest.mark.parametrize("name", bench_wide.NAMES)
def test_fits_and_predicts_wide_data_with_defaults(name, shape):
    X, y = SHAPES[shape]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = getattr(classifiers, name)().fit(X, y)
        proba = clf.predict_proba(X.iloc[:2])
    assert proba.shape == (2, len(np.unique(y)))
    assert np.allclose(proba.sum(axis=1), 1.0)
