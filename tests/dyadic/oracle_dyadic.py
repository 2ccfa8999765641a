"""Exhaustive oracle for dyadic trees on tiny data (independent of the solver's code paths).

For every dyadic rectangle it enumerates the (leaves -> least error) values of *all* trees of
``T_k`` rooted there by combining its children's full value tables; no pruning, no hashing, no
compression, no cell arithmetic (rectangles are real intervals of the unit box).
"""

from __future__ import annotations

import numpy as np


def tree_values(X, y, k, n_classes, loss=None, weight=None):
    """{leaves: least weighted error} over every tree of T_k (errors in weight units)."""
    X = np.asarray(X, float)
    n, d = X.shape
    lo, hi = X.min(0), X.max(0)
    span = np.where(hi > lo, hi - lo, 1.0)
    U = (X - lo) / span
    k = [0 if hi[i] <= lo[i] else int(k[i]) for i in range(d)]
    L = 1.0 - np.eye(n_classes) if loss is None else np.asarray(loss, float)
    w = np.ones(n) if weight is None else np.asarray(weight, float)
    Wv = np.zeros((n, n_classes))
    Wv[np.arange(n), y] = w
    Wv = Wv @ L
    memo = {}

    def rec(box):
        if box in memo:
            return memo[box]
        rows = np.ones(n, bool)
        for i, (a, b, lev) in enumerate(box):
            rows &= (U[:, i] >= a) if a == 0 else (U[:, i] > a)
            rows &= U[:, i] <= b
        e0 = float(Wv[rows].sum(0).min()) if rows.any() else 0.0
        vals = {1: e0}
        for i, (a, b, lev) in enumerate(box):
            if lev >= k[i]:
                continue
            m = (a + b) / 2
            left = rec(box[:i] + ((a, m, lev + 1),) + box[i + 1:])
            right = rec(box[:i] + ((m, b, lev + 1),) + box[i + 1:])
            for ll, el in left.items():
                for lr, er in right.items():
                    if el + er < vals.get(ll + lr, np.inf) - 1e-9:  # float noise is no improvement
                        vals[ll + lr] = el + er
        memo[box] = vals
        return vals

    return rec(tuple((0.0, 1.0, 0) for _ in range(d)))


def best_value(values, lam, tol=1e-9):
    """(error, leaves) minimising error + lam * leaves, ties to more leaves (Definition 2)."""
    best = None
    for l, e in values.items():
        r = e + lam * l
        if best is None or r < best[0] - tol or (abs(r - best[0]) <= tol and l > best[2]):
            best = (r, e, l)
    return best[1], best[2]


def path_values(values):
    """Distinct solution values over a grid holding every break-point and the midpoints."""
    items = list(values.items())
    ratios = {0.0}
    for la, ea in items:
        for lb, eb in items:
            if lb > la and eb < ea - 1e-9:
                ratios.add((ea - eb) / (lb - la))
    r = sorted(ratios)
    grid = r + [(a + b) / 2 for a, b in zip(r, r[1:])] + [r[-1] * 2 + 1, r[1] / 2 if len(r) > 1 else 1e-6]
    out = {best_value(values, lam) for lam in grid if lam > 0}
    return sorted(out, key=lambda v: v[1])
