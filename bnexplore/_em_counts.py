"""Expected counts of incomplete data under a Bayesian network, and family scores of
fractional counts: the E-step and the scores of structural EM (Friedman 1997, 1998).

Let ``G`` be a DAG with CPTs ``theta`` and row ``r`` observe the cells ``O_r`` and miss
``M_r``.  The missing cells' posterior factorises over the connected components ``C`` of
``M_r`` in the graph that links two missing variables when they share a family of ``G``
(a factor ``theta_f`` of ``f`` and its parents):

    P(x_C | x_O) = prod_{f touching C} theta_f(x) / Z_C,
    Z_C = sum_{x_C} prod_{f touching C} theta_f(x)                                  (1)

and the observed-data log-likelihood of the row is

    log P(x_O) = sum_{f with no missing member} log theta_f(x) + sum_C log Z_C.     (2)

Each component is enumerated (its states in mixed radix, last variable fastest), which
is exact and cheap when components are small (ALARM with 10% of its cells missing: a few
states each).  The **expected counts** of a family ``f`` of ``G`` are

    E[N_f(j, x)] = sum_r P(pa_f = j, x_f = x | x_{O_r})                              (3)

(its missing members all lie in one component, so (1) gives them exactly).  Parameter
EM (Dempster, Laird & Rubin 1977) alternates (3) with the posterior mean CPTs of the
expected counts ``(E[N_jx] + a) / (E[N_j] + r a)`` (``a`` = 1 for K2, ``ess / (q r)``
for BDeu), the mode of the posterior under Dirichlet(``a + 1``), so the objective

    L(theta) = sum_r log P(x_{O_r} | theta) + sum_{f, j, x} a log theta_f(j, x)      (4)

never decreases.  For a family *not* in ``G`` (any other parent set), the expected
counts are estimated from ``S`` independent draws ``x^(1..S)`` of every row's missing
cells from (1) (exact sampling of each component, no Markov chain): a row whose family
members are all observed counts 1 at its cell, any other row ``1 / S`` at the cell of
each draw,

    N~_v,A(j, x) = sum_{r: v, A observed} [cell_r = (j, x)]
                   + (1 / S) sum_{r otherwise} sum_s [cell_r^(s) = (j, x)],          (5)

an unbiased estimate of (3) under ``(G, theta)``.  A family's score of real counts is

    K2:    sum_j [ lgamma(r) - lgamma(r + N_j) + sum_x lgamma(1 + N_jx) ]
    BDeu:  sum_j [ lgamma(a_j) - lgamma(a_j + N_j) + sum_x lgamma(a_jx + N_jx) - lgamma(a_jx) ]  (6)

(``a_j = ess / q``, ``a_jx = ess / (q r)``), the K2/BDeu score of :mod:`bnexplore.scores`
with ``lgamma`` of real counts: on integer counts the same numbers.  Friedman's
structural EM scores candidate structures by (6) of their expected counts (the
"expected score" approximated at the expected statistics, Friedman 1997 Sec. 3).

Glossary
--------
code
    The codes, rows x columns, with -1 in the missing cells.
pa_flat, pa_off
    The parents of every node of ``G`` (sorted), node ``f``'s at ``pa_flat[pa_off[f]:pa_off[f + 1]]``.
logt, t_off
    The log CPTs, node ``f``'s (q_f x r_f, parents in mixed radix, last fastest) flattened at
    ``t_off[f]``; a cell is ``j * r_f + x_f``.
counts
    The expected counts (3), laid out as ``logt``.
draws
    (S, rows, columns): the observed cells and ``S`` draws of the missing ones.
comp, fcomp
    Per row: each missing variable's union-find parent; each factor's component root (-1:
    no missing member).
entries
    Walk of the expected-count family weights: per level, (row, draws, configuration, child
    state), the draws a bit mask (all ``S`` while every member so far is observed); the
    weight is the number of draws over ``S``.

References
----------
N. Friedman. Learning belief networks in the presence of missing values and hidden
variables. ICML 1997.  N. Friedman. The Bayesian structural EM algorithm. UAI 1998.
A. P. Dempster, N. M. Laird, D. B. Rubin. Maximum likelihood from incomplete data via the
EM algorithm. JRSS B 39, 1977.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from ._order_available import next_set, set_place
from ._order_scores import _pascal
from ._parallel import PARALLEL_LOCK

__all__ = ["estep", "fit_parameters", "expected_family_score", "expected_weights", "MAX_COMPONENT_STATES"]

#: largest number of joint states of one component of a row's missing cells that the exact
#: E-step enumerates (Eq. 1); a larger one is Gibbs-sampled (ALARM, 30% of cells missing:
#: about 2% of the rows)
MAX_COMPONENT_STATES = 1 << 16
#: Gibbs sweeps of such a component dropped (burn-in), then kept
GIBBS_BURN = 64
GIBBS_KEEP = 256

#: most draws the order walk takes (its entries keep their draws as the bits of an int64)
MAX_DRAWS = 62

#: families with at most this many cells are counted in a dense table, others by sorting
DENSE_CELLS = 1 << 16


@numba.njit(cache=True, nogil=True)
def _find(comp, a):
    while comp[a] != a:
        comp[a] = comp[comp[a]]
        a = comp[a]
    return a


@numba.njit(cache=True, nogil=True)
def _cell(x, f, pa_flat, pa_off, arities):
    """The CPT cell ``j * r_f + x_f`` of factor ``f`` at the assignment ``x``."""
    j = 0
    for t in range(pa_off[f], pa_off[f + 1]):
        u = pa_flat[t]
        j = j * arities[u] + x[u]
    return j * arities[f] + x[f]


@numba.njit(cache=True, nogil=True)
def _decode(s, cvars, nc, arities, x):
    """State ``s`` of a component (mixed radix, last variable fastest) into ``x``."""
    for t in range(nc - 1, -1, -1):
        v = cvars[t]
        x[v] = s % arities[v]
        s //= arities[v]


@numba.njit(cache=True, nogil=True)
def _components(code_i, p, pa_flat, pa_off, comp, fcomp):
    """Union-find of the row's missing variables over the factors (Eq. 1); ``fcomp[f]``
    the root of factor ``f``'s component, -1 if it has no missing member."""
    for v in range(p):
        comp[v] = v
    for f in range(p):
        first = f if code_i[f] < 0 else -1
        for t in range(pa_off[f], pa_off[f + 1]):
            u = pa_flat[t]
            if code_i[u] < 0:
                if first < 0:
                    first = u
                else:
                    a, b = _find(comp, first), _find(comp, u)
                    if a != b:
                        comp[b] = a
        fcomp[f] = first
    for f in range(p):
        if fcomp[f] >= 0:
            fcomp[f] = _find(comp, fcomp[f])


