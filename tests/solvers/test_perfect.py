"""Subtrees with at most one error (technique ``perfect_depth2``): the depth-two solve by sweeps
against brute force on nodes that are separable, nearly so or not at all, under tie-breaking
and pricing penalties, and the ordered search's size-minimal optimum unchanged with the
technique on or off on data a small tree labels (some rows relabelled)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import optimal_cost_and_splits, optimal_penalised
from ordered_cases import features_of, raw_splits

from exactree import OptimalTreeClassifier
from exactree.solvers.dp._ordered import _sort_root
from exactree.solvers.dp._perfect import few_errors_depth2
from exactree.solvers.dp.ordered import OrderedSolver

SEED = st.integers(0, 2**32 - 1)
OFF = {"perfect_depth2": False}


def tree_labelled(rng, n, m, K, depth):
    """Numeric rows (few distinct values, ties) labelled by a random tree of ``depth`` levels
    over ``K`` classes: a tree without errors exists, sometimes not one with few splits."""
    X = rng.integers(0, int(rng.integers(3, 9)), (n, m)).astype(float)
    node = np.zeros(n, np.int64)
    for _ in range(depth):
        j = rng.integers(0, m, 1 << depth)[node]
        t = rng.integers(0, 8, 1 << depth)[node]
        node = 2 * node + (X[np.arange(n), j] > t)
    y = rng.integers(0, K, 1 << depth)[node]
    return X, np.unique(y, return_inverse=True)[1]


def brute_force(X, y, budget, one, penalty):
    """The least errors + ``penalty`` per split of a tree of depth <= 2 with at most
    ``budget`` splits and at most one error (``one``) or none (inf if none), over every raw
    split, tree by tree."""
    S = raw_splits(X)
    most = 1 if one else 0

    def errors(idx):
        return len(idx) - np.bincount(y[idx]).max() if len(idx) else 0

    def sides(idx):  # each depth-one tree of a side: (errors, splits)
        trees = [(errors(idx), 0)]
        for j in range(S.shape[1]):
            left, right = idx[S[idx, j]], idx[~S[idx, j]]
            if len(left) and len(right):
                trees.append((errors(left) + errors(right), 1))
        return trees

    everything = np.arange(len(y))
    best = errors(everything) if errors(everything) <= most else np.inf
    for j in range(S.shape[1]):
        left, right = everything[S[:, j]], everything[~S[:, j]]
        if not (len(left) and len(right)):
            continue
        for e_l, s_l in sides(left):
            for e_r, s_r in sides(right):
                if e_l + e_r <= most and 1 + s_l + s_r <= budget:
                    best = min(best, e_l + e_r + penalty * (1 + s_l + s_r))
    return best


@settings(max_examples=100, deadline=None)
@given(seed=SEED)
def test_depth_two_solve_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 6))
    X, y = tree_labelled(rng, int(rng.integers(2, 16)), int(rng.integers(1, 4)), K,
                         int(rng.integers(1, 3)))
    for _ in range(int(rng.integers(0, 3))):  # rows relabelled: one error or more needed
        y[rng.integers(len(y))] = rng.integers(0, y.max() + 1)
    y = np.unique(y, return_inverse=True)[1]
    features, _ = features_of(X, y)
    bucket = features.bucket
    F, n = bucket.shape
    if F == 0:  # constant columns only: the search makes no frame
        return
    rows, bv, lab = (np.empty((F, n), np.int32) for _ in range(3))
    _sort_root(bucket, y.astype(np.int32), rows, bv, lab)
    budget = int(rng.integers(0, 4))
    one = bool(rng.random() < 0.6)
    penalty = float(rng.choice([0.0, 0.125, 0.3, 0.7, 2.5]))  # tie-breaks, then prices
    K = int(y.max()) + 1
    tf, tb = np.zeros(7, np.int64), np.zeros(7, np.int64)
    cost, swept, cut = few_errors_depth2(rows, bv, lab, np.ascontiguousarray(bucket.T), n,
                                         budget, one,
                             penalty, np.zeros((4, K, F), np.int64), np.zeros(K, np.int64),
                             np.zeros(4, np.int64), np.zeros((2, 4), np.int64), tf, tb,
                             np.inf, 0)
    assert not cut and 0 < swept <= F * n * (4 * F + 1)  # rows x features, at most every sweep
    assert cost == pytest.approx(brute_force(X, y, budget, one, penalty))
    if cost == np.inf:
        return
    # The tree costs what the solve says, walked row by row.
    leaf = np.zeros(n, np.int64)
    for _ in range(2):
        f = tf[leaf]
        go = f >= 0
        right = bucket[np.maximum(f, 0), np.arange(n)] > tb[leaf]
        leaf = np.where(go, 2 * leaf + 1 + right, leaf)
    errors = sum(np.sum(leaf == node) - np.bincount(y[leaf == node]).max()
                 for node in np.unique(leaf))
    assert errors + penalty * np.sum(tf >= 0) == pytest.approx(cost)
    assert np.sum(tf >= 0) <= budget


def test_a_priced_split_with_one_error_beats_two_without():
    """Three classes, one a single row: a split with that row wrong (1 + 2.5) beats the two
    splits an error-free tree needs (2 x 2.5) when a split costs 2.5 errors."""
    X = np.arange(6.0).reshape(-1, 1)
    y = np.array([0, 0, 0, 2, 1, 1])
    features, _ = features_of(X, y)
    rows, bv, lab = (np.empty((1, 6), np.int32) for _ in range(3))
    _sort_root(features.bucket, y.astype(np.int32), rows, bv, lab)
    tf, tb = np.zeros(7, np.int64), np.zeros(7, np.int64)
    cost, _, _ = few_errors_depth2(rows, bv, lab, np.ascontiguousarray(features.bucket.T), 6,
                                   3, True, 2.5, np.zeros((4, 3, 1), np.int64),
                                   np.zeros(3, np.int64), np.zeros(4, np.int64),
                                   np.zeros((2, 4), np.int64), tf, tb, np.inf, 0)
    assert cost == 3.5 == brute_force(X, y, 3, True, 2.5)
    assert np.sum(tf >= 0) == 1


def test_the_sweeps_count_their_work_and_stop_past_the_deadline():
    """Each row a sweep passes updates every feature's extremes: the work reported is rows x
    features (on many two-valued features F x F x n, not F x n); past the deadline, once the
    allowance is spent, it stops with no answer."""
    rng = np.random.default_rng(3)
    n, F = 300, 40
    X = rng.integers(0, 2, (n, F)).astype(float)
    y = (X[:, 0] + X[:, 1] + (rng.random(n) < 0.2) > 1).astype(int)
    features, _ = features_of(X, y)
    F = features.bucket.shape[0]
    rows, bv, lab = (np.empty((F, n), np.int32) for _ in range(3))
    _sort_root(features.bucket, y.astype(np.int32), rows, bv, lab)
    args = (rows, bv, lab, np.ascontiguousarray(features.bucket.T), n, 3, True, 0.0,
            np.zeros((4, 2, F), np.int64), np.zeros(2, np.int64), np.zeros(4, np.int64),
            np.zeros((2, 4), np.int64), np.zeros(7, np.int64), np.zeros(7, np.int64))
    cost, swept, cut = few_errors_depth2(*args, np.inf, 0)
    assert not cut and swept > F * n  # most sweeps run long on 0/1 columns
    _, early, cut = few_errors_depth2(*args, -np.inf, 0)  # past any deadline
    assert cut and early < swept
    again, _, cut = few_errors_depth2(*args, -np.inf, 10**12)  # allowance not spent: no look
    assert not cut and again == cost


@settings(max_examples=25, deadline=None)
@given(seed=SEED)
def test_search_agrees_with_brute_force_with_and_without_the_technique(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 5))
    X, y = tree_labelled(rng, int(rng.integers(8, 22)), int(rng.integers(1, 4)), K,
                         int(rng.integers(2, 4)))
    if rng.random() < 0.3:
        y[rng.integers(len(y))] = rng.integers(0, y.max() + 1)
    y = np.unique(y, return_inverse=True)[1]
    K = int(y.max()) + 1
    if K < 2:
        return
    w = rng.integers(1, 4, len(y)).astype(float) if rng.random() < 0.4 else None
    depth = int(rng.integers(2, 4))
    max_nodes = int(rng.integers(2, 8)) if rng.random() < 0.3 else None
    best = optimal_cost_and_splits(raw_splits(X), y, K, depth, max_nodes, w)
    for tech in (None, OFF):
        model = OptimalTreeClassifier(max_depth=depth, max_nodes=max_nodes, search="ordered",
                                      techniques=tech).fit(X, y, sample_weight=w)
        assert model.status_ == "optimal"
        assert (model.objective_, model.tree_.n_splits) == (pytest.approx(best[0]), best[1])
        err = np.sum((model.predict(X) != y) * (1.0 if w is None else w))
        assert err == pytest.approx(model.objective_)


def test_wine_at_depth_three_sweeps_instead_of_evaluating():
    """Wine has a tree of depth three without errors: proving that none has fewer splits is
    the sweeps' work, not split evaluations'."""
    from sklearn.datasets import load_wine
    X, y = load_wine(return_X_y=True)
    on = OptimalTreeClassifier(max_depth=3, search="ordered").fit(X, y)
    off = OptimalTreeClassifier(max_depth=3, search="ordered", techniques=OFF).fit(X, y)
    assert (on.objective_, on.tree_.n_splits) == (off.objective_, off.tree_.n_splits) == (0, 7)
    assert on.stats_["split_evaluations"] * 5 < off.stats_["split_evaluations"]


@settings(max_examples=60, deadline=None)
@given(seed=SEED)
def test_priced_splits_agree_with_brute_force_with_and_without_the_technique(seed):
    """Cost complexity (a split priced 0.3-3 errors) on data a small tree labels: the depth-two
    nodes near the optimum are the sweeps' (subtrees with one error or none)."""
    rng = np.random.default_rng(seed)
    X, y = tree_labelled(rng, int(rng.integers(8, 18)), int(rng.integers(1, 3)),
                         int(rng.integers(2, 4)), 3)
    y[rng.integers(len(y))] = rng.integers(0, y.max() + 1)
    y = np.unique(y, return_inverse=True)[1]
    K = int(y.max()) + 1
    if K < 2:
        return
    errors_per_split = float(rng.choice([0.3, 1.0, 3.0]))
    best = optimal_penalised(raw_splits(X), y, K, errors_per_split / len(y), 3)
    feats, _ = features_of(X, y)
    for tech in (None, OFF):
        sol = OrderedSolver(feats, y, K, max_depth=3, split_cost=errors_per_split,
                            techniques=tech).solve()
        assert sol.optimal
        assert sol.cost / len(y) == pytest.approx(best, abs=1e-9)
