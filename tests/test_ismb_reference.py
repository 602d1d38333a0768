"""ISMB predicts as before the wide-data and speed work (issue 38): probabilities of the
three variants, the models in R and their scores, saved with the earlier code by
tests/data/make_ismb_reference.py (vote with missing cells, ionosphere, soybean)."""
import importlib.util
import pathlib

import numpy as np
import pytest

from bnexplore.classifiers import ISMB

HERE = pathlib.Path(__file__).parent / "data"


def _maker():
    spec = importlib.util.spec_from_file_location("make_ismb_reference",
                                                  HERE / "make_ismb_reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


MAKER = _maker()
CASES = MAKER.cases()


@pytest.fixture(scope="module")
def reference():
    return np.load(HERE / "ismb_reference.npz")


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_same_predictions_and_models_as_before(case, reference):
    name, Xtr, ytr, Xte, params = case
    clf = ISMB(**params).fit(Xtr, ytr)
    probs = clf.predict_proba_variants(Xte)
    for variant, p in probs.items():
        # to the last bits: numba compiles for the host's CPU (AVX-512 or not), which
        # may sum in another order; the models themselves must be the same
        np.testing.assert_allclose(p, reference[f"{name}/{variant}"], rtol=1e-12, atol=1e-15,
                                   err_msg=variant)
    res = clf.search_instances(Xte)
    np.testing.assert_array_equal([len(r["ismb"].models) for r in res], reference[f"{name}/n_models"])
    np.testing.assert_allclose(np.concatenate([r["ismb"].log_scores for r in res]),
                               reference[f"{name}/log_scores"], rtol=1e-12)
    masks = [m for r in res for mb in r["ismb"].models for m in mb.masks]
    np.testing.assert_array_equal(np.array(masks, dtype=np.int64), reference[f"{name}/masks"])
