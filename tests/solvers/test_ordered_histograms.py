"""The ordered search's depth-two solve from per-bucket histograms (``_histogram``): it runs on
nodes with few buckets, and its optima (size-minimal, weighted, minimum leaf size, multi-class,
squared error, restricted roots) agree with brute force and with the sweeps it replaces."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import optimal_cost_and_splits, optimal_sse
from ordered_cases import features_of, raw_splits, tree_cost, weights_for

from exactree import OptimalTreeClassifier, OptimalTreeRegressor
from exactree.solvers.dp._histogram import worth_it
from exactree.solvers.dp.ordered import OrderedSolver

SEED = st.integers(0, 2**32 - 1)
OFF = {"bucket_histograms": False}


def few_valued(rng):
    """Rows with 2-4 distinct values per column (few buckets: the histogram solve's case);
    labels sometimes from a small tree, so that error-free trees exist."""
    n = int(rng.integers(30, 60))
    X = rng.integers(0, int(rng.integers(2, 5)), (n, int(rng.integers(1, 4)))).astype(float)
    K = int(rng.integers(2, 5))
    if rng.random() < 0.4:
        y = ((X[:, 0] > 1).astype(int) + (X[:, -1] > 0)) % K
    else:
        y = rng.integers(0, K, n)
    y[:2] = [0, 1]
    return X, np.unique(y, return_inverse=True)[1]


def fit_settings(rng, n):
    """Weights (or None), a minimum leaf size and a depth."""
    return weights_for(rng, n), int(rng.choice([1, 1, 4, 10])), int(rng.integers(2, 4))


def test_few_buckets_take_the_histograms_and_raw_columns_do_not():
    assert worth_it(8, 800, 8 * 21, 3, True)  # 20 quantile codes per column
    assert worth_it(8, 800, 8 * 11, 2, False)
    assert not worth_it(8, 800, 8 * 800, 2, False)  # every value distinct
    assert not worth_it(8, 800, 8 * 800, 3, True)
    assert not worth_it(4, 100, 4, 2, False)  # no split at all


@settings(max_examples=60, deadline=None)
@given(seed=SEED)
def test_classifier_matches_brute_force_and_the_sweeps(seed):
    rng = np.random.default_rng(seed)
    X, y = few_valued(rng)
    K = int(y.max()) + 1
    w, min_leaf, depth = fit_settings(rng, len(y))
    params = dict(max_depth=depth, min_samples_leaf=min_leaf, search="ordered")
    fast = OptimalTreeClassifier(**params).fit(X, y, sample_weight=w)
    slow = OptimalTreeClassifier(techniques=OFF, **params).fit(X, y, sample_weight=w)
    best = optimal_cost_and_splits(raw_splits(X), y, K, depth, None, w, min_leaf)
    for model in (fast, slow):
        assert model.status_ == "optimal"
        assert model.objective_ == pytest.approx(best[0], abs=1e-9)
        assert model.tree_.n_splits == best[1]
        assert model.lower_bound_ == pytest.approx(best[0], abs=1e-9)
    # The tree is what it claims: its training error, walked row by row.
    err = np.sum((fast.predict(X) != y) * (np.ones(len(y)) if w is None else w))
    assert err == pytest.approx(fast.objective_, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=SEED)
def test_regressor_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    X, _ = few_valued(rng)
    t = rng.normal(size=len(X)).round(2)
    w, min_leaf, depth = fit_settings(rng, len(t))
    best = optimal_sse(raw_splits(X), t, depth, w, min_leaf)
    for tech in (None, OFF):
        model = OptimalTreeRegressor(max_depth=depth, min_samples_leaf=min_leaf,
                                     techniques=tech).fit(X, t, sample_weight=w)
        assert model.objective_ == pytest.approx(best, rel=1e-7, abs=1e-9)


@settings(max_examples=30, deadline=None)
@given(seed=SEED)
def test_restricted_root_of_depth_two(seed):
    """A parallel share of the root's splits: the histogram solve keeps to it."""
    rng = np.random.default_rng(seed)
    X, y = few_valued(rng)
    K = int(y.max()) + 1
    feats, B = features_of(X, y)
    solvers = [OrderedSolver(feats, y, K, max_depth=2, techniques=tech) for tech in (None, OFF)]
    F = feats.bucket.shape[0]
    lo = np.zeros(F, np.int64)
    hi = np.full(F, -1, np.int64)
    f = int(rng.integers(0, F))
    hi[f] = int(rng.integers(0, feats.bucket[f].max() + 1))  # feature f, buckets 0..hi[f]
    sols = [s.solve(roots=(lo, hi)) for s in solvers]
    costs = [np.inf if s is None else s.cost for s in sols]
    assert costs[0] == pytest.approx(costs[1], abs=1e-9)
    for s in sols:
        if s is not None:
            assert tree_cost(s.tree, B, y, K, None) == pytest.approx(s.cost, abs=1e-9)


def test_quantile_codes_of_a_real_set():
    """20 quantile thresholds per column (bench_regression's features): same optimum both
    ways, at depths 2 and 3."""
    from sklearn.datasets import load_diabetes
    X, t = load_diabetes(return_X_y=True)
    X = X[:150, :5]
    t = t[:150]
    q = np.quantile(X, np.linspace(0, 1, 22)[1:-1], axis=0)
    Xq = np.column_stack([np.searchsorted(q[:, j], X[:, j]) for j in range(X.shape[1])])
    for depth in (2, 3):
        on = OptimalTreeRegressor(max_depth=depth).fit(Xq, t)
        off = OptimalTreeRegressor(max_depth=depth, techniques=OFF).fit(Xq, t)
        assert on.objective_ == pytest.approx(off.objective_, rel=1e-9)
        assert on.stats_["split_evaluations"] != off.stats_["split_evaluations"]


def _reference_depth2(bucket, t, w, min_leaf, penalty):
    """The histogram solve's answer by trying every root split and every test below it, each
    costed exactly (rounded, as the kernel does), the first strict minimum kept in the solve's
    order: ``(cost, tree_f[:3], tree_b[:3])``."""
    from exactree.solvers._squared_error import sse_cost

    def cost(idx):
        return sse_cost(float(w[idx].sum()), float(w[idx] @ t[idx]), float(w[idx] @ t[idx] ** 2))

    F, n = bucket.shape
    everything = np.arange(n)
    best, tree = np.inf, None
    for f in range(F):
        for b in np.unique(bucket[f])[:-1]:
            sides = [everything[bucket[f] <= b], everything[bucket[f] > b]]
            if min(len(s) for s in sides) < min_leaf:
                continue
            parts = []
            for rows in sides:
                c, g_best, u_best = cost(rows), -1, 0
                for g in range(F):
                    for u in np.unique(bucket[g])[:-1]:
                        lo, hi = rows[bucket[g, rows] <= u], rows[bucket[g, rows] > u]
                        if len(lo) < min_leaf or len(hi) < min_leaf:
                            continue
                        v = cost(lo) + cost(hi) + penalty
                        if v < c:
                            c, g_best, u_best = v, g, int(u)
                parts.append((c, g_best, u_best))
            v = parts[0][0] + parts[1][0] + penalty
            if v < best:
                best = v
                tree = ([f, parts[0][1], parts[1][1]], [int(b), parts[0][2], parts[1][2]])
    return best, tree


@settings(max_examples=60, deadline=None)
@given(seed=SEED)
def test_squared_error_scan_keeps_the_first_best_test(seed):
    """Squared error skips candidate tests that cannot beat the best one without costing them
    (_scan_squared): the solve must still return the first best tree of a scan that costs every
    candidate. Integer targets and dyadic weights make every sum exact, so tests tie often and
    exactly (a skip that dropped a tie, or a better test, changes the tree)."""
    from exactree.solvers.dp._histogram import MAX_BUCKETS, bucket_offsets, solve_depth2
    from exactree.solvers.dp._ordered import _sort_root

    rng = np.random.default_rng(seed)
    n, F = int(rng.integers(8, 40)), int(rng.integers(1, 4))
    bucket = rng.integers(0, int(rng.integers(2, 6)), (F, n)).astype(np.int32)
    t = rng.integers(-3, 4, n).astype(float) * float(rng.choice([1.0, 0.25, 8.0]))
    w = rng.choice([0.5, 1.0, 2.0], n) if rng.random() < 0.5 else np.ones(n)
    min_leaf = int(rng.choice([1, 1, 3]))
    penalty = float(rng.choice([0.0, 2.0**-30, 0.5]))
    rows = np.empty((F, n), np.int32)
    bv = np.empty((F, n), np.int32)
    lab = np.empty((F, n), np.int32)
    _sort_root(bucket, np.zeros(n, np.int64), rows, bv, lab)
    off = np.zeros(F + 1, np.int64)
    assert bucket_offsets(bv, n, off) <= MAX_BUCKETS
    cap = F * n
    tree_f, tree_b = np.full(7, -1, np.int64), np.zeros(7, np.int64)
    got = solve_depth2(rows, bv, lab, n, w, False, t, None, min_leaf, penalty, off,
                       np.zeros((n, F), np.int32), np.zeros(cap, np.int64), np.zeros((cap, 3)),
                       np.zeros(cap, np.int64), np.zeros((cap, 3)), np.zeros(cap, np.int64),
                       np.zeros(F, np.int64), np.zeros(F, np.int64), False, tree_f, tree_b,
                       np.inf)
    best, tree = _reference_depth2(bucket, t, w, min_leaf, penalty)
    assert got == (best, False)
    if tree is not None:
        assert tree_f[:3].tolist() == tree[0]
        assert [int(tree_b[0])] + [int(tree_b[i]) if tree_f[i] >= 0 else 0 for i in (1, 2)] \
            == tree[1]
