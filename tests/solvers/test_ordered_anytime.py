"""The ordered search's size-minimal optima, cut-short solves (bounds, incumbents), time and
memory limits, each against a brute force over every raw split (tests/oracles.py for
misclassification, a squared-error one here)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import optimal_cost, optimal_cost_and_splits, optimal_sse
from ordered_cases import features_of, raw_splits, small_numeric, tree_cost, weights_for

from exactree import OptimalTreeClassifier
from exactree.progress import BEST, LOWER, new_board
from exactree.solvers.dp._lexicographic import PERFECT_IS_FINAL_DEPTH
from exactree.solvers.dp.ordered import OrderedSolver

SEED = st.integers(0, 2**31 - 1)
CUT = -1.0  # a time limit already over: the search stops at its first look at the clock


# ---------------------------------------------------------------- helpers
def lexicographic_optimum(X, y, K, depth, w, min_leaf):
    """(least misclassified weight, fewest splits of a tree that attains it)."""
    return optimal_cost_and_splits(raw_splits(X), y, K, depth, None, w, min_leaf)


def sse_optimum(X, t, depth, w, min_leaf):
    """(least weighted squared error of mean leaves, fewest splits attaining it) by brute
    force over every raw split and every split budget."""
    B = raw_splits(X)
    opt = optimal_sse(B, t, depth, w, min_leaf)
    ww = np.ones(len(t)) if w is None else w
    tol = 1e-7 * max(1.0, float(ww @ (t - (ww @ t) / ww.sum()) ** 2))
    return opt, next(b for b in range(1 << depth)
                     if optimal_sse(B, t, depth, w, min_leaf, max_nodes=b) <= opt + tol)


# ---------------------------------------------------------------- 1. size-minimal optima
def test_issue_example_has_three_splits():
    X = np.array([[0, 0, 0], [0, 0, 0], [1, 1, 1], [0, 0, 1], [1, 1, 0], [1, 0, 0]], float)
    y = np.array([1, 1, 0, 0, 1, 0])
    model = OptimalTreeClassifier(max_depth=3, search="ordered").fit(X, y)
    assert model.search_ == "ordered"
    assert model.objective_ == 0 and model.tree_.n_splits == 3
    feats, _ = features_of(X, y)
    sol = OrderedSolver(feats, y, 2, max_depth=3).solve()
    assert sol.optimal and sol.cost == 0 and sol.tree.n_splits == 3 and sol.limit is None


@settings(max_examples=80, deadline=None)
@given(SEED)
def test_fewest_splits_among_optimal_trees(seed):
    rng = np.random.default_rng(seed)
    X, y, K = small_numeric(rng)
    depth = int(rng.integers(1, 4))
    w = weights_for(rng, len(y))
    min_leaf = 1 if rng.random() < 0.7 else 2
    cost, splits = lexicographic_optimum(X, y, K, depth, w, min_leaf)
    feats, B = features_of(X, y)
    sol = OrderedSolver(feats, y, K, sample_weight=w, max_depth=depth,
                        min_samples_leaf=min_leaf).solve()
    assert sol.optimal and sol.limit is None
    assert sol.cost == pytest.approx(cost, abs=1e-9)
    assert sol.lower_bound == pytest.approx(sol.cost, abs=1e-9)
    assert sol.tree.n_splits == splits
    assert tree_cost(sol.tree, B, y, K, w) == pytest.approx(sol.cost, abs=1e-9)
    # Off, the optimum is the same (its size is not promised).
    off = OrderedSolver(feats, y, K, sample_weight=w, max_depth=depth, min_samples_leaf=min_leaf,
                        techniques={"minimal_size": False}).solve()
    assert off.cost == pytest.approx(cost, abs=1e-9) and off.tree.n_splits >= splits


@settings(max_examples=40, deadline=None)
@given(SEED)
def test_depth_four_is_size_minimal_unless_perfect(seed):
    """From depth 4 a tree without errors ends the search (see _lexicographic; it is looked for
    first, without split penalties, for a bounded amount of work); any other optimum still has
    the fewest splits."""
    rng = np.random.default_rng(seed)
    X, y, K = small_numeric(rng)
    w = weights_for(rng, len(y))
    cost, splits = lexicographic_optimum(X, y, K, 4, w, 1)
    feats, B = features_of(X, y)
    solver = OrderedSolver(feats, y, K, sample_weight=w, max_depth=4)
    if rng.random() < 0.3:
        solver.perfect_work = int(rng.integers(0, 50))  # given up early: the full search decides
    sol = solver.solve()
    assert sol.optimal and sol.limit is None
    assert sol.cost == pytest.approx(cost, abs=1e-9)
    assert sol.lower_bound == pytest.approx(sol.cost, abs=1e-9)
    assert tree_cost(sol.tree, B, y, K, w) == pytest.approx(sol.cost, abs=1e-9)
    if cost > 0:
        assert sol.tree.n_splits == splits


@settings(max_examples=30, deadline=None)
@given(SEED)
def test_perfect_is_final_off_is_size_minimal_at_depth_four(seed):
    """With the technique perfect_is_final off, a perfect tree of depth 4 has the fewest
    splits too."""
    rng = np.random.default_rng(seed)
    X, y, K = small_numeric(rng)
    w = weights_for(rng, len(y))
    cost, splits = lexicographic_optimum(X, y, K, 4, w, 1)
    feats, _ = features_of(X, y)
    sol = OrderedSolver(feats, y, K, sample_weight=w, max_depth=4,
                        techniques={"perfect_is_final": False}).solve()
    assert sol.optimal and sol.cost == pytest.approx(cost, abs=1e-9)
    assert sol.tree.n_splits == splits


def test_perfect_is_final_off_proves_the_fewest_splits():
    """Iris at depth 4: the first perfect tree has more splits than the smallest one."""
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    first = OptimalTreeClassifier(max_depth=4).fit(X, y)
    smallest = OptimalTreeClassifier(max_depth=4, techniques={"perfect_is_final": False}).fit(X, y)
    assert first.objective_ == smallest.objective_ == 0
    assert smallest.tree_.n_splits < first.tree_.n_splits


def test_a_deep_perfect_tree_is_looked_for_without_penalties(monkeypatch):
    """Iris has a perfect tree of depth 4: searched for without penalties, every node stops at
    its first perfect subtree, a fraction of the size-minimal search's work."""
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    feats, _ = features_of(X, y)

    def evaluations():
        solver = OrderedSolver(feats, y, 3, max_depth=4)
        sol = solver.solve()
        assert sol.optimal and sol.cost == 0 and sol.lower_bound == 0
        return solver.stats[1]

    first = evaluations()
    monkeypatch.setattr(OrderedSolver, "_perfect_first", lambda self: False)
    assert 3 * first < evaluations()


