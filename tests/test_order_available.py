"""Order averaging over incomplete data (``OrderedAveraging(missing="keep")``): every family
weighed on its own rows (bnexplore._order_available, Eq. W), checked against brute force over
every DAG the order allows, with each family's score counted by hand (pandas, scipy) on the
rows where its node and parents are observed, and against the structure learners'
available-case scores (bnexplore._available_case Eq. 3)."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import bnexplore as bx
from scipy.special import gammaln, logsumexp

from bnexplore._available_case import AvailableCaseScore
from bnexplore._order_available import DENSE_CELLS
from bnexplore.averaging import OrderedAveraging
from bnexplore.scores import LocalScore
from test_missing_fit_averaging import _frame


def _score(df, child, parents, prior, ess):
    """K2 / BDeu family score of ``child`` given ``parents`` on the rows of ``df``, by hand."""
    r = len(df[child].cat.categories)
    q = int(np.prod([len(df[u].cat.categories) for u in parents]))
    if len(df) == 0:
        return 0.0
    codes = df[child].cat.codes.to_numpy()
    cfg = np.zeros(len(df), dtype=np.int64)
    for u in parents:
        cfg = cfg * len(df[u].cat.categories) + df[u].cat.codes.to_numpy()
    n_jk = pd.crosstab(cfg, codes).to_numpy().astype(float)     # seen configurations x seen states
    n_j = n_jk.sum(axis=1)
    if prior == "K2":
        return float(np.sum(gammaln(r) - gammaln(r + n_j)) + np.sum(gammaln(1 + n_jk)))
    a_j, a_jk = ess / q, ess / (q * r)
    return float(np.sum(gammaln(a_j) - gammaln(a_j + n_j)) + np.sum(gammaln(a_jk + n_jk) - gammaln(a_jk)))


def _weight(df, child, parents, prior, ess):
    """Eq. (W): s(v | {} ; O(v)) + s(v | A ; O(v u A)) - s(v | {} ; O(v u A))."""
    own = df[[child, *parents]].dropna()
    return (_score(df[[child]].dropna(), child, (), prior, ess) + _score(own, child, parents, prior, ess)
            - _score(own, child, (), prior, ess))


def _brute_force(df, levels, k, prior, ess, log_prior=None):
    """(arc posteriors, log evidence, per-node parent-set posteriors) by summing over every
    DAG whose arcs go from a lower to a higher level and whose nodes have <= k parents."""
    names = list(df.columns)
    lev = {v: i for i, group in enumerate(levels) for v in group}
    options = []
    for v in names:
        cand = [u for u in names if lev[u] < lev[v]]
        sets = [s for size in range(min(k, len(cand)) + 1) for s in itertools.combinations(cand, size)]
        w = {s: _weight(df, v, s, prior, ess) + (sum(log_prior[u][v] for u in s) if log_prior else 0.0)
             for s in sets}
        options.append(w)
    dags = list(itertools.product(*[list(w) for w in options]))
    logw = np.array([sum(options[i][s] for i, s in enumerate(g)) for g in dags])
    z = logsumexp(logw)
    prob = np.exp(logw - z)
    arcs = pd.DataFrame(0.0, index=names, columns=names)
    per_set = [dict.fromkeys(w, 0.0) for w in options]
    for g, pr in zip(dags, prob):
        for i, s in enumerate(g):
            per_set[i][s] += pr
            for u in s:
                arcs.loc[u, names[i]] += pr
    return arcs, z, per_set, len(dags)


@pytest.mark.parametrize("prior,ess,k,arities,seed", [
    ("K2", 1.0, 2, (2, 3, 2, 4, 3), 0),
    ("BDeu", 2.0, 4, (2, 3, 2, 2, 3), 1),
    ("BDeu", 1.0, 3, (3, 2, 4, 2), 2),
])
def test_equals_brute_force_over_every_dag_of_the_order(prior, ess, k, arities, seed):
    df = _frame(90, arities, seed, p_missing=0.2)
    assert df.notna().all(axis=1).mean() < 0.5                     # most rows miss a value
    avg = OrderedAveraging(df, max_parents=k, prior=prior, ess=ess, missing="keep")
    names = list(df.columns)
    arcs, z, per_set, n_dags = _brute_force(df, [[v] for v in names], k, prior, ess)
    assert avg.n_structures == n_dags
    np.testing.assert_allclose(avg.arc_posteriors().loc[names, names].to_numpy(), arcs.to_numpy(), rtol=0,
                               atol=1e-10)
    assert avg.log_evidence == pytest.approx(z, rel=1e-12, abs=1e-10)
    for i, v in enumerate(names):
        got = avg.parent_set_posteriors(v)
        want = [per_set[i][tuple(ps)] for ps in got["parents"]]
        np.testing.assert_allclose(got["posterior"], want, rtol=0, atol=1e-10)


def test_partial_order_and_structure_prior_equal_brute_force():
    df = _frame(80, (2, 3, 2, 2, 3), seed=5, p_missing=0.2)
    names = list(df.columns)
    levels = [["V0", "V1"], ["V2"], ["V3", "V4"]]
    rng = np.random.default_rng(3)
    W = pd.DataFrame(rng.normal(0, 1, (5, 5)), index=names, columns=names)
    avg = OrderedAveraging(df, levels=levels, max_parents=2, prior="BDeu", ess=1.0, structure_prior=W,
                           missing="keep")
    arcs, z, _, _ = _brute_force(df, levels, 2, "BDeu", 1.0, log_prior=W.to_dict(orient="index"))
    np.testing.assert_allclose(avg.arc_posteriors().loc[names, names].to_numpy(), arcs.to_numpy(), rtol=0,
                               atol=1e-10)
    assert avg.log_evidence == pytest.approx(z, rel=1e-12)


def test_weights_are_the_structure_learners_available_case_scores():
    """Each family's weight is what the searches give it (Eq. 3 of _available_case): the
    family of the empty set on its node's rows plus the gain on the family's own rows;
    a family with no missing cell gets its ordinary score."""
    df = _frame(150, (2, 3, 2, 4, 3, 2), seed=7, p_missing=0.15)
    df["V5"] = _frame(150, (2,), seed=9, p_missing=0.0)["V0"]    # one complete column
    df["V1"] = _frame(150, (3,), seed=9, p_missing=0.0)["V0"]
    for prior, ess in (("K2", 1.0), ("BDeu", 3.0)):
        avg = OrderedAveraging(df, max_parents=3, prior=prior, ess=ess, missing="keep")
        ac = AvailableCaseScore(LocalScore(df, prior=prior, ess=ess, missing="keep"))
        for v, name in enumerate(avg.names):
            got = avg.parent_set_posteriors(name)
            for ps, lw in zip(got["parents"], got["log_weight"]):
                idx = tuple(sorted(avg.names.index(u) for u in ps))
                assert lw == pytest.approx(ac.family(v, ()) + (ac.gain(v, idx) if idx else 0.0), rel=1e-12)
                assert avg.family_rows(name, ps).sum() == df[[name, *ps]].notna().all(axis=1).sum()
        whole = LocalScore(df[["V1", "V5"]], prior=prior, ess=ess)
        got = avg.parent_set_posteriors("V5").set_index("parents")["log_weight"]
        assert got[("V1",)] == pytest.approx(whole.score("V5", ["V1"]), rel=1e-12)


def test_large_families_counted_by_sorting_equal_brute_force():
    """Families with more than DENSE_CELLS cells take the sorting path."""
    df = _frame(150, (60, 60, 30, 2), seed=4, p_missing=0.1)
    assert 60 * 60 * 30 * 2 > DENSE_CELLS
    for prior in ("K2", "BDeu"):
        avg = OrderedAveraging(df, max_parents=3, prior=prior, ess=1.0, missing="keep")
        got = avg.parent_set_posteriors("V3").set_index("parents")["log_weight"]
        for ps in [("V0", "V1", "V2"), ("V0", "V2"), ("V1",), ()]:
            assert got[ps] == pytest.approx(_weight(df, "V3", ps, prior, 1.0), rel=1e-12)


def test_every_parent_set_of_a_node_missing_everywhere_weighs_the_same():
    """A node observed only where its candidate is missing: no family has a row to gain on.
    (A parent observed on few rows gains nothing from them: the decoy test of
    tests/test_missing_fit_averaging.py.)"""
    df = pd.DataFrame({"A": [0, 1, np.nan, np.nan, 0, 1] * 5, "B": [np.nan, np.nan, 1, 0, np.nan, np.nan] * 5})
    avg = OrderedAveraging(df, order=["A", "B"], max_parents=1, missing="keep")
    w = avg.parent_set_posteriors("B")["log_weight"].to_numpy()
    assert w[0] == pytest.approx(w[1], abs=1e-12) and np.isfinite(w).all()
    assert avg.arc_posteriors().loc["A", "B"] == pytest.approx(0.5)


def test_threaded_kernel_and_no_parents():
    """The threaded walk (large tables) gives the serial one's weights bit for bit; with
    max_parents=0 every node keeps the empty set, weighed on the node's rows."""
    from bnexplore import _order_available as oa
    df = _frame(300, (2, 3, 2, 4, 3, 2, 3), seed=11, p_missing=0.2)
    avg = OrderedAveraging(df, max_parents=3, prior="BDeu", missing="keep")
    d = avg.data
    code = np.where(d.missing, -1, d.codes).astype(np.int64)
    binom = oa._pascal(6, 4)
    outs = []
    for run in (oa._all_weights, oa._all_weights_threads):
        out = np.empty(avg.n_families)
        run(code, d.arities.astype(np.int64), avg._cand_flat, avg._cand_off, 3, binom, avg._off, True, 1.0,
            oa._logfact(400), out)
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], avg._flat_logw)
    none = OrderedAveraging(df, max_parents=0, missing="keep")
    assert none.n_families == df.shape[1] and not none.arc_posteriors().to_numpy().any()
    want = sum(_score(df[[c]].dropna(), c, (), "K2", 1.0) for c in df.columns)
    assert none.log_evidence == pytest.approx(want, rel=1e-12)


