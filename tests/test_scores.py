"""Local scores: exact against Eq. 6 computed independently and against pgmpy's BDeu."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import gammaln

from bnexplore.data import MemoryBudgetError, set_table_budget
from bnexplore.scores import LocalScore, family_counts


def eq6(df: pd.DataFrame, child: str, parents: list[str], prior: str, ess: float = 1.0) -> float:
    """Dash & Cooper Eq. 6 written out from a pandas contingency table (independent oracle)."""
    r = df[child].nunique() if not isinstance(df[child].dtype, pd.CategoricalDtype) else len(df[child].cat.categories)
    q = 1
    for p in parents:
        q *= len(df[p].cat.categories) if isinstance(df[p].dtype, pd.CategoricalDtype) else df[p].nunique()
    a_ijk = 1.0 if prior == "K2" else ess / (q * r)
    a_ij = r * a_ijk
    total = 0.0
    groups = df.groupby(parents, observed=True) if parents else [((), df)]
    for _, g in groups:
        counts = g[child].value_counts().to_numpy()
        n_ij = counts.sum()
        total += gammaln(a_ij) - gammaln(a_ij + n_ij)
        total += np.sum(gammaln(a_ijk + counts) - gammaln(a_ijk))
    return float(total)


def random_frame(n=500, p=6, arity=(2, 3, 4), seed=0):
    rng = np.random.default_rng(seed)
    cols = {}
    for i in range(p):
        r = arity[i % len(arity)]
        cols[f"V{i}"] = pd.Categorical(rng.integers(0, r, n), categories=list(range(r)))
    return pd.DataFrame(cols)


@pytest.mark.parametrize("prior", ["K2", "BDeu"])
def test_matches_eq6_random_families(prior):
    df = random_frame(800, 6, seed=1)
    ls = LocalScore(df, prior=prior, ess=3.0)
    rng = np.random.default_rng(2)
    names = list(df.columns)
    for _ in range(40):
        child = names[rng.integers(6)]
        others = [x for x in names if x != child]
        k = rng.integers(0, 4)
        parents = list(rng.choice(others, size=k, replace=False))
        got = ls.score(child, parents)
        want = eq6(df, child, parents, prior, 3.0)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-9)


def test_k2_with_unobserved_configurations():
    # 3 parents of arity 4 = 64 configurations but only 30 rows: many never occur
    df = random_frame(30, 4, arity=(4,), seed=3)
    ls = LocalScore(df, prior="K2")
    got = ls.score("V0", ["V1", "V2", "V3"])
    assert got == pytest.approx(eq6(df, "V0", ["V1", "V2", "V3"], "K2"), rel=1e-12)
    # the unobserved configurations contribute nothing: adding lgamma(r) for each (pgmpy's K2) differs
    n_unobs = 64 - df.groupby(["V1", "V2", "V3"], observed=True).ngroups
    assert n_unobs > 0
    assert abs(got - (got + n_unobs * math.lgamma(4))) > 1


def test_bdeu_matches_pgmpy():
    pgmpy_est = pytest.importorskip("pgmpy.estimators")
    df = random_frame(1000, 6, seed=4).astype(str)
    rng = np.random.default_rng(5)
    names = list(df.columns)
    for ess in (1.0, 10.0):
        ls = LocalScore(df, prior="BDeu", ess=ess)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            oracle = pgmpy_est.BDeu(df, equivalent_sample_size=ess)
            for _ in range(25):
                child = names[rng.integers(6)]
                parents = list(rng.choice([x for x in names if x != child], size=rng.integers(0, 4), replace=False))
                want = oracle.local_score(child, parents)
                assert ls.score(child, parents) == pytest.approx(want, rel=1e-9)


def test_bdeu_matches_pgmpy_on_alarm():
    pgmpy_est = pytest.importorskip("pgmpy.estimators")
    import bnexplore as bx
    df = bx.networks.load("alarm").sample(3000, random_state=0)
    ls = LocalScore(df, prior="BDeu", ess=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = pgmpy_est.BDeu(df.astype(str), equivalent_sample_size=1.0)
        rng = np.random.default_rng(0)
        names = list(df.columns)
        for _ in range(20):
            child = names[rng.integers(len(names))]
            parents = list(rng.choice([x for x in names if x != child], size=rng.integers(0, 4), replace=False))
            assert ls.score(child, parents) == pytest.approx(oracle.local_score(child, parents), rel=1e-9)


def test_sparse_path_equals_dense_path(monkeypatch):
    # a family whose table exceeds the dense limit is counted by sorting keys
    import bnexplore.scores as sc
    df = random_frame(200, 5, arity=(4,), seed=6)
    dense = LocalScore(df, prior="BDeu", ess=2.0).score("V0", ["V1", "V2", "V3", "V4"])
    monkeypatch.setattr(sc, "_DENSE_LIMIT", 1)
    # the numba kernel reads the constant at compile time: call the python version of the kernel
    f = sc._score_family.py_func
    ls = LocalScore(df, prior="BDeu", ess=2.0)
    monkeypatch.setitem(f.__globals__, "_DENSE_LIMIT", 1)
    arr = np.array([1, 2, 3, 4], dtype=np.int64)
    # with only 200 rows and 4**5 = 1024 cells > 4*200, the python kernel takes the sorted path
    sparse = f(ls._cols, 0, arr, ls._arities, True, 2.0, ls._logfact)
    assert sparse == pytest.approx(dense, rel=1e-12)


def test_score_many_and_cache_agree():
    df = random_frame(400, 5, seed=7)
    ls = LocalScore(df, prior="K2")
    sets = [[], ["V1"], ["V2", "V3"], ["V1", "V2", "V4"]]
    batch = ls.score_many("V0", sets)
    fresh = LocalScore(df, prior="K2", cache=False)
    for s, b in zip(sets, batch):
        assert b == pytest.approx(fresh.score("V0", s), rel=1e-13)
    assert ls.score("V0", ["V3", "V2"]) == batch[2]  # order of parents does not matter
    arr = np.array([[1, -1, -1], [1, 2, 4]])
    np.testing.assert_allclose(ls.score_array(0, arr), [batch[1], batch[3]], rtol=1e-13)


def test_family_counts_layout():
    df = pd.DataFrame({"a": list("xxyy"), "b": list("uvvv"), "c": list("0101")})
    t = family_counts(df, "c", ["a", "b"])
    # rows: (x,u) (x,v) (y,u) (y,v); columns c=0, c=1
    assert t.tolist() == [[1, 0], [0, 1], [0, 0], [1, 1]]


def test_bad_inputs():
    df = random_frame(50, 3)
    with pytest.raises(ValueError, match="prior"):
        LocalScore(df, prior="BIC")
    with pytest.raises(ValueError, match="ess"):
        LocalScore(df, prior="BDeu", ess=0)
    ls = LocalScore(df)
    with pytest.raises(ValueError, match="own parent"):
        ls.score("V0", ["V0"])
    with pytest.raises(KeyError, match="unknown column"):
        ls.score("V0", ["nope"])
    cont = pd.DataFrame({"x": np.linspace(0, 1, 100), "y": [0, 1] * 50})
    with pytest.raises(ValueError, match="'x' is continuous"):
        LocalScore(cont)


def test_table_budget_refuses_before_allocating():
    df = random_frame(50, 4, arity=(4,))
    old = set_table_budget(100)
    try:
        with pytest.raises(MemoryBudgetError, match="budget"):
            family_counts(df, "V0", ["V1", "V2", "V3"])
    finally:
        set_table_budget(old)
    # keys that would overflow int64 are refused with a message
    n = 20
    wide = pd.DataFrame({f"W{i}": pd.Categorical(np.arange(n) % 50, categories=range(50)) for i in range(12)})
    ls = LocalScore(wide)
    with pytest.raises(MemoryBudgetError, match="too many"):
        ls.score("W0", [f"W{i}" for i in range(1, 12)])


def test_standard_parameters_eq3():
    from bnexplore.scores import standard_parameters
    counts = np.array([[3, 1, 0], [0, 0, 0]])
    k2 = standard_parameters(counts, "K2")
    np.testing.assert_allclose(k2[0], [4 / 7, 2 / 7, 1 / 7])
    np.testing.assert_allclose(k2[1], [1 / 3] * 3)
    a = 6.0 / 6  # BDeu, ess 6 over q*r = 6 cells
    np.testing.assert_allclose(standard_parameters(counts, "BDeu", 6.0)[0], (counts[0] + a) / (4 + 3 * a))
    np.testing.assert_allclose(standard_parameters(counts, "mle"), [[0.75, 0.25, 0], [1 / 3] * 3])
    with pytest.raises(ValueError, match="prior"):
        standard_parameters(counts, "BIC")
    with pytest.raises(ValueError, match=r"\(q, r\)"):
        standard_parameters(np.ones(3))


def test_the_order_engines_checks_stay_in_scores():
    """The averaging engines call the order-scoring checks of bnexplore.scores."""
    from bnexplore import scores
    for name in ("_check_prior", "_keys_of", "_score_order_flat"):
        assert callable(getattr(scores, name))
    df = random_frame(40, 4, arity=(2, 3))
    flat, off = scores._score_order_flat(df, [0, 1, 2, 3], 2)
    assert off.tolist()[-1] == flat.size
    np.testing.assert_array_equal(np.concatenate(scores.score_order_families(df, [0, 1, 2, 3], 2)), flat)


def test_distinct_rows_additions_and_pairs_equal_the_plain_kernel(monkeypatch):
    """Families counted over the distinct rows weighed by their multiplicity, every
    addition into a child in one call, and the pair tables scored both ways give the
    plain one-pass kernel's floats bit for bit (BDeu and K2), on data with repeats."""
    import itertools
    import bnexplore.scores as sc
    import bnexplore as bx
    monkeypatch.setattr(sc, "_DISTINCT_MIN_ROWS", 0)
    df = bx.networks.load("asia").sample(3000, random_state=4)
    for prior in ("BDeu", "K2"):
        ls = LocalScore(df, prior=prior, ess=3.0)
        ucols, w = ls._rows()
        assert ucols.shape[1] < 100 and w.sum() == 3000          # asia repeats rows a lot
        p = ls.n_nodes

        def plain(c, ps):
            return sc._score_family(ls._cols, c, np.array(ps, dtype=np.int64), ls._arities, ls._bdeu, ls.ess,
                                    ls._logfact)

        for c in range(p):
            others = [u for u in range(p) if u != c]
            for k in range(3):
                for pa in itertools.combinations(others, k):
                    assert ls.score_idx(c, pa) == plain(c, pa)
                    added = [u for u in others if u not in pa]
                    got = ls._score_additions_idx(c, pa, added)
                    assert got.tolist() == [plain(c, tuple(sorted(pa + (u,)))) for u in added]
        fresh = LocalScore(df, prior=prior, ess=3.0)
        pairs = fresh._score_pairs_idx(np.ones((p, p), dtype=bool))
        assert all(pairs[u, v] == plain(v, (u,)) for u in range(p) for v in range(p) if u != v)
        assert len(fresh._cache) == p * (p - 1)                  # every pair family cached


