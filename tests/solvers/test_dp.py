"""MurTree DP solver against brute force, the known optima and itself with techniques off."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import optimal_cost

from exactree.solvers.dp._depth2 import _matrix_counts
from exactree.solvers.dp._search import SORT_ALL_ROOTS
from exactree.solvers.dp.solver import DEFAULT_OFF, TECHNIQUES, DPSolver, row_groups


def random_problem(seed: int):
    rng = np.random.default_rng(seed)
    n, m, K = int(rng.integers(4, 28)), int(rng.integers(1, 6)), int(rng.integers(2, 4))
    X = rng.random((n, m)) < rng.uniform(0.2, 0.8)
    y = rng.integers(0, K, n)
    return rng, X, y, K


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_matches_brute_force(seed):
    rng, X, y, K = random_problem(seed)
    depth = int(rng.integers(1, 4))
    nodes = None if rng.random() < 0.4 else int(rng.integers(0, 1 << depth))
    w = None if rng.random() < 0.6 else rng.integers(1, 4, len(y)) * rng.choice([1.0, 0.37])
    min_leaf = 1 if rng.random() < 0.7 else int(rng.integers(2, 4))
    sol = DPSolver(X, y, K, sample_weight=w, max_depth=depth,
                   min_samples_leaf=min_leaf).solve(nodes)
    expected = optimal_cost(X, y, K, depth, nodes, w, min_leaf)
    assert sol.optimal and sol.cost == pytest.approx(expected, abs=1e-9)
    assert sol.lower_bound == pytest.approx(sol.cost)
    assert sol.tree.n_splits <= (nodes if nodes is not None else (1 << depth) - 1)
    if sol.tree.feature >= 0:  # every leaf of a split tree holds at least min_leaf rows
        assert min(leaf_rows(sol.tree, X)) >= min_leaf


def leaf_rows(node, X, rows=None):
    """Number of rows of ``X`` reaching each leaf of a BinaryNode tree."""
    rows = np.ones(len(X), bool) if rows is None else rows
    if node.feature < 0:
        return [int(rows.sum())]
    f = X[:, node.feature]
    return leaf_rows(node.true, X, rows & f) + leaf_rows(node.false, X, rows & ~f)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_node_class_weights_are_those_of_the_rows_reaching_them(seed):
    """Every node of a solved tree holds the class weights of the rows that reach it (one
    compiled pass of the rows fills them, _route.route_weights)."""
    rng, X, y, K = random_problem(seed)
    w = None if rng.random() < 0.5 else rng.random(len(y)) * 3
    sol = DPSolver(X, y, K, sample_weight=w, max_depth=int(rng.integers(1, 4))).solve()
    weights = np.ones(len(y)) if w is None else w
    stack = [(sol.tree, np.ones(len(y), bool))]
    while stack:
        node, rows = stack.pop()
        expected = np.bincount(y[rows], weights=weights[rows], minlength=K)
        np.testing.assert_allclose(node.counts, expected, atol=1e-12)
        if node.feature >= 0:
            f = X[:, node.feature]
            stack += [(node.true, rows & f), (node.false, rows & ~f)]


@pytest.mark.parametrize("flipped", TECHNIQUES)
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_each_technique_switched_gives_the_same_optimum(flipped, seed):
    """Every technique switched away from its default alone (off, or on for DEFAULT_OFF)."""
    rng, X, y, K = random_problem(seed)
    depth = int(rng.integers(2, 4))
    nodes = None if rng.random() < 0.5 else int(rng.integers(1, 1 << depth))
    w = None if rng.random() < 0.7 else rng.integers(1, 4, len(y)) * 0.5
    techniques = {flipped: flipped in DEFAULT_OFF}
    sol = DPSolver(X, y, K, sample_weight=w, max_depth=depth, techniques=techniques).solve(nodes)
    assert sol.cost == pytest.approx(optimal_cost(X, y, K, depth, nodes, w), abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_incremental_pair_counts_equal_a_fresh_count(seed):
    """A chain of node changes, each applied as a difference where it is small enough, leaves
    the same pair matrices as counting the last node from scratch."""
    rng = np.random.default_rng(seed)
    n, m, K = int(rng.integers(1, 40)), int(rng.integers(1, 7)), int(rng.integers(2, 4))
    X = rng.random((n, m)) < 0.5
    y = rng.integers(0, K, n)
    rows, cols = np.nonzero(X)
    row_ptr = np.searchsorted(rows, np.arange(n + 1)).astype(np.int64)
    row_feat = cols.astype(np.int64)
    weights = np.ones(n)
    C = np.full((K + 1, m, m), np.nan)
    prev = np.full(n + 1, -1, np.int64)
    members = rng.random(n) < 0.5
    for _ in range(6):
        members ^= rng.random(n) < rng.uniform(0, 0.3)  # a few instances change sides
        idx = np.flatnonzero(members).astype(np.int64)
        _matrix_counts(idx, len(idx), y, weights, row_ptr, row_feat, K, C, prev, True)
        Xi = X[idx].astype(float)
        for k in range(K):
            np.testing.assert_array_equal(C[k], Xi[y[idx] == k].T @ Xi[y[idx] == k])
        np.testing.assert_array_equal(C[K], Xi.T @ Xi)
        assert prev[0] == len(idx) and list(prev[1 : len(idx) + 1]) == list(idx)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_row_by_row_pair_counts_match_brute_force(seed):
    """Nodes with more usable features than the pair matrix holds count pairs row by row."""
    import exactree.solvers.dp.solver as dp

    rng, X, y, K = random_problem(seed)
    w = None if rng.random() < 0.5 else rng.integers(1, 4, len(y)) * 0.5
    saved = dp.PAIR_MATRIX_BYTES
    dp.PAIR_MATRIX_BYTES = 8 * (K + 1)  # room for one feature: every depth-2 node uses rows
    try:
        sol = dp.DPSolver(X, y, K, sample_weight=w, max_depth=2).solve()
    finally:
        dp.PAIR_MATRIX_BYTES = saved
    assert sol.cost == pytest.approx(optimal_cost(X, y, K, 2, None, w))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_min_leaf_with_many_features_matches_brute_force(seed):
    """The similarity bound must not prune with a minimum leaf size (a regression: a node's
    optimal tree need not be feasible on a similar node when leaves must hold 2+ rows)."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(8, 24)), int(rng.integers(3, 7))
    X = rng.random((n, m)) < rng.uniform(0.2, 0.8)
    y = rng.integers(0, 2, n)
    min_leaf = int(rng.integers(2, 4))
    sol = DPSolver(X, y, 2, max_depth=3, min_samples_leaf=min_leaf).solve()
    assert sol.cost == optimal_cost(X, y, 2, 3, None, None, min_leaf)