def test_working_memory_is_checked_before_the_walk():
    df = _frame(400, (2, 3, 2, 3), seed=3, p_missing=0.1)
    need = 2 * 4 * 400 + 2 * 400 + 2 * DENSE_CELLS + 400 * 4      # k = 3, one thread, the codes
    with pytest.raises(bx.data.MemoryBudgetError, match="max_parents"):
        OrderedAveraging(df, max_parents=3, missing="keep", budget=need - 1)
    assert OrderedAveraging(df, max_parents=3, missing="keep", budget=need).n_families == 1 + 2 + 4 + 8


# --------------------------------------------------------------------------- structural EM (missing="em")
def _em_brute_force(df, avg, k, prior, ess):
    """Arc posteriors by summing over every DAG of the column order, each family weighed by
    K2/BDeu of its expected counts (Eq. 5-6 of bnexplore._em_counts) under the last E-step's
    network, its draws made again from the reported seed."""
    from bnexplore._em_counts import estep, expected_family_score
    names = list(df.columns)
    d = avg.data
    code = np.where(d.missing, -1, d.codes).astype(np.int64)
    parents = [tuple(sorted(names.index(u) for u in avg.em["parents"][v])) for v in names]
    cpts = [avg.em["cpts"][v] for v in names]
    _, _, draws, _ = estep(code, d.arities, parents, cpts, n_draws=avg.em["n_draws"], seed=avg.em["seed"])
    options = []
    for i, v in enumerate(names):
        sets = [s for size in range(min(k, i) + 1) for s in itertools.combinations(range(i), size)]
        options.append({s: expected_family_score(code, draws, i, s, d.arities, prior, ess) for s in sets})
    dags = list(itertools.product(*[list(w) for w in options]))
    logw = np.array([sum(options[i][s] for i, s in enumerate(g)) for g in dags])
    prob = np.exp(logw - logsumexp(logw))
    arcs = np.zeros((len(names), len(names)))
    for g, pr in zip(dags, prob):
        for i, s in enumerate(g):
            for u in s:
                arcs[u, i] += pr
    return arcs, logsumexp(logw)


