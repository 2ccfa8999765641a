"""Optimal depth-limited trees over ordered features (numeric columns, nested binary columns,
category tests): the threshold-aware counterpart of :class:`~exactree.solvers.dp.solver.DPSolver`.

It solves the same problem, least weighted misclassification with a depth limit and a minimum
leaf size, and returns the same :class:`~exactree.solvers.dp.solver.DPSolution` over the same
binary features (or, given a numeric ``target``, least weighted squared error with mean leaves:
regression trees), but never builds a rows x thresholds matrix: memory is
``O(depth x features x rows)`` and a depth-two solve costs ``O(features x rows)`` per root
split evaluated (see :mod:`._ordered`).

Optima are size-minimal: among the trees of least cost one with the fewest splits (MurTree's
order; technique ``minimal_size``). Cut short by ``time_limit`` (or Ctrl-C), a solve returns the
best tree found, the root's proven lower bound and ``limit="time_limit"``; the whole solve,
tree building included, keeps to the time limit. Given ``memory_limit`` (bytes) that the
search at ``max_depth`` would exceed (:meth:`OrderedSolver.memory_need`), it solves the largest
depth that fits instead and says ``limit="memory_limit"``.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

import numpy as np
from numba.core.errors import NumbaExperimentalFeatureWarning

from ...data.ordered import OrderedFeatures, heap_class_weights
from ...objectives import LeafCost, RegressionLeafCost, SquaredError
from ...progress import DEADLINE, Progress, new_board
from ._histogram import MAX_BUCKETS
from ._lexicographic import PERFECT_IS_FINAL_DEPTH, cost_lower_bound, split_penalty
from ._segment import pairs
from ._ordered import (
    ALL_BUCKETS,
    CLOCK_WORK,
    DONE,
    INF,
    SEGMENT_MAX_CLASSES,
    ST_EVALS,
    STAT_NAMES,
    TECHNIQUES,
    USE_MINIMAL_SIZE,
    USE_PERFECT_DEPTH2,
    USE_PERFECT_FINAL,
    root_order,
    search,
)
from .solver import (BinaryNode, DPSolution, equivalent_points_bound, row_groups,
                     scaled_weights)

# Time a time-limited deep search leaves for the optimal depth-2 tree, its fallback: this share
# of the limit, at most FALLBACK_MAX seconds (a depth-2 solve usually takes milliseconds).
FALLBACK_SHARE = 0.1
FALLBACK_MAX = 1.0
# From depth 4 a tree without errors is looked for first (see OrderedSolver.solve), for at most
# this many rows x features swept per row and feature of the data: enough to find one on the
# continuous sets that have one (bank needs about 300), a few percent of the search where none
# exists (binary sets through the ordered search at depth 4: lymph, vote, soybean and
# tic-tac-toe, 2-6%).
PERFECT_WORK = 1000


class OrderedSolver:
    """Minimum weighted misclassification trees of bounded depth over ordered features.

    Parameters
    ----------
    features : the ordered features of the training rows.
    y : int array of class indices ``0..n_classes-1`` (ignored with ``target``).
    sample_weight : positive float array, or None for unit weights.
    max_depth : depth limit; min_samples_leaf : least number of rows in every leaf.
    techniques : ``{name: bool}`` over :data:`TECHNIQUES` (all on by default), for ablation.
        ``minimal_size`` off: the first optimal tree found, not one with the fewest splits.
    target : float array, or None
        Regression: minimise the weighted squared error of mean leaves over these targets.
        The tree's node ``counts`` are then ``(mean, weight, squared error)``.
    memory_limit : bytes the search may take (see :meth:`memory_need`), or None.
    split_cost : float, default 0
        Cost complexity: minimise ``cost + split_cost * splits`` (in cost units: weight, or
        squared error) instead; the solutions' ``cost`` and ``lower_bound`` are then of that
        objective, and its optima are not size-minimal beyond what the price makes them.
    leaf_cost : a user's :class:`~exactree.objectives.LeafCost` instead of misclassification
        (the weights it sees are ``sample_weight`` as given), or with ``target`` a
        :class:`~exactree.objectives.RegressionLeafCost` instead of squared error (the targets
        it sees are ``target`` as given; node ``counts`` are ``(value, weight, cost)``); its
        equivalent-points bound is 0.

    ``penalty`` is the tie-breaking split penalty in kernel cost units (0 with
    ``minimal_size`` off or a ``split_cost``; ``kernel_penalty`` is what the kernel charges),
    ``integral`` whether kernel costs are integers (unit-weight classification). Upper bounds
    (``upper_bound``, a board's ``BOUND``) bound the penalised objective (:meth:`objective`).
    ``clock_work`` (settable): rows x features swept between two looks at the clock;
    ``perfect_work`` (settable): rows x features the search for a tree without errors may sweep
    first (from depth 4, see :data:`PERFECT_WORK`).
    """

    # A parallel solve's tasks per worker (see .parallel): a column whose thresholds are cut
    # between tasks loses the interval bounds across the cut, so whole columns where there are
    # enough (two workers: rice at depth 3 1.7x faster than serial, against 1.5x with twice
    # the tasks; raisin and occupancy at depth 4 alike within the noise or better).
    tasks_per_worker = 2

    def __init__(self, features: OrderedFeatures, y: np.ndarray | None, n_classes: int, *,
                 sample_weight: np.ndarray | None = None, max_depth: int = 3,
                 min_samples_leaf: int = 1, techniques: dict[str, bool] | None = None,
                 target: np.ndarray | None = None, memory_limit: float | None = None,
                 split_cost: float = 0.0,
                 leaf_cost: LeafCost | RegressionLeafCost | None = None) -> None:
        self.features = features
        n = features.bucket.shape[1]
        self.regression = target is not None
        self.leaf_cost = leaf_cost
        self.n_classes = 3 if self.regression else int(n_classes)  # statistics per node
        self.labels = (np.zeros(n, np.int64) if self.regression
                       else np.ascontiguousarray(y, dtype=np.int64))
        # Equal weights count as unit weights (split distances in rows); costs are scaled back.
        w = None if sample_weight is None else np.asarray(sample_weight, np.float64)
        if w is not None and len(w) and w[0] > 0 and (w == w[0]).all():
            # scaled_weights' answer for equal weights, without its slower np.all calls
            self.weights, self.scale, self.unit = w / w[0], float(w[0]), True
        else:
            self.weights, self.scale, self.unit = scaled_weights(sample_weight, len(self.labels))
        if leaf_cost is not None:  # the user's cost sees the weights as given
            self.weights = np.ones(n) if w is None else np.ascontiguousarray(w)
            self.scale, self.unit = 1.0, False
        self.target = self.y = None
        # Kernel costs times cost_scale are the objective; objectives closer than
        # tol_unit * 1e-9 are equal.
        self.cost_scale = self.scale
        self.tol_unit = max(1.0, float(self.weights.sum()))
        if self.regression and leaf_cost is not None:  # the user's cost sees the raw targets
            self.unit = False
            self.y = self.target = np.ascontiguousarray(target, np.float64)
            root = float(leaf_cost.leaf_costs(_statistics(self.y, self.weights))[0][0])
            self.tol_unit = root if root > 0 else 1.0
        elif self.regression:
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
            self.tol_unit = 1.0
        self.max_depth = int(max_depth)
        self.min_leaf = max(1, int(min_samples_leaf))
        self.flags = np.ones(len(TECHNIQUES), np.bool_)
        for name, on in (techniques or {}).items():
            if name not in TECHNIQUES:
                raise ValueError(f"unknown technique {name!r}; known: {', '.join(TECHNIQUES)}")
            self.flags[TECHNIQUES.index(name)] = bool(on)
        self.stats = np.zeros(len(STAT_NAMES), np.int64)
        self.stats_names = STAT_NAMES
        self.memory_limit = None if memory_limit is None else float(memory_limit)
        # A user's objective makes each unit of work dearer (calls through a pointer): the
        # clock is looked at more often.
        self.clock_work = CLOCK_WORK if leaf_cost is None else CLOCK_WORK // 32
        self.perfect_work = PERFECT_WORK * features.bucket.size
        # Size-minimal optima: every split costs `penalty` (kernel units), less than the least
        # cost difference that counts (`resolution`: 1 for integer costs, else the largest
        # power of two within the tolerance, which keeps sums exact on the squared-error grid)
        # over the most splits a tree can have.
        self.integral = self.unit and not self.regression
        self.resolution = 1.0 if self.integral else \
            2.0 ** math.floor(math.log2(self.tolerance / self.cost_scale))
        self.penalty = (split_penalty(self.resolution, self.max_depth)
                        if self.flags[USE_MINIMAL_SIZE] else 0.0)
        # Cost complexity: the objective is cost + split_cost * splits, and that is the
        # solutions' `cost` (ties among its optima are not broken by size).
        self.split_cost = float(split_cost)
        self.kernel_penalty = self.penalty
        if self.split_cost > 0:
            self.flags[USE_MINIMAL_SIZE] = False
            self.penalty = 0.0
            self.integral = False
            self.kernel_penalty = self.split_cost / self.cost_scale
        self._epb: float | None = None

    @property
    def tolerance(self) -> float:
        """Objective values closer than this are equal (sums of fractional weights depend on
        their order)."""
        return 1e-9 * self.tol_unit * self.cost_scale

    def plan_parallel(self, n_tasks: int, time_limit: float | None = None,
                      max_nodes: int | None = None
                      ) -> tuple[list[tuple[np.ndarray, np.ndarray]], DPSolution]:
        """About ``n_tasks`` disjoint shares of the root's splits, as ``roots`` for
        :meth:`solve`, and the optimal tree of depth <= 2 (a first incumbent; within
        ``time_limit`` seconds, else the best found). Every feature's thresholds are cut into
        runs of neighbouring buckets (a run keeps the interval bounds between its thresholds);
        the features go in the order the root tries them."""
        deadline = INF if time_limit is None else time.perf_counter() + float(time_limit)
        _, _, _, tree = self._search(min(2, self.max_depth), INF, deadline, None,
                                     budget=max_nodes)
        splits = [len(s) for s in self.features.split_feature]
        F = len(splits)
        per = max(1, -(-n_tasks // max(F, 1)))
        tasks = []
        with _quiet_numba(self.leaf_cost is not None):
            order = root_order(self.features.bucket, self.labels, self.weights, self.unit,
                               self.n_classes, self.min_leaf, self.target, self._kernel_cost())
        for f in order:
            cuts = np.unique(np.linspace(0, splits[f], min(per, splits[f]) + 1).astype(np.int64))
            for lo, hi in zip(cuts[:-1], cuts[1:]):
                root_lo = np.ones(F, np.int64)  # lo > hi: no split on the feature
                root_hi = np.zeros(F, np.int64)
                root_lo[f], root_hi[f] = lo, hi - 1
                tasks.append((root_lo, root_hi))
        return tasks, DPSolution(tree, self._cost(tree), 0.0, False)

    @staticmethod
    def narrow_roots(roots: tuple[np.ndarray, np.ndarray],
                     feature: int) -> tuple[np.ndarray, np.ndarray]:
        """The share ``roots`` itself: which of its thresholds reaches an optimum first depends
        on the bounds met on the way (see :mod:`.parallel`)."""
        return roots

    @property
    def max_budget(self) -> int:
        """The most splits a tree of ``max_depth`` can have (a node budget of no limit)."""
        return (1 << self.max_depth) - 1

    def solve(self, *, upper_bound: float = INF, time_limit: float | None = None,
              progress: Progress | None = None,
              roots: tuple[np.ndarray, np.ndarray] | None = None,
              board: np.ndarray | None = None, max_nodes: int | None = None,
              stop_at: float | None = None) -> DPSolution | None:
        """The optimal tree (None if none is strictly below ``upper_bound``) with at most
        ``max_nodes`` splits (None: any number within ``max_depth``), with the fewest splits
        among the optimal ones (technique ``minimal_size``).

        With ``time_limit`` (seconds), or once ``progress`` is interrupted, the best tree found
        so far is returned with ``optimal=False``, ``limit="time_limit"`` and a proven lower
        bound; the solve returns by the time limit (give or take a look at the clock: at most
        ``clock_work`` rows x features). A depth of 3 or more keeps a tenth of the time (at most
        a second) for the optimal depth-2 tree, returned when it beats the deep search's best.
        When the search would need more than ``memory_limit`` bytes (see :meth:`memory_need`),
        the optimal tree of the largest depth within it (a leaf at worst) is returned with
        ``optimal=False``, ``limit="memory_limit"`` and the equivalent-points bound. Not
        optimal, a tree is returned whatever ``upper_bound``.

        ``roots`` (one of :meth:`plan_parallel`'s shares) restricts the root's split: the answer
        is then the best tree splitting the root there (or a better small tree found on the
        way), and ``lower_bound`` bounds only those trees. ``board`` is a board (see
        :mod:`exactree.progress`) to run on, e.g. one another process tightens ``BOUND`` on.
        ``upper_bound`` and the board's ``BOUND`` bound :meth:`objective` (the cost when
        ``minimal_size`` is off). ``stop_at``: an objective the caller knows no tree beats (a
        parallel fit's optimum); the search returns its first tree within the tolerance of it.
        """
        start = time.perf_counter()
        deadline = INF if time_limit is None else start + float(time_limit)
        budget = self.max_budget if max_nodes is None else min(int(max_nodes), self.max_budget)
        if (self.memory_limit is not None
                and self.memory_need(self.max_depth, budget) > self.memory_limit):
            return self._solve_shallow(deadline, progress, budget)
        ub = self._kernel_ub(upper_bound)
        fallback = self.max_depth > 2 and roots is None
        deep_deadline = deadline
        if fallback and time_limit is not None:
            deep_deadline = deadline - min(FALLBACK_SHARE * float(time_limit), FALLBACK_MAX)
        incumbent = None
        final = self._perfect_first()
        if final or self._few_errors_first():
            # A tree without errors (where it does not end the search, one at most with unit
            # weights), looked for first without penalties, for a bounded amount of work:
            # proving that none exists can take far longer than the search. A perfect tree from
            # depth PERFECT_IS_FINAL_DEPTH on ends the search (see _lexicographic); else the
            # tree is the incumbent of the size-minimal search, whose depth-two nodes then only
            # look at subtrees with as few errors (see _perfect). (Half a least weight over: an
            # error's cost summed in floating point may fall short of it by a rounding error.)
            # (On a copy of the board: its incumbents, without penalties, bound nothing.)
            errors = 1 if self.unit and not final else 0
            outcome, cost, lb, root = self._search(self.max_depth,
                                                   min(ub, (errors + 0.5) * self._error_cost()),
                                                   deep_deadline, progress, roots,
                                                   None if board is None else board.copy(),
                                                   penalty=0.0, work=self.perfect_work,
                                                   budget=budget)
            if cost < INF:
                cost = self._cost(root)
                rank = self._rank(root, cost) / self.cost_scale
                if rank < ub and final:
                    stats = dict(zip(STAT_NAMES, self.stats.tolist()))
                    return DPSolution(root, cost, 0.0, True, stats)
                if rank < ub:
                    incumbent, ub = root, rank
        known = 0.0  # the kernel's root_lb: a tree this cheap ends the search
        if stop_at is not None:  # within the tolerance, but a split more is no tie
            slack = self.tolerance / self.cost_scale
            known = stop_at / self.cost_scale + (min(slack, self.penalty / 2) if self.penalty > 0
                                                 else slack)
        outcome, cost, lb, root = self._search(self.max_depth, ub, deep_deadline, progress,
                                               roots, board, budget=budget, root_lb=known)
        if cost == INF:
            if incumbent is None and outcome == DONE:
                return None
            if incumbent is not None:  # none better
                root, cost = incumbent, self._cost(incumbent)
        optimal = outcome == DONE
        if not optimal and fallback and time.perf_counter() < deadline - 0.5 * (
                deadline - deep_deadline):
            # Anytime: the optimal depth-2 tree (usually found in milliseconds) may beat a
            # half-explored root; it gets the time left (none when the deep search's last
            # step took half of the time kept for it or more: its first steps, sorting every
            # column, cannot stop, and the fit would be late).
            _, cost2, _, root2 = self._search(2, ub, deadline, progress, budget=budget)
            if cost2 < INF and (cost == INF or self._rank(root2) < self._rank(root)):
                root = root2
        cost = self._cost(root)
        stats = dict(zip(STAT_NAMES, self.stats.tolist()))
        if optimal:
            return DPSolution(root, cost, cost, True, stats)
        lower = cost_lower_bound(lb, self.penalty, self.max_depth, self.integral) * self.cost_scale
        if self._epb is not None or time.perf_counter() < deadline:
            lower = max(lower, self.equivalent_points_bound())
        return DPSolution(root, cost, min(lower, cost), False, stats, limit="time_limit")

    def objective(self, solution: DPSolution) -> float:
        """What the search ranks a solution's tree by, in cost units: its cost plus the split
        penalty (``penalty`` times ``cost_scale``) per split; it orders trees as (cost, number
        of splits) does."""
        return solution.cost + self.penalty * self.cost_scale * solution.tree.n_splits

    def memory_need(self, depth: int, budget: int | None = None) -> int:
        """Bytes the search to ``depth`` allocates (its largest arrays, within a few percent):
        per level below the root's first two (``max(depth - 1, 1)`` levels) the node's rows
        sorted once per feature with their buckets and labels (12 bytes a row and feature),
        the interval bookkeeping (about 64 bytes a row), with two classes each evaluated
        split's per-feature bounds (16 bytes a row and feature), with squared error the rows
        by target (4 bytes a row), and under a node budget ``budget`` below the full tree each
        evaluated split's bounds per child budget (16 bytes a row and budget); once, the
        depth-two histograms' scratch (4 bytes a row and feature, 16 bytes per statistic and
        bucket for at most 4096 buckets, see :mod:`._histogram`), with two to four classes
        the segment trees' (96 bytes a row and pair of classes, rounded up to a power of two,
        and 40 bytes a row, see :mod:`._segment`), with two classes the rows' side weights
        (32 bytes a row); then the tree building after it (about 48 bytes a row). Depth 0 (a
        single leaf) needs only the latter. An upper bound: the resident memory measured is
        65-85% of it (pages of deeper levels, which hold fewer rows, are never touched)."""
        F, n = self.features.bucket.shape
        K = self.n_classes
        after = 48 * n + 16 * K * (1 << (depth + 1))
        if depth <= 0:
            return int(after)
        levels = max(depth - 1, 1)
        H = (1 << (depth + 1)) - 1
        two_class = K == 2 and not self.regression and self.leaf_cost is None
        kmeans = self.regression and self.leaf_cost is None  # rows by target (see _kmeans)
        level = (12 * F * n + 8 * 2 * (n + 1) + 32 * (n + 2) + 16 * (n + 1)
                 + 16 * F * ((n + 1) if two_class else 1) + 48 * H + 8 * (2 * F + 2 * K + 24)
                 + (4 * n if kmeans else 0))
        full = (1 << depth) - 1
        if budget is not None and budget < full:
            level += 16 * (n + 1) * min(budget, (full + 1) // 2)
        stats = 3 if self.regression else K
        histograms = 4 * F * n + min(MAX_BUCKETS, F * n) * (16 * stats + 32)
        if (not self.regression and self.leaf_cost is None
                and 2 <= K <= SEGMENT_MAX_CLASSES and depth >= 2):
            histograms += 96 * pairs(K) * (1 << max(n - 1, 0).bit_length()) + 40 * n
        return int(max(levels * level + histograms + n + 32 * H + 8 * (4 * F + 6 * K)
                       + (56 * n if kmeans else 0) + (32 * n if two_class else 0), after))

    def _solve_shallow(self, deadline: float, progress: Progress | None,
                       budget: int) -> DPSolution:
        """``memory_limit`` rules out ``max_depth``: the optimal tree of the largest depth that
        fits (searched on the whole root, within the deadline, whatever bound ``board`` holds:
        that one bounds deeper trees), and the equivalent-points bound."""
        depth = self.max_depth - 1
        while depth > 0 and self.memory_need(depth, budget) > self.memory_limit:
            depth -= 1
        if depth > 0:
            _, _, _, root = self._search(depth, INF, deadline, progress, budget=budget)
        else:
            root = self._tree(np.full(1, -1, np.int64), np.zeros(1, np.int64), 0)
        cost = self._cost(root)
        return DPSolution(root, cost, min(self.equivalent_points_bound(), cost), False,
                          dict(zip(STAT_NAMES, self.stats.tolist())), limit="memory_limit")

    def _kernel_ub(self, upper_bound: float) -> float:
        """The kernel's bound for trees whose objective is below ``upper_bound`` by more than
        the tolerance."""
        if not upper_bound < INF:
            return INF
        return upper_bound / self.cost_scale - self.tolerance / self.cost_scale

    def _rank(self, root: BinaryNode, cost: float | None = None) -> float:
        """A tree's objective with the split penalties (see :meth:`objective`); ``cost``:
        its :meth:`_cost` if known."""
        if cost is None:
            cost = self._cost(root)
        return cost + self.penalty * self.cost_scale * root.n_splits

    def _perfect_first(self) -> bool:
        """Whether a tree without errors would end the search (size-minimal classification
        from depth PERFECT_IS_FINAL_DEPTH on, see :mod:`._lexicographic`)."""
        return (self.penalty > 0 and not self.regression and self.leaf_cost is None
                and self.max_depth >= PERFECT_IS_FINAL_DEPTH and self.flags[USE_PERFECT_FINAL])

    def _few_errors_first(self) -> bool:
        """Whether a size-minimal classification whose perfect trees do not end the search (see
        :meth:`_perfect_first`) first looks for a tree with at most one error (none without
        unit weights) as its incumbent (technique ``perfect_depth2``)."""
        return (self.penalty > 0 and not self.regression and self.leaf_cost is None
                and self.max_depth >= 3 and self.min_leaf <= 1  # (the sweeps' case)
                and self.flags[USE_PERFECT_DEPTH2])

    def _error_cost(self) -> float:
        """The least positive row weight (kernel units): what an error costs at least."""
        if self.unit and len(self.weights):
            return 1.0  # equal weights, scaled to 1 (without a pass over them)
        w = self.weights[self.weights > 0]
        return float(w.min()) if len(w) else INF

    def _search(self, depth: int, ub: float, deadline: float, progress: Progress | None,
                roots: tuple[np.ndarray, np.ndarray] | None = None,
                board: np.ndarray | None = None, penalty: float | None = None,
                work: int | None = None, budget: int | None = None, root_lb: float = 0.0):
        """Run the kernel to ``depth``: outcome, cost (INF: none below ``ub``), lower bound (on
        the penalised objective, kernel units) and the tree (a leaf when cut short before any
        tree below ``ub``). ``penalty``: the kernel's split penalty instead of
        ``kernel_penalty``; ``work``: stop after about that many rows x features swept (at the
        first look at the clock), whatever the deadline; ``budget``: at most that many splits
        (None: no limit); ``root_lb``: the search ends at its first tree this cheap."""
        size = (1 << (depth + 1)) - 1
        tree_f = np.full(size, -1, np.int64)
        tree_b = np.zeros(size, np.int64)
        if board is None:
            board = new_board(deadline)
        else:
            board[DEADLINE] = deadline
        if work is not None:  # stop at the first look at the clock
            board[DEADLINE] = -INF
        if roots is None:
            F = self.features.bucket.shape[0]
            roots = (np.zeros(F, np.int64), np.full(F, ALL_BUCKETS, np.int64))
        args = (self.features.bucket, self.labels, self.weights, self.unit, self.n_classes,
                self.min_leaf, depth, ub, board, self.flags, self.stats, tree_f, tree_b,
                self.target, self._kernel_cost(), *roots,
                self.kernel_penalty if penalty is None else penalty,
                int(self.clock_work if work is None else work),
                int((1 << depth) - 1 if budget is None else budget), float(root_lb))
        with _quiet_numba(self.leaf_cost is not None):
            if progress is None:
                outcome, cost, lb = search(*args)
            else:
                outcome, cost, lb = progress.run(search, board, *args, scale=self.cost_scale,
                                                  count=(self.stats, ST_EVALS))
        if cost == INF:
            tree_f[:] = -1
        return outcome, cost, lb, self._tree(tree_f, tree_b, depth)

    def _kernel_cost(self) -> Any:
        """The kernels' ``fn``: the user's compiled objective, or None."""
        return None if self.leaf_cost is None else self.leaf_cost.kernel_target()

    def equivalent_points_bound(self) -> float:
        """See :func:`~.solver.equivalent_points_bound`: rows alike in every feature (squared
        error: each such group costs at least its own squared error around its mean).
        Computed once per solver."""
        if self._epb is None:
            if self.leaf_cost is not None:
                self._epb = 0.0  # a user's leaf costs need not add up over groups of rows
            elif self.regression:
                groups = row_groups(self.features.bucket.T)  # None: no two rows alike
                self._epb = SquaredError().lower_bound(self.y, self.weights * self.scale,
                                                       groups)
            else:
                self._epb = equivalent_points_bound(self.features.bucket.T, self.labels,
                                                    self.weights * self.scale, self.n_classes)
        return self._epb

    def _cost(self, root: BinaryNode) -> float:
        """The objective of a tree from :meth:`_tree` (with ``split_cost`` per split)."""
        # The leaves in BinaryNode.cost's order (false side first), their errors in one go.
        leaves, stack, splits = [], [root], 0
        while stack:
            node = stack.pop()
            if node.feature < 0:
                leaves.append(node.counts)
            else:
                splits += 1
                stack += [node.true, node.false]
        total = self.split_cost * splits
        if self.regression:
            for counts in leaves:
                total += float(counts[2])
            return total
        if self.leaf_cost is not None:
            return float(self.leaf_cost.leaf_costs(np.array(leaves))[0].sum()) + total
        cost = 0.0
        if self.unit and self.scale == 1.0:  # whole counts: any order of sums is exact
            for counts in leaves:
                c = counts.tolist()
                cost += sum(c) - max(c)
        else:
            counts = np.array(leaves)
            for error in (counts.sum(axis=1) - counts.max(axis=1)).tolist():
                cost += error
        return cost + total

    def _tree(self, tree_f: np.ndarray, tree_b: np.ndarray, depth: int) -> BinaryNode:
        """The heap-layout tree as binary-feature nodes with class weights (only the nodes
        the tree reaches)."""
        bucket, K = self.features.bucket, self.n_classes
        w = self.weights * self.scale if self.scale != 1.0 else self.weights
        H = len(tree_f)
        if self.regression:  # all rows down one level at a time (a few array operations each)
            counts = np.zeros((H, K))
            rows = np.arange(len(self.labels))
            node = np.zeros(len(rows), np.int64)
            for level in range(depth + 1):
                counts += _regression_counts(node, self.y[rows], w[rows], H, self.leaf_cost)
                f = tree_f[node]
                split = f >= 0
                if level == depth or not split.any():
                    break
                rows, node, f = rows[split], node[split], f[split]
                # Heap children: 2i+1 is the left (bucket <= b) side.
                node = 2 * node + np.where(bucket[f, rows] <= tree_b[node], 1, 2)
        else:
            counts = heap_class_weights(bucket, self.labels, w, tree_f, tree_b, K)
        split_feature, split_flip = self.features.split_feature, self.features.split_flip
        feats, cuts = tree_f.tolist(), tree_b.tolist()
        root = BinaryNode(-1, counts[0])
        stack = [(0, root)]
        while stack:
            i, n = stack.pop()
            f = feats[i]
            if f < 0 or 2 * i + 2 >= H:
                continue
            b = cuts[i]
            n.feature = split_feature[f].item(b)  # item: a Python int, no NumPy scalar
            left, right = BinaryNode(-1, counts[2 * i + 1]), BinaryNode(-1, counts[2 * i + 2])
            n.true, n.false = (right, left) if split_flip[f].item(b) else (left, right)
            stack += [(2 * i + 1, left), (2 * i + 2, right)]
        return root


def _quiet_numba(active: bool) -> AbstractContextManager[None]:
    """Numba calls passing a function (a user's objective) "experimental" on every call; it
    is what the kernels are built for, so the warning says nothing to the user. (Only when
    ``active``: warning filters are process-wide, and threads may run other fits. Inactive, a
    shared no-op: a generator's context manager costs a microsecond per kernel call.)"""
    return _quiet() if active else _NO_CONTEXT


_NO_CONTEXT = nullcontext()


@contextmanager
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaExperimentalFeatureWarning)
        yield


def _statistics(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The regression statistics ``(W, S, Q)`` of all rows, as one row."""
    return np.array([[w.sum(), w @ y, w @ (y * y)]])


def _regression_counts(node: np.ndarray, y: np.ndarray, w: np.ndarray, H: int,
                       leaf_cost: RegressionLeafCost | None = None) -> np.ndarray:
    """``(mean, weight, squared error)`` of every heap node ``0..H-1`` over the rows in it
    (``node[i]`` holds row ``i``; nodes without rows get zeros). The squared error is summed
    around each node's mean (exact where ``Q - S**2 / W`` would cancel). With a user's
    ``leaf_cost``: ``(value, weight, cost)`` from each node's ``(W, S, Q)``."""
    W = np.bincount(node, weights=w, minlength=H)
    if leaf_cost is not None:
        stats = np.column_stack([W, np.bincount(node, weights=w * y, minlength=H),
                                 np.bincount(node, weights=w * y * y, minlength=H)])
        cost, value = leaf_cost.leaf_costs(stats)
        return np.column_stack([np.where(W > 0, value, 0.0), W, np.where(W > 0, cost, 0.0)])
    mean = np.bincount(node, weights=w * y, minlength=H) / np.where(W > 0, W, 1.0)
    sse = np.bincount(node, weights=w * (y - mean[node]) ** 2, minlength=H)
    return np.column_stack([mean, W, sse])
