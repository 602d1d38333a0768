"""DiscreteData validation and the ARFF / CSV readers."""
import io
from importlib import resources

import numpy as np
import pandas as pd
import pytest

import bnexplore as bx
from bnexplore.data import (DiscreteData, MemoryBudgetError, as_discrete, check_table_size,
                            get_table_budget, read_arff, read_csv, set_table_budget)
from bnexplore.data.io import ArffError

UCI = resources.files("bnexplore.data").joinpath("files/uci")
ARFF_FILES = sorted(p.name for p in UCI.iterdir() if p.name.endswith(".arff"))


def small_frame():
    return pd.DataFrame({
        "colour": pd.Categorical(["red", "green", "red", "blue"], categories=["red", "green", "blue"]),
        "flag": [True, False, True, True],
        "level": [0, 2, 1, 2],
        "cls": ["yes", "no", "yes", "no"],
    })


# ----------------------------------------------------------- DiscreteData
def test_round_trip_keeps_labels_and_category_order():
    df = small_frame()
    d = DiscreteData.from_frame(df, target="cls")
    assert d.names == ["colour", "flag", "level", "cls"] and d.target == "cls"
    assert d.states[0] == ["red", "green", "blue"]          # declared order, not sorted
    assert d.arities.tolist() == [3, 2, 3, 2]
    back = d.to_frame()
    assert back.attrs["target"] == "cls"
    assert list(back["colour"].cat.categories) == ["red", "green", "blue"]
    for c in df.columns:
        assert back[c].tolist() == df[c].tolist(), c
    again = DiscreteData.from_frame(back)
    assert np.array_equal(again.codes, d.codes) and again.states == d.states and again.target == "cls"


def test_bool_and_small_int_columns_accepted():
    df = pd.DataFrame({"b": [True, False, False], "i": [3, 1, 3], "f": [1.0, 0.0, 1.0],
                       "n": pd.array([2, 5, 2], dtype="Int64")})
    d = DiscreteData.from_frame(df)
    assert d.states == [[False, True], [1, 3], [0, 1], [2, 5]]
    assert d.codes.tolist() == [[1, 1, 1, 0], [0, 0, 0, 1], [0, 1, 1, 0]]


def test_continuous_column_refused():
    df = pd.DataFrame({"age": np.linspace(18.0, 90.0, 100), "cls": ["a", "b"] * 50})
    with pytest.raises(ValueError, match=r"column 'age' is continuous \(100 distinct values\).*MDLDiscretizer"):
        DiscreteData.from_frame(df)
    many = pd.DataFrame({"id": np.arange(100), "cls": ["a", "b"] * 50})
    with pytest.raises(ValueError, match=r"column 'id' is continuous.*MDLDiscretizer"):
        DiscreteData.from_frame(many)


def test_missing_values_raise_with_count_and_place():
    df = small_frame()
    df.loc[1, "colour"] = np.nan
    df.loc[3, "level"] = np.nan
    df["level"] = df["level"].astype(float)
    with pytest.raises(ValueError, match=r"2 missing values in 2 rows \(first rows \[1, 3\]; "
                                         r"by column 'colour': 1, 'level': 1\).*missing='drop'"):
        DiscreteData.from_frame(df, target="cls")


def test_missing_drop_warns_with_count():
    df = small_frame()
    df.loc[1, "colour"] = np.nan
    with pytest.warns(UserWarning, match=r"dropped 1 rows with missing values \('colour': 1\)"):
        d = DiscreteData.from_frame(df, target="cls", missing="drop")
    assert d.n_rows == 3 and d.states[0] == ["red", "green", "blue"]
    with pytest.raises(ValueError, match="missing must be 'raise', 'drop' or 'keep'"):
        DiscreteData.from_frame(df, missing="impute")


