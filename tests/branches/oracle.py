"""Oracles for BRANCHES: exhaustive search over every multiway tree (tiny data), and an
exhaustive bottom-up DP over every branch (small products of cardinalities)."""

from __future__ import annotations

import numpy as np


def brute_force_cost(Z: np.ndarray, card, y: np.ndarray, w: np.ndarray, n_classes: int,
                     penalty: float, max_depth: int | None = None) -> float:
    """Minimum over every multiway tree of ``weighted misclassification + penalty * W * splits``,
    divided by the total weight ``W``. A feature is split at most once along a path."""
    total = float(w.sum())
    lam_w = penalty * total

    def best(rows: np.ndarray, avail: tuple[int, ...], depth: int) -> float:
        counts = np.bincount(y[rows], weights=w[rows], minlength=n_classes)
        leaf = float(counts.sum() - counts.max()) if len(rows) else 0.0
        if max_depth is not None and depth >= max_depth:
            return leaf
        result = leaf
        for f in avail:
            rest = tuple(g for g in avail if g != f)
            cost = lam_w
            for j in range(int(card[f])):
                cost += best(rows[Z[rows, f] == j], rest, depth + 1)
                if cost >= result:
                    break
            result = min(result, cost)
        return result

    return best(np.arange(len(y)), tuple(range(Z.shape[1])), 0) / total


def all_branches_cost(Z: np.ndarray, y: np.ndarray, penalty: float) -> float:
    """Same optimum (unit weights, no depth limit) by DP over all prod(card + 1) branches.

    A branch fixes some features to a category and leaves the others free (code ``card``);
    branches are solved from the most to the least constrained.
    """
    Z = np.asarray(Z, np.int64)
    y = np.unique(y, return_inverse=True)[1]
    n, q = Z.shape
    K = int(y.max()) + 1
    card = Z.max(axis=0) + 1
    radix = card + 1
    mult = np.cumprod(np.r_[1, radix[:-1]])
    nb = int(np.prod(radix))
    counts = np.zeros((nb, K))
    for mask in range(1 << q):  # every row lies in 2**q branches
        fixed = np.array([(mask >> f) & 1 for f in range(q)], bool)
        code = np.where(fixed, Z, card) @ mult
        np.add.at(counts, (code, y), 1.0)
    lam_w = penalty * n
    leaf = counts.sum(1) - counts.max(1)
    digits = (np.arange(nb)[:, None] // mult) % radix
    free = digits == card
    cost = leaf.copy()
    for b in np.argsort(free.sum(1), kind="stable"):
        if leaf[b] <= lam_w:
            continue
        for f in np.flatnonzero(free[b]):
            base = b - card[f] * mult[f]
            c = lam_w + cost[base + np.arange(card[f]) * mult[f]].sum()
            cost[b] = min(cost[b], c)
    return float(cost[nb - 1] / n)