def test_distinct_rows_kept_when_few_repeat():
    import bnexplore.scores as sc
    cols = np.array([[0, 1, 0, 1] * 2048, [0, 0, 1, 1] * 2048], dtype=np.int32)
    ucols, w = sc._distinct_rows(cols, np.array([2, 2]))
    assert ucols.shape == (2, 4) and w.tolist() == [2048] * 4
    rng = np.random.default_rng(0)
    wide = rng.integers(0, 50, size=(6, 5000)).astype(np.int32)   # 50^6 codes: hardly a repeat
    ucols, w = sc._distinct_rows(wide, np.full(6, 50))
    assert ucols is wide and (w == 1).all()
    base = rng.integers(0, 2, size=(70, 3)).astype(np.int32)      # 70 binary columns: codes renumbered
    many = np.ascontiguousarray(np.tile(base, 2000))
    ucols, w = sc._distinct_rows(many, np.full(70, 2))
    assert sorted(map(tuple, ucols.T)) == sorted(set(map(tuple, base.T))) and w.sum() == 6000


@pytest.mark.parametrize("prior", ["K2", "BDeu"])
@pytest.mark.parametrize("n", [300, 6000])
def test_batch_workspace_gives_the_single_family_floats(prior, n):
    # score_many counts a child's families in one workspace: the floats of one family at a time,
    # over small and large tables (BDeu memo or not), the sorted-key fallback and distinct rows
    from bnexplore.scores import _score_family_rows
    df = pd.concat([random_frame(n, 4, arity=(2, 3), seed=11),
                    random_frame(n, 3, arity=(9,), seed=12).add_prefix("W")], axis=1)
    ls = LocalScore(df, prior=prior, ess=3.0, cache=False)
    names = list(df.columns)
    rng = np.random.default_rng(n)
    for child in ("V0", "WV1"):
        others = [x for x in names if x != child]
        sets = [list(rng.choice(others, size=s, replace=False)) for s in (0, 1, 2, 3, 4, 5, 3, 1) for _ in range(3)]
        batch = ls.score_many(child, sets)
        c = ls.data.index(child)
        for s, b in zip(sets, batch):
            ps = np.array(sorted(ls.data.indices(s)), dtype=np.int64)
            one = _score_family_rows(*ls._rows(), ls._cols, c, ps, ls._arities, prior == "BDeu", 3.0, ls._logfact)
            assert b == one, (child, s)


