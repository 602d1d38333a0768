"""Exact summation of missing features at predict time (shared by the classifiers).

Codes are integer arrays ``(n, n_features)`` in the training coding with ``-1`` for a
missing value; the class is variable number ``n_features``.

* :func:`cpt_log_joint` - a model given as CPT factors (a Bayesian network): barren
  missing nodes (no observed descendant, not the class) are dropped, since their CPTs
  sum to one, and the remaining missing variables are eliminated with ``numpy.einsum``
  (optimised contraction order) per pattern of missing values, in scaled probability
  space.  A memory guard refuses contractions whose largest intermediate exceeds
  :data:`MAX_CELLS` cells.
* :func:`enumerate_log_joint` - a model known only through a row-wise log joint (BMA
  over forests, exact order averaging): sums over every completion of the relevant
  missing features, refusing more than :data:`MAX_COMPLETIONS` completions per row.
"""
from __future__ import annotations

import itertools
import string
from typing import Callable, Sequence

import numpy as np
from scipy.special import logsumexp

__all__ = ["cpt_log_joint", "enumerate_log_joint", "relevant_missing", "MAX_CELLS",
           "MAX_COMPLETIONS"]

#: largest intermediate table (cells, rows included) of one elimination
MAX_CELLS = 20_000_000
#: largest number of completions of the missing features of one row (enumeration)
MAX_COMPLETIONS = 4096


def _eval_factor(vars_: Sequence[int], table: np.ndarray, codes: np.ndarray, cls: int) -> np.ndarray:
    """Log factor at complete rows: (n, K) if the class is among ``vars_``, else (n, 1)."""
    if not isinstance(table, np.ndarray):  # a lazy table: read where the rows need it
        keep = [cls] if cls in vars_ else []
        out = table.gather(vars_, codes, keep)
        return out if keep else out[:, None]
    if cls in vars_:
        k = list(vars_).index(cls)
        t = np.moveaxis(table, k, -1)
        idx = tuple(codes[:, v] for v in vars_ if v != cls)
        return t[idx] if idx else np.broadcast_to(t, (codes.shape[0], t.shape[-1]))
    idx = tuple(codes[:, v] for v in vars_)
    return table[idx][:, None]


def _barren_pruned(factors, missing: set, cls: int) -> list[int]:
    """Indices of the factors left after removing barren missing nodes repeatedly.

    Factor ``i`` is the CPT of its first variable (the child).  A missing child that is
    no other remaining factor's variable sums its CPT to one and leaves.
    """
    active = list(range(len(factors)))
    changed = True
    while changed:
        changed = False
        use: dict[int, int] = {}
        for i in active:
            for v in factors[i][0]:
                use[v] = use.get(v, 0) + 1
        keep = []
        for i in active:
            child = factors[i][0][0]
            if child != cls and child in missing and use[child] == 1:
                changed = True
                continue
            keep.append(i)
        active = keep
    return active


