"""What one ISMB search returns: the models of ``R`` and the running estimates (Eq. 13).

With the models ``G_1, ..., G_k`` in the order they entered ``R``, their log scores
``log sc(G_i)`` and log predictions ``log P(Z | x, G_i, D)``, the running estimate after
``j`` models is the score-weighted average

    P_j(z | x) = sum_{i <= j} sc(G_i) P(z | x, G_i, D) / sum_{i <= j} sc(G_i),

computed with log-sum-exp (Figure 8 plots it against ``j``); ISMB-MS predicts with the
highest-scoring model alone.  The class is re-exported by :mod:`bnexplore.ismb`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy.special import logsumexp

if TYPE_CHECKING:
    from ._mb_space import MarkovBlanket

__all__ = ["ISMBResult"]


@dataclass
class ISMBResult:
    """The models found for one test instance and the running estimates.

    Attributes
    ----------
    models : list of MarkovBlanket
        R in the order models were added.
    phases : ndarray of int
        1 or 2 per model.
    log_scores : ndarray
        Phase-1 score (log marginal likelihood) of each model.
    log_pred : ndarray of shape (n_models, n_classes)
        log P(Z | x, G, D) of each model.
    phase2_scores : ndarray
        Phase-2 (KL) score each phase-2 model had when it was moved to R (NaN in phase 1).
    classes : list
        States of the target (columns of the estimates).
    variant : str
        "ismb" or "nismb": the search that produced R.
    elapsed : float
        Seconds spent on this instance.
    stopped_by : str
        "epsilon", "time_limit", "queue_empty" or "count" (NISMB).
    """

    models: list
    phases: np.ndarray
    log_scores: np.ndarray
    log_pred: np.ndarray
    phase2_scores: np.ndarray
    classes: list
    variant: str = "ismb"
    elapsed: float = 0.0
    stopped_by: str = ""

    @property
    def n_phase1(self) -> int:
        return int((self.phases == 1).sum())

    @property
    def n_phase2(self) -> int:
        return int((self.phases == 2).sum())

    def running_log_estimates(self) -> np.ndarray:
        """log P(Z | x, D) averaged over the first k models, k = 1..n (Eq. 13), (n, r)."""
        num = np.logaddexp.accumulate(self.log_scores[:, None] + self.log_pred, axis=0)
        den = np.logaddexp.accumulate(self.log_scores)[:, None]
        return num - den

    @property
    def proba(self) -> np.ndarray:
        """Model-averaged P(Z | x, D) over all of R (Eq. 13)."""
        w = self.log_scores - logsumexp(self.log_scores)
        return np.exp(logsumexp(w[:, None] + self.log_pred, axis=0))

    @property
    def best(self) -> int:
        """Index of the highest-scoring model of R (ISMB-MS)."""
        return int(np.argmax(self.log_scores))

    @property
    def proba_ms(self) -> np.ndarray:
        """Prediction of the single best model in R (ISMB-MS)."""
        return np.exp(self.log_pred[self.best])

    def trace(self) -> pd.DataFrame:
        """One row per model added: step, phase, log score, phase-2 score, running estimates
        ``P(<class>)`` and the arcs of the model (Figure 8)."""
        est = np.exp(self.running_log_estimates())
        df = pd.DataFrame({
            "step": np.arange(1, len(self.models) + 1),
            "phase": self.phases,
            "log_score": self.log_scores,
            "phase2_score": self.phase2_scores,
        })
        for j, c in enumerate(self.classes):
            df[f"P({c})"] = est[:, j]
        df["model"] = [", ".join(f"{a}->{b}" for a, b in m.arcs) for m in self.models]
        return df

    def top_models(self, k: int = 5) -> list[tuple[MarkovBlanket, float, float]]:
        """The ``k`` models with the largest posterior weight within R: (model, log score,
        weight)."""
        w = np.exp(self.log_scores - logsumexp(self.log_scores))
        order = np.argsort(-self.log_scores, kind="stable")[:k]
        return [(self.models[i], float(self.log_scores[i]), float(w[i])) for i in order]
