"""The two-phase ISMB search over Markov blanket structures (section 5.6, Figure 6).

Phase 1 (instance independent) climbs from the empty structure on the log marginal
likelihood ``log sc(G) = log P(D | G)`` (Eq. 10-11).  The score is decomposable, so a
successor that changes the parents of the nodes ``v_1 (, v_2)`` scores

    log sc(G') = log sc(G) + d_1 (+ d_2),   d_k = fs(v_k, pa'(v_k)) - fs(v_k, pa(v_k)),

and every ``d`` is a *toggle* (one parent enters or leaves ``pa(v)``) or the drop of all
of a child's parents; :func:`best_successor` takes the best such sum without building
the successors, and the toggles of a node stay valid while its parents do.  Phase 2 runs for one instance
``x``: a best-first search whose queue ``Q`` (capacity ``w``) holds the successors of
the models in ``R``, ranked by how much adding a model changes the averaged prediction.
With the running sums over ``R``

    A(z) = log sum_{G in R} sc(G) P(z | x, G, D),      B = log sum_{G in R} sc(G)

the selective model average is ``P_R(z | x) = exp(A(z) - B)`` (Eq. 13), and the phase-2
score of a candidate ``G*`` is the Kullback-Leibler divergence (Eq. 14)

    KL(G*) = sum_z P_R(z) [log P_R(z) - log P_{R + G*}(z)],
    log P_{R + G*}(z) = logaddexp(A(z), log sc(G*) + log P(z | x, G*, D)) - logaddexp(B, log sc(G*)).

The best candidate moves to ``R`` at every iteration; the search stops after
``patience`` iterations in a row whose best candidate scores at most ``epsilon``, when
``time_limit`` seconds pass, or when the queue is empty.  NISMB (Table 2) replaces the
phase-2 score by the phase-1 score, so its sequence is instance independent
(:func:`nismb_sequence`, cached on the model).

Glossary
--------
model
    A :class:`bnexplore.ismb.MBModel` (structure scores, successors, prediction).
found
    The models in ``R`` and, aligned, their log scores, log predictions, phases and
    phase-2 scores (:class:`ModelsInR`).
Q_keys, Q_S, Q_L
    The queue: structures (parent masks), their log scores, their log predictions.
fs, toggle
    A family's log score ``fs(v, mask)``; ``toggle(v)[x] = fs(v, pa(v) ^ {x}) - fs(v, pa(v))``.
A, B
    The running log sums above.
"""
from __future__ import annotations

import math
import time
from collections import namedtuple

import numpy as np

from ._ismb_predict import _logsumexp_rows
from ._mb_space import _bits, _categories
from ._validation import Interval

__all__: list[str] = []

#: the models in R and what is known of each, aligned lists extended in place by phase 2
ModelsInR = namedtuple("ModelsInR", ["models", "log_scores", "log_preds", "phases", "phase2_scores"])


#: the phase-2 search parameters and their ranges, checked once at the public edge
#: (:meth:`bnexplore.ismb.MBModel.search`, the ISMB classifier's ``fit`` and predict)
SEARCH_CONSTRAINTS = {"queue_width": Interval(int, 1, None),
                      "epsilon": Interval(float, 0, None),
                      "patience": Interval(int, 1, None),
                      "time_limit": Interval(float, 0, None, closed="neither", allow_none=True,
                                             allow_inf=True)}


