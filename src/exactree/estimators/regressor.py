"""``OptimalTreeRegressor``: provably optimal depth-limited regression trees (least squares)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..data import Binarizer
from ..data.encoding import Column
from ..core.planner import ProblemShape, plan_search
from ..data.ordered import ordered_features
from ..data.validation import TimeLimitReached
from ..objectives import RegressionLeafCost, SquaredError
from ..solvers.dp.convert import to_tree
from ..solvers.dp.ordered import TECHNIQUES, OrderedSolver
from ..solvers.dp.parallel import solve_dp
from ..solvers.dp.solver import DPSolution
from ..solvers.result import SolveResult
from ..tree import Tree
from ._params import Interval, StrOptions
from ._path import PathPoint, solve_path
from .base import TreeRegressorBase
from .optimal import solution_status


class OptimalTreeRegressor(TreeRegressorBase):
    """Regression tree with the least (weighted) training sum of squared errors, each leaf
    predicting the (weighted) mean of its rows, under depth and leaf-size limits: exactly, by
    the threshold-aware dynamic programme over ordered features (the search behind
    ``OptimalTreeClassifier(search="ordered")``, with squared-error statistics).

    What is proven: the tree is optimal among the binary trees whose splits are thresholds
    ``x <= t`` on numeric columns (every midpoint between distinct values, so no threshold on
    the raw values is missed) and ``column == value`` tests on categorical columns (pandas
    ``category``/strings, or those named in ``categorical_features``). A split sending a
    *subset* of categories one way, such as ``{a, b} | {c, d}``, is not among them by default,
    so a tree using one may be better within the same depth; ``categorical_splits="subset"``
    searches every such two-group split too (columns of up to 10 categories). Missing values
    (NaN, ``None``, ``pandas.NA``) in numeric columns are routed as in
    :class:`OptimalTreeClassifier`: every split on a column that held missing values in fit
    sends them to the side the optimisation chose.

    Parameters
    ----------
    max_depth : int, default=3
        Most levels of splits (a single leaf has depth 0).
    max_nodes : int or None, default=None
        Most splits (branching nodes) in the tree, MurTree's node budget; None: any number
        within ``max_depth``. Solved exactly by the same search, each split's children
        sharing its budget (every pair of child budgets is tried). :meth:`fit_path` gives the
        optimal tree of every budget.
    min_samples_leaf : int, default=1
        Least number of training rows in every leaf.
    cost_complexity : float, default=0.0
        ``alpha`` of the sparse-regression objective ``SSE / SSE_0 + alpha * splits``, where
        ``SSE_0`` is the (weighted) squared error of the single-leaf tree (1 if that is 0): the
        normalisation of OSRT and of STreeD's ``cost-complex-regression``, so that ``alpha``
        means the same on every dataset. Solved exactly by one search that charges every split
        ``alpha * SSE_0``; ``objective_`` and the bounds are then of this objective.
    time_limit : float or None, default=None
        Seconds for the whole ``fit``, counted from the call (input checks, encoding, the
        ordered features, the search, building the tree), as for
        :class:`OptimalTreeClassifier`. Past it the best tree found is returned with
        ``status_ == "time_limit"`` and a proven ``lower_bound_`` (the search's, which includes
        the k-means bound of the targets, and: rows equal in every feature share a leaf, so
        each such group costs at least its own squared error); if it runs out
        before the search could start, the tree is a single leaf predicting the weighted mean,
        with ``lower_bound_ == 0``.
    memory_limit : float or None, default=None
        MiB the fit may hold (the encoded data, ordered features and the search's arrays; the
        search keeps no branch cache, so there is no ``cache_limit`` to set);
        when the search's arrays would not fit it returns a shallower tree
        with ``status_ == "memory_limit"`` and a proven ``lower_bound_``. None: half of the
        memory available when ``fit`` starts, as for :class:`OptimalTreeClassifier` (each
        of ``n_jobs`` workers gets an equal share).
    max_thresholds : int or None, default=None
        Cap on thresholds per numeric column (quantiles); gives up the optimality guarantee
        over the raw values (``status_ == "optimal_on_binarized"``).
    categorical_features : list of int or str, or None
        Numeric-coded columns to treat as categories.
    categorical_splits : {"equality", "subset"}, default="equality"
        Tests on a categorical column: ``column == value``, or also every split of its
        categories into two groups, as for :class:`OptimalTreeClassifier`.
    techniques : dict or None
        Switch the search's pruning techniques on or off for ablation (names in
        :data:`exactree.solvers.dp.ordered.TECHNIQUES`); the optimum never changes.
    n_jobs : int or None, default=None
        Workers for one fit of depth 3 or more, as for :class:`OptimalTreeClassifier` (joblib;
        a Dask cluster through ``joblib.parallel_config(backend="dask")``).
    objective : RegressionLeafCost or None, default=None
        A leaf cost of your own instead of squared error
        (:class:`exactree.objectives.RegressionLeafCost`: Python functions of a leaf's total
        weight, weighted sum of targets and of squared targets, compiled with Numba into the
        same search), each leaf predicting its ``value``. The optimum is proven as long as the
        cost keeps the promises named there, which are tested before the fit (ValueError
        naming the one broken). The fit runs in one process (``n_jobs`` does not apply);
        ``lower_bound_`` after a time limit comes from the search alone, and with
        ``cost_complexity`` the unit ``SSE_0`` is the single leaf's cost under the objective.
    verbose : int, default=0
        As for :class:`OptimalTreeClassifier`: progress lines on stderr, Ctrl-C keeps the best
        tree with status ``"interrupted"``.

    Attributes
    ----------
    tree_ : Tree
        A regression tree (``tree_.is_regression``): ``tree_.value[:, 0]`` the node means,
        ``tree_.node_weight`` and ``tree_.impurity`` (squared error of each node as a leaf).
    objective_ : float
        The training sum of squared errors (weighted), or of the leaves' costs under
        ``objective``; with ``cost_complexity``, the normalised penalised objective.
    lower_bound_, upper_bound_, gap_ : float
    status_ : str
        "optimal", "time_limit", "memory_limit", "interrupted" or "optimal_on_binarized".
    path_ : list of PathPoint
        After :meth:`fit_path`, the optimal tree of every node budget.
    parallel_ : ParallelReport or None
        With ``n_jobs`` workers: the tasks of the parallel solve and their timings.
    search_ : str
        "ordered", the one search for squared error; ``plan_`` says so in words (as for
        :class:`~exactree.OptimalTreeClassifier`, one line at ``verbose=1``).
    """

    _allow_nan = True
    _parameter_constraints: dict = {
        "max_depth": [Interval(Integral, 0, 16, closed="both")],
        "max_nodes": [Interval(Integral, 0, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "cost_complexity": [Interval(Real, 0, None, closed="left")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "memory_limit": [Interval(Real, 0, None, closed="neither"), None],
        "max_thresholds": [Interval(Integral, 1, None, closed="left"), None],
        "categorical_features": ["array-like", None],
        "categorical_splits": [StrOptions({"equality", "subset"})],
        "techniques": [dict, None],
        "n_jobs": [Integral, None],
        "objective": [RegressionLeafCost, None],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
    }

    _whole_fit_time_limit = True  # the clock starts when fit is entered (see TreeEstimatorBase)

    def __init__(self, *, max_depth: int = 3, max_nodes: int | None = None,
                 min_samples_leaf: int = 1,
                 cost_complexity: float = 0.0,
                 time_limit: float | None = None, memory_limit: float | None = None,
                 max_thresholds: int | None = None, categorical_features: Any = None,
                 categorical_splits: str = "equality", techniques: dict | None = None,
                 n_jobs: int | None = None,
                 objective: RegressionLeafCost | None = None, verbose: int = 0) -> None:
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.min_samples_leaf = min_samples_leaf
        self.cost_complexity = cost_complexity
        self.time_limit = time_limit
        self.memory_limit = memory_limit
        self.max_thresholds = max_thresholds
        self.categorical_features = categorical_features
        self.categorical_splits = categorical_splits
        self.techniques = techniques
        self.n_jobs = n_jobs
        self.objective = objective
        self.verbose = verbose

    def _prepare(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray,
                 columns: list[Column], split_cost: float = 0.0) -> OrderedSolver:
        """The search over the ordered features of ``X`` (the binarizer in ``binarizer_``)."""
        binarizer = Binarizer("exact", self.max_thresholds, self.categorical_splits).fit(
            X, np.zeros(len(X), np.int64), columns, sample_weight, keep_ranks=True,
            deadline=self._deadline)
        try:
            features = ordered_features(binarizer, X, self._deadline)
        finally:
            binarizer.ranks.clear()  # rows x columns: not kept in the fitted model
        self.binarizer_ = binarizer
        self.n_binary_features_ = binarizer.n_features_out
        self._announce(plan_search(ProblemShape(len(X), self.n_binary_features_,
                                                features.n_features if features else 0, 0,
                                                self.max_depth)))
        techniques = dict(self.techniques or {})
        unknown = [name for name in techniques if name not in TECHNIQUES]
        if unknown:
            raise ValueError(f"unknown technique {unknown[0]!r}; known: {', '.join(TECHNIQUES)}")
        if self.objective is not None:
            self.objective.check(y, sample_weight)
        return OrderedSolver(features, None, 1, sample_weight=sample_weight,
                             max_depth=self.max_depth, min_samples_leaf=self.min_samples_leaf,
                             memory_limit=self._memory_bytes(X, binarizer, features),
                             techniques=techniques, target=y, split_cost=split_cost,
                             leaf_cost=self.objective)

    def _run(self, solver: OrderedSolver, **solve_args: Any) -> DPSolution | None:
        """``solver.solve(max_nodes=..., **solve_args)`` with this fit's progress, over
        ``n_jobs`` workers where that can pay."""
        n_jobs = 1 if self.objective is not None else self.n_jobs  # the compiled cost stays here
        solve_args.setdefault("max_nodes", self.max_nodes)
        sol, self.parallel_ = solve_dp(solver, n_jobs, progress=self._progress, **solve_args)
        return sol

    def _tree(self, sol: DPSolution) -> Tree:
        return to_tree(sol.tree, self.binarizer_, self.encoder_.columns_, 1, regression=True)

    def _solve(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray,
               columns: list[Column]) -> SolveResult:
        # The cost-complexity objective's unit: the single leaf's cost.
        unit = self._root_cost(y, sample_weight) if self.cost_complexity > 0 else 1.0
        unit = unit if unit > 0 else 1.0
        solver = self._prepare(X, y, sample_weight, columns, self.cost_complexity * unit)
        sol = self._run(solver, time_limit=self._search_time())
        tree = self._tree(sol)
        # The objective from the tree's leaves (sums around each leaf's mean), not from the
        # kernel's running sums.
        leaves = tree.kind == 0
        objective = float(tree.impurity[leaves].sum())
        if self.cost_complexity > 0:
            objective = objective / unit + self.cost_complexity * int((~leaves).sum())
        lower = objective if sol.optimal else min(sol.lower_bound / unit, objective)
        return SolveResult(tree, objective, lower, solution_status(sol.optimal, sol.limit,
                                                                   self.binarizer_.exact_),
                           stats=sol.stats)

    def fit_path(self, X: Any, y: Any, sample_weight: Any = None) -> list[PathPoint]:
        """Fit the optimal tree of every node budget ``0..max_nodes`` (every budget up to the
        full tree of ``max_depth`` when ``max_nodes`` is None), one search each.

        The estimator ends fitted with the largest budget's tree; the path is returned and kept
        in ``path_`` (each point's ``objective`` is its squared error, or its cost under
        ``objective``). ``cost_complexity`` does not apply here. ``time_limit`` covers the
        whole path: each budget gets a share of the time left; one cut short is kept with
        ``optimal=False`` and its proven ``lower_bound``, and the path goes on (budgets the
        time did not reach are left out of it).
        """
        self._fit(X, y, sample_weight, self._solve_path)
        return self.path_

    def _solve_path(self, X, y, sample_weight, columns) -> SolveResult:
        try:
            solver = self._prepare(X, y, sample_weight, columns)
        except TimeLimitReached:  # the mean leaf: optimal for budget 0, the only one
            result = self._objective_leaf(y, sample_weight, columns)
            self.path_ = [PathPoint(0, 0, result.objective, result.tree, True,
                                    result.objective)]
            return result
        budgets = solver.max_budget if self.max_nodes is None else min(self.max_nodes,
                                                                      solver.max_budget)
        self.path_, result = solve_path(
            lambda b, ub, seconds: self._run(solver, max_nodes=b, upper_bound=ub,
                                             time_limit=seconds),
            budgets, self._share, lambda: self._progress.interrupted, self._tree,
            solver.tolerance, solver.equivalent_points_bound,
            solution_status(True, None, self.binarizer_.exact_))
        return result

    def _root_cost(self, y: np.ndarray, w: np.ndarray) -> float:
        """The single leaf's squared error, or its cost under ``objective``."""
        if self.objective is None:
            return SquaredError.cost(y, w)
        stats = np.array([[w.sum(), w @ y, w @ (y * y)]])
        return float(self.objective.leaf_costs(stats)[0][0])

    def _leaf_result(self, y: np.ndarray, w: np.ndarray, columns: list[Column]) -> SolveResult:
        """:meth:`_objective_leaf`; with ``cost_complexity`` its objective is normalised: 1
        (0 for a leaf that costs nothing)."""
        result = self._objective_leaf(y, w, columns)
        if self.cost_complexity > 0:
            result.objective = result.upper_bound = float(result.objective > 0)
        return result

    def _objective_leaf(self, y: np.ndarray, w: np.ndarray, columns: list[Column]
                        ) -> SolveResult:
        """The mean leaf (``time_limit`` ran out before any search; with ``objective`` its
        value and cost)."""
        result = super()._leaf_result(y, w, columns)
        if self.objective is not None:
            stats = np.array([[w.sum(), w @ y, w @ (y * y)]])
            cost, value = self.objective.leaf_costs(stats)
            result.tree.value[0, 0] = value[0]
            result.tree.impurity[0] = cost[0]
            result.objective = result.upper_bound = float(cost[0])
        return result

    @property
    def feature_importances_(self) -> np.ndarray:
        """Normalised total decrease of the (weighted) training squared error brought by each
        feature's splits: sums to 1, all zeros for a single leaf, exactly 0 for features the
        tree does not test. See :meth:`exactree.tree.Tree.feature_importances`."""
        check_is_fitted(self, "tree_")
        return self.tree_.feature_importances()