def cpt_log_joint(factors: Sequence[tuple[Sequence[int], np.ndarray]], codes: np.ndarray,
                  arities: Sequence[int], n_classes: int) -> np.ndarray:
    """``log P(x_observed, c)`` of a Bayesian network given by its CPT factors.

    Parameters
    ----------
    factors : list of (variables, log_table)
        One CPT per node: ``variables[0]`` is the child, the others its parents;
        ``log_table`` has one axis per variable, in that order, and sums (in
        probability) to one over the child's axis.  It may also be a lazy table: an
        object with ``gather(variables, codes, keep)`` returning the log values at the
        rows' codes with the axes of ``keep`` (a list of its variables) left free,
        shape (n, arities of keep).  The class is variable
        ``codes.shape[1]``.
    codes : int array (n, n_features)
        ``-1`` marks a missing value.
    arities : sequence of int
        Number of states of every variable, the class last.
    n_classes : int

    Returns
    -------
    ndarray (n, n_classes)

    Examples
    --------
    >>> import numpy as np
    >>> lp = np.log(np.array([0.5, 0.5]))                         # P(c)
    >>> lf = np.log(np.array([[0.9, 0.2], [0.1, 0.8]]))           # P(f | c), axes (f, c)
    >>> out = cpt_log_joint([((1,), lp), ((0, 1), lf)], np.array([[0], [-1]]), [2, 2], 2)
    >>> np.exp(out).round(3).tolist()
    [[0.45, 0.1], [0.5, 0.5]]
    """
    codes = np.asarray(codes)
    n, p = codes.shape
    cls = p
    out = np.zeros((n, n_classes))
    miss = codes < 0
    rows_missing = miss.any(axis=1)
    done = ~rows_missing
    if done.any():
        sub = codes[done]
        acc = np.zeros((sub.shape[0], n_classes))
        with np.errstate(divide="ignore"):
            for vars_, table in factors:
                acc = acc + _eval_factor(vars_, table, sub, cls)
        out[done] = acc
    if not rows_missing.any():
        return out
    idx = np.flatnonzero(rows_missing)
    patterns, inverse = np.unique(miss[idx], axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    for g, pat in enumerate(patterns):
        rows = idx[inverse == g]
        out[rows] = _eliminate(factors, codes[rows], set(np.flatnonzero(pat).tolist()), cls,
                               arities, n_classes)
    return out


def _eliminate(factors, codes: np.ndarray, missing: set, cls: int, arities, n_classes: int
               ) -> np.ndarray:
    m = codes.shape[0]
    active = _barren_pruned(factors, missing, cls)
    safe = np.where(codes < 0, 0, codes)
    logacc = np.zeros((m, n_classes))
    operands, subs = [], []
    letters = {}
    for i in active:
        vars_, table = factors[i]
        hid = [v for v in vars_ if v in missing]
        if not hid:
            with np.errstate(divide="ignore"):
                logacc = logacc + _eval_factor(vars_, table, safe, cls)
            continue
        keep = [v for v in vars_ if v in missing or v == cls]
        # index the observed axes with the rows' codes; keep missing (and class) axes
        if isinstance(table, np.ndarray):
            perm = [list(vars_).index(v) for v in vars_ if v not in keep] + \
                   [list(vars_).index(v) for v in keep]
            t = np.transpose(table, perm)
            obs = [v for v in vars_ if v not in keep]
            t = t[tuple(safe[:, v] for v in obs)] if obs else np.broadcast_to(t, (m,) + t.shape)
        else:  # a lazy table (``gather(vars, codes, keep)``): the rows' values, keep axes free
            t = table.gather(vars_, safe, keep)
        flat = t.reshape(m, -1)
        mx = flat.max(axis=1)
        mx = np.where(np.isfinite(mx), mx, 0.0)
        with np.errstate(divide="ignore"):
            logacc = logacc + mx[:, None]
        operands.append(np.exp(t - mx.reshape((m,) + (1,) * (t.ndim - 1))))
        for v in keep:
            letters.setdefault(v, None)
        subs.append(keep)
    if not operands:
        return logacc
    names = {}
    pool = iter(string.ascii_letters[2:])
    for v in letters:
        names[v] = "b" if v == cls else next(pool, None)
        if names[v] is None:
            raise ValueError(f"{len(letters)} missing features interact in one row: summing them "
                             f"out exactly is limited to 49; impute some of them")
    terms = ["a" + "".join(names[v] for v in s) for s in subs]
    expr = ",".join(terms) + "->ab"
    if cls not in letters:   # the class enters no factor with a missing feature
        expr = ",".join(terms) + "->a"
    path, info = np.einsum_path(expr, *operands, optimize="greedy")
    try:
        largest = float(info.split("Largest intermediate:")[1].split("elements")[0])
    except (IndexError, ValueError):  # pragma: no cover - numpy reports it; else be safe
        largest = float(m) * float(np.prod([arities[v] for v in letters], dtype=float))
    if largest > MAX_CELLS:
        raise MemoryError(f"summing out {len(letters)} missing features needs an intermediate "
                          f"table of {largest:,.0f} cells (limit {MAX_CELLS:,}): impute some of "
                          f"the missing values of these rows")
    val = np.einsum(expr, *operands, optimize=path)
    with np.errstate(divide="ignore"):
        lv = np.log(val)
    if lv.ndim == 1:
        lv = lv[:, None]
    return logacc + lv


def relevant_missing(missing: Sequence[int], candidates: Sequence[Sequence[int]], cls: int,
                     observed: Sequence[int]) -> list[int]:
    """Missing variables that are not barren: some observed variable or the class may
    descend from them.  ``candidates[v]`` lists every possible parent of ``v``."""
    missing = set(missing)
    live = set(observed) | {cls}
    relevant: set[int] = set()
    frontier = list(live)
    while frontier:
        v = frontier.pop()
        for u in candidates[v]:
            if u in missing and u not in relevant:
                relevant.add(u)
                frontier.append(u)
    return sorted(relevant)


def enumerate_log_joint(log_joint: Callable[[np.ndarray], np.ndarray], codes: np.ndarray,
                        arities: Sequence[int], n_classes: int, relevant=None,
                        who: str = "this classifier") -> np.ndarray:
    """``log P(x_observed, c)`` by summing ``log_joint`` over every completion.

    Parameters
    ----------
    log_joint : callable
        ``log_joint(codes, drop)``: complete feature codes (m, n_features) -> log joint
        (m, n_classes), leaving out the factors of the features in ``drop`` (barren
        missing features, see ``relevant``).
    codes : int array (n, n_features), ``-1`` for missing
    arities : sequence of int (features, then the class)
    n_classes : int
    relevant : callable, optional
        ``relevant(row_missing_indices, row_observed_indices)`` -> the missing features
        to sum over (the others are barren and drop out; they are set to 0 and
        ``log_joint`` must not depend on them).  Default: all missing features.
    who : str
        Named in the error when a row has too many completions.
    """
    codes = np.asarray(codes)
    n, p = codes.shape
    miss = codes < 0
    if not miss.any():
        return log_joint(codes, [])
    out = np.empty((n, n_classes))
    full = ~miss.any(axis=1)
    if full.any():
        out[full] = log_joint(codes[full], [])
    idx = np.flatnonzero(~full)
    patterns, inverse = np.unique(miss[idx], axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    for g, pat in enumerate(patterns):       # rows with the same missing features together
        rows = idx[inverse == g]
        m_idx = np.flatnonzero(pat).tolist()
        obs = np.flatnonzero(~pat).tolist()
        rel = m_idx if relevant is None else relevant(m_idx, obs)
        total = 1
        for v in rel:
            total *= int(arities[v])
        if total > MAX_COMPLETIONS:
            raise ValueError(f"{who}: row {int(rows[0])} has {len(rel)} missing features with "
                             f"{total:,} joint states to sum over (limit {MAX_COMPLETIONS:,}); "
                             f"impute some of them or use a classifier with a single structure")
        base = np.where(codes[rows] < 0, 0, codes[rows])               # (m, p)
        comp = np.repeat(base, total, axis=0)                          # row-major: row, completion
        if rel:
            grid = np.array(list(itertools.product(*[range(int(arities[v])) for v in rel])))
            comp[:, rel] = np.tile(grid, (len(rows), 1))
        drop = [v for v in m_idx if v not in set(rel)]
        with np.errstate(divide="ignore"):
            lj = log_joint(comp, drop).reshape(len(rows), total, n_classes)
            out[rows] = logsumexp(lj, axis=1)
    return out