def best_successor(model, pa: tuple[int, ...]) -> tuple[float, tuple[int, ...]] | None:
    """The best-scored successor of ``pa`` and its log score, the first in the order of
    :func:`bnexplore._mb_space._successor_masks` among equal scores (phase 1's step).

    The same number as ``model._successors(pa)`` gives for it, ``(base + d_1) + d_2``
    with ``d_k`` the changed families' score differences, without building the
    successors: every difference comes from ``toggle(v)[x]``, the change of ``v``'s
    family when ``x`` enters or leaves its parents, ``add_child[x]`` (``x`` becomes a
    child: ``fs(x, {Z}) - fs(x, {})``) and ``drop(c)`` (``c`` stops being a child:
    ``fs(c, {}) - fs(c, pa[c])``).  ``None`` when ``pa`` has no successor.
    """
    fs = model.family_score
    t, p = model.t, model.p
    tb = 1 << t
    pm, cm, sm, om = _categories(pa, t)
    children = _bits(cm)
    outside = _bits(sm | om)
    base = model._score_masks(pa)
    full = ((1 << p) - 1) & ~tb
    toggles = model._toggles             # (v, pa[v]) -> {x: difference}, kept across steps

    def toggles_of(v, m):
        hit = toggles.get((v, m))
        if hit is None:
            hit = toggles[v, m] = _Toggle(fs, v, m)
        return hit

    def toggle(v):
        return toggles_of(v, pa[v])

    tog_t = toggle(t)
    tog = {c: toggle(c) for c in children}
    # descendants among the children (they cannot become a child's parents: a cycle);
    # only a child with a child parent has any
    kids = dict.fromkeys(children, 0)
    linked = False
    for v in children:
        for u in _bits(pa[v] & cm):
            kids[u] |= 1 << v
            linked = True
    desc = dict.fromkeys(children, 0)
    if linked:
        for c in _topological_children(children, kids)[::-1]:
            d = kids[c]
            for k in _bits(kids[c]):
                d |= desc[k]
            desc[c] = d
    best, arg = -math.inf, None
    # the operators in the order of _successor_masks; strict ">" keeps the first maximum
    for x in outside:                                # add X -> Z
        s = base + tog_t[x]
        if s > best:
            best, arg = s, ("tpar", x, 0)
    for x in outside:                                # add Z -> X (pa[x] is empty)
        s = base + toggles_of(x, 0)[t]
        if s > best:
            best, arg = s, ("child", x, 0)
    for c in children:                               # add X -> C
        tc = tog[c]
        for x in _bits(full & ~(pa[c] | (1 << c) | desc[c])):
            s = base + tc[x]
            if s > best:
                best, arg = s, ("cpar", x, c)
    for x in _bits(pm):                              # delete X -> Z
        s = base + tog_t[x]
        if s > best:
            best, arg = s, ("tpar", x, 0)
    for c in children:                               # delete Z -> C, X -> C
        s = base + tog[c].to_empty
        if s > best:
            best, arg = s, ("unchild", c, 0)
        tc = tog[c]
        for x in _bits(pa[c] & ~tb):
            s = base + tc[x]
            if s > best:
                best, arg = s, ("cpar", x, c)
    for x in _bits(pm):                              # reverse P -> Z
        s = base + tog_t[x] + toggles_of(x, 0)[t]
        if s > best:
            best, arg = s, ("flip_p", x, 0)
    for c in children:                               # reverse Z -> C, C1 -> C2
        s = base + tog_t[c] + tog[c].to_empty
        if s > best:
            best, arg = s, ("flip_c", c, 0)
        if not linked:
            continue
        for x in _bits(pa[c] & cm):
            # C -> X closes a cycle when another path X -> ... -> C remains
            if any(desc[k] >> c & 1 for k in _bits(kids[x] & ~(1 << c))):
                continue
            s = base + tog[x][c] + tog[c][x]
            if s > best:
                best, arg = s, ("flip_cc", x, c)
    if arg is None:
        return None
    kind, x, c = arg
    new = list(pa)
    if kind == "tpar":
        new[t] ^= 1 << x
    elif kind == "child":
        new[x] = tb
    elif kind == "cpar":
        new[c] ^= 1 << x
    elif kind == "unchild":
        new[x] = 0
    elif kind == "flip_p":
        new[t] &= ~(1 << x)
        new[x] = tb
    elif kind == "flip_c":
        new[x] = 0
        new[t] |= 1 << x
    else:
        new[c] &= ~(1 << x)
        new[x] |= 1 << c
    return best, tuple(new)


class _Toggle(dict):
    """``x -> fs(v, m ^ {x}) - fs(v, m)``, each difference scored when first read;
    ``to_empty = fs(v, {}) - fs(v, m)``."""

    __slots__ = ("fs", "v", "m", "now", "to_empty")

    def __init__(self, fs, v: int, m: int):
        super().__init__()
        self.fs, self.v, self.m, self.now = fs, v, m, fs(v, m)
        self.to_empty = fs(v, 0) - self.now

    def __missing__(self, x: int) -> float:
        d = self[x] = self.fs(self.v, self.m ^ (1 << x)) - self.now
        return d


def _topological_children(children: list[int], kids: dict[int, int]) -> list[int]:
    """The children in an order where every child comes before its child-children."""
    indeg = dict.fromkeys(children, 0)
    for c in children:
        for k in _bits(kids[c]):
            indeg[k] += 1
    ready = [c for c in children if not indeg[c]]
    order = []
    while ready:
        c = ready.pop()
        order.append(c)
        for k in _bits(kids[c]):
            indeg[k] -= 1
            if not indeg[k]:
                ready.append(k)
    return order


def trim_queue(queue: dict, w: int) -> None:
    """Keep the ``w`` best-scored structures of ``queue`` (in place)."""
    if len(queue) > w:
        keep = sorted(queue.items(), key=lambda kv: -kv[1])[:w]
        queue.clear()
        queue.update(keep)


def nismb_sequence(model, n: int, queue_width: int) -> list[tuple[tuple[int, ...], float]]:
    """The first ``n`` models of the NISMB phase 2: best-first search on the phase-1
    score from the phase-1 models, the state kept on ``model._nismb`` and extended on
    demand (the caller holds the model's lock)."""
    st = model._nismb
    if st is None or st["w"] != queue_width:
        models, _ = model.phase1()
        in_r = set(models)
        queue: dict[tuple[int, ...], float] = {}
        for m in models:
            keys, s = model._successors(m)
            for k, v in zip(keys, s):
                if k not in in_r:
                    queue[k] = float(v)
        trim_queue(queue, queue_width)
        st = model._nismb = {"w": queue_width, "seq": [], "queue": queue, "in_r": in_r}
    seq, queue, in_r = st["seq"], st["queue"], st["in_r"]
    while len(seq) < n and queue:
        best = max(queue, key=queue.__getitem__)
        s = queue.pop(best)
        seq.append((best, s))
        in_r.add(best)
        keys, sc = model._successors(best)
        for k, v in zip(keys, sc):
            if k not in in_r and k not in queue:
                queue[k] = float(v)
        trim_queue(queue, queue_width)
    return seq[:n]


