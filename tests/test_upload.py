"""User data upload: parsing, validation, MDL discretisation, and the upload in the page."""
from __future__ import annotations

import html
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
    with pytest.raises(ValueError, match="no feature column besides the target"):
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
def test_hostile_uploads_refused_fast_with_a_message(common, name, match):
    content = _hostile(name)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=match):
        raw = common.read_upload(content, name)
        common.prepare_upload(raw, str(raw.columns[-1]))
    elapsed = time.perf_counter() - t0
    # before the limits: 10,000 columns took 4 minutes, 200,000 values never finished
    assert elapsed < 20, f"{name} took {elapsed:.1f} s"


def test_upload_limits_on_columns_and_values(common):
    cols = ",".join(f"c{i}" for i in range(common.UPLOAD_MAX_COLUMNS + 1))
    row = ",".join("1" for _ in range(common.UPLOAD_MAX_COLUMNS + 1))
    with pytest.raises(ValueError, match=rf"{common.UPLOAD_MAX_COLUMNS + 1} columns, over the "
                                         rf"limit of {common.UPLOAD_MAX_COLUMNS}"):
        common.read_upload(f"{cols}\n{row}\n".encode(), "w.csv")
    ok = ",".join(f"c{i}" for i in range(common.UPLOAD_MAX_COLUMNS))
    okrow = ",".join("1" for _ in range(common.UPLOAD_MAX_COLUMNS))
    assert common.read_upload(f"{ok}\n{okrow}\n".encode(), "w.csv").shape[1] == \
        common.UPLOAD_MAX_COLUMNS
    n = common.UPLOAD_MAX_VALUES + 1
    ids = "id,class\n" + "".join(f"row{i},{'ab'[i % 2]}\n" for i in range(n))
    with pytest.raises(ValueError, match=rf"column 'id' .* {n:,} distinct values, over the limit"):
        common.read_upload(ids.encode(), "ids.csv")
    per = common.UPLOAD_MAX_VALUES
    n_att = common.UPLOAD_MAX_DECLARED_VALUES // per + 1
    attrs = "".join(f"@attribute a{j} {{{','.join(f'v{i}' for i in range(per))}}}\n"
                    for j in range(n_att))
    arff = f"@relation r\n{attrs}@data\n{','.join('v0' for _ in range(n_att))}\n"
    with pytest.raises(ValueError, match=rf"nominal values in all, over the limit of "
                                         rf"{common.UPLOAD_MAX_DECLARED_VALUES:,}"):
        common.read_upload(arff.encode(), "many.arff")


def test_upload_size_limit_is_exact(common):
    assert common.UPLOAD_MAX_BYTES == 5_000_000
    exact = _exact_csv(5_000_000)
    assert len(exact) == 5_000_000
    assert common.read_upload(exact, "exact.csv").shape == (201, 3)
    with pytest.raises(ValueError, match=r"5,000,001 bytes, over the upload limit of 5,000,000"):
        common.read_upload(_exact_csv(5_000_001), "over.csv")


@pytest.mark.parametrize("codec", ["utf-16", "utf-8-sig", "utf-8"])
def test_upload_text_encodings(common, codec):
    text = "name,n,class\n" + "".join(f"{'Zoë' if i % 2 else 'José'},{i % 3},"
                                      f"{'oui' if i % 2 else 'non'}\n" for i in range(40))
    raw = common.read_upload(text.encode(codec), "t.csv")
    assert list(raw.columns) == ["name", "n", "class"]
    up = common.prepare_upload(raw, "class")
    assert sorted(up.frame["name"].cat.categories) == ["José", "Zoë"]
    with pytest.raises(ValueError, match="without a byte-order mark"):
        common.read_upload(text.encode("utf-16-le"), "t.csv")


def test_process_upload_keeps_columns_when_the_target_fails(common):
    res = common.process_upload(b"a,b,class\n1,x,yes\n2,y,yes\n", "one.csv")
    assert res.columns == ["a", "b", "class"] and res.target == "class"
    assert res.prepared is None and "single class" in str(res.error)
    res = common.process_upload(b"a,b,class\n1,x,yes\n2,y,yes\n", "one.csv", target="b")
    assert res.error is None and res.prepared.target == "b"


