"""Exact summation of missing features at predict time (shared by the classifiers).

Codes are integer arrays ``(n, n_features)`` in the training coding with ``-1`` for a
missing value; the class is variable number ``n_features``.

* :func:`cpt_log_joint` - a model given as CPT factors (a Bayesian network): barren
  missing nodes (no observed descendant, not the class) are dropped, since their CPTs
  sum to one, and the remaining missing variables are eliminated with ``numpy.einsum``
  (optimised contraction order) per pattern of missing values, in scaled probability
  space.  The cells a row needs (its operands and the largest intermediate) are
  computed from the shapes before anything is read; rows are summed in chunks within
  :data:`MAX_CELLS` cells, and a row that alone needs more is estimated by likelihood
  weighting (:func:`likelihood_weighting`, :data:`APPROX_SAMPLES` samples per row and
  class) with an :class:`ApproximationWarning` that lists those rows: the other rows
  stay exact and the batch never fails for a few rows.
* :func:`enumerate_log_joint` - a model known only through a row-wise log joint (BMA
  over forests, exact order averaging): sums over every completion of the relevant
  missing features, refusing more than :data:`MAX_COMPLETIONS` completions per row.
"""
from __future__ import annotations

import itertools
import string
import warnings
from typing import Callable, NamedTuple, Sequence

import numpy as np
from scipy.special import logsumexp

__all__ = ["cpt_log_joint", "enumerate_log_joint", "relevant_missing", "likelihood_weighting",
           "ApproximationWarning", "MAX_CELLS", "MAX_COMPLETIONS", "APPROX_SAMPLES"]

#: largest working set (cells: operands and largest intermediate, rows included) of one
#: exact elimination; a row that alone needs more is estimated (likelihood weighting)
MAX_CELLS = 20_000_000
#: samples per row and class of the likelihood-weighting estimate of such a row
APPROX_SAMPLES = 512
#: largest number of completions of the missing features of one row (enumeration)
MAX_COMPLETIONS = 4096


