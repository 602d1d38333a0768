"""Convergence diagnostics of MCMC draws: rank-normalised split R-hat and bulk ESS.

Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021).  The ``m`` chains of ``n`` draws are
split in halves (``2m`` chains of ``h = floor(n / 2)``; the middle draw of an odd chain is
left out), and the draws of all of them are replaced by their normal scores

    z = Phi^-1((r - 3/8) / (S + 1/4))                                      (rank normalisation)

with ``r`` the rank among all ``S = 2 m h`` draws (ties get their average rank).  Then

    R-hat = sqrt(((h - 1) / h W + B / h) / W)                              (R-hat)

with ``W`` the mean within-chain variance and ``B / h`` the variance of the chain means,
computed on ``z`` (bulk) and on the normal scores of ``|x - median x|`` (folded, for the
tails); the rank-normalised split R-hat is the larger of the two.  The bulk ESS is the
effective sample size of the split ``z`` draws (Geyer's initial monotone sequence on the
multi-chain autocorrelation, :func:`bnexplore._all_orders._ess`).  Where every draw of a
quantity is equal the diagnostics are 1 and ``S``.

Glossary
--------
draws
    an array (chains, draws, ...) of one or more scalar quantities; statistics are per
    quantity (the trailing axes).
"""
from __future__ import annotations

import numpy as np
from scipy.special import ndtri
from scipy.stats import rankdata

from ._all_orders import _ess

__all__ = ["split_chains", "z_scale", "rank_rhat", "bulk_ess"]


def split_chains(x: np.ndarray) -> np.ndarray:
    """(2m, n // 2, ...) halves of the m chains of ``x`` (the middle draw of odd chains left out)."""
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half:]], axis=0)


def z_scale(x: np.ndarray) -> np.ndarray:
    """Normal scores of the draws, ranked over all chains together per quantity."""
    m, n = x.shape[:2]
    flat = x.reshape(m * n, -1)
    r = rankdata(flat, axis=0, method="average")
    return ndtri((r - 0.375) / (m * n + 0.25)).reshape(x.shape)


def _rhat(z: np.ndarray) -> np.ndarray:
    """Plain R-hat of chains that are already split (1 where nothing varies)."""
    h = z.shape[1]
    W = z.var(axis=1, ddof=1).mean(axis=0)
    B_h = z.mean(axis=1).var(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(((h - 1) / h * W + B_h) / W)
    return np.where(W > 0, r, np.where(B_h > 0, np.inf, 1.0))


def rank_rhat(x: np.ndarray) -> np.ndarray:
    """Rank-normalised split R-hat of each quantity of ``x`` (chains, draws, ...): the larger
    of the bulk and the folded R-hat (nan with fewer than 4 draws per chain).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> float(rank_rhat(rng.normal(size=(4, 1000)))) < 1.01
    True
    >>> float(rank_rhat(rng.normal(size=(4, 1000)) + np.arange(4)[:, None])) > 1.5
    True
    """
    x = np.asarray(x, dtype=float)
    if x.shape[1] < 4:
        return np.full(x.shape[2:], np.nan)
    s = split_chains(x)
    const = np.ptp(s.reshape(s.shape[0] * s.shape[1], -1), axis=0).reshape(x.shape[2:]) == 0
    bulk = _rhat(z_scale(s))
    folded = _rhat(z_scale(np.abs(s - np.median(s, axis=(0, 1)))))
    return np.where(const, 1.0, np.maximum(bulk, folded))


def bulk_ess(x: np.ndarray) -> np.ndarray:
    """Bulk effective sample size of each quantity of ``x`` (chains, draws, ...).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> 3000 < float(bulk_ess(rng.normal(size=(4, 1000)))) < 5000   # independent draws: about 4,000
    True
    """
    x = np.asarray(x, dtype=float)
    if x.shape[1] < 4:
        return np.full(x.shape[2:], float(x.shape[0] * x.shape[1]))
    s = split_chains(x)
    const = np.ptp(s.reshape(s.shape[0] * s.shape[1], -1), axis=0).reshape(x.shape[2:]) == 0
    return np.where(const, float(s.shape[0] * s.shape[1]), _ess(z_scale(s)))
