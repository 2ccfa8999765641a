"""``sodt`` and ``odt`` (He & Little, eqs. 12 and 17) with fused prefix-closed constraints.

``odt`` examines every combination of ``k`` candidate rules for ``k = 1 .. n_splits`` (and the
single leaf), solves ``sodt`` on each in a Numba kernel, and keeps the best tree: the result is the
optimal proper tree with *at most* ``n_splits`` rules of the given family. With a time limit the
search is anytime: it returns the best tree over the combinations examined so far, status
``"time_limit"`` and the objective's lower bound (0 for misclassification).

Objectives: misclassification (points carry class weights) or the weighted sum of squared
errors with mean leaves (``point_data(..., squared_error=True)``: points carry ``(W, S, Q)``
statistics and the kernels run with ``sse``; see :mod:`._kernels` for why every bound holds).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...data.validation import TimeLimitReached, check_deadline
from ...limits import check_memory
from ...objectives import SquaredError, get_objective
from ...tree import LEAF, Tree, TreeBuilder
from ..result import OPTIMAL, OPTIMAL_ON_RULES, TIME_LIMIT, SolveResult
from . import _bnb as bnb
from . import _kernels as kern
from .._squared_error import SSE_GRID
from .._workers import n_workers as count_workers
from .rules import (AXIS, RuleSet, ancestry_matrix, make_rules, monomials, pack_bits,
                    unpack_bits)

_CHUNK_SECONDS = 0.2


@dataclass
class PointData:
    """Distinct points with their leaf statistics and sample counts, packed for the kernels.

    Misclassification: ``weights`` holds class weights. Squared error (``sse``): ``weights``
    holds ``(W, S, Q)`` of the targets centred and divided by ``sqrt(unit)``, so that a
    single leaf costs 1 in kernel units and ``unit`` times a kernel cost is a squared error.
    ``point_bound`` is what each point costs in any leaf (the equivalent-points bound: its
    minority class weight, or its own squared error rounded down), in kernel units.
    """

    X: np.ndarray  # (U, D) distinct rows
    inverse: np.ndarray  # (n,) row of X each sample maps to
    weights: np.ndarray  # (U, C) class weights or (U, 3) statistics per point
    counts: np.ndarray  # (U,) number of samples per point
    sse: bool = False
    point_bound: np.ndarray | None = None
    unit: float = 1.0
    full: np.ndarray = field(init=False)
    class_planes: np.ndarray = field(init=False)
    count_planes: np.ndarray = field(init=False)
    use_planes: bool = field(init=False)

    def __post_init__(self) -> None:
        u = len(self.X)
        self.full = pack_bits(np.ones(u, bool))[0]
        w = self.weights
        self.use_planes = bool(not self.sse and np.all(w == np.round(w))
                               and w.max(initial=0) < 2.0 ** 52)
        self.class_planes = _bit_planes(w.T if self.use_planes else np.zeros((w.shape[1], u)))
        self.count_planes = _bit_planes(self.counts[None, :].astype(np.float64))[0]
        if self.point_bound is None:
            self.point_bound = np.ascontiguousarray(w.sum(axis=1) - w.max(axis=1, initial=0))


def _bit_planes(values: np.ndarray) -> np.ndarray:
    """``(R, u)`` non-negative integers to ``(R, B, W)`` uint64 bit planes."""
    vals = np.round(values).astype(np.int64)
    n_bits = max(1, int(vals.max(initial=0)).bit_length())
    planes = [pack_bits(((vals >> b) & 1).astype(bool)) for b in range(n_bits)]
    return np.ascontiguousarray(np.stack(planes, axis=1))


@dataclass
class RowGroups:
    """Equal rows of a matrix (values equal, ``-0.0`` as ``0.0``): ``first[g]`` the first row of
    group ``g``, ``group[r]`` row ``r``'s group, groups in order of first occurrence."""

    first: np.ndarray
    group: np.ndarray

    def __len__(self) -> int:
        return len(self.first)


def row_groups(X: np.ndarray, deadline: float | None = None) -> RowGroups:
    """:class:`RowGroups` of the float matrix ``X`` by hashing (one pass and a sort of the
    hashes: ``np.unique(axis=0)`` took about 6 s on 1,000,000 x 20). Raises
    :class:`~exactree.data.validation.TimeLimitReached` past ``deadline`` (between steps)."""
    from ._generate import first_equal_row, row_hashes

    n = len(X)
    if X.ndim != 2 or X.shape[1] == 0 or n == 0:
        return RowGroups(np.zeros(min(n, 1), np.int64), np.zeros(n, np.int64))
    keys = np.ascontiguousarray(X + 0.0).view(np.int64)  # + 0.0 turns -0.0 into 0.0
    hashes = row_hashes(keys)
    check_deadline(deadline)
    order = np.argsort(hashes, kind="stable")
    check_deadline(deadline)
    rep = first_equal_row(keys, order, hashes)
    first = np.flatnonzero(rep == np.arange(n))
    pos = np.empty(n, np.int64)
    pos[first] = np.arange(len(first))
    return RowGroups(first, pos[rep])