class ApproximationWarning(UserWarning):
    """Some predicted probabilities are estimates, not exact (the message lists the rows)."""


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
                  arities: Sequence[int], n_classes: int, who: str = "this classifier",
                  plans: dict | None = None) -> np.ndarray:
    """``log P(x_observed, c)`` of a Bayesian network given by its CPT factors.

    Exact for every row whose missing features can be summed out within
    :data:`MAX_CELLS` cells (checked per pattern of missing values before any table is
    read); the others are likelihood-weighting estimates (:func:`likelihood_weighting`,
    seeded, so a call gives the same values every time) and an
    :class:`ApproximationWarning` names them.

    Parameters
    ----------
    factors : list of (variables, log_table)
        One CPT per node: ``variables[0]`` is the child, the others its parents;
        ``log_table`` has one axis per variable, in that order, and sums (in
        probability) to one over the child's axis.  It may also be a lazy table: an
        object with ``gather(variables, codes, keep)`` returning the log values at the
        rows' codes with the axes of ``keep`` (a list of its variables) left free,
        shape (n, arities of keep), and optionally ``child_logs(codes)``, the log
        conditional of the child at the rows' parents (n, states of the child).  The
        class is variable ``codes.shape[1]``.
    codes : int array (n, n_features)
        ``-1`` marks a missing value.
    arities : sequence of int
        Number of states of every variable, the class last.
    n_classes : int
    who : str
        Named in the warning.
    plans : dict, optional
        A memo of the elimination plans by pattern of missing values (einsum path
        search dominates small eliminations), for a caller that calls again with factors
        over the same variables and of the same kinds (other tables: EM's iterations).

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
    over: list = []                     # (rows, plan) too costly to sum out exactly
    for g, pat in enumerate(patterns):  # every cost is known before any table is read
        rows = idx[inverse == g]
        missing = set(np.flatnonzero(pat).tolist())
        plan = None if plans is None else plans.get(pat.tobytes())
        if plan is None:
            plan = _plan(factors, missing, cls, arities)
            if plans is not None:
                plans[pat.tobytes()] = plan
        if plan.cells > MAX_CELLS:
            over.append((rows, missing, plan))
            continue
        step = max(1, int(MAX_CELLS // max(plan.cells, 1.0)))
        for a in range(0, rows.size, step):
            out[rows[a:a + step]] = _eliminate(factors, plan, codes[rows[a:a + step]], cls, n_classes)
    if over:
        worst = max(plan.cells for _, _, plan in over)
        approx = np.sort(np.concatenate([rows for rows, _, _ in over]))
        warnings.warn(
            f"{who}: rows {_rows_text(approx)} (positions in X) miss features whose exact sum "
            f"needs up to {worst:,.0f} cells per row (limit {MAX_CELLS:,}, "
            f"bnexplore.classifiers._missing.MAX_CELLS): their probabilities are "
            f"likelihood-weighting estimates ({APPROX_SAMPLES} samples per row and class); "
            f"impute some of their missing values, or raise MAX_CELLS, for exact values",
            ApproximationWarning, stacklevel=3)
        rng = np.random.default_rng(0)          # the same estimate at every call
        rmax = max(int(a) for a in arities)
        for rows, missing, plan in over:
            step = max(1, int(MAX_CELLS // (n_classes * APPROX_SAMPLES * max(rmax, p + 1))))
            for a in range(0, rows.size, step):
                out[rows[a:a + step]] = likelihood_weighting(
                    factors, plan.active, codes[rows[a:a + step]], missing, cls, n_classes,
                    APPROX_SAMPLES, rng)
    return out


class _Plan(NamedTuple):
    """How one pattern of missing values is summed out: the factors left after barren
    pruning, those without a missing variable (``plain``), those with one and the
    variables each keeps free (``summed``), the einsum expression and path, and the cells
    one row needs (its operands plus the largest intermediate; ``inf`` if too many)."""
    active: list
    plain: list
    summed: list
    names: dict
    expr: str | None
    path: list | None
    cells: float


def _plan(factors, missing: set, cls: int, arities) -> _Plan:
    """The elimination of ``missing`` and its cost per row, computed from shapes only
    (nothing is read or allocated but zero-stride placeholders)."""
    active = _barren_pruned(factors, missing, cls)
    plain, summed, letters = [], [], {}
    cells = 0.0
    for i in active:
        vars_, table = factors[i]
        if not any(v in missing for v in vars_):
            plain.append(i)
            continue
        keep = [v for v in vars_ if v in missing or v == cls]
        summed.append((i, keep))
        for v in keep:
            letters.setdefault(v, None)
        size = float(np.prod([float(arities[v]) for v in keep]))
        # a lazy table reads (and holds) a whole row of the child's states per value
        cells += size * (1.0 if isinstance(table, np.ndarray) else float(arities[vars_[0]]))
    if not summed:
        return _Plan(active, plain, summed, {}, None, None, cells)
    pool = iter(string.ascii_letters[2:])
    names = {v: ("b" if v == cls else next(pool, None)) for v in letters}
    if None in names.values():                     # more than 50 interacting variables
        return _Plan(active, plain, summed, names, None, None, float("inf"))
    terms = ["a" + "".join(names[v] for v in keep) for _, keep in summed]
    expr = ",".join(terms) + ("->ab" if cls in letters else "->a")
    shapes = [(1,) + tuple(int(arities[v]) for v in keep) for _, keep in summed]
    path, info = np.einsum_path(expr, *[np.broadcast_to(np.zeros(()), sh) for sh in shapes],
                                optimize="greedy")
    try:
        largest = float(info.split("Largest intermediate:")[1].split("elements")[0])
    except (IndexError, ValueError):  # pragma: no cover - numpy reports it; else be safe
        largest = float(np.prod([float(arities[v]) for v in letters]))
    return _Plan(active, plain, summed, names, expr, path, cells + largest)


def _eliminate(factors, plan: _Plan, codes: np.ndarray, cls: int, n_classes: int) -> np.ndarray:
    """Exact ``log P(x_observed, c)`` of rows sharing one pattern of missing values."""
    m = codes.shape[0]
    safe = np.where(codes < 0, 0, codes)
    logacc = np.zeros((m, n_classes))
    with np.errstate(divide="ignore"):
        for i in plan.plain:
            logacc = logacc + _eval_factor(*factors[i], safe, cls)
    if not plan.summed:
        return logacc
    operands = []
    for i, keep in plan.summed:
        vars_, table = factors[i]
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
    val = np.einsum(plan.expr, *operands, optimize=plan.path)
    with np.errstate(divide="ignore"):
        lv = np.log(val)
    if lv.ndim == 1:
        lv = lv[:, None]
    return logacc + lv


def _child_logs(vars_, table, codes: np.ndarray) -> np.ndarray:
    """``log P(child | parents)`` at the rows' parent codes: (m, states of the child)."""
    if isinstance(table, np.ndarray):
        t = np.moveaxis(table, 0, -1)
        idx = tuple(codes[:, v] for v in vars_[1:])
        return t[idx] if idx else np.broadcast_to(t, (codes.shape[0], t.shape[-1]))
    if hasattr(table, "child_logs"):
        return table.child_logs(codes)
    return table.gather(vars_, codes, [vars_[0]])


