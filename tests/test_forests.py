"""Selectively conditioned forests: MAP and BMA checked against brute-force enumeration."""
import itertools
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

from bnexplore import _mtree
from bnexplore import forests as F
from bnexplore.scores import LocalScore, family_counts


# --------------------------------------------------------------------------- data
def noisy_chain(n, m, flip, seed, n_cond=2):
    """Binary chain X0 -> X1 -> ... with rare flips: neighbours explain each other far
    better than any root does, so the forest Laplacian is nearly singular."""
    rng = np.random.default_rng(seed)
    X = np.empty((n, m), dtype=int)
    X[:, 0] = rng.integers(0, 2, n)
    for i in range(1, m):
        X[:, i] = np.where(rng.random(n) < flip, 1 - X[:, i - 1], X[:, i - 1])
    df = pd.DataFrame({f"X{i}": X[:, i] for i in range(m)})
    for c in range(n_cond):
        df[f"C{c}"] = np.where(rng.random(n) < 0.3, rng.integers(0, 2, n), X[:, c % m])
    return df.astype("category")


def mixed_data(n, seed):
    """Ternary/binary variables with moderate dependence (well-conditioned)."""
    rng = np.random.default_rng(seed)
    c0 = rng.integers(0, 3, n)
    c1 = rng.integers(0, 2, n)
    x0 = (c0 + rng.integers(0, 2, n)) % 3
    x1 = np.where(rng.random(n) < 0.6, x0 % 2, rng.integers(0, 2, n))
    x2 = np.where(rng.random(n) < 0.5, c1, rng.integers(0, 2, n))
    x3 = (x1 + x2 + (rng.random(n) < 0.2)) % 2
    x4 = rng.integers(0, 3, n)
    return pd.DataFrame({"X0": x0, "X1": x1, "X2": x2, "X3": x3, "X4": x4,
                         "C0": c0, "C1": c1, "C2": (c0 + c1) % 2}).astype("category")


# --------------------------------------------------------------------------- brute force
def forests(m):
    """Every parent vector (m = root) that is a forest."""
    for par in itertools.product(range(m + 1), repeat=m):
        if any(par[j] == j for j in range(m)):
            continue
        ok = True
        for j in range(m):
            v, steps = j, 0
            while par[v] != m and steps <= m:
                v = par[v]
                steps += 1
            if steps > m:
                ok = False
                break
        if ok:
            yield par


def brute_force(df, targets, conds, k, penalty, prior="BDeu", ess=1.0, intra="forest", test=None):
    """Enumerate every SCF (every forest x every inter-set parent choice) explicitly."""
    ls = LocalScore(df, prior=prior, ess=ess, cache=False)
    m = len(targets)
    subsets = [()] + [s for size in range(1, k + 1) for s in itertools.combinations(conds, size)]
    nS = len(subsets)
    fam = np.full((m, m + 1, nS), -np.inf)
    # and the predictive factors p(x_j | parents, D) of the test rows, from family_counts
    pred = None
    if test is not None:
        pred = np.zeros((len(test), m, m + 1, nS))
        from bnexplore.data.core import as_discrete
        d = as_discrete(df)
        codes = d.encode(test[d.names])
    for j, t in enumerate(targets):
        for i in range(m + 1):
            if i == j:
                continue
            for s, S in enumerate(subsets):
                pa = ([targets[i]] if i < m else []) + list(S)
                fam[j, i, s] = ls.score(t, pa) - (penalty if not S else 0.0)
                if test is None:
                    continue
                N = family_counts(d, t, pa).astype(float)
                q, r = N.shape
                a = ess / (q * r) if prior == "BDeu" else 1.0
                z = np.zeros(len(test), dtype=int)
                for p in pa:
                    z = z * d.arities[d.index(p)] + codes[:, d.index(p)]
                x = codes[:, d.index(t)]
                pred[:, j, i, s] = np.log((N[z, x] + a) / (N[z].sum(axis=1) + r * a))
    scores, parvecs, combos = [], [], []
    preds = []
    grid = np.array(list(itertools.product(range(nS), repeat=m)))  # every inter-set choice
    for par in forests(m):
        nroots = sum(p == m for p in par)
        if intra == "tree" and nroots != 1:
            continue
        if intra == "none" and nroots != m:
            continue
        tot = sum(fam[j, par[j], grid[:, j]] for j in range(m))
        scores.append(tot)
        parvecs.append(np.repeat(np.array(par)[None], len(grid), axis=0))
        combos.append(grid)
        if pred is not None:
            preds.append(sum(pred[:, j, par[j], grid[:, j]] for j in range(m)))  # (T, G)
    scores = np.concatenate(scores)
    parvecs = np.concatenate(parvecs)
    combos = np.concatenate(combos)
    out = {"map": scores.max(), "logZ": logsumexp(scores)}
    w = np.exp(scores - out["logZ"])
    P = np.zeros((m + 1 + len(conds), m))
    for j in range(m):
        P[:m + 1, j] = np.bincount(parvecs[:, j], weights=w, minlength=m + 1)   # by intra parent
        by_subset = np.bincount(combos[:, j], weights=w, minlength=nS)
        for c, name in enumerate(conds):
            P[m + 1 + c, j] = by_subset[[name in S for S in subsets]].sum()
    out["P"] = P
    if pred is not None:
        allp = np.concatenate(preds, axis=1)
        x = allp + scores[None, :] - out["logZ"]          # (T, structures): log-sum-exp by rows
        top = x.max(axis=1, keepdims=True)
        out["logpred"] = top[:, 0] + np.log(np.exp(x - top).sum(axis=1))
    return out


