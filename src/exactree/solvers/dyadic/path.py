"""The complete regularisation path (Hush & Porter, section 4).

Every distinct solution value ``(error, leaves)`` reachable by minimising ``error + lam*leaves``
(ties to the larger tree, Definition 2) is a vertex of the lower convex hull of the achievable
(leaves, error) pairs; Lemma 3 gives the penalty interval of each. Three searches find them:

``"hull"`` (default, exact)
    Start from the single leaf (any penalty above the root error) and the ``lam -> 0+`` limit
    (lexicographic minimum of (error, leaves)). Between two known solutions ``a, b`` solve at the
    penalty where their risks are equal; ties go to the larger tree, so the answer is ``b`` exactly
    when no solution lies between them, otherwise a new vertex that splits the pair. About two
    searches per solution; works for any real weights. (Our addition; not in the paper.)
``"adaptive"`` (the paper's adaptive grid, exact)
    Walk down the list of ratios ``delta_e / delta_l`` (``delta_e`` a multiple of the error unit
    up to the current error, ``delta_l <= l_bound - leaves``), recomputing it from every new
    solution. Needs errors on an integer grid (integer weights and losses).
``"adaptive_heuristic"`` (the paper's adaptive + heuristic search)
    Next penalty = the largest local break-point below the current one seen during the last
    search, else the adaptive list. Like the paper's, it can skip solutions: it missed at
    least one in 19 of 200 random problems (``benchmarks/bench_dyadic.py --heuristic``). So
    its path is *certified* by default: every adjacent pair of its solutions (plus the
    ``lam -> 0+`` limit) is checked with the ``"hull"`` test, which finds each skipped solution
    (``PathResult.skipped``) at the price of about one more search per solution. Only with
    ``certify=False`` (benchmarks) does the raw heuristic path come back, marked
    ``exact=False``.

The paper's heuristic uses the split ratio ``delta / |T|`` of the non-chosen candidates; we use
the penalty at which a non-chosen candidate (more leaves, less error) would overtake the chosen
subtree at the same rectangle, ``(e_best - e_c) / (l_c - l_best)``, which is the exact local
break-point of that comparison.

Time limit: every search reads the deadline of one shared ``board``
(:func:`exactree.progress.new_board`). The first search it stops ends the path search: the
result then holds the solutions completed so far (``complete=False, exact=False``; their
intervals are those between the solutions found, not proven) and the stopped search's tree
(``PathResult.cut``, the best it found at its penalty).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .search import DyadicProblem, DyadicSolution, solve

SEARCHES = ("hull", "adaptive", "adaptive_heuristic")


@dataclass
class PathResult:
    """Distinct solutions, largest penalty (smallest tree) first, and search counters."""

    solutions: list[DyadicSolution]
    lam_low: list[float]       # internal units; solution i is optimal for lam in (low, high]
    lam_high: list[float]      # math.inf for the first
    evaluations: int           # exact searches run (penalty values visited)
    visited: list[int]         # rectangles visited by each search
    lams: list[float]          # every penalty visited, in order
    complete: bool = True      # False when max_evaluations or the deadline stopped the search
    exact: bool = True         # False for an uncertified heuristic path (may miss solutions)
    skipped: int = 0           # solutions the heuristic missed and the certification found
    cut: DyadicSolution | None = None  # the search the deadline stopped (its best tree)


def _same(a: DyadicSolution, b: DyadicSolution, tol: float) -> bool:
    return a.leaves == b.leaves and abs(a.err - b.err) <= tol


class _Budget(Exception):
    """The evaluation budget of a (benchmark) path search, or its deadline, ran out."""


class _Runner:
    def __init__(self, problem: DyadicProblem, prune: bool, max_evaluations: int | None,
                 board: np.ndarray | None = None, progress: Any = None) -> None:
        self.problem, self.prune, self.max_evaluations = problem, prune, max_evaluations
        self.board, self.progress = board, progress
        self.found: list[DyadicSolution] = []
        self.visited: list[int] = []
        self.lams: list[float] = []
        self.cut: DyadicSolution | None = None

    def __call__(self, lam: float, more_leaves: bool = True) -> DyadicSolution:
        if self.max_evaluations is not None and len(self.lams) >= self.max_evaluations:
            raise _Budget
        # Size the table from the last search (penalties change slowly along a search).
        hint = int(1.25 * self.visited[-1]) + 64 if self.visited else None
        sol = solve(self.problem, lam, prune=self.prune, more_leaves=more_leaves,
                    capacity_hint=hint, board=self.board, progress=self.progress)
        if not sol.complete:  # the deadline (or Ctrl-C): the path ends here
            self.cut = sol
            self.visited.append(sol.visited)
            self.lams.append(lam)
            raise _Budget
        if not any(_same(sol, f, self.problem.tol) for f in self.found):
            self.found.append(sol)
        self.visited.append(sol.visited)
        self.lams.append(lam)
        return sol


def _root_error(problem: DyadicProblem) -> float:
    return float(problem.W.sum(axis=0).min())


def error_unit(problem: DyadicProblem) -> float | None:
    """The grid errors live on (1 for integer weights and losses), or None when there is none."""
    W = problem.W
    if np.allclose(W, np.round(W), rtol=0, atol=1e-9):
        return 1.0
    return None


def _fill(problem: DyadicProblem, run: _Runner, known: list[DyadicSolution]) -> int:
    """Complete ``known`` (hull vertices, smallest tree first, from the single leaf to the
    ``lam -> 0+`` limit) in place: between two adjacent solutions ``a, b`` solve at the penalty
    where their risks are equal; ties go to the larger tree, so the answer is ``b`` exactly when
    no solution lies between them. Returns the number of solutions added."""
    tol = problem.tol
    added = 0
    stack = list(zip(known, known[1:]))
    while stack:
        a, b = stack.pop()
        lam = (a.err - b.err) / (b.leaves - a.leaves)
        t = run(lam)
        if _same(t, b, tol) or _same(t, a, tol) or not a.leaves < t.leaves < b.leaves:
            continue
        known.append(t)
        added += 1
        stack.append((t, b))
        stack.append((a, t))
    known.sort(key=lambda s: s.leaves)
    return added


def _hull(problem: DyadicProblem, run: _Runner) -> list[DyadicSolution]:
    top = run(_root_error(problem) * 2 + 1.0)          # the single leaf
    bottom = run(0.0, more_leaves=False)                # lam -> 0+ limit
    found = [top]
    if not _same(top, bottom, problem.tol):
        found.append(bottom)
        _fill(problem, run, found)
    return found


def _certify(problem: DyadicProblem, run: _Runner,
             sols: list[DyadicSolution]) -> tuple[list[DyadicSolution], int]:
    """The heuristic's solutions plus every one it skipped (see :func:`_fill`)."""
    tol = problem.tol
    found = sorted(sols, key=lambda s: s.leaves)
    bottom = run(0.0, more_leaves=False)
    missing_bottom = not any(_same(bottom, s, tol) for s in found)
    if missing_bottom:
        found.append(bottom)
    return found, _fill(problem, run, found) + int(missing_bottom)


