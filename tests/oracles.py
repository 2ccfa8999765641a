"""Brute-force reference solvers: exhaustive enumeration, slow but obviously right."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np


def _most_splits(depth: int, budget: int) -> int:
    """A node budget capped at what a tree of ``depth`` levels can hold (2**depth - 1 splits):
    larger budgets allow the same trees."""
    return min(budget, (1 << depth) - 1)


def optimal_cost(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int,
                 max_nodes: int | None = None, weights: np.ndarray | None = None,
                 min_leaf: int = 1, leaf_cost=None) -> float:
    """Least weighted misclassification of any binary tree over the 0/1 columns of ``X`` with
    at most ``depth`` levels, ``max_nodes`` branching nodes and ``min_leaf`` rows per child;
    with ``leaf_cost``, the least sum of ``leaf_cost(class weights)`` over the leaves."""
    budget_cap = (1 << depth) - 1 if max_nodes is None else max_nodes
    return _subtree_costs(X, y, n_classes, weights, min_leaf, leaf_cost)(depth, budget_cap)


def _subtree_costs(X: np.ndarray, y: np.ndarray, n_classes: int, weights: np.ndarray | None,
                   min_leaf: int, leaf_cost=None) -> Callable[[int, int], float]:
    """``cost(depth, budget)``: :func:`optimal_cost` of all rows, every call sharing one memo
    of subproblems (row set, depth, budget)."""
    X = np.asarray(X, bool)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, float)

    @lru_cache(maxsize=None)
    def best(rows: frozenset, d: int, b: int) -> float:
        idx = np.fromiter(rows, int)
        counts = np.bincount(y[idx], weights=w[idx], minlength=n_classes)
        cost = counts.sum() - counts.max() if leaf_cost is None else float(leaf_cost(counts))
        if d == 0 or b == 0:
            return cost
        for f in range(X.shape[1]):
            left = frozenset(idx[X[idx, f]].tolist())
            right = rows - left
            if len(left) < min_leaf or len(right) < min_leaf:
                continue
            for nl in range(b):
                cost = min(cost, best(left, d - 1, _most_splits(d - 1, nl))
                           + best(right, d - 1, _most_splits(d - 1, b - 1 - nl)))
        return cost

    everything = frozenset(range(len(y)))
    return lambda depth, budget: best(everything, depth, _most_splits(depth, budget))


def thermometer_codes(rng: np.random.Generator, n: int, groups: int,
                      duplicates: bool = False) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """0/1 columns ``x <= t`` (or ``x > t``, orientation drawn per column) for ``groups`` random
    numeric columns, the thresholds of one source column contiguous in increasing or decreasing
    order (with ``duplicates``, sometimes a repeated member). Returns the float matrix and each
    group's column span."""
    cols: list[np.ndarray] = []
    spans = []
    for _ in range(groups):
        x = rng.integers(0, int(rng.integers(3, 12)), n).astype(float)
        distinct = np.unique(x)
        if len(distinct) < 2:
            continue
        k = int(rng.integers(1, min(6, len(distinct) - 1) + 1))
        ts = np.sort(rng.choice(distinct[:-1], k, replace=False)) + 0.5
        if rng.random() < 0.5:
            ts = ts[::-1]
        start = len(cols)
        for t in ts:
            c = x <= t
            cols.append(~c if rng.random() < 0.5 else c)
        if duplicates and rng.random() < 0.3:
            cols.append(cols[-1].copy())
        spans.append((start, len(cols)))
    return np.array(cols).T.astype(float).reshape(n, len(cols)), spans


def missing_value_splits(X: np.ndarray) -> np.ndarray:
    """Every split of the numeric columns of ``X`` (NaN = missing) that sends the missing values
    of its column to one side, as 0/1 columns (true = left): for each cut of the present values
    (below all of them, between two neighbours, above all of them) and each side for the
    missing ones. Splits with an empty side are kept; the brute force skips them."""
    X = np.asarray(X, float)
    tests = []
    for x in X.T:
        gone = np.isnan(x)
        present = np.unique(x[~gone])
        cuts = [-np.inf, *((a + b) / 2 for a, b in zip(present[:-1], present[1:])), np.inf]
        for t in cuts:
            below = ~gone & (x <= t)
            tests += [below | gone, below]
    return np.array(tests, bool).T.reshape(len(X), len(tests))