CASES = [
    # (data, targets, conditions, k, penalty, prior)
    ("chain", ["X0", "X1", "X2", "X3", "X4"], ["C0", "C1"], 1, 0.0, "BDeu"),
    ("chain", ["X0", "X1", "X2", "X3", "X4"], ["C0", "C1"], 2, 2.5, "BDeu"),
    ("chain", ["X0", "X1", "X2", "X3"], ["C0", "C1"], 2, math.inf, "K2"),
    ("mixed", ["X0", "X1", "X2", "X3", "X4"], ["C0", "C1"], 1, 1.0, "K2"),
    ("mixed", ["X0", "X1", "X2", "X3"], ["C0", "C1", "C2"], 2, 0.0, "BDeu"),
    ("mixed", ["X1", "X2", "X3"], [], 0, 0.0, "BDeu"),
]


def _data(kind):
    return noisy_chain(300, 5, 0.03, 0) if kind == "chain" else mixed_data(200, 1)


@pytest.mark.parametrize("case", CASES)
def test_map_and_bma_equal_brute_force(case):
    kind, targets, conds, k, pen, prior = case
    df = _data(kind)
    ess = 1.0
    test = df.iloc[:6]
    bf = brute_force(df, targets, conds, k, pen, prior, ess, test=test)
    res = F.map_scf(df, targets, conds, max_parents=k, penalty=pen, prior=prior, ess=ess)
    assert res.score == pytest.approx(bf["map"], abs=1e-9)
    # the returned graph really scores that much
    ls = LocalScore(df, prior=prior, ess=ess)
    recomputed = sum(ls.score(t, list(res.graph.predecessors(t))) for t in targets)
    n_excl = sum(1 for t in targets if not set(res.graph.predecessors(t)) & set(conds))
    assert recomputed == pytest.approx(res.log_marginal, abs=1e-9)
    assert recomputed - (pen * n_excl if n_excl else 0.0) == pytest.approx(res.score, abs=1e-9)
    # graph is an SCF
    for t in targets:
        pa = list(res.graph.predecessors(t))
        assert len(set(pa) & set(targets)) <= 1 and len(set(pa) & set(conds)) <= k
    assert nx.is_directed_acyclic_graph(res.graph)

    avg = F.SCFAverage(df, targets, conds, max_parents=k, penalty=pen, prior=prior, ess=ess)
    assert avg.log_evidence == pytest.approx(bf["logZ"], abs=1e-9)
    P = avg.edge_posteriors()
    assert list(P.index) == targets + [F.ROOT] + conds
    np.testing.assert_allclose(P.to_numpy(), bf["P"], atol=1e-9, rtol=0)
    np.testing.assert_allclose(avg.log_predictive(test), bf["logpred"], atol=1e-9, rtol=0)