def test_min_leaf_similarity_regression():
    rng = np.random.default_rng(210)
    n, m = int(rng.integers(8, 30)), int(rng.integers(3, 7))
    X = rng.random((n, m)) < rng.uniform(0.2, 0.8)
    y = rng.integers(0, 2, n)
    assert DPSolver(X, y, 2, max_depth=3, min_samples_leaf=2).solve().cost == \
        optimal_cost(X, y, 2, 3, None, None, 2)


def test_oversized_problem_is_a_clear_error(monkeypatch):
    import exactree.solvers.dp.solver as dp

    monkeypatch.setattr(dp, "MAX_DATA_BYTES", 1000)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="max_thresholds"):
        dp.DPSolver(rng.random((200, 20)) < 0.5, rng.integers(0, 2, 200), 2)


def test_node_budget_path_reuses_one_cache():
    rng, X, y, K = random_problem(7)
    solver = DPSolver(X, y, K, max_depth=3)
    costs = [solver.solve(b).cost for b in range(8)]
    assert costs == [optimal_cost(X, y, K, 3, b) for b in range(8)]
    assert all(a >= b for a, b in zip(costs, costs[1:]))


def test_deterministic_tree():
    rng, X, y, K = random_problem(11)
    a = DPSolver(X, y, K, max_depth=3).solve().tree
    b = DPSolver(X, y, K, max_depth=3).solve().tree

    def flat(node):
        return [] if node.feature < 0 else [node.feature] + flat(node.true) + flat(node.false)

    assert flat(a) == flat(b)


SMALL = ["anneal", "breast-wisconsin", "heart-cleveland", "hepatitis", "lymph", "monk1_bin",
         "tic-tac-toe", "vote", "iris_categorical_bin", "primary-tumor"]


