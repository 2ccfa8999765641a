"""Input checks shared by every estimator: each failure names the problem."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d


class TimeLimitReached(Exception):
    """A fit's ``time_limit`` ran out before its search could start. Raised by the data layer's
    long loops (:func:`check_deadline`); the estimators catch it and return a single leaf with
    ``status_ == "time_limit"``."""


def check_deadline(deadline: float | None) -> None:
    """Raise :class:`TimeLimitReached` once ``time.perf_counter()`` has reached ``deadline``
    (None: no deadline)."""
    if deadline is not None and time.perf_counter() >= deadline:
        raise TimeLimitReached


def check_sample_weight(sample_weight: Any, n_samples: int) -> np.ndarray:
    """Weights as a float64 vector of length ``n_samples`` (ones when ``None``).

    Raises ``ValueError`` for a wrong shape, NaN/inf, negative values or an all-zero vector.
    """
    if sample_weight is None:
        return np.ones(n_samples, np.float64)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 0:
        w = np.full(n_samples, float(w))
    if w.shape != (n_samples,):
        raise ValueError(f"sample_weight must have shape ({n_samples},), got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight contains NaN or infinity")
    if np.any(w < 0):
        raise ValueError("sample_weight contains negative values")
    if not np.any(w > 0):
        raise ValueError("sample_weight is zero for every sample")
    return w


def _target_vector(y: Any) -> np.ndarray:
    """``y`` as a 1-D array (a single column is flattened with scikit-learn's warning)."""
    if y is None:
        raise ValueError("requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = column_or_1d(y, warn=True)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one target per row), got shape {y.shape}")
    return y


def is_number(v: Any) -> bool:
    """Whether ``float(v)`` works."""
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def check_regression_target(y: Any) -> np.ndarray:
    """``y`` as a finite float64 vector, or a ValueError naming what is wrong with it (None,
    wrong shape, non-numbers, missing values, infinity)."""
    y = _target_vector(y)
    if y.dtype.kind == "O":
        blank = [v is None or type(v).__name__ == "NAType" for v in y.tolist()]
        if any(blank):
            raise ValueError(f"y contains missing values (None or NA) at row {blank.index(True)}")
    if y.dtype.kind not in "biuf" and y.dtype.kind != "O":
        raise ValueError(f"y must hold numbers for a regressor, got dtype {y.dtype} (for "
                         "class labels use OptimalTreeClassifier)")
    try:
        out = y.astype(np.float64)
    except (TypeError, ValueError):
        bad = next(v for v in y.tolist() if not is_number(v))
        raise ValueError(f"y must hold numbers for a regressor, found {bad!r} (for class "
                         "labels use OptimalTreeClassifier)") from None
    finite = np.isfinite(out)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        what = "NaN" if np.isnan(out[row]) else "infinity"
        raise ValueError(f"y contains {what} (first at row {row}); a regression target must be "
                         "finite")
    return out


def encode_labels(y: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, y_index)``: sorted distinct labels and each row's index into them.

    Accepts any hashable labels (numbers, strings). Raises for regression targets, missing
    labels and a single class.
    """
    y = _target_vector(y)
    if y.dtype.kind == "O" and any(v is None or (isinstance(v, float) and np.isnan(v)) for v in y):
        raise ValueError("y contains missing labels (None or NaN)")
    if y.dtype.kind == "O" and len(y):
        inferred = np.asarray(y.tolist())  # e.g. integers in an object Series
        if inferred.dtype.kind in "biuf" and inferred.shape == y.shape:
            y = inferred
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity")
    try:
        if y.dtype.kind not in "biuUS":  # integers and strings are class labels already
            check_classification_targets(y)
        classes, y_index = _unique_inverse(y)
    except TypeError:  # e.g. strings and numbers in one object array
        kinds = sorted({type(v).__name__ for v in y.tolist()})
        raise ValueError(f"y mixes labels of types {', '.join(kinds)} that cannot be ordered; "
                         "use labels of one type (e.g. all strings)") from None
    if len(classes) < 2:
        only = classes[0].item() if isinstance(classes[0], np.generic) else classes[0]
        raise ValueError(
            f"y contains only one class ({only!r}); a classifier needs at least two classes"
        )
    return classes, y_index.astype(np.int64)


def _unique_inverse(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(y, return_inverse=True)``; integer labels of a small range are counted
    instead of sorted (a sort is most of a millisecond fit's label encoding)."""
    if y.dtype.kind in "iu" and len(y):
        low, high = int(y.min()), int(y.max())
        if high - low <= 4 * len(y) + 1024:
            offset = y - low if low else y
            counts = np.bincount(offset, minlength=high - low + 1)
            if counts.all():  # every label of the range present: the offsets are the indices
                return np.arange(low, high + 1, dtype=y.dtype), offset
            present = counts > 0
            classes = (np.flatnonzero(present) + low).astype(y.dtype)
            return classes, (np.cumsum(present) - 1)[offset]
    return np.unique(y, return_inverse=True)
