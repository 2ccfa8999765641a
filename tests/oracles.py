"""Brute-force reference solvers: exhaustive enumeration, slow but obviously right."""

from __future__ import annotations

from functools import lru_cache

import numpy as np


def optimal_cost(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int,
                 max_nodes: int | None = None, weights: np.ndarray | None = None,
                 min_leaf: int = 1) -> float:
    """Least weighted misclassification of any binary tree over the 0/1 columns of ``X`` with
    at most ``depth`` levels, ``max_nodes`` branching nodes and ``min_leaf`` rows per child."""
    X = np.asarray(X, bool)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, float)
    budget_cap = (1 << depth) - 1 if max_nodes is None else max_nodes

    @lru_cache(maxsize=None)
    def best(rows: frozenset, d: int, b: int) -> float:
        idx = np.fromiter(rows, int)
        counts = np.bincount(y[idx], weights=w[idx], minlength=n_classes)
        cost = counts.sum() - counts.max()
        if d == 0 or b == 0:
            return cost
        for f in range(X.shape[1]):
            left = frozenset(idx[X[idx, f]].tolist())
            right = rows - left
            if len(left) < min_leaf or len(right) < min_leaf:
                continue
            for nl in range(b):
                cost = min(cost, best(left, d - 1, nl) + best(right, d - 1, b - 1 - nl))
        return cost

    return best(frozenset(range(len(y))), depth, budget_cap)


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
