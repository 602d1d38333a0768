"""Shared scikit-learn plumbing for every bnexplore classifier.

Subclasses implement ``fit`` (calling :meth:`DiscreteClassifier._fit_data` first) and
``predict_proba`` (calling :meth:`DiscreteClassifier._encode` on the new rows).
Validation, class bookkeeping and encoding of new rows live here once, following the
scikit-learn conventions:

* ``fit`` accepts a DataFrame (categorical, string, bool or small-integer columns) or a
  2-D array of labels; ``feature_names_in_`` is set only when ``X`` is a DataFrame with
  string column names (as in scikit-learn), ``n_features_in_`` always.
* Every attribute ending in ``_`` left by an earlier ``fit`` is removed before a refit,
  so nothing from the previous data survives.
* Bad input raises a ``ValueError`` (``TypeError`` for sparse matrices) that names the
  problem: 1-D or empty ``X``, NaN at fit time for the classifiers that fit complete
  rows only, inf, a continuous column, a continuous or single-class ``y``, a wrong
  number of features, or an unseen category at predict time with
  ``handle_unknown="error"``.
* At predict time a missing value (NaN / None) is summed out exactly, and so is a
  category never seen in training with ``handle_unknown="missing"`` (every classifier's
  default, so that stratified cross-validation runs when a value occurs in one row).
  Subclasses implement ``_joint_log_proba(codes)`` over integer codes in which ``-1``
  marks a missing value; :meth:`DiscreteClassifier.predict_joint_log_proba` and
  ``predict_proba`` (its softmax) are built on it.
"""
from __future__ import annotations

import warnings
from typing import Any, Sequence, Union

import numpy as np
import pandas as pd
from scipy import sparse as _sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from .._validation import Options, validate_params
from ..data.core import DiscreteData, _as_2d_frame, _check_unique_columns
from ._coding import categorical_frame_codes, class_codes, encode_rows, int_array_codes

__all__ = ["DiscreteClassifier", "normalize_log", "MatrixLike", "ArrayLike", "HANDLE_UNKNOWN"]

#: accepted values of every classifier's ``handle_unknown`` parameter
HANDLE_UNKNOWN = ("missing", "error")

#: what ``X`` may be: a DataFrame, a 2-D numpy array or a nested sequence
MatrixLike = Union[pd.DataFrame, np.ndarray, Sequence[Sequence[Any]]]
#: what ``y`` may be: a Series, Categorical, 1-D array or sequence of labels
ArrayLike = Union[pd.Series, pd.Categorical, np.ndarray, Sequence[Any]]


def normalize_log(logp: np.ndarray) -> np.ndarray:
    """Row-normalise log scores into probabilities (log-sum-exp, NaN-safe for -inf rows).

    Examples
    --------
    >>> import numpy as np
    >>> normalize_log(np.array([[0.0, np.log(3.0)], [-np.inf, -np.inf]])).round(6).tolist()
    [[0.25, 0.75], [0.5, 0.5]]
    """
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


def _has_string_names(X) -> bool:
    return isinstance(X, pd.DataFrame) and X.shape[1] > 0 and \
        all(isinstance(c, str) for c in X.columns)


def _as_frame(X, who: str = "the classifier") -> pd.DataFrame:
    """``X`` as a DataFrame, refusing sparse, complex, non-2-D, empty and inf input.

    NaN / None cells are kept: every classifier fits with missing values (see the
    policy in :class:`~bnexplore.data.DiscreteData`) and sums them out at predict time.
    """
    frame = _as_2d_frame(X, who)
    if frame.shape[0] == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape={frame.shape}) while a minimum of 1 "
                         f"is required.")
    for c in frame.columns:
        s = frame[c]
        if pd.api.types.is_float_dtype(s.dtype) and not isinstance(s.dtype, pd.CategoricalDtype):
            inf = np.isinf(s.to_numpy(dtype=float))
            if inf.any():
                raise ValueError(f"X contains inf in column {str(c)!r} (first at row "
                                 f"{int(np.argmax(inf))}): features must be discrete labels")
    return frame