@pytest.mark.parametrize("prior,ess,k,arities,seed", [("K2", 1.0, 2, (2, 3, 2, 4, 3), 0),
                                                       ("BDeu", 2.0, 3, (3, 2, 4, 2), 2)])
def test_em_equals_brute_force_over_every_dag_of_the_order(prior, ess, k, arities, seed):
    df = _frame(120, arities, seed, p_missing=0.2)
    avg = OrderedAveraging(df, max_parents=k, prior=prior, ess=ess, missing="em", random_state=seed)
    assert 1 <= avg.em["n_iter"] <= 10 and np.isfinite(avg.em["log_likelihood"])
    assert len(avg.em["log_likelihoods"]) == avg.em["n_iter"]
    names = list(df.columns)
    arcs, z = _em_brute_force(df, avg, k, prior, ess)
    np.testing.assert_allclose(avg.arc_posteriors().loc[names, names].to_numpy(), arcs, rtol=0, atol=1e-10)
    assert avg.log_evidence == pytest.approx(z, rel=1e-12)
    # the reported network is the best DAG of the weights it produced when EM converged
    if avg.em["converged"]:
        for v in names:
            best = avg.parent_set_posteriors(v).iloc[0]["parents"]
            assert sorted(best) == sorted(avg.em["parents"][v])


