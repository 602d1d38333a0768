"""User data upload: parsing, validation, MDL discretisation, and the upload in the page."""
from __future__ import annotations

import html
import re
import time

import numpy as np
import pandas as pd
import pytest

from bnexplore.apps.data import (UPLOAD_MAX_BYTES, UPLOAD_MAX_COLUMNS, UPLOAD_MAX_DECLARED_VALUES,
                                  UPLOAD_MAX_VALUES, prepare_table, read_upload)


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


def test_read_upload_csv_and_arff():
    df = read_upload(_csv(), "data.csv")
    assert list(df.columns) == ["x", "colour", "count", "label"]
    arff = read_upload(ARFF, "weather.ARFF")
    assert arff.attrs["target"] == "play" and len(arff) == 30


@pytest.mark.parametrize("content, name, match", [
    (b"", "a.csv", "is empty"),
    (b"a,b\n1,2\n", "a.xlsx", "not supported"),
    (b"a,a\n1,2\n", "a.csv", "duplicate column names"),
    (b"@relation r\n@attribute x {a,b}\n@data\nc\n", "r.arff", "not one of the declared"),
    (b"a,b\n", "a.csv", "no data rows"),
])
def test_read_upload_errors_name_the_problem(content, name, match):
    with pytest.raises(ValueError, match=match):
        read_upload(content, name)


def test_size_limit():
    with pytest.raises(ValueError, match=r"over the upload limit of 1,000 bytes"):
        read_upload(b"a,b\n" + b"1,2\n" * 400, "big.csv", max_bytes=1000)


def test_prepare_table_discretises_with_mdl_and_keeps_nominal():
    from bnexplore.data import DiscreteData, MDLDiscretizer

    raw = read_upload(_csv(), "data.csv")
    up = prepare_table(raw, "label")
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


def test_prepare_table_bad_targets():
    raw = read_upload(_csv(), "data.csv")
    with pytest.raises(ValueError, match="looks continuous"):
        prepare_table(raw, "x")
    one = raw.assign(label="same")
    with pytest.raises(ValueError, match="single class 'same'"):
        prepare_table(one, "label")
    with pytest.raises(ValueError, match="not a column"):
        prepare_table(raw, "nope")
    with pytest.raises(ValueError, match="no feature column besides the target"):
        prepare_table(raw[["label"]], "label")


def test_missing_class_rows_dropped_and_missing_values_become_a_state():
    raw = read_upload(b"a,b,c\nx,1.5,yes\ny,?,no\n?,2.5,\nx,3.5,no\n", "m.csv")
    up = prepare_table(raw, "c")
    assert len(up.frame) == 3 and "dropped 1 rows" in up.notes[0]
    assert "?" in list(up.frame["b"].cat.categories) + list(up.frame["a"].cat.categories)


def test_an_upload_in_an_app_reports_and_uses_the_file():
    import bnexplore.apps as bxa

    app = bxa.LearnStructure()
    app.load_file(_csv(), "data.csv")
    assert app.source == "your data" and app.target == "label"
    assert app.data.label == "data.csv" and app.data.cut_points["x"]
    text = html.unescape(re.sub(r"<[^>]+>", "", app.data_view().object))
    assert "data.csv: 60 rows, 4 columns read" in text and "class label" in text
    assert "class label (2 values: high, low)" in text
    assert "Cut points of the continuous columns" in text and "x" in text
    first = app.data.key
    app.target = "colour"                    # another class: cut again against it
    assert app.data.key != first and app.data.target == "colour"
    # a file that cannot be read: the report says why, the data stay
    app.load_file(b"PK\x03\x04", "x.xlsx")
    assert "Cannot use this file" in app.upload_status and "not supported" in app.upload_status
    assert app.data.target == "colour"
    # a file read whose class cannot be used: the views say why
    app.load_file(b"a,b\n1,x\n2,x\n", "bad.csv")
    assert app.data.frame is None and "single class" in app.data.error


