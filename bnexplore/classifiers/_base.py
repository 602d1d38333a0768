"""Shared scikit-learn plumbing for every bnexplore classifier.

Subclasses implement ``_fit(data)`` on a :class:`DiscreteData` whose last column is
the class, and ``_predict_log_joint(codes)`` or ``predict_proba``. Validation,
class bookkeeping and encoding of new rows live here once.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..data.core import DiscreteData

__all__ = ["DiscreteClassifier", "normalize_log"]


def normalize_log(logp: np.ndarray) -> np.ndarray:
    """Row-normalise log scores into probabilities (log-sum-exp, NaN-safe for -inf rows)."""
    logp = np.asarray(logp, dtype=float)
    m = logp.max(axis=1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(logp - m)
    s = p.sum(axis=1, keepdims=True)
    bad = ~(s > 0)
    if bad.any():  # every class impossible: fall back to uniform rather than NaN
        p[bad[:, 0]] = 1.0
        s = p.sum(axis=1, keepdims=True)
    return p / s


def _as_frame(X) -> pd.DataFrame:
    if isinstance(X, pd.DataFrame):
        return X
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {arr.shape}")
    return pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])])


class DiscreteClassifier(ClassifierMixin, BaseEstimator):
    """Base class: discrete features in, class probabilities out (columns follow ``classes_``)."""

    #: name given to the class column inside ``data_``
    class_column = "__class__"

    def _fit_data(self, X, y) -> DiscreteData:
        """Validate ``X, y`` and return training data with the class as the last column.

        Sets ``classes_``, ``n_features_in_``, ``feature_names_in_`` and ``data_``.
        """
        X = _as_frame(X)
        y = np.asarray(y)
        if y.ndim != 1:
            y = y.ravel()
        if len(y) != len(X):
            raise ValueError(f"X has {len(X)} rows but y has {len(y)}")
        if len(X) == 0:
            raise ValueError("cannot fit on 0 samples")
        if pd.isna(pd.Series(y)).any():
            raise ValueError(f"y has {int(pd.isna(pd.Series(y)).sum())} missing labels: drop those rows")
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(f"y has a single class ({classes[0]!r}): a classifier needs at least two classes")
        frame = X.copy()
        frame.columns = [str(c) for c in frame.columns]
        if self.class_column in frame.columns:
            raise ValueError(f"feature name {self.class_column!r} is reserved")
        frame[self.class_column] = pd.Categorical(y, categories=classes)
        data = DiscreteData.from_frame(frame, target=self.class_column)
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self.feature_names_in_ = np.array([str(c) for c in X.columns], dtype=object)
        self.data_ = data
        return data

    def _encode(self, X) -> np.ndarray:
        """Integer codes (n, n_features) of new rows in the training coding.

        Unseen categories raise a ``ValueError`` naming the column and the value.
        """
        check_is_fitted(self, "data_")
        X = _as_frame(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but the classifier was fitted with "
                             f"{self.n_features_in_}")
        X = X.copy()
        X.columns = [str(c) for c in X.columns]
        if list(X.columns) != list(self.feature_names_in_):
            if isinstance(X, pd.DataFrame) and set(X.columns) == set(self.feature_names_in_):
                X = X[list(self.feature_names_in_)]
            elif not all(c.startswith("x") for c in X.columns):
                raise ValueError(f"X columns {list(X.columns)} differ from the fitted ones "
                                 f"{list(self.feature_names_in_)}")
            else:
                X.columns = list(self.feature_names_in_)
        na = X.isna().to_numpy()
        if na.any():
            r, c = np.argwhere(na)[0]
            raise ValueError(f"X has {int(na.sum())} missing values (first at row {r}, column "
                             f"{X.columns[c]!r}): impute or drop them before predicting")
        return self.data_.encode(X, unseen="raise")

    def predict(self, X) -> np.ndarray:
        """Most probable class of every row."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def predict_log_proba(self, X) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def _more_tags(self):
        return {"X_types": ["categorical", "2darray"], "requires_y": True}