def point_data(X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray, n_classes: int, *,
               squared_error: bool = False, groups: RowGroups | None = None,
               deadline: float | None = None) -> PointData:
    """Merge identical rows (no rule can separate them) into weighted points; drop zero weights.

    ``y`` holds class indices, or real targets with ``squared_error`` (``n_classes`` is then
    ignored). Points are in lexicographic order (as ``np.unique(axis=0)`` gives them).
    ``groups``: :func:`row_groups` of the rows of positive weight, when the caller has them;
    ``deadline``: see :func:`row_groups`."""
    X = np.asarray(X, np.float64)
    keep = sample_weight > 0
    Xk = X[keep]
    if groups is None:
        groups = row_groups(Xk, deadline)
    check_deadline(deadline)
    if len(Xk) == 0 or Xk.ndim != 2 or Xk.shape[1] == 0:
        Xu, inverse = np.unique(Xk, axis=0, return_inverse=True)
        inverse = inverse.ravel()
    else:
        reps = Xk[groups.first] + 0.0
        perm = np.lexsort(reps.T[::-1])  # column 0 first: np.unique's order
        rank = np.empty(len(perm), np.int64)
        rank[perm] = np.arange(len(perm))
        Xu, inverse = reps[perm], rank[groups.group]
    counts = np.bincount(inverse, minlength=len(Xu))
    full_inverse = np.full(len(X), -1, np.int64)
    full_inverse[keep] = inverse
    if squared_error:
        stats, bound, unit = _sse_statistics(np.asarray(y, np.float64)[keep], sample_weight[keep],
                                             inverse, len(Xu))
        return PointData(Xu, full_inverse, stats, counts, sse=True, point_bound=bound, unit=unit)
    weights = np.zeros((len(Xu), n_classes))
    np.add.at(weights, (inverse, y[keep]), sample_weight[keep])
    return PointData(Xu, full_inverse, weights, counts)


def _sse_statistics(y: np.ndarray, w: np.ndarray, inverse: np.ndarray,
                    n_points: int) -> tuple[np.ndarray, np.ndarray, float]:
    """``(stats, point_bound, unit)`` of :class:`PointData` for squared error.

    Targets are centred on their weighted mean and scaled so that one leaf costs 1: ``Q - S**2
    / W`` then cancels little and every cost lies in [0, 1], the range the kernels' rounding
    grid is made for. A point's own squared error (two passes) is rounded down and lowered by
    one grid step, so that a region's bound stays below its rounded kernel cost."""
    mean = float(w @ y) / float(w.sum()) if len(y) else 0.0
    root = float(w @ (y - mean) ** 2)
    unit = root if root > 0 else 1.0
    z = (y - mean) / np.sqrt(unit)
    W = np.bincount(inverse, weights=w, minlength=n_points)
    S = np.bincount(inverse, weights=w * z, minlength=n_points)
    Q = np.bincount(inverse, weights=w * z * z, minlength=n_points)
    own = np.bincount(inverse, weights=w * (z - (S / W)[inverse]) ** 2, minlength=n_points)
    bound = np.maximum(np.floor(own * SSE_GRID) - 1.0, 0.0) / SSE_GRID
    return np.column_stack([W, S, Q]), np.ascontiguousarray(bound), unit


@dataclass
class ODTResult:
    """What :func:`odt` found: the rules of the best tree and its DP choices."""

    combo: np.ndarray  # rule indices of the best tree (empty: a single leaf)
    value: float
    status: str
    stats: dict[str, Any]
    #: the tree itself, ``("leaf",)`` or ``("node", rule, left, right)``; None: rebuild it by
    #: ``sodt`` over ``combo``
    plan: Any = None


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
                            data.weights, data.use_planes, data.sse, data.count_planes,
                            min_samples_leaf,
                            _depth(max_depth), sc["Kc"], sc["pow3"], 0, sc["visited"],
                            sc["rsmask"], sc["depth"], sc["ok"], sc["data"], sc["value"],
                            sc["ntrees"], sc["choice"], sc["queue"], sc["scratch"],
                            np.zeros((len(rules), 2)), np.inf)
    return float(v), int(nt), sc


def _depth(max_depth: int | None) -> int:
    return 2 ** 62 if max_depth is None else int(max_depth)


def leaf_value(data: PointData, mask: np.ndarray | None = None) -> float:
    """Cost of one leaf holding the points in ``mask`` (all by default; a boolean or index
    array), in kernel units. Squared error is computed by the kernels' own leaf cost, so that a
    region's value is bit for bit the one the search found."""
    if data.sse:
        sel = np.ones(len(data.X), bool)
        if mask is not None:
            sel = np.zeros(len(data.X), bool)
            sel[mask] = True
        packed = pack_bits(sel)[0]
        return float(kern.leaf_cost(packed, data.class_planes, data.weights, False,
                                    np.zeros(3), True)[0])
    w = data.weights if mask is None else data.weights[mask]
    tot = w.sum(axis=0)
    return float(tot.sum() - tot.max())


def odt(rules: RuleSet, data: PointData, n_splits: int, *, min_samples_leaf: int = 1,
        max_depth: int | None = None, time_limit: float | None = None,
        exact_k: bool = False, prune: bool = True, method: str = "auto",
        bound: bool = True, dominance: bool = True, n_jobs: int | None = None) -> ODTResult:
    """Best proper tree with at most ``n_splits`` rules (exactly, when ``exact_k``) of ``rules``
    (eq. 12). See the module docstring for the anytime behaviour.

    ``method``: ``"regions"`` is the branch-and-bound over regions of :mod:`._bnb` (fast;
    needs ``min_samples_leaf >= 1`` and at most ``n_splits`` rules); ``"combinations"`` runs
    ``sodt`` on every K-combination (the paper's form; also counts the proper trees);
    ``"auto"`` picks the first whenever it applies. ``prune=False`` switches every pruning off
    (``bound``: incumbent bounds; ``dominance``: thinning of partial trees); none of them
    changes the optimum, only the work counters in ``stats``. ``n_jobs`` spreads the roots of
    the region search over joblib workers (threads by default; ``joblib.parallel_config``
    chooses another backend, e.g. Dask); the result is identical to the serial one.
    """
    if method not in ("auto", "regions", "combinations"):
        raise ValueError(f"method must be 'auto', 'regions' or 'combinations', got {method!r}")
    regions_ok = not exact_k and min_samples_leaf >= 1
    if method == "regions" and not regions_ok:
        raise ValueError("method='regions' needs min_samples_leaf >= 1 and exact_k=False")
    if method == "combinations" or not regions_ok:
        return _odt_combinations(rules, data, n_splits, min_samples_leaf=min_samples_leaf,
                                 max_depth=max_depth, time_limit=time_limit, exact_k=exact_k,
                                 prune=prune)
    return _odt_regions(rules, data, n_splits, min_samples_leaf=min_samples_leaf,
                        max_depth=max_depth, time_limit=time_limit, bound=prune and bound,
                        dominance=prune and dominance, n_jobs=n_jobs)


