"""What a solver hands back: the tree and what it proved about it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..tree import Tree

OPTIMAL = "optimal"
TIME_LIMIT = "time_limit"
NODE_LIMIT = "node_limit"
MEMORY_LIMIT = "memory_limit"
# Ctrl-C stopped the search: the best tree so far with the bound proven so far.
INTERRUPTED = "interrupted"
# The search proved optimality over binary features that may not capture every split of the
# raw values (capped or boundary-only thresholds).
OPTIMAL_ON_BINARIZED = "optimal_on_binarized"
# The proper-tree search (He & Little) finished over its generated rule set, but that set does not
# hold every split of the family (``ties="left"``, rules floating point cannot store faithfully,
# fewer distinct points than a rule needs): optimal over those rules only, lower bound 0.
OPTIMAL_ON_RULES = "optimal_on_rules"
STATUSES = (OPTIMAL, TIME_LIMIT, NODE_LIMIT, MEMORY_LIMIT, INTERRUPTED, OPTIMAL_ON_BINARIZED,
            OPTIMAL_ON_RULES)


@dataclass
class SolveResult:
    """A solver's answer.

    ``objective`` is the value of ``tree``; ``lower_bound`` is a proven bound on the optimum
    (equal to ``objective`` when ``status == "optimal"``); ``upper_bound`` is the best value
    found, normally ``objective``. ``stats`` holds solver counters (nodes, cache hits, ...).
    """

    tree: Tree
    objective: float
    lower_bound: float
    status: str
    upper_bound: float | None = None
    stats: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")
        if self.upper_bound is None:
            self.upper_bound = self.objective
        if self.lower_bound > self.objective + 1e-9 * max(1.0, abs(self.objective)):
            raise ValueError("lower bound above the objective: the solver is wrong")

    @property
    def gap(self) -> float:
        """Relative gap ``(upper - lower) / max(|upper|, tiny)``; 0 when proven optimal."""
        ub = self.upper_bound
        if ub - self.lower_bound <= 1e-12 * max(1.0, abs(ub)):
            return 0.0
        return (ub - self.lower_bound) / max(abs(ub), 1e-12) if ub != 0 else math.inf