def test_the_browser_side_refusals_reach_the_report():
    import bnexplore.apps as bxa
    from bnexplore.apps.guard import UploadGuard

    app = bxa.LearnStructure()
    controls = app.data_controls()
    guard = next(o for o in controls.objects if isinstance(o, UploadGuard))
    upload = next(o for o in controls.objects if isinstance(o, __import__("panel").widgets.FileInput))
    assert guard.max_bytes == UPLOAD_MAX_BYTES and guard.target_class in upload.css_classes
    guard.refused = {"name": "huge.csv", "size": 21_000_000, "n": 1}
    assert "21,000,000 bytes, over the upload limit of 5,000,000" in app.upload_status
    guard.refused = {"name": "none.csv", "size": 0, "n": 2}
    assert "is empty" in app.upload_status
    upload.filename, upload.value = "data.csv", _csv()        # the file input reads the file
    assert app.data.label == "data.csv"


# ------------------------------------------------------------------ browser
@pytest.mark.browser
def test_upload_in_the_page(panel_server, page, tmp_path):
    """The Learn a structure page (bnexplore.apps) on an uploaded file."""
    good = tmp_path / "mydata.csv"
    good.write_bytes(_csv(120, seed=1))
    bad = tmp_path / "garbage.csv"
    bad.write_bytes(bytes(range(256)) * 40)
    page.goto(f"{panel_server}/apps?app=structure", timeout=120_000)
    page.locator(".bnx-score").first.wait_for(timeout=120_000)
    before = page.locator(".bnx-score").first.text_content()

    page.locator("input[type=file]").first.set_input_files(str(bad))
    page.locator("text=Cannot use this file").first.wait_for(timeout=30_000)
    assert page.locator(".bnx-score").first.text_content() == before    # page still fine

    page.locator("input[type=file]").first.set_input_files(str(good))
    deadline = time.monotonic() + 60
    src = ""
    while time.monotonic() < deadline:
        src = page.locator(".bnx-source").first.text_content() or ""
        if "mydata.csv" in src:
            break
        page.wait_for_timeout(250)
    assert "mydata.csv" in src
    assert page.locator("text=Cut points of the continuous columns").count() >= 1
    deadline = time.monotonic() + 60
    while page.locator(".bnx-score").first.text_content() == before:
        assert time.monotonic() < deadline, "the structure of the upload never showed"
        page.wait_for_timeout(250)
    assert re.fullmatch(r"-?\d+\.\d+", page.locator(".bnx-score").first.text_content().strip())
    assert "your+data" in page.url or "your%20data" in page.url
    assert page.console_errors == []


# ------------------------------------------------------------------ hostile input (no server)
def _exact_csv(size: int) -> bytes:
    """A valid CSV of exactly ``size`` bytes (padding in a text column)."""
    head = b"x,pad,class\n"
    rows = b"".join(f"{i % 7}.5,p,{'yes' if i % 2 else 'no'}\n".encode() for i in range(200))
    body = head + rows
    pad = size - len(body) - len(b"1.5,,no\n")
    assert pad > 0
    return body + b"1.5," + b"q" * pad + b",no\n"


def _hostile(name: str) -> bytes:
    rng = np.random.default_rng(0)
    if name == "wide.csv":
        return (",".join(f"c{i}" for i in range(10_000)) + "\n"
                + "\n".join(",".join(str(v) for v in rng.integers(0, 3, 10_000))
                            for _ in range(40)) + "\n").encode()
    if name == "values.arff":
        values = ",".join(f"v{i}" for i in range(200_000))
        return (f"@relation r\n@attribute x {{{values}}}\n@attribute class {{a,b}}\n"
                f"@data\nv1,a\nv2,b\n").encode()
    if name == "garbage.csv":
        return rng.integers(0, 256, 300_000, dtype=np.uint8).tobytes()
    if name == "longrow.csv":   # pandas made 2,000,000 extra values an index: never ended
        return b"a,b,class\n" + b"1," * 2_000_000 + b"\n"
    raise KeyError(name)