@pytest.mark.parametrize("name", SMALL)
def test_reproduces_known_optima(name, binary_data, optima):
    X, y = binary_data(name)
    y = np.unique(y, return_inverse=True)[1]
    for depth in (2, 3, 4):
        if (name, depth) not in optima:
            continue
        sol = DPSolver(X, y, int(y.max()) + 1, max_depth=depth).solve()
        assert sol.cost == optima[(name, depth)], (name, depth)


def test_time_limit_returns_a_valid_tree_with_a_bound(binary_data):
    X, y = binary_data("vehicle")
    y = np.unique(y, return_inverse=True)[1]
    solver = DPSolver(X, y, int(y.max()) + 1, max_depth=4)
    sol = solver.solve(time_limit=0.05)
    assert not sol.optimal
    assert 0 <= sol.lower_bound <= sol.cost
    leaves = []
    stack = [sol.tree]
    while stack:
        node = stack.pop()
        if node.feature < 0:
            leaves.append(node.counts)
        else:
            stack += [node.true, node.false]
    assert sum(c.sum() - c.max() for c in leaves) == sol.cost
    assert sum(c.sum() for c in leaves) == len(y)


def test_rebuild_without_cache_keeps_the_time_limit(binary_data):
    """With caching off, subtrees are solved again to rebuild the tree: within the deadline (each
    re-solve stops after at most 16 search steps of two evaluations once it has passed), not to
    optimality, and the answer is not reported optimal."""
    X, y = binary_data("vehicle")
    y = np.unique(y, return_inverse=True)[1]
    K = int(y.max()) + 1
    cut = DPSolver(X, y, K, max_depth=4, techniques={"cache": False}).solve(time_limit=1e-9)
    assert not cut.optimal and cut.lower_bound <= cut.cost
    work = cut.stats["leaf_evaluations"] + cut.stats["depth2_solves"]
    assert work < 100, cut.stats  # re-solving the root's children in full takes over 300


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_equivalent_points_bound_is_the_deepest_optimum(seed):
    """No tree beats the equivalent-points bound, and one deep enough to isolate every distinct
    row (depth = number of features) meets it."""
    rng, X, y, K = random_problem(seed)
    X = X[rng.integers(0, len(y), len(y))]  # repeated rows, most with other labels
    w = None if rng.random() < 0.5 else rng.integers(1, 4, len(y)) * 0.5
    bound = DPSolver(X, y, K, sample_weight=w, max_depth=1).equivalent_points_bound()
    assert bound <= optimal_cost(X, y, K, 1, None, w) + 1e-9
    assert bound == pytest.approx(optimal_cost(X, y, K, X.shape[1], None, w))


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_row_groups_partition_rows_as_whole_row_comparison_does(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 30)), int(rng.integers(0, 4))
    rows = rng.integers(0, int(rng.integers(1, 4)), (n, m))
    groups = row_groups(rows)
    _, whole = np.unique(rows, axis=0, return_inverse=True)
    whole = whole.ravel()
    if groups is None:  # no two rows alike
        assert len(np.unique(whole)) == n
    else:
        assert len(set(zip(groups, whole))) == len(set(groups)) == len(set(whole))


@pytest.mark.parametrize("seed, nodes, min_leaf", [(0, None, 1), (1, 4, 3)])
def test_frames_with_many_roots_agree_with_index_order(seed, nodes, min_leaf):
    """Frames with more candidate roots than SORT_ALL_ROOTS try them sorted by depth-2 cost;
    the optimum must equal the plain index-order search (checked against brute force above)."""
    rng = np.random.default_rng(seed)
    X = rng.random((150, SORT_ALL_ROOTS + 44)) < 0.3
    y = (X[:, :3].sum(1) + rng.integers(0, 2, 150)) % 3
    sorted_roots = DPSolver(X, y, 3, max_depth=3, min_samples_leaf=min_leaf).solve(nodes)
    index_order = DPSolver(X, y, 3, max_depth=3, min_samples_leaf=min_leaf,
                           techniques={"depth2_incumbent": False}).solve(nodes)
    assert sorted_roots.cost == index_order.cost


def _tree_rows(node, out):
    """Preorder (true child first) feature and class weights of a BinaryNode tree."""
    out.append((node.feature, node.counts.tolist()))
    if node.feature >= 0:
        _tree_rows(node.true, out)
        _tree_rows(node.false, out)
    return out


