"""Tests for bnexplore.networks: BIF reading, sampling, inference, fitting, random DAGs."""
from __future__ import annotations

import itertools
import math
from collections import Counter

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import bnexplore as bx
from bnexplore.data import DiscreteData, MemoryBudgetError, set_table_budget
from bnexplore.networks import BayesNet, count_dags, load, names, random_network, read_bif

NETDIR = bx.networks._NETWORK_DIR

# (nodes, arcs, free parameters q(r-1)) as in the bnlearn repository; INSURANCE's file
# has 1008 free parameters (bnlearn's page says 984, pgmpy agrees with 1008).
EXPECTED = {
    "asia": (8, 8, 18),
    "child": (20, 25, 230),
    "insurance": (27, 52, 1008),
    "alarm": (37, 46, 509),
    "hailfinder": (56, 66, 2656),
    "hepar2": (70, 123, 1453),
}


@pytest.fixture(scope="module")
def asia() -> BayesNet:
    return load("asia")


@pytest.fixture(scope="module")
def alarm() -> BayesNet:
    return load("alarm")


def asia_joint(bn: BayesNet) -> tuple[pd.DataFrame, np.ndarray]:
    """All 256 configurations of ASIA and their probabilities (via log_prob)."""
    nodes = bn.nodes
    rows = list(itertools.product(*[bn.states[v] for v in nodes]))
    df = pd.DataFrame(rows, columns=nodes)
    return df, np.exp(bn.log_prob(df))


# ----------------------------------------------------------------------------- BIF
def test_names_and_unknown():
    assert names() == sorted(EXPECTED)
    with pytest.raises(ValueError, match=r"unknown network 'nope'.*alarm"):
        load("nope")
    with pytest.raises(TypeError, match="name must be a string"):
        load(3)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_parse_bundled(name):
    bn = load(name)
    n_nodes, n_arcs, n_par = EXPECTED[name]
    assert bn.dag.number_of_nodes() == n_nodes
    assert bn.dag.number_of_edges() == n_arcs
    assert bn.n_parameters == n_par
    assert nx.is_directed_acyclic_graph(bn.dag)
    for v in bn.nodes:
        t = bn.cpts[v]
        q = math.prod(bn.arities[p] for p in bn.parents(v))
        assert t.shape == (q, bn.arities[v])
        np.testing.assert_allclose(t.sum(axis=1), 1.0, atol=1e-12)
    # topological order
    pos = {v: i for i, v in enumerate(bn.nodes)}
    assert all(pos[u] < pos[v] for u, v in bn.dag.edges)


def test_load_case_insensitive(alarm):
    assert repr(load("ALARM.bif")) == repr(alarm) == "BayesNet('alarm', 37 nodes, 46 arcs, 509 parameters)"


def test_alarm_cpts_match_pgmpy(alarm):
    pytest.importorskip("pgmpy")
    from pgmpy.readwrite import BIFReader

    model = BIFReader(str(NETDIR / "alarm.bif")).get_model()
    checked = 0
    for v in ["HISTORY", "CVP", "LVEDVOLUME", "VENTLUNG", "CATECHOL", "HR", "BP", "EXPCO2"]:
        cpd = model.get_cpds(v)
        var, *ev = cpd.variables
        assert var == v
        assert ev == alarm.parents(v)
        assert list(cpd.state_names[v]) == alarm.states[v]
        for p in ev:
            assert list(cpd.state_names[p]) == alarm.states[p]
        # pgmpy values: shape (r, card(ev1), card(ev2), ...); ours (q, r) in C order
        theirs = np.asarray(cpd.values).reshape(alarm.arities[v], -1).T
        np.testing.assert_allclose(alarm.cpts[v], theirs, atol=1e-9)
        checked += 1
    assert checked == 8
    # a multi-parent entry checked by hand against the file:
    # probability ( VENTLUNG | INTUBATION, KINKEDTUBE, VENTTUBE ) (ONESIDED, TRUE, ZERO)
    ps = alarm.parents("VENTLUNG")
    assert ps == ["INTUBATION", "KINKEDTUBE", "VENTTUBE"]
    text = (NETDIR / "alarm.bif").read_text()
    block = text[text.index("probability ( VENTLUNG"):]
    line = [ln for ln in block.splitlines() if ln.strip().startswith("(ONESIDED, TRUE, ZERO)")][0]
    vals = [float(x) for x in line.split(")")[1].strip(" ;").split(",")]
    a = [alarm.arities[p] for p in ps]
    j = (alarm.states["INTUBATION"].index("ONESIDED") * a[1] * a[2]
         + alarm.states["KINKEDTUBE"].index("TRUE") * a[2] + alarm.states["VENTTUBE"].index("ZERO"))
    assert vals == [0.40, 0.58, 0.01, 0.01]
    np.testing.assert_allclose(alarm.cpts["VENTLUNG"][j], vals)