def test_missing_keep_marks_cells_and_round_trips():
    from bnexplore.data.core import as_discrete

    df = small_frame()
    df.loc[1, "colour"] = np.nan
    df.loc[2, "cls"] = None
    d = DiscreteData.from_frame(df, target="cls", missing="keep")
    assert d.n_rows == len(df) and d.has_missing
    assert d.missing.sum() == 2 and d.missing[1, 0] and d.missing[2, d.index("cls")]
    assert (d.codes[d.missing] == 0).all()                 # placeholders hold a valid state
    back = d.to_frame()
    assert back.isna().to_numpy().tolist() == d.missing.tolist()
    assert d.observed_rows(["colour"]).tolist() == [True, False, True, True]
    assert d.complete_cases().n_rows == 2 and not d.complete_cases().has_missing
    assert d.take([1]).missing.tolist() == [[True, False, False, False]]
    assert d.subset(["flag"]).missing is None              # that column is complete
    # a method that needs complete rows refuses, naming what to do; "drop" drops
    with pytest.raises(ValueError, match=r"complete_cases\(\)"):
        as_discrete(d)
    with pytest.warns(UserWarning, match="dropped 2 rows"):
        assert as_discrete(d, missing="drop").n_rows == 2
    assert as_discrete(d, missing="keep") is d
    # complete data keeps missing=None, so complete-data code pays nothing
    assert DiscreteData.from_frame(small_frame(), missing="keep").missing is None
    only_missing = small_frame().assign(colour=np.nan)
    with pytest.raises(ValueError, match="'colour' has no observed value"):
        DiscreteData.from_frame(only_missing, missing="keep")


def test_constant_target_refused():
    df = small_frame()
    df["cls"] = "yes"
    with pytest.raises(ValueError, match=r"target 'cls' takes only one value \('yes'\)"):
        DiscreteData.from_frame(df, target="cls")
    # ... also when the second class only occurs in dropped rows
    df = small_frame()
    df.loc[[1, 3], "colour"] = np.nan
    with pytest.warns(UserWarning, match="dropped 2 rows"):
        with pytest.raises(ValueError, match="target 'cls' takes only one value"):
            DiscreteData.from_frame(df, target="cls", missing="drop")


def test_unknown_target_refused():
    with pytest.raises(ValueError, match=r"target 'klass' is not a column"):
        DiscreteData.from_frame(small_frame(), target="klass")


def test_duplicate_column_names_refused():
    df = pd.DataFrame([[0, 1, 0], [1, 0, 1]], columns=["a", "b", "a"])
    with pytest.raises(ValueError, match=r"duplicate column names \['a'\]"):
        DiscreteData.from_frame(df)
    with pytest.raises(ValueError, match=r"duplicate column names \['x'\]"):
        DiscreteData(np.zeros((2, 2), dtype=int), ["x", "x"], [[0], [0]])


def test_empty_frames_refused():
    with pytest.raises(ValueError, match="no rows"):
        DiscreteData.from_frame(small_frame().iloc[:0])
    with pytest.raises(ValueError, match="no columns"):
        DiscreteData.from_frame(pd.DataFrame(index=range(3)))
    with pytest.raises(TypeError, match="expected a pandas DataFrame, got ndarray"):
        DiscreteData.from_frame(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="expected a DataFrame or DiscreteData"):
        as_discrete([[0, 1]])


def test_table_size_budget():
    assert check_table_size([3, 4, 5]) == 60
    with pytest.raises(MemoryBudgetError, match=r"over columns \['a', 'b'\] would need 1,000,000 cells.*"
                                                r"budget of 1,000 cells"):
        check_table_size([1000, 1000], names=["a", "b"], budget=1000)
    # products that overflow int64 are still computed exactly
    with pytest.raises(MemoryBudgetError, match=r"1,000,000,000,000,000,000,000,000,000,000 cells"):
        check_table_size([10**10] * 3)
    old = set_table_budget(100)
    try:
        assert get_table_budget() == 100
        with pytest.raises(MemoryBudgetError, match="set_table_budget"):
            check_table_size([11, 10], what="CPT")
        assert check_table_size([10, 10]) == 100
    finally:
        set_table_budget(old)
    assert get_table_budget() == old
    with pytest.raises(ValueError, match="positive"):
        set_table_budget(0)
    assert issubclass(MemoryBudgetError, ValueError)