def _topological(factors, active: list) -> list:
    """The active factors' indices, every parent's factor before its children's."""
    child_of = {factors[i][0][0]: i for i in active}
    done: set = set()
    order: list = []

    def visit(i: int) -> None:          # depth is at most the number of variables
        if i in done:
            return
        done.add(i)
        for u in factors[i][0][1:]:
            if u in child_of:
                visit(child_of[u])
        order.append(i)

    for i in active:
        visit(i)
    return order


def likelihood_weighting(factors, active: list, codes: np.ndarray, missing: set, cls: int,
                         n_classes: int, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """Estimate of ``log P(x_observed, c)`` by likelihood weighting (Fung & Chang 1990;
    Shachter & Peot 1990).

    For each row and class ``c``, ``n_samples`` completions of the missing variables
    are drawn forward (in topological order, each from its CPT given its parents'
    observed or drawn values, the class fixed at ``c``); a completion weighs the product
    of the CPTs of the observed variables and of the class.  The mean weight is an
    unbiased estimate of ``P(x_observed, c)``; its relative error shrinks as
    ``1 / sqrt(n_samples)``.  Returns (m, n_classes).
    """
    m, p = codes.shape
    S = int(n_samples)
    cfg = np.empty((m, n_classes, S, p + 1), dtype=np.int64)
    cfg[..., :p] = np.where(codes < 0, 0, codes)[:, None, None, :]
    cfg[..., p] = np.arange(n_classes)[None, :, None]
    flat = cfg.reshape(-1, p + 1)
    logw = np.zeros(flat.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in _topological(factors, active):
            vars_, table = factors[i]
            child = vars_[0]
            logs = _child_logs(vars_, table, flat)                   # (m K S, r)
            if child in missing:                                     # draw it
                prob = np.exp(logs - logs.max(axis=1, keepdims=True))
                cum = np.cumsum(prob, axis=1)
                u = rng.random(flat.shape[0]) * cum[:, -1]
                flat[:, child] = np.minimum((cum < u[:, None]).sum(axis=1), cum.shape[1] - 1)
            else:                                                    # evidence (or the class)
                logw += logs[np.arange(flat.shape[0]), flat[:, child]]
    return logsumexp(logw.reshape(m, n_classes, S), axis=2) - np.log(S)


def _rows_text(rows) -> str:
    rows = [int(r) for r in rows]
    return str(rows) if len(rows) <= 20 else f"{rows[:20]} and {len(rows) - 20} more"


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
    idx = np.flatnonzero(~full)
    patterns, inverse = np.unique(miss[idx], axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    plans = []
    for g, pat in enumerate(patterns):       # rows with the same missing features together
        rows = idx[inverse == g]
        m_idx = np.flatnonzero(pat).tolist()
        obs = np.flatnonzero(~pat).tolist()
        rel = m_idx if relevant is None else relevant(m_idx, obs)
        total = 1
        for v in rel:
            total *= int(arities[v])
        plans.append((rows, m_idx, rel, total))
    over = [(rows, rel, total) for rows, _, rel, total in plans if total > MAX_COMPLETIONS]
    if over:                                 # every row named, before any is computed
        rows_over = np.sort(np.concatenate([r for r, _, _ in over]))
        _, rel, total = max(over, key=lambda t: t[2])
        raise ValueError(f"{who}: rows {_rows_text(rows_over)} (positions in X) have up to "
                         f"{len(rel)} missing features with {total:,} joint states to sum over "
                         f"(limit {MAX_COMPLETIONS:,}, bnexplore.classifiers._missing."
                         f"MAX_COMPLETIONS); impute some of them, or use a classifier with a "
                         f"single structure")
    if full.any():
        out[full] = log_joint(codes[full], [])
    for rows, m_idx, rel, total in plans:
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