@pytest.mark.parametrize("name, match", [
    ("wide.csv", r"has 10,000 columns, over the limit of 100: keep the columns you need"),
    ("values.arff", r"declares 200,000 values, over the limit of 1,000 per attribute"),
    ("garbage.csv", r"binary file.*save the data as UTF-8 text"),
    ("longrow.csv", r"row 2 has 2,000,001 values, over the limit of 100 columns"),
])
def test_hostile_uploads_refused_fast_with_a_message(name, match):
    content = _hostile(name)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=match):
        raw = read_upload(content, name)
        prepare_table(raw, str(raw.columns[-1]))
    elapsed = time.perf_counter() - t0
    # before the limits: 10,000 columns took 4 minutes, 200,000 values never finished
    assert elapsed < 20, f"{name} took {elapsed:.1f} s"


def test_upload_limits_on_columns_and_values():
    cols = ",".join(f"c{i}" for i in range(UPLOAD_MAX_COLUMNS + 1))
    row = ",".join("1" for _ in range(UPLOAD_MAX_COLUMNS + 1))
    with pytest.raises(ValueError, match=rf"{UPLOAD_MAX_COLUMNS + 1} columns, over the "
                                         rf"limit of {UPLOAD_MAX_COLUMNS}"):
        read_upload(f"{cols}\n{row}\n".encode(), "w.csv")
    ok = ",".join(f"c{i}" for i in range(UPLOAD_MAX_COLUMNS))
    okrow = ",".join("1" for _ in range(UPLOAD_MAX_COLUMNS))
    assert read_upload(f"{ok}\n{okrow}\n".encode(), "w.csv").shape[1] == \
        UPLOAD_MAX_COLUMNS
    n = UPLOAD_MAX_VALUES + 1
    ids = "id,class\n" + "".join(f"row{i},{'ab'[i % 2]}\n" for i in range(n))
    with pytest.raises(ValueError, match=rf"column 'id' .* {n:,} distinct values, over the limit"):
        read_upload(ids.encode(), "ids.csv")
    per = UPLOAD_MAX_VALUES
    n_att = UPLOAD_MAX_DECLARED_VALUES // per + 1
    attrs = "".join(f"@attribute a{j} {{{','.join(f'v{i}' for i in range(per))}}}\n"
                    for j in range(n_att))
    arff = f"@relation r\n{attrs}@data\n{','.join('v0' for _ in range(n_att))}\n"
    with pytest.raises(ValueError, match=rf"nominal values in all, over the limit of "
                                         rf"{UPLOAD_MAX_DECLARED_VALUES:,}"):
        read_upload(arff.encode(), "many.arff")


def test_upload_size_limit_is_exact():
    assert UPLOAD_MAX_BYTES == 5_000_000
    exact = _exact_csv(5_000_000)
    assert len(exact) == 5_000_000
    assert read_upload(exact, "exact.csv").shape == (201, 3)
    with pytest.raises(ValueError, match=r"5,000,001 bytes, over the upload limit of 5,000,000"):
        read_upload(_exact_csv(5_000_001), "over.csv")


@pytest.mark.parametrize("codec", ["utf-16", "utf-8-sig", "utf-8"])
def test_upload_text_encodings(codec):
    text = "name,n,class\n" + "".join(f"{'Zoë' if i % 2 else 'José'},{i % 3},"
                                      f"{'oui' if i % 2 else 'non'}\n" for i in range(40))
    raw = read_upload(text.encode(codec), "t.csv")
    assert list(raw.columns) == ["name", "n", "class"]
    up = prepare_table(raw, "class")
    assert sorted(up.frame["name"].cat.categories) == ["José", "Zoë"]
    with pytest.raises(ValueError, match="without a byte-order mark"):
        read_upload(text.encode("utf-16-le"), "t.csv")