def test_encode_unseen_category():
    d = DiscreteData.from_frame(small_frame(), target="cls")
    new = pd.DataFrame({"colour": ["blue", "purple"], "flag": [False, True], "level": [2, 0], "cls": ["no", "no"]})
    with pytest.raises(ValueError, match=r"column 'colour' has value 'purple' never seen in training") as err:
        d.encode(new)
    # reached from a network's predict, which has no unseen= parameter: the message names
    # only the parameter of the classifiers
    assert "unseen=" not in str(err.value) and "handle_unknown='missing'" in str(err.value)
    codes = d.encode(new, unseen="missing")
    assert codes.tolist() == [[2, 0, 2, 0], [-1, 1, 0, 0]]
    # string forms of the states are accepted (CSV round trip)
    assert d.encode(pd.DataFrame({"level": ["2"], "flag": ["True"]})).tolist() == [[1, 2]]


def test_subset_take_index():
    d = DiscreteData.from_frame(small_frame(), target="cls")
    s = d.subset(["cls", "colour"])
    assert s.names == ["cls", "colour"] and s.target == "cls" and s.states[1] == ["red", "green", "blue"]
    assert d.subset(["colour"]).target is None
    t = d.take([0, 2])
    assert t.n_rows == 2 and t.arities.tolist() == d.arities.tolist()
    assert d.take(np.array([True, False, False, True])).n_rows == 2
    assert d.index("level") == 2 and d.index(1) == 1
    with pytest.raises(KeyError, match="unknown column 'nope'"):
        d.index("nope")
    with pytest.raises(IndexError, match="out of range"):
        d.index(9)
    assert as_discrete(d) is d and as_discrete(d, target="flag").target == "flag"
    assert d.columns.shape == (4, 4) and d.columns.flags.c_contiguous


def test_bad_codes_refused():
    with pytest.raises(ValueError, match="column 'a' has a code outside its 2 states"):
        DiscreteData(np.array([[0], [2]]), ["a"], [["x", "y"]])
    with pytest.raises(ValueError, match="non-negative"):
        DiscreteData(np.array([[0], [-1]]), ["a"], [["x", "y"]])


# ------------------------------------------------------------------- ARFF
@pytest.mark.parametrize("fname", ARFF_FILES)
def test_every_bundled_arff_loads_and_engines_agree(fname):
    with UCI.joinpath(fname).open("rb") as fh:
        df = read_arff(fh)
    assert df.shape[0] > 0 and df.attrs["target"] in df.columns
    for c in df.columns:
        assert isinstance(df[c].dtype, pd.CategoricalDtype) or df[c].dtype == np.float64, c
    with UCI.joinpath(fname).open("rb") as fh:
        py = read_arff(fh, engine="python")
    pd.testing.assert_frame_equal(df, py)


def test_arff_soybean_quirk_and_iris():
    with UCI.joinpath("soybean.arff").open("rb") as fh:
        soy = read_arff(fh)
    # declared as "{..., same-lst-two-yrs, same-lst-sev-yrs}" with a space: plain scipy fails on it
    assert list(soy["crop-hist"].cat.categories) == ["diff-lst-year", "same-lst-yr", "same-lst-two-yrs",
                                                     "same-lst-sev-yrs"]
    assert soy.shape == (683, 36) and soy.attrs["target"] == "class"
    assert int(soy.isna().sum().sum()) == 2337
    with UCI.joinpath("iris.arff").open("rb") as fh:
        iris = read_arff(fh)
    assert iris["sepallength"].dtype == np.float64
    assert list(iris["class"].cat.categories) == ["Iris-setosa", "Iris-versicolor", "Iris-virginica"]