def test_to_from_pgmpy_roundtrip(asia):
    pytest.importorskip("pgmpy")
    m = asia.to_pgmpy()
    assert m.check_model()
    back = BayesNet.from_pgmpy(m)
    for v in asia.nodes:
        assert back.parents(v) == asia.parents(v)
        np.testing.assert_allclose(back.cpts[v], asia.cpts[v])


BIF_ODD = """
// a comment with { braces }
network "odd net" {
  property "made up";
}
/* block
   comment */
variable "Weather Today" {
  type discrete [ 3 ] { "very sunny", "rain, heavy", cloudy };
  property position = (1, 2);
}
variable  Umbrella{type discrete[2]{yes no};}
variable Mood {
  type discrete [ 2 ] { good, bad };
}
probability ( "Weather Today" ) {
  table 0.5, 0.25, 0.25 ;
}
probability(Umbrella|"Weather Today"){
  ("very sunny") 0.1 0.9;
  ("rain, heavy")   0.95,
      0.05;
  default 0.5, 0.5;
}
probability ( Mood | Umbrella ) {
  table 0.2, 0.7, 0.8, 0.3;
}
"""


def test_read_bif_odd_syntax(tmp_path):
    path = tmp_path / "odd.bif"
    path.write_text(BIF_ODD)
    bn = read_bif(path)
    assert bn.name == "odd net"
    assert bn.states["Weather Today"] == ["very sunny", "rain, heavy", "cloudy"]
    assert bn.states["Umbrella"] == ["yes", "no"]
    assert bn.parents("Umbrella") == ["Weather Today"]
    np.testing.assert_allclose(bn.cpts["Umbrella"], [[0.1, 0.9], [0.95, 0.05], [0.5, 0.5]])
    # table with a parent: child states slowest (pgmpy convention) -> transpose
    np.testing.assert_allclose(bn.cpts["Mood"], [[0.2, 0.8], [0.7, 0.3]])


