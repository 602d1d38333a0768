"""Concurrency of the apps' shared results (:func:`bnexplore.apps._cache.cached`).

* One computation per setting (``test_apps_components``), and a setting being computed
  holds up only the sessions that asked for that setting: another setting computes
  meanwhile.
* A failure is not kept: the next request computes again (a transient error, a memory
  shortage, a first import meeting Python's deadlock detector, is not shown for good).
* Results of a user's table stay in memory; only bundled data's go to disk.

The served side (one session computing while others' pages answer) is
``tests/test_apps_responsive.py``.
"""
from __future__ import annotations

import threading

import pandas as pd
import pytest

from bnexplore.apps import _cache
from bnexplore.apps._cache import cached
from bnexplore.apps.data import bundled_dataset, user_data


def test_a_setting_being_computed_does_not_hold_up_another():
    release = threading.Event()
    done = []

    @cached(disk=False)
    def fit(data, k):
        if k == 1:                      # the long one: ends only once k=2 has finished
            assert release.wait(60), "k=2 waited for k=1"
        done.append(k)
        return k

    vote = bundled_dataset("vote")
    slow = threading.Thread(target=fit, args=(vote, 1))
    slow.start()
    other = threading.Thread(target=lambda: (fit(vote, 2), release.set()))
    other.start()
    other.join(60)
    slow.join(60)
    assert not other.is_alive() and not slow.is_alive()
    assert done == [2, 1]


def test_a_failure_is_not_kept():
    calls = []

    @cached(disk=False)
    def flaky(data, k):
        calls.append(k)
        if len(calls) == 1:
            raise MemoryError("short of memory right now")
        return k * 10

    vote = bundled_dataset("vote")
    with pytest.raises(MemoryError):
        flaky(vote, 3)
    assert flaky(vote, 3) == 30 and flaky(vote, 3) == 30
    assert calls == [3, 3]


def test_only_bundled_datas_results_go_to_disk(tmp_path, monkeypatch):
    if not _cache.disk_enabled():
        pytest.skip("diskcache is not installed or BNX_APPS_DISK_CACHE=0")
    monkeypatch.setattr(_cache, "disk_path", lambda: str(tmp_path / "apps"))
    calls = []

    @cached
    def rows(data, k):
        calls.append(data.key)
        return len(data.frame) + k

    table = pd.DataFrame({"x": ["a", "b", "b"] * 10, "class": ["y", "n", "n"] * 10})
    mine = user_data(table, "mine.csv")
    assert rows(mine, 1) == 31
    assert not (tmp_path / "apps").exists()         # the user's table: memory only
    vote = bundled_dataset("vote")
    assert rows(vote, 1) == 436
    assert any((tmp_path / "apps").rglob("*"))      # bundled data: on disk too
    assert calls == [mine.key, vote.key]
