"""bnexplore.data.prepare_frame: the one preparation of a table, for bundled data and uploads."""
import warnings

import numpy as np
import pandas as pd
import pytest

import bnexplore as bx
from bnexplore.data import prepare_frame


@pytest.fixture()
def raw():
    rng = np.random.default_rng(0)
    n = 120
    x = rng.normal(size=n)
    df = pd.DataFrame({"x": x, "few": rng.integers(0, 3, n).astype(float),
                       "s": pd.Categorical(rng.choice(["a", "b"], n)),
                       "class": pd.Categorical(np.where(x > 0, "pos", "neg"))})
    df.loc[::10, "s"] = np.nan
    df.loc[::7, "few"] = np.nan
    return df


def test_load_is_prepare_frame_of_the_raw_file():
    for name, disc, miss in (("iris", "mdl", "keep"), ("vote", None, "state"),
                             ("credit-g", "quantile", "keep"), ("labor", "mdl", "state")):
        raw = bx.datasets.load(name)                       # the file as read
        expected = prepare_frame(raw, raw.attrs["target"], discretize=disc, missing=miss)
        got = bx.datasets.load(name, discretize=disc, missing=miss)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
        assert got.attrs.get("cut_points") == expected.attrs.get("cut_points")


def test_mdl_cuts_and_missing_state(raw):
    df = prepare_frame(raw, "class", discretize="mdl", missing="state")
    assert df.attrs["target"] == "class" and df.attrs["cut_points"]["x"] == pytest.approx(
        [float(np.max(raw.x[raw.x <= 0]) + np.min(raw.x[raw.x > 0])) / 2])
    assert "?" in df["s"].cat.categories and not df["s"].isna().any()
    assert isinstance(df["few"].dtype, pd.CategoricalDtype)      # numeric: cut too
    assert list(df.columns) == list(raw.columns) and raw["x"].dtype == float   # input unchanged


def test_auto_columns_keep_few_integer_values_as_text_states(raw):
    df = prepare_frame(raw, "class", discretize="mdl", missing="state", columns="auto")
    assert "few" not in df.attrs["cut_points"]
    assert sorted(df["few"].cat.categories) == ["0", "1", "2", "?"]


def test_no_discretization_keeps_numbers_and_drop_warns(raw):
    kept = prepare_frame(raw, "class")
    assert kept["x"].dtype == float and kept["s"].isna().sum() == 12
    with pytest.warns(UserWarning, match=r"dropped 28 of 120 rows"):
        dropped = prepare_frame(raw, "class", missing="drop")
    assert len(dropped) == 92 and not dropped.isna().any().any()


@pytest.mark.parametrize("kwargs, match", [
    ({"target": "nope"}, "not a column"), ({"discretize": "ew"}, "discretize must be"),
    ({"missing": "impute"}, "missing must be"), ({"columns": "all"}, "columns must be")])
def test_bad_arguments_are_refused(raw, kwargs, match):
    args = {"target": "class", **kwargs}
    with pytest.raises(ValueError, match=match):
        prepare_frame(raw, **args)


def test_upload_and_bundled_data_are_prepared_alike():
    """An uploaded copy of a bundled file gets the bundled data set's states."""
    from bnexplore.apps.data import prepare_table

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bundled = bx.datasets.load("iris", discretize="mdl", missing="state")
    raw = bx.datasets.load("iris")
    up = prepare_table(raw, "class")
    for c in bundled.columns:
        assert list(up.frame[c].astype(str)) == list(bundled[c].astype(str)), c
    assert up.cut_points == {c: list(v) for c, v in bundled.attrs["cut_points"].items()}
