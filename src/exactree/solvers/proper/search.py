"""``sodt`` and ``odt`` (He & Little, eqs. 12 and 17) with fused prefix-closed constraints.

``odt`` examines every combination of ``k`` candidate rules for ``k = 1 .. n_splits`` (and the
single leaf), solves ``sodt`` on each in a Numba kernel, and keeps the best tree: the result is the
optimal proper tree with *at most* ``n_splits`` rules of the given family. With a time limit the
search is anytime: it returns the best tree over the combinations examined so far, status
``"time_limit"`` and the objective's lower bound (0 for misclassification).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...objectives import get_objective
from ...tree import Tree, TreeBuilder
from ..result import OPTIMAL, OPTIMAL_ON_RULES, TIME_LIMIT, SolveResult
from . import _kernels as kern
from .rules import AXIS, RuleSet, ancestry_matrix, make_rules, monomials, pack_bits

_CHUNK_SECONDS = 0.2


@dataclass
class PointData:
    """Distinct points with their class weights and sample counts, packed for the kernels."""

    X: np.ndarray  # (U, D) distinct rows
    inverse: np.ndarray  # (n,) row of X each sample maps to
    weights: np.ndarray  # (U, C) class weights per point
    counts: np.ndarray  # (U,) number of samples per point
    full: np.ndarray = field(init=False)
    class_planes: np.ndarray = field(init=False)
    count_planes: np.ndarray = field(init=False)
    use_planes: bool = field(init=False)

    def __post_init__(self) -> None:
        u = len(self.X)
        self.full = pack_bits(np.ones(u, bool))[0]
        w = self.weights
        self.use_planes = bool(np.all(w == np.round(w)) and w.max(initial=0) < 2.0 ** 52)
        self.class_planes = _bit_planes(w.T if self.use_planes else np.zeros((w.shape[1], u)))
        self.count_planes = _bit_planes(self.counts[None, :].astype(np.float64))[0]


def _bit_planes(values: np.ndarray) -> np.ndarray:
    """``(R, u)`` non-negative integers to ``(R, B, W)`` uint64 bit planes."""
    vals = np.round(values).astype(np.int64)
    n_bits = max(1, int(vals.max(initial=0)).bit_length())
    planes = [pack_bits(((vals >> b) & 1).astype(bool)) for b in range(n_bits)]
    return np.ascontiguousarray(np.stack(planes, axis=1))


def point_data(X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray, n_classes: int) -> PointData:
    """Merge identical rows (no rule can separate them) into weighted points; drop zero weights."""
    X = np.asarray(X, np.float64)
    keep = sample_weight > 0
    Xu, inverse = np.unique(X[keep], axis=0, return_inverse=True)
    inverse = inverse.ravel()
    weights = np.zeros((len(Xu), n_classes))
    np.add.at(weights, (inverse, y[keep]), sample_weight[keep])
    counts = np.bincount(inverse, minlength=len(Xu))
    full_inverse = np.full(len(X), -1, np.int64)
    full_inverse[keep] = inverse
    return PointData(Xu, full_inverse, weights, counts)


@dataclass
class ODTResult:
    """What :func:`odt` found: the rules of the best tree and its DP choices."""

    combo: np.ndarray  # rule indices of the best tree (empty: a single leaf)
    value: float
    status: str
    stats: dict[str, Any]


def _scratch(k: int, n_words: int, n_classes: int) -> dict[str, np.ndarray]:
    n_states = 3 ** k
    return dict(
        Kc=np.zeros((max(k, 1), max(k, 1)), np.int64), pow3=3 ** np.arange(k, dtype=np.int64),
        visited=np.full(n_states, -1, np.int64), rsmask=np.zeros(n_states, np.int64),
        depth=np.zeros(n_states, np.int64), ok=np.zeros(n_states, np.bool_),
        data=np.zeros((n_states, n_words), np.uint64), value=np.zeros(n_states),
        ntrees=np.zeros(n_states, np.int64), choice=np.zeros(n_states, np.int64),
        queue=np.zeros(n_states, np.int64), scratch=np.zeros(n_classes),
    )


def sodt(rules: RuleSet, data: PointData, combo: Sequence[int], *, min_samples_leaf: int = 1,
         max_depth: int | None = None) -> tuple[float, int, dict[str, np.ndarray]]:
    """Optimal proper tree over exactly the rules ``combo`` (eq. 17).

    Returns ``(objective, number of proper trees generated, dp arrays)``; the objective is
    ``inf`` when no proper tree satisfies the constraints.
    """
    combo = np.asarray(combo, np.int64)
    k = len(combo)
    sc = _scratch(k, len(data.full), data.weights.shape[1])
    v, nt, _ = kern.sodt_dp(combo, k, rules.sides, rules.defining, data.full, data.class_planes,
                            data.weights, data.use_planes, data.count_planes, min_samples_leaf,
                            _depth(max_depth), sc["Kc"], sc["pow3"], 0, sc["visited"],
                            sc["rsmask"], sc["depth"], sc["ok"], sc["data"], sc["value"],
                            sc["ntrees"], sc["choice"], sc["queue"], sc["scratch"],
                            np.zeros((len(rules), 2)), np.inf)
    return float(v), int(nt), sc


def _depth(max_depth: int | None) -> int:
    return 2 ** 62 if max_depth is None else int(max_depth)


def leaf_value(data: PointData, mask: np.ndarray | None = None) -> float:
    """Misclassification of one leaf holding the points in ``mask`` (all by default)."""
    w = data.weights if mask is None else data.weights[mask]
    tot = w.sum(axis=0)
    return float(tot.sum() - tot.max())


def odt(rules: RuleSet, data: PointData, n_splits: int, *, min_samples_leaf: int = 1,
        max_depth: int | None = None, time_limit: float | None = None,
        exact_k: bool = False, prune: bool = True) -> ODTResult:
    """Best proper tree with at most ``n_splits`` rules (exactly, when ``exact_k``) over all
    combinations of ``rules`` (eq. 12). See the module docstring for the anytime behaviour.

    ``prune`` skips a combination when a cheap lower bound (the known cost of a root side that
    holds no other rule) cannot beat the best tree so far; it never changes the optimum, only
    the work counters in ``stats``.
    """
    start = time.perf_counter()
    stats = np.zeros(5, np.int64)
    side_cost = np.zeros((len(rules), 2))
    if prune and len(rules):
        kern.side_costs(rules.sides, data.full, data.class_planes, data.weights, data.use_planes,
                        side_cost)
    counts = data.counts.sum()
    best_value = np.array([np.inf])
    best_combo = np.zeros(0, np.int64)
    if not exact_k and counts >= min_samples_leaf:
        best_value[0] = leaf_value(data)
    total = sum(math.comb(len(rules), k) for k in range(1, n_splits + 1))
    status = OPTIMAL
    ks = [n_splits] if exact_k else range(1, n_splits + 1)
    max_d = _depth(max_depth)
    for k in ks:
        if k > len(rules) or (max_depth is not None and k > 2 ** max_depth - 1):
            continue
        comb = np.arange(k, dtype=np.int64)
        found = np.zeros(k, np.int64)
        bv = np.array([best_value[0]])
        if prune and len(best_combo) == k - 1 and k > 1:
            # a good incumbent early makes the bound skip most combinations
            kern.extend_incumbent(best_combo, k, len(rules), rules.sides, rules.defining,
                                  data.full, data.class_planes, data.weights, data.use_planes,
                                  data.count_planes, min_samples_leaf, max_d, bv, found)
            if bv[0] < best_value[0]:
                best_value[0] = bv[0]
                best_combo = found.copy()
        chunk = 256
        while True:
            t0 = time.perf_counter()
            done = kern.odt_chunk(k, comb, len(rules), chunk, rules.sides, rules.defining,
                                  data.full, data.class_planes, data.weights, data.use_planes,
                                  data.count_planes, min_samples_leaf, max_d, bv, found, stats,
                                  side_cost, prune)
            if bv[0] < best_value[0]:
                best_value[0] = bv[0]
                best_combo = found.copy()
            if done:
                break
            if prune and best_value[0] <= 0.0:
                break  # misclassification cannot go below 0: proven optimal already
            if time_limit is not None and time.perf_counter() - start >= time_limit:
                status = TIME_LIMIT
                break
            spent = time.perf_counter() - t0
            chunk = int(min(max(chunk * (_CHUNK_SECONDS / max(spent, 1e-4)), 64), 1 << 24))
        if status == TIME_LIMIT or (prune and best_value[0] <= 0.0):
            break
    return ODTResult(best_combo, float(best_value[0]), status, dict(
        combinations=int(stats[0]), feasible_combinations=int(stats[1]),
        proper_trees=int(stats[2]), dp_states=int(stats[3]), pruned_combinations=int(stats[4]),
        rules=len(rules),
        total_combinations=int(total), seconds=time.perf_counter() - start))


# ---------------------------------------------------------------------------- Tree building
def rule_side(rules: RuleSet, m: int, X: np.ndarray) -> np.ndarray:
    """Positive (left) side of rule ``m`` for rows ``X``, computed as the fitted Tree does."""
    if rules.family[m] == AXIS:
        return X[:, rules.feature[m]] <= rules.threshold[m]
    coef, powers = rules.terms(m)
    return monomials(X, powers) @ coef <= rules.threshold[m]


def build_tree(rules: RuleSet, data: PointData, result: ODTResult, X: np.ndarray, y: np.ndarray,
               sample_weight: np.ndarray, n_classes: int, *, min_samples_leaf: int = 1,
               max_depth: int | None = None) -> Tree:
    """The exactree :class:`Tree` of an :class:`ODTResult`, node weights from ``(X, y)``."""
    objective = get_objective("misclassification")
    builder = TreeBuilder(X.shape[1], n_classes)
    onehot = np.zeros((len(y), n_classes))
    onehot[np.arange(len(y)), y] = sample_weight
    combo = result.combo
    sc = None
    if len(combo):
        _, _, sc = sodt(rules, data, combo, min_samples_leaf=min_samples_leaf, max_depth=max_depth)

    # Explicit stack, two passes: children are created before their parent (TreeBuilder ids).
    root_rows = np.ones(len(y), bool)
    order: list[tuple[int, np.ndarray, int]] = []  # (state code, rows, parent label)
    stack = [(0, root_rows, -1)]
    while stack:
        code, rows, parent_label = stack.pop()
        order.append((code, rows, parent_label))
        if sc is not None and sc["rsmask"][code] != 0:
            i = int(sc["choice"][code])
            side = rule_side(rules, int(combo[i]), X)
            label = _label(objective, onehot[rows].sum(axis=0), parent_label)
            stack.append((code + 2 * 3 ** i, rows & ~side, label))
            stack.append((code + 3 ** i, rows & side, label))
    node_of: dict[int, int] = {}
    for code, rows, parent_label in reversed(order):
        value = onehot[rows].sum(axis=0)
        label = _label(objective, value, parent_label)
        if sc is None or sc["rsmask"][code] == 0:
            node_of[code] = builder.leaf(value, label)
            continue
        i = int(sc["choice"][code])
        m = int(combo[i])
        kids = [node_of[code + 3 ** i], node_of[code + 2 * 3 ** i]]
        if rules.family[m] == AXIS:
            node_of[code] = builder.threshold(int(rules.feature[m]), float(rules.threshold[m]),
                                              kids, value, label)
        else:
            coef, powers = rules.terms(m)
            node_of[code] = builder.linear(coef, powers, float(rules.threshold[m]), kids, value,
                                           label)
    return builder.build(node_of[0])


def _label(objective, value: np.ndarray, parent_label: int) -> int:
    if value.sum() <= 0 and parent_label >= 0:
        return parent_label  # an empty region predicts what its parent predicts
    return int(objective.leaf_costs(value[None, :])[1][0])


def tree_objective(tree: Tree, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> float:
    """Weighted misclassification of ``tree`` on ``(X, y)``."""
    return float(sample_weight[tree.predict(X) != y].sum())


def solve_proper(X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray, n_classes: int, *,
                 n_splits: int, rules: str | tuple[str, ...] = "hyperplane", degree: int = 2,
                 ties: str = "all", max_depth: int | None = None, min_samples_leaf: int = 1,
                 time_limit: float | None = None, max_rules: int | None = None) -> SolveResult:
    """Optimal proper tree with at most ``n_splits`` rules of the family ``rules`` on ``(X, y)``.

    ``time_limit`` covers the whole solve, rule generation included. The status is
    ``"optimal"`` only when the search finished over a rule family that holds every split of its
    kind (``ties="all"`` or axis rules only) and every rule could be stored faithfully in raw
    coordinates (:class:`RuleSet` ``exhaustive`` and ``n_unrepresentable``); otherwise
    ``"optimal_on_rules"`` (optimal over the generated rules only, lower bound 0). A deadline
    gives ``"time_limit"``.
    """
    from .rules import DEFAULT_MAX_RULES

    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    X = np.asarray(X, np.float64)
    data = point_data(X, y, sample_weight, n_classes)
    ruleset = make_rules(data.X, rules, degree=degree, ties=ties,
                         max_rules=DEFAULT_MAX_RULES if max_rules is None else max_rules,
                         deadline=deadline)
    total = sum(math.comb(len(ruleset), k) for k in range(1, n_splits + 1))
    if time_limit is None and total > 10**10:
        warnings.warn(
            f"{total:.3g} rule combinations to examine ({len(ruleset):,} rules, n_splits="
            f"{n_splits}); this may take very long. Set time_limit for an anytime answer, or use "
            "fewer points, fewer splits or a smaller rule family.", UserWarning, stacklevel=3)
    remaining = None if deadline is None else max(deadline - time.perf_counter(), 0.0)
    res = odt(ruleset, data, n_splits, min_samples_leaf=min_samples_leaf, max_depth=max_depth,
              time_limit=remaining)
    if not np.isfinite(res.value):
        raise ValueError(
            f"no tree satisfies min_samples_leaf={min_samples_leaf} on {int(data.counts.sum())} "
            "samples with positive weight")
    tree = build_tree(ruleset, data, res, X, y, sample_weight, n_classes,
                      min_samples_leaf=min_samples_leaf, max_depth=max_depth)
    value = tree_objective(tree, X, y, sample_weight)
    status = res.status
    if not ruleset.complete:
        status = TIME_LIMIT
    elif status == OPTIMAL and (not ruleset.exhaustive or ruleset.n_unrepresentable):
        status = OPTIMAL_ON_RULES  # optimal over the generated rules only
    stats = dict(res.stats, search_objective=res.value, rules_complete=ruleset.complete,
                 rules_exhaustive=ruleset.exhaustive,
                 unrepresentable_rules=ruleset.n_unrepresentable,
                 seconds=time.perf_counter() - start)
    lower = value if status == OPTIMAL else 0.0
    return SolveResult(tree=tree, objective=value, lower_bound=min(lower, value), status=status,
                       stats=stats)


# ---------------------------------------------------------------------------- generic form
def sodt_generic(K: np.ndarray, sides: np.ndarray, rs: Sequence[int], xs: np.ndarray,
                 leaf: Callable[[np.ndarray], float],
                 combine: Callable[[float, float], float] = lambda a, b: a + b,
                 ) -> tuple[float, Any]:
    """Eq. 17 with a general objective of the form of eq. 14, in plain Python (small inputs).

    ``K`` is the ancestry matrix of the rules, ``sides[i]`` the boolean positive side of rule
    ``i`` over all points, ``xs`` a boolean mask of the points reaching this subtree, ``leaf`` the
    leaf cost ``f`` and ``combine`` the ``g`` of eq. 14 (``g(a, b) >= max(a, b)``). Returns
    ``(objective, tree)`` with ``tree`` either ``("leaf", xs)`` or ``("node", i, left, right)``.
    """
    from .rules import splits

    rs = list(rs)
    if not rs:
        return leaf(xs), ("leaf", xs)
    best: tuple[float, Any] = (math.inf, None)
    for plus, i, minus in splits(K, rs):
        lv, lt = sodt_generic(K, sides, plus, xs & sides[i], leaf, combine)
        rv, rt = sodt_generic(K, sides, minus, xs & ~sides[i], leaf, combine)
        v = combine(lv, rv)
        if v < best[0]:
            best = (v, ("node", i, lt, rt))
    return best


def odt_generic(K: np.ndarray, sides: np.ndarray, n_splits: int,
                leaf: Callable[[np.ndarray], float],
                combine: Callable[[float, float], float] = lambda a, b: a + b,
                ) -> tuple[float, tuple[int, ...], Any]:
    """Eq. 12 in plain Python for any objective of the form of eq. 14: the best
    :func:`sodt_generic` tree over every combination of exactly ``n_splits`` rules.

    Returns ``(objective, rule combination, tree)``. Meant for small rule sets and custom
    objectives; the Numba :func:`odt` is the fast path for misclassification.
    """
    import itertools

    everything = np.ones(sides.shape[1], bool)
    best: tuple[float, tuple[int, ...], Any] = (math.inf, (), None)
    for combo in itertools.combinations(range(len(K)), n_splits):
        value, tree = sodt_generic(K, sides, combo, everything, leaf, combine)
        if value < best[0]:
            best = (value, combo, tree)
    return best


__all__ = ["ODTResult", "PointData", "ancestry_matrix", "build_tree", "leaf_value", "odt",
           "odt_generic", "point_data", "sodt", "sodt_generic", "solve_proper", "tree_objective"]
