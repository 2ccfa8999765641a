"""``OptimalTreeClassifier``: provably optimal depth- and size-limited trees (MurTree)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from ..data import Binarizer
from ..data.encoding import Column
from ..data.ordered import OrderedFeatures, mean_splits_bound, ordered_features
from ..solvers.dp.convert import to_tree
from ..solvers.dp.ordered import TECHNIQUES as ORDERED_TECHNIQUES
from ..solvers.dp.ordered import OrderedSolver
from ..solvers.dp.parallel import solve_dp
from ..solvers.dp.solver import TECHNIQUES as BINARY_TECHNIQUES
from ..solvers.dp.solver import DPSolution, DPSolver, check_problem_size
from ..solvers.result import OPTIMAL, OPTIMAL_ON_BINARIZED, TIME_LIMIT, SolveResult
from ..tree import Tree
from ._params import Interval, StrOptions
from .base import TreeClassifierBase


# search="auto" takes the threshold-aware search when the ordered features carry at least
# ORDERED_MIN_SPLITS splits each on average (half that on at most ORDERED_SMALL_ROWS rows), or
# the binary features number ORDERED_MIN_BINARY or more (MurTree's pair counts grow with their
# square). Below that (binary data, thermometer codes of 10-30 thresholds per column on
# hundreds of rows or more) MurTree's popcounted pair counts were faster on every benchmark
# measured (benchmarks/bench_continuous.py, bench_dp.py); iris-sized numeric data was not.
ORDERED_MIN_SPLITS = 32
ORDERED_SMALL_ROWS = 500
ORDERED_MIN_BINARY = 1000
# Refuse ordered problems whose per-level sorted rows alone would need more memory than this.
MAX_ORDERED_BYTES = 4 * 2**30


def check_ordered_size(n: int, n_features: int, max_depth: int) -> None:
    """Raise a clear error when the ordered search's sorted rows (three int32 arrays of
    ``rows x features`` per level) would not fit in :data:`MAX_ORDERED_BYTES`."""
    need = 12 * n * n_features * max(max_depth - 1, 1)
    if need > MAX_ORDERED_BYTES:
        raise ValueError(
            f"{n} rows x {n_features} features at depth {max_depth} need about "
            f"{need / 2**30:.1f} GiB for the search (limit {MAX_ORDERED_BYTES / 2**30:.0f} GiB); "
            "use fewer rows or a smaller max_depth")


@dataclass
class PathPoint:
    """One point of the node-budget path: the optimal tree with at most ``max_nodes`` splits."""

    max_nodes: int
    n_splits: int
    objective: float  # weighted misclassifications
    tree: Tree
    optimal: bool


class OptimalTreeClassifier(TreeClassifierBase):
    """Decision tree with the least (weighted) training misclassification under depth and size
    limits, found by dynamic programming and branch-and-bound (MurTree).

    Numeric columns are binarised with every distinct midpoint by default, so the tree is
    optimal over the raw values; categorical columns (pandas ``category``/strings, or those named
    in ``categorical_features``) give ``column == value`` tests.

    Missing values (NaN, ``None``, ``pandas.NA``) in numeric columns are routed natively: every
    split on a column that held missing values in fit sends them to the side the optimisation
    chose, so the tree is optimal over all trees whose splits each send missing values one way
    (``tree_.missing_left``; ``export_text`` shows the side). Missing values at predict time in
    a column without any in fit go to the child more training weight reached. A categorical
    column with missing values is an error: fill them with a category of their own.

    Parameters
    ----------
    max_depth : int, default=3
        Most levels of splits (a single leaf has depth 0).
    max_nodes : int or None, default=None
        Most branching nodes; None allows the full ``2**max_depth - 1``.
    min_samples_leaf : int, default=1
        Least number of training rows in every leaf.
    cost_complexity : float, default=0.0
        ``alpha`` of the objective ``misclassified weight / total weight + alpha * splits``;
        solved exactly by optimal trees of every node budget from one shared cache.
    time_limit : float or None, default=None
        Seconds; past it the best tree found is returned with ``status_ == "time_limit"``.
    thresholds : {"exact", "boundary"}, default="exact"
        Numeric threshold candidates (see :mod:`exactree.data.binarize`); "boundary" is
        smaller but can miss the optimum of trees deeper than one split.
    max_thresholds : int or None, default=None
        Cap on thresholds per numeric column (quantiles); gives up the optimality guarantee.
    categorical_features : list of int or str, or None
        Numeric-coded columns to treat as categories.
    cache_limit : int, default=5_000_000
        Most cached branches (memory bound; beyond it the search only slows down).
    techniques : dict or None
        Switch search techniques on or off for ablation, e.g. ``{"similarity": False}``; names
        in :data:`exactree.solvers.dp.solver.TECHNIQUES`, all on by default except
        ``"incremental"`` (incremental pair counting, slower than popcounting afresh on every
        benchmark measured). The ordered search's switches are in
        :data:`exactree.solvers.dp.ordered.TECHNIQUES` (all on by default); names of the search
        that does not run (see ``search_``) are accepted and have no effect. The optimum never
        changes, only speed (on ties another optimal tree may be returned).
    search : {"auto", "ordered", "binary"}, default="auto"
        "ordered" searches each numeric column as one ordered feature (sorted sweeps, interval
        bounds over its thresholds; no rows x thresholds matrix); "binary" searches every
        threshold as a binary feature (MurTree's pair counts). "auto" takes "ordered" for
        columns with many thresholds (32 on average, 16 on at most 500 rows, or 1,000 in all)
        and "binary" otherwise. Both give the same optimum; "ordered" solves depth-limited
        trees only, so ``max_nodes`` below the full tree, ``cost_complexity`` and
        :meth:`fit_path` use "binary".
    class_weight : dict, "balanced" or None, default=None
        Weight of each class, ``{label: weight}`` (labels left out weigh 1); ``"balanced"``
        weighs class ``c`` by ``n_samples / (n_classes * count(c))``. Fitting with it is
        identical to fitting with the matching ``sample_weight`` (scikit-learn's
        ``compute_sample_weight``), multiplied into ``sample_weight`` when both are given.
    n_jobs : int or None, default=None
        Workers for one fit of depth 3 or more (joblib's convention: None is 1 unless a
        ``joblib.parallel_config`` says otherwise, -1 every core). The root's candidate splits
        are dealt to worker processes, which share the best objective found as it improves;
        ``joblib.parallel_config(backend="dask")`` sends them to a Dask cluster. The objective,
        bounds and status are those of a serial fit, and the tree is the same whatever the
        workers' timing (among several optimal trees it may differ from ``n_jobs=1``'s).
    verbose : int, default=0
        0: silent. 1: a fit running over a second prints a line on stderr about once a second
        (elapsed time, nodes explored, best objective, proven lower bound, gap) and a summary at
        the end. 2: lines from the start, and the search's counters in the summary. At any
        verbosity Ctrl-C stops the search and keeps the best tree found, with status
        ``"interrupted"`` and the bound proven so far.

    Attributes
    ----------
    tree_ : Tree
    objective_ : float
        Weighted misclassifications (``cost_complexity == 0``) or the penalised objective.
    lower_bound_, upper_bound_, gap_ : float
    status_ : str
        "optimal", "time_limit" or "optimal_on_binarized" (capped/boundary thresholds).
    path_ : list of PathPoint
        After :meth:`fit_path`, the optimal tree of every node budget.
    search_ : str
        The search that ran, "ordered" or "binary".
    parallel_ : ParallelReport or None
        With ``n_jobs`` workers: the tasks of the (last) parallel solve and their timings.
    """

    _allow_nan = True  # numeric columns' missing values go where the optimisation says
    _parameter_constraints: dict = {
        "max_depth": [Interval(Integral, 0, 16, closed="both")],  # memory grows like 2**depth
        "max_nodes": [Interval(Integral, 0, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "cost_complexity": [Interval(Real, 0, None, closed="left")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "thresholds": [StrOptions({"exact", "boundary"})],
        "max_thresholds": [Interval(Integral, 1, None, closed="left"), None],
        "categorical_features": ["array-like", None],
        "cache_limit": [Interval(Integral, 1, None, closed="left")],
        "techniques": [dict, None],
        "search": [StrOptions({"auto", "ordered", "binary"})],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "n_jobs": [Integral, None],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
    }

    def __init__(self, *, max_depth: int = 3, max_nodes: int | None = None,
                 min_samples_leaf: int = 1, cost_complexity: float = 0.0,
                 time_limit: float | None = None, thresholds: str = "exact",
                 max_thresholds: int | None = None, categorical_features: Any = None,
                 cache_limit: int = 5_000_000, techniques: dict | None = None,
                 search: str = "auto", class_weight: dict | str | None = None,
                 n_jobs: int | None = None, verbose: int = 0) -> None:
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.min_samples_leaf = min_samples_leaf
        self.cost_complexity = cost_complexity
        self.time_limit = time_limit
        self.thresholds = thresholds
        self.max_thresholds = max_thresholds
        self.categorical_features = categorical_features
        self.cache_limit = cache_limit
        self.techniques = techniques
        self.search = search
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ solving
    def _binarize(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, columns: list[Column],
                  keep_ranks: bool = False) -> None:
        self.binarizer_ = Binarizer(self.thresholds, self.max_thresholds).fit(
            X, y, columns, w, keep_ranks=keep_ranks)
        self.n_binary_features_ = self.binarizer_.n_features_out

    def _prepare(self, X: np.ndarray, y: np.ndarray, w: np.ndarray,
                 columns: list[Column]) -> DPSolver:
        """The binary-feature search (MurTree) over the binarised data."""
        self._binarize(X, y, w, columns)
        return self._binary_solver(X, y, w)

    def _binary_solver(self, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> DPSolver:
        self.search_ = "binary"
        check_problem_size(len(X), self.n_binary_features_, len(self.classes_))
        return DPSolver(self.binarizer_.transform(X), y, len(self.classes_), sample_weight=w,
                        max_depth=self.max_depth, min_samples_leaf=self.min_samples_leaf,
                        cache_limit=self.cache_limit,
                        techniques=self._techniques(BINARY_TECHNIQUES))

    def _techniques(self, known: tuple[str, ...]) -> dict[str, bool]:
        """The switches of ``techniques`` that belong to the search with technique names
        ``known``. Names of the other search are accepted (they do not apply to this fit, see
        ``search_``); any other name is an error."""
        out = {}
        for name, on in (self.techniques or {}).items():
            if name not in BINARY_TECHNIQUES and name not in ORDERED_TECHNIQUES:
                raise ValueError(f"unknown technique {name!r}; known: "
                                 f"{', '.join(BINARY_TECHNIQUES + ORDERED_TECHNIQUES)}")
            if name in known:
                out[name] = bool(on)
        return out

    def _ordered_features(self, X: np.ndarray) -> OrderedFeatures | None:
        """The ordered features when the threshold-aware search applies and is chosen."""
        try:
            return self._choose_ordered(X)
        finally:
            self.binarizer_.ranks.clear()  # rows x columns: not kept in the fitted model

    def _choose_ordered(self, X: np.ndarray) -> OrderedFeatures | None:
        budgeted = self.max_nodes is not None and self.max_nodes < (1 << self.max_depth) - 1
        if self.search == "binary":
            return None
        if budgeted or self.cost_complexity > 0:
            if self.search == "ordered":
                raise ValueError("search='ordered' solves depth-limited trees; max_nodes and "
                                 "cost_complexity need search='binary' (or 'auto')")
            return None
        per_feature = ORDERED_MIN_SPLITS // (2 if len(X) <= ORDERED_SMALL_ROWS else 1)
        auto = self.search == "auto" and self.n_binary_features_ < ORDERED_MIN_BINARY
        if auto and mean_splits_bound(self.binarizer_, X) < per_feature:
            return None  # few thresholds per feature: MurTree's pair counting is faster
        features = ordered_features(self.binarizer_, X)
        if auto and features.n_splits < per_feature * features.n_features:
            return None
        check_ordered_size(len(X), features.n_features, self.max_depth)
        return features

    def _run(self, solver: DPSolver | OrderedSolver, **solve_args: Any) -> DPSolution | None:
        """``solver.solve(**solve_args)`` with this fit's progress, over ``n_jobs`` workers
        where that can pay (see :func:`~exactree.solvers.dp.parallel.solve_dp`)."""
        sol, self.parallel_ = solve_dp(solver, self.n_jobs, progress=self._progress,
                                       **solve_args)
        return sol

    def _tree(self, solution: DPSolution) -> Tree:
        return to_tree(solution.tree, self.binarizer_, self.encoder_.columns_, len(self.classes_))

    def _status(self, proven: bool) -> str:
        if not proven:
            return TIME_LIMIT
        return OPTIMAL if self.binarizer_.exact_ else OPTIMAL_ON_BINARIZED

    def _solve(self, X, y, sample_weight, columns) -> SolveResult:
        self._binarize(X, y, sample_weight, columns, keep_ranks=self.search != "binary")
        features = self._ordered_features(X)
        if features is not None:
            self.search_ = "ordered"
            solver = OrderedSolver(features, y, len(self.classes_), sample_weight=sample_weight,
                                   max_depth=self.max_depth,
                                   min_samples_leaf=self.min_samples_leaf,
                                   techniques=self._techniques(ORDERED_TECHNIQUES))
            sol = self._run(solver, time_limit=self.time_limit)
            return SolveResult(self._tree(sol), sol.cost, sol.lower_bound,
                               self._status(sol.optimal), stats=sol.stats)
        solver = self._binary_solver(X, y, sample_weight)
        if self.cost_complexity == 0:
            sol = self._run(solver, max_nodes=self.max_nodes, time_limit=self.time_limit)
            return SolveResult(self._tree(sol), sol.cost, sol.lower_bound,
                               self._status(sol.optimal), stats=sol.stats)
        return self._solve_penalised(solver, float(sample_weight.sum()))

    def _solve_penalised(self, solver: DPSolver, total: float) -> SolveResult:
        """Min ``cost / total + alpha * splits`` by solving growing node budgets (section 4.9.3):
        a tree first found at budget b has b splits, so budgets stop once ``alpha * b`` reaches
        the best objective."""
        alpha = self.cost_complexity
        deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit
        max_budget = solver.max_budget if self.max_nodes is None else min(self.max_nodes,
                                                                           solver.max_budget)
        best, best_obj, lower, proven = None, np.inf, None, True
        solver.track_best = False  # the kernel's costs are not this objective
        prev_cost = np.inf
        for b in range(max_budget + 1):
            if alpha * b >= best_obj:
                break
            left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
            sol = self._run(solver, max_nodes=b, upper_bound=prev_cost, time_limit=left)
            if sol is None:  # nothing cheaper with b splits than with fewer
                continue
            obj = sol.cost / total + alpha * sol.tree.n_splits
            if obj < best_obj:
                best, best_obj = sol, obj
                self._progress.update(best=best_obj)
            prev_cost = min(prev_cost, sol.cost)
            if not sol.optimal:
                proven = False
                lower = min(best_obj, sol.lower_bound / total + alpha * b, alpha * (b + 1))
                break
            if sol.cost == 0:
                break
        lower = best_obj if proven else lower
        return SolveResult(self._tree(best), best_obj, lower, self._status(proven),
                           stats=dict(best.stats, cache_entries=solver.cache.n_entries))

    def fit_path(self, X: Any, y: Any, sample_weight: Any = None) -> list[PathPoint]:
        """Fit the optimal tree of every node budget ``0..max_nodes`` from one shared cache.

        The estimator ends fitted with the largest budget's tree; the path is returned and kept
        in ``path_``. ``cost_complexity`` and ``time_limit`` do not apply here.
        """
        self._fit(X, y, sample_weight, self._solve_path)
        return self.path_

    def _solve_path(self, X, y, sample_weight, columns) -> SolveResult:
        solver = self._prepare(X, y, sample_weight, columns)
        max_budget = solver.max_budget if self.max_nodes is None else min(self.max_nodes,
                                                                           solver.max_budget)
        path: list[PathPoint] = []
        prev = None
        solver.track_best = False  # one budget after another: no single best to report
        for b in range(max_budget + 1):
            sol = self._run(solver, max_nodes=b,
                            upper_bound=np.inf if prev is None else prev.cost)
            sol = prev if sol is None else sol
            path.append(PathPoint(b, sol.tree.n_splits, sol.cost, self._tree(sol), sol.optimal))
            prev = sol
            if not sol.optimal:  # interrupted (Ctrl-C): the budgets so far
                break
        self.path_ = path
        proven = all(p.optimal for p in path)
        return SolveResult(path[-1].tree, prev.cost, prev.cost if proven else prev.lower_bound,
                           self._status(proven), stats=prev.stats)
