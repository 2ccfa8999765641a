"""Encoded columns to binary features for the solvers that split on 0/1 tests.

Numeric columns give threshold tests ``x <= t``; categorical columns give equality tests
``x == category`` and, with ``categorical_splits="subset"``, also membership tests ``x in S``
for every way of parting a column's categories in two (one test per pair ``S | not S``, the
``S`` that leaves out the last category; those with one category on a side are equality
tests). A binary feature is *true* when its test holds.

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

Missing values (NaN) in a numeric column
    Thresholds come from the column's non-missing values, and every threshold test comes twice:
    ``x <= t or missing`` and ``x <= t`` (missing false); one more test, ``x is not missing``
    (held as ``x <= DBL_MAX`` with missing false), splits the missing rows from all the others.
    A tree optimal over these features is optimal over every tree whose splits each send the
    missing values of their column to one side. ``missing_`` records per feature which side a
    missing value takes (:data:`MISSING_TRUE`, :data:`MISSING_FALSE`, or :data:`NO_MISSING` for
    columns without missing values at fit time).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from ..tree.tree import NOT_MISSING
from .encoding import Column
from .validation import check_deadline

LE, EQ, IN = 0, 1, 2  # tests; an IN test's value is the bit mask of its categories' codes
#: Most categories of a column whose two-group splits ``categorical_splits="subset"`` searches:
#: 2**(C-1) - 1 tests, 511 at ten categories.
MAX_SUBSET_CATEGORIES = 10
#: ``missing_`` values: no missing values at fit time; missing makes the test true; false.
NO_MISSING, MISSING_TRUE, MISSING_FALSE = 0, 1, 2
# With a deadline, columns are sorted (and binary features computed) this many cells at a time,
# with a look at the clock between blocks: some tens of milliseconds of work each.
DEADLINE_CELLS = 1 << 18


def _subset_masks(col: Column) -> np.ndarray:
    """The ``IN`` tests of a categorical column of more than three categories: the bit masks
    of every set of two or more of its first ``C - 1`` category codes that leaves two or more
    categories out (the other two-group splits are its equality tests)."""
    C = len(col.categories)
    if C > MAX_SUBSET_CATEGORIES:
        raise ValueError(f"column {col.name!r} has {C} categories: categorical_splits='subset' "
                         f"searches every two-group split of at most {MAX_SUBSET_CATEGORIES} "
                         "categories (2**(C-1) - 1 tests); merge categories or use "
                         "categorical_splits='equality'")
    masks = np.arange(1, 1 << (C - 1), dtype=np.int64)
    size = np.array([bin(m).count("1") for m in masks.tolist()])
    return masks[(size >= 2) & (size <= C - 2)].astype(np.float64)


def true_codes(op: int, value: float, n_codes: int) -> list[bool]:
    """Per category code ``0..n_codes-1``: whether the category test ``op`` (``EQ`` or
    ``IN``) of ``value`` (a code, or a bit mask of codes) holds for it."""
    v = int(value)
    if op == IN:
        return [bool(v >> code & 1) for code in range(n_codes)]
    return [code == v for code in range(n_codes)]


def in_subset(col: Column, mask: float) -> list:
    """The categories of ``col`` in an ``IN`` test's bit mask, in code order."""
    return [c for c, hold in zip(col.categories, true_codes(IN, mask, len(col.categories)))
            if hold]


