"""bnexplore.cache: results kept on disk are the ones the computation gives."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bnexplore import cache as bc

REPO = Path(__file__).resolve().parents[1]


def test_round_trip_and_another_process_reads_it(tmp_path):
    d = bc.DiskCache("t", directory=tmp_path)
    value = {"proba": np.arange(6.0).reshape(3, 2), "name": "vote"}
    d[("vote", 2, 0.5)] = value
    got = bc.DiskCache("t", directory=tmp_path).get(("vote", 2, 0.5))
    np.testing.assert_array_equal(got["proba"], value["proba"])
    code = (f"from bnexplore.cache import DiskCache; "
            f"v = DiskCache('t', directory={str(tmp_path)!r}).get(('vote', 2, 0.5)); "
            f"print(v['proba'].sum(), v['name'])")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         check=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert out.stdout.split() == ["15.0", "vote"]


def test_keys_that_differ_never_share_an_entry(tmp_path):
    d = bc.DiskCache("t", directory=tmp_path)
    keys = [("a", 1), ("a", 1.0000000001), ("a", "1"), ("a", (1,)), ("a", [1]), ("a", None),
            ("a", True), ("a", 2), ("b", 1)]
    for i, k in enumerate(keys):
        d[k] = i
    assert [d[k] for k in keys] == list(range(len(keys)))
    # another cache name is another namespace
    assert bc.DiskCache("u", directory=tmp_path).get(("a", 1)) is None


def test_data_fingerprint_follows_values_layout_and_categories():
    df = pd.DataFrame({"x": pd.Categorical(["u", "v", "u"]), "y": pd.Categorical(["a", "a", "b"])})
    fp = bc.data_fingerprint(df)
    assert bc.data_fingerprint(df.copy()) == fp
    changed = df.copy()
    changed.loc[2, "x"] = "v"
    assert bc.data_fingerprint(changed) != fp
    renamed = df.rename(columns={"y": "z"})
    assert bc.data_fingerprint(renamed) != fp
    reordered = df.copy()
    reordered["x"] = reordered["x"].cat.reorder_categories(["v", "u"])
    assert bc.data_fingerprint(reordered) != fp          # same labels, other codes
    extra = df.copy()
    extra["x"] = extra["x"].cat.add_categories(["w"])
    assert bc.data_fingerprint(extra) != fp
    assert bc.data_fingerprint(df[["y", "x"]]) != fp
    assert bc.stable_key(df) == bc.stable_key(df.copy())


def test_unstable_keys_are_refused():
    with pytest.raises(TypeError, match="cache keys"):
        bc.stable_key(("a", object()))
    with pytest.raises(ValueError, match="name"):
        bc.DiskCache("a/b")


def test_another_code_version_is_a_miss(tmp_path, monkeypatch):
    d = bc.DiskCache("t", directory=tmp_path)
    d["k"] = 1
    monkeypatch.setattr(bc, "code_version", lambda: "0.0.0+other")
    assert d.get("k") is None
    assert d.compute("k", lambda: 2) == 2


def test_code_version_covers_the_sources():
    v = bc.code_version()
    import bnexplore
    assert v.startswith(bnexplore.__version__ + "+") and len(v.split("+")[1]) == 16


def test_a_broken_file_is_a_miss_and_is_recomputed(tmp_path):
    d = bc.DiskCache("t", directory=tmp_path)
    d["k"] = list(range(1000))
    (path,) = tmp_path.glob("*.pkl")
    path.write_bytes(path.read_bytes()[:50])          # cut short
    assert d.get("k", "miss") == "miss"
    assert d.compute("k", lambda: "again") == "again"
    assert bc.DiskCache("t", directory=tmp_path)["k"] == "again"
    # a file that holds another key (a collision) is not that key's value
    path.write_bytes(pickle.dumps(("someone else's key", 5)))
    assert "k" not in d


def test_least_recently_used_entries_go(tmp_path):
    d = bc.DiskCache("t", directory=tmp_path, max_entries=3)
    for i in range(3):
        d[i] = i
        os.utime(d._path(d._full_key(i)), (1000 + i, 1000 + i))
    assert d.get(0) == 0                 # a hit makes 0 the most recent
    d[3] = 3
    assert len(d) == 3
    assert 1 not in d and all(k in d for k in (0, 2, 3))
    assert sorted(d) == ["0", "2", "3"]


def test_front_mapping_is_filled_and_read_first(tmp_path):
    front = {}
    d = bc.DiskCache("t", directory=tmp_path, front=front)
    d["k"] = 7
    assert list(front.values()) == [7]
    d2 = bc.DiskCache("t", directory=tmp_path, front={})
    assert d2["k"] == 7 and list(d2.front.values()) == [7]
    del d2["k"]
    assert "k" not in bc.DiskCache("t", directory=tmp_path)


def test_unwritable_folder_is_not_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    d = bc.DiskCache("t", directory=blocker / "sub")   # cannot be created
    d["k"] = 1                                        # ignored
    assert d.get("k") is None


def test_concurrent_writers_and_readers_see_whole_values(tmp_path):
    """Readers see no value or a whole one while threads and processes rewrite the key."""
    big = np.arange(200_000, dtype=float)
    d = bc.DiskCache("t", directory=tmp_path)
    code = (f"import numpy as np; from bnexplore.cache import DiskCache\n"
            f"d = DiskCache('t', directory={str(tmp_path)!r})\n"
            f"for i in range(15): d['k'] = np.arange(200_000, dtype=float)\n")
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=REPO,
                              env=dict(os.environ, PYTHONPATH=str(REPO))) for _ in range(2)]
    stop = threading.Event()

    def writer():
        while not stop.is_set():
            d["k"] = big

    threads = [threading.Thread(target=writer) for _ in range(2)]
    for t in threads:
        t.start()
    bad, seen = 0, 0
    try:
        while any(p.poll() is None for p in procs) or seen < 20:
            got = bc.DiskCache("t", directory=tmp_path).get("k")
            if got is not None:
                seen += 1
                bad += not np.array_equal(got, big)
    finally:
        stop.set()
        for t in threads:
            t.join()
        for p in procs:
            p.wait()
    assert seen >= 20 and bad == 0
    assert all(p.returncode == 0 for p in procs)
    assert not list(tmp_path.glob(".tmp-*"))          # no temporary file left behind


def test_cross_validation_from_the_cache_is_the_computed_one(tmp_path, monkeypatch):
    """The Compare app's cache: a second run (a later start) fits nothing and gives the
    same probabilities bit for bit; the partial results grow one classifier at a time."""
    import bnexplore as bx
    from bnexplore.experiments import compare as cmp

    df = bx.datasets.load("vote").iloc[:150]
    target = df.attrs["target"]
    clfs = ["SNN", "AODE", "LogReg"]
    plain = cmp.cross_validate_classifiers(df, target, clfs, n_splits=3, random_state=1)
    calls = []
    fit = cmp._fit_predict
    monkeypatch.setattr(cmp, "_fit_predict", lambda *a, **k: calls.append(a[0]) or fit(*a, **k))
    seen = []
    first = cmp.cross_validate_classifiers(
        df, target, clfs, n_splits=3, random_state=1, cache=bc.DiskCache("cv", directory=tmp_path),
        result_callback=lambda r: seen.append(list(r.proba)))
    assert len(calls) == 9
    assert seen == [["SNN"], ["SNN", "AODE"], ["SNN", "AODE", "LogReg"]]
    calls.clear()
    seen.clear()
    again = cmp.cross_validate_classifiers(
        df, target, clfs, n_splits=3, random_state=1, cache=bc.DiskCache("cv", directory=tmp_path),
        result_callback=lambda r: seen.append(list(r.proba)))
    assert calls == []
    assert seen == [clfs]
    for res in (first, again):
        assert list(res.proba) == clfs
        for k in clfs:
            np.testing.assert_array_equal(res.proba[k], plain.proba[k])
    # another seed, another fold count or other data: computed, not read
    cmp.cross_validate_classifiers(df, target, ["SNN"], n_splits=3, random_state=2,
                                   cache=bc.DiskCache("cv", directory=tmp_path))
    cmp.cross_validate_classifiers(df.iloc[:120], target, ["SNN"], n_splits=3, random_state=1,
                                   cache=bc.DiskCache("cv", directory=tmp_path))
    assert calls == ["SNN"] * 6
