"""bnexplore._validation: one set of parameter checks, declared on the estimators."""
from __future__ import annotations

import numpy as np
import pytest

from bnexplore import classifiers as C
from bnexplore._validation import (ESS, Interval, InvalidParameterError, Options, Prior,
                                   check_probability, check_random_state, validate_params)

X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
y = np.array([0, 1, 1, 0])


def test_errors_are_value_and_type_errors_naming_the_parameter():
    with pytest.raises(ValueError, match="max_parents must be >= 0"):
        Interval(int, 0, None)(-1, "max_parents")
    with pytest.raises(TypeError, match="max_parents must be a non-negative int"):
        Interval(int, 0, None)(True, "max_parents")
    with pytest.raises(InvalidParameterError, match=r"tol must be > 0"):
        Interval(float, 0, None, closed="neither")(0.0, "tol")
    with pytest.raises(InvalidParameterError, match="must be a number"):
        Interval(float, 0, None)(float("nan"), "epsilon")
    assert Interval(float, 0, None, allow_inf=True)(np.inf, "penalty") == np.inf
    assert Interval(int, 0, None, allow_none=True)(None, "n") is None
    with pytest.raises(ValueError, match="prior must be one of"):
        Prior("K2", "BDeu")("bdeu", "prior")
    assert Prior("K2", "BDeu", ignore_case=True)("bdeu") == "BDeu"
    for bad in (0, -1.0, np.inf, True, "1"):
        with pytest.raises(ValueError, match="ess"):
            ESS()(bad, "ess")
    with pytest.raises(ValueError, match="averaging must be 'map' or 'bma'"):
        Options("map", "bma")("mean", "averaging")
    with pytest.raises(ValueError, match="p must be in"):
        check_probability(1.5, "p")


def test_random_state():
    rng = np.random.default_rng(1)
    assert check_random_state(rng) is rng
    assert check_random_state(3).integers(1 << 30) == np.random.default_rng(3).integers(1 << 30)
    for bad in (-1, True, "0", 1.5):
        with pytest.raises(InvalidParameterError, match="random_state"):
            check_random_state(bad)


@pytest.mark.parametrize("clf, name", [
    (C.NaiveBayes(prior="k2"), "prior"), (C.NaiveBayes(ess=0), "ess"),
    (C.NaiveAveraging(ess=np.nan), "ess"), (C.GreedyThickThin(max_parents=-1), "max_parents"),
    (C.AMA(max_parents=1.5), "max_parents"), (C.AMA(n=-2), "n"), (C.AMA(random_state=-1), "random_state"),
    (C.AODE(threshold=-1), "threshold"), (C.MAPLMD(max_iter=0), "max_iter"),
    (C.MAPLMG(method="bfgs"), "method"), (C.MAPLMG(tol=0), "tol"),
    (C.SFAN(penalty=-1), "penalty"), (C.SFAN(max_parents=-1), "max_parents"),
    (C.STAN(averaging="mean"), "averaging"), (C.TAN(prior="uniform"), "prior"),
    (C.FAN(ess=-1), "ess"), (C.ISMB(queue_width=0), "queue_width"),
    (C.ISMB(epsilon=-1), "epsilon"), (C.ISMB(variant="x"), "variant"),
    (C.BMAAODE(handle_unknown="ignore"), "handle_unknown"),
])
def test_every_classifier_checks_its_parameters_at_fit(clf, name):
    with pytest.raises(ValueError, match=name):
        clf.fit(X, y)


def test_constraints_merge_along_the_class_hierarchy():
    assert set(validate_params(C.SFAN())) == {"handle_unknown", "averaging", "prior", "ess",
                                              "penalty", "max_parents"}
    assert set(validate_params(C.MAPLMG())) == {"handle_unknown", "max_iter", "tol", "method"}