def test_chain_is_ill_conditioned_and_naive_inverse_fails():
    """The brute-force cases include data where float64 linear algebra loses the edge posteriors."""
    df = _data("chain")
    targets = ["X0", "X1", "X2", "X3", "X4"]
    avg = F.SCFAverage(df, targets, ["C0", "C1"], max_parents=1)
    c = np.maximum(avg.lW.max(axis=0), avg.lr)
    W, r = np.exp(avg.lW - c), np.exp(avg.lr - c)
    M = np.diag(r + W.sum(axis=0)) - W
    assert np.linalg.cond(M) > 1e12
    Minv = np.linalg.inv(M)
    naive = W * (np.diag(Minv)[None, :] - Minv.T)
    bf = brute_force(df, targets, ["C0", "C1"], 1, 0.0)
    assert np.abs(naive - bf["P"][:5]).max() > 1e-6      # plain inverse is wrong ...
    np.testing.assert_allclose(avg.parent_posteriors()[:5], bf["P"][:5], atol=1e-12)  # ours is not


@pytest.mark.parametrize("intra", ["tree", "none"])
def test_tree_and_no_intra_against_brute_force(intra):
    df = _data("mixed")
    targets, conds = ["X0", "X1", "X2", "X3"], ["C0", "C1"]
    bf = brute_force(df, targets, conds, 1, 0.5, intra=intra, test=df.iloc[:4])
    res = F.map_scf(df, targets, conds, max_parents=1, penalty=0.5, intra=intra)
    assert res.score == pytest.approx(bf["map"], abs=1e-9)
    roots = res.roots
    assert len(roots) == (1 if intra == "tree" else len(targets))
    avg = F.SCFAverage(df, targets, conds, max_parents=1, penalty=0.5, intra=intra)
    assert avg.log_evidence == pytest.approx(bf["logZ"], abs=1e-9)
    np.testing.assert_allclose(avg.log_predictive(df.iloc[:4]), bf["logpred"], atol=1e-9)
    P = avg.edge_posteriors()
    assert list(P.index) == targets + [F.ROOT] + conds
    np.testing.assert_allclose(P.to_numpy(), bf["P"], atol=1e-10, rtol=0)


@pytest.mark.parametrize("case", [CASES[0], CASES[2], CASES[3]], ids=["chain-BDeu", "chain-K2-inf", "mixed-K2"])
def test_tree_edge_posteriors_equal_brute_force(case):
    """TAN / STAN averaging: spanning trees (one root), on the ill-conditioned chain too."""
    kind, targets, conds, k, pen, prior = case
    df = _data(kind)
    bf = brute_force(df, targets, conds, k, pen, prior, 1.0, intra="tree")
    avg = F.SCFAverage(df, targets, conds, max_parents=k, penalty=pen, prior=prior, ess=1.0,
                       intra="tree")
    assert avg.log_evidence == pytest.approx(bf["logZ"], abs=1e-9)
    P = avg.edge_posteriors()
    np.testing.assert_allclose(P.to_numpy(), bf["P"], atol=1e-10, rtol=0)
    assert P.loc[F.ROOT].sum() == pytest.approx(1.0, abs=1e-12)      # one root per tree


# --------------------------------------------------------------------------- kernels
def random_root_weights(rng, m):
    """Weights of m targets and a virtual root m (no edge into the root, no loop)."""
    w = rng.normal(size=(m + 1, m + 1)) * 10
    w[:, m] = -np.inf
    np.fill_diagonal(w, -np.inf)
    return w