@pytest.mark.parametrize("prior", ["K2", "BDeu"])
def test_pair_tables_one_direction_and_many_states(prior):
    # the pair kernel reuses one count table: a pair scored in one direction only must
    # leave it clear for the next (arities up to 20: memos per pair, not shared)
    import bnexplore.scores as sc
    df = pd.concat([random_frame(700, 4, arity=(2, 3), seed=21),
                    random_frame(700, 3, arity=(20, 5), seed=22).add_prefix("W")], axis=1)
    ls = LocalScore(df, prior=prior, ess=2.0, cache=False)
    p = ls.n_nodes
    todo = np.random.default_rng(5).random((p, p)) < 0.5
    out = np.full((p, p), -np.inf)
    sc._score_pairs(*ls._rows(), ls._arities, todo, ls._bdeu, ls.ess, ls._logfact, out)
    for u in range(p):
        for v in range(p):
            if u != v and todo[u, v]:
                assert out[u, v] == sc._score_family(ls._cols, v, np.array([u], dtype=np.int64), ls._arities,
                                                     ls._bdeu, ls.ess, ls._logfact), (u, v)


@pytest.mark.parametrize("prior", ["K2", "BDeu"])
def test_lgamma_memo_gives_the_plain_kernel_floats(prior, monkeypatch):
    # score() and score_many() keep BDeu's lgamma values per thread across calls: the floats
    # of the plain kernel, with a memo table that fills up (2 slots), after ess changes, in
    # threads at once and after pickling; parents given as an iterator of positions
    import copy
    import pickle
    from concurrent.futures import ThreadPoolExecutor

    import bnexplore.scores as sc
    df = pd.concat([random_frame(5000, 4, arity=(2, 3), seed=31),
                    random_frame(5000, 3, arity=(9, 4), seed=32).add_prefix("W")], axis=1)
    names = list(df.columns)
    rng = np.random.default_rng(3)
    fams = [(c, sorted(rng.choice([x for x in names if x != c], size=s, replace=False).tolist()))
            for c in names for s in (0, 1, 2, 3)]

    def plain(ls, c, ps):
        return sc._score_family_rows(*ls._rows(), ls._cols, ls.data.index(c),
                                     np.array(sorted(ls.data.indices(ps)), dtype=np.int64), ls._arities,
                                     ls._bdeu, ls.ess, ls._logfact)

    for slots in (sc._MEMO_SLOTS, 2):
        monkeypatch.setattr(sc, "_MEMO_SLOTS", slots)
        ls = LocalScore(df, prior=prior, ess=3.0, cache=False)
        want = [plain(ls, c, ps) for c, ps in fams]
        for _ in range(2):                      # the second pass reads the filled memo
            assert [ls.score(c, ps) for c, ps in fams] == want
        assert [ls.score(names.index(c), iter([names.index(u) for u in ps])) for c, ps in fams] == want
        by_child = [(c, [ps for d, ps in fams if d == c]) for c in names]
        for c, sets in by_child:
            assert ls.score_many(c, sets).tolist() == [plain(ls, c, ps) for ps in sets]
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda f: ls.score(*f), fams * 4))
        assert got == want * 4
        for other in (copy.deepcopy(ls), pickle.loads(pickle.dumps(ls))):
            assert [other.score(c, ps) for c, ps in fams] == want
        ls.ess = 0.5                            # a new ess: a new memo
        assert [ls.score(c, ps) for c, ps in fams] == [plain(ls, c, ps) for c, ps in fams]