def _odt_combinations(rules: RuleSet, data: PointData, n_splits: int, *,
                      min_samples_leaf: int = 1, max_depth: int | None = None,
                      time_limit: float | None = None, exact_k: bool = False,
                      prune: bool = True) -> ODTResult:
    """``odt`` over every K-combination with ``sodt`` on each. ``prune`` skips a combination
    when a cheap lower bound (the known cost of a root side that holds no other rule) cannot
    beat the best tree so far."""
    start = time.perf_counter()
    stats = np.zeros(5, np.int64)
    side_cost = np.zeros((len(rules), 2))
    if prune and len(rules):
        kern.side_costs(rules.sides, data.full, data.class_planes, data.weights, data.use_planes,
                        data.sse, side_cost)
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
                                  data.sse, data.count_planes, min_samples_leaf, max_d, bv,
                                  found)
            if bv[0] < best_value[0]:
                best_value[0] = bv[0]
                best_combo = found.copy()
        chunk = 256
        while True:
            t0 = time.perf_counter()
            done = kern.odt_chunk(k, comb, len(rules), chunk, rules.sides, rules.defining,
                                  data.full, data.class_planes, data.weights, data.use_planes,
                                  data.sse, data.count_planes, min_samples_leaf, max_d, bv,
                                  found, stats, side_cost, prune)
            if bv[0] < best_value[0]:
                best_value[0] = bv[0]
                best_combo = found.copy()
            if done:
                break
            if prune and best_value[0] <= 0.0:
                break  # no cost goes below 0: proven optimal already
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


# ---------------------------------------------------------------------------- region search
#: rule evaluations per second assumed before the first chunk has been timed (a 2020s core)
_RATE_GUESS = 2e7


@dataclass
class _Problem:
    """Arrays the region kernels read, shared by every chunk (and every joblib worker)."""

    order: np.ndarray  # groups of rules with identical sides, most promising first
    gptr: np.ndarray  # members of group i: gmem[gptr[i]:gptr[i + 1]], in rule order
    gmem: np.ndarray
    sides: np.ndarray
    defmask: np.ndarray
    data: PointData
    minority: np.ndarray
    has_minority: bool
    min_leaf: int
    max_depth: int
    bound: bool
    dominance: bool

    def args(self) -> tuple:
        d = self.data
        return (self.order, self.gptr, self.gmem, self.sides, self.defmask, d.class_planes,
                d.weights, d.use_planes, d.sse, d.count_planes, self.minority,
                self.has_minority, self.min_leaf, self.max_depth)