@numba.njit(cache=True, nogil=True)
def _touches(f, v, pa_flat, pa_off):
    """Whether factor ``f`` has ``v`` among its variables."""
    if f == v:
        return True
    for t in range(pa_off[f], pa_off[f + 1]):
        if pa_flat[t] == v:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def _gibbs_component(i, x, cvars, nc, facs, nf, arities, pa_flat, pa_off, logt, t_off, n_draws, counts,
                     draws, lp):
    """A component too large to enumerate: Gibbs sampling of its variables given the
    row's observed cells (Geman & Geman 1984), :data:`GIBBS_BURN` sweeps dropped, then
    :data:`GIBBS_KEEP` kept: the counts of its factors are their mean, the draws spread
    over them."""
    for t in range(nc):
        x[cvars[t]] = np.random.randint(0, arities[cvars[t]])
    keep = max(GIBBS_KEEP, n_draws)
    stride = keep // n_draws if n_draws > 0 else keep + 1
    for sweep in range(GIBBS_BURN + keep):
        for t in range(nc):
            v = cvars[t]
            top = -np.inf
            for k in range(arities[v]):
                x[v] = k
                acc = 0.0
                for tf in range(nf):
                    f = facs[tf]
                    if _touches(f, v, pa_flat, pa_off):
                        acc += logt[t_off[f] + _cell(x, f, pa_flat, pa_off, arities)]
                lp[k] = acc
                if acc > top:
                    top = acc
            z = 0.0
            for k in range(arities[v]):
                lp[k] = math.exp(lp[k] - top)
                z += lp[k]
            u = np.random.random() * z
            k = 0
            while k < arities[v] - 1 and u >= lp[k]:
                u -= lp[k]
                k += 1
            x[v] = k
        kk = sweep - GIBBS_BURN
        if kk >= 0:
            for tf in range(nf):
                f = facs[tf]
                counts[t_off[f] + _cell(x, f, pa_flat, pa_off, arities)] += 1.0 / keep
            if kk % stride == 0 and kk // stride < n_draws:
                for t in range(nc):
                    draws[kk // stride, i, cvars[t]] = x[cvars[t]]


@numba.njit(cache=True, nogil=True)
def _advance(digit, cvars, nc, arities, touch_off, touch, stride, cell):
    """Next state of a component (odometer, last variable fastest, as :func:`_decode`):
    each factor's cell moves by its stride for every digit that changes."""
    t = nc - 1
    while t >= 0:
        a = arities[cvars[t]]
        step = 1 if digit[t] + 1 < a else 1 - a
        digit[t] += step
        for e in range(touch_off[t], touch_off[t + 1]):
            cell[touch[e]] += step * stride[e]
        if step == 1:
            return
        t -= 1


@numba.njit(cache=True, nogil=True)
def _enumerate_component(x, cvars, nc, facs, nf, arities, pa_flat, pa_off, logt, t_off, states, counts, buf,
                         ws):
    """Eq. (1) of one component over its ``states`` joint states: ``log Z_C`` returned,
    the posterior's cumulative sums in ``buf[:states]`` and Eq. (3)'s weights added to
    ``counts``.  Factor ``facs[tf]``'s cell is linear in each member's state, so it is
    kept up to date by strides as the states are walked in order (:func:`_advance`)
    rather than computed from every member at every state.  ``ws``: int64 scratch of
    at least ``2 nc + 2 nf + 1 + 2 nf nc`` cells."""
    digit = ws[:nc]
    cell0 = ws[nc:nc + nf]
    cell = ws[nc + nf:nc + 2 * nf]
    touch_off = ws[nc + 2 * nf:2 * nc + 2 * nf + 1]
    touch = ws[2 * nc + 2 * nf + 1:2 * nc + 2 * nf + 1 + nf * nc]
    stride = ws[2 * nc + 2 * nf + 1 + nf * nc:2 * nc + 2 * nf + 1 + 2 * nf * nc]
    for t in range(nc):
        x[cvars[t]] = 0
    for tf in range(nf):
        cell0[tf] = t_off[facs[tf]] + _cell(x, facs[tf], pa_flat, pa_off, arities)
    m = 0
    for t in range(nc):                             # the stride of every (member, factor)
        touch_off[t] = m
        x[cvars[t]] = 1
        for tf in range(nf):
            d = t_off[facs[tf]] + _cell(x, facs[tf], pa_flat, pa_off, arities) - cell0[tf]
            if d != 0:
                touch[m] = tf
                stride[m] = d
                m += 1
        x[cvars[t]] = 0
    touch_off[nc] = m
    top = -np.inf
    digit[:] = 0
    cell[:] = cell0
    for s in range(states):                         # Eq. (1), unnormalised, in log space
        acc = 0.0
        for tf in range(nf):
            acc += logt[cell[tf]]
        buf[s] = acc
        if acc > top:
            top = acc
        _advance(digit, cvars, nc, arities, touch_off, touch, stride, cell)
    z = 0.0
    for s in range(states):
        buf[s] = math.exp(buf[s] - top)
        z += buf[s]
    digit[:] = 0
    cell[:] = cell0
    for s in range(states):                         # Eq. (3) and the posterior's cumulative sums
        w = buf[s] / z
        if w > 0.0:
            for tf in range(nf):
                counts[cell[tf]] += w
        buf[s] = w if s == 0 else buf[s - 1] + w
        _advance(digit, cvars, nc, arities, touch_off, touch, stride, cell)
    return top + math.log(z)


@numba.njit(cache=True, nogil=True)
def _estep(code, arities, pa_flat, pa_off, logt, t_off, cap, n_draws, seed, counts, row_ll, draws, sampled):
    """Eq. (1)-(3) over every row: ``counts`` (added to), ``row_ll`` (Eq. 2) and, for
    ``n_draws > 0``, the draws of the missing cells into ``draws``.  A component of more
    than ``cap`` states is sampled (:func:`_gibbs_component`): its row is marked in
    ``sampled`` and its ``row_ll`` left to the caller."""
    np.random.seed(seed)
    n, p = code.shape
    x = np.empty(p, dtype=np.int64)
    comp = np.empty(p, dtype=np.int64)
    fcomp = np.empty(p, dtype=np.int64)
    cvars = np.empty(p, dtype=np.int64)
    facs = np.empty(p, dtype=np.int64)
    buf = np.empty(cap, dtype=np.float64)
    ws = np.empty(2 * p + 2 + 3 * p + 2 * p * p, dtype=np.int64)
    lp = np.empty(arities.max(), dtype=np.float64)
    for i in range(n):
        for v in range(p):
            x[v] = code[i, v]
        _components(code[i], p, pa_flat, pa_off, comp, fcomp)
        ll = 0.0
        for f in range(p):                          # factors with every member observed
            if fcomp[f] < 0:
                c = t_off[f] + _cell(x, f, pa_flat, pa_off, arities)
                ll += logt[c]
                counts[c] += 1.0
        for root in range(p):
            if code[i, root] >= 0 or _find(comp, root) != root:
                continue
            nc = 0
            states = 1.0
            for v in range(p):
                if code[i, v] < 0 and _find(comp, v) == root:
                    cvars[nc] = v
                    nc += 1
                    states *= arities[v]
            nf = 0
            for f in range(p):
                if fcomp[f] == root:
                    facs[nf] = f
                    nf += 1
            if states > cap:
                sampled[i] = True
                _gibbs_component(i, x, cvars, nc, facs, nf, arities, pa_flat, pa_off, logt, t_off, n_draws,
                                 counts, draws, lp)
                for t in range(nc):
                    x[cvars[t]] = -1
                continue
            states = int(states)
            ll += _enumerate_component(x, cvars, nc, facs, nf, arities, pa_flat, pa_off, logt, t_off, states,
                                       counts, buf, ws)
            for d in range(n_draws):
                u = np.random.random() * buf[states - 1]
                s = np.searchsorted(buf[:states], u, side="right")
                _decode(min(s, states - 1), cvars, nc, arities, x)
                for t in range(nc):
                    draws[d, i, cvars[t]] = x[cvars[t]]
            for t in range(nc):
                x[cvars[t]] = -1
        row_ll[i] = ll
    return int(sampled.sum())


def _layout(parents, arities):
    """``(pa_flat, pa_off, t_off)`` of a structure given as sorted parent tuples."""
    p = len(parents)
    pa_off = np.zeros(p + 1, dtype=np.int64)
    np.cumsum([len(pa) for pa in parents], out=pa_off[1:])
    pa_flat = np.array([u for pa in parents for u in pa], dtype=np.int64)
    sizes = [int(np.prod([arities[u] for u in pa], dtype=np.int64)) * int(arities[v]) for v, pa in enumerate(parents)]
    t_off = np.zeros(p + 1, dtype=np.int64)
    np.cumsum(sizes, out=t_off[1:])
    return pa_flat, pa_off, t_off


def _row_ll_eliminated(code: np.ndarray, arities: np.ndarray, parents, cpts, plans: dict | None = None
                       ) -> np.ndarray:
    """Eq. (2) of some rows by variable elimination (:func:`bnexplore.classifiers._missing.cpt_log_joint`,
    barren nodes pruned): the rows whose components are sampled.  ``plans``: the
    eliminations' memo of a caller that keeps ``parents`` (EM's iterations)."""
    from .classifiers._missing import cpt_log_joint
    factors = []
    for v, pa in enumerate(parents):
        shape = [int(arities[u]) for u in pa] + [int(arities[v])]
        with np.errstate(divide="ignore"):
            factors.append(((v, *pa), np.moveaxis(np.log(np.asarray(cpts[v])).reshape(shape), -1, 0)))
    return cpt_log_joint(factors, code, [int(a) for a in arities] + [1], 1, who="structural EM", plans=plans)[:, 0]


def estep(code: np.ndarray, arities: np.ndarray, parents, cpts, n_draws: int = 0, seed: int = 0,
          cap: int = MAX_COMPONENT_STATES, plans: dict | None = None):
    """Eq. (1)-(3): ``(counts, row_ll, draws, n_sampled)`` of the network ``(parents, cpts)``.

    ``code`` (rows x columns) has -1 in the missing cells; ``counts`` is one (q, r) table per
    node (the expected counts of its family), ``row_ll`` each row's ``log P(x_observed)``,
    ``draws`` (n_draws, rows, columns) the observed cells and ``n_draws`` exact draws of
    the missing ones (None without draws).  A component of more than ``cap`` states is
    Gibbs-sampled instead (its counts are then estimates, its row's log-likelihood is
    computed by variable elimination, whose plans a caller that keeps ``parents`` may
    memoise in ``plans``); ``n_sampled`` counts those rows (0: all exact).

    Examples
    --------
    >>> import numpy as np
    >>> cpts = [np.array([[0.5, 0.5]]), np.array([[0.9, 0.1], [0.2, 0.8]])]   # a -> b
    >>> counts, ll, _, _ = estep(np.array([[0, 0], [-1, 1]]), np.array([2, 2]), [(), (0,)], cpts)
    >>> counts[0].round(3).tolist()           # row 2: P(a | b = 1) = (1/9, 8/9)
    [[1.111, 0.889]]
    >>> bool(np.isclose(ll[1], np.log(0.5 * 0.1 + 0.5 * 0.8)))
    True
    """
    code = np.ascontiguousarray(code, dtype=np.int64)
    arities = np.asarray(arities, dtype=np.int64)
    pa_flat, pa_off, t_off = _layout(parents, arities)
    with np.errstate(divide="ignore"):
        logt = np.concatenate([np.log(np.asarray(c, dtype=float)).ravel() for c in cpts]) if len(cpts) else np.empty(0)
    counts = np.zeros(int(t_off[-1]))
    row_ll = np.zeros(code.shape[0])
    sampled = np.zeros(code.shape[0], dtype=np.bool_)
    draws = np.broadcast_to(code, (n_draws,) + code.shape).copy() if n_draws else np.empty((0, 0, 0), np.int64)
    n_sampled = _estep(code, arities, pa_flat, pa_off, logt, t_off, int(cap), int(n_draws), int(seed), counts,
                       row_ll, draws, sampled)
    if n_sampled:
        row_ll[sampled] = _row_ll_eliminated(code[sampled], arities, parents, cpts, plans)
    tables = [counts[t_off[v]:t_off[v + 1]].reshape(-1, int(arities[v])) for v in range(len(parents))]
    return tables, row_ll, (draws if n_draws else None), n_sampled


def _dirichlet_a(q: int, r: int, prior: str, ess: float) -> float:
    return 1.0 if prior == "K2" else float(ess) / (q * r)


def objective(row_ll: np.ndarray, cpts, prior: str, ess: float) -> float:
    """Eq. (4): the observed-data log-likelihood plus the Dirichlet(``a + 1``) log prior."""
    pen = 0.0
    for c in cpts:
        q, r = c.shape
        with np.errstate(divide="ignore"):
            pen += _dirichlet_a(q, r, prior, ess) * float(np.log(c).sum())
    return float(row_ll.sum()) + pen


def fit_parameters(code: np.ndarray, arities: np.ndarray, parents, prior: str = "K2", ess: float = 1.0,
                   cpts=None, max_iter: int = 100, tol: float = 1e-6, plans: dict | None = None):
    """Parameter EM of a fixed structure (Eq. 1-4), exact E-step.

    Starts from ``cpts`` (a table per node; a node given None or all of them by default:
    the posterior mean CPT of the rows where its family is observed) and stops when the objective (4) rises by less than ``tol`` per row, or
    after ``max_iter`` iterations (``plans``: as :func:`estep`'s, one memo per structure).
    Returns ``(cpts, log_likelihoods, objectives)``: the
    final CPTs, and Eq. (2) summed over the rows and Eq. (4) of the CPTs each iteration
    started from, then of the final ones (so ``objectives`` never decreases).

    Examples
    --------
    >>> import numpy as np
    >>> code = np.array([[0, 0], [1, 1], [-1, 1], [0, -1], [1, 1]])
    >>> cpts, lls, objs = fit_parameters(code, np.array([2, 2]), [(), (0,)])
    >>> bool(np.all(np.diff(objs) >= -1e-9)), cpts[1].shape
    (True, (2, 2))
    """
    from .scores import standard_parameters
    arities = np.asarray(arities, dtype=np.int64)
    code = np.ascontiguousarray(code, dtype=np.int64)
    cpts = [None] * len(parents) if cpts is None else list(cpts)
    plans = {} if plans is None else plans
    for v, pa in enumerate(parents):
        if cpts[v] is None:
            rows = (code[:, [v, *pa]] >= 0).all(axis=1)
            q = int(np.prod([arities[u] for u in pa], dtype=np.int64))
            key = np.zeros(int(rows.sum()), dtype=np.int64)
            for u in pa:
                key = key * arities[u] + code[rows, u]
            n = np.bincount(key * arities[v] + code[rows, v], minlength=q * int(arities[v]))
            cpts[v] = standard_parameters(n.reshape(q, -1), prior, ess)
    lls, objs = [], []
    for _ in range(max_iter + 1):
        counts, row_ll, _, n_sampled = estep(code, arities, parents, cpts, plans=plans)
        lls.append(float(row_ll.sum()))
        objs.append(objective(row_ll, cpts, prior, ess))
        if len(objs) > 1 and objs[-1] - objs[-2] < tol * code.shape[0]:
            break
        if len(objs) == max_iter + 1:
            break
        cpts = [standard_parameters(c, prior, ess) for c in counts]
    return cpts, lls, objs


# ----------------------------------------------------------------- scores of fractional counts
@numba.njit(cache=True, nogil=True)
def _table_score(n_jx, n_j, r, q, bdeu, ess):
    """One configuration's terms of Eq. (6): ``n_j`` its total, ``n_jx`` one cell (call per
    cell with n_j = -1 for the cell terms, once with the total for the configuration terms)."""
    if bdeu:
        a_j = ess / q
        a_jx = a_j / r
    else:
        a_j = float(r)
        a_jx = 1.0
    if n_j < 0:
        return math.lgamma(a_jx + n_jx) - math.lgamma(a_jx)
    return math.lgamma(a_j) - math.lgamma(a_j + n_j)


@numba.njit(cache=True, nogil=True)
def _score_weighted(keys, wts, m, r, q, bdeu, ess, dense, cfg, touched):
    """Eq. (6) of the entries ``keys[:m]`` (cell ``j * r + x``) weighing ``wts[:m]``:
    counted in ``dense`` / ``cfg`` when ``q r`` fits (reset after), else by sorting."""
    s = 0.0
    if q * r <= dense.shape[0]:
        nt = 0
        for t in range(m):
            key = keys[t]
            if dense[key] == 0.0:
                touched[nt] = key
                nt += 1
            dense[key] += wts[t]
            cfg[key // r] += wts[t]
        for t in range(nt):
            key = touched[t]
            s += _table_score(dense[key], -1.0, r, q, bdeu, ess)
            dense[key] = 0.0
            j = key // r
            if cfg[j] > 0.0:
                s += _table_score(0.0, cfg[j], r, q, bdeu, ess)
                cfg[j] = 0.0
        return s
    order = np.argsort(keys[:m], kind="mergesort")
    t = 0
    while t < m:
        j = keys[order[t]] // r
        n_j = 0.0
        while t < m and keys[order[t]] // r == j:
            key = keys[order[t]]
            n = 0.0
            while t < m and keys[order[t]] == key:
                n += wts[order[t]]
                t += 1
            s += _table_score(n, -1.0, r, q, bdeu, ess)
            n_j += n
        s += _table_score(0.0, n_j, r, q, bdeu, ess)
    return s


@numba.njit(cache=True, nogil=True)
def _family_entries(code, draws, v, ps, arities, keys, wts):
    """Eq. (5)'s entries of the family ``v | ps``: one per row whose members are observed,
    ``S`` (weight ``1 / S``) per other row.  Returns how many and ``q``."""
    n = code.shape[0]
    n_draws = draws.shape[0]
    r = arities[v]
    q = 1
    for u in ps:
        q *= arities[u]
    m = 0
    for i in range(n):
        seen = code[i, v] >= 0
        for u in ps:
            if code[i, u] < 0:
                seen = False
        if seen:
            j = 0
            for u in ps:
                j = j * arities[u] + code[i, u]
            keys[m] = j * r + code[i, v]
            wts[m] = 1.0
            m += 1
        else:
            for d in range(n_draws):
                j = 0
                for u in ps:
                    j = j * arities[u] + draws[d, i, u]
                keys[m] = j * r + draws[d, i, v]
                wts[m] = 1.0 / n_draws
                m += 1
    return m, q


@numba.njit(cache=True, nogil=True)
def _family_score(code, draws, v, ps, arities, bdeu, ess):
    n = code.shape[0]
    cap = n * max(draws.shape[0], 1)
    keys = np.empty(cap, dtype=np.int64)
    wts = np.empty(cap, dtype=np.float64)
    m, q = _family_entries(code, draws, v, ps, arities, keys, wts)
    r = arities[v]
    size = min(q * r, DENSE_CELLS) if q * r <= DENSE_CELLS else 0
    dense = np.zeros(size)
    cfg = np.zeros(size)
    touched = np.empty(size, dtype=np.int64)
    return _score_weighted(keys, wts, m, r, q, bdeu, ess, dense, cfg, touched)


def expected_family_score(code: np.ndarray, draws: np.ndarray, v: int, parents, arities: np.ndarray,
                          prior: str = "K2", ess: float = 1.0) -> float:
    """Eq. (6) of the expected counts (5) of the family ``v | parents``.

    ``draws`` (S, rows, columns) holds the observed cells and ``S`` draws of the missing
    ones (:func:`estep`); with nothing missing the counts are the data's and the score is
    :meth:`bnexplore.scores.LocalScore.score`'s.

    Examples
    --------
    >>> import numpy as np
    >>> code = np.array([[0, 0], [1, 1], [1, 1], [0, 1]])
    >>> s = expected_family_score(code, code[None], 1, [], np.array([2, 2]))
    >>> bool(np.isclose(s, np.log(1 / 20)))       # K2, 1 zero and 3 ones
    True
    """
    ps = np.asarray(list(parents), dtype=np.int64)
    dr = draws if draws is not None and draws.shape[0] else np.ascontiguousarray(code, dtype=np.int64)[None]
    return float(_family_score(np.ascontiguousarray(code, dtype=np.int64), dr, int(v), ps,
                               np.asarray(arities, dtype=np.int64), prior == "BDeu", float(ess)))


@numba.njit(cache=True, nogil=True)
def _split(i, mask, u, draws, part):
    """Partition the draws ``mask`` (bit ``s``: draw ``s``) of row ``i`` by their value of
    ``u`` into ``part`` (one mask per value)."""
    part[:] = 0
    for s in range(draws.shape[0]):
        if (mask >> s) & 1:
            part[draws[s, i, u]] |= 1 << s


@numba.njit(cache=True, nogil=True)
def _popcount(mask):
    n = 0
    while mask:
        mask &= mask - 1
        n += 1
    return n


@numba.njit(cache=True, nogil=True)
def _node_weights_em(code, draws, arities, v, cand, k, binom, bdeu, ess, out):
    """Eq. (6) of the expected counts (5) of every parent set of ``v`` (subsets of
    ``cand``, size <= ``k``) into ``out``, in the order of
    :func:`bnexplore._order_posterior.lex_parent_sets`, walked depth first as
    :func:`bnexplore._order_available._node_weights`.  Level ``d`` keeps the entries of
    ``{v, u1 .. ud}``: (row, draws, configuration, child state), the draws a bit mask
    (``S <= 62``); a missing member splits an entry's draws by their value of it, so the
    draws that agree on the family stay one entry of weight ``|draws| / S``."""
    n = code.shape[0]
    S = draws.shape[0]
    c = cand.shape[0]
    k = min(k, c)
    r = arities[v]
    cap = n * S
    e_row = np.empty((k + 1, cap), dtype=np.int64)
    e_mask = np.empty((k + 1, cap), dtype=np.int64)
    e_cfg = np.zeros((k + 1, cap), dtype=np.int64)
    x_at = np.empty((k + 1, cap), dtype=np.int64)
    n_at = np.zeros(k + 1, dtype=np.int64)
    q_at = np.ones(k + 1, dtype=np.int64)
    keys = np.empty(cap, dtype=np.int64)
    wts = np.empty(cap, dtype=np.float64)
    part = np.zeros(arities.max(), dtype=np.int64)
    top = np.sort(arities[cand])[::-1]
    cells = r
    for t in range(k):
        cells = min(cells * top[t], DENSE_CELLS)
    dense = np.zeros(cells)
    cfg = np.zeros(cells)
    touched = np.empty(cells, dtype=np.int64)
    full = (1 << S) - 1
    inv = 1.0 / S
    m = 0
    for i in range(n):
        if code[i, v] >= 0:
            e_row[0, m], e_mask[0, m], x_at[0, m] = i, full, code[i, v]
            m += 1
        else:
            _split(i, full, v, draws, part)
            for x in range(r):
                if part[x]:
                    e_row[0, m], e_mask[0, m], x_at[0, m] = i, part[x], x
                    m += 1
    n_at[0] = m
    for t in range(m):
        keys[t] = x_at[0, t]
        wts[t] = _popcount(e_mask[0, t]) * inv
    out[0] = _score_weighted(keys, wts, m, r, 1, bdeu, ess, dense, cfg, touched)
    if k == 0:
        return
    first = np.zeros(k + 2, dtype=np.int64)
    for s in range(1, k + 2):
        first[s] = first[s - 1] + binom[c, s - 1]
    pos = np.zeros(k + 1, dtype=np.int64)
    d = 1
    pos[1] = 0
    while d >= 1:
        if pos[d] >= c:
            d -= 1
            if d >= 1:
                pos[d] += 1
            continue
        u = cand[pos[d]]
        a = arities[u]
        m = 0
        for t in range(n_at[d - 1]):                # level d: an entry splits its draws at a missing member
            i = e_row[d - 1, t]
            mask = e_mask[d - 1, t]
            j = e_cfg[d - 1, t] * a
            x = x_at[d - 1, t]
            if code[i, u] >= 0:
                e_row[d, m], e_mask[d, m], e_cfg[d, m], x_at[d, m] = i, mask, j + code[i, u], x
                m += 1
            else:
                _split(i, mask, u, draws, part)
                for b in range(a):
                    if part[b]:
                        e_row[d, m], e_mask[d, m], e_cfg[d, m], x_at[d, m] = i, part[b], j + b, x
                        m += 1
        n_at[d] = m
        q_at[d] = q_at[d - 1] * a
        for t in range(m):
            keys[t] = e_cfg[d, t] * r + x_at[d, t]
            wts[t] = _popcount(e_mask[d, t]) * inv
        out[set_place(binom, first, c, d, pos)] = _score_weighted(keys, wts, m, r, q_at[d], bdeu, ess, dense, cfg,
                                                                  touched)
        d = next_set(d, k, pos)


@numba.njit(cache=True, nogil=True)
def _all_weights_em(code, draws, arities, cand_flat, cand_off, k, binom, set_off, bdeu, ess, out):
    for v in range(cand_off.shape[0] - 1):
        _node_weights_em(code, draws, arities, v, cand_flat[cand_off[v]:cand_off[v + 1]], k, binom, bdeu, ess,
                         out[set_off[v]:set_off[v + 1]])


@numba.njit(cache=True, parallel=True)
def _all_weights_em_threads(code, draws, arities, cand_flat, cand_off, k, binom, set_off, bdeu, ess, out):
    for v in numba.prange(cand_off.shape[0] - 1):
        _node_weights_em(code, draws, arities, v, cand_flat[cand_off[v]:cand_off[v + 1]], k, binom, bdeu, ess,
                         out[set_off[v]:set_off[v + 1]])


def walk_cells(n_rows: int, n_draws: int, max_parents: int, threads: bool) -> int:
    """Cells of working memory of :func:`expected_weights` per node walked (entries of
    ``max_parents + 1`` levels, keys, weights, dense tables) times the threads."""
    per_node = (3 * (max_parents + 1) + 2) * n_rows * max(n_draws, 1) + 3 * DENSE_CELLS
    return per_node * (numba.get_num_threads() if threads else 1)


def expected_weights(code: np.ndarray, draws: np.ndarray, arities: np.ndarray, cand_flat: np.ndarray,
                     cand_off: np.ndarray, max_parents: int, set_off: np.ndarray, bdeu: bool, ess: float,
                     threads: bool = False) -> np.ndarray:
    """Eq. (6) of the expected counts (5) of every family, laid out as
    :func:`bnexplore._order_available.available_case_weights` (node ``v``'s parent sets are
    the subsets of ``cand_flat[cand_off[v]:cand_off[v + 1]]`` of size <= ``max_parents``).

    Examples
    --------
    >>> import numpy as np
    >>> code = np.array([[0, 0], [1, 1], [1, 1], [0, 1]])
    >>> w = expected_weights(code, code[None], np.array([2, 2]), np.array([0]), np.array([0, 0, 1]), 1,
    ...                      np.array([0, 1, 3]), False, 1.0)
    >>> bool(np.isclose(w[1], np.log(1 / 20)))
    True
    """
    code = np.ascontiguousarray(code, dtype=np.int64)
    draws = np.ascontiguousarray(draws, dtype=np.int64)
    if not 1 <= draws.shape[0] <= MAX_DRAWS:
        raise ValueError(f"expected_weights takes 1 to {MAX_DRAWS} draws, got {draws.shape[0]}")
    cand_off = np.asarray(cand_off, dtype=np.int64)
    m_max = int(np.diff(cand_off).max(initial=0))
    binom = _pascal(m_max, min(int(max_parents), m_max) + 1)
    out = np.empty(int(set_off[-1]))
    run = _all_weights_em_threads if threads else _all_weights_em
    with PARALLEL_LOCK:
        run(code, draws, np.asarray(arities, dtype=np.int64), np.asarray(cand_flat, dtype=np.int64), cand_off,
            int(max_parents), binom, np.asarray(set_off, dtype=np.int64), bool(bdeu), float(ess), out)
    return out
