"""User data upload: parsing, validation, MDL discretisation, and the upload in the page."""
from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]


def _csv(n=60, seed=0) -> bytes:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    cls = np.where(x > 0.2, "high", "low")
    colour = rng.choice(["red", "blue"], size=n)
    lines = ["x,colour,count,label"] + [f"{a:.4f},{c},{i % 3},{k}"
                                         for i, (a, c, k) in enumerate(zip(x, colour, cls))]
    return ("\n".join(lines) + "\n").encode()


ARFF = b"""@relation t
@attribute temp numeric
@attribute wind {yes, no}
@attribute play {yes, no}
@data
""" + b"\n".join(f"{t},{w},{'yes' if t < 20 else 'no'}".encode()
                 for t, w in zip(range(5, 35), ["yes", "no"] * 15)) + b"\n"


def test_read_upload_csv_and_arff(common):
    df = common.read_upload(_csv(), "data.csv")
    assert list(df.columns) == ["x", "colour", "count", "label"]
    arff = common.read_upload(ARFF, "weather.ARFF")
    assert arff.attrs["target"] == "play" and len(arff) == 30


@pytest.mark.parametrize("content, name, match", [
    (b"", "a.csv", "is empty"),
    (b"a,b\n1,2\n", "a.xlsx", "not supported"),
    (b"a,a\n1,2\n", "a.csv", "duplicate column names"),
    (b"@relation r\n@attribute x {a,b}\n@data\nc\n", "r.arff", "not one of the declared"),
    (b"a,b\n", "a.csv", "no data rows"),
])
def test_read_upload_errors_name_the_problem(common, content, name, match):
    with pytest.raises(ValueError, match=match):
        common.read_upload(content, name)


def test_size_limit(common):
    with pytest.raises(ValueError, match=r"over the upload limit of 1,000 bytes"):
        common.read_upload(b"a,b\n" + b"1,2\n" * 400, "big.csv", max_bytes=1000)


def test_prepare_upload_discretises_with_mdl_and_keeps_nominal(common):
    from bnexplore.data import DiscreteData, MDLDiscretizer

    raw = common.read_upload(_csv(), "data.csv")
    up = common.prepare_upload(raw, "label")
    # x is continuous: cut by MDL against the class, same cut points as the data layer
    expected = MDLDiscretizer().fit(raw[["x"]], raw["label"]).cut_points_["x"]
    assert up.cut_points["x"] == expected and len(expected) == 1
    assert abs(expected[0] - 0.2) < 0.3
    df = up.frame
    assert df.attrs["target"] == "label"
    assert all(isinstance(df[c].dtype, pd.CategoricalDtype) for c in df.columns)
    assert sorted(df["count"].cat.categories) == ["0", "1", "2"]   # small ints: states
    d = DiscreteData.from_frame(df, target="label")
    assert d.arities.tolist()[-1] == 2
    md = common.cut_points_markdown(up.cut_points)
    assert "| x |" in md


def test_prepare_upload_bad_targets(common):
    raw = common.read_upload(_csv(), "data.csv")
    with pytest.raises(ValueError, match="looks continuous"):
        common.prepare_upload(raw, "x")
    one = raw.assign(label="same")
    with pytest.raises(ValueError, match="single class 'same'"):
        common.prepare_upload(one, "label")
    with pytest.raises(ValueError, match="not a column"):
        common.prepare_upload(raw, "nope")
    with pytest.raises(ValueError, match="at least one feature"):
        common.prepare_upload(raw[["label"]], "label")


def test_missing_class_rows_dropped_and_missing_values_become_a_state(common):
    raw = common.read_upload(b"a,b,c\nx,1.5,yes\ny,?,no\n?,2.5,\nx,3.5,no\n", "m.csv")
    up = common.prepare_upload(raw, "c")
    assert len(up.frame) == 3 and "dropped 1 rows" in up.notes[0]
    assert "?" in list(up.frame["b"].cat.categories) + list(up.frame["a"].cat.categories)


def test_stored_upload_is_served_by_load_data(common):
    raw = common.read_upload(_csv(), "data.csv")
    up = common.prepare_upload(raw, "label")
    key = common.store_upload(up, "data.csv", _csv())
    assert key.startswith(common.UPLOAD_PREFIX) and "[label]" in key
    assert common.load_data(common.DATASET, key) is up.frame
    # same file and target -> same name; another target -> another name
    assert common.store_upload(up, "data.csv", _csv()) == key
    with pytest.raises(ValueError, match="no longer on the server"):
        common.load_data(common.DATASET, common.UPLOAD_PREFIX + "gone [x] #00000000")


def test_datasource_upload_flow_in_process(common):
    src = common.DataSource()
    src.upload.filename = "data.csv"
    src.upload.value = _csv()
    assert src.dataset.value.startswith(common.UPLOAD_PREFIX)
    assert src.upload_target.value == "label" and src.upload_target.visible
    assert "cut points" in src.upload_info.object and "| x |" in src.upload_info.object
    first = src.dataset.value
    # choosing another target re-discretises: a new data set entry
    src.upload_target.value = "colour"
    assert src.dataset.value != first and "[colour]" in src.dataset.value
    assert [o for o in src.dataset.options if str(o).startswith(common.UPLOAD_PREFIX)] == \
        [src.dataset.value]
    # a bad file: message in the page, the chosen data set is kept
    keep = src.dataset.value
    src.upload.filename = "bad.csv"
    src.upload.value = b"a,b\n1,x\n2,x\n"
    assert "Cannot use this file" in src.upload_info.object
    assert "single class" in src.upload_info.object
    assert src.dataset.value == keep
    # the file input and the target select stay out of the URL
    assert not ({"class_column_of_the_file"} & set(common.url_widgets(src.widgets())))


# ------------------------------------------------------------------ browser
@pytest.mark.browser
def test_upload_in_the_page(panel_server, page, tmp_path):
    good = tmp_path / "mydata.csv"
    good.write_bytes(_csv(120, seed=1))
    bad = tmp_path / "oneclass.csv"
    bad.write_bytes(b"a,b,class\n1,x,yes\n2,y,yes\n3,x,yes\n")
    page.goto(f"{panel_server}/apps?app=structure")
    page.locator(".bnx-score").first.wait_for(timeout=120_000)
    before = page.locator(".bnx-score").first.text_content()

    page.locator("input[type=file]").first.set_input_files(str(bad))
    page.locator("text=Cannot use this file").first.wait_for(timeout=30_000)
    assert page.locator("text=single class").count() >= 1
    assert page.locator(".bnx-score").first.text_content() == before    # page still fine

    page.locator("input[type=file]").first.set_input_files(str(good))
    page.locator(".bnx-upload-ok").first.wait_for(timeout=30_000)
    assert page.locator("text=MDL cut points").count() >= 1
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        src = page.locator(".bnx-source").first.text_content() or ""
        if "mydata.csv" in src:
            break
        page.wait_for_timeout(250)
    assert "mydata.csv" in src
    assert re.fullmatch(r"-?\d+\.\d+", page.locator(".bnx-score").first.text_content().strip())
    assert page.console_errors == []
