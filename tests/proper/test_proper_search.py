"""Proper-tree search: brute-force oracles over K-permutations (Theorem 2.3) and axis trees."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exactree.solvers.proper import (ancestry_matrix, make_rules, odt, point_data, sodt,
                                     sodt_generic, solve_proper)
from exactree.solvers.proper.search import rule_side


# ------------------------------------------------------------------ oracle: K-permutations
def tree_from_permutation(K: np.ndarray, perm: tuple[int, ...]):
    """Insert the rules of ``perm`` in order, each walking down by its ancestry signs.

    Returns ``(children, levelorder)`` or None when a rule meets a node it is unrelated to.
    ``children[r] = [left, right]`` (-1 for a leaf slot).
    """
    children = {perm[0]: [-1, -1]}
    for r in perm[1:]:
        node = perm[0]
        while True:
            sign = K[node, r]
            if sign == 0:
                return None
            slot = 0 if sign == 1 else 1
            nxt = children[node][slot]
            if nxt < 0:
                children[node][slot] = r
                children[r] = [-1, -1]
                break
            node = nxt
    order, level = [], [perm[0]]
    while level:
        order.extend(level)
        level = [c for r in level for c in children[r] if c >= 0]
    return children, tuple(order)


def proper_trees_by_permutation(K: np.ndarray, rules_idx: list[int]):
    """All proper trees over the rules, one per *valid* K-permutation (its level order)."""
    local = {r: i for i, r in enumerate(rules_idx)}
    Kl = K[np.ix_(rules_idx, rules_idx)]
    for perm in itertools.permutations(range(len(rules_idx))):
        got = tree_from_permutation(Kl, perm)
        if got is not None and got[1] == perm:
            yield got[0], perm[0]
    del local


def evaluate_tree(children, root, sides, weights, counts, min_leaf, max_depth):
    """Misclassification of a proper tree; inf when a leaf is too small or the tree too deep."""
    total = 0.0
    stack = [(root, np.ones(sides.shape[1], bool), 0)]
    while stack:
        node, mask, depth = stack.pop()
        if node < 0:
            if counts[mask].sum() < min_leaf:
                return math.inf
            w = weights[mask].sum(axis=0)
            total += w.sum() - w.max()
            continue
        if depth >= max_depth:
            return math.inf
        left, right = children[node]
        stack.append((left, mask & sides[node], depth + 1))
        stack.append((right, mask & ~sides[node], depth + 1))
    return total


def brute_force_odt(rules, data, n_splits, min_leaf=1, max_depth=10**9):
    K = ancestry_matrix(rules)
    sides = rules.side_matrix()
    best = math.inf
    w = data.weights.sum(axis=0)
    if data.counts.sum() >= min_leaf:
        best = w.sum() - w.max()
    for k in range(1, n_splits + 1):
        for combo in itertools.combinations(range(len(rules)), k):
            for children, root in proper_trees_by_permutation(K, list(combo)):
                ch = {combo[i]: [combo[c] if c >= 0 else -1 for c in kids]
                      for i, kids in children.items()}
                best = min(best, evaluate_tree(ch, combo[root], sides, data.weights, data.counts,
                                               min_leaf, max_depth))
    return best


def tiny_data(seed, n, d=2, n_classes=2, grid=False):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(n, d)).astype(float) if grid else rng.normal(size=(n, d))
    y = rng.integers(0, n_classes, size=n)
    return X, y


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(3, 7), k=st.integers(1, 3),
       family=st.sampled_from(["axis", "hyperplane", "mixed"]), grid=st.booleans(),
       min_leaf=st.integers(1, 2), max_depth=st.sampled_from([1, 2, None]))
def test_odt_matches_permutation_brute_force(seed, n, k, family, grid, min_leaf, max_depth):
    X, y = tiny_data(seed, n, grid=grid)
    data = point_data(X, y, np.ones(n), 2)
    rules = make_rules(data.X, family, degree=1, ties="left" if family == "mixed" else "all")
    if len(rules) > 40 and k == 3:
        rules = rules.subset(np.arange(40))
    res = odt(rules, data, k, min_samples_leaf=min_leaf, max_depth=max_depth)
    oracle = brute_force_odt(rules, data, k, min_leaf, 10**9 if max_depth is None else max_depth)
    assert res.value == pytest.approx(oracle)
    assert res.status == "optimal"


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 8), k=st.integers(2, 4))
def test_tree_count_equals_valid_permutations(seed, n, k):
    """Theorem 2.3 / Corollary 2.4: the proper trees over K rules are exactly the valid
    K-permutations; the DP generates each once."""
    X, y = tiny_data(seed, n)
    data = point_data(X, y, np.ones(n), 2)
    rules = make_rules(data.X, "hyperplane")
    K = ancestry_matrix(rules)
    rng = np.random.default_rng(seed)
    for _ in range(5):
        if len(rules) < k:
            break
        combo = np.sort(rng.choice(len(rules), size=k, replace=False))
        n_perm = sum(1 for _ in proper_trees_by_permutation(K, list(combo)))
        value, n_dp, sc = sodt(rules, data, combo, min_samples_leaf=0)
        assert n_dp == n_perm
        if n_dp:  # the tree sodt picked is the one its level-order permutation describes
            children = _children_from_dp(sc, k)
            root = int(sc["choice"][0])
            got = tree_from_permutation(K[np.ix_(combo, combo)], _level_order(children, root))
            assert got is not None and got[0] == children


def _children_from_dp(sc, k):
    children, stack = {}, [(0, None, None)]
    while stack:
        code, parent, slot = stack.pop()
        rule = int(sc["choice"][code]) if sc["rsmask"][code] else -1
        if parent is not None:
            children[parent][slot] = rule
        if rule >= 0:
            children[rule] = [-1, -1]
            stack.append((code + 3 ** rule, rule, 0))
            stack.append((code + 2 * 3 ** rule, rule, 1))
    return children


def _level_order(children, root):
    order, level = [], [root]
    while level:
        order.extend(level)
        level = [c for r in level for c in children[r] if c >= 0]
    return tuple(order)


def test_generic_sodt_matches_kernel():
    X, y = tiny_data(3, 8)
    data = point_data(X, y, np.ones(8), 2)
    rules = make_rules(data.X, "hyperplane")
    K = ancestry_matrix(rules)
    sides = rules.side_matrix()

    def leaf(mask):
        w = data.weights[mask].sum(axis=0)
        return w.sum() - w.max()

    rng = np.random.default_rng(0)
    for _ in range(30):
        combo = np.sort(rng.choice(len(rules), size=3, replace=False))
        v_kernel, _, _ = sodt(rules, data, combo, min_samples_leaf=0)
        v_generic, _ = sodt_generic(K, sides, list(combo), np.ones(data.X.shape[0], bool), leaf)
        assert v_kernel == pytest.approx(v_generic)


# ------------------------------------------------------------------ oracle: unrestricted axis trees
def best_axis_tree(X, y, w, rows, k, n_classes):
    """Best unrestricted axis-parallel tree with at most k splits (any thresholds)."""
    tot = np.bincount(y[rows], weights=w[rows], minlength=n_classes)
    best = tot.sum() - tot.max()
    if k == 0 or rows.sum() < 2:
        return best
    for f in range(X.shape[1]):
        vals = np.unique(X[rows, f])
        for t in (vals[:-1] + vals[1:]) / 2:
            left = rows & (X[:, f] <= t)
            right = rows & ~(X[:, f] <= t)
            for kl in range(k):
                lv = best_axis_tree(X, y, w, left, kl, n_classes)
                if lv >= best:
                    continue
                best = min(best, lv + best_axis_tree(X, y, w, right, k - 1 - kl, n_classes))
    return best


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(4, 10), k=st.integers(1, 3),
       grid=st.booleans(), n_classes=st.integers(2, 3))
def test_axis_family_equals_unrestricted_axis_trees(seed, n, k, grid, n_classes):
    X, y = tiny_data(seed, n, n_classes=n_classes, grid=grid)
    w = np.random.default_rng(seed).integers(1, 3, size=n).astype(float)
    res = solve_proper(X, y, w, n_classes, n_splits=k, rules="axis")
    assert res.objective == pytest.approx(best_axis_tree(X, y, w, np.ones(n, bool), k, n_classes))
    assert res.tree.n_splits <= k


def test_tree_agrees_with_rule_sides():
    """The fitted Tree sends every training row where the solver's side matrix says."""
    X, y = tiny_data(11, 25)
    data = point_data(X, y, np.ones(25), 2)
    for family in ("axis", "hyperplane", "polynomial"):
        rules = make_rules(data.X, family, degree=2, ties="left")
        side = rules.side_matrix()
        for m in range(0, len(rules), max(1, len(rules) // 200)):
            assert np.array_equal(rule_side(rules, m, data.X), side[m])


def test_hyperplane_beats_axis_and_time_limit():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(30, 2))
    y = (X[:, 0] + X[:, 1] > 0.1).astype(int)
    axis = solve_proper(X, y, np.ones(30), 2, n_splits=1, rules="axis")
    plane = solve_proper(X, y, np.ones(30), 2, n_splits=1, rules="hyperplane")
    assert plane.objective == 0 <= axis.objective
    assert plane.status == "optimal" and plane.lower_bound == plane.objective
    # conflicting labels on repeated rows: the optimum is > 0, so only the clock stops the search
    Xc, yc = np.vstack([X, X[:3]]), np.concatenate([y, 1 - y[:3]])
    tl = solve_proper(Xc, yc, np.ones(33), 2, n_splits=3, rules="hyperplane", time_limit=1e-6)
    assert tl.status == "time_limit" and tl.lower_bound == 0.0
    assert tl.objective >= 3
    # the clock stopped either the rule generation or the combination loop
    assert not tl.stats["rules_complete"] or tl.stats["rule_evaluations"] < 2 * len(X) ** 4


def test_weights_and_duplicates():
    X, y = tiny_data(5, 12, grid=True)
    w = np.arange(1, 13) / 3.0  # fractional: the non-bit-plane path
    Xr, yr = np.repeat(X, 2, axis=0), np.repeat(y, 2)
    a = solve_proper(X, y, 2 * w, 2, n_splits=2, rules="axis")
    b = solve_proper(Xr, yr, np.repeat(w, 2), 2, n_splits=2, rules="axis")
    assert a.objective == pytest.approx(b.objective)
    assert a.objective == pytest.approx(best_axis_tree(X, y, 2 * w, np.ones(12, bool), 2, 2))


@pytest.mark.parametrize("family", ["axis", "hyperplane", "polynomial", "mixed"])
def test_fitted_tree_reproduces_the_search_objective(family):
    """The exported Tree (its own arithmetic, ``<=`` goes left) scores what the search proved."""
    for seed in range(3):
        X, y = tiny_data(seed, 11, n_classes=3, grid=seed == 2)
        res = solve_proper(X, y, np.ones(11), 3, n_splits=2, rules=family, ties="left"
                           if family in ("polynomial", "mixed") else "all", max_rules=10**6)
        assert res.objective == res.stats["search_objective"]


def test_generic_odt_with_custom_objectives():
    """eq. 14 with other f and g: misclassification agrees with the kernel; a size objective
    (every leaf costs 1, a node adds 1, as in eq. 22) is 2K + 1 for any proper tree."""
    from exactree.solvers.proper import odt_generic

    X, y = tiny_data(7, 9)
    data = point_data(X, y, np.ones(9), 2)
    rules = make_rules(data.X, "hyperplane", ties="left")
    K, sides = ancestry_matrix(rules), rules.side_matrix()

    def errors(mask):
        w = data.weights[mask].sum(axis=0)
        return w.sum() - w.max()

    value, combo, _ = odt_generic(K, sides, 2, errors)
    assert value == pytest.approx(odt(rules, data, 2, exact_k=True, min_samples_leaf=0).value)
    size, _, tree = odt_generic(K, sides, 2, lambda mask: 1.0, lambda a, b: a + b + 1)
    assert size == 5 and tree[0] == "node"
