"""The two-class depth-two solve of one root feature by segment trees (``_segment``) and where
the ordered search hands a root feature's splits to it: exact against brute force (ties,
constant columns, weights, penalties, bucket ranges, several spans), the search's optimum
unchanged with the technique on or off, and a stop for a deadline."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import optimal_cost_and_splits
from ordered_cases import features_of, raw_splits, tree_cost

from exactree import OptimalTreeClassifier
from exactree.solvers.dp._ordered import _sort_root
from exactree.solvers.dp._segment import best_split_on, pairs, row_positions, tree_size
from exactree.solvers.dp.ordered import OrderedSolver

SEED = st.integers(0, 2**32 - 1)
OFF = {"segment_trees": False}


def sorted_node(bucket, y):
    F, n = bucket.shape
    rows, bv, lab = (np.empty((F, n), np.int32) for _ in range(3))
    _sort_root(bucket, y, rows, bv, lab)
    return rows, bv, lab


def scratch(n, F, rows=None, K=2):
    """Scratch arrays; with ``rows``, the row positions best_split_on reads."""
    pos = np.zeros((n, F), np.int32)
    if rows is not None:
        row_positions(rows, n, pos)
    return pos, np.zeros((2 * tree_size(n), 6 * pairs(K))), np.zeros((2, n))


def leaf_of(w, y):
    """A leaf's misclassified weight: all but its largest class."""
    def leaf(idx):
        return w[idx].sum() - max((w[idx][y[idx] == c].sum() for c in np.unique(y)),
                                  default=0.0)
    return leaf


def spans_of(bv, f, n, lo=0, hi=1 << 62):
    """The one span of positions of ``f``'s order whose bucket lies within ``lo .. hi``."""
    inside = np.flatnonzero((bv[f, :n] >= lo) & (bv[f, :n] <= hi))
    if not len(inside):
        return np.zeros((0, 2), np.int64), 0
    return np.array([[inside[0], inside[-1]]], np.int64), 1


def brute_depth2(bucket, y, w, penalty, root=None):
    """Least misclassified weight plus ``penalty`` per split of a tree of depth <= 2 (a side
    may stay a leaf); ``root``: (feature, lo, hi) restricts the root split (no leaf then)."""
    F, n = bucket.shape
    leaf = leaf_of(w, y)

    def splits(idx, feats):
        for g in feats:
            for v in np.unique(bucket[g, idx])[:-1]:
                yield g, v, idx[bucket[g, idx] <= v], idx[bucket[g, idx] > v]

    def depth1(idx):
        return min([leaf(idx)] + [leaf(a) + leaf(b) + penalty
                                  for _, _, a, b in splits(idx, range(F))])

    rows = np.arange(n)
    best = np.inf if root else depth1(rows)
    for g, v, a, b in splits(rows, [root[0]] if root else range(F)):
        if root and not root[1] <= v <= root[2]:
            continue
        best = min(best, depth1(a) + depth1(b) + penalty)
    return best


def random_node(rng, n_max=30, buckets=8):
    """A node of two to four classes (some may be absent), ties and constant columns."""
    n = int(rng.integers(2, n_max))
    F = int(rng.integers(1, 4))
    K = int(rng.integers(2, 5))
    bucket = rng.integers(0, int(rng.integers(1, buckets)), (F, n)).astype(np.int64)
    y = rng.integers(0, K, n).astype(np.int64)
    w = rng.integers(1, 5, n).astype(float) if rng.random() < 0.5 else np.ones(n)
    penalty = float(rng.choice([0.0, 1e-3, 0.5, 2.0]))
    return bucket, y, K, w, penalty