def networkx_best_weight(w):
    """Weight of networkx's maximum spanning arborescence over the finite edges of w."""
    n = w.shape[0]
    g = nx.DiGraph()
    g.add_edges_from((i, j, {"weight": w[i, j]}) for i in range(n) for j in range(n)
                     if np.isfinite(w[i, j]))
    arb = nx.maximum_spanning_arborescence(g)
    return sum(d["weight"] for _, _, d in arb.edges(data=True))


def test_edmonds_matches_networkx():
    rng = np.random.default_rng(3)
    for trial in range(30):
        n = int(rng.integers(2, 9))
        w = random_root_weights(rng, n)
        parent = F.max_arborescence(w, n)
        ours = sum(w[parent[j], j] for j in range(n))
        assert ours == pytest.approx(networkx_best_weight(w), abs=1e-9)
        assert set(np.flatnonzero(parent == -1)) == {n}


def test_rooted_trees_are_the_best_tree_per_root():
    """Every row of rooted_trees is the best arborescence whose one root edge goes to rho,
    checked against networkx on the graph with the other root edges removed."""
    from bnexplore._arborescence import rooted_trees

    rng = np.random.default_rng(11)
    for trial in range(20):
        m = int(rng.integers(2, 8))
        w = random_root_weights(rng, m)
        w[m, int(rng.integers(0, m))] = -np.inf          # one target cannot be the root
        trees, usable = rooted_trees(w, m)
        assert usable.tolist() == np.isfinite(w[m, :m]).tolist()
        for rho in np.flatnonzero(usable):
            parent = trees[rho]
            assert parent[m] == -1 and np.flatnonzero(parent[:m] == m).tolist() == [rho]
            only_rho = w.copy()
            only_rho[m, np.arange(m + 1) != rho] = -np.inf
            theirs = networkx_best_weight(only_rho)
            assert sum(w[parent[j], j] for j in range(m)) == pytest.approx(theirs, abs=1e-9)


def test_arborescence_reports_an_unreachable_node():
    from bnexplore._arborescence import rooted_trees

    w = np.full((3, 3), -np.inf)
    w[2, 0] = 1.0                   # node 1 has no finite incoming edge
    with pytest.raises(ValueError, match="node 1 has no incoming edge"):
        F.max_arborescence(w, 2)
    w[2, 1] = 1.0                   # a root edge each, but no edge between 0 and 1
    with pytest.raises(ValueError, match="no incoming edge"):
        rooted_trees(w, 2)          # the tree rooted at 0 cannot reach 1


def test_matrix_tree_against_dense_determinant_on_easy_weights():
    rng = np.random.default_rng(5)
    m = 7
    W = rng.random((m, m))
    np.fill_diagonal(W, 0)
    r = rng.random(m)
    M = np.diag(r + W.sum(axis=0)) - W
    assert float(_mtree.log_partition(np.log(W + np.eye(m)), np.log(r))) == pytest.approx(np.linalg.slogdet(M)[1], abs=1e-12)
    P, logZ = _mtree.parent_posteriors(np.log(W + np.eye(m)), np.log(r))
    Minv = np.linalg.inv(M)
    np.testing.assert_allclose(P[:m], W * (np.diag(Minv)[None, :] - Minv.T), atol=1e-12)
    np.testing.assert_allclose(P[m], r * np.diag(Minv), atol=1e-12)
    # rooted trees: minors of the plain Laplacian
    L = np.diag(W.sum(axis=0)) - W
    A = _mtree.log_rooted_trees(np.log(W + np.eye(m)))
    for j in range(m):
        keep = [i for i in range(m) if i != j]
        assert A[j] == pytest.approx(np.linalg.slogdet(L[np.ix_(keep, keep)])[1], abs=1e-10)


def _tree_brute_force(lW, lr):
    """Enumerate every spanning arborescence: its weight is r_root times its edge weights."""
    m = lW.shape[0]
    logw, pars = [], []
    for par in forests(m):
        if sum(p == m for p in par) != 1:
            continue
        logw.append(sum(lr[j] if par[j] == m else lW[par[j], j] for j in range(m)))
        pars.append(par)
    logw = np.array(logw)
    logT = logsumexp(logw)
    w = np.exp(logw - logT)
    P = np.zeros((m + 1, m))
    for wt, par in zip(w, pars):
        P[list(par), np.arange(m)] += wt
    return P, logT


