"""Independent oracle for hyperplane trees: linear-programming separability.

Nothing here uses exactree's rule generation. A labelling of points is a *linear split* when
some hyperplane puts one labelled group strictly on each side; that is the LP feasibility
problem ``s_i (w . x_i - b) >= 1`` (solved with scipy's HiGHS). Every split of a subset of the
points is the restriction of a split of all of them (classify the other points by the same
hyperplane, nudged off any point it passes through), so the optimal tree with at most ``K``
hyperplane splits follows from the splits of the whole point set by a plain recursion.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
from scipy.optimize import linprog


def separable(X: np.ndarray, left: np.ndarray) -> bool:
    """True when a hyperplane strictly separates ``X[left]`` from ``X[~left]``."""
    X = np.asarray(X, np.float64)
    n, d = X.shape
    s = np.where(left, 1.0, -1.0)
    # variables (w, b): -s_i (w . x_i - b) <= -1
    A = -s[:, None] * np.hstack([X, -np.ones((n, 1))])
    res = linprog(np.zeros(d + 1), A_ub=A, b_ub=-np.ones(n), bounds=[(None, None)] * (d + 1),
                  method="highs")
    return res.status == 0


def linear_splits(X: np.ndarray) -> set[int]:
    """Every non-trivial linear split of the rows of ``X``, as a bitmask of one side,
    normalised so that point 0 is not in the mask (a split and its mirror are one split)."""
    n = len(X)
    out = set()
    for mask in range(1, 2 ** (n - 1)):  # bit n-1 ... 1 free, point 0 always on side 0
        left = np.array([False] + [bool((mask >> (i - 1)) & 1) for i in range(1, n)])
        if separable(X, left):
            out.add(int(sum(1 << i for i in np.flatnonzero(left))))
    return out


def normalise(side: np.ndarray) -> int:
    """Bitmask of a boolean side, mirrored so point 0 is on the unset side."""
    side = np.asarray(side, bool)
    if side[0]:
        side = ~side
    return int(sum(1 << int(i) for i in np.flatnonzero(side)))


def best_tree(n_points: int, splits: set[int], weights: np.ndarray, k: int) -> float:
    """Least weighted misclassification of a tree with at most ``k`` splits, each split any
    linear split of the points that reach it (``weights``: points x classes)."""
    full = (1 << n_points) - 1
    split_list = sorted(splits)

    @functools.lru_cache(maxsize=None)
    def leaf(region: int) -> float:
        idx = [i for i in range(n_points) if (region >> i) & 1]
        tot = weights[idx].sum(axis=0) if idx else np.zeros(weights.shape[1])
        return float(tot.sum() - tot.max())

    @functools.lru_cache(maxsize=None)
    def best(region: int, budget: int) -> float:
        value = leaf(region)
        if budget == 0 or value == 0:
            return value
        seen = set()
        for s in split_list:
            a, b = region & s, region & ~s & full
            if a == 0 or b == 0 or (a, b) in seen:
                continue
            seen.add((a, b))
            seen.add((b, a))
            for ka in range(budget):
                value = min(value, best(a, ka) + best(b, budget - 1 - ka))
        return value

    return best(full, k)


def all_labellings(n: int):
    """Every labelling of ``n`` points with two classes (as int arrays)."""
    for bits in itertools.product((0, 1), repeat=n):
        yield np.array(bits, np.int64)
