"""Node budgets in the threshold-aware search (``OrderedSolver.solve(max_nodes=b)``): the best
tree with at most ``b`` splits, against brute-force oracles over every raw split, for
misclassification and squared error, with weights, leaf sizes, every technique switched off
alone, and valid bounds when cut short."""

from __future__ import annotations

import numpy as np
import pytest

from exactree.solvers.dp.ordered import TECHNIQUES, OrderedSolver
from tests.oracles import optimal_cost, optimal_sse, split_tests
from tests.ordered_cases import features_of, small_numeric, tree_cost, weights_for


def _case(seed):
    rng = np.random.default_rng(seed)
    X, y, K = small_numeric(rng, 5, 13)
    w = weights_for(rng, len(y))
    depth = int(rng.integers(1, 5))
    budget = int(rng.integers(0, 1 << depth))
    min_leaf = int(rng.integers(1, 3))
    target = np.round(rng.normal(size=len(y)), 2) if seed % 2 else None
    return X, y, K, w, depth, budget, min_leaf, target


def _want(X, y, K, w, depth, budget, min_leaf, target):
    tests = split_tests(X)
    if target is None:
        return optimal_cost(tests, y, K, depth, budget, w, min_leaf)
    return optimal_sse(tests, target, depth, w, min_leaf=min_leaf, max_nodes=budget)


@pytest.mark.parametrize("seed", range(60))
def test_budgeted_optimum_matches_brute_force(seed):
    X, y, K, w, depth, budget, min_leaf, target = _case(seed)
    features, B = features_of(X, y)
    sol = OrderedSolver(features, y, K, sample_weight=w, max_depth=depth,
                        min_samples_leaf=min_leaf, target=target).solve(max_nodes=budget)
    want = _want(X, y, K, w, depth, budget, min_leaf, target)
    assert sol.optimal and sol.tree.n_splits <= budget
    assert sol.cost == pytest.approx(want, abs=1e-9)
    # The tree, walked row by row, costs what the solver says.
    assert tree_cost(sol.tree, B, y, K, w, target) == pytest.approx(sol.cost, abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_every_technique_off_keeps_the_budgeted_optimum(seed):
    X, y, K, w, depth, budget, min_leaf, target = _case(100 + seed)
    features, _ = features_of(X, y)
    want = _want(X, y, K, w, depth, budget, min_leaf, target)
    for name in TECHNIQUES:
        sol = OrderedSolver(features, y, K, sample_weight=w, max_depth=depth,
                            min_samples_leaf=min_leaf, target=target,
                            techniques={name: False}).solve(max_nodes=budget)
        assert sol.cost == pytest.approx(want, abs=1e-9), name


def test_budgets_between_full_and_none_give_the_full_optimum():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 0.5)
    features, _ = features_of(X, y)
    solver = OrderedSolver(features, y, 3, max_depth=3)
    full = solver.solve()
    for budget in (7, 8, 100):
        sol = solver.solve(max_nodes=budget)
        assert sol.cost == full.cost and sol.tree.n_splits == full.tree.n_splits
    costs = [solver.solve(max_nodes=b).cost for b in range(8)]
    assert costs == sorted(costs, reverse=True)  # more splits never cost more


@pytest.mark.parametrize("budget", [2, 4, 5])
def test_a_budgeted_search_cut_short_keeps_a_valid_bound(budget):
    rng = np.random.default_rng(budget)
    X = rng.normal(size=(300, 5))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * rng.normal(size=300) > 0).astype(int)
    features, _ = features_of(X, y)
    solver = OrderedSolver(features, y, 2, max_depth=3)
    full = solver.solve(max_nodes=budget)
    for work in (20_000, 200_000, 2_000_000):
        solver.clock_work = work
        cut = solver.solve(max_nodes=budget, time_limit=1e-9)
        assert cut.tree.n_splits <= budget
        assert cut.lower_bound <= full.cost + 1e-9 <= cut.cost + 1e-9
