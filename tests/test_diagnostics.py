"""Rank-normalised split R-hat and bulk ESS (Vehtari et al. 2021) against a plain
implementation written out from the paper's equations, and against ArviZ when installed."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from bnexplore._diagnostics import bulk_ess, rank_rhat


def _ranks(v):
    """Average ranks (1-based) of a 1-d array, ties averaged, by sorting."""
    order = np.argsort(v, kind="stable")
    r = np.empty(len(v))
    sv = v[order]
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and sv[j + 1] == sv[i]:
            j += 1
        r[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return r


def _plain(chains):
    """(R-hat, bulk ESS) of one quantity, chains (m, n), loop by loop."""
    m, n = chains.shape
    h = n // 2
    split = [c[:h] for c in chains] + [c[n - h:] for c in chains]
    allv = np.concatenate(split)
    S = len(allv)

    def zs(values):
        return norm.ppf((_ranks(values) - 0.375) / (S + 0.25)).reshape(2 * m, h)

    def rhat(z):
        means = [np.mean(c) for c in z]
        W = np.mean([np.var(c, ddof=1) for c in z])
        B_h = np.var(means, ddof=1)
        return math.sqrt(((h - 1) / h * W + B_h) / W)

    med = np.median(allv)
    r = max(rhat(zs(allv)), rhat(zs(np.abs(allv - med))))
    z = zs(allv)
    M = 2 * m
    W = np.mean([np.var(c, ddof=1) for c in z])
    var_plus = W * (h - 1) / h + np.var([np.mean(c) for c in z], ddof=1)
    acov = np.array([[np.sum((c[:h - t] - c.mean()) * (c[t:] - c.mean())) / h for t in range(h)] for c in z])
    rho = 1 - (W - acov.mean(axis=0)) / var_plus
    rho[0] = 1.0
    tau, prev = -1.0, np.inf
    for t in range(0, h - 1, 2):
        P = rho[t] + rho[t + 1]
        if P <= 0:
            break
        P = min(P, prev)
        prev = P
        tau += 2 * P
    return r, M * h / max(tau, 1 / math.log10(max(M * h, 10)))


def _chains(kind, rng):
    if kind == "iid":
        return rng.normal(size=(4, 400))
    if kind == "ar":
        x = np.zeros((4, 400))
        for t in range(1, 400):
            x[:, t] = 0.8 * x[:, t - 1] + rng.normal(size=4)
        return x
    if kind == "shifted":
        return rng.normal(size=(4, 400)) + np.array([0, 0, 0, 1.0])[:, None]
    if kind == "scale":  # same means, one chain much wider: the folded R-hat sees it
        return rng.normal(size=(4, 400)) * np.array([1, 1, 1, 4.0])[:, None]
    return (rng.random((4, 400)) < 0.3).astype(float)  # binary with ties (an arc indicator)


@pytest.mark.parametrize("kind", ["iid", "ar", "shifted", "scale", "binary"])
def test_against_plain_formula(kind):
    x = _chains(kind, np.random.default_rng(1))
    r, e = _plain(x)
    assert rank_rhat(x[:, :, None])[0] == pytest.approx(r, rel=1e-10)
    assert bulk_ess(x[:, :, None])[0] == pytest.approx(e, rel=1e-8)
    assert rank_rhat(x) == pytest.approx(r, rel=1e-10)  # no trailing axis


def test_qualitative():
    rng = np.random.default_rng(2)
    assert rank_rhat(_chains("shifted", rng)) > 1.05
    assert rank_rhat(_chains("scale", rng)) > 1.05  # invisible to the plain split R-hat
    assert rank_rhat(np.zeros((3, 50))) == 1.0
    assert np.isinf(rank_rhat(np.repeat([[0.0], [1.0]], 50, axis=1)))
    assert bulk_ess(_chains("ar", rng)) < 800 < bulk_ess(_chains("iid", rng))


@pytest.mark.parametrize("kind", ["iid", "ar", "shifted", "scale"])
def test_against_arviz(kind):
    az = pytest.importorskip("arviz")
    x = _chains(kind, np.random.default_rng(3))
    assert rank_rhat(x) == pytest.approx(float(az.rhat(x, method="rank")), rel=1e-6)
    assert bulk_ess(x) == pytest.approx(float(az.ess(x, method="bulk")), rel=0.02)