@settings(max_examples=40, deadline=None)
@given(SEED)
def test_fewest_splits_squared_error(seed):
    """Regression with small integer targets: many trees tie on the squared error."""
    rng = np.random.default_rng(seed)
    X, _, _ = small_numeric(rng, 6, 10)
    t = rng.integers(0, 3, len(X)).astype(float)
    if rng.random() < 0.3:
        t[:] = np.repeat(rng.integers(0, 3, 2), [len(t) // 2, len(t) - len(t) // 2])
    depth = int(rng.integers(1, 4))
    w = None if rng.random() < 0.6 else rng.integers(1, 3, len(t)).astype(float)
    min_leaf = 1 if rng.random() < 0.7 else 2
    cost, splits = sse_optimum(X, t, depth, w, min_leaf)
    feats, B = features_of(X)
    sol = OrderedSolver(feats, None, 1, sample_weight=w, max_depth=depth,
                        min_samples_leaf=min_leaf, target=t).solve()
    scale = max(1.0, cost)
    assert sol.optimal
    assert sol.cost == pytest.approx(cost, abs=1e-8 * scale)
    assert sol.tree.n_splits == splits
    assert tree_cost(sol.tree, B, None, 1, w, target=t) == pytest.approx(sol.cost, abs=1e-8)


def test_redundant_splits_are_dropped():
    """A pure node needs no split, however the data tie: the optimum is a single split."""
    X = np.array([[0, 0], [1, 0], [2, 1], [3, 1], [4, 0], [5, 1]], float)
    y = np.array([0, 0, 0, 1, 1, 1])
    for depth in (1, 2, 3):
        model = OptimalTreeClassifier(max_depth=depth, search="ordered").fit(X, y)
        assert model.objective_ == 0 and model.tree_.n_splits == 1


# ---------------------------------------------------------------- 2-3. cut-short solves
def truncated(feats, y, K, depth, w, min_leaf, work, techniques=None, target=None):
    solver = OrderedSolver(feats, y, K, sample_weight=w, max_depth=depth,
                           min_samples_leaf=min_leaf, techniques=techniques, target=target)
    solver.clock_work = work
    return solver.solve(time_limit=CUT)


@settings(max_examples=80, deadline=None)
@given(SEED)
def test_truncated_solves_are_valid(seed):
    """Stopped after a random amount of work: lower bound <= optimum <= cost, the tree costs
    what is reported, and the global incumbent never makes the tree worse."""
    rng = np.random.default_rng(seed)
    X, y, K = small_numeric(rng, 8, 14)
    if rng.random() < 0.5:
        X[:, 0] = np.round(rng.normal(size=len(y)), 1)  # many thresholds
    depth = int(rng.integers(2, 5)) if len(y) <= 10 else int(rng.integers(2, 4))
    w = weights_for(rng, len(y))
    min_leaf = 1 if rng.random() < 0.7 else 2
    opt = optimal_cost(raw_splits(X), y, K, depth, None, w, min_leaf)
    feats, B = features_of(X, y)
    work = int(rng.integers(1, 200))
    sol = truncated(feats, y, K, depth, w, min_leaf, work)
    assert sol.lower_bound <= opt + 1e-9
    assert sol.cost >= opt - 1e-9
    assert sol.lower_bound <= sol.cost + 1e-9
    assert tree_cost(sol.tree, B, y, K, w) == pytest.approx(sol.cost, abs=1e-9)
    if sol.optimal:
        assert sol.limit is None and sol.cost == pytest.approx(opt, abs=1e-9)
    else:
        assert sol.limit == "time_limit"
    off = truncated(feats, y, K, depth, w, min_leaf, work, {"global_incumbent": False})
    assert sol.cost <= off.cost + 1e-9
    if sol.cost > 0 or depth < PERFECT_IS_FINAL_DEPTH:  # else final once found (_lexicographic)
        assert off.optimal == sol.optimal and off.lower_bound == pytest.approx(sol.lower_bound)


@settings(max_examples=30, deadline=None)
@given(SEED)
def test_truncated_squared_error_bounds(seed):
    rng = np.random.default_rng(seed)
    X, _, _ = small_numeric(rng, 7, 11)
    t = np.round(rng.normal(size=len(X)), 1)
    depth = int(rng.integers(2, 4))
    cost, _ = sse_optimum(X, t, depth, None, 1)
    feats, B = features_of(X)
    sol = truncated(feats, None, 1, depth, None, 1, int(rng.integers(1, 100)), target=t)
    tol = 1e-8 * max(1.0, cost)
    assert sol.lower_bound <= cost + tol <= sol.cost + 2 * tol
    assert tree_cost(sol.tree, B, None, 1, None, target=t) == pytest.approx(sol.cost, abs=1e-8)


def test_cut_short_bound_is_informative():
    """One numeric feature: once the root's first split is evaluated every other split is
    bounded by its neighbours, so a cut-short solve proves a positive bound."""
    rng = np.random.default_rng(0)
    x = np.arange(60.0)
    y = ((x // 7) % 2).astype(int) ^ (rng.random(60) < 0.1)
    X = x.reshape(-1, 1)
    feats, _ = features_of(X, y)
    full = OrderedSolver(feats, y, 2, max_depth=3).solve()
    bounds = []
    for work in (50, 200, 1000, 3000, 10000):
        sol = truncated(feats, y, 2, 3, None, 1, work)
        assert sol.lower_bound <= full.cost <= sol.cost
        bounds.append(sol.lower_bound)
    assert max(bounds) > 0


def test_board_shows_bound_and_best():
    rng = np.random.default_rng(1)
    X, y, K = small_numeric(rng, 40, 40, K=2)
    X[:, 0] = np.round(rng.normal(size=40), 2)
    feats, _ = features_of(X, y)
    full = OrderedSolver(feats, y, K, max_depth=3).solve()
    solver = OrderedSolver(feats, y, K, max_depth=3)
    solver.clock_work = 300
    board = new_board()
    sol = solver.solve(board=board, time_limit=CUT, roots=None)
    assert not sol.optimal
    assert 0 <= board[LOWER] * solver.cost_scale <= full.cost
    assert full.cost <= board[BEST] * solver.cost_scale < np.inf


# ---------------------------------------------------------------- 4. time limit
def test_time_limit_is_kept():
    rng = np.random.default_rng(0)
    n = 6000
    X = np.round(rng.normal(size=(n, 6)), 3)
    y = ((X[:, 0] > 0) ^ (X[:, 1] + X[:, 2] > 0.3) ^ (rng.random(n) < 0.2)).astype(int)
    feats, B = features_of(X, y)
    OrderedSolver(feats, y, 2, max_depth=3).solve(time_limit=0.01)  # loaded before timing
    for limit in (0.05, 0.3):
        solver = OrderedSolver(feats, y, 2, max_depth=5)
        start = time.perf_counter()
        sol = solver.solve(time_limit=limit)
        wall = time.perf_counter() - start
        assert sol.limit == "time_limit" and not sol.optimal
        assert wall < limit + max(0.1 * limit, 0.2) + 0.3  # loose: a busy machine
        assert 0 <= sol.lower_bound <= sol.cost
        assert tree_cost(sol.tree, B, y, 2, None) == pytest.approx(sol.cost)


# ---------------------------------------------------------------- 5. memory limit
def test_memory_limit():
    rng = np.random.default_rng(2)
    X, y, K = small_numeric(rng, 60, 60, K=2)
    X[:, 0] = np.round(rng.normal(size=60), 1)
    feats, B = features_of(X, y)
    full = OrderedSolver(feats, y, K, max_depth=4)
    need = full.memory_need(4)
    assert full.memory_need(1) <= full.memory_need(3) < need
    assert full.memory_need(0) < full.memory_need(1)
    opt = full.solve()
    enough = OrderedSolver(feats, y, K, max_depth=4, memory_limit=need).solve()
    assert enough.optimal and enough.limit is None and enough.cost == opt.cost
    # Depth 3 fits: its optimum, not proven optimal for depth 4, with the equivalent-points bound.
    tight = OrderedSolver(feats, y, K, max_depth=4, memory_limit=need - 1)
    sol = tight.solve()
    d3 = OrderedSolver(feats, y, K, max_depth=3).solve()
    assert not sol.optimal and sol.limit == "memory_limit"
    assert sol.cost == d3.cost and sol.cost >= opt.cost
    assert sol.lower_bound == pytest.approx(min(tight.equivalent_points_bound(), sol.cost))
    assert sol.lower_bound <= opt.cost
    assert tree_cost(sol.tree, B, y, K, None) == pytest.approx(sol.cost)
    # Nothing fits: a leaf.
    leaf = OrderedSolver(feats, y, K, max_depth=4, memory_limit=1).solve()
    assert leaf.limit == "memory_limit" and leaf.tree.n_splits == 0
    assert leaf.cost == float(min(np.bincount(y)))


def test_memory_need_counts_the_kernel_arrays():
    """The estimate grows like the sorted rows: levels x features x rows."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 4))
    y = (X[:, 0] > 0).astype(int)
    feats, _ = features_of(X, y)
    s = OrderedSolver(feats, y, 2, max_depth=5)
    F, n = feats.bucket.shape
    assert s.memory_need(5) >= 4 * 28 * F * n  # 4 levels: rows, buckets, labels, bounds
    assert s.memory_need(5) < 4 * 28 * F * n + 4 * 200 * n + 100_000