ARFF_TEXT = """% a comment
@RELATION 'test rel'

@ATTRIBUTE num   NUMERIC
@attribute 'a name'  { 'x y', z ,'w'}
@attribute Class {no,yes}

@DATA
1.5, 'x y', yes
?,z,no
% another comment

3,?,yes
"""


def test_arff_quirks_and_target_rules():
    df = read_arff(io.StringIO(ARFF_TEXT))
    assert list(df.columns) == ["num", "a name", "Class"]
    assert df.attrs["target"] == "Class" and df.attrs["relation"] == "test rel"
    assert list(df["a name"].cat.categories) == ["x y", "z", "w"]
    assert df["a name"].tolist()[:2] == ["x y", "z"] and pd.isna(df["a name"][2])
    assert df["num"].tolist()[0] == 1.5 and np.isnan(df["num"][1])
    no_class = ARFF_TEXT.replace("Class", "outcome")
    assert read_arff(io.StringIO(no_class)).attrs["target"] == "outcome"       # last attribute
    first = ARFF_TEXT.replace("NUMERIC", "numeric\n@attribute CLASS {p, q}").replace("1.5,", "1.5,p,") \
        .replace("?,z", "?,q,z").replace("3,?", "3,p,?")
    assert read_arff(io.StringIO(first)).attrs["target"] == "CLASS"
    assert read_arff(io.BytesIO(ARFF_TEXT.encode())).equals(df)


def test_arff_string_and_sparse_fallback():
    text = """@relation s
@attribute id string
@attribute v numeric
@attribute c {a, b}
@data
'first row', 1, a
"it's", ?, b
"""
    df = read_arff(io.StringIO(text))
    assert df["id"].tolist() == ["first row", "it's"] and isinstance(df["id"].dtype, pd.CategoricalDtype)
    sparse = """@relation sp
@attribute x numeric
@attribute y numeric
@attribute c {a, b}
@data
{1 2.5, 2 b}
{}
"""
    sp = read_arff(io.StringIO(sparse))
    assert sp["x"].tolist() == [0.0, 0.0] and sp["y"].tolist() == [2.5, 0.0] and sp["c"].tolist() == ["b", "a"]


def test_arff_errors():
    bad_value = ARFF_TEXT.replace("?,z,no", "?,zz,no")
    with pytest.raises(ArffError, match=r"attribute 'a name': value 'zz' .* not one of the declared"):
        read_arff(io.StringIO(bad_value))
    with pytest.raises(ArffError, match=r"attribute 'a name': value 'zz' at line 10 is not one of"):
        read_arff(io.StringIO(bad_value), engine="python")
    with pytest.raises(ArffError, match="line 9: 2 values for 3 attributes"):
        read_arff(io.StringIO(ARFF_TEXT.replace("1.5, 'x y', yes", "1.5, yes")), engine="python")
    with pytest.raises(ArffError, match="numeric but has value 'abc'"):
        read_arff(io.StringIO(ARFF_TEXT.replace("3,?,yes", "abc,?,yes")), engine="python")
    with pytest.raises(ArffError, match="is empty"):
        read_arff(io.StringIO("  \n"))
    with pytest.raises(ArffError, match="no @data section"):
        read_arff(io.StringIO("@relation r\n@attribute a numeric\n"))
    with pytest.raises(ArffError, match=r"duplicate attribute names \['a'\]"):
        read_arff(io.StringIO("@relation r\n@attribute a numeric\n@attribute a numeric\n@data\n1,2\n"))
    with pytest.raises(ValueError, match="over the limit of 10 bytes"):
        read_arff(io.StringIO(ARFF_TEXT), max_bytes=10)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_arff("/nonexistent/file.arff")
    assert isinstance(ArffError("x"), ValueError)


