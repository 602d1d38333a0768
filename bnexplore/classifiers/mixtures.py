"""Classifiers over linear mixtures of one-dependence estimators (Cerquides & Lopez de Mantaras).

* :class:`AODE` - uniform average of the ODEs whose super-parent value was seen more than
  ``threshold`` times (Eq. 14-17), naive Bayes when none qualifies.
* :class:`BMAAODE` - exact Bayesian model averaging over ODEs (Theorems 1-2) with every
  hyperparameter 1: the ODEs weighted by their posterior root probability.
* :class:`MAPLMD` - MAP weights of the linear mixture of discriminative ODEs (Eq. 8), by
  EM on leave-one-out estimates (MAPLMDODE in the paper).
* :class:`MAPLMG` - MAP weights of the linear mixture of generative ODEs (Eq. 10), by
  constrained optimisation on leave-one-out estimates (MAPLMGODE in the paper).

Every classifier exposes ``weights_``: a :class:`pandas.Series` indexed by super-parent
attribute, on the simplex (uniform for AODE).

Examples
--------
>>> import bnexplore as bx
>>> from bnexplore.classifiers import AODE, MAPLMG
>>> df = bx.datasets.load("weather.nominal")
>>> X, y = df.drop(columns="play"), df["play"]
>>> clf = AODE().fit(X, y)
>>> clf.predict_proba(X).shape
(14, 2)
>>> w = MAPLMG().fit(X, y).weights_
>>> list(w.index) == list(X.columns), round(float(w.sum()), 9)
(True, 1.0)
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from .. import mixtures as mx
from ._base import ArrayLike, DiscreteClassifier, MatrixLike, normalize_log

__all__ = ["AODE", "BMAAODE", "MAPLMD", "MAPLMG"]


class _ODEMixture(DiscreteClassifier):
    """Shared fitting of the ODE counts, fast encoding and ``weights_``."""

    def fit(self, X: MatrixLike, y: ArrayLike) -> "_ODEMixture":
        """Count the ODE statistics of ``X, y`` and set ``weights_``.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            Discrete features (categoricals, strings, bools or small integers).
        y : array-like of shape (n_samples,)
            Class labels (at least two distinct ones).

        Returns
        -------
        self
        """
        self._check_params()
        data = self._fit_data(X, y)
        self.counts_ = mx.ode_counts(data)
        w = self._fit_weights(self.counts_)
        self.weights_ = pd.Series(np.asarray(w, float), index=pd.Index(
            list(self._feature_names), name="super-parent"), name="weight")
        return self

    def _check_params(self) -> None:
        pass

    def _encode(self, X: MatrixLike) -> np.ndarray:
        # fast path: categoricals with exactly the training categories (no Python loop)
        if isinstance(X, pd.DataFrame) and hasattr(self, "data_"):
            names = list(self._feature_names)
            labels = getattr(self, "_column_labels_", None)
            if labels is not None and list(X.columns) == labels:
                out = np.empty((len(X), len(names)), dtype=np.int32)
                for k in range(len(names)):
                    s = X.iloc[:, k]
                    if not isinstance(s.dtype, pd.CategoricalDtype) or \
                            list(s.cat.categories) != list(self.data_.states[k]):
                        return super()._encode(X)
                    out[:, k] = s.cat.codes.to_numpy()
                if (out < 0).any():  # missing values: let the base class explain
                    return super()._encode(X)
                return out
        return super()._encode(X)

    def log_joint_per_ode(self, X: MatrixLike) -> np.ndarray:
        """``log P_u(c, x)`` (Eq. 14-16) of every row, super-parent and class: (M, n, K)."""
        codes = self._encode(X)          # checks that the estimator is fitted
        return mx.ode_log_joint(self.counts_, codes)

    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """Class probabilities of the mixture ``sum_u w_u P_u(c, x)`` (Eq. 2), rows sum to 1."""
        lj = self.log_joint_per_ode(X)
        return normalize_log(mx.mixture_log_joint(lj, self.weights_.to_numpy()))


class AODE(_ODEMixture):
    """Averaged one-dependence estimators (Webb et al. 2005) as in Eq. 14-17.

    Parameters
    ----------
    threshold : float, default 0
        ``t``: the ODE of super-parent ``u`` takes part for an instance only when its value
        ``x_u`` occurred more than ``t`` times in training.  When no attribute qualifies the
        prediction is naive Bayes with Laplace estimates (as Weka's AODE).  ``t = 0`` equals
        Weka's default frequency limit ``m = 1`` (``N_u(x_u) >= 1``).

    Attributes
    ----------
    weights_ : Series
        Uniform ``1/n`` per super-parent (the per-instance threshold only removes
        super-parents; the remaining ones share the weight equally).
    counts_ : ODECounts

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.datasets.load("contact-lenses")
    >>> clf = AODE(threshold=0).fit(df.drop(columns=df.attrs["target"]), df[df.attrs["target"]])
    >>> float(clf.weights_.iloc[0]) == 1 / 4
    True
    """

    def __init__(self, threshold: float = 0):
        self.threshold = threshold

    def _check_params(self) -> None:
        t = self.threshold
        if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)) \
                or not np.isfinite(t) or t < 0:
            raise ValueError(f"threshold must be a non-negative number, got {t!r}")

    def _fit_weights(self, counts):
        return np.full(counts.n_attributes, 1.0 / counts.n_attributes)

    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """Class probabilities of AODE (Eq. 17); columns follow ``classes_``, rows sum to 1."""
        codes = self._encode(X)
        return normalize_log(mx.aode_log_joint(self.counts_, codes, self.threshold))


class BMAAODE(_ODEMixture):
    """Exact Bayesian model averaging over ODEs (Eq. 18-29) with every hyperparameter 1.

    The posterior root probabilities ``alpha*_u ~ W_u`` (Eq. 22, 25) become ``weights_``;
    the posterior predictive of each root (Eq. 29) with all ``N' = 1`` equals the Laplace
    estimates of Eq. 15-16, so prediction is Eq. 28 over the ODEs of :class:`AODE`.

    Parameters
    ----------
    None: every Dirichlet hyperparameter is 1 (the paper's setting).

    Attributes
    ----------
    weights_ : Series
        Posterior probability that each attribute is the root.
    log_evidence_ : Series
        ``log W_u`` (natural log).

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.datasets.load("vote", missing="drop")
    >>> clf = BMAAODE().fit(df.drop(columns="Class"), df["Class"])
    >>> bool(clf.weights_.max() > 0.9)      # the posterior concentrates on one root
    True
    """

    def __init__(self):
        pass

    def _fit_weights(self, counts):
        logw = mx.bma_log_evidence(counts)
        self.log_evidence_ = pd.Series(logw, index=pd.Index(list(self._feature_names),
                                                            name="super-parent"),
                                       name="log_evidence")
        return mx.bma_weights(counts)


class _MAPMixture(_ODEMixture):
    def _check_params(self) -> None:
        mx._check_iter(self.max_iter, self.tol)

    def loo_log_joint(self) -> np.ndarray:
        """Leave-one-out ``log P_u(c, x)`` of the training rows (Eq. 30-32): (M, n, K)."""
        check_is_fitted(self, "counts_")
        return mx.ode_log_joint_loo(self.counts_)


class MAPLMD(_MAPMixture):
    """MAP linear mixture of discriminative ODEs (MAPLMDODE): EM weights of Eq. 8.

    The component distributions are the leave-one-out ODE conditionals
    ``P_u^LOO(x_C | x_{-C})`` (Eq. 30-32) of the training instances; the prior is Eq. 6.
    Prediction is Eq. 1 with the full-data ODEs: ``sum_u w_u P_u(c | x)``.

    Parameters
    ----------
    max_iter : int, default 5000
        EM iterations.
    tol : float, default 1e-6
        Scaled KKT residual at which EM stops (see :func:`bnexplore.mixtures.kkt_residual`).

    Attributes
    ----------
    weights_ : Series
    n_iter_ : int
    converged_ : bool
    objective_ : float
        Log posterior (Eq. 8, up to a constant) at ``weights_``.
    kkt_ : float
        Scaled KKT residual at ``weights_``.

    Warns
    -----
    bnexplore.mixtures.WeightsConvergenceWarning
        When EM stops at ``max_iter`` (the message gives the iteration count).

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.datasets.load("weather.nominal")
    >>> clf = MAPLMD().fit(df.drop(columns="play"), df["play"])
    >>> clf.converged_, round(float(clf.weights_.sum()), 9)
    (True, 1.0)
    >>> clf.predict(df.drop(columns="play").iloc[:3]).tolist()
    ['no', 'no', 'yes']
    """

    def __init__(self, max_iter: int = 5000, tol: float = 1e-6):
        self.max_iter = max_iter
        self.tol = tol

    def _fit_weights(self, counts):
        lc = mx.loo_conditional(mx.ode_log_joint_loo(counts), counts.y)
        res = mx.maplmd_weights(lc, max_iter=self.max_iter, tol=self.tol)
        self.n_iter_, self.converged_, self.objective_ = res.n_iter, res.converged, res.objective
        self.kkt_ = res.kkt
        return res.weights

    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """Class probabilities ``sum_u w_u P_u(c | x)`` (Eq. 1); columns follow ``classes_``."""
        lj = self.log_joint_per_ode(X)
        p = mx.mixture_conditional(lj, self.weights_.to_numpy())
        return p / p.sum(axis=1, keepdims=True)


class MAPLMG(_MAPMixture):
    """MAP linear mixture of generative ODEs (MAPLMGODE): weights maximising Eq. 10.

    The components are the leave-one-out ODE joints ``P_u^LOO(c, x_{-C})`` (Eq. 30-32);
    the weights maximise the supervised posterior under the simplex constraints with the
    gradient of Eq. 13: L-BFGS in softmax coordinates (whose stationary points are the
    KKT points of the constrained problem) or SLSQP with explicit constraints; the KKT
    residual is checked at the end.  Prediction is Eq. 2 with the full-data ODEs.

    Parameters
    ----------
    method : {"softmax", "slsqp"}, default "softmax"
        Optimiser: L-BFGS in softmax coordinates or SLSQP with explicit constraints.
    max_iter : int, default 500
        Optimiser iterations.
    tol : float, default 1e-6
        Scaled KKT residual accepted as converged.

    Attributes
    ----------
    weights_ : Series
    n_iter_ : int
    converged_ : bool
    objective_ : float
        Log posterior (Eq. 10, up to a constant) at ``weights_``.
    kkt_ : float
        Scaled KKT residual at ``weights_``.

    Warns
    -----
    bnexplore.mixtures.WeightsConvergenceWarning
        When the KKT residual is above ``tol`` after ``max_iter`` iterations.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.datasets.load("weather.nominal")
    >>> clf = MAPLMG(method="slsqp").fit(df.drop(columns="play"), df["play"])
    >>> clf.converged_, clf.weights_.idxmax()
    (True, 'outlook')
    """

    def __init__(self, method: str = "softmax", max_iter: int = 500, tol: float = 1e-6):
        self.method = method
        self.max_iter = max_iter
        self.tol = tol

    def _check_params(self) -> None:
        super()._check_params()
        if self.method not in ("slsqp", "softmax"):
            raise ValueError(f"method must be 'slsqp' or 'softmax', got {self.method!r}")

    def _fit_weights(self, counts):
        lj = mx.ode_log_joint_loo(counts)
        res = mx.maplmg_weights(lj, counts.y, method=self.method, max_iter=self.max_iter,
                                tol=self.tol)
        self.n_iter_, self.converged_, self.objective_ = res.n_iter, res.converged, res.objective
        self.kkt_ = res.kkt
        return res.weights
