"""Hostile input to the kernels: no silent wrong result, no crash, no runaway allocation.

* order averaging whose per-thread accumulators are large, or cannot be allocated
  inside the parallel region, is right or raises (never scores of 0.0);
* every allocation that scales with a user parameter is refused with a
  ``MemoryBudgetError`` before it happens (the process does not grow by gigabytes);
* codes that are not state codes (NaN, fractions, out of range) are refused by
  ``DiscreteData``, and node / parent indices out of range by ``LocalScore``, with an
  exception instead of a segmentation fault (crash-prone calls run in a subprocess,
  so that a crash is a failed test, not a dead pytest);
* ``n`` of the summary network / AMA and the table budget are validated first.
"""
from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import pytest

import bnexplore as bx
from bnexplore.averaging import OrderedAveraging, procedure1
from bnexplore.data import DiscreteData, MemoryBudgetError, get_table_budget, set_table_budget
from bnexplore.scores import LocalScore, score_order_families

REPO = Path(__file__).resolve().parents[1]
GIB = 2**30


def _rss() -> int:
    return psutil.Process().memory_info().rss


def _run(code: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter importing this checkout; a segfault shows as a
    negative return code."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)


def _binary(n_rows: int, p: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.integers(0, 2, size=(n_rows, p)), columns=[f"v{i}" for i in range(p)])


# --------------------------------------------------------------------------- order averaging
def test_partial_order_with_many_nodes_is_scored_not_zeroed():
    """The tester's case: 64 binary rows, 500 columns in three levels, k = 5.  The
    per-thread set accumulators were sized for C(p - 2, <= k - 2) sets x p nodes (about
    100 GB a thread here), could not be allocated inside the parallel region, and every
    family score came back 0.0 (arc posteriors 0.49 instead of 1.0, log evidence > 0)."""
    df = _binary(64, 500)
    df["v6"] = df["v0"]  # v0 -> v6 is certain
    names = list(df.columns)
    before = _rss()
    avg = OrderedAveraging(df, levels=[names[:6], names[6:12], names[12:]], max_parents=5)
    assert _rss() - before < 2 * GIB
    assert avg.log_evidence < 0
    assert avg.arc_posteriors().loc["v0", "v6"] == pytest.approx(1.0, abs=1e-9)
    ls = LocalScore(df, cache=False)
    for v in (6, 11, 12, 499):
        top = avg.parent_set_posteriors(names[v], top=3)
        for parents, lw in zip(top["parents"], top["log_weight"]):
            assert lw == pytest.approx(ls.score(names[v], list(parents)), rel=1e-12, abs=1e-9)


def test_order_scoring_far_beyond_the_machine_is_refused_before_allocating():
    df = _binary(64, 300)
    before = _rss()
    with pytest.raises(MemoryBudgetError, match=r"k=7.*accumulators.*smaller k.*set_table_budget"):
        score_order_families(df, list(range(300)), max_parents=7)  # ~4e13 scores
    assert _rss() - before < GIB


def test_order_scoring_guard_counts_the_per_thread_accumulators():
    """BDeu keeps, per thread, an accumulator and four constants per (listed set, node):
    these count against the budget (they were left out of the estimate)."""
    df = _binary(64, 20, seed=3)
    old = set_table_budget(20_000)
    try:
        with pytest.raises(MemoryBudgetError, match=r"k=4.*accumulators.*set_table_budget"):
            score_order_families(df, list(range(20)), max_parents=4, prior="BDeu")
    finally:
        set_table_budget(old)
    assert len(score_order_families(df, list(range(20)), max_parents=4, prior="BDeu")) == 20


@pytest.mark.parametrize("split", [False, True], ids=["one thread", "split over threads"])
def test_order_scoring_allocation_failure_inside_the_kernel_raises(split):
    """A worker that cannot allocate its arrays inside the kernel must not leave
    scores unwritten: the kernel counts finished work items and the call raises, also
    when the work is split over Python threads (bnexplore._threads).
    (Forced here by claiming 10^12 sets per work item past a raised budget.)"""
    res = _run(f"""
        import numba, numpy as np, pandas as pd
        import bnexplore.scores as sc
        import bnexplore._order_scores as engine
        from bnexplore.data import set_table_budget
        if {split}:
            engine.SPLIT_WORK = 0
            numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        real = engine._order_index
        def huge(*a):  # every worker's set arrays (8 TB) fail to allocate
            return real(*a)._replace(max_sets=10**12)
        engine._order_index = huge
        set_table_budget(10**18)
        df = pd.DataFrame(np.random.default_rng(0).integers(0, 2, (64, 8)), columns=list("abcdefgh"))
        try:
            out = sc.score_order_families(df, list(range(8)), max_parents=3)
            print("RETURNED", [float(np.abs(o).sum()) for o in out])
        except MemoryError as e:
            print("RAISED", e)
    """)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "RAISED" in res.stdout and "could not allocate" in res.stdout, res.stdout + res.stderr[-2000:]


@pytest.mark.parametrize("split", [False, True], ids=["one thread", "split over threads"])
def test_summary_network_allocation_failure_inside_the_kernel_raises(split):
    """The M* CPT kernel allocates per node: a failure there must raise, not hand back
    an unwritten (np.empty) CPT, also with the nodes split over Python threads.
    (Forced by claiming room for 10^13 bitsets per depth.)"""
    res = _run(f"""
        import numba, numpy as np, pandas as pd
        import bnexplore.averaging as av
        df = pd.DataFrame(np.random.default_rng(0).integers(0, 2, (64, 6)), columns=list("abcdef"))
        import bnexplore._mstar_plan as plan
        if {split}:
            plan.SPLIT_WORK = 0
            numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        avg = av.OrderedAveraging(df, max_parents=2)
        plan.bitset_capacity = lambda n_rows: 10**13
        try:
            net = avg.summary_network(3)
            print("RETURNED", net)
        except MemoryError as e:
            print("RAISED", e)
    """)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "RAISED" in res.stdout and "could not allocate" in res.stdout, res.stdout + res.stderr[-2000:]


def test_many_variables_are_refused_before_the_p_by_p_tables():
    p = 8000
    data = DiscreteData(np.zeros((2, p), dtype=np.int8) + np.array([[0], [1]], dtype=np.int8),
                        [f"v{i}" for i in range(p)], [[0, 1]] * p)
    before = _rss()
    with pytest.raises(MemoryBudgetError, match=r"8,000 variables.*fewer variables"):
        OrderedAveraging(data, max_parents=1)
    assert _rss() - before < GIB / 2


# --------------------------------------------------------------------------- codes and indices
@pytest.mark.parametrize("bad, match", [
    (np.nan, r"column 'b' row 1 is missing \(NaN\).*from_frame"),
    (1.5, r"column 'b' row 1 is not an integer code"),
    (np.inf, r"column 'b' row 1 is not an integer code"),
    (-1, r"column 'b' has the negative code -1"),
    (2, r"column 'b' has a code outside its 2 states"),
])
def test_discrete_data_refuses_codes_that_are_not_states(bad, match):
    codes = np.array([[0, 0], [1, 0], [0, 1]], dtype=float)
    codes[1, 1] = bad
    with pytest.raises(ValueError, match=match):
        DiscreteData(codes, ["a", "b"], [["x", "y"], ["u", "w"]])
    with pytest.raises(ValueError, match="integer array"):
        DiscreteData(np.array([["0", "1"]]), ["a", "b"], [["x", "y"], ["u", "w"]])
    # whole floats are codes, and integer codes are kept as they were
    d = DiscreteData(np.array([[0.0, 1.0]]), ["a", "b"], [["x", "y"], ["u", "w"]])
    assert d.codes.tolist() == [[0, 1]]


def test_nan_codes_then_score_do_not_crash():
    """NaN codes became -2147483648 and LocalScore.score then crashed the interpreter."""
    res = _run("""
        import numpy as np
        from bnexplore.data import DiscreteData
        from bnexplore.scores import LocalScore
        codes = np.array([[0, 1], [np.nan, 0], [1, 1]])
        try:
            d = DiscreteData(codes, ["a", "b"], [[0, 1], [0, 1]])
        except ValueError as e:
            print("REFUSED", e)
        else:
            print("SCORE", LocalScore(d).score("a", ["b"]))
    """)
    assert res.returncode == 0, (res.returncode, res.stderr[-2000:])
    assert "REFUSED" in res.stdout


def test_local_score_indices_out_of_range_raise_instead_of_crashing():
    res = _run("""
        import numpy as np, pandas as pd
        from bnexplore.scores import LocalScore
        df = pd.DataFrame(np.random.default_rng(0).integers(0, 3, (500, 4)), columns=list("abcd"))
        ls = LocalScore(df)
        calls = {
            "array node": lambda: ls.score_array(10**6, np.array([[1]])),
            "array negative node": lambda: ls.score_array(-1, np.array([[1]])),
            "array parent": lambda: ls.score_array(0, np.array([[1, 10**6]])),
            "array negative member": lambda: ls.score_array(0, np.array([[-7, 1]]), sizes=np.array([2])),
            "array sizes": lambda: ls.score_array(0, np.array([[1]]), sizes=np.array([5])),
            "array sizes shape": lambda: ls.score_array(0, np.array([[1]]), sizes=np.array([1, 1])),
            "array gap": lambda: ls.score_array(0, np.array([[-1, 2]])),
            "array self": lambda: ls.score_array(0, np.array([[0, 1]])),
            "idx node": lambda: ls.score_idx(10**6, ()),
            "idx negative node": lambda: ls.score_idx(-2, (1,)),
            "idx parent": lambda: ls.score_idx(0, (1, 10**6)),
            "idx negative parent": lambda: ls.score_idx(0, (-3, 1)),
            "idx self": lambda: ls.score_idx(1, (1,)),
            "score parent": lambda: ls.score("a", [10**6]),
        }
        for name, call in calls.items():
            try:
                call()
                print("ACCEPTED", name)
            except (IndexError, ValueError, TypeError) as e:
                print("RAISED", name, type(e).__name__)
        # valid calls still give the cached / unbatched values
        ref = LocalScore(df, cache=False)
        assert ls.score_idx(0, (1, 2)) == ref.score(0, [1, 2])
        got = ls.score_array(3, np.array([[0, 2, -1], [-1, -1, -1]]))
        assert got.tolist() == [ref.score(3, [0, 2]), ref.score(3, [])]
        got = ls.score_array(3, np.array([[0, 2, 7], [1, 9, 9]]), sizes=np.array([2, 1]))
        assert got.tolist() == [ref.score(3, [0, 2]), ref.score(3, [1])]
        print("VALID OK")
    """)
    assert res.returncode == 0, (res.returncode, res.stdout, res.stderr[-2000:])
    assert "ACCEPTED" not in res.stdout, res.stdout
    assert res.stdout.count("RAISED") == 14 and "VALID OK" in res.stdout, res.stdout


# --------------------------------------------------------------------------- n and the budget
@pytest.fixture(scope="module")
def small_averaging():
    df = _binary(200, 6, seed=5)
    df["v3"] = df["v1"] ^ df["v2"]
    return OrderedAveraging(df, max_parents=2)


def test_summary_network_huge_n_is_clamped_before_allocating(small_averaging):
    """n = 10^12 allocated a p x n int64 result before any check (raw MemoryError; n =
    3e7 took GBs).  A too-large n keeps every candidate parent, as n=None does."""
    avg = small_averaging
    before = _rss()
    big = avg.summary_network(10**12)
    assert _rss() - before < GIB / 2
    full = avg.summary_network(None)
    assert {v: big.parents(v) for v in big.nodes} == {v: full.parents(v) for v in full.nodes}
    assert avg.summary_parents(10**30) == avg.summary_parents(None)
    assert avg.summary_parents(5) == avg.summary_parents(None)  # 5 = the most candidates
    with pytest.raises(ValueError, match=r"n \(summary-network size\) must be >= 0"):
        avg.summary_network(-1)


def test_ama_huge_n():
    from bnexplore.classifiers import AMA

    df = _binary(120, 5, seed=7)
    X, y = df.drop(columns="v0"), df["v0"]
    before = _rss()
    a = AMA(max_parents=2, n=10**12, order="random", random_state=0).fit(X, y)
    assert _rss() - before < GIB / 2
    b = AMA(max_parents=2, n=4, order="random", random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_procedure1_validates_n_and_members():
    sets, w = [(), (0,), (1,), (0, 2)], np.array([0.1, 0.5, 0.2, 0.9])
    assert procedure1(sets, w, n=10**30) == [0, 1, 2]
    with pytest.raises(ValueError, match=r"n \(largest union size\) must be >= 0"):
        procedure1(sets, w, n=-1)
    with pytest.raises(TypeError, match=r"n \(largest union size\)"):
        procedure1(sets, w, n=2.5)
    # NaN was ranked first here ([0]); with sets that never fit, the ranking never ended
    with pytest.raises(ValueError, match="weights holds NaN"):
        procedure1(sets, np.array([0.1, np.nan, 0.2, 0.9]), n=1)
    before = _rss()
    with pytest.raises(MemoryBudgetError, match="members are column indices"):
        procedure1([(), (10**12,)], np.array([0.0, 1.0]), n=1)
    assert _rss() - before < GIB / 2


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-5, ValueError), (0.5, ValueError), (2.5, ValueError),
                                      (float("nan"), ValueError), (float("inf"), ValueError),
                                      (True, TypeError), ("10", TypeError), (None, TypeError)])
def test_table_budget_must_be_a_positive_whole_number(bad, exc):
    old = get_table_budget()
    with pytest.raises(exc, match=r"cells \(table budget\) must be a positive"):
        set_table_budget(bad)
    assert get_table_budget() == old
    if bad is not None:  # budget=None is OrderedAveraging's default: the package budget
        with pytest.raises(exc, match=r"budget \(table budget\) must be a positive"):
            OrderedAveraging(_binary(10, 3), max_parents=1, budget=bad)


def test_table_budget_accepts_whole_floats():
    old = set_table_budget(1e8)
    try:
        assert get_table_budget() == 10**8 and isinstance(get_table_budget(), int)
    finally:
        set_table_budget(old)
    assert OrderedAveraging(_binary(10, 3), max_parents=1, budget=np.int64(10**6)).budget == 10**6
