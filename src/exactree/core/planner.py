"""Which search a fit runs, and why: one decision from a cost model of the problem's shape.

``OptimalTreeClassifier`` has two exact searches over the same trees:

* ``"binary"`` (MurTree): every threshold and category test is a 0/1 feature; a depth-two
  subtree is read off pair counts popcounted over bitsets of 64 rows a word, so its cost grows
  with the *square* of the binary features, ``m² · rows / 64`` per class;
* ``"ordered"`` (ConTree-style sweeps): each numeric column is one ordered feature, a depth-two
  subtree is one sweep per root threshold it cannot prune, about ``F · rows`` per evaluated
  split of ``F`` features.

With ``s = m / F`` splits per ordered feature, the ratio of the two grows like a power of ``s``
(the binary search pays each threshold as a feature, the ordered search prunes thresholds by
their neighbours' bounds), shifted by the rows (popcounts are 64 rows a word), the classes and
the depth (each level multiplies the roots both try). :func:`predicted_log_ratio` is that
model, ``log(binary seconds / ordered seconds)`` linear in :func:`model_features`; its
constants :data:`MODEL` are fitted by ``benchmarks/bench_planner.py --fit`` on what that script
times (``benchmarks/results/planner.csv``: a grid of generated problems and every shared
benchmark set, both searches forced): the constants that lose the least time over those
problems, choosing as the planner does (races included), the best-calibrated among equals.
Measured, the choice hinges on the splits per feature: 0/1 data (one split each) always goes
to the binary search, raw numeric columns (hundreds) to the ordered one, and in between the
crossover moves from about 17 splits per feature on 150 rows to 26 on 1,000 and 70 on 100,000
(popcounts pay more on more rows).

Where the prediction is within :data:`RACE_BAND` of even, the estimator races both searches
for a short bounded time (:data:`RACE_SECONDS`) and keeps one that finished; past that it runs
the predicted one. A search that cannot fit in memory is never chosen. Squared error has one
search (``"ordered"``), and so do objectives written by the user.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["MODEL", "Plan", "ProblemShape", "RACE_BAND", "model_features", "plan_search",
           "predicted_log_ratio"]

#: Coefficients of ``log(binary seconds / ordered seconds)`` on :func:`model_features`.
MODEL = (-2.5, 1.4, 0.0, 0.0, -0.3, 0.0)
#: A prediction within this factor of even is unsure: race both searches first.
RACE_BAND = 2.0
#: Seconds each search gets in a race (at most a twentieth of a fit's time limit): enough for
#: the small fits where Python around the kernels makes the model least sure.
RACE_SECONDS = 0.005
#: A fit races only with at least this many race budgets of its time limit left.
RACE_ROOM = 100


@dataclass(frozen=True)
class ProblemShape:
    """What the planner reads of a fit: rows, binary features of the binary search
    (``n_binary``), ordered features of the threshold-aware one (``n_ordered``: each numeric
    column one, nested 0/1 columns merged, each category test one), classes (0: regression),
    ``max_depth``, whether the objective is the user's, whether the binary search's data fits
    in the memory budget, and how many node budgets the binary search solves one after another
    (``cost_complexity``: up to ``2**max_depth - 1``; the ordered search prices splits in one
    search instead)."""

    n_rows: int
    n_binary: int
    n_ordered: int
    n_classes: int
    max_depth: int
    user_objective: bool = False
    binary_fits: bool = True
    binary_budgets: int = 1

    @property
    def mean_splits(self) -> float:
        return self.n_binary / max(self.n_ordered, 1)


@dataclass(frozen=True)
class Plan:
    """The planner's answer: the search, why, and whether to race both first (``race``; the
    search named is then the one run past the race). ``log_ratio``: the model's
    ``log(binary / ordered)`` time (nan where only one search applies)."""

    search: str
    reason: str
    race: bool = False
    log_ratio: float = math.nan
    n_binary: int = 0
    n_ordered: int = 0


def model_features(n_rows: float, n_binary: float, n_ordered: float, n_classes: float,
                   max_depth: float) -> list[float]:
    """The model's inputs: 1, log splits per feature, the same times the levels above depth
    two (at most two: the measurements reach depth 4), log classes, log rows, log ordered
    features."""
    splits = math.log(max(n_binary / max(n_ordered, 1), 1.0))
    return [1.0, splits, splits * min(max(max_depth - 2, 0), 2), math.log(max(n_classes, 2)),
            math.log(max(n_rows, 1)), math.log(max(n_ordered, 1))]


def predicted_log_ratio(shape: ProblemShape) -> float:
    """The model's ``log(binary seconds / ordered seconds)`` for ``shape``."""
    x = model_features(shape.n_rows, shape.n_binary, shape.n_ordered, shape.n_classes,
                       shape.max_depth)
    # (Each budget a search of its own, sharing a cache: counted as a full search each, a
    # modelled term rather than a fitted one.)
    return float(sum(c * v for c, v in zip(MODEL, x))) + math.log(max(shape.binary_budgets, 1))


def plan_search(shape: ProblemShape, requested: str = "auto") -> Plan:
    """The search for ``shape``: ``requested`` when it is not ``"auto"``, else the model's."""
    counts = {"n_binary": shape.n_binary, "n_ordered": shape.n_ordered}
    if requested != "auto":
        return Plan(requested, f"search={requested!r} was asked for", **counts)
    if shape.n_classes == 0:
        return Plan("ordered", "squared error has the ordered search only", **counts)
    if shape.user_objective:
        return Plan("ordered", "a user's objective runs in the ordered search", **counts)
    if shape.n_binary == 0 or shape.max_depth == 0:
        return Plan("binary", "nothing to split on", **counts)
    if not shape.binary_fits:
        return Plan("ordered", f"{shape.n_rows} rows x {shape.n_binary} binary features do "
                    "not fit in memory for the binary search", **counts)
    r = predicted_log_ratio(shape)
    search = "binary" if r < 0 else "ordered"
    factor = math.exp(abs(r))
    why = (f"{shape.mean_splits:.1f} splits per feature over {shape.n_ordered} features, "
           f"{shape.n_rows} rows: {search} predicted {factor:.1f}x faster")
    race = factor < RACE_BAND
    if race:
        why += " (unsure: both raced first)"
    return Plan(search, why, race, r, **counts)
