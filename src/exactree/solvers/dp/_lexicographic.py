"""Size-minimal optima: the DP kernels minimise ``cost + penalty * splits``.

MurTree ranks trees by (cost, number of splits): among the optimal trees it returns one with the
fewest splits (except perfect trees of depth 4 or more, see PERFECT_IS_FINAL_DEPTH). A kernel gets the same order from a scalar objective by charging every split a
``penalty`` smaller than the least cost difference that counts (``resolution``) divided by the
largest number of splits, so the penalties of a whole tree never outweigh a real cost difference.
With unit weights costs are integers (resolution 1, penalty ``2**-depth``: exact in floating
point); otherwise the resolution is the tolerance within which costs count as equal.
"""

from __future__ import annotations

import math

from numba import njit

# From this depth on a tree without errors ends a search: looking for the smallest perfect tree
# of depth 4 or more is a far harder search than the one that found it (ionosphere at depth 5:
# 0.3 s to a perfect tree, over a minute without finding the fewest splits). Shallower trees
# stay size-minimal; the technique "perfect_is_final" (both searches) switches the exception off.
PERFECT_IS_FINAL_DEPTH = 4


def split_penalty(resolution: float, max_depth: int) -> float:
    """Penalty per split for trees of depth ``max_depth`` (at most ``2**max_depth - 1`` splits)
    whose costs differ by ``resolution`` or more when they differ."""
    return float(resolution) / 2.0 ** max_depth


def cost_lower_bound(bound: float, penalty: float, max_depth: int, integral: bool) -> float:
    """A lower bound on the optimal *cost* from a lower bound ``bound`` on the penalised
    objective; ``integral``: costs are integers."""
    lb = bound - penalty * ((1 << max_depth) - 1)
    if integral:
        lb = math.ceil(lb - 1e-9)
    return max(lb, 0.0)


def ranking(solver, cost: float, n_splits: int) -> float:
    """A tree's penalised objective in objective units: what a DP solver's kernel minimises
    (``solver``: a DPSolver or OrderedSolver, with ``penalty`` in kernel units)."""
    return cost + solver.penalty * solver.cost_scale * n_splits


def solver_cost_bound(solver, value: float) -> float:
    """A lower bound on the optimal cost from ``value`` (objective units), a lower bound on the
    penalised objective that ``solver``'s kernel proved."""
    if not math.isfinite(value):
        return value
    return solver.cost_scale * cost_lower_bound(value / solver.cost_scale, solver.penalty,
                                                solver.max_depth, solver.integral)


@njit(cache=True)
def perfect_is_final(value: float, penalty: float, depth: int) -> bool:
    """A kernel objective ``value`` of a tree of depth ``depth`` that ends the search: no
    errors (only penalties: below ``penalty * 2**depth``) at a depth from PERFECT_IS_FINAL_DEPTH."""
    return depth >= PERFECT_IS_FINAL_DEPTH and value < penalty * (1 << depth)