@pytest.mark.parametrize("m", [4, 5, 6])
def test_tree_posteriors_against_enumeration(m):
    """Random weights spread over 60 nats, missing edges and a root that cannot be one."""
    rng = np.random.default_rng(m)
    for trial in range(2):
        lW = rng.normal(0.0, 10.0 if trial else 1.0, (m, m))
        lW[rng.random((m, m)) < 0.25] = -np.inf
        np.fill_diagonal(lW, 0.0)                      # ignored
        lr = rng.normal(0.0, 10.0 if trial else 1.0, m)
        lr[0] = -np.inf
        bfP, bfT = _tree_brute_force(np.where(np.eye(m, dtype=bool), -np.inf, lW), lr)
        P, logT = _mtree.tree_parent_posteriors(lW, lr)
        assert logT == pytest.approx(bfT, abs=1e-10)
        assert logT == pytest.approx(float(_mtree.log_tree_partition(lW, lr)), abs=1e-10)
        np.testing.assert_allclose(P, bfP, atol=1e-10, rtol=0)
        np.testing.assert_allclose(P.sum(axis=0), 1.0, atol=1e-12)
        assert P[m, 0] == 0.0


def test_tree_posteriors_refuse_when_no_tree_exists():
    lW = np.full((3, 3), -np.inf)
    with pytest.raises(ValueError, match="no spanning tree"):
        _mtree.tree_parent_posteriors(lW, np.zeros(3))


def test_extreme_weight_range_does_not_underflow():
    # two nodes explain each other 5000 nats better than the root: Z = r1 r2 + r1 W12 + r2 W21
    lW = np.array([[-np.inf, 0.0], [0.0, -np.inf]])
    lr = np.array([-5000.0, -5000.0])
    lz = float(_mtree.log_partition(lW, lr))
    assert lz == pytest.approx(-5000 + math.log(2 + math.exp(-5000)), abs=1e-9)
    P, _ = _mtree.parent_posteriors(lW, lr)
    np.testing.assert_allclose(P, [[0, 0.5], [0.5, 0], [0.5, 0.5]], atol=1e-12)


def test_posteriors_sum_and_bma_predictive_normalises():
    df = _data("mixed")
    targets, conds = ["X1", "X2", "X3"], ["C1"]
    avg = F.SCFAverage(df, targets, conds, max_parents=1)
    P = avg.edge_posteriors()
    np.testing.assert_allclose(P.loc[targets + [F.ROOT]].sum(axis=0), 1.0, atol=1e-12)
    # sum of P(x_targets | x_c) over every target configuration is one
    grid = pd.DataFrame(list(itertools.product([0, 1], [0, 1], [0, 1])), columns=targets)
    for c in (0, 1):
        g = grid.copy()
        g["C1"] = c
        lp = avg.log_predictive(g)
        assert np.exp(lp).sum() == pytest.approx(1.0, abs=1e-12)


# --------------------------------------------------------------------------- penalty semantics
def test_penalty_inf_forces_condition_parents_and_zero_frees_them():
    df = noisy_chain(400, 4, 0.05, 2, n_cond=1)
    targets = ["X0", "X1", "X2", "X3"]
    fan = F.map_scf(df, targets, ["C0"], penalty=math.inf)
    assert all("C0" in fan.parents[t] for t in targets)
    sfan = F.map_scf(df, targets, ["C0"], penalty=0.0)
    assert sum("C0" in sfan.parents[t] for t in targets) < len(targets)
    assert sfan.score >= fan.score - 1e-9
    post = F.edge_posteriors(df, targets, ["C0"], penalty=math.inf)
    np.testing.assert_allclose(post.loc["C0"], 1.0)