def optimal_penalised(X: np.ndarray, y: np.ndarray, n_classes: int, penalty: float,
                      depth: int | None = None, weights: np.ndarray | None = None) -> float:
    """Least ``weighted misclassification / total weight + penalty * splits`` of any binary tree
    over the 0/1 columns of ``X`` with at most ``depth`` levels (any depth when None)."""
    X = np.asarray(X, bool)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, float)
    total = w.sum()

    @lru_cache(maxsize=None)
    def best(rows: frozenset, d: int) -> float:
        idx = np.fromiter(rows, int)
        counts = np.bincount(y[idx], weights=w[idx], minlength=n_classes)
        cost = (counts.sum() - counts.max()) / total
        if d == 0 or cost <= penalty:  # a split costs more than it can save
            return cost
        for f in range(X.shape[1]):
            left = frozenset(idx[X[idx, f]].tolist())
            if 0 < len(left) < len(rows):
                cost = min(cost, penalty + best(left, d - 1) + best(rows - left, d - 1))
        return cost

    return best(frozenset(range(len(y))), -1 if depth is None else depth)


def split_tests(X: np.ndarray, categorical: tuple[int, ...] = (),
                subsets: bool = False) -> np.ndarray:
    """Every split of the columns of ``X`` as 0/1 columns (true = left): ``x <= t`` at every
    midpoint between consecutive distinct values of a numeric column, ``x == c`` for every
    value ``c`` of a categorical column (those listed in ``categorical``); with ``subsets``,
    ``x in S`` for every non-empty proper subset ``S`` of its values instead."""
    X = np.asarray(X, float)
    tests = []
    for j, x in enumerate(X.T):
        values = np.unique(x)
        if j in categorical and subsets:
            tests += [np.isin(x, values[[bool(m >> i & 1) for i in range(len(values))]])
                      for m in range(1, (1 << len(values)) - 1)]
        elif j in categorical:
            tests += [x == c for c in values]
        else:
            tests += [x <= (a + b) / 2 for a, b in zip(values[:-1], values[1:])]
    return np.array(tests, bool).T.reshape(len(X), len(tests))


def optimal_sse(tests: np.ndarray, y: np.ndarray, depth: int, weights: np.ndarray | None = None,
                min_leaf: int = 1, max_nodes: int | None = None,
                leaf_cost: Callable[[float, float, float], float] | None = None) -> float:
    """Least weighted sum of squared errors (each leaf predicting the weighted mean of its
    rows) of any binary tree over the 0/1 columns of ``tests`` (true = left) with at most
    ``depth`` levels, ``max_nodes`` branching nodes and ``min_leaf`` rows in every leaf, by
    trying every tree. ``leaf_cost(W, S, Q)``: the least sum of that leaf cost instead."""
    tests = np.asarray(tests, bool)
    y = np.asarray(y, float)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, float)

    def leaf(idx: np.ndarray) -> float:
        if leaf_cost is not None:
            return float(leaf_cost(w[idx].sum(), w[idx] @ y[idx], w[idx] @ (y[idx] ** 2)))
        if w[idx].sum() <= 0:
            return 0.0
        mean = (w[idx] @ y[idx]) / w[idx].sum()
        return float(w[idx] @ (y[idx] - mean) ** 2)

    @lru_cache(maxsize=None)
    def best(rows: frozenset, d: int, b: int) -> float:
        idx = np.fromiter(sorted(rows), int)
        cost = leaf(idx)
        if d == 0 or b == 0:
            return cost
        for f in range(tests.shape[1]):
            left = frozenset(idx[tests[idx, f]].tolist())
            right = rows - left
            if len(left) < min_leaf or len(right) < min_leaf:
                continue
            for nl in range(b):
                cost = min(cost, best(left, d - 1, _most_splits(d - 1, nl))
                           + best(right, d - 1, _most_splits(d - 1, b - 1 - nl)))
        return cost

    return best(frozenset(range(len(y))), depth,
                _most_splits(depth, (1 << depth) - 1 if max_nodes is None else max_nodes))


def optimal_cost_and_splits(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int,
                            max_nodes: int | None = None, weights: np.ndarray | None = None,
                            min_leaf: int = 1) -> tuple[float, int]:
    """Least ``(weighted misclassification, number of splits)`` in lexicographic order over the
    trees :func:`optimal_cost` ranges over (MurTree's size-minimal optimum): the optimum, and
    the least node budget that reaches it."""
    cap = (1 << depth) - 1 if max_nodes is None else max_nodes
    cost = _subtree_costs(X, y, n_classes, weights, min_leaf)
    best = cost(depth, cap)
    return best, next(b for b in range(cap + 1) if cost(depth, b) <= best + 1e-9)
