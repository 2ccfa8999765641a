"""Optimal K-D tree for a user-given objective over points (He & Little, 4.4).

A K-D tree with ``n_splits`` split points: the rules are the data points themselves; a node at
depth ``d`` splits on coordinate ``axis_order[d % len(axis_order)]`` (cycling through the
features by default) at its point's value, points with ``x[axis] <= value`` going left. The split
points live at their nodes; every other point ends in a leaf. Since every point lies on one side of
any other, every rule can be the root of any subset (``splits_KD``); the search is ``odt`` over all
``n_splits``-combinations of points with ``sodt`` on each (eq. 12 and 17), minimising
``combine`` over leaves of ``leaf_cost(points in the leaf)`` (eq. 14).

Default objective: the sum of squared leaf sizes, which is smallest for balanced leaves.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..tree import Tree, TreeBuilder


def balanced_leaves(points: np.ndarray) -> float:
    """Default leaf cost: the squared number of points (sum over leaves favours equal sizes)."""
    return float(len(points)) ** 2


@dataclass
class KDTree:
    """An optimal K-D tree: ``tree`` (THRESHOLD nodes; value = points per node), the split point
    of every branch node, the point indices of every leaf, and the objective."""

    X: np.ndarray
    tree: Tree
    split_point: dict[int, int]  # tree node id -> index of its split point in X
    leaf_points: dict[int, np.ndarray]  # tree leaf id -> indices into X
    objective: float
    status: str
    stats: dict[str, Any] = field(default_factory=dict)

    def query(self, points: Any) -> np.ndarray:
        """Leaf id (node of :attr:`tree`) of every query point."""
        return self.tree.apply(np.asarray(points, np.float64).reshape(-1, self.X.shape[1]))

    def points_in_leaf_of(self, point: Any) -> np.ndarray:
        """Indices of the data points stored in the leaf a query point falls into."""
        return self.leaf_points[int(self.query(point)[0])]

    def plot(self, ax: Any = None):
        """2-D only: points, split points and the partition, with matplotlib (optional)."""
        import matplotlib.pyplot as plt  # optional extra: exactree[plot]

        if self.X.shape[1] != 2:
            raise ValueError("plot needs 2-D points")
        ax = ax or plt.gca()
        lo, hi = self.X.min(axis=0), self.X.max(axis=0)
        pad = 0.05 * (hi - lo + 1.0)
        stack = [(0, lo - pad, hi + pad)]
        t = self.tree
        while stack:
            node, blo, bhi = stack.pop()
            if t.kind[node] == 0:
                continue
            f, v = t.feature[node], t.threshold[node]
            if f == 0:
                ax.plot([v, v], [blo[1], bhi[1]], color="0.5", lw=1)
            else:
                ax.plot([blo[0], bhi[0]], [v, v], color="0.5", lw=1)
            left_hi, right_lo = bhi.copy(), blo.copy()
            left_hi[f], right_lo[f] = v, v
            kids = t.children(node)
            stack.extend([(kids[0], blo, left_hi), (kids[1], right_lo, bhi)])
        ax.scatter(self.X[:, 0], self.X[:, 1], s=12)
        sp = list(self.split_point.values())
        ax.scatter(self.X[sp, 0], self.X[sp, 1], s=40, marker="x", color="k")
        ax.set_aspect("equal")
        return ax


def _sodt_kd(X, axes, combo: tuple[int, ...], data: np.ndarray, leaf_cost, combine, memo, depth):
    """Best K-D subtree over the split points ``combo`` for the points ``data`` (index array)."""
    key = (combo, depth, data.tobytes())
    if key in memo:
        return memo[key]
    if not combo:
        result = (leaf_cost(X[data]), None)
    else:
        axis = axes[depth % len(axes)]
        result = (math.inf, None)
        for r in combo:  # splits_KD: every point can be the root
            v = X[r, axis]
            rest = [j for j in combo if j != r]
            left_rules = tuple(j for j in rest if X[j, axis] <= v)
            right_rules = tuple(j for j in rest if X[j, axis] > v)
            keep = data[data != r]
            go = X[keep, axis] <= v
            lv, lt = _sodt_kd(X, axes, left_rules, keep[go], leaf_cost, combine, memo, depth + 1)
            if lv == math.inf:
                continue
            rv, rt = _sodt_kd(X, axes, right_rules, keep[~go], leaf_cost, combine, memo, depth + 1)
            value = combine(lv, rv)
            if value < result[0]:
                result = (value, (r, axis, v, lt, rt, keep[go], keep[~go]))
    memo[key] = result
    return result


def optimal_kdtree(X: Any, n_splits: int, *,
                   leaf_cost: Callable[[np.ndarray], float] = balanced_leaves,
                   combine: str | Callable[[float, float], float] = "sum",
                   axis_order: Sequence[int] | None = None,
                   time_limit: float | None = None) -> KDTree:
    """The K-D tree with exactly ``n_splits`` split points minimising the objective.

    ``leaf_cost(points)`` gets the ``(m, D)`` array of points in a leaf; ``combine`` is ``"sum"``,
    ``"max"`` or a function ``g(a, b) >= max(a, b)``. Exhaustive over all ``C(N, n_splits)``
    point combinations; with ``time_limit`` it returns the best tree found so far with status
    ``"time_limit"``.
    """
    X = np.asarray(X, np.float64)
    if X.ndim != 2 or len(X) == 0:
        raise ValueError(f"X must be a non-empty 2-D array, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity")
    n, d = X.shape
    if not 0 <= n_splits <= n:
        raise ValueError(f"n_splits must be between 0 and the number of points ({n}), got {n_splits}")
    axes = tuple(range(d)) if axis_order is None else tuple(int(a) for a in axis_order)
    if not axes or any(a < 0 or a >= d for a in axes):
        raise ValueError(f"axis_order must list feature indices in [0, {d}), got {axis_order}")
    if combine == "sum":
        g = lambda a, b: a + b  # noqa: E731
    elif combine == "max":
        g = max
    elif callable(combine):
        g = combine
    else:
        raise ValueError(f"combine must be 'sum', 'max' or a callable, got {combine!r}")
    start = time.perf_counter()
    best = (math.inf, None, ())
    status, examined = "optimal", 0
    everything = np.arange(n)
    for combo in itertools.combinations(range(n), n_splits):
        memo: dict = {}
        value, plan = _sodt_kd(X, axes, combo, everything, leaf_cost, g, memo, 0)
        examined += 1
        if value < best[0]:
            best = (value, plan, combo)
        if time_limit is not None and time.perf_counter() - start >= time_limit:
            status = "time_limit"
            break
    if best[0] == math.inf:
        raise ValueError("no K-D tree has a finite objective")
    return _build(X, best, status, dict(combinations=examined,
                                        total_combinations=math.comb(n, n_splits),
                                        seconds=time.perf_counter() - start))


def _build(X, best, status, stats) -> KDTree:
    value, plan, _ = best
    b = TreeBuilder(n_features=X.shape[1], n_classes=1)
    split_point: dict[int, int] = {}
    leaf_points: dict[int, np.ndarray] = {}
    # two passes over an explicit stack: collect (plan, points) in preorder, then build bottom-up
    order, stack = [], [(plan, np.arange(len(X)))]
    while stack:
        p, pts = stack.pop()
        order.append((p, pts))
        if p is not None:
            r, axis, v, lt, rt, lpts, rpts = p
            stack.extend([(rt, rpts), (lt, lpts)])
    made: list[int] = []
    for p, pts in reversed(order):
        if p is None:
            made.append(b.leaf([len(pts)], 0))
        else:
            left, right = made.pop(), made.pop()
            made.append(b.threshold(p[1], p[2], [left, right], [len(pts)], 0))
    tree = b.build(made[-1], class_names=("points",))
    # ``order`` is the preorder (left first) that TreeBuilder.build numbers the nodes in
    split_point = {i: int(p[0]) for i, (p, _) in enumerate(order) if p is not None}
    leaf_points = {i: pts for i, (p, pts) in enumerate(order) if p is None}
    return KDTree(X, tree, split_point, leaf_points, float(value), status, stats)