def test_dbn_models_rank_as_in_figure_4():
    dbn = F.random_dbn(8, max_inter=2, random_state=4)
    train = F.sample_dbn(dbn, 500, random_state=5)
    test = F.sample_dbn(dbn, 500, random_state=6)
    none = F.DBNSCF(max_parents=0, intra="none").fit(train).mean_log_prob(test)
    intra = F.DBNSCF(max_parents=0, intra="forest").fit(train).mean_log_prob(test)
    inter = F.DBNSCF(max_parents=1, intra="none").fit(train).mean_log_prob(test)
    scf = F.DBNSCF(max_parents=1).fit(train).mean_log_prob(test)
    bma = F.DBNSCF(max_parents=1, averaging="bma").fit(train).mean_log_prob(test)
    assert none < intra and none < inter
    assert scf > max(intra, inter) - 0.05
    assert bma > scf - 0.05


def test_bat_structure_and_sampler():
    """BAT (Figure 4's second data set): the published arcs, outside SCF(2), and samples
    whose conditional frequencies follow the CPTs in the documented parent order."""
    from bnexplore.experiments.ziebart import BAT_INTER, BAT_INTRA, BAT_NODES, bat_dbn, sample_bat
    assert len(BAT_NODES) == len(set(BAT_NODES)) == 28
    assert len(set(BAT_INTRA)) == 26 and len(set(BAT_INTER)) == 16
    assert {n for arc in BAT_INTRA + BAT_INTER for n in arc} <= set(BAT_NODES)
    g = nx.DiGraph(list(BAT_INTRA))
    assert nx.is_directed_acyclic_graph(g)
    assert max(d for _, d in g.in_degree()) == 2          # not a forest: outside every SCF(k)
    inter_in = pd.Series([c for _, c in BAT_INTER]).value_counts()
    assert inter_in["LatAct"] == 5 and inter_in["FwdAct"] == 3
    bat = bat_dbn("bnt", random_state=3)
    seq = sample_bat(bat, 4000, random_state=4)
    assert list(seq.columns) == list(BAT_NODES)
    pairs, cur, prev = F.two_slice(seq)
    i = BAT_NODES.index("Ydot")                      # inter Ydot(t-1), intra EngStatus, FwdAct
    parents = [prev[p] for p in bat["inter"][i]] + [cur[p] for p in bat["intra"][i]]
    assert parents == ["Ydot[t-1]", "FwdAct", "EngStatus"]
    z = np.zeros(len(pairs), dtype=int)
    for p in parents:
        z = 2 * z + pairs[p].astype(int).to_numpy()
    y = pairs["Ydot"].astype(int).to_numpy()
    for cfg in range(8):
        rows = z == cfg
        if rows.sum() > 200:
            assert abs((y[rows] == 0).mean() - bat["cpts"][i][cfg, 0]) < 0.1
    with pytest.raises(ValueError, match="cpts"):
        bat_dbn("uniform")


@pytest.mark.slow
def test_bat_reduced_run_ranks_bma_over_map_over_inter():
    from bnexplore.experiments import run_named
    df = run_named("ziebart_bat", progress=False).set_index("model")
    assert df["error"].isna().all()
    lp = df["log_prob"]
    # 200 steps: the Inter models over-fit (below No structure), averaging helps most
    assert lp["BMA SCF(1)"] > lp["MAP SCF(1)"] > max(lp["Inter(1)"], lp["Inter(2)"])


