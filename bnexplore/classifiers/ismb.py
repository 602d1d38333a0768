"""ISMB: instance-specific Markov blanket model averaging as a scikit-learn classifier.

See :mod:`bnexplore.ismb` for the model space, the operators and the two-phase search
(Visweswaran & Cooper 2010).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import gammaln
from sklearn.utils.validation import check_is_fitted

from .._ismb_search import SEARCH_CONSTRAINTS
from .._validation import Interval, Options, validate_params
from ..data.core import DiscreteData
from ..ismb import VARIANTS, ISMBResult, MBModel
from ._base import ArrayLike, DiscreteClassifier, MatrixLike

__all__ = ["ISMB", "ISMBReport", "one_arc_gains"]

_STATS_COLUMNS = ["n_phase1", "n_phase2", "n_models", "seconds", "stopped_by"]


def one_arc_gains(data: DiscreteData) -> np.ndarray:
    """K2 log-score gain of the best one-arc Markov blanket of each feature, by feature.

    For a feature ``X`` and the class ``Z`` (the last column of ``data``), with the K2
    family score ``fs`` (Cooper & Herskovits) counted over the rows where ``X`` is
    observed (rows with a missing class are not counted),

        gain(X) = max(fs(Z | X) - fs(Z), fs(X | Z) - fs(X)),

    the better of the two structures phase 1 of ISMB can reach in one step that hold
    ``X`` (``X -> Z`` or ``Z -> X``) against the empty one.  The ISMB classifier keeps
    the features of largest gain when there are more than ``max_candidates``.

    Parameters
    ----------
    data : DiscreteData
        Features then the class as the last column.

    Returns
    -------
    ndarray of shape (n_features,)

    Examples
    --------
    >>> import numpy as np
    >>> from bnexplore.data import DiscreteData
    >>> rng = np.random.default_rng(0)
    >>> z = rng.integers(0, 2, 200)
    >>> codes = np.column_stack([rng.integers(0, 2, 200), z ^ (rng.random(200) < 0.1), z])
    >>> d = DiscreteData(codes, ["noise", "copy", "Z"], [[0, 1]] * 3, target="Z")
    >>> g = one_arc_gains(d)
    >>> bool(g[1] > 50 > g[0])
    True
    """
    t = data.n_cols - 1
    r = int(data.arities[t])
    z = data.codes[:, t].astype(np.int64)
    seen_z = np.ones(data.n_rows, dtype=bool) if data.missing is None else ~data.missing[:, t]
    out = np.empty(t)
    for j in range(t):
        q = int(data.arities[j])
        ok = seen_z if data.missing is None else seen_z & ~data.missing[:, j]
        n = np.bincount(data.codes[ok, j].astype(np.int64) * r + z[ok], minlength=q * r)
        n = n.reshape(q, r).astype(float)
        out[j] = max(_k2(n) - _k2(n.sum(axis=0, keepdims=True)),
                     _k2(n.T) - _k2(n.sum(axis=1, keepdims=True).T))
    return out


def _k2(n: np.ndarray) -> float:
    """K2 log marginal likelihood of a family from its counts (parent configs x states)."""
    k = n.shape[1]
    return float((gammaln(k) - gammaln(n.sum(axis=1) + k)).sum() + gammaln(n + 1.0).sum())


@dataclass(frozen=True)
class ISMBReport:
    """What one :meth:`ISMB.predict_report` call found, row by row.

    Attributes
    ----------
    proba : ndarray of shape (n_samples, n_classes)
        The same probabilities as ``predict_proba`` (columns follow ``classes_``).
    results : list of bnexplore.ismb.ISMBResult
        The models and estimates behind each row's prediction (the NISMB search for
        ``variant="nismb"``, the ISMB search otherwise).
    search_stats : pandas.DataFrame
        One row per predicted instance: models in phase 1 and phase 2 of the ISMB
        search, seconds, and why phase 2 stopped (Table 5).
    """

    proba: np.ndarray
    results: list
    search_stats: pd.DataFrame

    def trace(self, row: int = -1) -> pd.DataFrame:
        """The trace of one row (default the last): one line per model added to R with
        step, phase, log score, phase-2 score and the running estimates (Figure 8)."""
        return self.results[row].trace()


class ISMB(DiscreteClassifier):
    """Instance-specific Markov blanket classifier (ISMB, ISMB-MS, NISMB; Table 2).

    Phase 1 (greedy hill climbing on the K2 marginal likelihood) runs once at ``fit``;
    for every test row phase 2 (best-first search on the instance-specific KL score)
    collects the models that change the prediction of that row, and the prediction is
    the score-weighted average over them (Eq. 13).

    Parameters
    ----------
    queue_width : int, default 1000
        Capacity ``w`` of the phase-2 priority queue.
    epsilon : float, default 1e-3
        Phase 2 stops when no queued structure has a phase-2 (KL) score above
        ``epsilon`` for ``patience`` consecutive iterations.
    patience : int, default 10
    time_limit : float or None
        Seconds per test instance after which phase 2 stops.
    variant : {"ismb", "ms", "nismb"}
        "ismb" averages over R; "ms" predicts with the highest-scoring model in R
        (ISMB-MS); "nismb" averages over as many models as ISMB but chooses the phase-2
        models by the phase-1 score (instance independent).
    handle_unknown : {"missing", "error"}, default "missing"
        A category never seen in training at predict time is summed out like a missing
        value ("missing") or raises a ``ValueError`` ("error").
    max_candidates : int or None, default 61
        Largest number of features the Markov blankets are searched over (the
        candidate pre-selection, part of the model).  With more features, ``fit`` keeps
        the ``max_candidates`` features with the largest one-arc K2 gain
        (:func:`one_arc_gains`: the better of ``feature -> class`` and
        ``class -> feature`` against no arc, the first step of phase 1; ties to the
        earlier column) and the model ignores the others.  ``None`` searches over every
        feature (the structures are bitsets of any width, but the phase-2 queue grows
        with the square of the feature count).  Data with at most 61 features, all that
        ISMB took before the selection existed, are not affected.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` was a DataFrame with string column names.
    candidates_ : ndarray of int
        Positions (in ``X``'s columns) of the features the model searches over, in
        column order: every feature unless ``max_candidates`` selected.
    model_ : bnexplore.ismb.MBModel
        Scores and search state shared by all test instances, over ``candidates_``.

    Notes
    -----
    ``queue_width``, ``epsilon``, ``patience``, ``time_limit`` and ``variant`` act at
    prediction time (the phase-2 search is per test row), so changing them with
    ``set_params`` takes effect without a refit.  Prediction leaves the estimator
    unchanged (one fitted model may serve several threads); the per-row search
    diagnostics - models, traces (Figure 8) and search statistics (Table 5) - come
    from :meth:`predict_report`.  ``model_`` memoises family scores across
    instances; that cache is guarded by a lock.  With ``time_limit=None`` (the
    default) predictions are deterministic.

    **Missing values** at fit time follow the package policy (see
    :class:`bnexplore.data.DiscreteData`): the score of a Markov-blanket structure (Eq.
    10-11) is a sum of family terms, each family's gain over the empty family counted on the
    rows where the family's variables are observed, so a structure cannot win because its
    variables are missing more often and a missing cell costs only the families of its
    column (data without a complete row still gives structures); the parameters of each
    structure's prediction families (the class's and its children's) and the marginals
    used to sum out a missing feature are counted by available case, each family over
    the rows where all its variables are observed.

    **Missing values** at predict time (NaN / None, or an unseen category with
    ``handle_unknown="missing"``) are summed out exactly within every Markov-blanket
    model, over the missing members of that model's blanket only (parents and spouses
    take their K2 marginal; a missing non-member or barren child drops out), so a row
    may miss any number of features; one model sums over at most 65,536 joint states of
    linked missing members (:data:`bnexplore.ismb.MAX_MISSING_COMPLETIONS`).

    Examples
    --------
    >>> import bnexplore as bx
    >>> from bnexplore.classifiers import ISMB
    >>> df = bx.datasets.load("weather.nominal")
    >>> X, y = df.drop(columns="play"), df["play"]
    >>> clf = ISMB(queue_width=100).fit(X, y)
    >>> clf.predict_proba(X.iloc[:2]).shape
    (2, 2)
    >>> report = clf.predict_report(X.iloc[:2])
    >>> list(report.trace().columns[:4])
    ['step', 'phase', 'log_score', 'phase2_score']
    >>> len(report.search_stats)
    2
    """

    _parameter_constraints = {**SEARCH_CONSTRAINTS, "variant": Options(*VARIANTS),
                              "max_candidates": Interval(int, 1, None, allow_none=True)}

    def __init__(self, queue_width: int = 1000, epsilon: float = 1e-3, patience: int = 10,
                 time_limit: float | None = None, variant: str = "ismb", handle_unknown: str = "missing",
                 max_candidates: int | None = 61):
        self.queue_width = queue_width
        self.epsilon = epsilon
        self.patience = patience
        self.time_limit = time_limit
        self.variant = variant
        self.handle_unknown = handle_unknown
        self.max_candidates = max_candidates

    def _check_params(self) -> None:
        """The search parameters are read at predict time (the search runs per row), so
        predict checks them again: ``set_params`` may have changed them after fit."""
        validate_params(self)

    def fit(self, X: MatrixLike, y: ArrayLike) -> "ISMB":
        """Score the training data and run phase 1 (shared by every test instance).

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            Discrete features (categoricals, strings, bools or small integers); NaN /
            None cells are missing values (structures and parameters by available
            case: see the class notes).
        y : array-like of shape (n_samples,)
            Class labels (at least two distinct ones).

        Returns
        -------
        self
        """
        data = self._fit_data(X, y)        # checks the parameters too
        m = data.n_cols - 1
        if self.max_candidates is None or m <= self.max_candidates:
            self.candidates_ = np.arange(m)
        else:
            gain = one_arc_gains(data)
            self.candidates_ = np.sort(np.argsort(-gain, kind="stable")[:self.max_candidates])
            data = data.subset([data.names[j] for j in self.candidates_] + [self.class_column])
        self.model_ = MBModel(data, target=self.class_column)
        self.model_.phase1()
        return self

    def _rows(self, X: MatrixLike) -> np.ndarray:
        # -1 marks a missing value (or an unseen one with handle_unknown="missing"): the
        # search sums it out within every Markov-blanket model (bnexplore.ismb.MBModel)
        codes = self._encode(X)[:, self.candidates_].astype(np.int64)
        full = np.zeros((codes.shape[0], codes.shape[1] + 1), dtype=np.int64)
        full[:, :-1] = codes          # the class is the last column of data_
        return full

    def search_instances(self, X: MatrixLike) -> list[dict[str, ISMBResult]]:
        """Run the search for every row; returns ``{"ismb": result, "nismb": result}`` per row
        (ISMB-MS is ``result.proba_ms`` of the ISMB result)."""
        check_is_fitted(self, "model_")
        self._check_params()
        return self._search_rows(X)

    def _search_rows(self, X: MatrixLike) -> list[dict[str, ISMBResult]]:
        """:meth:`search_instances` with the parameters checked."""
        out = []
        for x in self._rows(X):
            res = self.model_._search(x, self.queue_width, self.epsilon, self.patience,
                                      self.time_limit)
            entry = {"ismb": res}
            if self.variant == "nismb":
                entry["nismb"] = self.model_._search(x, self.queue_width, variant="nismb",
                                                     n_phase2=res.n_phase2)
            out.append(entry)
        return out

    def predict_proba_variants(self, X: MatrixLike, return_stats: bool = False
                               ) -> dict[str, np.ndarray] | tuple[dict[str, np.ndarray], pd.DataFrame]:
        """Probabilities of ISMB, ISMB-MS and NISMB from one search per row.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
        return_stats : bool, default False
            Also return the search statistics of every row (as in
            :attr:`ISMBReport.search_stats`).

        Returns
        -------
        dict
            Variant -> (n, n_classes) array with columns following ``classes_``;
            with ``return_stats``, the pair ``(dict, search_stats)``.
        """
        check_is_fitted(self, "model_")
        self._check_params()
        probs = {v: [] for v in VARIANTS}
        rows = []
        for x in self._rows(X):
            res = self.model_._search(x, self.queue_width, self.epsilon, self.patience,
                                      self.time_limit)
            nis = self.model_._search(x, self.queue_width, variant="nismb",
                                      n_phase2=res.n_phase2)
            probs["ismb"].append(res.proba)
            probs["ms"].append(res.proba_ms)
            probs["nismb"].append(nis.proba)
            rows.append(self._stats(res))
        out = {k: np.asarray(v, dtype=float).reshape(-1, len(self.classes_))
               for k, v in probs.items()}
        if return_stats:
            return out, pd.DataFrame(rows, columns=_STATS_COLUMNS)
        return out

    @staticmethod
    def _stats(res: ISMBResult) -> dict:
        return {"n_phase1": res.n_phase1, "n_phase2": res.n_phase2, "n_models": len(res.models),
                "seconds": res.elapsed, "stopped_by": res.stopped_by}

    def predict_report(self, X: MatrixLike) -> ISMBReport:
        """Predict and return the search behind every row.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)

        Returns
        -------
        ISMBReport
            ``proba`` (equal to :meth:`predict_proba`), per-row ``results`` with their
            ``trace()``, and ``search_stats``.  The estimator itself is not changed.
        """
        check_is_fitted(self, "model_")
        self._check_params()
        out, results, rows = [], [], []
        for entry in self._search_rows(X):
            res = entry["ismb"]
            rows.append(self._stats(res))
            if self.variant == "ismb":
                out.append(res.proba)
            elif self.variant == "ms":
                out.append(res.proba_ms)
            else:
                res = entry["nismb"]
                out.append(res.proba)
            results.append(res)
        proba = np.asarray(out, dtype=float).reshape(-1, len(self.classes_))
        return ISMBReport(proba, results, pd.DataFrame(rows, columns=_STATS_COLUMNS))

    @property
    def predict_joint_log_proba(self):
        """Absent (``hasattr`` is False; access raises the reason) -- not defined: ISMB averages instance-specific Markov-blanket models of
        ``P(class | x)`` and defines no joint distribution over ``(x, class)``.

        Raises
        ------
        AttributeError
            On access; use :meth:`predict_proba`.
        """
        raise AttributeError("ISMB averages conditional models P(class | x) of instance-specific "
                             "Markov blankets and defines no joint P(x, class): use predict_proba")

    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """P(class | x, D) of every row, columns following ``classes_``.

        The search diagnostics of the rows are available from :meth:`predict_report`.
        """
        return self.predict_report(X).proba
