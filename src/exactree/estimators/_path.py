"""The node-budget path: the optimal tree of every node budget ``0..b``, one search per budget,
for the estimators whose searches take a node budget (``fit_path``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..data.validation import TimeLimitReached
from ..solvers.dp.solver import DPSolution
from ..solvers.result import MEMORY_LIMIT, TIME_LIMIT, SolveResult
from ..tree import Tree


@dataclass
class PathPoint:
    """One point of the node-budget path: the best tree found with at most ``max_nodes``
    splits; ``optimal`` when proven, else ``lower_bound`` is the proven bound on that budget's
    optimum (a budget cut short by ``time_limit`` or ``memory_limit``)."""

    max_nodes: int
    n_splits: int
    objective: float  # weighted misclassifications, or squared error (a regressor's)
    tree: Tree
    optimal: bool
    lower_bound: float = 0.0


def solve_path(run: Callable[[int, float, float | None], DPSolution | None], max_budget: int,
               share: Callable[[int], float | None], interrupted: Callable[[], bool],
               tree_of: Callable[[DPSolution], Tree], tolerance: float,
               floor: Callable[[], float], proven_status: str
               ) -> tuple[list[PathPoint], SolveResult]:
    """The path over budgets ``0..max_budget`` and the fit's result (the last point's tree).

    ``run(b, upper_bound, seconds)`` solves budget ``b`` for trees cheaper than
    ``upper_bound`` (the previous point's objective: a budget that finds none keeps that
    tree, which has fewer splits and is then optimal here too); ``share(budgets_left)`` gives
    its seconds or raises :class:`TimeLimitReached` when none are left (the path then ends
    there; with no point yet, the exception reaches the caller); ``tree_of`` turns a solution
    into a :class:`Tree`; ``floor()`` bounds every budget's optimum (rows identical in every
    feature share a leaf), the bound when the largest budget was not reached;
    ``proven_status`` is the status of a proven path.
    """
    path: list[PathPoint] = []
    limits: set[str] = set()
    stats: dict = {}
    for b in range(max_budget + 1):
        try:
            seconds = share(max_budget - b + 1)
        except TimeLimitReached:
            if not path:
                raise
            limits.add(TIME_LIMIT)
            break
        ub = path[-1].objective if path else float("inf")
        sol = run(b, ub, seconds)
        if sol is None:
            prev = path[-1]
            point = PathPoint(b, prev.n_splits, prev.objective, prev.tree, True, prev.objective)
        elif sol.optimal or sol.cost < ub:
            point = PathPoint(b, sol.tree.n_splits, sol.cost, tree_of(sol), sol.optimal,
                              sol.cost if sol.optimal else min(sol.lower_bound, ub))
        else:  # cut short without beating the previous point's tree: keep that tree
            prev = path[-1]
            point = PathPoint(b, prev.n_splits, prev.objective, prev.tree, False,
                              min(sol.lower_bound, ub))
        if sol is not None:
            stats = sol.stats
            if not sol.optimal:
                limits.add(sol.limit or TIME_LIMIT)
        path.append(point)
        if interrupted():  # Ctrl-C: the budgets so far
            limits.add(TIME_LIMIT)
            break
    # A budget's optimum is at least any larger budget's.
    for i in range(len(path) - 2, -1, -1):
        point = path[i]
        point.lower_bound = max(point.lower_bound, path[i + 1].lower_bound)
        if not point.optimal and point.objective - point.lower_bound <= tolerance:
            point.optimal, point.lower_bound = True, point.objective
    last = path[-1]
    if len(path) == max_budget + 1:
        proven, lower = last.optimal, last.lower_bound
    else:  # the largest budget was not reached
        proven, lower = False, min(floor(), last.objective)
    status = proven_status if proven else (MEMORY_LIMIT if MEMORY_LIMIT in limits
                                           else TIME_LIMIT)
    return path, SolveResult(last.tree, last.objective, last.objective if proven else lower,
                             status, stats=stats)