@pytest.mark.parametrize("bad, match", [
    ("variable A { type discrete [ 3 ] { x, y }; }\nprobability ( A ) { table 0.5, 0.5; }",
     "declares 3 states but lists 2"),
    ("variable A { type discrete [ 2 ] { x, y }; }\nprobability ( A | B ) { (x) 0.5, 0.5; }",
     "undeclared variable 'B'"),
    ("variable A { type discrete [ 2 ] { x, y }; }\nprobability ( A ) { table 0.5, 0.6; }",
     "row 0 sums to 1.1"),
    ("variable A { type discrete [ 2 ] { x, y }; }\nprobability ( A ) { table 0.5; }",
     "table has 1 numbers, expected 2"),
    ("variable A { type discrete [ 2 ] { x, y }; }\nvariable B { type discrete [ 2 ] { x, y }; }\n"
     "probability ( A ) { table 0.5, 0.5; }\nprobability ( B | A ) { (x) 0.5, 0.5; }",
     r"no probabilities for parent configuration \['y'\]"),
    ("variable A { type discrete [ 2 ] { x, y }; }\nvariable B { type discrete [ 2 ] { x, y }; }\n"
     "probability ( A ) { table 0.5, 0.5; }\nprobability ( B | A ) { (z) 0.5, 0.5; (y) 1, 0; }",
     "'z' is not a state of parent 'A'"),
    ("variable A { type discrete [ 2 ] { x, y }; }", r"no probability block for variables \['A'\]"),
    ("variable A { type discrete [ 2 ] { x, y }; }\nvariable B { type discrete [ 2 ] { x, y }; }\n"
     "probability ( A | B ) { (x) 0.5, 0.5; (y) 1, 0; }\nprobability ( B | A ) { (x) 0.5, 0.5; (y) 1, 0; }",
     "cycle"),
    ("variable A { type discrete [ 2 ] { x, y }; }\nprobability ( A ) { table 0.5, abc; }",
     "expected numbers"),
])
def test_read_bif_errors(tmp_path, bad, match):
    path = tmp_path / "bad.bif"
    path.write_text(bad)
    with pytest.raises(ValueError, match=match):
        read_bif(path)


def test_read_bif_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no BIF file"):
        read_bif(tmp_path / "none.bif")


# --------------------------------------------------------------------- log_prob
def test_asia_joint_sums_to_one(asia):
    df, p = asia_joint(asia)
    assert len(df) == 256
    assert p.sum() == pytest.approx(1.0, abs=1e-12)


def test_log_prob_by_hand(asia):
    row = {"asia": "no", "tub": "no", "smoke": "yes", "lung": "yes", "bronc": "no",
           "either": "yes", "xray": "yes", "dysp": "yes"}
    # numbers read off asia.bif
    expected = 0.99 * 0.99 * 0.5 * 0.1 * 0.4 * 1.0 * 0.98 * 0.7  # dysp | bronc=no, either=yes
    lp = asia.log_prob(pd.DataFrame([row]))
    assert lp[0] == pytest.approx(math.log(expected), rel=1e-12)
    # through DiscreteData with a different state order, and strings of labels
    dd = DiscreteData.from_frame(pd.DataFrame([row, {**row, "dysp": "no"}]))
    lp2 = asia.log_prob(dd)
    assert lp2[0] == pytest.approx(math.log(expected))
    assert lp2[1] == pytest.approx(math.log(expected / 0.7 * 0.3))
    # impossible row -> -inf
    impossible = {**row, "either": "no"}
    assert asia.log_prob(pd.DataFrame([impossible]))[0] == -np.inf


def test_log_prob_categorical_other_order(asia):
    df = asia.sample(50, random_state=3)
    lp = asia.log_prob(df)
    df2 = df.copy()
    df2["xray"] = df2["xray"].cat.reorder_categories(["no", "yes"])
    df3 = df.astype(str)
    np.testing.assert_allclose(asia.log_prob(df2), lp)
    np.testing.assert_allclose(asia.log_prob(df3), lp)
    np.testing.assert_allclose(asia.log_prob(asia.sample(50, random_state=3, as_frame=False)), lp)


def test_input_errors(asia):
    df = asia.sample(5, random_state=0).astype(object)
    df.loc[2, "xray"] = "maybe"
    with pytest.raises(ValueError, match=r"column 'xray' has value 'maybe' \(row 2\)"):
        asia.log_prob(df)
    with pytest.raises(ValueError, match=r"column 'xray' has value 'maybe'"):
        asia.predict_proba(df, target="either")
    with pytest.raises(ValueError, match=r"lacks columns \['dysp'\]"):
        asia.log_prob(asia.sample(5, random_state=0).drop(columns="dysp"))
    df = asia.sample(5, random_state=0)
    df.loc[1, "tub"] = np.nan
    with pytest.raises(ValueError, match="column 'tub' has a missing value"):
        asia.log_prob(df)
    with pytest.raises(ValueError, match="unknown node 'cancer'"):
        asia.predict_proba(asia.sample(5, random_state=0), target="cancer")
    with pytest.raises(TypeError, match="DataFrame or DiscreteData"):
        asia.log_prob(np.zeros((3, 8)))