# -------------------------------------------------------------------- CSV
def test_read_csv_basic(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("colour, size,Class\nred,1.5,yes\n blue ,?,no\ngreen,2,yes\n")
    df = read_csv(p)
    assert list(df.columns) == ["colour", "size", "Class"] and df.attrs["target"] == "Class"
    assert isinstance(df["colour"].dtype, pd.CategoricalDtype)
    assert list(df["colour"].cat.categories) == ["blue", "green", "red"]
    assert df["size"].dtype == np.float64 and int(df["size"].isna().sum()) == 1
    df2 = read_csv(p, target="colour")
    assert df2.attrs["target"] == "colour"
    assert "target" not in read_csv(io.StringIO("a,b\n1,x\n")).attrs


def test_read_csv_never_evaluates(tmp_path):
    payload = "__import__('os').system('echo hacked')"
    df = read_csv(io.StringIO(f'a,b\n"{payload}",1\n'))
    assert df["a"].tolist() == [payload]


def test_read_csv_errors(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match="is empty"):
        read_csv(empty)
    with pytest.raises(ValueError, match=r"has a header \(\['a', 'b'\]\) but no data rows"):
        read_csv(io.StringIO("a,b\n"))
    big = tmp_path / "big.csv"
    big.write_text("a,b\n" + "1,2\n" * 100)
    with pytest.raises(ValueError, match=r"has 404 bytes, over the limit of 100"):
        read_csv(big, max_bytes=100)
    with pytest.raises(ValueError, match="over the limit of 100 bytes"):
        read_csv(io.StringIO(big.read_text()), max_bytes=100)
    assert read_csv(big, max_bytes=None).shape == (100, 2)
    with pytest.raises(ValueError, match=r"duplicate column names \['a'\]"):
        read_csv(io.StringIO("a,b,a\n1,2,3\n"))
    with pytest.raises(ValueError, match=r"target 'z' is not a column"):
        read_csv(io.StringIO("a,b\n1,2\n"), target="z")
    with pytest.raises(TypeError, match="path or a file-like"):
        read_csv(123)


def test_csv_to_discrete_data_pipeline():
    df = read_csv(io.StringIO("x,k,class\n0.5,a,p\n1.5,b,q\n2.5,a,p\n3.5,b,q\n"))
    with pytest.raises(ValueError, match=r"column 'x' is continuous.*MDLDiscretizer"):
        DiscreteData.from_frame(df)
    Xd = bx.data.EqualFrequencyDiscretizer(n_bins=2).fit_transform(df.drop(columns="class"))
    Xd["class"] = df["class"]
    d = DiscreteData.from_frame(Xd, target="class")
    assert d.arities.tolist() == [2, 2, 2]


# ------------------------------------------------- hostile input: limits and encodings
def _arff_with_values(n: int, quoted: bool = False) -> str:
    vals = ",".join(f"'v {i}'" if quoted else f"v{i}" for i in range(n))
    first = "'v 1'" if quoted else "v1"
    return f"@relation r\n@attribute x {{{vals}}}\n@attribute class {{a,b}}\n@data\n{first},a\n"


@pytest.mark.parametrize("quoted", [False, True])
def test_arff_many_declared_values_read_in_linear_time(quoted):
    # the duplicate check was quadratic: 40,000 values took 20-30 s, 200,000 never ended
    import time
    t0 = time.perf_counter()
    df = read_arff(io.StringIO(_arff_with_values(60_000, quoted)))
    elapsed = time.perf_counter() - t0
    assert len(df["x"].cat.categories) == 60_000
    assert elapsed < 20, f"60,000 declared values took {elapsed:.1f} s"
    with pytest.raises(ArffError, match=r"declares 'v1', 'v2' more than once; declare each"):
        read_arff(io.StringIO(_arff_with_values(5).replace("v4}", "v4,v1,v2,v1}")))


def test_arff_limits_are_named_and_checked_before_the_data():
    # a data row that would be an error comes after the header: the limit is reported first
    text = _arff_with_values(300) + "not,a,row,at,all\n"
    with pytest.raises(ArffError, match=r"'x' declares 300 values, over the limit of 200 per "
                                        r"attribute.*max_values_per_column"):
        read_arff(io.StringIO(text), max_values_per_column=200)
    with pytest.raises(ArffError, match=r"up to .x. declare 300 nominal values in all, over "
                                        r"the limit of 250.*max_values"):
        read_arff(io.StringIO(text), max_values=250)
    many = ("@relation r\n" + "".join(f"@attribute a{i} numeric\n" for i in range(50))
            + "@data\n" + ",".join("1" for _ in range(50)) + "\n")
    with pytest.raises(ArffError, match=r"declares 50 attributes, over the limit of 40"
                                        r".*max_columns"):
        read_arff(io.StringIO(many), max_columns=40)
    assert read_arff(io.StringIO(many), max_columns=50).shape == (1, 50)
    assert len(read_arff(io.StringIO(_arff_with_values(300)), max_values_per_column=300,
                         max_values=302)["x"].cat.categories) == 300
    # the default limit stops 200,000 declared values at once
    with pytest.raises(ArffError, match=r"200,000 values, over the limit of 100,000"):
        read_arff(io.StringIO(_arff_with_values(200_000)))


def test_csv_limits_are_named():
    wide = ",".join(f"c{i}" for i in range(30)) + "\n" + ",".join("1" for _ in range(30)) + "\n"
    with pytest.raises(ValueError, match=r"has 30 columns, over the limit of 20.*max_columns"):
        read_csv(io.StringIO(wide), max_columns=20)
    assert read_csv(io.StringIO(wide), max_columns=30).shape == (1, 30)
    ids = "id,class\n" + "".join(f"row{i},{'ab'[i % 2]}\n" for i in range(40))
    with pytest.raises(ValueError, match=r"column 'id' .* 40 distinct values, over the limit of "
                                         r"30 per column"):
        read_csv(io.StringIO(ids), max_values_per_column=30)
    # numbers are not counted: a continuous column is discretised later
    nums = "x,class\n" + "".join(f"{i * 0.5},{'ab'[i % 2]}\n" for i in range(40))
    assert read_csv(io.StringIO(nums), max_values_per_column=30).shape == (40, 2)


TEXT = "name,n,class\nJosé,1,oui\nZoë,2,non\nŁódź,3,oui\n"


@pytest.mark.parametrize("codec", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le-bom",
                                   "utf-16-be-bom", "utf-32", "latin-1"])
