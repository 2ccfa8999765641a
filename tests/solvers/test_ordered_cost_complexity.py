"""Cost complexity in the ordered search: ``cost + split_cost * splits`` minimised by one search
(``OrderedSolver(split_cost=...)``), checked against brute force over every raw threshold, and
through both estimators."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import optimal_penalised, optimal_sse
from ordered_cases import features_of, raw_splits, small_numeric, tree_cost, weights_for

from exactree import OptimalTreeClassifier, OptimalTreeRegressor
from exactree.solvers.dp.ordered import OrderedSolver

SEED = st.integers(0, 2**31 - 1)
ALPHAS = (0.005, 0.02, 0.05, 0.1, 0.3)


def penalised_sse_optimum(B, t, depth, w, alpha):
    """min over node budgets b of ``SSE_b / SSE_0 + alpha * b`` (SSE_0: the single leaf's)."""
    ww = np.ones(len(t)) if w is None else w
    sse0 = float(ww @ (t - (ww @ t) / ww.sum()) ** 2) or 1.0
    return min(optimal_sse(B, t, depth, w, max_nodes=b) / sse0 + alpha * b
               for b in range(1 << depth)), sse0


@settings(max_examples=60, deadline=None)
@given(SEED)
def test_classification_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    X, y, K = small_numeric(rng, 6, 12)
    depth = int(rng.integers(1, 4))
    w = weights_for(rng, len(y))
    alpha = float(rng.choice(ALPHAS))
    total = float(len(y) if w is None else w.sum())
    B = raw_splits(X)
    best = optimal_penalised(B, y, K, alpha, depth, w)
    feats, _ = features_of(X, y)
    off = {"class_count_bound": False} if rng.random() < 0.3 else {}
    sol = OrderedSolver(feats, y, K, sample_weight=w, max_depth=depth, split_cost=alpha * total,
                        techniques=off).solve()
    assert sol.optimal and sol.limit is None
    assert sol.cost / total == pytest.approx(best, abs=1e-9)
    assert sol.lower_bound == pytest.approx(sol.cost, abs=1e-9)
    # The cost is the tree's own: its errors plus the price of its splits.
    own = tree_cost(sol.tree, B, y, K, w) / total + alpha * sol.tree.n_splits
    assert own == pytest.approx(best, abs=1e-9)


@settings(max_examples=30, deadline=None)
@given(SEED)
def test_regression_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    X, _, _ = small_numeric(rng, 6, 10)
    t = rng.normal(size=len(X)).round(2)
    depth = int(rng.integers(1, 4))
    w = None if rng.random() < 0.6 else rng.integers(1, 3, len(t)).astype(float)
    alpha = float(rng.choice(ALPHAS))
    best, sse0 = penalised_sse_optimum(raw_splits(X), t, depth, w, alpha)
    feats, _ = features_of(X)
    sol = OrderedSolver(feats, None, 1, sample_weight=w, max_depth=depth, target=t,
                        split_cost=alpha * sse0).solve()
    assert sol.optimal
    assert sol.cost / sse0 == pytest.approx(best, abs=1e-8)
    model = OptimalTreeRegressor(max_depth=depth, cost_complexity=alpha).fit(X, t, sample_weight=w)
    assert model.status_ == "optimal"
    assert model.objective_ == pytest.approx(best, abs=1e-8)
    pred = model.predict(X)
    ww = np.ones(len(t)) if w is None else w
    assert ww @ (t - pred) ** 2 / sse0 + alpha * model.tree_.n_splits == pytest.approx(best,
                                                                                     abs=1e-8)


@pytest.mark.parametrize("alpha", [0.0, 0.01, 0.05])
def test_both_searches_agree(alpha):
    """The classifier's ordered search (one penalised solve) and binary search (node budgets
    from one cache) give the same penalised optimum on numeric data."""
    rng = np.random.default_rng(int(alpha * 1000))
    X = rng.normal(size=(70, 3)).round(1)
    y = ((X[:, 0] > 0.2) ^ (X[:, 1] < -0.5) | (rng.random(70) < 0.15)).astype(int)
    w = rng.integers(1, 4, 70).astype(float)
    ordered = OptimalTreeClassifier(max_depth=3, cost_complexity=alpha, search="ordered")
    binary = OptimalTreeClassifier(max_depth=3, cost_complexity=alpha, search="binary")
    ordered.fit(X, y, sample_weight=w)
    binary.fit(X, y, sample_weight=w)
    assert ordered.search_ == "ordered" and binary.search_ == "binary"
    assert ordered.status_ == binary.status_ == "optimal"
    assert ordered.objective_ == pytest.approx(binary.objective_, abs=1e-9)
    assert ordered.lower_bound_ == pytest.approx(ordered.objective_, abs=1e-12)
    errors = w @ (ordered.predict(X) != y)
    if alpha > 0:
        assert errors / w.sum() + alpha * ordered.tree_.n_splits == pytest.approx(
            ordered.objective_, abs=1e-9)
    else:
        assert errors == pytest.approx(ordered.objective_)


def test_a_large_price_gives_a_leaf():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 2))
    y = (X[:, 0] > 0).astype(int)
    t = X[:, 0] + 0.1 * rng.normal(size=50)
    model = OptimalTreeClassifier(max_depth=3, cost_complexity=0.6, search="ordered").fit(X, y)
    assert model.tree_.n_splits == 0 and model.status_ == "optimal"
    assert model.objective_ == pytest.approx(min(y.mean(), 1 - y.mean()))
    reg = OptimalTreeRegressor(max_depth=3, cost_complexity=1.0).fit(X, t)
    assert reg.tree_.n_splits == 0 and reg.objective_ == pytest.approx(1.0)


def test_a_perfect_deep_tree_does_not_end_a_priced_search():
    """Without a price a perfect tree of depth >= 4 ends the search; with one, fewer splits and
    a few errors can be better, so the search goes on."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 2))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0.8)).astype(int)
    y[:3] = 1 - y[:3]  # three isolated points: perfect only with many splits
    alpha = 0.02
    ordered = OptimalTreeClassifier(max_depth=4, cost_complexity=alpha, search="ordered")
    binary = OptimalTreeClassifier(max_depth=4, cost_complexity=alpha, search="binary")
    assert ordered.fit(X, y).objective_ == pytest.approx(binary.fit(X, y).objective_, abs=1e-12)


def test_time_limit_keeps_a_valid_bound():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 6))
    y = (X[:, :3].sum(axis=1) + rng.normal(size=400) > 0).astype(int)
    model = OptimalTreeClassifier(max_depth=4, cost_complexity=0.001, search="ordered",
                                  time_limit=0.3).fit(X, y)
    assert 0 <= model.lower_bound_ <= model.objective_ + 1e-12
    errors = (model.predict(X) != y).mean()
    assert errors + 0.001 * model.tree_.n_splits == pytest.approx(model.objective_, abs=1e-12)