# ------------------------------------------------------------------ jobs off the event loop
def test_upload_job_runs_in_another_process_and_is_cancellable(common):
    import os

    out = []
    job = common.UploadJob(_csv(), "data.csv", None, out.append)
    assert job.wait(120) and len(out) == 1
    assert isinstance(out[0], common.UploadResult) and out[0].target == "label"
    assert out[0].prepared.cut_points["x"]
    assert job._proc.pid != os.getpid() and not job._proc.is_alive()

    slow = common.UploadJob(_csv(), "data.csv", None, out.append, delay=60)
    deadline = time.monotonic() + 60
    while slow._proc is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert slow._proc is not None and slow._proc.is_alive()
    slow.cancel()
    assert slow.wait(30) and not slow._proc.is_alive()
    assert len(out) == 1            # a cancelled job reports nothing


def test_upload_job_time_and_memory_limits(common):
    out = []
    job = common.UploadJob(_csv(), "data.csv", None, out.append, timeout=1, delay=30)
    assert job.wait(60)
    assert isinstance(out[0], TimeoutError)
    assert "took more than 1 s and was stopped" in str(out[0])
    assert not job._proc.is_alive()
    # a worker that needs more memory than allowed is stopped with a message
    out.clear()
    job = common.UploadJob(_exact_csv(5_000_000), "exact.csv", None, out.append,
                           max_memory=20_000_000)
    assert job.wait(120)
    assert isinstance(out[0], BaseException), out[0]
    assert re.search(r"needs more than the 0.02 GB|out of memory", str(out[0])), out[0]


def _wait_for(pred, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False


def test_datasource_reads_in_the_background_and_a_new_upload_supersedes(common):
    src = common.DataSource(background=True)
    src.upload_delay = 60
    src.upload.filename = "slow.csv"
    src.upload.value = _csv()
    # at once: the "reading" state, the file input answered without waiting
    assert "Reading the file" in src.upload_info.object and common.md_text("slow.csv") in src.upload_info.object
    slow = src._job
    assert _wait_for(lambda: slow._proc is not None)
    src.upload_delay = 0
    src.upload.filename = "data.csv"
    src.upload.value = _csv(80, seed=3)
    assert slow.cancelled and _wait_for(lambda: not slow._proc.is_alive(), 30)
    assert src.wait_upload(120)
    assert _wait_for(lambda: "bnx-upload-ok" in src.upload_info.object, 60), src.upload_info.object
    assert "bnx-upload-ok" in src.upload_info.object and common.md_text("data.csv") in src.upload_info.object
    assert common.md_text("slow.csv") not in src.upload_info.object
    assert src.dataset.value.startswith(common.UPLOAD_PREFIX + "data.csv")
    # another target: read again in the background
    src.upload_target.value = "colour"
    assert "Reading the file" in src.upload_info.object
    assert src.wait_upload(120) and "[colour]" in src.dataset.value
    # a refused file supersedes a running job too
    src.upload_delay = 60
    src.upload.value = _csv(70, seed=4)
    job = src._job
    src.upload.filename = "x.xlsx"
    src.upload.value = b"PK\x03\x04"
    assert job.cancelled and "not supported" in src.upload_info.object


def test_datasource_browser_refusals_and_cleared_input(common):
    src = common.DataSource()
    src.upload.filename = "data.csv"
    src.upload.value = _csv()
    ok = src.upload_info.object
    # the browser-side guard took a file out of the input: Bokeh clears the value
    src.upload.value = None
    assert src.upload_info.object == ok
    src.upload_guard.refused = {"name": "huge.csv", "size": 21_000_000, "n": 1}
    assert "21,000,000 bytes, over the upload limit of 5,000,000" in html.unescape(
        src.upload_info.object)
    src.upload_guard.refused = {"name": "none.csv", "size": 0, "n": 2}
    assert "is empty" in src.upload_info.object
    assert src.upload_guard.max_bytes == common.UPLOAD_MAX_BYTES
    assert src.upload_guard.target_class in src.upload.css_classes