def test_csv_encodings_decoded_from_the_byte_order_mark(codec):
    text = TEXT if codec != "latin-1" else TEXT.replace("Łódź", "Lodz")
    if codec.endswith("-bom"):
        base = codec[:-4]
        raw = ("\ufeff" + text).encode(base)
    else:
        raw = text.encode(codec)
    df = read_csv(io.BytesIO(raw))
    assert list(df.columns) == ["name", "n", "class"], list(df.columns)
    assert df["name"].tolist() == ["José", "Zoë", "Łódź" if codec != "latin-1" else "Lodz"]
    assert df["n"].tolist() == [1, 2, 3] and df.attrs["target"] == "class"
    arff = f"@relation r\n@attribute name {{José, Zoë}}\n@attribute class {{oui, non}}\n" \
           f"@data\nZoë,non\n"
    raw = ("\ufeff" + arff).encode("utf-16-le")
    assert read_arff(io.BytesIO(raw))["name"].tolist() == ["Zoë"]


def test_binary_and_bom_less_utf16_refused_with_a_message():
    with pytest.raises(ValueError, match="UTF-16/UTF-32 text without a byte-order mark; save "
                                         "the data as UTF-8"):
        read_csv(io.BytesIO(TEXT.encode("utf-16-le")))
    garbage = np.random.default_rng(0).integers(0, 256, 50_000, dtype=np.uint8).tobytes()
    for reader in (read_csv, read_arff):
        with pytest.raises(ValueError, match="binary file"):
            reader(io.BytesIO(garbage))
    with pytest.raises(ValueError, match=r"UTF-16-LE byte-order mark but is not valid UTF-16-LE"):
        read_csv(io.BytesIO(b"\xff\xfe" + "a,b\n1,2\n".encode("utf-16-le") + b"\x00\xd8"))
    with pytest.raises(ValueError, match="NUL characters"):
        read_csv(io.StringIO("a,b\n1,\x00\n"))