def test_em_without_missing_cells_is_the_complete_data_averaging():
    df = _frame(100, (2, 3, 2, 4), 7, p_missing=0.0)
    for prior in ("K2", "BDeu"):
        ref = OrderedAveraging(df, max_parents=2, prior=prior)
        em = OrderedAveraging(df, max_parents=2, prior=prior, missing="em", random_state=0)
        assert em.em is None
        assert (em.arc_posteriors().to_numpy() == ref.arc_posteriors().to_numpy()).all()
        assert em.log_evidence == ref.log_evidence


def test_em_on_complete_draws_scores_every_family_as_the_complete_data():
    """The walk over expected counts, given draws of complete data, is the complete-data score."""
    from bnexplore._em_counts import expected_weights
    df = _frame(150, (2, 3, 2, 4, 3), 9, p_missing=0.0)
    ref = OrderedAveraging(df, max_parents=3, prior="BDeu", ess=3.0)
    code = ref.data.codes.astype(np.int64)
    w = expected_weights(code, np.repeat(code[None], 2, 0), ref.data.arities, ref._cand_flat, ref._cand_off, 3,
                         ref._off, True, 3.0)
    np.testing.assert_allclose(w, ref._flat_logw, rtol=1e-12, atol=1e-9)


def test_em_is_reproducible_and_checks_its_parameters():
    df = _frame(80, (2, 3, 2, 2), 4, p_missing=0.25)
    a = OrderedAveraging(df, max_parents=2, missing="em", random_state=3)
    b = OrderedAveraging(df, max_parents=2, missing="em", random_state=3)
    assert (a.arc_posteriors().to_numpy() == b.arc_posteriors().to_numpy()).all()
    with pytest.raises(ValueError, match="max_iter"):
        OrderedAveraging(df, max_parents=2, missing="em", max_iter=0)
    with pytest.raises(ValueError, match="'em'"):
        OrderedAveraging(df, max_parents=2, missing="impute")
    one = OrderedAveraging(df, max_parents=2, missing="em", max_iter=1, random_state=0)
    assert one.em["n_iter"] == 1