def _next_adaptive(lam_c: float, err_c: float, leaves_c: int, l_bound: int,
                   unit: float) -> float | None:
    """Largest ratio ``a*unit/b < lam_c`` with ``1 <= a <= err_c/unit``, ``1 <= b <= l_bound-leaves_c``."""
    a_cap = int(round(err_c / unit))
    b = np.arange(1, l_bound - leaves_c + 1, dtype=np.float64)
    if a_cap < 1 or len(b) == 0:
        return None
    x = lam_c * b / unit
    a = np.minimum(np.ceil(x) - 1, a_cap)
    a = np.where(a * unit / b >= lam_c * (1 - 1e-12), a - 1, a)  # ratio equal to lam_c
    ok = a >= 1
    if not np.any(ok):
        return None
    r = (a * unit / b)[ok]
    return float(r.max())


def _adaptive(problem: DyadicProblem, run: _Runner, heuristic: bool,
              l_bound: int) -> list[DyadicSolution]:
    unit = error_unit(problem)
    if unit is None:
        raise ValueError("the adaptive searches need errors on an integer grid (integer "
                         "sample weights and losses); use search='hull'")
    tol = problem.tol
    cur = run(_root_error(problem) * 2 + 1.0)
    found = [cur]
    lam_c, last = math.inf, cur
    while True:
        nxt = None
        if heuristic and 0 < last.heuristic < lam_c - tol:
            nxt = last.heuristic
        if nxt is None:
            nxt = _next_adaptive(min(lam_c, _root_error(problem) * 2 + 1.0), cur.err,
                                 cur.leaves, l_bound, unit)
        if nxt is None or nxt <= 0:
            break
        last = run(nxt)
        if not _same(last, cur, tol):
            found.append(last)
            cur = last
        lam_c = nxt
    return found


