"""Validation, column encoding and binarisation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exactree.data import Binarizer, Column, FeatureEncoder, check_sample_weight, encode_labels
from exactree.data.binarize import EQ, LE


def test_sample_weight_errors():
    assert np.array_equal(check_sample_weight(None, 3), np.ones(3))
    with pytest.raises(ValueError, match="shape"):
        check_sample_weight([1, 2], 3)
    with pytest.raises(ValueError, match="NaN or infinity"):
        check_sample_weight([1, np.nan, 1], 3)
    with pytest.raises(ValueError, match="negative"):
        check_sample_weight([1, -1, 1], 3)
    with pytest.raises(ValueError, match="zero for every"):
        check_sample_weight([0, 0, 0], 3)


def test_labels_any_hashable_and_errors():
    classes, idx = encode_labels(["b", "a", "b"])
    assert list(classes) == ["a", "b"] and list(idx) == [1, 0, 1]
    with pytest.raises(ValueError, match="only one class"):
        encode_labels([1, 1, 1])
    with pytest.raises(ValueError, match="Unknown label type|continuous"):
        encode_labels([0.5, 1.5, 2.25])
    with pytest.raises(ValueError, match="missing"):
        encode_labels(np.array(["a", None], dtype=object))


def test_encoder_pandas_categories_strings_and_unknown_category():
    df = pd.DataFrame({
        "age": [30, 40, 50, 60],
        "colour": pd.Categorical(["red", "green", "red", "blue"], categories=["red", "green", "blue"]),
        "city": ["x", "y", "x", "y"],
        "member": [True, False, True, True],
    })
    enc = FeatureEncoder()
    Xe = enc.fit_transform(df)
    assert [c.name for c in enc.columns_] == ["age", "colour", "city", "member"]
    assert enc.columns_[1].categories == ("red", "green", "blue")  # dtype order kept
    assert enc.columns_[2].categories == ("x", "y")
    assert enc.columns_[0].categories is None and enc.columns_[3].categories is None
    assert np.array_equal(Xe[:, 1], [0, 1, 0, 2]) and np.array_equal(Xe[:, 3], [1, 0, 1, 1])
    bad = df.copy()
    bad["city"] = ["x", "z", "x", "y"]
    with pytest.raises(ValueError, match="category 'z' not seen in fit"):
        enc.transform(bad)
    with pytest.raises(ValueError, match="3 features"):
        enc.transform(df.iloc[:, :3])


def test_encoder_missing_values_and_forced_categorical():
    with pytest.raises(ValueError, match="missing"):
        FeatureEncoder().fit_transform(pd.DataFrame({"c": ["a", None, "b"]}))
    enc = FeatureEncoder(categorical=[0])
    Xe = enc.fit_transform(np.array([[3, 1.5], [1, 2.5], [3, 0.5]]))
    assert enc.columns_[0].categories == (1.0, 3.0) and np.array_equal(Xe[:, 0], [1, 0, 1])
    with pytest.raises(ValueError, match="out of range"):
        FeatureEncoder(categorical=[5]).fit_transform(np.zeros((2, 2)))


def test_binarizer_names_thresholds_and_categories():
    cols = [Column("age"), Column("colour", ("red", "green", "blue")), Column("yes", ("n", "y"))]
    X = np.array([[20, 0, 0], [30, 1, 1], [30, 2, 0], [45, 0, 1]], float)
    y = np.array([0, 1, 0, 1])
    b = Binarizer().fit(X, y, cols)
    assert b.names_ == ["age <= 25", "age <= 37.5", "colour == red", "colour == green",
                        "colour == blue", "yes == n"]
    assert list(b.op_) == [LE, LE, EQ, EQ, EQ, EQ] and b.exact_
    Z = b.transform(X)
    assert Z.dtype == bool and np.array_equal(Z[:, 0], X[:, 0] <= 25)
    assert np.array_equal(Z[:, 3], X[:, 1] == 1)


def test_binarizer_cap_and_boundary_report_inexact():
    X = np.arange(20, dtype=float)[:, None]
    y = (np.arange(20) % 2).astype(int)
    capped = Binarizer(max_thresholds=3).fit(X, y, [Column("x")])
    assert capped.n_features_out <= 3 and not capped.exact_
    y2 = (np.arange(20) >= 10).astype(int)
    boundary = Binarizer("boundary").fit(X, y2, [Column("x")])
    assert list(boundary.value_) == [9.5] and not boundary.exact_
    with pytest.raises(ValueError, match="thresholds"):
        Binarizer("quantile")
    with pytest.raises(ValueError, match="max_thresholds"):
        Binarizer(max_thresholds=0)


def _best_raw_tree(X, y, depth):
    """Optimal misclassification over ALL axis-parallel threshold trees on the raw values: every
    threshold partitions a column like ``x <= v`` for one of its values v (no arithmetic)."""
    from oracles import optimal_cost

    tests = [X[:, j] <= v for j in range(X.shape[1]) for v in np.unique(X[:, j])[:-1]]
    B = np.column_stack(tests) if tests else np.zeros((len(y), 0), bool)
    return optimal_cost(B, y, 2, depth)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_exact_thresholds_keep_the_raw_optimum(seed):
    from oracles import optimal_cost

    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 9))
    X = rng.integers(0, 4, size=(n, 2)).astype(float)
    y = rng.integers(0, 2, n)
    b = Binarizer().fit(X, y, [Column("a"), Column("b")])
    assert optimal_cost(b.transform(X), y, 2, 2) == _best_raw_tree(X, y, 2)


def test_thresholds_of_huge_and_adjacent_values_split_correctly():
    X = np.array([[1e308], [1.7e308], [1.0], [np.nextafter(1.0, 2.0)]])
    y = np.array([0, 1, 0, 1])
    b = Binarizer().fit(X, y, [Column("x")])
    assert np.all(np.isfinite(b.value_))
    Z = b.transform(X)
    # every pair of neighbouring values is separated by some threshold
    order = np.argsort(X[:, 0])
    for lo, hi in zip(order[:-1], order[1:]):
        assert np.any(Z[lo] != Z[hi])


def test_boundary_thresholds_can_lose_the_optimum_at_depth_two():
    # Values 1 and 3 of column 0 are both pure class 0, so "boundary" drops the cut at 2, yet
    # the only error-free depth-2 tree needs it.
    from oracles import optimal_cost

    X = np.array([[3, 1], [1, 4], [4, 3], [4, 2], [0, 1], [0, 2], [1, 2]], float)
    y = np.array([0, 0, 1, 0, 1, 0, 0])
    cols = [Column("a"), Column("b")]
    exact = optimal_cost(Binarizer().fit(X, y, cols).transform(X), y, 2, 2)
    boundary = optimal_cost(Binarizer("boundary").fit(X, y, cols).transform(X), y, 2, 2)
    assert exact == _best_raw_tree(X, y, 2) == 0
    assert boundary == 1


@pytest.mark.parametrize("n", [40, 300, 2000])
def test_threshold_ranks_of_every_cardinality(n):
    """Ranks (thresholds below each value) and midpoints of short and long columns: few or many
    values, signs, -0.0 beside 0.0 (equal), huge magnitudes."""
    rng = np.random.default_rng(n)
    signed = rng.choice([-1e308, -2.5, -0.0, 0.0, 1e-300, 3.0, 1e308], n)
    X = np.column_stack([rng.integers(0, 3, n), rng.normal(size=n), rng.integers(0, 90, n),
                         np.r_[np.zeros(n // 2), rng.normal(size=n - n // 2)],  # late variety
                         np.r_[rng.normal(size=n // 2), np.zeros(n - n // 2)],
                         signed, -rng.exponential(size=n)]).astype(float)
    columns = [Column(f"x{j}") for j in range(X.shape[1])]
    b = Binarizer().fit(X, np.zeros(n, np.int64), columns, keep_ranks=True)
    for j in range(X.shape[1]):
        distinct = np.unique(X[:, j])
        np.testing.assert_array_equal(b.value_[b.column_ == j], distinct[:-1] / 2 + distinct[1:] / 2)
        np.testing.assert_array_equal(b.ranks[j], np.searchsorted(distinct, X[:, j]))


def test_zero_one_fast_path_binarises_as_the_general_path():
    """All-0/1 data takes a shortcut (no sort: one threshold 0.5 per varying column, ranks the
    values): the same features, ranks and ``transform`` as the general path gives the same
    columns beside a column of other values, and as the column-by-column definition."""
    rng = np.random.default_rng(3)
    n = 70
    X = (rng.random((n, 9)) < 0.4).astype(float)
    X[:, 2] = 1.0  # all ones: no threshold, ranks 0
    X[:, 5] = 0.0  # all zeros
    X[:3, 7], X[3:, 7] = 1.0, 0.0
    columns = [Column(f"x{j}") for j in range(X.shape[1])]
    y = rng.integers(0, 2, n)
    fast = Binarizer().fit(X, y, columns, keep_ranks=True)
    assert fast._numeric_runs == [0 if j in (2, 5) else 1 for j in range(9)]
    # The general path: the same columns next to one that is not 0/1 (ranks via _midpoints'
    # mixed branch), and without ranks (keep_ranks=False skips the shortcut).
    wide = np.column_stack([X, rng.normal(size=n)])
    general = Binarizer().fit(wide, y, columns + [Column("x9")], keep_ranks=True)
    plain = Binarizer().fit(X, y, columns)
    ours = fast.column_ < 9
    for other in (general, plain):
        mine = other.column_ < 9
        np.testing.assert_array_equal(fast.column_[ours], other.column_[mine])
        np.testing.assert_array_equal(fast.value_[ours], other.value_[mine])
        np.testing.assert_array_equal(fast.op_[ours], other.op_[mine])
        np.testing.assert_array_equal(fast.missing_[ours], other.missing_[mine])
        assert fast.value_.dtype == other.value_.dtype == np.float64
    for j in range(9):
        np.testing.assert_array_equal(fast.ranks[j], general.ranks[j])
        distinct = np.unique(X[:, j])
        np.testing.assert_array_equal(fast.value_[fast.column_ == j],
                                      distinct[:-1] / 2 + distinct[1:] / 2)
        np.testing.assert_array_equal(fast.ranks[j], np.searchsorted(distinct, X[:, j]))
    assert fast.ranks[0].dtype == np.int64 and not fast.missing_columns_.any()
    # transform's shortcut (threshold tests only) against the tests spelled out
    expected = X[:, fast.column_] <= fast.value_
    np.testing.assert_array_equal(fast.transform(X), expected)
    np.testing.assert_array_equal(fast.transform(X, deadline=1e300), expected)
    np.testing.assert_array_equal(fast.transform(X, features=[3, 0]), expected[:, [3, 0]])
    np.testing.assert_array_equal(plain.transform(X), expected)