@settings(max_examples=200, deadline=None)
@given(seed=SEED)
def test_each_root_feature_matches_brute_force(seed):
    """The whole range of each feature, and the node's optimum as the least of them and the
    leaf; the split named costs what is returned."""
    rng = np.random.default_rng(seed)
    bucket, y, K, w, penalty = random_node(rng)
    F, n = bucket.shape
    rows, bv, lab = sorted_node(bucket, y)
    node = leaf_of(w, y)(np.arange(n))
    for f in range(F):
        cost, t, cut = best_split_on(f, rows, bv, lab, n, K, w, penalty, *spans_of(bv, f, n),
                                     np.inf, *scratch(n, F, rows, K))
        assert not cut
        assert cost == pytest.approx(brute_depth2(bucket, y, w, penalty, (f, 0, 1 << 62)),
                                     abs=1e-9)
        if t >= 0:
            assert bv[f, t] != bv[f, t + 1]
            again = best_split_on(f, rows, bv, lab, n, K, w, penalty,
                                  *spans_of(bv, f, n, bv[f, t], bv[f, t]), np.inf,
                                  *scratch(n, F, rows, K))
            assert again == (pytest.approx(cost, abs=1e-9), t, False)
        node = min(node, cost)
    assert node == pytest.approx(brute_depth2(bucket, y, w, penalty), abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(seed=SEED)
def test_one_root_feature_within_a_bucket_range(seed):
    rng = np.random.default_rng(seed)
    bucket, y, K, w, penalty = random_node(rng)
    F, n = bucket.shape
    rows, bv, lab = sorted_node(bucket, y)
    f = int(rng.integers(0, F))
    lo, hi = sorted(int(v) for v in rng.integers(0, bucket[f].max() + 1, 2))
    cost, t, _ = best_split_on(f, rows, bv, lab, n, K, w, penalty, *spans_of(bv, f, n, lo, hi),
                               np.inf, *scratch(n, F, rows, K))
    assert cost == pytest.approx(brute_depth2(bucket, y, w, penalty, (f, lo, hi)), abs=1e-9)
    assert (t == -1) == (cost == np.inf)


@settings(max_examples=150, deadline=None)
@given(seed=SEED)
def test_several_spans_match_brute_force(seed):
    """Root splits within a few disjoint spans of positions: between spans the rows move one
    by one or the trees are built again (both happen on these sizes)."""
    rng = np.random.default_rng(seed)
    bucket, y, K, w, penalty = random_node(rng, n_max=60, buckets=40)
    F, n = bucket.shape
    rows, bv, lab = sorted_node(bucket, y)
    f = int(rng.integers(0, F))
    ends = np.unique(rng.integers(0, n, 2 * int(rng.integers(1, 5))))
    spans = ends[: len(ends) // 2 * 2].reshape(-1, 2).astype(np.int64)
    cost, t, _ = best_split_on(f, rows, bv, lab, n, K, w, penalty, spans, len(spans), np.inf,
                               *scratch(n, F, rows, K))
    leaf = leaf_of(w, y)

    def depth1(idx):
        best = leaf(idx)
        for g in range(F):
            for v in np.unique(bucket[g, idx])[:-1]:
                a, b = idx[bucket[g, idx] <= v], idx[bucket[g, idx] > v]
                best = min(best, leaf(a) + leaf(b) + penalty)
        return best

    want, at = np.inf, -1
    for a, b in spans:
        for s in range(a, min(b, n - 2) + 1):
            if bv[f, s] != bv[f, s + 1]:
                c = depth1(rows[f, : s + 1]) + depth1(rows[f, s + 1:]) + penalty
                if c < want - 1e-12:
                    want, at = c, s
    assert cost == pytest.approx(want, abs=1e-9)
    if at >= 0:
        assert bv[f, t] != bv[f, t + 1] and any(a <= t <= b for a, b in spans)


def noisy(rng, n, F, K=2):
    """Numeric rows whose labels follow no small tree: depth-two nodes whose bounds prune
    few root splits, the case the search hands to the segment trees. ``K`` classes: the sum
    cut at its quantiles."""
    X = rng.normal(size=(n, F)).round(2)
    s = X[:, 0] + X[:, 1] * X[:, -1]
    y = np.digitize(s, np.quantile(s, np.arange(1, K) / K))
    flip = rng.random(n) < 0.2
    y[flip] = rng.integers(0, K, flip.sum())
    return X, y


@settings(max_examples=10, deadline=None)
@given(seed=SEED)
def test_search_agrees_with_brute_force_with_and_without_the_technique(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 5))
    X, y = noisy(rng, int(rng.integers(16, 28)), int(rng.integers(2, 4)), K)
    w = rng.integers(1, 4, len(y)).astype(float) if rng.random() < 0.5 else None
    depth = int(rng.integers(2, 4))
    best = optimal_cost_and_splits(raw_splits(X), y, K, depth, None, w)
    for tech in (None, OFF):
        model = OptimalTreeClassifier(max_depth=depth, search="ordered",
                                      techniques=tech).fit(X, y, sample_weight=w)
        assert model.status_ == "optimal"
        assert (model.objective_, model.tree_.n_splits) == (pytest.approx(best[0]), best[1])
        err = np.sum((model.predict(X) != y) * (1.0 if w is None else w))
        assert err == pytest.approx(model.objective_)


@pytest.mark.parametrize("depth, K", [(2, 2), (3, 2), (2, 3), (2, 4)])
def test_the_technique_takes_over_on_noisy_data_and_keeps_the_optimum(depth, K):
    """Fewer split evaluations (the segment trees finished some features), same optimum, a tree
    of the cost claimed; on a restricted root too."""
    X, y = noisy(np.random.default_rng(1), 2000, 4, K)
    feats, B = features_of(X, y)
    on, off = (OrderedSolver(feats, y, K, max_depth=depth, techniques=t) for t in (None, OFF))
    a, b = on.solve(), off.solve()
    assert a.cost == pytest.approx(b.cost) and a.tree.n_splits == b.tree.n_splits
    assert a.stats["split_evaluations"] < b.stats["split_evaluations"]
    assert tree_cost(a.tree, B, y, K, None) == pytest.approx(a.cost)
    F = feats.bucket.shape[0]
    lo, hi = np.zeros(F, np.int64), np.full(F, -1, np.int64)
    hi[1] = int(np.median(feats.bucket[1]))
    shares = [s.solve(roots=(lo, hi)) for s in (on, off)]
    assert shares[0].cost == pytest.approx(shares[1].cost)


def test_a_passed_deadline_stops_the_solve():
    X, y = noisy(np.random.default_rng(2), 6000, 3)
    feats, _ = features_of(X, y)
    F, n = feats.bucket.shape
    rows, bv, lab = sorted_node(feats.bucket, y.astype(np.int64))
    args = (0, rows, bv, lab, n, 2, np.ones(n), 0.0, *spans_of(bv, 0, n))
    full = best_split_on(*args, np.inf, *scratch(n, F, rows))
    assert full[2] is False and full[0] < np.inf
    assert best_split_on(*args, time.perf_counter() - 1.0, *scratch(n, F, rows)) == \
        (np.inf, -1, True)