def _defining_masks(rules: RuleSet) -> np.ndarray:
    """``(M, W)`` bitsets of every rule's defining points."""
    m = len(rules)
    mask = np.zeros((m, rules.n_points), bool)
    rows, cols = np.nonzero(rules.defining >= 0)
    mask[rows, rules.defining[rows, cols]] = True
    if m == 0:
        return np.zeros((0, max(1, (rules.n_points + 63) // 64)), np.uint64)
    return pack_bits(mask)


def _rule_groups(rules: RuleSet, data: PointData, min_leaf: int,
                 merge: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(order, gptr, gmem)``: the rules grouped by identical sides (each rule alone unless
    ``merge``), groups sorted by the cost of their one-rule tree (promising roots first; ties
    by first member), members in rule order."""
    from ._generate import row_hashes

    m = len(rules)
    if m == 0:
        return np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64)
    cost = np.zeros(m)
    bnb.split_costs(rules.sides, data.full, data.class_planes, data.weights, data.use_planes,
                    data.sse, data.count_planes, min_leaf, cost)
    if merge:
        sides = np.ascontiguousarray(rules.sides).view(np.int64)
        _, group = np.unique(row_hashes(sides), return_inverse=True)
        group = group.ravel()
        if not _hash_groups_exact(sides, group):  # a hash collision: compare whole rows
            _, group = np.unique(sides, axis=0, return_inverse=True)
            group = group.ravel()
    else:
        group = np.arange(m)
    n_groups = int(group.max()) + 1
    # members in rule order; a group's position: its cheapest (= any: same sides) member's
    # cost, ties by its first member
    gmem = np.argsort(group, kind="stable").astype(np.int64)
    gptr = np.zeros(n_groups + 1, np.int64)
    np.cumsum(np.bincount(group, minlength=n_groups), out=gptr[1:])
    first = gmem[gptr[:-1]]
    order = np.lexsort((first, cost[first])).astype(np.int64)
    return order, gptr, gmem


def _hash_groups_exact(sides: np.ndarray, group: np.ndarray) -> bool:
    """True when rows with equal hash groups really are equal (no hash collision)."""
    rep = np.zeros(int(group.max()) + 1, np.int64)
    rep[group[::-1]] = np.arange(len(group))[::-1]  # first row of each group
    return bool(np.all(sides == sides[rep[group]]))


def _solve_chunk(prob: _Problem, region: np.ndarray, k: int, depth: int, ub: float, lo: int,
                 hi: int, work_limit: float) -> tuple[np.ndarray, np.ndarray, bool]:
    """Best tree on ``region`` with at most ``k`` rules and its root in ``order[lo:hi]``,
    strictly better than ``ub``: ``(out, stats, completed)`` (see :func:`._bnb.bnb_solve`)."""
    stats = np.zeros(4, np.int64)
    if k == 1:
        out = np.zeros(2)
        bnb.best1_top(region, depth, lo, hi, *prob.args(), prob.dominance, stats, out)
        if not out[0] < ub:
            out[0] = np.inf
        return out, stats, True
    out = np.zeros(5)
    done = bnb.bnb_solve(region, k, depth, ub, lo, hi, *prob.args(), prob.bound,
                         prob.dominance, int(min(work_limit, 2 ** 62)), stats, out)
    return out, stats, bool(done)


def _region_leaf(prob: _Problem, region: np.ndarray) -> float:
    idx = unpack_bits(region[None, :], prob.data.weights.shape[0])[0]
    if prob.data.counts[idx].sum() < prob.min_leaf:
        return np.inf
    return leaf_value(prob.data, idx)


def _subtree(prob: _Problem, region: np.ndarray, k: int, depth: int, value: float,
             stats: np.ndarray) -> Any:
    """The plan (``("leaf",)`` or ``("node", rule, left, right)``) of the first optimal tree with
    at most ``k`` rules on ``region``, whose value the search found to be ``value``."""
    leaf = _region_leaf(prob, region)
    if k == 0 or leaf <= value:
        return ("leaf",)
    ub = float(np.nextafter(value, np.inf))
    out, st, _ = _solve_chunk(prob, region, k, depth, ub, 0, len(prob.order), np.inf)
    stats[:4] += st
    if not np.isfinite(out[0]):  # the search's values are reproducible: this cannot happen
        raise RuntimeError(f"proper-tree search: no subtree of value {value} to rebuild")
    return _node(prob, region, k, depth, out, stats)


def _node(prob: _Problem, region: np.ndarray, k: int, depth: int, out: np.ndarray,
          stats: np.ndarray) -> Any:
    j = int(out[1])
    pos, neg = region & prob.sides[j], region & ~prob.sides[j]
    if k == 1:
        return ("node", j, ("leaf",), ("leaf",))
    kl = int(out[2])
    return ("node", j, _subtree(prob, pos, kl, depth + 1, float(out[3]), stats),
            _subtree(prob, neg, k - 1 - kl, depth + 1, float(out[4]), stats))


def _plan_rules(plan: Any) -> list[int]:
    out, stack = [], [plan]
    while stack:
        p = stack.pop()
        if p[0] == "node":
            out.append(p[1])
            stack.extend([p[2], p[3]])
    return sorted(out)


def _odt_regions(rules: RuleSet, data: PointData, n_splits: int, *, min_samples_leaf: int,
                 max_depth: int | None, time_limit: float | None, bound: bool, dominance: bool,
                 n_jobs: int | None) -> ODTResult:
    """``odt`` by branch and bound over regions (module :mod:`._bnb`), roots in chunks between
    which the clock is read and the incumbent is shared."""
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    m = len(rules)
    full = data.full
    counts = data.counts.sum()
    stats = np.zeros(5, np.int64)  # rule evaluations, roots, pruned roots, frames, chunks
    minority = np.ascontiguousarray(data.point_bound, np.float64)
    has_minority = bool(np.any(minority > 0))
    order, gptr, gmem = _rule_groups(rules, data, min_samples_leaf, dominance)
    prob = _Problem(order, gptr, gmem, rules.sides, _defining_masks(rules), data, minority, has_minority,
                    min_samples_leaf, _depth(max_depth), bound, dominance)
    best = leaf_value(data) if counts >= min_samples_leaf else np.inf
    best_out: np.ndarray | None = None
    status = OPTIMAL
    k = min(n_splits, m)
    if max_depth is not None:
        k = min(k, 2 ** min(max_depth, 62) - 1)
    lower = float(minority.sum())
    skip = k <= 0 or (dominance and best <= lower)
    rate = _RATE_GUESS
    n_workers = count_workers(n_jobs)
    pos = 0
    chunk = 64 if k >= 2 else 4096
    n_roots = len(order)
    while not skip and pos < n_roots:
        if deadline is not None and time.perf_counter() >= deadline:
            status = TIME_LIMIT
            break
        remaining = np.inf if deadline is None else max(deadline - time.perf_counter(), 0.0)
        # a batch: one chunk serially, or one chunk per worker (all start from the incumbent)
        width = 1 if n_workers == 1 or pos == 0 else n_workers
        bounds = [(lo, min(lo + chunk, n_roots))
                  for lo in range(pos, pos + width * chunk, chunk) if lo < n_roots]
        t0 = time.perf_counter()
        limit = rate * remaining if np.isfinite(remaining) else np.inf
        if len(bounds) == 1:
            results = [_solve_chunk(prob, full, k, 0, best if bound else np.inf, lo, hi, limit)
                       for lo, hi in bounds]
        else:
            from joblib import Parallel, delayed

            results = Parallel(n_jobs=len(bounds), prefer="threads")(
                delayed(_solve_chunk)(prob, full, k, 0, best if bound else np.inf, lo, hi,
                                      limit) for lo, hi in bounds)
        spent = time.perf_counter() - t0
        done = True
        work = 0
        for out, st, completed in results:  # earliest chunk first: ties keep the serial answer
            stats[:4] += st
            work += int(st[0])
            if out[0] < best:
                best = float(out[0])
                best_out = out
            done = done and completed
        stats[4] += len(bounds)
        pos = bounds[-1][1]
        if not done:
            status = TIME_LIMIT
            break
        if work > 0 and spent > 1e-3:
            rate = max(work / spent / len(bounds), 1e5)
            chunk = int(min(max(chunk * (_CHUNK_SECONDS / max(spent, 1e-4)), 1), 1 << 20))
        if dominance and best <= lower:
            break  # no tree can beat the equivalent-points bound: proven optimal
    plan: Any = ("leaf",)
    if best_out is not None:
        plan = _node(prob, full, k, 0, best_out, stats)
    total = sum(math.comb(m, j) for j in range(1, n_splits + 1))
    return ODTResult(np.array(_plan_rules(plan), np.int64), float(best), status, dict(
        rule_evaluations=int(stats[0]), roots=int(stats[1]), pruned_roots=int(stats[2]),
        frames=int(stats[3]), chunks=int(stats[4]), rules=m, total_combinations=int(total),
        method="regions", n_jobs=n_workers, seconds=time.perf_counter() - start), plan)


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
    """The exactree :class:`Tree` of an :class:`ODTResult`, node values from ``(X, y)``: class
    weights, or for squared error (``data.sse``) a regression tree's ``(mean, weight, squared
    error)``."""
    builder = TreeBuilder(X.shape[1], 1 if data.sse else n_classes, regression=data.sse)
    node_value = (_regression_values(y, sample_weight) if data.sse
                  else _classification_values(y, sample_weight, n_classes))
    plan = result.plan
    if plan is None:
        plan = ("leaf",)
        if len(result.combo):
            _, _, sc = sodt(rules, data, result.combo, min_samples_leaf=min_samples_leaf,
                            max_depth=max_depth)
            plan = _plan_from_dp(sc, result.combo)

    # Explicit stack, two passes: children are created before their parent (TreeBuilder ids).
    # Plan nodes are keyed by their position in ``order`` (equal leaf tuples may be one object).
    # ``carry`` is what an empty child inherits (the parent's label or mean; None at the root).
    order: list[tuple[Any, np.ndarray, Any]] = []  # (plan node, rows, parent's carry)
    kids_of: dict[int, list[int]] = {}
    stack: list[tuple[Any, np.ndarray, Any, int]] = [(plan, np.ones(len(y), bool), None, -1)]
    while stack:
        node, rows, parent_carry, parent = stack.pop()
        me = len(order)
        order.append((node, rows, parent_carry))
        kids_of[me] = [-1, -1]
        if parent >= 0:
            kids_of[parent][0 if kids_of[parent][0] < 0 else 1] = me
        if node[0] == "node":
            side = rule_side(rules, int(node[1]), X)
            carry = node_value(rows, parent_carry)[2]
            stack.append((node[3], rows & ~side, carry, me))
            stack.append((node[2], rows & side, carry, me))
    node_of: dict[int, int] = {}
    for me in range(len(order) - 1, -1, -1):
        node, rows, parent_carry = order[me]
        value, label, _ = node_value(rows, parent_carry)
        if node[0] == "leaf":
            node_of[me] = builder.leaf(value, label)
            continue
        m = int(node[1])
        kids = [node_of[kids_of[me][0]], node_of[kids_of[me][1]]]
        if rules.family[m] == AXIS:
            node_of[me] = builder.threshold(int(rules.feature[m]), float(rules.threshold[m]),
                                            kids, value, label)
        else:
            coef, powers = rules.terms(m)
            node_of[me] = builder.linear(coef, powers, float(rules.threshold[m]), kids, value,
                                         label)
    return builder.build(node_of[0])


NodeValue = Callable[[np.ndarray, Any], tuple[np.ndarray, int, Any]]


def _classification_values(y: np.ndarray, sample_weight: np.ndarray, n_classes: int) -> NodeValue:
    """``(class weights, label, label)`` of the rows in a mask; an empty node takes its
    parent's label."""
    objective = get_objective("misclassification")
    onehot = np.zeros((len(y), n_classes))
    onehot[np.arange(len(y)), y] = sample_weight

    def value(rows: np.ndarray, parent_label: int | None) -> tuple[np.ndarray, int, int]:
        v = onehot[rows].sum(axis=0)
        label = _label(objective, v, -1 if parent_label is None else parent_label)
        return v, label, label

    return value


def _regression_values(y: np.ndarray, sample_weight: np.ndarray) -> NodeValue:
    """``((mean, weight, squared error), 0, mean)`` of the rows in a mask (squared error around
    the mean, two passes); an empty node predicts its parent's mean."""
    y = np.asarray(y, np.float64)

    def value(rows: np.ndarray, parent_mean: float | None) -> tuple[np.ndarray, int, float]:
        yr, wr = y[rows], sample_weight[rows]
        total = float(wr.sum())
        if total > 0:
            mean = float(wr @ yr) / total
        else:
            mean = 0.0 if parent_mean is None else parent_mean
        return np.array([mean, total, SquaredError.cost(yr, wr)]), 0, mean

    return value


def _plan_from_dp(sc: dict[str, np.ndarray], combo: np.ndarray) -> Any:
    """The plan of the tree ``sodt``'s DP arrays describe (state codes in base 3)."""
    out: dict[int, Any] = {}
    codes, stack = [], [0]
    while stack:
        code = stack.pop()
        codes.append(code)
        if sc["rsmask"][code] != 0:
            i = int(sc["choice"][code])
            stack.extend([code + 3 ** i, code + 2 * 3 ** i])
    for code in reversed(codes):
        if sc["rsmask"][code] == 0:
            out[code] = ("leaf",)
        else:
            i = int(sc["choice"][code])
            out[code] = ("node", int(combo[i]), out[code + 3 ** i], out[code + 2 * 3 ** i])
    return out[0]


def _label(objective, value: np.ndarray, parent_label: int) -> int:
    if value.sum() <= 0 and parent_label >= 0:
        return parent_label  # an empty region predicts what its parent predicts
    return int(objective.leaf_costs(value[None, :])[1][0])


def tree_objective(tree: Tree, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> float:
    """Weighted misclassification of ``tree`` on ``(X, y)``; for a regression tree built on
    ``(X, y)`` by :func:`build_tree`, its weighted sum of squared errors (its leaves'
    squared errors around their means)."""
    if tree.is_regression:
        return float(tree.impurity[tree.kind == LEAF].sum())
    return float(sample_weight[tree.predict(X) != y].sum())


#: Calibration of :func:`estimate_work` (seconds on one core of the development machine):
#: generating one hyperplane/hypersurface rule costs about this per point ...
_GEN_SECONDS_PER_RULE_POINT = 1e-7
#: ... and evaluating one rule on a region about this per 64-point word and class plane.
_EVAL_SECONDS_PER_WORD = 1.5e-9
#: Worst-case search time above which a fit without ``time_limit`` is refused ...
REFUSE_SECONDS = 30 * 86400.0
#: ... or warned about.
WARN_SECONDS = 3600.0
#: Peak bytes of generating the rules per byte of the stored rule set: the families' parts,
#: their concatenation and the de-duplication keys side by side.
RULE_PEAK_FACTOR = 3


def point_data_bytes(n: int, d: int, n_classes: int) -> float:
    """Peak bytes of :func:`point_data` on ``n`` rows and ``d`` columns beyond its input: the
    kept rows, ``np.unique``'s sorted copies and the distinct points (about 40 bytes a cell),
    the inverse, counts and sort order (48 a row) and the class weights (8 a row and class)."""
    return 40.0 * n * d + 48.0 * n + 8.0 * n * max(n_classes, 3)


@dataclass
class WorkEstimate:
    """What a proper-tree fit will cost, before any rule is generated (upper estimates)."""

    rules: int  # candidate rules of the family
    rule_bytes: int  # memory to store them
    generation_seconds: float
    search_evaluations: float  # rule evaluations of the region search without any pruning
    search_seconds: float

    @property
    def seconds(self) -> float:
        return self.generation_seconds + self.search_seconds


def estimate_work(n_points: int, n_features: int, rules: str | tuple[str, ...], degree: int,
                  ties: str, n_splits: int, n_classes: int = 2) -> WorkEstimate:
    """Estimate the work of :func:`solve_proper`: rules x points to generate the rules, and
    the region search's worst case, ``sum_k (2 M)**k`` rule evaluations for ``k <= n_splits``
    (a root, then both children's one-rule scans, and so on down), each costing a popcount
    per word and class. Pruning usually cuts the search by orders of magnitude; the estimate
    only decides what is out of reach."""
    from .rules import FAMILY_NAMES, estimate_rule_count, n_monomials

    fams = ("axis", "hyperplane", "polynomial") if rules == "mixed" else (
        (rules,) if isinstance(rules, str) else tuple(rules))
    fams = tuple(f for f in fams if f in FAMILY_NAMES)
    m = sum(estimate_rule_count(n_points, n_features, f, degree, ties) for f in fams)
    words = max(1, (n_points + 63) // 64)
    p = n_monomials(n_features, degree) if "polynomial" in fams else n_features
    rule_bytes = m * 8 * (words + 2 * p + 4)
    gen = sum(estimate_rule_count(n_points, n_features, f, degree, ties) for f in fams
              if f != "axis") * n_points * _GEN_SECONDS_PER_RULE_POINT
    evals = float(sum((2.0 * m) ** k for k in range(1, max(n_splits, 0) + 1)))
    search = evals * words * (n_classes + 1) * _EVAL_SECONDS_PER_WORD
    return WorkEstimate(m, rule_bytes, gen, evals, search)


def _check_work(est: WorkEstimate, n_points: int, n_features: int, n_splits: int,
                time_limit: float | None, memory_bytes: float | None = None,
                estimator: str | None = None, at_least: bool = False) -> None:
    """Refuse only what is out of reach (rules whose generation, :data:`RULE_PEAK_FACTOR`
    times their stored bytes, would not fit in ``memory_bytes`` (None: half the memory
    available): :class:`~exactree.limits.MemoryLimitError`; or a search of more than
    :data:`REFUSE_SECONDS` without a time limit); warn about a long search."""
    where = (f"{'at least ' if at_least else ''}{n_points} distinct points in {n_features} "
             "dimensions")
    check_memory(RULE_PEAK_FACTOR * float(est.rule_bytes), _budget(memory_bytes),
                 f"too many candidate rules: about {est.rules:,} for {where} "
                 f"({est.rule_bytes / 2 ** 30:.3g} GiB stored, generated at up to "
                 f"{RULE_PEAK_FACTOR}x that)",
                 ["fewer rows (points) or features", "a smaller n_splits (K)",
                  "rules='axis', ties='left' or a smaller degree",
                  "a larger memory_limit (MiB) if the machine has the memory"], estimator)
    if time_limit is not None:
        return  # anytime: the clock stops the generation or the search
    hint = ("set time_limit for an anytime answer, or use fewer points, fewer splits or a "
            "smaller rule family")
    if est.seconds > REFUSE_SECONDS:
        raise ValueError(
            f"search out of reach: about {est.rules:,} rules for {where} and n_splits="
            f"{n_splits} mean up to {est.search_evaluations:.3g} rule evaluations (estimated "
            f"{_duration(est.seconds)} at worst); {hint}")
    if est.seconds > WARN_SECONDS:
        warnings.warn(
            f"up to {est.search_evaluations:.3g} rule evaluations to examine ({est.rules:,} "
            f"rules, n_splits={n_splits}; estimated {_duration(est.seconds)} at worst, usually "
            f"far less); {hint}", UserWarning, stacklevel=4)


def _budget(memory_bytes: float | None) -> float:
    """``memory_bytes``, or without it half of the memory available (the estimators' default)."""
    if memory_bytes is not None:
        return float(memory_bytes)
    from ...estimators.base import memory_limit_bytes

    return memory_limit_bytes(None)


def _duration(seconds: float) -> str:
    for unit, size in (("years", 365 * 86400.0), ("days", 86400.0), ("hours", 3600.0),
                       ("minutes", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} seconds"


def solve_proper(X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray, n_classes: int, *,
                 n_splits: int, rules: str | tuple[str, ...] = "hyperplane", degree: int = 2,
                 ties: str = "all", max_depth: int | None = None, min_samples_leaf: int = 1,
                 time_limit: float | None = None, max_rules: int | None = None,
                 n_jobs: int | None = None, stream: bool | None = None,
                 objective: str = "misclassification", memory_limit: float | None = None,
                 estimator: str | None = None, deadline: float | None = None) -> SolveResult:
    """Optimal proper tree with at most ``n_splits`` rules of the family ``rules`` on ``(X, y)``.

    ``objective``: ``"misclassification"`` (``y`` class indices, ``n_classes`` of them) or
    ``"squared_error"`` (``y`` real targets; a regression tree with mean leaves, and a
    ``lower_bound`` that is the equivalent-points bound when the optimum is not proven).

    ``time_limit`` covers the whole solve, rule generation included. The status is
    ``"optimal"`` only when the search finished over a rule family that holds every split of its
    kind (``ties="all"`` or axis rules only) and every rule could be stored faithfully in raw
    coordinates (:class:`RuleSet` ``exhaustive`` and ``n_unrepresentable``); otherwise
    ``"optimal_on_rules"`` (optimal over the generated rules only, lower bound 0). A deadline
    gives ``"time_limit"``. Before generating anything, :func:`estimate_work` refuses what is
    out of reach; ``max_rules`` (None: no cap) additionally caps the rule count.

    A one-rule tree of a hyperplane/hypersurface family (``ties="all"``) with more than
    :data:`STREAM_RULES` candidate rules is searched without listing them (:mod:`.stream`);
    ``stream`` forces (True) or forbids (False) that path (misclassification only: squared error
    always lists the rules).

    ``memory_limit``: bytes the solve may hold beyond ``X`` (None: half the memory available).
    The merged points (:func:`point_data_bytes`) and the rules (:func:`estimate_work`) are
    estimated before they are built; what would not fit is refused with
    :class:`~exactree.limits.MemoryLimitError` naming the ways out (``estimator`` names the
    caller in the message).

    ``deadline`` (a ``time.perf_counter()`` value, e.g. from the start of the estimator's
    ``fit``) replaces the one ``time_limit`` sets from this call. It is read between the steps
    (merging the points, estimating the work, generating the rules, the search); past it
    before the points are merged the result is a single leaf (``"time_limit"``, lower bound
    0, ``stats["points_merged"]`` false). The distinct points are counted
    (by hashing) before they are sorted and before any rule exists, so a problem whose rules
    would not fit is refused at once.
    """
    if objective not in ("misclassification", "squared_error"):
        raise ValueError(f"objective must be 'misclassification' or 'squared_error', got "
                         f"{objective!r}")
    start = time.perf_counter()
    if deadline is None and time_limit is not None:
        deadline = start + time_limit
    if deadline is not None:  # the time left, for the anytime steps below
        time_limit = max(deadline - start, 0.0)
    X = np.asarray(X, np.float64)
    if deadline is not None and start >= deadline:
        return _leaf_only(X, y, sample_weight, n_classes, objective == "squared_error", start)
    budget = _budget(memory_limit)
    if X.ndim == 2:
        check_memory(point_data_bytes(X.shape[0], X.shape[1], n_classes), budget,
                     f"merging the {X.shape[0]:,} rows x {X.shape[1]} columns into distinct "
                     "points", ["fewer rows", "fewer features",
                                "a larger memory_limit (MiB)"], estimator)
    sse = objective == "squared_error"
    one_rule = n_splits == 1 or (n_splits >= 1 and max_depth == 1)
    stream_shape = bool(one_rule and ties == "all" and min_samples_leaf >= 1 and not sse
                        and rules in ("hyperplane", "polynomial") and stream is not False)
    if X.ndim == 2 and X.shape[1] and len(X) > _PREFIX_ROWS:
        # The distinct rows of a prefix bound the points from below: rules that would not fit
        # for them are refused before every row is hashed (a fraction of a second at 1M rows).
        lower = len(np.unique(X[:_PREFIX_ROWS][sample_weight[:_PREFIX_ROWS] > 0] + 0.0, axis=0))
        est = estimate_work(lower, X.shape[1], rules, degree, ties, n_splits,
                            _SSE_EFFECTIVE_CLASSES if sse else n_classes)
        if lower and not stream_shape:  # (streaming lists no rules: its own checks)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the exact check below warns
                _check_work(est, lower, X.shape[1], n_splits, time_limit, budget, estimator,
                            at_least=True)
    try:
        check_deadline(deadline)
        groups = row_groups(X[sample_weight > 0], deadline) if X.ndim == 2 else None
    except TimeLimitReached:
        return _leaf_only(X, y, sample_weight, n_classes, sse, start)
    est = None
    if X.ndim == 2 and groups is not None and len(groups) and X.shape[1]:
        est = estimate_work(len(groups), X.shape[1], rules, degree, ties, n_splits,
                            _SSE_EFFECTIVE_CLASSES if sse else n_classes)
    if sse:
        stream = False  # the streaming kernel scores misclassification only
    elif stream is None:
        stream = est is not None and est.rules > STREAM_RULES and max_rules is None
    may_stream = bool(stream and one_rule and est is not None and ties == "all"
                      and min_samples_leaf >= 1 and rules in ("hyperplane", "polynomial"))
    # what the merged points will hold: X, inverse, weights (or 3 statistics), counts
    point_bytes = (8.0 * (len(groups) * (X.shape[1] + max(n_classes, 3) + 1) + len(X))
                   if groups is not None else 0.0)
    if est is not None and not may_stream:  # refused before the points are sorted
        _check_work(est, len(groups), X.shape[1], n_splits, time_limit, budget - point_bytes,
                    estimator)
    try:
        data = point_data(X, y, sample_weight, n_classes, squared_error=sse, groups=groups,
                          deadline=deadline)
    except TimeLimitReached:
        return _leaf_only(X, y, sample_weight, n_classes, sse, start)
    budget -= sum(a.nbytes for a in (data.X, data.inverse, data.weights, data.counts))
    if may_stream:
        left = None if deadline is None else max(deadline - time.perf_counter(), 0.0)
        got = _solve_streaming(X, y, sample_weight, n_classes, data, rules, degree,
                               min_samples_leaf, left, deadline, n_jobs, start)
        if got is not None:
            return got
        _check_work(est, len(data.X), data.X.shape[1], n_splits, time_limit, budget, estimator)
    ruleset = make_rules(data.X, rules, degree=degree, ties=ties, max_rules=max_rules,
                         deadline=deadline)
    remaining = None if deadline is None else max(deadline - time.perf_counter(), 0.0)
    res = odt(ruleset, data, n_splits, min_samples_leaf=min_samples_leaf, max_depth=max_depth,
              time_limit=remaining, n_jobs=n_jobs)
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
    stats = dict(res.stats, search_objective=res.value * data.unit,
                 rules_complete=ruleset.complete, rules_exhaustive=ruleset.exhaustive,
                 unrepresentable_rules=ruleset.n_unrepresentable,
                 seconds=time.perf_counter() - start)
    lower = value if status == OPTIMAL else _proven_bound(data, y, sample_weight)
    return SolveResult(tree=tree, objective=value, lower_bound=min(lower, value), status=status,
                       stats=stats)


def _leaf_only(X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray, n_classes: int,
               sse: bool, start: float) -> SolveResult:
    """The single leaf of a solve the deadline stopped before its points were merged: status
    ``"time_limit"``, lower bound 0 (no cost is negative)."""
    builder = TreeBuilder(X.shape[1], 1 if sse else n_classes, regression=sse)
    node_value = (_regression_values(y, sample_weight) if sse
                  else _classification_values(y, sample_weight, n_classes))
    value, label, _ = node_value(np.ones(len(y), bool), None)
    tree = builder.build(builder.leaf(value, label), check=False)
    value = tree_objective(tree, X, y, sample_weight)
    return SolveResult(tree=tree, objective=value, lower_bound=0.0, status=TIME_LIMIT,
                       stats=dict(points_merged=False, rules=0, rule_evaluations=0,
                                  rules_complete=False, seconds=time.perf_counter() - start))


#: Rows of the prefix whose distinct rows bound the point count before all rows are merged.
_PREFIX_ROWS = 4096
#: Class planes a squared-error rule evaluation costs about as much as, in
#: :func:`estimate_work` (its statistics are summed point by point, not by popcounts).
_SSE_EFFECTIVE_CLASSES = 16


def _proven_bound(data: PointData, y: np.ndarray, sample_weight: np.ndarray) -> float:
    """What any tree costs at least, without a finished search: 0 for misclassification (as
    before), the equivalent-points bound for squared error (identical rows share a leaf, so
    each group of them costs at least its own squared error)."""
    if not data.sse:
        return 0.0
    keep = data.inverse >= 0
    return SquaredError().lower_bound(np.asarray(y, np.float64)[keep], sample_weight[keep],
                                      data.inverse[keep])


#: Candidate rules above which a one-rule search streams the rules instead of listing them.
STREAM_RULES = 2_000_000
#: Seconds per point and subset of the streaming one-rule search (calibration, one core).
_STREAM_SECONDS = 4e-9


def _solve_streaming(X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray, n_classes: int,
                     data: PointData, family: str, degree: int, min_leaf: int,
                     time_limit: float | None, deadline: float | None, n_jobs: int | None,
                     start: float) -> SolveResult | None:
    """:func:`solve_proper` for one rule by :func:`.stream.stream_one_rule` (None: the family
    needs more points than there are; the caller lists the rules instead)."""
    from .rules import n_monomials
    from .stream import stream_one_rule

    n, d = data.X.shape
    g = n_monomials(d, degree) if family == "polynomial" else d
    seconds = math.comb(n, g) * (n + 2 ** g) * _STREAM_SECONDS
    if time_limit is None and seconds > REFUSE_SECONDS:
        raise ValueError(
            f"search out of reach: {math.comb(n, g):,} point subsets define the {family} rules "
            f"for {n} distinct points in {d} dimensions (estimated {_duration(seconds)}); set "
            "time_limit for an anytime answer, or use fewer points or a smaller rule family")
    sr = stream_one_rule(data.X, data.weights, data.counts, family, degree, min_leaf,
                         deadline=deadline, n_jobs=n_jobs)
    if sr is None:
        return None
    leaf = leaf_value(data) if data.counts.sum() >= min_leaf else np.inf
    if sr.value < leaf:
        res = ODTResult(np.zeros(1, np.int64), sr.value, OPTIMAL, {},
                        ("node", 0, ("leaf",), ("leaf",)))
    else:
        res = ODTResult(np.zeros(0, np.int64), leaf, OPTIMAL, {}, ("leaf",))
    if not np.isfinite(res.value):
        raise ValueError(f"no tree satisfies min_samples_leaf={min_leaf} on "
                         f"{int(data.counts.sum())} samples with positive weight")
    tree = build_tree(sr.rules, data, res, X, y, sample_weight, n_classes,
                      min_samples_leaf=min_leaf)
    value = tree_objective(tree, X, y, sample_weight)
    status = OPTIMAL if sr.proven else OPTIMAL_ON_RULES
    if not sr.complete:
        status = TIME_LIMIT
    stats = dict(sr.stats, method="stream", search_objective=res.value,
                 rules_complete=sr.complete, rules_exhaustive=True,
                 unrepresentable_rules=sr.stats["unrepresentable_in_exact"],
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


__all__ = ["ODTResult", "PointData", "WorkEstimate", "ancestry_matrix", "estimate_work", "build_tree", "leaf_value", "odt",
           "odt_generic", "point_data", "sodt", "sodt_generic", "solve_proper", "tree_objective"]