def test_compiled_rebuild_gives_the_python_rebuild_tree(monkeypatch):
    """The tree read back from the cache in one compiled pass (``_rebuild_arrays``) is the one
    ``_rebuild`` and ``_fill_counts`` give: the same splits (input columns), class weights
    and cost, with weights, classes, leaf sizes, budgets and duplicate columns. (A subtree
    whose budget the cache does not hold sends the rebuild back to Python, which solves it
    again: most problems here do not.)"""
    original = DPSolver._rebuild_compiled
    compiled = []

    def spy(self, *a):
        out = original(self, *a)
        compiled.append(out is not None)
        return out

    for seed in range(80):
        rng = np.random.default_rng(seed)
        n, m, K = int(rng.integers(6, 90)), int(rng.integers(1, 9)), int(rng.integers(2, 4))
        X = rng.random((n, m)) < rng.uniform(0.2, 0.8)
        if m > 2 and rng.random() < 0.5:
            X[:, 1] = ~X[:, 0]  # a complement: kernel columns differ from input columns
        y = rng.integers(0, K, n)
        depth = int(rng.integers(3, 5))
        nodes = None if rng.random() < 0.5 else int(rng.integers(0, 1 << depth))
        w = None if rng.random() < 0.6 else rng.integers(1, 4, n) * rng.choice([1.0, 0.37])
        min_leaf = 1 if rng.random() < 0.7 else int(rng.integers(2, 4))
        args = dict(sample_weight=w, max_depth=depth, min_samples_leaf=min_leaf)
        monkeypatch.setattr(DPSolver, "_rebuild_compiled", spy)
        fast = DPSolver(X, y, K, **args).solve(nodes)
        monkeypatch.setattr(DPSolver, "_rebuild_compiled", lambda self, *a: None)
        slow = DPSolver(X, y, K, **args).solve(nodes)
        assert fast.cost == slow.cost and fast.lower_bound == slow.lower_bound
        assert _tree_rows(fast.tree, []) == _tree_rows(slow.tree, [])
    assert sum(compiled) >= 0.8 * len(compiled) > 40


def test_compiled_rebuild_steps_aside_without_the_cache():
    """A subtree missing from the cache (caching off) is solved again by the Python rebuild."""
    rng = np.random.default_rng(5)
    X, y = rng.random((80, 7)) < 0.5, rng.integers(0, 2, 80)
    on = DPSolver(X, y, 2, max_depth=4).solve()
    off = DPSolver(X, y, 2, max_depth=4, techniques={"cache": False})
    assert off._rebuild_compiled(off.max_budget, 0, 7, 7) is None
    sol = off.solve()
    assert sol.optimal and sol.cost == on.cost


@pytest.mark.parametrize("seed", range(6))
def test_threshold_tree_walk_is_the_general_walk(seed, monkeypatch):
    """to_tree's one-walk shortcut for trees of threshold tests builds the arrays of the
    general walk: node order, children, thresholds, chosen and default missing sides."""
    from exactree.data import Binarizer
    from exactree.data.encoding import Column
    from exactree.solvers.dp import convert
    from exactree.solvers.dp.solver import BinaryNode

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3))
    X[rng.random(60) < 0.2, 1] = np.nan  # a column with missing values: chosen sides
    y = rng.integers(0, 3, 60)
    binz = Binarizer().fit(X, y, [Column(f"x{j}") for j in range(3)])
    m = binz.n_features_out

    def grow(depth):
        if depth == 0 or rng.random() < 0.25:
            return BinaryNode(-1, rng.random(3) * 5)
        node = BinaryNode(int(rng.integers(0, m)), rng.random(3) * 5)
        node.true, node.false = grow(depth - 1), grow(depth - 1)
        return node

    root = grow(4)
    fast = convert.to_tree(root, binz, binz._columns, 3)
    monkeypatch.setattr(convert, "_threshold_tree", lambda *a: None)
    slow = convert.to_tree(root, binz, binz._columns, 3)
    for name in ("kind", "feature", "threshold", "child_ptr", "child", "value", "label",
                 "missing_left", "missing_seen"):
        a, b = getattr(fast, name), getattr(slow, name)
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), name
