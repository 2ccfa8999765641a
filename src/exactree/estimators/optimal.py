"""``OptimalTreeClassifier``: provably optimal depth- and size-limited trees (MurTree)."""

from __future__ import annotations

import math
from dataclasses import replace
from numbers import Integral, Real
from typing import Any

import numpy as np

from ..data import Binarizer
from ..data.encoding import Column
from ..data.ordered import OrderedFeatures, mean_splits_bound, ordered_features
from ..core.planner import RACE_ROOM, RACE_SECONDS, Plan, ProblemShape, plan_search
from ..data.validation import TimeLimitReached
from ..objectives import LeafCost
from ..solvers.dp.convert import to_tree
from ..solvers.dp.ordered import TECHNIQUES as ORDERED_TECHNIQUES
from ..solvers.dp.ordered import OrderedSolver
from ..solvers.dp import parallel as dp_parallel
from ..solvers.dp.parallel import solve_dp
from ..solvers.dp.solver import TECHNIQUES as BINARY_TECHNIQUES
from ..solvers.dp.solver import DPSolution, DPSolver, check_problem_size
from ..solvers.result import (MEMORY_LIMIT, OPTIMAL, OPTIMAL_ON_BINARIZED, TIME_LIMIT,
                              SolveResult)
from ..tree import Tree
from ._params import Interval, StrOptions
from ._path import PathPoint, solve_path
from .base import TreeClassifierBase

# The ordered search's memory (its sorted rows per level) is held to memory_limit by the
# solver itself (OrderedSolver.memory_need: a shallower tree, status "memory_limit").


def solution_status(optimal: bool, limit: str | None, exact: bool) -> str:
    """The ``status_`` of a DP solution: proven (on the raw values when ``exact``), or why the
    search stopped short (``DPSolution.limit``; a time-out and Ctrl-C both say "time_limit",
    which the fit turns into "interrupted" after Ctrl-C)."""
    if optimal:
        return OPTIMAL if exact else OPTIMAL_ON_BINARIZED
    return MEMORY_LIMIT if limit == MEMORY_LIMIT else TIME_LIMIT


