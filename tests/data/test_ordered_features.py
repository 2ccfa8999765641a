"""``ordered_features``: bucket semantics against the binarised matrix, completeness (every
binary split is represented), and the merging of thermometer-coded columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import thermometer_codes

from exactree.data import Binarizer
from exactree.data.encoding import FeatureEncoder
from exactree.data.ordered import ordered_features


def build(X, y, categorical=None, **binarizer):
    enc = FeatureEncoder(categorical=categorical)
    Xe = enc.fit_transform(X)
    binz = Binarizer(**binarizer).fit(Xe, np.asarray(y), enc.columns_)
    return binz, Xe, binz.transform(Xe).astype(bool), ordered_features(binz, Xe)


def check_semantics(B, feats, dead_ok=False):
    """``bucket <= b`` is the binary feature of split ``b`` (its complement when flipped); the
    left sides of one feature grow strictly with ``b``; every non-constant binary feature is
    some split up to complement (so the search sees every split the binary search sees).
    ``dead_ok``: tolerate ordered features made of constant binary features (known: see
    test_constant_binary_features_make_no_ordered_feature), as long as they split nothing."""
    n = B.shape[0]
    assert feats.bucket.shape == (feats.n_features, n)
    assert feats.bucket.dtype == np.int32
    assert feats.n_splits == sum(len(s) for s in feats.split_feature)
    represented = set()
    for f in range(feats.n_features):
        sf, fl = feats.split_feature[f], feats.split_flip[f]
        if dead_ok and n and (feats.bucket[f] == feats.bucket[f][0]).all():
            assert all((feats.bucket[f] <= b).all() or not (feats.bucket[f] <= b).any()
                       for b in range(len(sf)))
            continue
        assert len(sf) == len(fl) >= 1
        bucket = feats.bucket[f]
        assert bucket.min() >= 0 and bucket.max() <= len(sf)
        prev = np.zeros(n, bool)
        for b in range(len(sf)):
            assert 0 <= sf[b] < B.shape[1]
            left = bucket <= b
            assert np.array_equal(left, B[:, sf[b]] != fl[b]), (f, b)
            assert (prev <= left).all() and (left & ~prev).any()  # strictly nested, growing
            assert (~left).any()  # a real split: both sides non-empty
            prev = left
            represented.add(left.tobytes())
    for j in range(B.shape[1]):
        col = B[:, j]
        if col.all() or not col.any():
            continue
        assert col.tobytes() in represented or (~col).tobytes() in represented, j


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_numeric_and_categorical_columns(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    cols = {}
    for j in range(int(rng.integers(1, 5))):
        kind = rng.random()
        if kind < 0.15:
            cols[f"c{j}"] = np.full(n, 2.5)  # constant
        elif kind < 0.45:
            cols[f"c{j}"] = rng.integers(0, int(rng.integers(2, 7)), n).astype(float)
        elif kind < 0.7:
            cats = list("abcde")[: int(rng.integers(1, 6))]
            extra = ["unused"] if rng.random() < 0.4 else []  # a category no row has
            cols[f"c{j}"] = pd.Categorical(rng.choice(cats, n), categories=cats + extra)
        else:
            cols[f"c{j}"] = np.round(rng.normal(size=n), 1)
    df = pd.DataFrame(cols)
    y = rng.integers(0, 3, n)
    binz, Xe, B, feats = build(df, y)
    check_semantics(B, feats, dead_ok=True)
    # Each numeric column with thresholds is exactly one ordered feature with all of them.
    for j, col in enumerate(df.columns):
        mine = np.flatnonzero(binz.column_ == j)
        if len(mine) >= 2 and df[col].dtype != "category":
            holders = [f for f in range(feats.n_features)
                       if np.isin(feats.split_feature[f], mine).any()]
            assert len(holders) == 1
            assert sorted(feats.split_feature[holders[0]].tolist()) == mine.tolist()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_integer_codes_as_categories_and_capped_thresholds(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 50))
    X = np.column_stack([rng.integers(0, 4, n), rng.integers(0, 9, n), rng.normal(size=n)])
    y = rng.integers(0, 2, n)
    mode = dict(thresholds=str(rng.choice(["exact", "boundary"])),
                max_thresholds=None if rng.random() < 0.5 else int(rng.integers(1, 5)))
    _, _, B, feats = build(X, y, categorical=[0], **mode)
    check_semantics(B, feats)


def comparable(a, b):
    return any(not (u & ~b).any() or not (b & ~u).any() for u in (a, ~a))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_thermometer_groups_merge(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 60))
    T, spans = thermometer_codes(rng, n, int(rng.integers(1, 5)), duplicates=True)
    if not spans:
        return
    binz, _, B, feats = build(T, rng.integers(0, 2, n))
    check_semantics(B, feats)
    assert feats.n_features <= len(spans)
    Tb = T.astype(bool)
    if not any(comparable(Tb[:, e - 1], Tb[:, s]) for (_, e), (s, _) in zip(spans, spans[1:])):
        assert feats.n_features == len(spans)
        # Splits of one group: its distinct columns (duplicates once).
        for f, (s, e) in enumerate(spans):
            distinct = {Tb[:, j].tobytes() for j in range(s, e)}
            assert len(feats.split_feature[f]) == len(distinct)
            assert set(feats.split_feature[f].tolist()) <= set(range(s, e))


def test_thermometer_both_orientations_explicit():
    x = np.array([0, 1, 2, 3, 4, 5, 2, 3.0])
    T = np.column_stack([x <= 0.5, x > 1.5, x <= 2.5, x > 3.5, x <= 4.5]).astype(float)
    _, _, B, feats = build(T, np.arange(8) % 2)
    assert feats.n_features == 1 and feats.n_splits == 5
    check_semantics(B, feats)
    assert np.array_equal(np.sort(feats.split_feature[0]), np.arange(5))
    # Rank order of the buckets follows x (or its reverse).
    order = np.argsort(x, kind="stable")
    steps = np.diff(feats.bucket[0][order])
    assert (steps >= 0).all() or (steps <= 0).all()


def test_unrelated_binary_columns_stay_apart():
    X = np.array([[1, 0], [0, 1], [1, 1], [0, 0]], float)  # neither nested nor complementary
    _, _, B, feats = build(X, [0, 1, 0, 1])
    assert feats.n_features == 2 and feats.n_splits == 2
    check_semantics(B, feats)


def test_category_test_is_two_bucket_feature():
    df = pd.DataFrame({"c": pd.Categorical(list("abcab"), categories=list("abcd"))})
    binz, _, B, feats = build(df, [0, 1, 0, 1, 1])
    check_semantics(B, feats, dead_ok=True)
    # a, b, c: 'c == a' and 'c == b' are disjoint, so nested (one flipped): one merged feature.
    live = [f for f in range(feats.n_features) if len(np.unique(feats.bucket[f])) > 1]
    assert sum(len(feats.split_feature[f]) for f in live) == 3
    assert len(live) == 2


@pytest.mark.parametrize("categories", [list("ab"), list("abc"), ["a", "unused"]])
def test_constant_binary_features_make_no_ordered_feature(categories):
    """``split_feature[f][b]`` must name a binary feature, every ordered feature must carry at
    least one split that separates rows; constant tests split nothing and are left out."""
    df = pd.DataFrame({"c": pd.Categorical(["a"] * 4, categories=categories),
                       "x": [1.0, 2.0, 3.0, 1.0]})
    _, _, B, feats = build(df, [0, 1, 0, 1])
    assert feats.n_features == 1 and feats.n_splits == 2  # x only
    check_semantics(B, feats)


def test_single_row_has_no_feature():
    _, _, B, feats = build(np.array([[1.0, 2.0]]), [0])
    assert B.shape == (1, 0)
    assert feats.n_features == 0 and feats.bucket.shape == (0, 1)


@pytest.mark.parametrize("thresholds", [6, 12, 20])
def test_zero_one_columns_below_the_mean_are_refused_as_by_the_plan(thresholds):
    """0/1 data (a column of one threshold each) is refused at once when even one ordered
    feature of all its thresholds would fall short of ``min_mean_splits``; otherwise the chains
    decide (here a thermometer code: one ordered feature of every threshold)."""
    rng = np.random.default_rng(thresholds)
    x = rng.normal(size=120)
    cuts = np.quantile(x, np.linspace(0.05, 0.95, thresholds))
    T = (x[:, None] <= cuts[None, :]).astype(float)
    binz, Xe, B, _ = build(T, rng.integers(0, 2, 120))
    assert binz._numeric_runs == [1] * thresholds
    assert ordered_features(binz, Xe, min_mean_splits=thresholds + 1) is None
    merged = ordered_features(binz, Xe, min_mean_splits=thresholds)
    assert merged is not None and merged.n_features == 1 and merged.n_splits == thresholds
    check_semantics(B, merged)
    free = ordered_features(binz, Xe)
    assert free.n_features == 1 and np.array_equal(free.bucket, merged.bucket)
