"""Encoded columns to binary features for the solvers that split on 0/1 tests.

Numeric columns give threshold tests ``x <= t``; categorical columns give equality tests
``x == category``. A binary feature is *true* when its test holds.

Threshold candidates (``thresholds=``):

``"exact"`` (default)
    every midpoint between consecutive distinct values. A tree optimal over these features is
    optimal over the raw values: any threshold between the same two neighbours splits the data
    identically.
``"boundary"``
    only midpoints whose two neighbouring values do not both hold a single, shared class
    (Fayyad & Irani's boundary points). Exact for one split, *not* for deeper trees: a cut inside
    a run of same-class values can be needed when other features separate the run further down
    (``tests/data/test_data_layer.py`` holds such a data set). Reported as not exact.

``max_thresholds=k`` keeps at most ``k`` candidates per column, chosen at weighted quantiles;
that also gives up the guarantee, and ``exact_`` says so.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .encoding import Column

LE, EQ = 0, 1


def _midpoints(values: np.ndarray, y: np.ndarray, mode: str,
               want_rank: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """Candidate thresholds of one column and, with ``want_rank``, each value's rank among its
    distinct values (a second sort is cheaper than a binary search per row when they are many;
    a binary search in few values is cheaper than an argsort)."""
    distinct = np.unique(values)
    rank = None
    if want_rank:
        rank = (np.searchsorted(distinct, values) if len(distinct) <= 64
                else np.unique(values, return_inverse=True)[1])
    if len(distinct) < 2:
        return np.empty(0), rank
    lo, hi = distinct[:-1], distinct[1:]
    mids = lo / 2 + hi / 2  # no overflow near the float maximum
    mids = np.where((lo <= mids) & (mids < hi), mids, lo)  # rounding must keep lo <= t < hi
    if mode == "exact":
        return mids, rank
    order = np.argsort(values, kind="stable")
    c = y[order]
    start = np.searchsorted(values[order], distinct)
    # A value is "pure" when all its rows share one class; record that class (or -1).
    lo = np.minimum.reduceat(c, start)
    hi = np.maximum.reduceat(c, start)
    pure_class = np.where(lo == hi, lo, -1)
    keep = (pure_class[:-1] < 0) | (pure_class[:-1] != pure_class[1:])
    return mids[keep], rank


def _quantile_subset(candidates: np.ndarray, values: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
    if len(candidates) <= k:
        return candidates
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(w[order]) / w.sum()
    qs = values[order][np.searchsorted(cum, np.arange(1, k + 1) / (k + 1))]
    return np.unique(candidates[np.clip(np.searchsorted(candidates, qs), 0, len(candidates) - 1)])


class Binarizer:
    """Learns binary features from an encoded matrix (see :mod:`exactree.data.encoding`).

    After :meth:`fit`: ``column_`` (source column of each feature), ``op_`` (``LE`` or ``EQ``),
    ``value_`` (threshold or category code), ``names_`` and ``exact_`` (whether optimality over
    the raw values is kept).
    """

    def __init__(self, thresholds: str = "exact", max_thresholds: int | None = None) -> None:
        if thresholds not in ("exact", "boundary"):
            raise ValueError(f"thresholds must be 'exact' or 'boundary', got {thresholds!r}")
        if max_thresholds is not None and (int(max_thresholds) != max_thresholds or max_thresholds < 1):
            raise ValueError(f"max_thresholds must be a positive integer or None, got {max_thresholds!r}")
        self.thresholds = thresholds
        self.max_thresholds = max_thresholds

    def fit(self, X: np.ndarray, y: np.ndarray, columns: Sequence[Column],
            sample_weight: np.ndarray | None = None, keep_ranks: bool = False) -> Binarizer:
        """Learn the binary features. ``keep_ranks``: also keep, in ``ranks``, each row's
        threshold rank for numeric columns that use every midpoint (rows x columns integers:
        clear it once used)."""
        w = np.ones(len(X)) if sample_weight is None else sample_weight
        column, op, value = [], [], []
        self.exact_ = self.thresholds == "exact"
        self.ranks: dict[int, np.ndarray] = {}
        for j, col in enumerate(columns):
            if col.is_categorical:
                n_codes = 1 if len(col.categories) == 2 else len(col.categories)
                codes = np.arange(n_codes if len(col.categories) > 1 else 0, dtype=np.float64)
                column.append(np.full(len(codes), j)), op.append(np.full(len(codes), EQ))
                value.append(codes)
                continue
            cands, rank = _midpoints(X[:, j], y, self.thresholds,
                                     keep_ranks and self.thresholds == "exact")
            if self.max_thresholds is not None and len(cands) > self.max_thresholds:
                cands = _quantile_subset(cands, X[:, j], w, int(self.max_thresholds))
                self.exact_ = False
            elif rank is not None:
                # Every midpoint: a value's rank is the number of thresholds below it.
                self.ranks[j] = rank
            column.append(np.full(len(cands), j)), op.append(np.full(len(cands), LE))
            value.append(np.asarray(cands, np.float64))
        self.column_ = np.concatenate(column).astype(np.int64) if column else np.zeros(0, np.int64)
        self.op_ = np.concatenate(op).astype(np.int8) if op else np.zeros(0, np.int8)
        self.value_ = np.concatenate(value) if value else np.zeros(0)
        self._columns = list(columns)
        return self

    @property
    def names_(self) -> list[str]:
        """A readable name per binary feature (``col <= t`` or ``col == category``)."""
        names = []
        for j, o, v in zip(self.column_, self.op_, self.value_):
            col = self._columns[j]
            names.append(f"{col.name} == {col.categories[int(v)]}" if o == EQ
                         else f"{col.name} <= {v:.6g}")
        return names

    @property
    def n_features_out(self) -> int:
        return len(self.column_)

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Boolean matrix ``(n_samples, n_binary_features)``."""
        cols = X[:, self.column_]
        return np.where(self.op_ == LE, cols <= self.value_, cols == self.value_)