@pytest.mark.parametrize("prior", ["K2", "BDeu"])
@pytest.mark.parametrize("n", [1, 63, 700, 5000])
def test_bit_columns_count_the_same_floats(prior, n):
    # families counted on one-hot bit columns (population counts of ANDs, empty prefixes
    # skipped) give the floats of the distinct-row kernel: unseen states, row counts that
    # are not whole words, up to 4 parents; with no bit columns kept the rows are counted
    import bnexplore.scores as sc
    df = pd.concat([random_frame(n, 4, arity=(2, 3), seed=41),
                    random_frame(n, 3, arity=(9, 5), seed=42).add_prefix("W")], axis=1)
    df["U"] = pd.Categorical(np.zeros(n, dtype=int), categories=[0, 1, 2])   # two states never seen
    ls = LocalScore(df, prior=prior, ess=2.0, cache=False)
    bits, off = ls._bit_columns()
    assert bits.shape == (int(ls._arities.sum()), -(-n // 64))
    assert [int(sum(bin(int(x)).count("1") for x in bits[i])) for i in range(bits.shape[0])] == \
        [int((ls._cols[u] == s).sum()) for u in range(ls.n_nodes) for s in range(ls._arities[u])]
    rng = np.random.default_rng(n)
    p = ls.n_nodes
    e = np.empty(0)
    for _ in range(60):
        c = int(rng.integers(p))
        ps = np.sort(rng.choice([u for u in range(p) if u != c], size=int(rng.integers(0, 5)), replace=False))
        ps = ps.astype(np.int64)
        want = sc._score_family_rows(*ls._rows(), ls._cols, c, ps, ls._arities, ls._bdeu, 2.0, ls._logfact)
        assert sc._score_bits(bits, off, n, c, ps, ls._arities, ls._bdeu, 2.0, ls._logfact, e, e) == want
        assert ls.score(c, ps.tolist()) == want
        assert ls.score_many(c, [ps.tolist(), []])[0] == want
    none = LocalScore(df, prior=prior, ess=2.0, cache=False)
    none._bits = (np.zeros((0, 1), dtype=np.uint64), off)  # none kept: the rows are counted
    want = sc._score_family_rows(*ls._rows(), ls._cols, 0, np.array([1, 2]), ls._arities, ls._bdeu, 2.0, ls._logfact)
    assert none.score(0, [1, 2]) == want
    assert none.score(ls.names[0], [ls.names[2], ls.names[1]]) == want


@pytest.mark.parametrize("prior", ["K2", "BDeu"])
def test_uncached_score_of_names_checks_the_family(prior):
    # uncached score() of up to 3 parents named in a list or tuple goes straight to the kernel,
    # which sorts and checks them: the floats of the cached path in any order, and every
    # refusal of the cached path with its message
    df = random_frame(300, 6, arity=(2, 4), seed=61)
    fresh = LocalScore(df, prior=prior, ess=2.0, cache=False)
    cached = LocalScore(df, prior=prior, ess=2.0)
    for ps in ([], ["V1"], ("V3", "V1"), ["V5", "V2", "V4"], ["V5", "V1", "V2", "V4"]):
        want = cached.score("V0", sorted(ps))
        assert fresh.score("V0", ps) == want
        assert fresh.score("V0", list(reversed(ps))) == want
        assert fresh.score(0, [int(u[1]) for u in ps]) == want          # positions
    for bad, err, match in ((["V0"], ValueError, "own parent"), (["V1", "V0"], ValueError, "own parent"),
                            (("V2", "V1", "V2"), ValueError, "repeated parent"), (["V1", "V1"], ValueError, "repeated"),
                            (["nope"], KeyError, "unknown column"), (["V1", "nope"], KeyError, "unknown column")):
        for ls in (fresh, cached):
            with pytest.raises(err, match=match):
                ls.score("V0", bad)
    with pytest.raises(KeyError, match="unknown column"):
        fresh.score("nope", ["V1"])
    with pytest.raises(TypeError):
        fresh.score("V0", [["V1"]])
    # a subclass with a family score of its own is asked for it
    class Zero(LocalScore):
        def _computed(self, key):
            return 0.0

    assert Zero(df, cache=False).score("V0", ["V1", "V2"]) == 0.0


def test_uncached_score_many_checks_sets_in_the_kernel():
    # uncached score_many sorts and checks the sets of names in the kernel: the same scores as
    # the cached path in any member order, the same refusals naming the set
    df = random_frame(400, 6, seed=51)
    fresh = LocalScore(df, prior="BDeu", ess=2.0, cache=False)
    cached = LocalScore(df, prior="BDeu", ess=2.0)
    sets = [["V3", "V1"], [], ("V5", "V2", "V4"), ["V1"], ["V1", "V3"]]
    assert fresh.score_many("V0", sets).tolist() == cached.score_many("V0", sets).tolist()
    assert fresh.score_many("V0", [[3, 1], iter(["V2"])]).tolist() == cached.score_many("V0", [["V1", "V3"], ["V2"]]).tolist()
    with pytest.raises(ValueError, match="own parent"):
        fresh.score_many("V0", [["V1"], ["V2", "V0"]])
    with pytest.raises(ValueError, match="repeated parent"):
        fresh.score_many("V0", [["V1"], ["V2", "V2"]])
    with pytest.raises(KeyError):
        fresh.score_many("V0", [["V1"], ["nope"]])


def test_uncached_score_many_keeps_a_subclass_batch():
    # a subclass with a family score of its own (structural EM's expected scores) is asked
    # for its batch, not the base kernel's
    class Zero(LocalScore):
        def _batch(self, c, members, arr, sizes):
            return np.zeros(arr.shape[0])

    zero = Zero(random_frame(200, 4, seed=52), cache=False)
    assert zero.score_many("V0", [["V1"], ["V2", "V3"]]).tolist() == [0.0, 0.0]
