"""Bundled UCI data sets: names, load, load_data, describe."""
import warnings

import numpy as np
import pandas as pd
import pytest

import bnexplore as bx
from bnexplore.data import DiscreteData
from bnexplore.data.core import _is_continuous

EXPECTED = ["breast-cancer", "contact-lenses", "credit-g", "diabetes", "glass", "ionosphere", "iris",
            "labor", "segment-challenge", "segment-test", "soybean", "vote", "weather.nominal"]

# rows, attributes (without the class), classes occurring, numeric attributes, missing cells
FACTS = {
    "breast-cancer": (286, 9, 2, 0, 9), "contact-lenses": (24, 4, 3, 0, 0),
    "credit-g": (1000, 20, 2, 7, 0), "diabetes": (768, 8, 2, 8, 0), "glass": (214, 9, 6, 9, 0),
    "ionosphere": (351, 34, 2, 34, 0), "iris": (150, 4, 3, 4, 0), "labor": (57, 16, 2, 8, 326),
    "segment-challenge": (1500, 19, 7, 19, 0), "segment-test": (810, 19, 7, 19, 0),
    "soybean": (683, 35, 19, 0, 2337), "vote": (435, 16, 2, 0, 392), "weather.nominal": (14, 4, 2, 0, 0),
}


def test_names():
    assert bx.datasets.names() == EXPECTED


def test_unknown_name_lists_names():
    with pytest.raises(ValueError, match=r"unknown data set 'irises'; bundled data sets are \['breast-cancer'"):
        bx.datasets.load("irises")
    with pytest.raises(ValueError, match="weather.nominal"):
        bx.datasets.load_data("alarm")
    with pytest.raises(TypeError, match="must be a string"):
        bx.datasets.load(3)
    assert bx.datasets.load("iris.arff").shape == (150, 5)


def test_bad_options():
    with pytest.raises(ValueError, match="discretize must be None, 'mdl' or 'quantile', got 'kmeans'"):
        bx.datasets.load("iris", discretize="kmeans")
    with pytest.raises(ValueError, match="missing must be 'keep', 'drop' or 'state', got 'fill'"):
        bx.datasets.load("iris", missing="fill")
    with pytest.raises(ValueError, match="missing must be 'drop', 'state' or 'raise', got 'keep'"):
        bx.datasets.load_data("iris", missing="keep")


def test_describe_matches_facts():
    d = bx.datasets.describe()
    assert list(d.index) == EXPECTED
    for name, (rows, attrs, classes, numeric, missing) in FACTS.items():
        row = d.loc[name]
        assert (row["rows"], row["attributes"], row["classes"], row["numeric"], row["missing_cells"]) == \
            (rows, attrs, classes, numeric, missing), name
    assert d.loc["vote", "target"] == "Class" and d.loc["glass", "target"] == "Type"
    assert d.loc["vote", "rows_with_missing"] == 203
    d.loc["vote", "rows"] = -1                      # a copy: the cache is untouched
    assert bx.datasets.describe().loc["vote", "rows"] == 435


def test_load_keeps_floats_without_discretize():
    df = bx.datasets.load("diabetes")
    assert df.attrs["target"] == "class" and df.shape == (768, 9)
    assert all(df[c].dtype == np.float64 for c in df.columns if c != "class")
    assert isinstance(df["class"].dtype, pd.CategoricalDtype)
    df["plas"] = 0.0                                 # callers get a fresh copy each time
    assert bx.datasets.load("diabetes")["plas"].nunique() > 100


def test_load_mdl_and_quantile():
    mdl = bx.datasets.load("iris", discretize="mdl")
    assert list(mdl["petallength"].cat.categories) == ["(-inf, 2.45]", "(2.45, 4.75]", "(4.75, inf)"]
    assert mdl.attrs["cut_points"]["petalwidth"] == pytest.approx([0.8, 1.75])
    q = bx.datasets.load("iris", discretize="quantile", n_bins=3)
    for c in ["sepallength", "sepalwidth", "petallength", "petalwidth"]:
        assert isinstance(q[c].dtype, pd.CategoricalDtype) and 2 <= len(q[c].cat.categories) <= 3
    assert q["class"].equals(mdl["class"])
    # every numeric attribute is discretised, even integer-valued ones with few values
    credit = bx.datasets.load("credit-g", discretize="quantile")
    assert all(isinstance(credit[c].dtype, pd.CategoricalDtype) for c in credit.columns)


def test_missing_options():
    with pytest.warns(UserWarning, match=r"vote: dropped 203 of 435 rows with missing values"):
        v = bx.datasets.load("vote", missing="drop")
    assert len(v) == 232 and not v.isna().any().any() and v.attrs["target"] == "Class"
    s = bx.datasets.load("vote", missing="state")
    assert len(s) == 435 and list(s["crime"].cat.categories) == ["n", "y", "?"]
    with pytest.warns(UserWarning, match=r"labor: dropped 56 of 57 rows.*consider missing='state'"):
        bx.datasets.load("labor", missing="drop")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bx.datasets.load("vote").isna().sum().sum() == 392


@pytest.mark.parametrize("name", EXPECTED)
def test_every_data_set_loads_as_discrete_data(name):
    if name == "labor":     # one complete row: dropping is refused with a hint, 'state' works
        with pytest.warns(UserWarning, match="dropped 56 of 57"):
            with pytest.raises(ValueError, match="labor: after dropping 56 of 57 rows.*missing='state'"):
                bx.datasets.load_data(name)
        d = bx.datasets.load_data(name, missing="state")
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            d = bx.datasets.load_data(name)
    assert isinstance(d, DiscreteData)
    rows, attrs, classes, _, missing = FACTS[name]
    assert d.n_cols == attrs + 1 and d.target == bx.datasets.describe().loc[name, "target"]
    assert d.n_rows == rows if (missing == 0 or name == "labor") else d.n_rows < rows
    frame = d.to_frame()
    assert not any(_is_continuous(frame[c]) for c in frame.columns)
    assert (d.arities >= 1).all() and d.arities[d.index(d.target)] >= classes


def test_load_data_without_discretize_refuses_continuous():
    with pytest.raises(ValueError, match=r"column 'sepallength' is continuous.*MDLDiscretizer"):
        bx.datasets.load_data("iris", discretize=None)
    d = bx.datasets.load_data("vote", discretize=None, missing="state")
    assert d.n_rows == 435 and d.arities.tolist() == [3] * 16 + [2]
    with pytest.raises(ValueError, match=r"392 missing values in 203 rows"):
        bx.datasets.load_data("vote", missing="raise")
    q = bx.datasets.load_data("diabetes", discretize="quantile", n_bins=4)
    assert q.arities.max() <= 4


def test_quickstart_example_from_design():
    df = bx.datasets.load("vote")
    assert df.attrs["target"] == "Class"
    assert all(isinstance(df[c].dtype, pd.CategoricalDtype) for c in df.columns)
