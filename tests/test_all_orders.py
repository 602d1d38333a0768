"""Exact averaging over all orders (Koivisto & Sood DP) against brute force, and order
MCMC against the exact DP."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

import bnexplore as bx
from bnexplore.data import MemoryBudgetError
from bnexplore.scores import LocalScore


def _brute_force(df: pd.DataFrame, k: int, prior: str, ess: float = 1.0, structure_prior=None):
    """Every DAG with in-degree <= k, weighted by prod of family scores times its number
    of linear extensions (counted by a DP over subsets, one per DAG), over N!."""
    ls = LocalScore(df, prior=prior, ess=ess, cache=False)
    names = list(df.columns)
    p = len(names)
    choices, weights = [], []
    for v in range(p):
        others = [u for u in range(p) if u != v]
        sets = [c for s in range(min(k, p - 1) + 1) for c in itertools.combinations(others, s)]
        choices.append(np.array([sum(1 << u for u in c) for c in sets], dtype=np.int64))
        w = np.array([ls.score(v, list(c)) for c in sets])
        if structure_prior is not None:
            w = w + np.array([structure_prior(names[v], tuple(names[u] for u in c)) for c in sets])
        weights.append(w)
    grids = np.meshgrid(*[np.arange(len(c)) for c in choices], indexing="ij")
    idx = [g.ravel() for g in grids]
    pa = np.stack([choices[v][idx[v]] for v in range(p)], axis=1)  # (n_dags, p) parent masks
    logw = sum(weights[v][idx[v]] for v in range(p))
    ext = np.zeros((1 << p, pa.shape[0]))
    ext[0] = 1.0
    for S in range(1, 1 << p):
        for v in range(p):
            if S >> v & 1:
                rest = S & ~(1 << v)
                ok = (pa[:, v] & ~rest) == 0  # v last in S: its parents among the rest
                ext[S] += np.where(ok, ext[rest], 0.0)
    count = ext[-1]
    dag = count > 0  # a cyclic graph has no linear extension
    logw = logw[dag] + np.log(count[dag]) - math.lgamma(p + 1)
    logz = logsumexp(logw)
    prob = np.exp(logw - logz)
    post = np.zeros((p, p))
    for v in range(p):
        for u in range(p):
            if u != v:
                post[u, v] = prob[(pa[dag, v] >> u & 1) == 1].sum()
    return logz, post, int(dag.sum())


def _data(n_vars: int, n_rows: int, seed: int) -> pd.DataFrame:
    bn = bx.networks.random_network(n_nodes=n_vars, max_parents=2, random_state=seed)
    return bn.sample(n_rows, random_state=seed)


@pytest.mark.parametrize("prior", ["K2", "BDeu"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_exact_matches_brute_force(prior, k):
    n_vars = 5 if k < 3 else 4
    df = _data(n_vars, 200, seed=k)
    ao = bx.averaging.AllOrders(df, max_parents=k, prior=prior, ess=2.0)
    logz, post, n_dags = _brute_force(df, k, prior, ess=2.0)
    assert n_dags > 100
    assert ao.log_evidence == pytest.approx(logz, abs=1e-9, rel=0)
    got = ao.arc_posteriors()
    assert list(got.index) == list(df.columns) and list(got.columns) == list(df.columns)
    np.testing.assert_allclose(got.to_numpy(), post, atol=1e-9, rtol=0)
    assert 0.05 < post.max() and post[post > 0].min() < 0.95  # not a degenerate case


@pytest.mark.slow
def test_exact_five_nodes_k3():  # k = 3 is covered on four nodes in the fast tests
    df = _data(5, 150, seed=7)
    ao = bx.averaging.AllOrders(df, max_parents=3)
    logz, post, _ = _brute_force(df, 3, "K2")
    assert ao.log_evidence == pytest.approx(logz, abs=1e-9, rel=0)
    np.testing.assert_allclose(ao.arc_posteriors().to_numpy(), post, atol=1e-9, rtol=0)


def test_exact_strong_dependence_spans_thousands_of_nats():
    # copies of one variable with a little noise over many rows: orders that put a copy
    # before the others pay thousands of nats (beyond float64 range without extended floats)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, 20_000)
    cols = {"a": x}
    for name, flip in [("b", 0.01), ("c", 0.02), ("d", 0.3)]:
        cols[name] = np.where(rng.random(x.size) < flip, 1 - x, x)
    df = pd.DataFrame(cols).astype("category")
    ao = bx.averaging.AllOrders(df, max_parents=2)
    logz, post, _ = _brute_force(df, 2, "K2")
    assert ao.log_evidence == pytest.approx(logz, abs=1e-8 * abs(logz), rel=0)
    np.testing.assert_allclose(ao.arc_posteriors().to_numpy(), post, atol=1e-9, rtol=0)


def test_structure_prior_hook():
    df = _data(4, 150, seed=3)

    def sp(child, parents):
        return -1.5 * len(parents) + (0.7 if child == "X1" and "X0" in parents else 0.0)

    names = list(df.columns)
    ao = bx.averaging.AllOrders(df, max_parents=2, structure_prior=sp)
    logz, post, _ = _brute_force(df, 2, "K2", structure_prior=sp)
    assert ao.log_evidence == pytest.approx(logz, abs=1e-9, rel=0)
    np.testing.assert_allclose(ao.arc_posteriors().to_numpy(), post, atol=1e-9, rtol=0)
    # the matrix form of the same kind of prior
    W = pd.DataFrame(-1.0, index=names, columns=names)
    a = bx.averaging.AllOrders(df, max_parents=2, structure_prior=W)
    b = bx.averaging.AllOrders(df, max_parents=2, structure_prior=lambda c, ps: -1.0 * len(ps))
    assert a.log_evidence == pytest.approx(b.log_evidence, abs=1e-9)


def test_mean_of_ordered_averaging_over_orders():
    # log_evidence includes 1/N!: the mean over orders of OrderedAveraging's evidence
    df = _data(4, 120, seed=5)
    terms = [bx.averaging.OrderedAveraging(df, order=list(o), max_parents=2).log_evidence
             for o in itertools.permutations(df.columns)]
    ao = bx.averaging.AllOrders(df, max_parents=2)
    assert ao.log_evidence == pytest.approx(logsumexp(terms) - math.log(len(terms)), abs=1e-9)
    assert ao.log_order_sum == pytest.approx(logsumexp(terms), abs=1e-9)


def test_memory_guard_refuses_before_allocating(monkeypatch):
    import inspect
    from bnexplore import _all_orders
    df = _data(25, 50, seed=0)
    monkeypatch.setattr(_all_orders, "_available_memory", lambda: 4 << 30)   # 4 GiB free: 3 GiB budget
    with pytest.raises(MemoryBudgetError, match="order_mcmc") as err:
        bx.averaging.AllOrders(df, max_parents=3)
    assert "budget=" in str(err.value) and "75% of the memory available" in str(err.value)
    assert "budget" in inspect.signature(bx.averaging.AllOrders).parameters
    assert callable(bx.data.set_table_budget)
    with pytest.raises(MemoryBudgetError):
        bx.averaging.AllOrders(_data(6, 50, seed=0), max_parents=2, budget=500)


def test_default_budget_follows_available_memory(monkeypatch):
    """The default budget of the exact DP is 3/4 of the available memory, capped at
    MEMORY_CAP_CELLS, never below the package budget; a package budget that was set,
    or memory that cannot be read, gives the package budget."""
    from bnexplore import _all_orders
    from bnexplore.data import get_table_budget, set_table_budget
    package = get_table_budget()
    monkeypatch.setattr(_all_orders, "_available_memory", lambda: 16 << 30)
    assert _all_orders.all_orders_budget() == (12 << 30) // 8            # 1.6 G cells
    assert _all_orders.all_orders_budget() > bx.averaging.all_orders_cells(25)   # N = 25 fits in 16 GiB
    monkeypatch.setattr(_all_orders, "_available_memory", lambda: 1 << 50)
    assert _all_orders.all_orders_budget() == _all_orders.MEMORY_CAP_CELLS
    monkeypatch.setattr(_all_orders, "_available_memory", lambda: 1 << 20)
    assert _all_orders.all_orders_budget() == package                   # never below the package budget
    monkeypatch.setattr(_all_orders, "_available_memory", lambda: None)
    assert _all_orders.all_orders_budget() == package
    monkeypatch.setattr(_all_orders, "_available_memory", lambda: 16 << 30)
    old = set_table_budget(10**6)
    try:
        assert _all_orders.all_orders_budget() == 10**6                 # the user's budget rules
        with pytest.raises(MemoryBudgetError, match="the package budget"):
            bx.averaging.AllOrders(_data(16, 50, seed=0), max_parents=1)
    finally:
        set_table_budget(old)


def test_available_memory_is_read():
    from bnexplore import _all_orders
    mem = _all_orders._available_memory()
    assert mem is None or mem > 1 << 20


def test_bad_arguments():
    df = _data(4, 50, seed=0)
    with pytest.raises(TypeError, match="max_parents"):
        bx.averaging.AllOrders(df, max_parents=1.5)
    with pytest.raises(ValueError, match="max_parents"):
        bx.averaging.AllOrders(df, max_parents=-1)
    with pytest.raises(ValueError):
        bx.averaging.AllOrders(df, prior="BIC")


# --------------------------------------------------------------------------- order MCMC
def test_order_mcmc_agrees_with_exact():
    df = _data(10, 300, seed=11)
    exact = bx.averaging.AllOrders(df, max_parents=2).arc_posteriors()
    res = bx.averaging.order_mcmc(df, max_parents=2, n_iter=200_000, n_chains=4, random_state=0)
    got, se = res.arc_posteriors(), res.stderr
    assert got.shape == (10, 10) and list(got.index) == list(df.columns)
    assert se.shape == got.shape and res.rhat.shape == got.shape and res.ess.shape == got.shape
    diff = (got - exact).abs().to_numpy()
    # 4 Monte Carlo standard errors; the 1e-5 covers arcs whose mass sits in orders so rare
    # that no chain visits them (their standard error, estimated from the draws, is ~0)
    bad = diff > 4 * se.to_numpy() + 1e-5
    assert not bad.any(), (diff[bad], se.to_numpy()[bad])
    assert res.converged(1.05) and res.rhat_max < 1.05
    assert res.log_score_ess > 200
    assert np.all((res.acceptance_rate > 0.05) & (res.acceptance_rate < 1.0))
    assert np.diag(got.to_numpy()).max() == 0.0
    assert 0.3 < got.to_numpy().max()  # some arcs are well supported


@pytest.mark.slow
def test_order_mcmc_agrees_with_exact_twelve_nodes_bdeu_k3():
    df = _data(12, 500, seed=3)
    exact = bx.averaging.AllOrders(df, max_parents=3, prior="BDeu", ess=1.0).arc_posteriors()
    res = bx.averaging.order_mcmc(df, max_parents=3, prior="BDeu", ess=1.0, n_iter=300_000, n_chains=4, random_state=1)
    diff = (res.arc_posteriors() - exact).abs().to_numpy()
    # 1e-3: mass in orders of total probability below about 1 / ESS can go unvisited, and
    # the draws then show no error at all (a few arcs of exact posterior ~4e-4 here)
    bad = diff > 4 * res.stderr.to_numpy() + 1e-3
    assert not bad.any(), (diff[bad], res.stderr.to_numpy()[bad])
    assert res.converged(1.05)


def test_order_mcmc_seed_resume_and_traces():
    df = _data(8, 200, seed=2)
    a = bx.averaging.order_mcmc(df, max_parents=2, n_iter=3_000, n_chains=3, random_state=5, thin=10, burn_in=500)
    b = bx.averaging.order_mcmc(df, max_parents=2, n_iter=3_000, n_chains=3, random_state=5, thin=10, burn_in=500)
    c = bx.averaging.order_mcmc(df, max_parents=2, n_iter=3_000, n_chains=3, random_state=6, thin=10, burn_in=500)
    assert a.traces.shape == (3, 300) and np.isfinite(a.traces).all()
    np.testing.assert_array_equal(a.traces, b.traces)
    assert not np.array_equal(a.traces, c.traces)
    # resuming gives the same chains as one longer run
    d = bx.averaging.order_mcmc(df, max_parents=2, n_iter=1_200, n_chains=3, random_state=5, thin=10, burn_in=500)
    d.resume(1_800)
    assert d.n_iter == 3_000
    np.testing.assert_array_equal(d.traces, a.traces)
    np.testing.assert_allclose(d.arc_posteriors(), a.arc_posteriors(), atol=0)
    # the trace is the log order score of the current order: the exact sum over its DAGs
    order = a.orders[0]
    last = bx.averaging.OrderedAveraging(df, order=order, max_parents=2).log_evidence
    assert a.traces[0, -1] == pytest.approx(last, abs=1e-8)


@pytest.mark.parametrize("k", [2, 3])
def test_order_mcmc_draws_are_exact_given_the_order(k):
    # the log order score and the Rao-Blackwellised arc probabilities of the last draw of
    # each chain equal OrderedAveraging's for that chain's order (the loop bounds and the
    # cut-off drop nothing that matters)
    df = _data(9, 400, seed=8)
    res = bx.averaging.order_mcmc(df, max_parents=k, n_iter=500, n_chains=3, random_state=2, thin=50)
    for c, order in enumerate(res.orders):
        avg = bx.averaging.OrderedAveraging(df, order=order, max_parents=k)
        assert res.traces[c, -1] == pytest.approx(avg.log_evidence, abs=1e-8)
        np.testing.assert_allclose(res._rec.arc[c, res.n_draws - 1], avg.arc_posteriors().to_numpy(), atol=1e-12)


def test_order_mcmc_dag_samples():
    df = _data(6, 300, seed=4)
    res = bx.averaging.order_mcmc(df, max_parents=2, n_iter=8_000, n_chains=2, random_state=1, sample_dags=True)
    dags = res.dags()
    assert len(dags) == 2 * (res.n_draws - res._first)
    freq = np.zeros((6, 6))
    names = list(df.columns)
    for g in dags:
        assert nx_is_dag(g) and max(d for _, d in g.in_degree()) <= 2
        for u, v in g.edges:
            freq[names.index(u), names.index(v)] += 1
    freq /= len(dags)
    # arc frequencies of the drawn DAGs estimate the same posteriors (binomial noise)
    assert np.abs(freq - res.arc_posteriors().to_numpy()).max() < 0.08
    with pytest.raises(ValueError, match="sample_dags"):
        bx.averaging.order_mcmc(df, max_parents=1, n_iter=100, n_chains=1).dags()


def nx_is_dag(g) -> bool:
    import networkx as nx
    return nx.is_directed_acyclic_graph(g)


def test_diagnostics_detect_disagreement():
    from bnexplore._all_orders import _ess, _split_rhat
    rng = np.random.default_rng(0)
    iid = rng.normal(size=(4, 4000, 2))
    assert np.all(np.abs(_split_rhat(iid) - 1) < 0.01)
    assert np.all(np.abs(_ess(iid) / 16000 - 1) < 0.25)  # Geyer's truncation is noisy
    shifted = iid + np.arange(4)[:, None, None]  # chains disagree
    assert np.all(_split_rhat(shifted) > 1.5)
    ar = np.zeros((4, 1000))
    for t in range(1, 1000):  # AR(1) with phi = 0.95: ESS about n (1 - phi) / (1 + phi)
        ar[:, t] = 0.95 * ar[:, t - 1] + rng.normal(size=4)
    assert 50 < _ess(ar[:, :, None])[0] < 250
    const = np.ones((4, 100, 1))
    assert _split_rhat(const)[0] == 1.0


def test_order_mcmc_bad_arguments_and_guard():
    df = _data(5, 50, seed=0)
    with pytest.raises(TypeError, match="n_iter"):
        bx.averaging.order_mcmc(df, n_iter=10.5)
    with pytest.raises(ValueError, match="n_chains"):
        bx.averaging.order_mcmc(df, n_chains=0)
    with pytest.raises(ValueError, match="p_adjacent"):
        bx.averaging.order_mcmc(df, p_adjacent=1.5)
    with pytest.raises(MemoryBudgetError, match="thin"):
        bx.averaging.order_mcmc(df, n_iter=10_000, thin=1, budget=10_000)


def test_experiments_run_through_the_runner_and_resume(tmp_path):
    from bnexplore import experiments as ex
    exp = ex.get("orders_exact_vs_mcmc")
    grid, seeds = exp.settings("reduced")
    out = tmp_path / "orders.csv"
    first = ex.run(exp.trial, grid, random_states=seeds, out=out, progress=False)
    assert len(first) == 1 and first["error"].isna().all()
    assert first["mcmc_max_abs_diff"].iloc[0] < 0.1 and first["rhat_max"].iloc[0] < 1.2
    again = ex.run(exp.trial, grid, random_states=seeds, out=out, progress=False)  # resumed: nothing to run
    assert again["elapsed_s"].tolist() == first["elapsed_s"].tolist()
    rows = ex.get("orders_network_mcmc").trial(network="asia", n_rows=500, max_parents=2, n_iter=4_000,
                                                  random_state=0)
    assert rows and all(0.05 <= r["posterior"] <= 1 for r in rows)
    assert any(r["true_arc"] for r in rows)


def test_local_order_scores_over_more_bits_than_a_cache_block():
    """alpha_v(U) over 15 bits (more than the 14 a cache block of the blocked subset
    transform holds): with k = 1, alpha_v(U) = beta_v({}) + sum_{u in U} beta_v({u}),
    checked for every U against a direct sum."""
    from bnexplore import _all_orders, _order_dp
    from bnexplore.data import as_discrete
    n = 16
    data = as_discrete(_data(n, 100, seed=2))
    fam, _ = _all_orders._families_all(data, 1, "K2", 1.0, None, 1 << 40, "test")
    M = 1 << (n - 1)
    am, ae = np.empty((n, M)), np.empty((n, M), dtype=np.int32)
    _order_dp._alpha_tables(fam, n, am, ae)
    got = np.log(am) + ae * math.log(2.0)
    for v in (0, 7, n - 1):
        seg = slice(fam.offset[v], fam.offset[v + 1])
        w, size, members = fam.log_weight[seg], fam.size[seg], fam.members[seg]
        w0 = w[size == 0][0]
        ranks = np.array([u if u < v else u - 1 for u in members[size == 1, 0]])
        w1 = np.full(n - 1, -np.inf)
        w1[ranks] = w[size == 1]
        bits = (np.arange(M)[:, None] >> np.arange(n - 1)[None, :]) & 1
        terms = np.where(bits == 1, w1[None, :], -np.inf)
        want = logsumexp(np.concatenate([np.full((M, 1), w0), terms], axis=1), axis=1)
        assert np.allclose(got[v], want, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("bits", [3, 14, 16, 21])
@pytest.mark.parametrize("superset", [False, True])
def test_blocked_transform_is_bit_after_bit(bits, superset):
    # the cache-blocked subset / superset transform (the low bits block by block, then the
    # high bits) gives the floats of bit after bit over the whole table, written out in numpy
    import numba
    from bnexplore import _order_dp as dp
    rng = np.random.default_rng(bits)
    am = rng.random(1 << bits) + 1.0
    ae = rng.integers(-3000, 3000, 1 << bits).astype(np.int32)
    am[rng.random(1 << bits) < 0.2] = 0.0
    ae[am == 0.0] = dp.EXT_ZERO32

    @numba.njit
    def run(am, ae, bits, superset):
        dp._ext_transform(am, ae, bits, superset)

    got_m, got_e = am.copy(), ae.copy()
    run(got_m, got_e, bits, superset)
    m, e = am.copy(), ae.astype(np.int64)
    idx = np.arange(1 << bits)
    for i in range(bits):
        low = idx[(idx >> i) & 1 == 0]
        t, u = (low, low + (1 << i)) if superset else (low + (1 << i), low)
        mt, et, mu, eu = m[t], e[t], m[u], e[u]
        first = et >= eu
        m[t] = np.where(first, mt + mu * dp._POW2[np.minimum(np.abs(et - eu), 1100)],
                        mu + mt * dp._POW2[np.minimum(np.abs(eu - et), 1100)])
        e[t] = np.where(first, et, eu)
    assert np.array_equal(got_m, m) and np.array_equal(got_e.astype(np.int64), e)


def _synthetic_families(n: int, k: int, spread, rng):
    """Every family of at most k parents of n nodes, node v's log weights normal with
    standard deviation ``spread[v]`` nats (as bnexplore._order_dp.Families)."""
    from bnexplore import _order_dp
    w, mask, members, size, off = [], [], [], [], [0]
    for v in range(n):
        others = [u for u in range(n) if u != v]
        sets = [c for s in range(min(k, n - 1) + 1) for c in itertools.combinations(others, s)]
        w.extend(rng.normal(0.0, spread[v], len(sets)) - 500.0 * v)
        mask.extend(sum(1 << u for u in c) for c in sets)
        members.extend(list(c) + [-1] * (k - len(c)) for c in sets)
        size.extend(len(c) for c in sets)
        off.append(len(w))
    return _order_dp.Families(np.array(w), np.array(off, dtype=np.int64), np.array(mask, dtype=np.uint64),
                              np.array(members, dtype=np.int64), np.array(size, dtype=np.int64))


def test_float64_and_extended_paths_agree_with_sums_over_orders():
    """Nodes whose weights span a few nats take the float64 paths, nodes spanning
    thousands of nats (1 and 3, below) the extended-float ones (both are asserted to occur, for the
    local order scores and for the arc posteriors); alpha_v,
    the order sum and every arc posterior match direct log-space sums over the 6! orders."""
    from bnexplore import _order_dp as dp
    n, k = 6, 3
    fam = _synthetic_families(n, k, [3.0, 2.0, 10.0, 5.0, 1.0, 40.0], np.random.default_rng(1))
    # node 3 all but needs parent 1 and node 1 parent 3 (a little less): orders with 3
    # before 1 lose 3,000 nats, so Gamma_1 at the parent sets holding 3 lies far below the
    # largest L(S) R(S + 1), yet 3 -> 1 keeps a posterior of about 0.02: float64 alone
    # would give 0 there (the ext arc path)
    for v, u, bonus in ((3, 1, 3000.0), (1, 3, 2999.0)):
        seg = slice(fam.offset[v], fam.offset[v + 1])
        fam.log_weight[seg] += np.where(fam.mask[seg] & np.uint64(1 << u), bonus, 0.0)
    ok = [dp._alpha_scale(fam, v)[0] for v in range(n)]
    assert ok == [True, False, True, False, True, True]
    am, ae, L_m, L_e, R_m, R_e = dp.dp_tables(fam, n)
    log_alpha = np.log(am) + ae * math.log(2.0)
    log_a = np.empty((n, 1 << n))  # log alpha_v(U) over full masks U (bit v ignored)
    for v in range(n):
        seg = slice(fam.offset[v], fam.offset[v + 1])
        w, mask = fam.log_weight[seg], fam.mask[seg].astype(np.int64)
        for U in range(1 << n):
            log_a[v, U] = logsumexp(w[(mask & ~U) == 0])
            if not U >> v & 1:
                t = (U & ((1 << v) - 1)) | ((U >> (v + 1)) << v)
                assert log_alpha[v, t] == pytest.approx(log_a[v, U], abs=1e-9 * max(1.0, abs(log_a[v, U])))
    log_order, arc = [], []
    for order in itertools.permutations(range(n)):
        U, lo, a = 0, 0.0, np.zeros((n, n))
        for v in order:
            lo += log_a[v, U]
            seg = slice(fam.offset[v], fam.offset[v + 1])
            w, mask, mem = fam.log_weight[seg], fam.mask[seg].astype(np.int64), fam.members[seg]
            inside = (mask & ~U) == 0
            p = np.exp(w[inside] - log_a[v, U])
            for row, pr in zip(mem[inside], p):
                a[row[row >= 0], v] += pr
            U |= 1 << v
        log_order.append(lo)
        arc.append(a)
    log_order = np.array(log_order)
    full = (1 << n) - 1
    assert dp.ext_to_log(L_m[full], L_e[full]) == pytest.approx(logsumexp(log_order), rel=1e-12)
    want = np.einsum("o,ouv->uv", np.exp(log_order - logsumexp(log_order)), np.array(arc))
    got = dp.dp_arc_posteriors(fam, n, L_m, L_e, R_m, R_e)
    np.testing.assert_allclose(got, want, atol=1e-12, rtol=1e-9)
    assert 1e-3 < got[3, 1] < 0.9
    # both arc paths were taken: some node reads a float64 Gamma below its trustworthy floor
    hm = np.empty(1 << (n - 1))
    below = []
    for v in range(n):
        _, floor = dp._gamma_f64(n, v, L_m, L_e, R_m, R_e, hm)
        seg = slice(fam.offset[v], fam.offset[v + 1])
        t = [int(dp._compress(np.int64(m), v)) for m in fam.mask[seg][fam.size[seg] > 0]]
        below.append(bool((hm[t] < floor).any()))
    assert any(below) and not all(below)


@pytest.mark.parametrize("bits", [3, 16, 19])
@pytest.mark.parametrize("superset", [False, True])
def test_float64_transform_is_bit_after_bit(bits, superset):
    import numba
    from bnexplore import _order_dp as dp
    a = np.random.default_rng(bits).random(1 << bits)

    @numba.njit
    def run(a, bits, superset):
        dp._f64_transform(a, bits, superset)

    got = a.copy()
    run(got, bits, superset)
    idx = np.arange(1 << bits)
    for i in range(bits):
        low = idx[(idx >> i) & 1 == 0]
        t, u = (low, low + (1 << i)) if superset else (low + (1 << i), low)
        a[t] = a[t] + a[u]
    assert np.array_equal(got, a)