def test_two_slice_pairs():
    seq = pd.DataFrame({"a": [0, 1, 1, 0], "b": [1, 1, 0, 0]})
    pairs, cur, prev = F.two_slice(seq)
    assert cur == ["a", "b"] and prev == ["a[t-1]", "b[t-1]"]
    assert pairs["a[t-1]"].tolist() == [0, 1, 1] and pairs["a"].tolist() == [1, 1, 0]


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs, exc, match", [
    ({"targets": []}, ValueError, "targets is empty"),
    ({"targets": "X0"}, TypeError, "lists of column names"),
    ({"targets": ["X0", "nope"]}, ValueError, "unknown column 'nope'"),
    ({"targets": ["X0", "X0"]}, ValueError, "repeats"),
    ({"conditions": ["X0"]}, ValueError, "disjoint"),
    ({"penalty": -1.0}, ValueError, "penalty must be >= 0"),
    ({"penalty": "big"}, TypeError, "penalty must be a number"),
    ({"penalty": float("nan")}, ValueError, "penalty"),
    ({"max_parents": -1}, ValueError, "max_parents must be >= 0"),
    ({"max_parents": 1.5}, TypeError, "max_parents"),
    ({"prior": "BIC"}, ValueError, "prior must be one of"),
    ({"intra": "dag"}, ValueError, "intra must be 'forest', 'tree' or 'none'"),
    ({"conditions": [], "penalty": math.inf}, ValueError, "penalty=inf"),
])
def test_bad_input(kwargs, exc, match):
    df = mixed_data(50, 0)
    args = {"targets": ["X0", "X1"], "conditions": ["C0"]}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        F.map_scf(df, **args)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"averaging": "mean"}, ValueError, "averaging must be 'map' or 'bma'"),
    ({"max_parents": -1}, ValueError, "max_parents must be >= 0"),
    ({"max_parents": 1.5}, TypeError, "max_parents"),
    ({"penalty": -1.0}, ValueError, "penalty must be >= 0"),
    ({"prior": "bdeu"}, ValueError, "prior must be one of"),
    ({"ess": 0}, ValueError, "ess"),
    ({"intra": "dag"}, ValueError, "intra must be"),
])
def test_dbn_checks_its_parameters_at_fit(kwargs, exc, match):
    seq = F.sample_dbn(F.random_dbn(3, random_state=0), 30, random_state=1)
    with pytest.raises(exc, match=match):
        F.DBNSCF(**kwargs).fit(seq)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_vars": 0}, "n_vars must be"), ({"max_inter": -1}, "max_inter must be"),
    ({"arity": 1}, "arity must be"), ({"random_state": -1}, "random_state must be"),
])
def test_random_dbn_checks_its_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        F.random_dbn(**kwargs)


def test_checked_and_trusted_families_agree():
    """SCFFamilies checks its parameters; SCFFamilies.trusted (for callers that checked
    them at their own edge) builds the same tables from the canonical values."""
    df = mixed_data(80, 1)
    checked = F.SCFFamilies(df, ["X0", "X1", "X2"], ["C0"], max_parents=np.int64(1),
                            penalty=2, prior="K2", ess=3, intra="tree")
    trusted = F.SCFFamilies.trusted(df, ["X0", "X1", "X2"], ["C0"], 1, 2.0, "K2", 3.0, "tree")
    assert checked.max_parents == trusted.max_parents == 1 and checked.penalty == 2.0
    np.testing.assert_array_equal(checked.scores, trusted.scores)
    inf = F.map_scf(df, ["X0", "X1"], ["C0"], penalty=math.inf)       # inf is a valid penalty
    assert all("C0" in ps for ps in inf.parents.values())


def test_continuous_column_is_refused():
    df = mixed_data(50, 0).astype(int)
    df["X0"] = np.linspace(0, 1, 50)
    with pytest.raises(ValueError, match="X0"):
        F.map_scf(df, ["X0", "X1"], ["C0"])


def test_max_parents_and_pseudo_count_have_their_own_names():
    """The exclusion penalty is ``penalty``, the Dirichlet pseudo-count ``_pseudo_count``;
    the old alias property ``SCFFamilies.k`` is gone (one name per concept)."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({c: pd.Categorical(rng.integers(0, 2, 60)) for c in "abcd"})
    fam = F.SCFFamilies(df, ["a", "b", "c"], ["d"], max_parents=1, penalty=2.0, prior="BDeu", ess=4.0)
    assert fam.max_parents == 1 and fam.penalty == 2.0 and not hasattr(fam, "k")
    assert fam._pseudo_count(1, 2) == 4.0 / 2  # ess / (q r)
    k2 = F.SCFFamilies(df, ["a", "b", "c"], ["d"], prior="K2")
    np.testing.assert_array_equal(k2._pseudo_count(np.array([2, 4]), 2), [1.0, 1.0])
