"""``max_nodes`` and ``fit_path`` through the threshold-aware search: the regressor against a
brute-force oracle, the classifier against its binary search, user objectives, workers."""

from __future__ import annotations

import numpy as np
import pytest

from exactree import LeafCost, OptimalTreeClassifier, OptimalTreeRegressor, RegressionLeafCost
from tests.oracles import optimal_cost, optimal_sse, split_tests
from tests.ordered_cases import weights_for


def shrunk(W, S, Q):
    return Q - S * S / (W + 1.0)


def shrunk_bound(lo, hi):
    return (max(hi, 0.0) - min(lo, 0.0)) ** 2


def loss(w, c):
    return 3.0 * w[0] if c == 1 else w.sum() - w[c]


@pytest.mark.parametrize("seed", range(16))
def test_regressor_budgets_and_path_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 13))
    X = rng.integers(0, int(rng.integers(2, 5)), (n, int(rng.integers(1, 4)))).astype(float)
    y = np.round(rng.normal(size=n) * 3, 2)
    w = weights_for(rng, n)
    depth = int(rng.integers(1, 4))
    min_leaf = int(rng.integers(1, 3))
    tests = split_tests(X)
    model = OptimalTreeRegressor(max_depth=depth, min_samples_leaf=min_leaf)
    path = model.fit_path(X, y, sample_weight=w)
    assert [p.max_nodes for p in path] == list(range((1 << depth)))
    for point in path:
        want = optimal_sse(tests, y, depth, w, min_leaf=min_leaf, max_nodes=point.max_nodes)
        assert point.optimal and point.n_splits <= point.max_nodes
        assert point.objective == pytest.approx(want, abs=1e-9)
        assert point.tree.n_splits == point.n_splits
    assert model.objective_ == pytest.approx(path[-1].objective) and model.status_ == "optimal"
    budget = int(rng.integers(0, 1 << depth))
    one = OptimalTreeRegressor(max_depth=depth, min_samples_leaf=min_leaf,
                               max_nodes=budget).fit(X, y, sample_weight=w)
    assert one.tree_.n_splits <= budget
    assert one.objective_ == pytest.approx(path[budget].objective, abs=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_user_objectives_under_a_budget_match_brute_force(seed):
    rng = np.random.default_rng(40 + seed)
    n = int(rng.integers(6, 12))
    X = rng.integers(0, 4, (n, 2)).astype(float)
    depth, budget = 3, int(rng.integers(1, 5))
    tests = split_tests(X)
    if seed % 2:
        y = np.round(rng.normal(size=n) * 2 + 1, 2)
        model = OptimalTreeRegressor(max_depth=depth, max_nodes=budget,
                                     objective=RegressionLeafCost(shrunk, shrunk_bound)).fit(X, y)
        want = optimal_sse(tests, y, depth, max_nodes=budget, leaf_cost=shrunk)
    else:
        y = rng.integers(0, 2, n)
        y[:2] = [0, 1]
        model = OptimalTreeClassifier(max_depth=depth, max_nodes=budget,
                                      objective=LeafCost(loss, 3.0)).fit(X, y)
        want = optimal_cost(tests, y, 2, depth, budget, leaf_cost=lambda c: min(
            loss(np.asarray(c, float), k) for k in range(2)))
    assert model.status_ == "optimal" and model.tree_.n_splits <= budget
    assert model.objective_ == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("depth", [2, 3])
def test_classifier_budgets_ordered_and_binary_agree(depth):
    rng = np.random.default_rng(depth)
    X = np.round(rng.normal(size=(70, 3)), 1)
    y = ((X[:, 0] > 0).astype(int) + (X[:, 1] * X[:, 2] > 0.3)) % 3
    w = rng.uniform(0.5, 2.0, 70)
    paths = [OptimalTreeClassifier(max_depth=depth, search=search).fit_path(X, y, w)
             for search in ("ordered", "binary")]
    assert [p.objective for p in paths[0]] == pytest.approx([p.objective for p in paths[1]])
    assert [p.n_splits for p in paths[0]] == [p.n_splits for p in paths[1]]
    for budget in range(1 << depth):
        model = OptimalTreeClassifier(max_depth=depth, max_nodes=budget,
                                      search="ordered").fit(X, y, w)
        assert model.search_ == "ordered" and model.tree_.n_splits <= budget
        assert model.objective_ == pytest.approx(paths[1][budget].objective)


def test_budgets_on_workers_and_under_a_time_limit():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(150, 4))
    y = X[:, 0] * 2 + np.sin(3 * X[:, 1]) + 0.3 * rng.normal(size=150)
    serial = OptimalTreeRegressor(max_depth=3, max_nodes=4).fit(X, y)
    spread = OptimalTreeRegressor(max_depth=3, max_nodes=4, n_jobs=2).fit(X, y)
    assert spread.parallel_ is not None and spread.tree_.n_splits <= 4
    assert spread.objective_ == pytest.approx(serial.objective_, rel=1e-9)
    big = rng.normal(size=(3000, 8))
    target = big[:, 0] + big[:, 1] * big[:, 2] + rng.normal(size=3000)
    cut = OptimalTreeRegressor(max_depth=4, max_nodes=5, time_limit=0.5).fit(big, target)
    assert cut.tree_.n_splits <= 5 and cut.lower_bound_ <= cut.objective_
    assert cut.fit_time_ < 0.5 + 2.0  # loosely: the clock is looked at inside the search
