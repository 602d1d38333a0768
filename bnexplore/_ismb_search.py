"""The two-phase ISMB search over Markov blanket structures (section 5.6, Figure 6).

Phase 1 (instance independent) climbs from the empty structure on the log marginal
likelihood ``log sc(G) = log P(D | G)`` (Eq. 10-11).  Phase 2 runs for one instance
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
A, B
    The running log sums above.
"""
from __future__ import annotations

import time
from collections import namedtuple

import numpy as np

from ._ismb_predict import _logsumexp_rows

__all__: list[str] = []

#: the models in R and what is known of each, aligned lists extended in place by phase 2
ModelsInR = namedtuple("ModelsInR", ["models", "log_scores", "log_preds", "phases", "phase2_scores"])


def _check_search_params(queue_width, epsilon, patience, time_limit) -> None:
    if isinstance(queue_width, bool) or not isinstance(queue_width, (int, np.integer)) \
            or queue_width < 1:
        raise ValueError(f"queue_width must be a positive integer, got {queue_width!r}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.number)) \
            or not np.isfinite(epsilon) or epsilon < 0:
        raise ValueError(f"epsilon must be a non-negative number, got {epsilon!r}")
    if isinstance(patience, bool) or not isinstance(patience, (int, np.integer)) or patience < 1:
        raise ValueError(f"patience must be a positive integer, got {patience!r}")
    if time_limit is not None and (isinstance(time_limit, bool)
                                   or not isinstance(time_limit, (int, float, np.number))
                                   or not time_limit > 0):
        raise ValueError(f"time_limit must be None or a positive number of seconds, "
                         f"got {time_limit!r}")


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
            keys, s, _ = model._successors(m)
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
        keys, sc, _ = model._successors(best)
        for k, v in zip(keys, sc):
            if k not in in_r and k not in queue:
                queue[k] = float(v)
        trim_queue(queue, queue_width)
    return seq[:n]


def phase2(model, inst, found: ModelsInR, w: int, epsilon: float, patience: int,
           time_limit: float | None, t0: float) -> str:
    """Phase 2 of the ISMB search for one instance: extends ``found`` in place and
    returns why it stopped ("queue_empty", "epsilon" or "time_limit")."""
    models, scores, preds, phases, p2 = found
    in_r = set(models)
    s_arr = np.asarray(scores)
    l_arr = np.vstack(preds)
    # running sums of Eq. 13 in log space
    A = _logsumexp_rows((s_arr[:, None] + l_arr).T)[:, 0]   # log sum_G sc(G) P(Z|x,G,D)
    B = float(_logsumexp_rows(s_arr)[0])                      # log sum_G sc(G)
    # the queue Q as parallel arrays
    Q_keys: list[tuple[int, ...]] = []
    Q_S = np.zeros(0)
    Q_L = np.zeros((0, model.r))

    def successors_of(ms):
        keys, S, ids = [], [], []
        seen = set(Q_keys)
        for m in ms:
            k, s, i = model._successors(m)
            for kk, ss, ii in zip(k, s, i):
                if kk in in_r or kk in seen:
                    continue
                seen.add(kk)
                keys.append(kk)
                S.append(ss)
                ids.append(ii)
        return keys, np.asarray(S, dtype=float), model._log_pred_batch(inst, ids)

    def kl_all(S, L):
        # Eq. 14: KL(p_R || p_{R + G*}) for every queued G*, vectorised
        logp = A - B
        logq = np.logaddexp(A[None, :], S[:, None] + L) - np.logaddexp(B, S)[:, None]
        return np.maximum((np.exp(logp)[None, :] * (logp[None, :] - logq)).sum(axis=1), 0.0)

    Q_keys, Q_S, Q_L = successors_of(models)
    low = 0
    stopped = "queue_empty"
    while Q_keys:
        kl = kl_all(Q_S, Q_L)
        if len(Q_keys) > w:  # the queue holds at most w: drop the worst
            keep = np.sort(np.argsort(-kl, kind="stable")[:w])
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
        k, S, L = successors_of([best])
        if k:
            Q_keys = Q_keys + k
            Q_S = np.concatenate([Q_S, S])
            Q_L = np.vstack([Q_L, L])
    return stopped