def _best_w(kl: np.ndarray, w: int) -> np.ndarray:
    """Indices (ascending) of the ``w`` largest entries of ``kl``, ties to the earlier:
    ``np.sort(np.argsort(-kl, kind="stable")[:w])`` without sorting everything."""
    if np.isnan(kl).any():
        return np.sort(np.argsort(-kl, kind="stable")[:w])
    cut = np.partition(kl, len(kl) - w)[len(kl) - w]       # the w-th largest
    above = np.flatnonzero(kl > cut)
    ties = np.flatnonzero(kl == cut)[:w - len(above)]
    return np.sort(np.concatenate([above, ties]))


def fresh_successors(model, ms, in_r: set, seen: set) -> tuple[list, np.ndarray, np.ndarray]:
    """The successors of the structures ``ms`` that are neither in ``in_r`` nor in
    ``seen`` (first occurrences, in order; added to ``seen``): keys, log scores and
    prediction-family ids (rows of a zero-padded matrix as narrow as its longest row)."""
    keys: list = []
    S, mats = [], []
    for m in ms:
        k, s, mat = model._successor_block(m)
        take = []
        for j, kk in enumerate(k):
            if kk in in_r or kk in seen:
                continue
            seen.add(kk)
            take.append(j)
        if take:
            keys.extend([k[j] for j in take])
            S.append(s[take])
            mats.append(mat[take])
    if not keys:
        return keys, np.zeros(0), np.zeros((0, 1), dtype=np.int32)
    width = max(int(np.count_nonzero(mt, axis=1).max()) for mt in mats)
    out = np.zeros((len(keys), width), dtype=np.int32)
    at = 0
    for mt in mats:
        w = min(width, mt.shape[1])
        out[at:at + len(mt), :w] = mt[:, :w]
        at += len(mt)
    return keys, np.concatenate(S), out


def phase2(model, inst, found: ModelsInR, w: int, epsilon: float, patience: int,
           time_limit: float | None, t0: float) -> str:
    """Phase 2 of the ISMB search for one instance: extends ``found`` in place and
    returns why it stopped ("queue_empty", "epsilon" or "time_limit").

    The first queue, the successors of the phase-1 models, is the same for every
    instance (:meth:`bnexplore.ismb.MBModel._initial_queue`); only its predictions are
    computed per instance."""
    models, scores, preds, phases, p2 = found
    in_r = set(models)
    s_arr = np.asarray(scores)
    l_arr = np.vstack(preds)
    # running sums of Eq. 13 in log space
    A = _logsumexp_rows((s_arr[:, None] + l_arr).T)[:, 0]   # log sum_G sc(G) P(Z|x,G,D)
    B = float(_logsumexp_rows(s_arr)[0])                      # log sum_G sc(G)

    def kl_all(S, L):
        # Eq. 14: KL(p_R || p_{R + G*}) for every queued G*, vectorised
        logp = A - B
        logq = np.logaddexp(A[None, :], S[:, None] + L) - np.logaddexp(B, S)[:, None]
        return np.maximum((np.exp(logp)[None, :] * (logp[None, :] - logq)).sum(axis=1), 0.0)

    # the queue Q as parallel arrays
    if len(in_r) == len(models) and in_r == set(model.phase1()[0]):
        Q_keys, Q_S, mat, fids = model._initial_queue()
        Q_keys = list(Q_keys)
    else:
        Q_keys, Q_S, mat = fresh_successors(model, models, in_r, set())
        fids = None
    Q_L = model._log_pred_mat(inst, mat, fids)
    low = 0
    stopped = "queue_empty"
    while Q_keys:
        kl = kl_all(Q_S, Q_L)
        if len(Q_keys) > w:  # the queue holds at most w: drop the worst
            keep = _best_w(kl, w)
            Q_keys = [Q_keys[i] for i in keep]
            Q_S, Q_L, kl = Q_S[keep], Q_L[keep], kl[keep]
        j = int(np.argmax(kl))
        low = low + 1 if kl[j] <= epsilon else 0
        best, sj, lj = Q_keys[j], float(Q_S[j]), Q_L[j]
        Q_keys.pop(j)
        Q_S = np.delete(Q_S, j)
        Q_L = np.delete(Q_L, j, axis=0)
        models.append(best)
        scores.append(sj)
        preds.append(lj)
        phases.append(2)
        p2.append(float(kl[j]))
        in_r.add(best)
        A = np.logaddexp(A, sj + lj)
        B = float(np.logaddexp(B, sj))
        if low >= patience:
            stopped = "epsilon"
            break
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            stopped = "time_limit"
            break
        k, S, mat = fresh_successors(model, [best], in_r, set(Q_keys))
        if k:
            Q_keys = Q_keys + k
            Q_S = np.concatenate([Q_S, S])
            Q_L = np.vstack([Q_L, model._log_pred_mat(inst, mat)])
    return stopped
