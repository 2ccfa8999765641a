"""Raw columns (NumPy or pandas; numbers, booleans, categories, strings) to one numeric matrix.

Numeric and boolean columns keep their values; categorical columns become integer codes
``0..C-1`` into a stored category list. The same encoding is replayed at predict time, and a
category never seen in fit is an error rather than a silent guess.

Missing values: in a numeric column (NaN, ``None``, ``pandas.NA``) they become NaN when the
encoder allows them (``allow_nan``: the estimators that route missing values), and are an error
naming the column otherwise. In a categorical column they are always an error: give them a
category of their own first (``fillna("missing")``), which a categorical split then treats
like any other category.

Dates: a datetime, period or timedelta column is refused; so is a text column of dates (see
:mod:`exactree.data.columns`) unless it is named in ``categorical``.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .columns import check_categorical, dates_error

#: The estimators whose splits route missing values (NaN) natively.
NAN_ESTIMATORS = "OptimalTreeClassifier and SparseTreeClassifier"
#: Advice appended to every missing-value error of an estimator without them.
IMPUTE = ("this estimator does not handle missing values: impute them first (e.g. "
          f"sklearn.impute.SimpleImputer), drop those rows, or use {NAN_ESTIMATORS}, which "
          "route missing values natively")
#: Advice for a missing value in a categorical column.
CATEGORY_NA = ("missing values are handled in numeric columns only: give them a category of "
               "their own first (e.g. X[column].fillna('missing')), or convert a column of "
               "numbers to a numeric dtype")
_TIME_TYPES = (datetime.date, datetime.time, datetime.timedelta, np.datetime64, np.timedelta64)


@dataclass(frozen=True)
class Column:
    """One input column: its name and, for a categorical column, its categories in code order."""

    name: str
    categories: tuple[Any, ...] | None = None

    @property
    def is_categorical(self) -> bool:
        return self.categories is not None


def _is_dataframe(X: Any) -> bool:
    return hasattr(X, "dtypes") and hasattr(X, "columns") and hasattr(X, "iloc")


def _columns_of(X: Any) -> tuple[list[np.ndarray], list[str], list[bool]]:
    """Split input into per-column arrays, names and 'holds non-numbers' flags."""
    if _is_dataframe(X):
        from pandas.api.types import is_numeric_dtype

        for name, dtype in zip(X.columns, X.dtypes):
            if getattr(dtype, "kind", "") in "mM" or str(dtype).startswith(("datetime", "period")):
                raise dates_error(str(name), opt_in=None)  # (no way to keep a dtype's dates)
        cats = [not is_numeric_dtype(dtype) for dtype in X.dtypes]
        arrays = [X.iloc[:, j].to_numpy(dtype=object) if cat else _numeric_column(X.iloc[:, j])
                  for j, cat in enumerate(cats)]
        return arrays, [str(c) for c in X.columns], cats
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
    names = [f"x{j}" for j in range(X.shape[1])]
    if X.dtype.kind in "mM":
        raise dates_error("x0", opt_in=None)
    if X.dtype.kind in "biuf":
        return [X[:, j] for j in range(X.shape[1])], names, [False] * X.shape[1]
    if X.dtype.kind not in "OUS":
        raise ValueError(f"X has unsupported dtype {X.dtype}")
    arrays, cats = [], []
    for j in range(X.shape[1]):
        try:
            arrays.append(X[:, j].astype(np.float64))
            cats.append(False)
        except (TypeError, ValueError):
            present = [v for v in X[:, j].tolist() if not _is_missing(v)]
            if all(isinstance(v, str) for v in present):
                arrays.append(X[:, j].astype(object))
                cats.append(True)
            elif len(present) < X.shape[0]:  # numbers and None / pandas.NA
                arrays.append(_with_nan(X[:, j]))
                cats.append(False)
            else:
                raise  # neither numbers nor category strings
    return arrays, names, cats


def _numeric_column(series: Any) -> np.ndarray:
    """A pandas numeric column as NumPy values; ``pandas.NA`` of a nullable dtype becomes NaN."""
    if getattr(series.dtype, "na_value", None) is not None:  # a pandas extension dtype
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    return series.to_numpy()


def _with_nan(values: np.ndarray) -> np.ndarray:
    """An object column of numbers and missing values (``None``, ``pandas.NA``) as float64."""
    out = np.full(len(values), np.nan)
    for i, v in enumerate(values.tolist()):
        if not _is_missing(v):
            out[i] = float(v)
    return out


def _is_missing(v: Any) -> bool:
    if v is None:
        return True
    try:
        return bool(v != v)  # NaN and NaT differ from themselves
    except TypeError:  # pandas.NA refuses to be a bool
        return True


def nonfinite_error(values: np.ndarray, finite: np.ndarray, column: str,
                    estimator: str | None = None) -> ValueError:
    """The error for the first NaN or infinity in a numeric column (``finite`` its mask);
    ``estimator`` names the estimator that refuses NaN."""
    row = int(np.flatnonzero(~finite)[0])
    if np.isnan(values[row]):
        advice = IMPUTE if estimator is None else IMPUTE.replace("this estimator", estimator)
        return ValueError(f"X contains NaN in column {column} (row {row}); " + advice)
    return ValueError(f"X contains infinity in column {column} (row {row}); replace it with a "
                      "finite value")


_numeric: tuple[Column, ...] = ()  # Column(f"x{j}"), made once (they are immutable)


def _numeric_columns(n: int) -> list[Column]:
    """The first ``n`` numeric columns of an array without names: ``x0, x1, ...`` (a frozen
    dataclass costs about a microsecond to make, per column and fit)."""
    global _numeric
    made = _numeric
    if len(made) < n:  # a new tuple, not appends: threads may race here
        made = _numeric = made + tuple(Column(f"x{j}") for j in range(len(made), n))
    return list(made[:n])


class FeatureEncoder:
    """Learns which columns are categorical and their categories; maps input to floats.

    Parameters
    ----------
    categorical : sequence of int or str, optional
        Columns to treat as categorical even though they hold numbers (e.g. ordinal codes).
        pandas ``category``/string/object columns are categorical anyway, but those not named
        here are checked (:func:`~exactree.data.columns.check_categorical`): dates written as
        text are refused and ID-like columns draw a
        :class:`~exactree.data.columns.HighCardinalityWarning`. Naming a column here says
        its categories are meant, and skips both checks.
    allow_nan : bool, default=False
        Keep missing values of numeric columns as NaN (else they are an error).
    estimator : str, optional
        The estimator's name, for the error when ``allow_nan`` is off.
    """

    def __init__(self, categorical: Sequence[int | str] | None = None, allow_nan: bool = False,
                 estimator: str | None = None) -> None:
        self.categorical = categorical
        self.allow_nan = allow_nan
        self.estimator = estimator

    def fit_transform(self, X: Any) -> np.ndarray:
        if (type(X) is np.ndarray and X.ndim == 2 and X.dtype.kind in "biuf"
                and self.categorical is None):
            self.columns_ = _numeric_columns(X.shape[1])  # what the loop below gives
            return self.transform(X)
        arrays, names, cats = _columns_of(X)
        forced = set()
        for c in self.categorical or ():
            if isinstance(c, str):
                if c not in names:
                    raise ValueError(f"categorical column {c!r} is not in X")
                forced.add(names.index(c))
            elif not 0 <= int(c) < len(names):
                raise ValueError(f"categorical column index {c} is out of range")
            else:
                forced.add(int(c))
        self.columns_: list[Column] = []
        for j, (values, name) in enumerate(zip(arrays, names)):
            if cats[j] or j in forced:
                values = np.asarray(values, dtype=object)
                listed = values.tolist()
                for i, v in enumerate(listed):
                    if _is_missing(v):
                        raise ValueError(f"column {name!r} is categorical and contains missing "
                                         f"values (row {i}); " + CATEGORY_NA)
                if any(isinstance(v, _TIME_TYPES) for v in listed):
                    raise dates_error(name, opt_in=None)
                dtype_cats = getattr(X.dtypes.iloc[j], "categories", None) if _is_dataframe(X) else None
                distinct = set(listed)
                if dtype_cats is not None:
                    categories = tuple(dtype_cats)
                else:
                    try:
                        categories = tuple(sorted(distinct))
                    except TypeError as e:
                        raise ValueError(f"column {name!r} mixes values that cannot be ordered") from e
                if j not in forced:  # a column named in `categorical` is meant as categories
                    check_categorical(name, distinct, len(listed), stacklevel=4)
                self.columns_.append(Column(name, categories))
            else:
                self.columns_.append(Column(name))
        return self.transform(X)

    def transform(self, X: Any) -> np.ndarray:
        if (type(X) is np.ndarray and X.ndim == 2 and X.dtype.kind in "biuf"
                and X.shape[1] == len(self.columns_)
                and not any(c.is_categorical for c in self.columns_)):
            # A numeric matrix: one copy and one check for all columns (the column loop below
            # costs microseconds per column); the loop still names a column with a bad value.
            out = np.array(X, dtype=np.float64, order="C")
            if not (np.isinf(out).any() if self.allow_nan else not np.isfinite(out).all()):
                return out
        arrays, names, _ = _columns_of(X)
        if len(arrays) != len(self.columns_):
            raise ValueError(f"X has {len(arrays)} features, but the model was fitted with "
                             f"{len(self.columns_)}")
        n = len(arrays[0]) if arrays else 0
        out = np.empty((n, len(arrays)), np.float64)
        for j, (values, col) in enumerate(zip(arrays, self.columns_)):
            if col.is_categorical:
                index = {c: i for i, c in enumerate(col.categories)}
                codes = [index.get(v, -1) for v in np.asarray(values, dtype=object).tolist()]
                out[:, j] = codes
                if n and out[:, j].min() < 0:
                    row = int(np.argmax(out[:, j] < 0))
                    bad = np.asarray(values, dtype=object)[row]
                    if _is_missing(bad):
                        raise ValueError(f"column {col.name!r} is categorical and contains "
                                         f"missing values (row {row}); " + CATEGORY_NA)
                    raise ValueError(f"column {col.name!r} holds category {bad!r} not seen in fit")
            else:
                try:
                    out[:, j] = np.asarray(values, dtype=np.float64)
                except (TypeError, ValueError) as e:
                    raise ValueError(f"column {col.name!r} is numeric in fit but holds non-numbers") from e
                finite = np.isfinite(out[:, j]) | (np.isnan(out[:, j]) & self.allow_nan)
                if not np.all(finite):
                    raise nonfinite_error(out[:, j], finite, repr(col.name), self.estimator)
        return out

    @property
    def categories_(self) -> list[tuple[Any, ...] | None]:
        return [c.categories for c in self.columns_]