# ----------------------------------------------------------------------- sampling
def test_sample_frequencies_match_exact_marginals(asia):
    df_all, p = asia_joint(asia)
    n = 200_000
    s = asia.sample(n, random_state=42)
    assert list(s.columns) == asia.nodes
    for v in asia.nodes:
        assert isinstance(s[v].dtype, pd.CategoricalDtype)
        assert list(s[v].cat.categories) == asia.states[v]
        for st in asia.states[v]:
            exact = p[(df_all[v] == st).to_numpy()].sum()
            freq = (s[v] == st).mean()
            assert abs(freq - exact) < 5 * math.sqrt(exact * (1 - exact) / n) + 1e-9, (v, st, freq, exact)
    # a joint cell: P(either=yes, xray=no)
    exact = p[((df_all["either"] == "yes") & (df_all["xray"] == "no")).to_numpy()].sum()
    freq = ((s["either"] == "yes") & (s["xray"] == "no")).mean()
    assert abs(freq - exact) < 5 * math.sqrt(exact * (1 - exact) / n)
    # deterministic node never violated
    assert np.all(np.isfinite(asia.log_prob(s)))


def test_sample_zero_probability_states_never_drawn():
    bn = BayesNet({"a": [], "b": ["a"]}, states={"a": list("xyz"), "b": list("uvw")},
                  cpts={"a": [[0.0, 1.0, 0.0]], "b": [[1, 0, 0], [0, 0, 1], [0.5, 0, 0.5]]})
    s = bn.sample(20_000, random_state=1)
    assert set(s["a"]) == {"y"}
    assert set(s["b"]) == {"w"}


def test_sample_seed_reproducible(alarm):
    a = alarm.sample(1000, random_state=7)
    b = alarm.sample(1000, random_state=7)
    c = alarm.sample(1000, random_state=8)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)
    d = alarm.sample(1000, random_state=7, as_frame=False)
    np.testing.assert_array_equal(d.to_frame().astype(str).to_numpy(), a.astype(str).to_numpy())
    g = np.random.default_rng(3)
    assert alarm.sample(10, random_state=g).shape == (10, 37)


def test_sample_speed(alarm):
    import time
    alarm.sample(100, random_state=0)
    t = time.perf_counter()
    alarm.sample(10_000, random_state=0)
    assert time.perf_counter() - t < 0.5


@pytest.mark.parametrize("n, exc, match", [
    (0, ValueError, "n .* positive"), (-3, ValueError, "positive"), (2.5, TypeError, "positive integer"),
])
def test_sample_bad_n(asia, n, exc, match):
    with pytest.raises(exc, match=match):
        asia.sample(n)


@pytest.mark.parametrize("seed, exc, match", [
    (-1, ValueError, "non-negative"), ("abc", TypeError, "random_state must be"), (1.5, TypeError, "random_state must be"),
    (True, TypeError, "random_state must be"),
])
def test_bad_seed(asia, seed, exc, match):
    with pytest.raises(exc, match=match):
        asia.sample(10, random_state=seed)
    with pytest.raises(exc, match=match):
        random_network(5, 2, random_state=seed)


# -------------------------------------------------------------------- predict_proba
def test_predict_proba_equals_bruteforce(asia):
    df_all, p = asia_joint(asia)
    queries = asia.sample(300, random_state=5)
    for target in asia.nodes:
        got = asia.predict_proba(queries, target)
        assert got.shape == (len(queries), 2)
        others = [v for v in asia.nodes if v != target]
        key_all = df_all[others].astype(str).agg("|".join, axis=1).to_numpy()
        key_q = queries[others].astype(str).agg("|".join, axis=1).to_numpy()
        for i in range(0, len(queries), 17):
            mask = key_all == key_q[i]
            joint = np.array([p[mask & (df_all[target] == st).to_numpy()].sum()
                              for st in asia.states[target]])
            np.testing.assert_allclose(got[i], joint / joint.sum(), atol=1e-12)


