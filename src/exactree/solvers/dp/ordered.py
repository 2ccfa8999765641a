"""Optimal depth-limited trees over ordered features (numeric columns, nested binary columns,
category tests): the threshold-aware counterpart of :class:`~exactree.solvers.dp.solver.DPSolver`.

It solves the same problem, least weighted misclassification with a depth limit and a minimum
leaf size, and returns the same :class:`~exactree.solvers.dp.solver.DPSolution` over the same
binary features (or, given a numeric ``target``, least weighted squared error with mean leaves:
regression trees), but never builds a rows x thresholds matrix: memory is
``O(depth x features x rows)`` and a depth-two solve costs ``O(features x rows)`` per root
split evaluated (see :mod:`._ordered`).
"""

from __future__ import annotations

import time

import numpy as np

from ...data.ordered import OrderedFeatures
from ...objectives import SquaredError
from ...progress import DEADLINE, Progress, new_board
from ._ordered import ALL_BUCKETS, DONE, INF, STAT_NAMES, TECHNIQUES, root_order, search
from .solver import BinaryNode, DPSolution, equivalent_points_bound, scaled_weights


class OrderedSolver:
    """Minimum weighted misclassification trees of bounded depth over ordered features.

    Parameters
    ----------
    features : the ordered features of the training rows.
    y : int array of class indices ``0..n_classes-1`` (ignored with ``target``).
    sample_weight : positive float array, or None for unit weights.
    max_depth : depth limit; min_samples_leaf : least number of rows in every leaf.
    techniques : ``{name: bool}`` over :data:`TECHNIQUES` (all on by default), for ablation.
    target : float array, or None
        Regression: minimise the weighted squared error of mean leaves over these targets.
        The tree's node ``counts`` are then ``(mean, weight, squared error)``.
    """

    def __init__(self, features: OrderedFeatures, y: np.ndarray | None, n_classes: int, *,
                 sample_weight: np.ndarray | None = None, max_depth: int = 3,
                 min_samples_leaf: int = 1, techniques: dict[str, bool] | None = None,
                 target: np.ndarray | None = None) -> None:
        self.features = features
        n = features.bucket.shape[1]
        self.regression = target is not None
        self.n_classes = 3 if self.regression else int(n_classes)  # statistics per node
        self.labels = (np.zeros(n, np.int64) if self.regression
                       else np.ascontiguousarray(y, dtype=np.int64))
        # Equal weights count as unit weights (split distances in rows); costs are scaled back.
        self.weights, self.scale, self.unit = scaled_weights(sample_weight, len(self.labels))
        self.target = self.y = None
        # Kernel costs times cost_scale are the objective.
        self.cost_scale = self.scale
        if self.regression:
            self.unit = False  # the kernel's moved-weight bounds need the weights (pw)
            self.y = y = np.asarray(target, np.float64)
            # Centred targets scaled so that the root costs 1 (the kernel rounds costs on that
            # scale, see _ordered._sse); Q - S**2 / W then cancels less. The optimum does
            # not move.
            centred = y - (float(self.weights @ y) / float(self.weights.sum()) if n else 0.0)
            root = float(self.weights @ centred ** 2)
            unit_cost = root if root > 0 else 1.0
            self.target = np.ascontiguousarray(centred / np.sqrt(unit_cost))
            self.cost_scale = self.scale * unit_cost
        self.max_depth = int(max_depth)
        self.min_leaf = max(1, int(min_samples_leaf))
        self.flags = np.ones(len(TECHNIQUES), np.bool_)
        for name, on in (techniques or {}).items():
            if name not in TECHNIQUES:
                raise ValueError(f"unknown technique {name!r}; known: {', '.join(TECHNIQUES)}")
            self.flags[TECHNIQUES.index(name)] = bool(on)
        self.stats = np.zeros(len(STAT_NAMES), np.int64)
        self.stats_names = STAT_NAMES

    @property
    def tolerance(self) -> float:
        """Objective values closer than this are equal (sums of fractional weights depend on
        their order)."""
        tol = 1e-9 * (max(1.0, float(self.weights.sum())) if self.target is None else 1.0)
        return tol * self.cost_scale

    def plan_parallel(self, n_tasks: int) -> tuple[list[tuple[np.ndarray, np.ndarray]],
                                                   DPSolution]:
        """About ``n_tasks`` disjoint shares of the root's splits, as ``roots`` for
        :meth:`solve`, and the optimal tree of depth <= 2 (a first incumbent). Every feature's
        thresholds are cut into runs of neighbouring buckets (a run keeps the interval bounds
        between its thresholds); the features go in the order the root tries them."""
        _, _, _, tree = self._search(min(2, self.max_depth), INF, INF, None)
        splits = [len(s) for s in self.features.split_feature]
        F = len(splits)
        per = max(1, -(-n_tasks // max(F, 1)))
        tasks = []
        for f in root_order(self.features.bucket, self.labels, self.weights, self.unit,
                            self.n_classes, self.min_leaf, self.target):
            cuts = np.unique(np.linspace(0, splits[f], min(per, splits[f]) + 1).astype(np.int64))
            for lo, hi in zip(cuts[:-1], cuts[1:]):
                root_lo = np.ones(F, np.int64)  # lo > hi: no split on the feature
                root_hi = np.zeros(F, np.int64)
                root_lo[f], root_hi[f] = lo, hi - 1
                tasks.append((root_lo, root_hi))
        return tasks, DPSolution(tree, self._cost(tree), 0.0, False)

    @staticmethod
    def narrow_roots(roots: tuple[np.ndarray, np.ndarray],
                     tree: BinaryNode) -> tuple[np.ndarray, np.ndarray]:
        """The share ``roots`` itself: which of its thresholds reaches an optimum first depends
        on the bounds met on the way (see :mod:`.parallel`)."""
        return roots

    def solve(self, *, upper_bound: float = INF, time_limit: float | None = None,
              progress: Progress | None = None,
              roots: tuple[np.ndarray, np.ndarray] | None = None,
              board: np.ndarray | None = None) -> DPSolution | None:
        """The optimal tree (None if none is strictly below ``upper_bound``). With ``time_limit``
        (seconds), or once ``progress`` is interrupted, the best tree found so far is returned,
        not proven optimal.

        ``roots`` (one of :meth:`root_tasks`) restricts the root's split: the answer is then the
        best tree splitting the root there (or a better small tree found on the way), and
        ``lower_bound`` bounds only those trees. ``board`` is a board (see
        :mod:`exactree.progress`) to run on, e.g. one another process tightens ``BOUND`` on.
        """
        start = time.perf_counter()
        deadline = INF if time_limit is None else start + float(time_limit)
        ub = upper_bound / self.cost_scale - self.tolerance / self.cost_scale \
            if upper_bound < INF else INF
        outcome, cost, lb, root = self._search(self.max_depth, ub, deadline, progress, roots,
                                               board)
        if cost == INF and outcome == DONE:
            return None
        optimal = outcome == DONE
        if not optimal and self.max_depth > 2 and roots is None:
            # Anytime: the optimal depth-2 tree (usually found in milliseconds; given a tenth of
            # the time limit more at most) beats a half-explored root.
            extra = max(0.1 * float(time_limit), 0.05) if time_limit is not None else INF
            _, cost2, _, root2 = self._search(2, ub, time.perf_counter() + extra, progress)
            if cost2 < INF and self._cost(root2) < self._cost(root):
                root = root2
        cost = self._cost(root)
        lower = cost if optimal else max(lb * self.cost_scale, self.equivalent_points_bound())
        return DPSolution(root, cost, min(lower, cost), optimal,
                          dict(zip(STAT_NAMES, self.stats.tolist())))

    def _search(self, depth: int, ub: float, deadline: float, progress: Progress | None,
                roots: tuple[np.ndarray, np.ndarray] | None = None,
                board: np.ndarray | None = None):
        """Run the kernel to ``depth``: outcome, cost (INF: none below ``ub``), lower bound and
        the tree (a leaf when cut short before any tree below ``ub``)."""
        size = (1 << (depth + 1)) - 1
        tree_f = np.full(size, -1, np.int64)
        tree_b = np.zeros(size, np.int64)
        if board is None:
            board = new_board(deadline)
        else:
            board[DEADLINE] = deadline
        if roots is None:
            F = self.features.bucket.shape[0]
            roots = (np.zeros(F, np.int64), np.full(F, ALL_BUCKETS, np.int64))
        args = (self.features.bucket, self.labels, self.weights, self.unit, self.n_classes,
                self.min_leaf, depth, ub, board, self.flags, self.stats, tree_f, tree_b,
                self.target, *roots)
        if progress is None:
            outcome, cost, lb = search(*args)
        else:
            outcome, cost, lb = progress.run(search, board, *args, scale=self.cost_scale)
        if cost == INF:
            tree_f[:] = -1
        return outcome, cost, lb, self._tree(tree_f, tree_b, depth)

    def equivalent_points_bound(self) -> float:
        """See :func:`~.solver.equivalent_points_bound`: rows alike in every feature (squared
        error: each such group costs at least its own squared error around its mean)."""
        if self.regression:
            if not len(self.y):
                return 0.0
            _, groups = np.unique(self.features.bucket.T, axis=0, return_inverse=True)
            return SquaredError().lower_bound(self.y, self.weights * self.scale, groups)
        return equivalent_points_bound(self.features.bucket.T, self.labels,
                                       self.weights * self.scale, self.n_classes)

    def _cost(self, root: BinaryNode) -> float:
        """The objective of a tree from :meth:`_tree`."""
        if not self.regression:
            return root.cost
        stack, total = [root], 0.0
        while stack:
            node = stack.pop()
            if node.feature < 0:
                total += float(node.counts[2])
            else:
                stack += [node.true, node.false]
        return total

    def _tree(self, tree_f: np.ndarray, tree_b: np.ndarray, depth: int) -> BinaryNode:
        """The heap-layout tree as binary-feature nodes with class weights. All rows go down
        one level at a time (a few array operations per level, not per node)."""
        bucket, K = self.features.bucket, self.n_classes
        w = self.weights * self.scale
        H = len(tree_f)
        counts = np.zeros((H, K))
        rows = np.arange(len(self.labels))
        node = np.zeros(len(rows), np.int64)
        for level in range(depth + 1):
            if self.regression:
                counts += _regression_counts(node, self.y[rows], w[rows], H)
            else:
                counts += np.bincount(node * K + self.labels[rows], weights=w[rows],
                                      minlength=H * K).reshape(H, K)
            f = tree_f[node]
            split = f >= 0
            if level == depth or not split.any():
                break
            rows, node, f = rows[split], node[split], f[split]
            # Heap children: 2i+1 is the left (bucket <= b) side.
            node = 2 * node + np.where(bucket[f, rows] <= tree_b[node], 1, 2)
        nodes = [BinaryNode(-1, counts[i]) for i in range(H)]
        for i in range(H):
            f = int(tree_f[i])
            if f < 0 or 2 * i + 2 >= H:
                continue
            b = int(tree_b[i])
            n = nodes[i]
            n.feature = int(self.features.split_feature[f][b])
            flip = bool(self.features.split_flip[f][b])
            left, right = nodes[2 * i + 1], nodes[2 * i + 2]
            n.true, n.false = (right, left) if flip else (left, right)
        return nodes[0]


def _regression_counts(node: np.ndarray, y: np.ndarray, w: np.ndarray, H: int) -> np.ndarray:
    """``(mean, weight, squared error)`` of every heap node ``0..H-1`` over the rows in it
    (``node[i]`` holds row ``i``; nodes without rows get zeros). The squared error is summed
    around each node's mean (exact where ``Q - S**2 / W`` would cancel)."""
    W = np.bincount(node, weights=w, minlength=H)
    mean = np.bincount(node, weights=w * y, minlength=H) / np.where(W > 0, W, 1.0)
    sse = np.bincount(node, weights=w * (y - mean[node]) ** 2, minlength=H)
    return np.column_stack([mean, W, sse])