# CI reads a row just over the column limit; the 4 MB row of the report is the slow case
# (without a limit pandas reads it all before refusing: minutes on a loaded machine)
@pytest.mark.parametrize("n_values", [20_000, pytest.param(2_000_000, marks=pytest.mark.slow)])
def test_csv_row_longer_than_the_header_refused_quickly(n_values):
    # pandas made the extra leading values an implicit multi-index: 40,000 values took
    # 3 s, 2,000,000 (a 4 MB file) never finished
    import time
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=rf"row 2 has {n_values + 1:,} values, over the limit of "
                                         r"10,000 columns"):
        read_csv(io.StringIO("a,b,class\n" + "1," * n_values + "\n"))
    with pytest.raises(ValueError, match="a data row has more values than the header"):
        read_csv(io.StringIO("a,b,class\n" + "1," * n_values + "\n"), max_columns=None)
    assert time.perf_counter() - t0 < 60
    with pytest.raises(ValueError, match="more values than the header"):
        read_csv(io.StringIO("a,b,class\n1,2,3,4\n"))
    with pytest.raises(ValueError, match=r"Expected 3 fields in line 3, saw 4"):
        read_csv(io.StringIO("a,b,class\n1,2,3\n4,5,6,7\n"))
    assert read_csv(io.StringIO("a,b,class\n1,2\n")).shape == (1, 3)     # short rows: missing


def test_frame_coding_equals_coding_each_column_alone():
    """from_frame's codes, states and missing cells equal each column coded on its own
    (categorical codes, unused categories kept; other columns factorised, sorted) for
    missing="keep" and "drop"; "raise" counts the missing cells per column."""
    df = pd.DataFrame({
        "c": pd.Categorical(["b", None, "a", "b", "a"], categories=["b", "a", "z"]),
        "s": ["y", "x", None, "x", "y"],
        "i": [3, 1, 3, 2, 1],
        "f": [1.0, 2.0, 2.0, np.nan, 1.0],
    })

    def alone(frame, keep_missing):
        codes, states, miss = [], [], []
        for name in frame.columns:
            col = frame[name]
            if isinstance(col.dtype, pd.CategoricalDtype):
                k, st = col.cat.codes.to_numpy(), list(col.cat.categories)
            else:
                k, st = pd.factorize(col.astype("Int64") if col.dtype.kind == "f" else col, sort=True)
                st = list(st)
            codes.append(np.where(k < 0, 0, k))
            states.append(st)
            miss.append(k < 0)
        return np.column_stack(codes), states, np.column_stack(miss)

    d = DiscreteData.from_frame(df, missing="keep")
    codes, states, miss = alone(df, True)
    assert (d.codes == codes).all() and d.states == states and (d.missing == miss).all()
    assert d.columns.flags.c_contiguous and (d.columns == d.codes.T).all()
    with pytest.warns(UserWarning, match="dropped 3 rows"):
        d = DiscreteData.from_frame(df, missing="drop")
    codes, states, miss = alone(df.iloc[[0, 4]], False)
    assert (d.codes == codes).all() and d.states == states and d.missing is None and not miss.any()
    assert d.states[0] == ["b", "a", "z"] and d.states[1] == ["y"]
    with pytest.raises(ValueError, match=r"3 missing values in 3 rows \(first rows \[1, 2, 3\]; by column "
                                         r"'c': 1, 's': 1, 'f': 1\)"):
        DiscreteData.from_frame(df)