def _safe_midpoints(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Thresholds between ``lo < hi``: the midpoint, or ``lo`` where rounding would not keep
    ``lo <= t < hi`` (halves first: no overflow near the float maximum)."""
    mids = lo / 2 + hi / 2
    return np.where((lo <= mids) & (mids < hi), mids, lo)


def _every_midpoint(V: np.ndarray, want_rank: bool) -> tuple[list[np.ndarray], np.ndarray | None]:
    """Every midpoint of each row of ``V`` (one numeric column per row, all at once: a few array
    calls instead of several per column) and, with ``want_rank``, each value's rank among its
    row's distinct values (the number of thresholds below it). See :func:`_midpoints`."""
    flat, counts, rank = _midpoints(V, want_rank)
    return _split(flat, counts), rank


def _split(flat: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    """``flat`` cut into consecutive pieces of ``counts`` entries."""
    ends = np.cumsum(counts).tolist()
    return [flat[e - c:e] for c, e in zip(counts.tolist(), ends)]


def _midpoints(V: np.ndarray, want_rank: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """:func:`_every_midpoint` as ``(every row's midpoints, one row after the other; their
    number per row; ranks or None)``.

    0/1 rows (binary data) need no sort. Other rows are argsorted once (see
    :func:`_sorted_midpoints`) and a compiled pass over the sorted values gives the rest."""
    V = np.ascontiguousarray(V, dtype=np.float64)  # one compiled specialisation
    zero_one = _zero_one_rows(V)
    if not zero_one.any():
        return _sorted_midpoints(V, want_rank)
    if zero_one.all():
        return _zero_one_midpoints(V, want_rank)
    binary = V if zero_one.all() else V[zero_one]
    ones = binary.sum(axis=1)
    both = (ones > 0) & (ones < V.shape[1])
    mids = [np.array([0.5]) if b else np.empty(0) for b in both.tolist()]
    rank = np.empty(V.shape, np.int64) if want_rank else None
    if want_rank:
        rank[zero_one] = binary
        rank[np.flatnonzero(zero_one)[ones == V.shape[1]]] = 0  # all ones: no threshold
    if not zero_one.all():
        rest_flat, rest_counts, rest_rank = _sorted_midpoints(V[~zero_one], want_rank)
        mids += _split(rest_flat, rest_counts)
        order = np.r_[np.flatnonzero(zero_one), np.flatnonzero(~zero_one)]
        mids = [mids[i] for i in np.argsort(order)]
        if want_rank:
            rank[~zero_one] = rest_rank
    return np.concatenate(mids), np.array([len(m) for m in mids], np.int64), rank


def _zero_one_midpoints(V: np.ndarray, want_rank: bool
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """:func:`_midpoints` for float64 rows of 0s and 1s only: the threshold 0.5 in each row
    holding both values, and a value's rank is the value itself (0 in a row of ones)."""
    ones = V.sum(axis=1)
    full = ones == V.shape[1]
    counts = ((ones > 0) & ~full).astype(np.int64)
    rank = None
    if want_rank:
        rank = V.astype(np.int64)
        if full.any():
            rank[full] = 0  # all ones: no threshold
    return np.full(int(counts.sum()), 0.5), counts, rank


@njit(cache=True)
def _zero_one_rows(V):
    """Whether each row of ``V`` holds only 0s and 1s (a row is left at its first other
    value)."""
    p, n = V.shape
    out = np.ones(p, np.bool_)
    for j in range(p):
        for k in range(n):
            v = V[j, k]
            if v != 0 and v != 1:
                out[j] = False
                break
    return out


@njit(cache=True)
def _argsorted_midpoints(V, order):
    """Every midpoint of each row of ``V`` (``order``: each row's argsort) and each value's
    rank among its row's distinct values: ``(missing, midpoints of all rows, in row order;
    their number per row; ranks)``. The midpoints are :func:`_safe_midpoints`' (the same
    floats). ``missing``: some row holds NaN (NumPy sorts it last); the rest is then
    meaningless."""
    p, n = V.shape
    counts = np.zeros(p, np.int64)
    for j in range(p):
        if n and np.isnan(V[j, order[j, n - 1]]):
            return True, np.empty(0), counts, np.empty((0, 0), np.int64)
    for j in range(p):
        for k in range(1, n):
            if V[j, order[j, k]] != V[j, order[j, k - 1]]:
                counts[j] += 1
    mids = np.empty(counts.sum())
    rank = np.empty((p, n), np.int64)
    at = 0
    for j in range(p):
        r = 0
        if n:
            rank[j, order[j, 0]] = 0
        for k in range(1, n):
            lo, hi = V[j, order[j, k - 1]], V[j, order[j, k]]
            if hi != lo:
                mid = lo / 2 + hi / 2
                mids[at] = mid if lo <= mid < hi else lo
                at += 1
                r += 1
            rank[j, order[j, k]] = r
    return False, mids, counts, rank


@njit(cache=True)
def _position_keys(bits, k):
    """Sort keys of float64 values (``bits``: their bit patterns): the value's order-preserving
    unsigned integer with its position in its row in place of the ``k`` lowest bits."""
    p, n = bits.shape
    sign = np.uint64(1) << np.uint64(63)
    low = (np.uint64(1) << np.uint64(k)) - np.uint64(1)
    keys = np.empty((p, n), np.uint64)
    for j in range(p):
        for i in range(n):
            b = bits[j, i]
            b = ~b if b & sign else b | sign  # negative values reversed, below the positive
            keys[j, i] = (b & ~low) | np.uint64(i)
    return keys


@njit(cache=True)
def _keyed_midpoints(keys, k, V):
    """:func:`_argsorted_midpoints` of ``V`` from its rows' sorted :func:`_position_keys`
    (the same floats: ``ok``, midpoints, their number per row, ranks), each row's values
    gathered once; not ``ok`` when the keys did not sort a row's values (two values differ
    only in the ``k`` bits given up, or NaN)."""
    p, n = keys.shape
    low = (np.uint64(1) << np.uint64(k)) - np.uint64(1)
    order = np.empty(n, np.int64)
    S = np.empty(n)
    counts = np.zeros(p, np.int64)
    mids = np.empty(p * (n - 1))
    rank = np.empty((p, n), np.int64)
    at = 0
    for j in range(p):
        for i in range(n):
            order[i] = keys[j, i] & low
            S[i] = V[j, order[i]]
        rank[j, order[0]] = 0
        r = 0
        for i in range(1, n):
            lo, hi = S[i - 1], S[i]
            if not lo <= hi:
                return False, mids[:0], counts, rank
            if hi != lo:
                mid = lo / 2 + hi / 2
                mids[at] = mid if lo <= mid < hi else lo
                at += 1
                r += 1
            rank[j, order[i]] = r
        counts[j] = r
    return True, mids[:at].copy(), counts, rank


# Rows up to this long are sorted by position keys (see _sorted_rows_midpoints): 20 bits of
# position leave 32 of the 52 mantissa bits to order the values by.
KEY_SORT_MAX = 1 << 20


def _sorted_rows_midpoints(V: np.ndarray
                           ) -> tuple[bool, np.ndarray, np.ndarray, np.ndarray]:
    """``_argsorted_midpoints(V, np.argsort(V, axis=1))`` for the C-contiguous float64 ``V``
    (the same values). NumPy sorts 64-bit integers 2-3x faster than it argsorts (both
    vectorised): the values' bits with their positions in the low bits are sorted instead,
    and NumPy's argsort is the fallback where that did not sort the values (values equal in
    all but their last bits, NaN)."""
    n = V.shape[1]
    if 2 <= n <= KEY_SORT_MAX:
        k = (n - 1).bit_length()
        keys = _position_keys(V.view(np.uint64), k)
        keys.sort(axis=1)
        ok, flat, counts, rank = _keyed_midpoints(keys, k, V)
        if ok:
            return False, flat, counts, rank
    # (NumPy's vectorised argsort beat a compiled radix sort on the float bits at every length
    # measured, 1k-300k values, by 1.0-3.7x.)
    return _argsorted_midpoints(V, np.argsort(V, axis=1))


def _sorted_midpoints(V: np.ndarray, want_rank: bool
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """:func:`_midpoints` for float64 rows that are not all 0/1."""
    # Ties need no stable order: they share a rank.
    flat, counts, rank = _sorted_rows_midpoints(V)[1:]
    return flat, counts, rank if want_rank else None


def _boundary_midpoints(values: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Midpoints whose two neighbouring values do not both hold one shared class."""
    distinct = np.unique(values)
    if len(distinct) < 2:
        return np.empty(0)
    mids = _safe_midpoints(distinct[:-1], distinct[1:])
    order = np.argsort(values, kind="stable")
    c = y[order]
    start = np.searchsorted(values[order], distinct)
    # A value is "pure" when all its rows share one class; record that class (or -1).
    lo = np.minimum.reduceat(c, start)
    hi = np.maximum.reduceat(c, start)
    pure_class = np.where(lo == hi, lo, -1)
    keep = (pure_class[:-1] < 0) | (pure_class[:-1] != pure_class[1:])
    return mids[keep]


def _quantile_subset(candidates: np.ndarray, values: np.ndarray, w: np.ndarray,
                     k: int) -> np.ndarray:
    if len(candidates) <= k:
        return candidates
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(w[order]) / w.sum()
    qs = values[order][np.searchsorted(cum, np.arange(1, k + 1) / (k + 1))]
    return np.unique(candidates[np.clip(np.searchsorted(candidates, qs), 0, len(candidates) - 1)])


class Binarizer:
    """Learns binary features from an encoded matrix (see :mod:`exactree.data.encoding`).

    After :meth:`fit`: ``column_`` (source column of each feature), ``op_`` (``LE``, ``EQ`` or
    ``IN``), ``value_`` (threshold, category code, or the bit mask of an ``IN`` test's codes),
    ``missing_`` (the side missing values take, see the
    module docstring), ``missing_columns_`` (per column: held missing values at fit time),
    ``names_`` and ``exact_`` (whether optimality over the raw values is kept).

    The features of a column with missing values come as two runs: its thresholds with
    ``MISSING_TRUE``, then the same thresholds and :data:`NOT_MISSING` with ``MISSING_FALSE``.
    """

    def __init__(self, thresholds: str = "exact", max_thresholds: int | None = None,
                 categorical_splits: str = "equality") -> None:
        if thresholds not in ("exact", "boundary"):
            raise ValueError(f"thresholds must be 'exact' or 'boundary', got {thresholds!r}")
        if categorical_splits not in ("equality", "subset"):
            raise ValueError("categorical_splits must be 'equality' or 'subset', got "
                             f"{categorical_splits!r}")
        if max_thresholds is not None and (int(max_thresholds) != max_thresholds
                                           or max_thresholds < 1):
            raise ValueError("max_thresholds must be a positive integer or None, got "
                             f"{max_thresholds!r}")
        self.thresholds = thresholds
        self.max_thresholds = max_thresholds
        self.categorical_splits = categorical_splits

    def fit(self, X: np.ndarray, y: np.ndarray, columns: Sequence[Column],
            sample_weight: np.ndarray | None = None, keep_ranks: bool = False,
            deadline: float | None = None) -> Binarizer:
        """Learn the binary features. ``keep_ranks``: also keep, in ``ranks``, each row's
        threshold rank for numeric columns that use every midpoint (rows x columns integers:
        clear it once used). ``deadline`` (a ``time.perf_counter()`` value): past it, raise
        :class:`~exactree.data.validation.TimeLimitReached` (the clock is read between blocks
        of about :data:`DEADLINE_CELLS` cells and between columns)."""
        self.exact_ = self.thresholds == "exact"
        # Thresholds per column when every column is numeric without missing values and
        # uses every midpoint: its features are then one run per column (LE, NO_MISSING), a
        # shortcut for data.ordered. None otherwise.
        self._numeric_runs: list[int] | None = None
        self.ranks: dict[int, np.ndarray] = {}
        numeric = [j for j, col in enumerate(columns) if not col.is_categorical]
        every_column = len(numeric) == len(columns)  # then no fancy-indexed copies of X
        if (every_column and self.exact_ and self.max_thresholds is None and keep_ranks
                and len(X) > 0 and X.dtype == np.float64
                and (deadline is None or X.size <= DEADLINE_CELLS)):
            # Numeric columns: sorted at once, then missing values, midpoints and ranks in a
            # compiled pass (_sorted_rows_midpoints; 0/1 columns, which need no sort, and
            # columns with missing values take the way below).
            check_deadline(deadline)
            V = np.ascontiguousarray(X.T)
            zero_one = _zero_one_rows(V)
            if zero_one.all():  # 0/1 data (no NaN): a threshold 0.5 per column that varies
                flat, counts, rank = _zero_one_midpoints(V, True)
                self.missing_columns_ = np.zeros(len(columns), bool)
                self._numeric_features(flat, counts, dict(enumerate(rank)), columns)
                return self
            if not zero_one.any():
                missing, flat, counts, rank = _sorted_rows_midpoints(V)
                if not missing:
                    self.missing_columns_ = np.zeros(len(columns), bool)
                    self._numeric_features(flat, counts, dict(enumerate(rank)), columns)
                    return self
        if every_column:
            nan = (np.isnan(X).any(axis=0) if len(X) else np.zeros(len(columns), bool))
            clean = numeric if not nan.any() else np.flatnonzero(~nan).tolist()
        else:
            nan = np.zeros(len(columns), bool)
            if numeric and len(X):
                nan[numeric] = np.isnan(X[:, numeric]).any(axis=0)
            clean = [j for j in numeric if not nan[j]]
        self.missing_columns_ = nan
        blocks = []  # (columns, their midpoints one after the other, how many each)
        ranks: dict[int, np.ndarray] = {}
        if self.exact_ and clean:
            # Blocks of columns when there is a clock to watch (one block on small data).
            step = len(clean) if deadline is None else max(1, DEADLINE_CELLS // max(len(X), 1))
            for start in range(0, len(clean), step):
                check_deadline(deadline)
                block = clean[start:start + step]
                if len(block) == len(columns):
                    V = X.T
                elif block[-1] - block[0] == len(block) - 1:
                    V = X[:, block[0]:block[-1] + 1].T  # consecutive columns: no fancy copy
                else:
                    V = X[:, block].T
                flat, counts, rank = _midpoints(V, keep_ranks)
                blocks.append((block, flat, counts))
                if keep_ranks:
                    ranks.update(zip(block, rank))
        if self.max_thresholds is None and len(clean) == len(columns) > 0 and self.exact_:
            # Every column numeric without missing values, every midpoint: one run of
            # thresholds per column, what the loop below gives without its microseconds per
            # column.
            check_deadline(deadline)
            if len(blocks) == 1:
                flat, counts = blocks[0][1:]
            else:
                flat = np.concatenate([flat for _, flat, _ in blocks])
                counts = np.concatenate([counts for _, _, counts in blocks])
            self._numeric_features(flat, counts, ranks, columns)
            return self
        every = {j: m for block, flat, counts in blocks
                 for j, m in zip(block, _split(flat, counts))}
        w = np.ones(len(X)) if sample_weight is None else sample_weight
        # per run of features: candidates, test, missing side, column
        value, op, missing, owner = [], [], [], []
        for j, col in enumerate(columns):
            check_deadline(deadline)
            if col.is_categorical:
                n_codes = 1 if len(col.categories) == 2 else len(col.categories)
                value.append(np.arange(n_codes if len(col.categories) > 1 else 0, dtype=np.float64))
                op.append(EQ)
                missing.append(NO_MISSING)
                owner.append(j)
                if self.categorical_splits == "subset" and len(col.categories) > 3:
                    value.append(_subset_masks(col))
                    op.append(IN)
                    missing.append(NO_MISSING)
                    owner.append(j)
                continue
            x, v, present = X[:, j], w, None
            if nan[j]:  # thresholds over the values that are there
                present = ~np.isnan(x)
                x, v = x[present], w[present]
            if j in every:
                cands = every[j]
            elif self.exact_:
                cands = _every_midpoint(x[None, :], False)[0][0] if len(x) else np.empty(0)
            else:
                cands = _boundary_midpoints(x, y if present is None else y[present])
            if self.max_thresholds is not None and len(cands) > self.max_thresholds:
                cands = _quantile_subset(cands, x, v, int(self.max_thresholds))
                self.exact_ = False
            elif j in ranks:
                # Every midpoint: a value's rank is the number of thresholds below it.
                self.ranks[j] = ranks[j]
            cands = np.asarray(cands, np.float64)
            if present is None:
                parts = [(cands, NO_MISSING)]
            else:  # "not missing" only splits when some value is there
                tail = [NOT_MISSING] if present.any() else []
                parts = [(cands, MISSING_TRUE), (np.append(cands, tail), MISSING_FALSE)]
            for cands, side in parts:
                value.append(cands)
                op.append(LE)
                missing.append(side)
                owner.append(j)
        sizes = [len(v) for v in value]
        self.column_ = np.repeat(np.array(owner, np.int64), sizes)
        self.op_ = np.repeat(np.array(op, np.int8), sizes)
        self.missing_ = np.repeat(np.array(missing, np.int8), sizes)
        self.value_ = np.concatenate(value) if value else np.zeros(0)
        self._columns = list(columns)
        return self

    def _numeric_features(self, value: np.ndarray, counts: np.ndarray,
                          ranks: dict[int, np.ndarray], columns: Sequence[Column]) -> None:
        """The features of numeric columns without missing values, every midpoint a
        threshold: ``value`` holds each column's thresholds, one column after the other
        (``counts`` each), ``ranks`` the rows' ranks if kept."""
        self._numeric_runs = counts.tolist()
        self.column_ = np.repeat(np.arange(len(columns), dtype=np.int64), counts)
        self.op_ = np.full(len(value), LE, np.int8)
        self.missing_ = np.full(len(value), NO_MISSING, np.int8)
        self.value_ = value
        self.ranks = ranks
        self._columns = list(columns)

    @property
    def names_(self) -> list[str]:
        """A readable name per binary feature (``col <= t``, ``col <= t or col is missing``,
        ``col is not missing`` or ``col == category``)."""
        names = []
        for j, o, v, m in zip(self.column_, self.op_, self.value_, self.missing_):
            col = self._columns[j]
            if o == EQ:
                names.append(f"{col.name} == {col.categories[int(v)]}")
            elif o == IN:
                names.append(f"{col.name} in {{{', '.join(str(c) for c in in_subset(col, v))}}}")
            elif m == MISSING_FALSE and v == NOT_MISSING:
                names.append(f"{col.name} is not missing")
            else:
                names.append(f"{col.name} <= {v:.6g}"
                             + (f" or {col.name} is missing" if m == MISSING_TRUE else ""))
        return names

    @property
    def n_features_out(self) -> int:
        return len(self.column_)

    @property
    def nbytes(self) -> int:
        """Bytes of the fitted arrays (one entry per binary feature, and any ``ranks``)."""
        arrays = (self.column_, self.op_, self.missing_, self.value_, *self.ranks.values())
        return int(sum(a.nbytes for a in arrays))

    def transform(self, X: np.ndarray, features: np.ndarray | None = None,
                  deadline: float | None = None) -> np.ndarray:
        """Boolean matrix ``(n_samples, n_binary_features)`` (only the columns ``features``
        when given). A missing value makes a threshold test true where ``missing_`` says
        ``MISSING_TRUE``, false otherwise. ``deadline``: as for :meth:`fit` (the features are
        then computed in blocks)."""
        if deadline is not None:
            chosen = (np.arange(self.n_features_out) if features is None
                      else np.asarray(features, np.int64))
            out = np.empty((len(X), len(chosen)), bool)
            step = max(1, DEADLINE_CELLS // max(len(X), 1))
            for start in range(0, len(chosen), step):
                check_deadline(deadline)
                out[:, start:start + step] = self.transform(X, chosen[start:start + step])
            return out
        sel = slice(None) if features is None else np.asarray(features, np.int64)
        column, op, value = self.column_[sel], self.op_[sel], self.value_[sel]
        cols = X[:, column]
        if getattr(self, "_numeric_runs", None) is not None:
            return cols <= value  # threshold tests only, no missing values (_numeric_features)
        out = np.where(op == LE, cols <= value, cols == value)
        subset = op == IN
        if subset.any():  # bit `code` of the mask (codes are small non-negative integers)
            codes = cols[:, subset].astype(np.int64)
            out[:, subset] = (value[subset].astype(np.int64) >> codes) & 1 == 1
        true_missing = self.missing_[sel] == MISSING_TRUE
        if true_missing.any():
            out[:, true_missing] |= np.isnan(cols[:, true_missing])
        return out