class OptimalTreeClassifier(TreeClassifierBase):
    """Decision tree with the least (weighted) training misclassification under depth and size
    limits, found by dynamic programming and branch-and-bound (MurTree).

    What is proven: the tree is optimal among the binary trees whose splits are thresholds
    ``x <= t`` on numeric columns and ``column == value`` tests on categorical columns
    (pandas ``category``/strings, or those named in ``categorical_features``). Numeric columns
    are binarised with every distinct midpoint by default, so no threshold on the raw values is
    missed. A split sending a *subset* of categories one way, such as ``{a, b} | {c, d}``, is
    not among these trees by default (it takes several equality tests), so a tree using one
    may be better within the same depth; with ``categorical_splits="subset"`` every such
    two-group split is searched too (columns of up to 10 categories), and the tree is optimal
    among trees of thresholds and two-group category splits.
    :class:`~exactree.SparseTreeClassifier` splits categorical columns multiway instead (one
    child per category).

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
        solved exactly. The ordered search (see ``search``) runs once, charging every split
        ``alpha`` times the total weight. The binary search solves optimal trees of every node
        budget from one shared cache; under ``time_limit`` each budget gets a share of the
        time left (what a budget does not use goes to the next), one cut short does not end
        the path, and ``lower_bound_`` combines what every budget proved.
    time_limit : float or None, default=None
        Seconds for the whole ``fit``, counted from the call: input checks, encoding,
        binarisation, the search and building the tree. Past it the best tree found is
        returned with ``status_ == "time_limit"`` and a proven ``lower_bound_``; if it runs
        out before any search could start, the tree is a single leaf (the class of most
        weight) with ``lower_bound_ == 0``. The wall time stays within about 10% or 0.2 s of
        the limit, whichever is larger (once the search kernels are compiled); encoding the
        input (``pandas``/string columns) is not interrupted.
    memory_limit : float or None, default=None
        MiB the fit may hold: the encoded data (and ordered features) and the search (its
        data, workspaces and branch cache; not the brief peaks of binarisation). When the branch
        cache would outgrow it, the search stops with the best tree found,
        ``status_ == "memory_limit"`` and a proven ``lower_bound_`` (the threshold-aware
        search returns a shallower tree when its arrays do not fit). None: half of the memory
        available when ``fit`` starts (Linux: ``MemAvailable`` of ``/proc/meminfo``, within
        a cgroup's limit; elsewhere ``os.sysconf("SC_AVPHYS_PAGES")`` pages; else 4 GiB); see
        :func:`exactree.estimators.base.available_memory`. A parallel fit (``n_jobs``) gives
        each worker an equal share.
    thresholds : {"exact", "boundary"}, default="exact"
        Numeric threshold candidates (see :mod:`exactree.data.binarize`); "boundary" is
        smaller but can miss the optimum of trees deeper than one split.
    max_thresholds : int or None, default=None
        Cap on thresholds per numeric column (quantiles); gives up the optimality guarantee.
    categorical_features : list of int or str, or None
        Numeric-coded columns to treat as categories.
    categorical_splits : {"equality", "subset"}, default="equality"
        Tests on a categorical column: ``column == value``, or also every split of its
        categories into two groups (``column in {a, b}``; 2**(C-1) - 1 tests for C
        categories, at most 10 categories per column, else ``fit`` raises a ValueError).
    cache_limit : int or None, default=None
        Most cached branches (beyond it the search caches no more and only slows down);
        None: no cap on the count, ``memory_limit`` bounds the cache's bytes.
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
        threshold as a binary feature (MurTree's pair counts). "auto" asks the planner
        (:mod:`exactree.core.planner`): a cost model of rows, binary and ordered features,
        classes and depth, fitted on ``benchmarks/bench_planner.py``'s measurements, picks
        the search predicted faster (never one whose data does not fit in memory), and where
        it is unsure both are raced for a few milliseconds first; ``plan_`` says
        which and why (one line at ``verbose=1``). Both give the same optimum, with ``max_nodes`` and in
        :meth:`fit_path` too (a split's children share its budget less one; the ordered search
        tries every pair of child budgets). With ``cost_complexity`` the ordered search runs
        once with a price per split, the binary one over node budgets.
    objective : LeafCost or None, default=None
        A leaf cost of your own (:class:`exactree.objectives.LeafCost`: a Python function of
        a leaf's class weights and its label, compiled with Numba) minimised instead of the
        weighted misclassification; leaves predict their label of least cost. Runs the
        ordered search (so not with ``search="binary"``) in one process (``n_jobs`` does not
        apply); the optimum is proven
        as long as the cost keeps :class:`~exactree.objectives.LeafCost`'s promises, which
        ``fit`` tests on random weights first. ``lower_bound_`` after a time limit comes from
        the search alone. With ``cost_complexity`` the objective is ``cost / total weight +
        alpha * splits``.
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
        "optimal", "time_limit", "memory_limit", "interrupted" (Ctrl-C) or
        "optimal_on_binarized" (capped/boundary thresholds).
    path_ : list of PathPoint
        After :meth:`fit_path`, the optimal tree of every node budget.
    search_ : str or None
        The search that ran, "ordered" or "binary"; None when ``time_limit`` ran out before
        any search.
    plan_ : exactree.core.planner.Plan or None
        The planner's choice for the last fit: ``search``, ``reason`` (in words), whether it
        raced both searches, and the features it counted.
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
        "memory_limit": [Interval(Real, 0, None, closed="neither"), None],
        "thresholds": [StrOptions({"exact", "boundary"})],
        "max_thresholds": [Interval(Integral, 1, None, closed="left"), None],
        "categorical_features": ["array-like", None],
        "categorical_splits": [StrOptions({"equality", "subset"})],
        "cache_limit": [Interval(Integral, 1, None, closed="left"), None],
        "techniques": [dict, None],
        "search": [StrOptions({"auto", "ordered", "binary"})],
        "objective": [LeafCost, None],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "n_jobs": [Integral, None],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
    }

    _whole_fit_time_limit = True  # the clock starts when fit is entered (see TreeEstimatorBase)

    def __init__(self, *, max_depth: int = 3, max_nodes: int | None = None,
                 min_samples_leaf: int = 1, cost_complexity: float = 0.0,
                 time_limit: float | None = None, memory_limit: float | None = None,
                 thresholds: str = "exact", max_thresholds: int | None = None,
                 categorical_features: Any = None, categorical_splits: str = "equality",
                 cache_limit: int | None = None,
                 techniques: dict | None = None, search: str = "auto",
                 objective: LeafCost | None = None,
                 class_weight: dict | str | None = None, n_jobs: int | None = None,
                 verbose: int = 0) -> None:
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.min_samples_leaf = min_samples_leaf
        self.cost_complexity = cost_complexity
        self.time_limit = time_limit
        self.memory_limit = memory_limit
        self.thresholds = thresholds
        self.max_thresholds = max_thresholds
        self.categorical_features = categorical_features
        self.categorical_splits = categorical_splits
        self.cache_limit = cache_limit
        self.techniques = techniques
        self.search = search
        self.objective = objective
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ solving
    def _binarize(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, columns: list[Column],
                  keep_ranks: bool = False) -> None:
        self.binarizer_ = Binarizer(self.thresholds, self.max_thresholds,
                                    self.categorical_splits).fit(
            X, y, columns, w, keep_ranks=keep_ranks, deadline=self._deadline)
        self.n_binary_features_ = self.binarizer_.n_features_out

    def _prepare(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, columns: list[Column],
                 split_cost: float = 0.0) -> DPSolver | OrderedSolver:
        """The search the planner picks over the binarised data (see ``plan_``): the
        threshold-aware one (charging ``split_cost`` per split, in weight) or the
        binary-feature one (MurTree)."""
        solvers = self._prepare_all(X, y, w, columns, split_cost, race=False)
        return solvers[self.plan_.search]

    def _prepare_all(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, columns: list[Column],
                     split_cost: float, race: bool) -> dict[str, DPSolver | OrderedSolver]:
        """The planned search's solver by name, and the other's too where the plan races them
        (``race`` allows a race)."""
        self.search_ = self.plan_ = None
        self._binarize(X, y, w, columns, keep_ranks=self.search != "binary")
        try:
            plan, features = self._plan(X, w)
            wanted = {plan.search} | ({"binary", "ordered"} if race and plan.race else set())
            if "ordered" in wanted and features is None:
                features = ordered_features(self.binarizer_, X, self._deadline)
        finally:
            self.binarizer_.ranks.clear()  # rows x columns: not kept in the fitted model
        solvers: dict[str, DPSolver | OrderedSolver] = {}
        if "ordered" in wanted and features is not None:
            solvers["ordered"] = self._ordered_solver(features, y, w, X, split_cost)
        if "binary" in wanted or "ordered" not in solvers:
            solvers["binary"] = self._binary_solver(X, y, w)
        if "ordered" in solvers:
            plan = replace(plan, n_ordered=features.n_features)  # the exact count
        elif plan.search == "ordered":  # (no ordered feature at all: binary it is)
            plan = Plan("binary", "no ordered features", n_binary=plan.n_binary)
        self._announce(plan)
        return solvers

    def _plan(self, X: np.ndarray, w: np.ndarray) -> tuple[Plan, OrderedFeatures | None]:
        """The planner's choice (:mod:`exactree.core.planner`) for this fit, and the ordered
        features where counting them exactly built them. The count starts from a cheap upper
        bound on the splits per ordered feature (only nested neighbours merge); the model
        grows with that number, so a binary choice at the bound stands, and otherwise the
        features are built and counted exactly."""
        if self.objective is not None and self.search == "binary":
            raise ValueError("an objective runs the ordered search: search='binary' does not "
                             "apply")
        m = self.n_binary_features_
        fits = self.search != "auto" or self._binary_fits(X, w)
        budgets = (1 << min(self.max_depth, 16)) - 1 if self.cost_complexity > 0 else 1

        def plan(n_ordered: int) -> Plan:
            return plan_search(ProblemShape(len(X), m, n_ordered, len(self.classes_),
                                            self.max_depth, self.objective is not None, fits,
                                            budgets), self.search)

        if self.search != "auto" or m == 0:
            return plan(max(m, 1)), None
        bound = mean_splits_bound(self.binarizer_, X, self._deadline)
        first = plan(max(int(round(m / max(bound, 1.0))), 1))
        if first.search == "binary" and not first.race:
            return replace(first, reason="at most " + first.reason), None
        features = ordered_features(self.binarizer_, X, self._deadline)
        if features is None:
            return Plan("binary", "no ordered features", n_binary=m), None
        return plan(features.n_features), features

    def _check_binary_size(self, X: np.ndarray, w: np.ndarray) -> None:
        """Refuse (MemoryLimitError) a binary search whose set-up would not fit in the fit's
        budget: ``memory_limit`` (which bounds the fit's memory beyond the input) or half the
        memory available, less the binarizer."""
        from .base import memory_limit_bytes

        budget = memory_limit_bytes(self.memory_limit) - self.binarizer_.nbytes
        weighted = len(w) > 0 and not bool((w == w[0]).all())
        check_problem_size(len(X), self.n_binary_features_, len(self.classes_), max(budget, 0.0),
                           weighted=weighted, max_depth=self.max_depth,
                           estimator=type(self).__name__)

    def _binary_fits(self, X: np.ndarray, w: np.ndarray) -> bool:
        """Whether the binary search's data fits in this fit's memory budget."""
        try:
            self._check_binary_size(X, w)
        except MemoryError:
            return False
        return True

    def _ordered_solver(self, features: OrderedFeatures, y: np.ndarray, w: np.ndarray,
                        X: np.ndarray, split_cost: float) -> OrderedSolver:
        if self.objective is not None:
            self.objective.check(len(self.classes_), float(w.sum()))
        return OrderedSolver(features, y, len(self.classes_), sample_weight=w,
                             max_depth=self.max_depth, min_samples_leaf=self.min_samples_leaf,
                             memory_limit=self._memory_bytes(X, self.binarizer_, features),
                             techniques=self._techniques(ORDERED_TECHNIQUES),
                             split_cost=split_cost, leaf_cost=self.objective)

    def _binary_solver(self, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> DPSolver:
        # Refused before the boolean matrix is built; the matrix is built in blocks (a
        # deadline, infinite without time_limit), never through a float copy of the rows x
        # binary features.
        self._check_binary_size(X, w)
        deadline = math.inf if self._deadline is None else self._deadline
        return DPSolver(self.binarizer_.transform(X, deadline=deadline), y,
                        len(self.classes_), sample_weight=w, max_depth=self.max_depth,
                        min_samples_leaf=self.min_samples_leaf, cache_limit=self.cache_limit,
                        memory_limit=self._memory_bytes(X, self.binarizer_),
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

    def _run(self, solver: DPSolver | OrderedSolver, **solve_args: Any) -> DPSolution | None:
        """``solver.solve(**solve_args)`` with this fit's progress, over ``n_jobs`` workers
        where that can pay (see :func:`~exactree.solvers.dp.parallel.solve_dp`)."""
        n_jobs = 1 if self.objective is not None else self.n_jobs  # the compiled cost stays here
        if getattr(self, "_fit_workers", None) == 1:
            n_jobs = 1  # this fit read n_jobs as one worker already (joblib's config unchanged)
        sol, self.parallel_ = solve_dp(solver, n_jobs, progress=self._progress, **solve_args)
        return sol

    def _tree(self, solution: DPSolution) -> Tree:
        labels = None if self.objective is None else lambda v: self.objective.leaf_costs(v)[1]
        return to_tree(solution.tree, self.binarizer_, self.encoder_.columns_, len(self.classes_),
                       labels=labels)

    def _status(self, proven: bool, limit: str | None = None) -> str:
        return solution_status(proven, limit, self.binarizer_.exact_)

    def _result(self, sol: DPSolution) -> SolveResult:
        return SolveResult(self._tree(sol), sol.cost, sol.lower_bound,
                           self._status(sol.optimal, sol.limit), stats=sol.stats)

    def _leaf_result(self, y: np.ndarray, w: np.ndarray, columns: list[Column]) -> SolveResult:
        """The majority leaf (``time_limit`` ran out before any search), its objective
        penalised as the fit's (a leaf has no split to pay for)."""
        self.search_ = None
        result = super()._leaf_result(y, w, columns)
        if self.objective is not None:
            cost, label = self.objective.leaf_costs(result.tree.value[0])
            result.tree.label[:] = label[0]
            result.objective = result.upper_bound = float(cost[0])
        if self.cost_complexity > 0:
            result.objective = result.upper_bound = result.objective / float(w.sum())
        return result

    def _solve(self, X, y, sample_weight, columns) -> SolveResult:
        total = float(sample_weight.sum())
        # A race only where the fit runs in this process (parallel workers would each race)
        # and a time limit leaves room for it (building the second search costs time too).
        left = self._time_left()
        plain = (self.cost_complexity == 0 and self.max_nodes is None
                 and dp_parallel.n_workers(self.n_jobs) == 1
                 and (left is None or left > RACE_ROOM * RACE_SECONDS))
        solvers = self._prepare_all(X, y, sample_weight, columns, self.cost_complexity * total,
                                    race=plain)
        if len(solvers) == 2:
            won = self._race(solvers)
            if won is not None:
                return won
        solver = solvers[self.plan_.search]
        if isinstance(solver, OrderedSolver):
            result = self._result(self._run(solver, max_nodes=self.max_nodes,
                                            time_limit=self._search_time()))
            if self.cost_complexity > 0:  # one search of the penalised objective, normalised
                result.objective /= total
                result.lower_bound /= total
                result.upper_bound = result.objective
            return result
        if self.cost_complexity == 0:
            return self._result(self._run(solver, max_nodes=self.max_nodes,
                                          time_limit=self._search_time()))
        return self._solve_penalised(solver, float(sample_weight.sum()))

    def _race(self, solvers: dict[str, DPSolver | OrderedSolver]) -> SolveResult | None:
        """Where the planner is unsure: the predicted search, then the other, each for
        :data:`~exactree.core.planner.RACE_SECONDS` (a twentieth of the time left at most);
        the result of the first to finish, or None (the predicted search then runs on)."""
        first = self.plan_.search
        for name in (first, "ordered" if first == "binary" else "binary"):
            left = self._search_time()
            probe = RACE_SECONDS if left is None else min(RACE_SECONDS, left / 20)
            sol = self._run(solvers[name], time_limit=probe)
            if sol is not None and sol.optimal:
                if name != first:
                    self.plan_ = replace(self.plan_, search=name, reason=self.plan_.reason
                                         + f"; {name} finished first in the race")
                self.search_ = name
                return self._result(sol)
        return None

    def _budgets(self, solver: DPSolver) -> int:
        """The largest node budget of a path or penalised fit."""
        return solver.max_budget if self.max_nodes is None else min(self.max_nodes,
                                                                    solver.max_budget)

    def _solve_penalised(self, solver: DPSolver, total: float) -> SolveResult:
        """Min ``cost / total + alpha * splits`` over trees of every node budget from one shared
        cache (section 4.9.3): growing budgets ``b``, each searched only for trees that would
        beat the best objective (cost below ``(best - alpha * b) * total``, and below the
        cheapest tree already found with at most ``b`` splits), until ``alpha * b`` reaches the
        best objective.

        Under ``time_limit`` every budget gets an equal share of the time left (a quick one
        hands the rest on), a budget cut short does not end the path, and time left over at
        the end goes back to the budgets not yet settled, smallest first, round after round.

        The lower bound. Let ``c_b`` be the least cost of a tree with at most ``b`` splits
        (non-increasing in ``b``). A tree with ``s`` splits has objective at least
        ``c_s / total + alpha * s``, so the optimum is the least of those. A search of budget
        ``b`` with ``upper_bound=u`` looks only at trees cheaper than ``u`` and proves:

        * an optimal answer (cost below ``u``): ``c_b`` is its cost;
        * None: no tree with at most ``b`` splits costs less than ``u``: ``c_b >= u``;
        * an answer cut short with bound ``lb`` (which bounds the trees cheaper than ``u``):
          ``c_b >= min(lb, u)``, since either ``c_b < u`` and then ``c_b >= lb``, or not.

        Since ``c_s >= c_b`` for ``b >= s``, ``L_s``, the largest of those bounds over budgets
        ``b >= s`` (0 where none was searched), bounds ``c_s``; ``min_s (L_s / total + alpha *
        s)``, capped at the best objective, is a proven lower bound on the optimum. A budget
        needs no search once ``u <= 0``: then ``alpha * s`` reached the best objective, or a
        tree of cost 0 with at most ``s`` splits is known; either way its term is at least
        the best objective.
        """
        alpha = self.cost_complexity
        max_budget = self._budgets(solver)
        splits = np.arange(max_budget + 1)
        bound = np.zeros(max_budget + 1)  # proven lower bounds on c_b (see above)
        cheapest = np.full(max_budget + 1, np.inf)  # least cost found with at most b splits
        cut: dict[int, str] = {}  # budgets whose last search was cut short: why
        best, best_obj = None, np.inf
        solver.track_best = False  # the kernel's costs are not this objective
        tolerance = 2 * solver.tolerance / total  # objectives this close are equal

        def ceiling(b: int) -> float:
            """The upper bound for budget b: only trees that beat the best objective. Costs
            that are multiples of a common weight (``solver.unit``) are sought below the next
            such multiple, the same trees: the kernel, which ranks a tree by its cost plus a
            fraction of a unit per split, then keeps every tree cheaper than the bound."""
            u = min(cheapest[b], (best_obj - alpha * b) * total)
            if solver.unit and 0 < u < np.inf:
                u = math.ceil(u / solver.scale) * solver.scale
            return u

        def search(b: int, share: float | None) -> None:
            nonlocal best, best_obj
            u = ceiling(b)
            sol = self._run(solver, max_nodes=b, upper_bound=u, time_limit=share)
            # Fractional weights: the kernel may pass over trees within its tolerance of u.
            u = u if solver.unit else u - solver.tolerance
            if sol is None:
                bound[b] = max(bound[b], u)
                cut.pop(b, None)
                return
            if sol.optimal:
                bound[b] = max(bound[b], min(sol.cost, u))
                cut.pop(b, None)
            else:
                bound[b] = max(bound[b], min(sol.lower_bound, u))
                cut[b] = sol.limit or TIME_LIMIT
            cheapest[sol.tree.n_splits:] = np.minimum(cheapest[sol.tree.n_splits:], sol.cost)
            obj = sol.cost / total + alpha * sol.tree.n_splits
            if obj < best_obj:
                best, best_obj = sol, obj
                self._progress.update(best=best_obj)

        def terms() -> np.ndarray:
            floor = np.maximum.accumulate(bound[::-1])[::-1]  # L_s: the bounds of b >= s
            return floor / total + alpha * splits

        for b in range(max_budget + 1):  # first round: every budget in turn
            if alpha * b >= best_obj or self._progress.interrupted:
                break
            if ceiling(b) <= 0:
                continue
            last = max_budget if best_obj == np.inf else min(
                max_budget, math.ceil(best_obj / alpha) - 1)  # the last budget worth a search
            try:
                share = self._share(last - b + 1)
            except TimeLimitReached:
                if best is None:
                    raise  # nothing searched yet: the fit is a leaf
                break
            search(b, share)
        while not self._progress.interrupted:  # time left: the budgets not settled, again
            todo = [b for b in np.flatnonzero(terms() < best_obj - tolerance).tolist()
                    if cut.get(b) != MEMORY_LIMIT and ceiling(b) > 0]
            before = (bound.copy(), best_obj)
            for i, b in enumerate(todo):
                if terms()[b] >= best_obj - tolerance or ceiling(b) <= 0:
                    continue  # settled by a larger budget's bound or a better tree
                try:
                    share = self._share(len(todo) - i)
                except TimeLimitReached:
                    break
                search(b, share)
                if self._progress.interrupted:
                    break
            if not todo or (np.array_equal(before[0], bound) and before[1] == best_obj):
                break  # settled, out of time, or no progress
        if best is None:  # Ctrl-C before the first search
            raise TimeLimitReached
        if (terms() < best_obj - tolerance).any():
            # Rows identical in every feature share a leaf, whatever the budget.
            bound[:] = np.maximum(bound, solver.equivalent_points_bound())
        lower = min(best_obj, float(terms().min()))
        proven = best_obj - lower <= tolerance
        unsettled = terms() < best_obj - tolerance
        if proven:
            status, lower = self._status(True), best_obj
        elif any(cut.get(b) == MEMORY_LIMIT for b in np.flatnonzero(unsettled).tolist()):
            status = MEMORY_LIMIT
        else:
            status = TIME_LIMIT
        return SolveResult(self._tree(best), best_obj, lower, status,
                           stats=dict(best.stats, cache_entries=solver.cache.n_entries))

    def fit_path(self, X: Any, y: Any, sample_weight: Any = None) -> list[PathPoint]:
        """Fit the optimal tree of every node budget ``0..max_nodes``, one search each (the
        binary search shares one cache across them).

        The estimator ends fitted with the largest budget's tree; the path is returned and kept
        in ``path_``. ``cost_complexity`` does not apply here. ``time_limit`` covers the whole
        path: each budget gets a share of the time left; one cut short is kept with
        ``optimal=False`` and its proven ``lower_bound``, and the path goes on (budgets the
        time did not reach are left out of it).
        """
        self._fit(X, y, sample_weight, self._solve_path)
        return self.path_

    def _solve_path(self, X, y, sample_weight, columns) -> SolveResult:
        try:
            solver = self._prepare(X, y, sample_weight, columns)
        except TimeLimitReached:  # the majority leaf: optimal for budget 0, the only one
            result = TreeClassifierBase._leaf_result(self, y, sample_weight, columns)
            self.path_ = [PathPoint(0, 0, result.objective, result.tree, True,
                                    result.objective)]
            return result
        solver.track_best = False  # one budget after another: no single best to report
        self.path_, result = solve_path(
            lambda b, ub, seconds: self._run(solver, max_nodes=b, upper_bound=ub,
                                             time_limit=seconds),
            self._budgets(solver), self._share, lambda: self._progress.interrupted, self._tree,
            solver.tolerance, solver.equivalent_points_bound, self._status(True))
        return result