def compute_path(problem: DyadicProblem, *, search: str = "hull", prune: bool = True,
                 l_bound: int | None = None, max_evaluations: int | None = None,
                 certify: bool = True, board: np.ndarray | None = None,
                 progress: Any = None) -> PathResult:
    """All distinct solution values of ``min error + lam * leaves`` over ``lam > 0``.

    ``max_evaluations`` (for benchmarks) stops after that many exact searches; the result then
    holds the solutions found so far and ``complete=False``. ``certify`` (default) completes
    the ``"adaptive_heuristic"`` path with the solutions it skipped; ``certify=False`` returns
    the raw heuristic path with ``exact=False``. ``board`` and ``progress``: see
    :func:`~.search.solve` and the module docstring (a deadline ends the path search).
    """
    if search not in SEARCHES:
        raise ValueError(f"search must be one of {SEARCHES}, got {search!r}")
    run = _Runner(problem, prune, max_evaluations, board, progress)
    complete = True
    exact = True
    skipped = 0
    try:
        if search == "hull":
            sols = _hull(problem, run)
        else:
            if l_bound is None:
                from .search import greedy_leaf_bound
                l_bound = greedy_leaf_bound(problem)
            sols = _adaptive(problem, run, search == "adaptive_heuristic", l_bound)
            if search == "adaptive_heuristic":
                if certify:
                    sols, skipped = _certify(problem, run, sols)
                else:
                    exact = False
    except _Budget:
        complete = False
        exact = False
        sols = sorted({(s.leaves, round(s.err, 9)): s for s in run.found}.values(),
                      key=lambda s: s.leaves)
    # Lemma 3 intervals: (e_i - e_{i+1}) / (l_{i+1} - l_i) < lam <= (e_{i-1} - e_i) / (l_i - l_{i-1})
    high = [math.inf] + [(a.err - b.err) / (b.leaves - a.leaves) for a, b in zip(sols, sols[1:])]
    low = high[1:] + [0.0]
    return PathResult(solutions=sols, lam_low=low, lam_high=high, evaluations=len(run.lams),
                      visited=run.visited, lams=run.lams, complete=complete, exact=exact,
                      skipped=skipped, cut=run.cut)


def original_list_size(err_units: int, l_bound: int) -> int:
    """Size of the paper's 'original lambda-list': distinct ratios a/b, 1<=a<=A, 1<=b<=B.

    Counted with the Moebius function: sum_d mu(d) * floor(A/d) * floor(B/d).
    """
    A, B = int(err_units), int(l_bound)
    m = min(A, B)
    if m < 1:
        return 0
    mu = np.ones(m + 1, np.int64)
    is_comp = np.zeros(m + 1, bool)
    for p in range(2, m + 1):
        if not is_comp[p]:
            is_comp[2 * p::p] = True
            mu[p::p] *= -1
            mu[p * p::p * p] = 0
    d = np.arange(1, m + 1)
    return int(np.sum(mu[1:] * (A // d) * (B // d)))