@pytest.mark.slow
def test_em_on_alarm_at_ten_percent_missing_is_near_the_row_drop_floor():
    """Issue 37's measure (benchmarks/bench_order_available.py --alarm): ALARM, 5,000 rows,
    its order, k = 3, 10% of the cells missing at random.  Structural EM leaves no more arcs
    off the complete-data posteriors by > 0.05 than the complete data minus 10% of its rows
    (measured: 5 against 6; available case 18)."""
    import networkx as nx
    net = bx.networks.load("alarm")
    df = net.sample(5000, random_state=0)
    order = list(nx.topological_sort(net.dag))
    ref = OrderedAveraging(df, order=order, max_parents=3).arc_posteriors()
    floor = (OrderedAveraging(df.iloc[:4500], order=order, max_parents=3).arc_posteriors() - ref).abs()
    gap = df.mask(np.random.default_rng(1).random(df.shape) < 0.1)
    keep = (OrderedAveraging(gap, order=order, max_parents=3, missing="keep").arc_posteriors() - ref).abs()
    em = OrderedAveraging(gap, order=order, max_parents=3, missing="em", random_state=0)
    diff = (em.arc_posteriors() - ref).abs()
    assert int((diff > 0.05).sum().sum()) <= int((floor > 0.05).sum().sum()) < int((keep > 0.05).sum().sum())
    assert diff.to_numpy().sum() < keep.to_numpy().sum() / 2
    assert em.em["converged"] and em.em["sampled_rows"] == 0


@pytest.mark.parametrize("prior, ess", [("K2", 1.0), ("BDeu", 3.0)])
def test_em_predictions_use_the_expected_counts_of_the_last_draws(prior, ess):
    """With structural EM the standard parameters of Eq. 13 are the posterior means of the
    expected counts of Eq. 5 on the last E-step's draws (made again here from its network
    and seed), not available-case counts: predict_log_joint equals the mixture computed
    here family by family, and M* gives the same."""
    from bnexplore._em_counts import estep
    net = bx.networks.load("asia")
    df = net.sample(400, random_state=31)
    df = df.mask(np.random.default_rng(32).random(df.shape) < 0.2)
    avg = OrderedAveraging(df, max_parents=2, prior=prior, ess=ess, missing="em", random_state=0)
    data, names = avg.data, avg.names
    ar = data.arities.astype(np.int64)
    code = np.where(data.missing, -1, data.codes).astype(np.int64)
    parents = [tuple(sorted(data.index(u) for u in avg.em["parents"][v])) for v in names]
    draws = estep(code, ar, parents, [avg.em["cpts"][v] for v in names], n_draws=avg.em["n_draws"],
                  seed=avg.em["seed"])[2]
    S = draws.shape[0]
    X = net.sample(30, random_state=33)[names]
    xc = data.encode(X).astype(np.int64)
    want = np.zeros(len(X))
    for v, name in enumerate(names):
        post = avg.parent_set_posteriors(name)
        mix = np.zeros(len(X))
        for g, w in zip(post["parents"], post["posterior"]):
            idx = [data.index(u) for u in g]
            r, q = int(ar[v]), int(np.prod(ar[idx], dtype=np.int64))
            j, jx = np.zeros(draws.shape[:2], dtype=np.int64), np.zeros(len(X), dtype=np.int64)
            for u in idx:
                j, jx = j * ar[u] + draws[:, :, u], jx * ar[u] + xc[:, u]
            n = np.bincount((j * r + draws[:, :, v]).ravel(), minlength=q * r).reshape(q, r) / S
            a = 1.0 if prior == "K2" else ess / (q * r)
            theta = (n + a) / (n.sum(axis=1, keepdims=True) + r * a)
            mix += w * theta[jx, xc[:, v]]
        want += np.log(mix)
    np.testing.assert_allclose(avg.predict_log_joint(X), want, rtol=1e-9)
    np.testing.assert_allclose(avg.summary_network(None).log_prob(X), want, rtol=1e-9)
    keep = OrderedAveraging(df, max_parents=2, prior=prior, ess=ess, missing="keep")
    assert np.abs(keep.predict_log_joint(X) - want).max() > 1e-3
