"""Structural EM's E-step and scores of fractional counts (bnexplore._em_counts):
exact expected counts against a brute-force sum over every completion, the row
log-likelihood against the einsum elimination of bnexplore.classifiers._missing, EM's
objective never decreasing, fractional-count scores equal to LocalScore on integer
counts, the walk over parent sets equal to the family-by-family counting, and the draws
following the exact posterior."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import bnexplore as bx
from bnexplore._em_counts import (_layout, estep, expected_family_score, expected_weights,
                                  fit_parameters, objective)
from bnexplore._order_posterior import lex_parent_sets
from bnexplore._structural_em import observed_log_likelihood
from bnexplore.data.core import DiscreteData
from bnexplore.scores import LocalScore

ASIA_PARENTS = [(), (0,), (), (2,), (2,), (1, 3), (5,), (4, 5)]


def _masked(df, frac, seed):
    return df.mask(np.random.default_rng(seed).random(df.shape) < frac)


def _asia(n, frac, seed):
    df = _masked(bx.networks.load("asia").sample(n, random_state=seed), frac, seed + 1)
    data = DiscreteData.from_frame(df, missing="keep")
    code = np.where(data.missing, -1, data.codes).astype(np.int64)
    return data, code, data.arities.astype(np.int64)


def _random_cpts(parents, arities, seed):
    rng = np.random.default_rng(seed)
    return [rng.dirichlet(np.ones(arities[v]), size=int(np.prod([arities[u] for u in pa], dtype=int)))
            for v, pa in enumerate(parents)]


def _brute(code, arities, parents, cpts):
    """Expected counts and row log-likelihoods by summing every completion of each row."""
    counts = [np.zeros_like(c) for c in cpts]
    lls = []
    for row in code:
        miss = np.flatnonzero(row < 0)
        fills, probs = [], []
        for fill in itertools.product(*[range(arities[v]) for v in miss]):
            x = row.copy()
            x[miss] = fill
            p = 1.0
            for v, pa in enumerate(parents):
                j = 0
                for u in pa:
                    j = j * arities[u] + x[u]
                p *= cpts[v][j, x[v]]
            fills.append(x)
            probs.append(p)
        z = sum(probs)
        lls.append(np.log(z))
        for x, p in zip(fills, probs):
            for v, pa in enumerate(parents):
                j = 0
                for u in pa:
                    j = j * arities[u] + x[u]
                counts[v][j, x[v]] += p / z
    return counts, np.array(lls)


def test_expected_counts_and_row_likelihoods_equal_the_brute_force_sum():
    data, code, ar = _asia(40, 0.35, 3)
    cpts = _random_cpts(ASIA_PARENTS, ar, 0)
    counts, ll, _, n_sampled = estep(code, ar, ASIA_PARENTS, cpts)
    assert n_sampled == 0
    want_counts, want_ll = _brute(code, ar, ASIA_PARENTS, cpts)
    np.testing.assert_allclose(ll, want_ll, rtol=1e-10)
    for got, want in zip(counts, want_counts):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert sum(c.sum() for c in counts) == pytest.approx(40 * 8)


def test_row_likelihood_equals_the_einsum_elimination():
    """Eq. (2) against observed_log_likelihood (cpt_log_joint: einsum per missing pattern)."""
    data, code, ar = _asia(300, 0.3, 5)
    cpts = _random_cpts(ASIA_PARENTS, ar, 1)
    _, ll, _, _ = estep(code, ar, ASIA_PARENTS, cpts)
    assert ll.sum() == pytest.approx(observed_log_likelihood(data, ASIA_PARENTS, cpts), rel=1e-10)


def test_draws_follow_the_exact_posterior_and_keep_the_observed_cells():
    data, code, ar = _asia(6, 0.4, 11)
    cpts = _random_cpts(ASIA_PARENTS, ar, 2)
    S = 4000
    counts, _, draws, _ = estep(code, ar, ASIA_PARENTS, cpts, n_draws=S, seed=3)
    seen = code >= 0
    assert (draws[:, seen] == code[seen]).all() and (draws >= 0).all()
    # the draws' family frequencies estimate the exact expected counts (3)
    est = [np.zeros_like(c) for c in counts]
    for v, pa in enumerate(ASIA_PARENTS):
        j = np.zeros(draws.shape[:2], dtype=np.int64)
        for u in pa:
            j = j * ar[u] + draws[:, :, u]
        np.add.at(est[v], (j.ravel(), draws[:, :, v].ravel()), 1.0 / S)
    for got, want in zip(est, counts):
        np.testing.assert_allclose(got, want, atol=0.05)
    again = estep(code, ar, ASIA_PARENTS, cpts, n_draws=S, seed=3)[2]
    assert (again == draws).all()


def test_em_objective_never_decreases_and_likelihood_rises():
    data, code, ar = _asia(800, 0.3, 21)
    for prior, ess in (("K2", 1.0), ("BDeu", 4.0)):
        cpts, lls, objs = fit_parameters(code, ar, ASIA_PARENTS, prior=prior, ess=ess, max_iter=30, tol=0.0)
        assert 5 < len(objs) <= 31                       # stops when the objective no longer rises
        assert np.all(np.diff(objs) >= -1e-9 * abs(objs[0]))
        assert lls[-1] > lls[0]
        # the reported objective is that of the returned CPTs
        _, ll, _, _ = estep(code, ar, ASIA_PARENTS, cpts)
        assert objective(ll, cpts, prior, ess) == pytest.approx(objs[-1], rel=1e-12)


def test_em_on_complete_data_is_the_posterior_mean_at_once():
    data, code, ar = _asia(200, 0.0, 4)
    from bnexplore.scores import family_counts, standard_parameters
    cpts, lls, objs = fit_parameters(code, ar, ASIA_PARENTS, max_iter=10)
    assert len(objs) == 2 and objs[1] == objs[0]
    for v, pa in enumerate(ASIA_PARENTS):
        want = standard_parameters(family_counts(data, v, list(pa)))
        np.testing.assert_allclose(cpts[v], want, rtol=1e-12)


@pytest.mark.parametrize("prior, ess", [("K2", 1.0), ("BDeu", 1.0), ("BDeu", 7.5)])
def test_fractional_scores_equal_integer_scores_on_integer_counts(prior, ess):
    data, code, ar = _asia(500, 0.0, 8)
    ls = LocalScore(data, prior=prior, ess=ess)
    for v, pa in [(5, (1, 3)), (0, ()), (7, (0, 2, 4, 6)), (3, (2,))]:
        got = expected_family_score(code, code[None], v, pa, ar, prior, ess)
        assert got == pytest.approx(ls.score(v, pa), rel=1e-12, abs=1e-9)
        # S identical draws of complete data are the data again
        assert expected_family_score(code, np.repeat(code[None], 4, 0), v, pa, ar, prior, ess) == pytest.approx(
            ls.score(v, pa), rel=1e-12, abs=1e-9)


def test_fractional_score_of_an_incomplete_row_is_the_mean_of_its_draws():
    """Eq. (5): one row whose child is missing counts 1/S at each draw."""
    code = np.array([[0, 0], [1, 1], [0, -1]])
    draws = np.array([[[0, 0], [1, 1], [0, 0]], [[0, 0], [1, 1], [0, 1]]])
    # K2 counts of b | a: a=0 -> (1.5, 0.5), a=1 -> (0, 1)
    from math import lgamma
    want = (lgamma(2) - lgamma(4) + lgamma(2.5) + lgamma(1.5)) + (lgamma(2) - lgamma(3) + lgamma(2))
    assert expected_family_score(code, draws, 1, [0], np.array([2, 2])) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("prior", ["K2", "BDeu"])
def test_walk_over_parent_sets_equals_family_by_family_counting(prior):
    data, code, ar = _asia(150, 0.25, 13)
    cpts = _random_cpts(ASIA_PARENTS, ar, 5)
    _, _, draws, _ = estep(code, ar, ASIA_PARENTS, cpts, n_draws=8, seed=1)
    p, k = 8, 3
    cand = [np.arange(v, dtype=np.int64) for v in range(p)]                  # the column order
    cand_off = np.zeros(p + 1, dtype=np.int64)
    np.cumsum([c.size for c in cand], out=cand_off[1:])
    from bnexplore._order_posterior import count_parent_sets
    mu = [count_parent_sets(c.size, k) for c in cand]
    set_off = np.zeros(p + 1, dtype=np.int64)
    np.cumsum(mu, out=set_off[1:])
    for threads in (False, True):
        w = expected_weights(code, draws, ar, np.concatenate(cand), cand_off, k, set_off, prior == "BDeu", 2.0,
                             threads=threads)
        for v in range(p):
            sets = np.empty((mu[v], max(k, 1)), dtype=np.int64)
            sizes = np.empty(mu[v], dtype=np.int64)
            lex_parent_sets(cand[v], min(k, cand[v].size), sets, sizes)
            for i in range(mu[v]):
                want = expected_family_score(code, draws, v, sets[i, :sizes[i]], ar, prior, 2.0)
                assert w[set_off[v] + i] == pytest.approx(want, rel=1e-12, abs=1e-9)


def test_a_component_too_large_to_enumerate_is_sampled():
    """A chain of six missing 3-state cells (729 states): enumerated with cap 729, Gibbs-sampled
    with cap 100, its counts then estimates and its row likelihood from variable elimination."""
    code = np.array([[-1, -1, -1, -1, -1, -1], [0, -1, -1, -1, -1, 2], [1, 2, 0, 1, -1, 0]], dtype=np.int64)
    parents = [(), (0,), (1,), (2,), (3,), (4,)]
    ar = np.full(6, 3)
    cpts = _random_cpts(parents, ar, 0)
    exact, ll, _, n0 = estep(code, ar, parents, cpts, cap=729)
    approx, ll2, draws, n1 = estep(code, ar, parents, cpts, cap=100, n_draws=8, seed=2)
    assert n0 == 0 and n1 == 1                    # row 1: 81 states, enumerated
    want_counts, want_ll = _brute(code, ar, parents, cpts)
    np.testing.assert_allclose(ll, want_ll, rtol=1e-10, atol=1e-12)        # row 0: log 1
    np.testing.assert_allclose(ll2, want_ll, rtol=1e-10, atol=1e-12)
    for a, e, w in zip(approx, exact, want_counts):
        np.testing.assert_allclose(e, w, rtol=1e-10, atol=1e-12)
        assert a.sum() == pytest.approx(3.0)
        np.testing.assert_allclose(a, e, atol=0.25)
    assert (draws[:, code >= 0] == code[code >= 0]).all() and (draws >= 0).all()


def test_layout_of_a_structure():
    pa_flat, pa_off, t_off = _layout([(), (0,), (0, 1)], np.array([2, 3, 4]))
    assert pa_flat.tolist() == [0, 0, 1] and pa_off.tolist() == [0, 0, 1, 3]
    assert t_off.tolist() == [0, 2, 2 + 6, 2 + 6 + 24]


def test_mixed_arities_expected_counts_and_draws_equal_the_brute_force_sum():
    """Components of several 2-, 3- and 4-state variables (the states walked in order,
    each factor's cell moved by its stride): counts, row likelihoods and draws against the
    sum over every completion."""
    ar = np.array([3, 2, 4, 3, 2, 4], dtype=np.int64)
    parents = [(), (0,), (0, 1), (2,), (1, 3), (2, 4)]
    cpts = _random_cpts(parents, ar, 7)
    rng = np.random.default_rng(8)
    code = np.stack([rng.integers(0, a, 25) for a in ar], axis=1)
    code[rng.random(code.shape) < 0.5] = -1
    code[0] = -1                                           # one row missing everything
    counts, ll, draws, n_sampled = estep(code, ar, parents, cpts, n_draws=20000, seed=9)
    assert n_sampled == 0
    want_counts, want_ll = _brute(code, ar, parents, cpts)
    np.testing.assert_allclose(ll, want_ll, rtol=1e-10)
    for got, want in zip(counts, want_counts):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    est = [np.zeros_like(c) for c in counts]
    for v, pa in enumerate(parents):
        j = np.zeros(draws.shape[:2], dtype=np.int64)
        for u in pa:
            j = j * ar[u] + draws[:, :, u]
        np.add.at(est[v], (j.ravel(), draws[:, :, v].ravel()), 1.0 / draws.shape[0])
    for got, want in zip(est, counts):
        np.testing.assert_allclose(got, want, atol=0.05)
