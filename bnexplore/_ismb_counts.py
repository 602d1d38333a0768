"""Counts of the ISMB prediction families for one test instance (Eq. 6), many at once.

For an instance ``x`` and a family ``(v, mask)`` (``rest`` = the parents other than the
target), with ``match_i = AND_{u in rest} [x_u = d_{iu}]`` over the training rows ``i``:

    nj[z] = #{i : match_i, z_i = z}                        (target family; a child's
                                                            family without missing cells)
    nj[z] = #{i : match_i, v observed in row i, z_i = z}   (a child's, available case)
    nk[z] = #{i : match_i, x_v = d_{iv}, z_i = z}          (a child's)

:func:`family_counts` computes them for a batch of families in one pass each over the
rows; :meth:`bnexplore._ismb_predict._Prediction._ensure` turns them into the family
terms.  Counts are integers, so the terms equal those computed family by family.

Glossary
--------
eq
    ``(p, n)`` booleans: training row ``i`` has ``x_u`` in column ``u``.
obs
    ``(p, n)`` booleans, observed training cells (all True when nothing is missing).
rest, n_rest
    ``(k, width)`` parents of each family other than the target (padded), their counts.
"""
from __future__ import annotations

import numba
import numpy as np

__all__: list[str] = []


@numba.njit(cache=True, nogil=True)
def family_counts(eq: np.ndarray, obs: np.ndarray, z: np.ndarray, r: int, v: np.ndarray,
                  is_child: np.ndarray, rest: np.ndarray, n_rest: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``(nj, nk)`` of shape ``(k, r)`` for the ``k`` families (see the module notes)."""
    k = v.shape[0]
    n = z.shape[0]
    nj = np.zeros((k, r), dtype=np.int64)
    nk = np.zeros((k, r), dtype=np.int64)
    for f in range(k):
        vf = v[f]
        child = is_child[f]
        m = n_rest[f]
        for i in range(n):
            ok = True
            for j in range(m):
                if not eq[rest[f, j], i]:
                    ok = False
                    break
            if not ok:
                continue
            zi = z[i]
            if not child:
                nj[f, zi] += 1
                continue
            if obs[vf, i]:
                nj[f, zi] += 1
                if eq[vf, i]:
                    nk[f, zi] += 1
    return nj, nk


@numba.njit(cache=True, nogil=True)
def family_sums(F: np.ndarray, mat: np.ndarray) -> np.ndarray:
    """``out[s] = F[mat[s, 0]] + F[mat[s, 1]] + ...`` added left to right (the order of
    ``F[mat].sum(axis=1)``), stopping at the zero padding; shape ``(len(mat), r)``."""
    k, w = mat.shape
    r = F.shape[1]
    out = np.zeros((k, r))
    for s in range(k):
        for j in range(w):
            f = mat[s, j]
            if f == 0:
                break
            for z in range(r):
                out[s, z] += F[f, z]
    return out
