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