def test_predict_proba_without_target_column_and_impossible(asia):
    q = asia.sample(20, random_state=2)
    p1 = asia.predict_proba(q, "lung")
    p2 = asia.predict_proba(q.drop(columns="lung"), "lung")
    np.testing.assert_allclose(p1, p2)
    # either=no but tub=yes is impossible for both values of lung
    bad = q.iloc[:1].copy().astype(object)
    bad["tub"], bad["either"] = "yes", "no"
    with pytest.warns(RuntimeWarning, match="probability zero"):
        out = asia.predict_proba(bad, "lung")
    np.testing.assert_allclose(out, [[0.5, 0.5]])


def test_predict_proba_alarm_against_log_prob(alarm):
    q = alarm.sample(50, random_state=11)
    target = "CATECHOL"
    got = alarm.predict_proba(q, target)
    rows = []
    for st in alarm.states[target]:
        qq = q.copy()
        qq[target] = pd.Categorical([st] * len(q), categories=alarm.states[target])
        rows.append(alarm.log_prob(qq))
    lp = np.stack(rows, axis=1)
    ref = np.exp(lp - lp.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(got, ref, atol=1e-12)


# ---------------------------------------------------------------------------- fit
def test_fit_recovers_cpts(alarm):
    data = alarm.sample(100_000, random_state=0, as_frame=False)
    fitted = BayesNet.fit(alarm.dag, data, prior="BDeu", ess=1.0)
    for v in ["HISTORY", "LVEDVOLUME", "CVP", "HR"]:
        assert fitted.parents(v) == alarm.parents(v)
        np.testing.assert_allclose(fitted.cpts[v], alarm.cpts[v], atol=0.03)
    # with the BayesNet as structure the parent order is kept exactly
    fitted2 = BayesNet.fit(alarm, data, prior="mle")
    for v in alarm.nodes:
        assert fitted2.parents(v) == alarm.parents(v)
    np.testing.assert_allclose(fitted2.cpts["VENTLUNG"][0], alarm.cpts["VENTLUNG"][0], atol=0.05)


def test_fit_priors_by_hand():
    df = pd.DataFrame({"a": pd.Categorical(["x", "x", "y", "x"], categories=["x", "y", "z"]),
                       "b": pd.Categorical(["u", "v", "v", "v"], categories=["u", "v"])})
    g = {"a": [], "b": ["a"]}
    k2 = BayesNet.fit(g, df, prior="K2")
    np.testing.assert_allclose(k2.cpts["a"], [[4 / 7, 2 / 7, 1 / 7]])
    np.testing.assert_allclose(k2.cpts["b"], [[2 / 5, 3 / 5], [1 / 3, 2 / 3], [0.5, 0.5]])
    bdeu = BayesNet.fit(g, df, prior="BDeu", ess=6.0)  # alpha = 6/(3*2) = 1 for b, 2 for a
    np.testing.assert_allclose(bdeu.cpts["a"], [[5 / 10, 3 / 10, 2 / 10]])
    np.testing.assert_allclose(bdeu.cpts["b"], k2.cpts["b"])
    mle = BayesNet.fit(g, df, prior="mle")
    np.testing.assert_allclose(mle.cpts["b"], [[1 / 3, 2 / 3], [0, 1], [0.5, 0.5]])
    with pytest.raises(ValueError, match="prior must be"):
        BayesNet.fit(g, df, prior="laplace")
    with pytest.raises(ValueError, match="ess"):
        BayesNet.fit(g, df, prior="BDeu", ess=0)
    with pytest.raises(ValueError, match=r"nodes \['c'\] of the graph are not columns"):
        BayesNet.fit({"c": ["a"]}, df)
    with pytest.raises(ValueError, match="cycle"):
        BayesNet.fit({"a": ["b"], "b": ["a"]}, df)


# ------------------------------------------------------------------ construction
def test_bayesnet_validation():
    st = {"a": ["0", "1"], "b": ["0", "1"]}
    good = {"a": [[0.5, 0.5]], "b": [[0.1, 0.9], [0.3, 0.7]]}
    with pytest.raises(ValueError, match=r"CPT of 'b' has shape \(1, 2\); expected \(q, r\) = \(2, 2\)"):
        BayesNet({"a": [], "b": ["a"]}, st, {**good, "b": [[0.1, 0.9]]})
    with pytest.raises(ValueError, match="CPT of 'b': row 1 sums to 1.1"):
        BayesNet({"a": [], "b": ["a"]}, st, {**good, "b": [[0.1, 0.9], [0.4, 0.7]]})
    with pytest.raises(ValueError, match="negative"):
        BayesNet({"a": [], "b": ["a"]}, st, {**good, "b": [[1.1, -0.1], [0.3, 0.7]]})
    with pytest.raises(ValueError, match="cycle"):
        BayesNet({"a": ["b"], "b": ["a"]}, st, good)
    with pytest.raises(ValueError, match="no CPT given"):
        BayesNet({"a": [], "b": ["a"]}, st, {"a": good["a"]})
    with pytest.raises(ValueError, match="duplicate state labels"):
        BayesNet({"a": []}, {"a": ["x", "x"]}, {"a": [[0.5, 0.5]]})
    with pytest.raises(TypeError, match="networkx.DiGraph"):
        BayesNet([("a", "b")], st, good)
    old = set_table_budget(3)
    try:
        with pytest.raises(MemoryBudgetError, match="CPT of 'b'"):
            BayesNet({"a": [], "b": ["a"]}, st, good)
    finally:
        set_table_budget(old)
    bn = BayesNet({"a": [], "b": ["a"]}, st, good)
    assert bn.parents("b") == ["a"] and bn.children("a") == ["b"]
    assert bn.arities == {"a": 2, "b": 2}
    g = bn.to_networkx()
    assert set(g.edges) == {("a", "b")} and g.nodes["b"]["states"] == ["0", "1"]
    assert "BayesNet(2 nodes, 1 arcs, 3 parameters)" == repr(bn)


def test_mixed_radix_last_parent_fastest():
    st = {"a": ["a0", "a1"], "b": ["b0", "b1", "b2"], "c": ["c0", "c1"]}
    cc = np.array([[i / 10, 1 - i / 10] for i in range(6)])
    bn = BayesNet({"a": [], "b": [], "c": ["a", "b"]}, st,
                  {"a": [[0.5, 0.5]], "b": [[1 / 3] * 3], "c": cc})
    row = pd.DataFrame([{"a": "a1", "b": "b0", "c": "c0"}])
    # row index 1*3 + 0 = 3
    assert bn.log_prob(row)[0] == pytest.approx(math.log(0.5 / 3 * 0.3))


# ------------------------------------------------------------------- random networks
def _brute_dags(n: int, k: int) -> list[frozenset]:
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    out = []
    for mask in range(1 << len(pairs)):
        edges = [pairs[b] for b in range(len(pairs)) if mask >> b & 1]
        indeg = Counter(j for _, j in edges)
        if indeg and max(indeg.values()) > k:
            continue
        g = nx.DiGraph(edges)
        g.add_nodes_from(range(n))
        if nx.is_directed_acyclic_graph(g):
            out.append(frozenset(edges))
    return out


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_count_dags_bruteforce(n):
    for k in range(n):
        assert count_dags(n, k) == len(_brute_dags(n, k))


def test_count_dags_known():
    assert [count_dags(n) for n in range(1, 8)] == [1, 3, 25, 543, 29281, 3781503, 1138779265]
    assert count_dags(6, 1) == 7 ** 5  # rooted forests: (n+1)^(n-1)


@pytest.mark.parametrize("n, k, draws, chi2_max", [
    (3, 1, 3000, 45.0),    # 16 rooted forests, 15 dof
    (3, 2, 3000, 60.0),    # all 25 DAGs, 24 dof
    (4, 1, 5000, 190.0),   # 125 rooted forests, 124 dof
])
def test_uniform_dag_sampler_is_uniform(n, k, draws, chi2_max):
    from bnexplore.networks._random import _uniform_dag

    dags = _brute_dags(n, k)
    rng = np.random.default_rng(0)
    counts = Counter()
    for _ in range(draws):
        par = _uniform_dag(n, k, rng)
        counts[frozenset((p, v) for v in range(n) for p in par[v])] += 1
    assert set(counts) == set(dags)
    expected = draws / len(dags)
    chi2 = sum((counts[d] - expected) ** 2 / expected for d in dags)
    assert chi2 < chi2_max  # upper tail probability < 1e-4


def test_random_network_uniform_uses_all_dags():
    rng = np.random.default_rng(1)
    seen = set()
    for _ in range(300):
        bn = random_network(3, 1, random_state=rng)
        seen.add(frozenset(bn.dag.edges))
    assert len(seen) == 16


@pytest.mark.parametrize("method", ["uniform", "order"])
def test_random_network_properties(method):
    bn = random_network(30, 3, arity=(2, 5), random_state=4, method=method)
    assert bn.nodes and sorted(bn.states) == sorted(f"X{i}" for i in range(30))
    assert nx.is_directed_acyclic_graph(bn.dag)
    assert max(d for _, d in bn.dag.in_degree()) <= 3
    assert all(2 <= r <= 5 for r in bn.arities.values())
    for v in bn.nodes:
        np.testing.assert_allclose(bn.cpts[v].sum(axis=1), 1.0)
    again = random_network(30, 3, arity=(2, 5), random_state=4, method=method)
    assert set(again.dag.edges) == set(bn.dag.edges)
    for v in bn.nodes:
        np.testing.assert_array_equal(again.cpts[v], bn.cpts[v])
    other = random_network(30, 3, arity=(2, 5), random_state=5, method=method)
    assert set(other.dag.edges) != set(bn.dag.edges)
    assert bn.sample(100, random_state=0).shape == (100, 30)


def test_random_network_arity_forms_and_dense():
    assert set(random_network(6, 2, arity=3, random_state=0).arities.values()) == {3}
    ar = [2, 3, 4, 5, 6, 7]
    assert [random_network(6, 2, arity=ar, random_state=0).arities[f"X{i}"] for i in range(6)] == ar
    dense = random_network(12, 11, random_state=1)  # K >= N-1: all DAGs
    assert max(d for _, d in dense.dag.in_degree()) <= 11
    assert random_network(5, 0, random_state=0).dag.number_of_edges() == 0


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(n_nodes=0, max_parents=1), ValueError, "n_nodes must be a positive"),
    (dict(n_nodes=5, max_parents=-1), ValueError, "max_parents must be >= 0"),
    (dict(n_nodes=5, max_parents=1.5), TypeError, "max_parents must be a non-negative int"),
    (dict(n_nodes=5, max_parents=1, arity=1), ValueError, "arity must be >= 2"),
    (dict(n_nodes=5, max_parents=1, arity=[2, 3]), ValueError, "arity list has 2 entries for 5 nodes"),
    (dict(n_nodes=5, max_parents=1, arity=(5, 2)), ValueError, "2 <= min <= max"),
    (dict(n_nodes=5, max_parents=1, method="magic"), ValueError, "method must be"),
    (dict(n_nodes=5, max_parents=1, concentration=0), ValueError, "concentration"),
])
def test_random_network_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        random_network(**kwargs)


def test_random_network_budget():
    old = set_table_budget(1000)
    try:
        with pytest.raises(MemoryBudgetError, match="CPT of"):
            random_network(15, 14, arity=4, random_state=0, method="order")
    finally:
        set_table_budget(old)