class DiscreteClassifier(ClassifierMixin, BaseEstimator):
    """Base class: discrete features in, class probabilities out (columns follow ``classes_``).

    Subclasses store their constructor arguments unchanged, validate them in ``fit``,
    call :meth:`_fit_data` to get the training data (class as the last column) and
    :meth:`_encode` at predict time.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted class labels; ``predict_proba`` columns follow this order.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` was a DataFrame with string column names.
    data_ : bnexplore.data.DiscreteData
        The training data, the class last (named ``"__class__"``).
    """

    #: name given to the class column inside ``data_``
    class_column = "__class__"

    #: checks of the constructor parameters, run once at the edge of ``fit`` (merged with
    #: the subclasses' own, see :func:`bnexplore._validation.validate_params`)
    _parameter_constraints: dict = {"handle_unknown": Options(*HANDLE_UNKNOWN)}

    def _reset(self) -> None:
        """Forget every fitted attribute (names ending in ``_``) of an earlier fit."""
        for k in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, k)

    def _check_y(self, y, n_rows: int) -> np.ndarray:
        who = type(self).__name__
        if y is None:
            raise ValueError(f"{who} requires y to be passed, but the target y is None")
        if _sparse.issparse(y):
            raise TypeError(f"{who} does not accept a sparse y: pass a 1-D array of labels")
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            warnings.warn("A column-vector y was passed when a 1d array was expected. Please change "
                          "the shape of y to (n_samples,), for example using ravel().",
                          DataConversionWarning, stacklevel=3)
            y = y.ravel()
        elif y.ndim != 1:
            raise ValueError(f"y should be a 1d array of class labels, got an array of shape {y.shape}")
        if len(y) != n_rows:
            raise ValueError(f"X has {n_rows} rows but y has {len(y)}")
        miss = pd.isna(pd.Series(y)).to_numpy()
        if miss.any():
            raise ValueError(f"y has {int(miss.sum())} missing labels (first at row "
                             f"{int(np.argmax(miss))}): drop those rows")
        try:
            kind = type_of_target(y, input_name="y")
        except ValueError as e:
            raise ValueError(f"Unknown label type: {e}") from None
        if kind == "continuous":
            raise ValueError("Unknown label type: continuous. y holds continuous values; a "
                             "classifier needs class labels (discretise the target first)")
        return y

    def _fit_data(self, X: MatrixLike, y: ArrayLike) -> DiscreteData:
        """Validate ``X, y`` and return training data with the class as the last column.

        Removes the fitted attributes of an earlier fit, then sets ``classes_``,
        ``n_features_in_``, ``feature_names_in_`` (DataFrame input only) and ``data_``.

        NaN / None cells are accepted and kept in ``data_``
        (``data_.missing`` marks them; see :class:`~bnexplore.data.DiscreteData` for
        the counting policy).
        """
        self._reset()
        validate_params(self)
        data = self._fit_fast(X, y)
        if data is not None:
            return data
        frame = _as_frame(X, type(self).__name__)
        y = self._check_y(y, len(frame))
        classes = np.unique(y)
        self._check_classes(classes)
        named = _has_string_names(X)
        labels = list(frame.columns) if isinstance(X, pd.DataFrame) else None
        frame = frame.copy()
        frame.columns = [str(c) for c in frame.columns]
        if self.class_column in frame.columns:
            raise ValueError(f"feature name {self.class_column!r} is reserved: rename that column")
        frame[self.class_column] = pd.Categorical(y, categories=classes)
        data = DiscreteData.from_frame(frame, target=self.class_column,
                                       missing="keep")
        self.classes_ = classes
        self.n_features_in_ = frame.shape[1] - 1
        if named:
            self.feature_names_in_ = np.array(list(X.columns), dtype=object)
        self._column_labels_ = labels   # None after array input
        self.data_ = data
        return data

    @staticmethod
    def _check_classes(classes: np.ndarray) -> None:
        if classes.size < 2:
            raise ValueError(f"y has a single class ({classes[0]!r}), i.e. only one class: a "
                             f"classifier needs at least two classes")

    def _fit_fast(self, X, y) -> DiscreteData | None:
        """:meth:`_fit_data` for input that is already codes (an integer array or a
        DataFrame of Categoricals, with integer or Categorical labels), or None."""
        yc = class_codes(y)
        if yc is None:
            return None
        coded = int_array_codes(X)
        if coded is not None:
            codes, states = coded
            mask, labels, names = None, None, [f"x{j}" for j in range(codes.shape[1])]
        else:
            coded = categorical_frame_codes(X)
            if coded is None:
                return None
            codes, states, mask = coded
            _check_unique_columns(X.columns)
            labels = list(X.columns)
            names = [str(c) for c in labels]
            if self.class_column in names:
                return None                              # the checked path says why
        classes, y_codes = yc
        if len(y_codes) != codes.shape[0]:
            return None
        self._check_classes(classes)
        n, m = codes.shape
        full = np.empty((n, m + 1), dtype=np.int32, order="F")
        full[:, :m] = codes
        full[:, m] = y_codes
        if mask is not None:
            mask = np.concatenate([mask, np.zeros((n, 1), dtype=bool)], axis=1)
        data = DiscreteData(full, names + [self.class_column], states + [classes.tolist()],
                            target=self.class_column, missing=mask)
        self.classes_ = classes
        self.n_features_in_ = m
        if labels is not None and all(isinstance(c, str) for c in labels):
            self.feature_names_in_ = np.array(labels, dtype=object)
        self._column_labels_ = labels
        self.data_ = data
        return data

    @property
    def _feature_names(self) -> list[str]:
        """Names of the features inside ``data_`` (``x0, x1, ...`` for array input)."""
        return self.data_.names[:-1]

    def _encode(self, X: MatrixLike) -> np.ndarray:
        """Integer codes (n, n_features) of new rows in the training coding.

        Columns are matched as in scikit-learn, except that a reordering is undone:

        * fitted on a DataFrame, a DataFrame with the same column labels (strings or
          not) is matched by label, in any order; other labels of the same kind raise
          a ``ValueError`` that lists the differences;
        * fitted with string column names, an array (or a DataFrame without string
          names) is matched by position with a ``UserWarning`` ("X does not have
          valid feature names");
        * fitted without string names, a DataFrame with string names is matched by
          position with a ``UserWarning`` ("X has feature names").

        Missing values (NaN / None) are coded ``-1``.  A category never seen in training
        is coded ``-1`` too with ``handle_unknown="missing"``; with ``"error"`` it raises
        a ``ValueError`` naming the column and the value.
        """
        check_is_fitted(self, "data_")
        Options(*HANDLE_UNKNOWN)(self.handle_unknown, "handle_unknown")   # set_params after fit
        labels = getattr(self, "_column_labels_", None)
        if not (isinstance(X, np.ndarray) and hasattr(self, "feature_names_in_")):
            codes = encode_rows(X, self.data_, labels)     # input that is already codes
            if codes is not None and (self.handle_unknown != "error" or codes.min(initial=0) >= 0):
                return codes
        who = type(self).__name__
        X_in = X
        X = _as_frame(X, who)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {who} is expecting "
                             f"{self.n_features_in_} features as input")
        names = self._feature_names
        named_fit = hasattr(self, "feature_names_in_")
        if isinstance(X_in, pd.DataFrame):
            cols = list(X.columns)
            if labels is not None and cols == labels:
                pass                                       # the columns of fit, in order
            elif labels is not None and set(cols) == set(labels):
                X = X[labels]           # the same labels in another order: match by label
            elif named_fit and not _has_string_names(X_in):
                warnings.warn(f"X does not have valid feature names, but {who} was fitted with "
                              f"feature names: its columns are matched by position to "
                              f"{list(self.feature_names_in_)}", UserWarning, stacklevel=3)
            elif not named_fit and _has_string_names(X_in):
                warnings.warn(f"X has feature names, but {who} was fitted without feature "
                              f"names: its columns are matched by position", UserWarning,
                              stacklevel=3)
            elif labels is not None:
                unseen = [c for c in cols if c not in labels]
                lost = [c for c in labels if c not in cols]
                msg = "The feature names should match those that were passed during fit.\n"
                if unseen:
                    msg += "Feature names unseen at fit time:\n" + "".join(f"- {c}\n" for c in unseen)
                if lost:
                    msg += "Feature names seen at fit time, yet now missing:\n" + \
                        "".join(f"- {c}\n" for c in lost)
                raise ValueError(msg + f"X has columns {unseen} not seen in fit, and lacks "
                                       f"{lost}: pass the columns used in fit {labels} (in "
                                       f"any order), or an array to match them by position")
        elif named_fit:
            warnings.warn(f"X does not have valid feature names, but {who} was fitted with "
                          f"feature names: its columns are matched by position to "
                          f"{list(self.feature_names_in_)}", UserWarning, stacklevel=3)
        X = X.set_axis(names, axis=1)
        codes = self.data_.encode(X, unseen="missing")
        if self.handle_unknown == "error":
            self._raise_unseen(X, codes)
        return codes

    def _raise_unseen(self, X: pd.DataFrame, codes: np.ndarray) -> None:
        """With ``handle_unknown="error"``: name the first category never seen in training."""
        neg = codes < 0
        if not neg.any():
            return
        unseen = neg & ~X.isna().to_numpy()
        if unseen.any():
            j = int(np.argmax(unseen.any(axis=0)))
            i = int(np.argmax(unseen[:, j]))
            name = X.columns[j]
            shown = self._column_labels_[j] if getattr(self, "_column_labels_", None) else name
            raise ValueError(
                f"column {str(shown)!r} has value {X.iloc[i, j]!r} never seen in training (row {i}; "
                f"known: {list(self.data_.states[j])}); pass handle_unknown='missing' to "
                f"{type(self).__name__} to sum such values out like missing ones")

    def _joint_log_proba(self, codes: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def predict_joint_log_proba(self, X: MatrixLike) -> np.ndarray:
        """``log P(x_observed, c)`` of every row and class under the fitted model.

        Missing values (NaN / None, and unseen categories with
        ``handle_unknown="missing"``) are summed out exactly: the result equals the
        log-sum-exp, over the states of the missing features, of the completed rows.
        ``predict_proba`` is its softmax over the classes.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Natural logs; columns follow ``classes_``.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from bnexplore.classifiers import NaiveBayes
        >>> X = pd.DataFrame({"a": list("xxyy"), "b": list("uvuv")})
        >>> clf = NaiveBayes().fit(X, [0, 0, 1, 1])
        >>> full = clf.predict_joint_log_proba(pd.DataFrame({"a": ["x", "x"], "b": ["u", "v"]}))
        >>> part = clf.predict_joint_log_proba(pd.DataFrame({"a": ["x"], "b": [None]}))
        >>> bool(np.allclose(part[0], np.logaddexp(full[0], full[1])))
        True
        """
        return self._joint_log_proba(self._encode(X))

    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """``P(class | x_observed)``: the softmax of :meth:`predict_joint_log_proba`.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``; rows sum to 1.
        """
        return normalize_log(self.predict_joint_log_proba(X))

    def predict(self, X: MatrixLike) -> np.ndarray:
        """Most probable class of every row (the argmax of :meth:`predict_proba`).

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels taken from ``classes_``.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def predict_log_proba(self, X: MatrixLike) -> np.ndarray:
        """Natural log of :meth:`predict_proba` (``-inf`` for impossible classes)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True   # discrete features: labels or small integers
        tags.input_tags.allow_nan = True     # NaN / None is a missing value (see each Notes)
        tags.input_tags.string = True
        tags.target_tags.required = True
        return tags
