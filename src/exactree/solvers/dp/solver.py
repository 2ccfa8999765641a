"""MurTree for Python: optimal classification trees over binary features by dynamic programming
and search (Demirovic et al., "MurTree", JMLR 2022).

:class:`DPSolver` holds the packed data and the branch cache of one problem (data, depth,
minimum leaf size); successive :meth:`DPSolver.solve` calls with growing node budgets reuse the
cache, which is how the size-penalised objective and the node-budget path are computed
(paper section 4.9.3).
"""

from __future__ import annotations

import copy
import sys
import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ...progress import DEADLINE, Progress, new_board
from .._bits import pack_rows, set_bits
from ._cache import LEAF, UNKNOWN, Cache, find
from ._depth2 import F_ROOT, solve_depth2, workspace
from ._lexicographic import perfect_is_final, solver_cost_bound, split_penalty
from ._route import route_weights
from ._search import (
    ARCHIVE,
    DONE,
    ST_FRAMES,
    INF,
    USE_CACHE,
    USE_DEPTH2,
    USE_DYNAMIC_ORDER,
    USE_REFINED_LB,
    USE_SIMILARITY,
    USE_UPPER_BOUNDS,
    USE_DEPTH2_INCUMBENT,
    USE_INCREMENTAL,
    USE_PERFECT_FINAL,
    search,
)

# perfect_is_final: a tree of depth PERFECT_IS_FINAL_DEPTH or more without errors ends the
# search (off: the fewest splits among perfect trees too, see _lexicographic).
TECHNIQUES = ("depth2", "similarity", "cache", "refined_lb", "dynamic_order", "upper_bounds",
              "depth2_incumbent", "incremental", "perfect_is_final", "minimal_size")
_FLAG_INDEX = dict(zip(TECHNIQUES, (USE_DEPTH2, USE_SIMILARITY, USE_CACHE, USE_REFINED_LB,
                                    USE_DYNAMIC_ORDER, USE_UPPER_BOUNDS, USE_DEPTH2_INCUMBENT,
                                    USE_INCREMENTAL, USE_PERFECT_FINAL)))
_MINIMAL_SIZE = len(_FLAG_INDEX)  # the penalty per split (see _lexicographic); not a kernel flag
_FLAG_INDEX["minimal_size"] = _MINIMAL_SIZE
# Off unless asked for: incremental counting in full pair matrices (MurTree section 4.4.3) was
# slower than popcounting each node afresh on every benchmark measured (`bench_dp.py --ablation`).
DEFAULT_OFF = ("incremental",)
PAIR_MATRIX_BYTES = 64e6
# A ceiling in bytes on the set-up of a DPSolver built without a fit's budget (see
# check_problem_size; None: the memory available). Estimators pass their fit's budget.
MAX_DATA_BYTES = None
# Anytime fits (a time limit): the exact search for QUICK_EXACT of the time, at most
# QUICK_EXACT_SECONDS (narrow searches first made millisecond fits 1.5-2.5x slower; longer, the
# narrow searches' trees pay: wine in 10-quantile codes at depth 4 has a perfect tree they find
# at once, 18 ms in all, against 33 ms for the exact search alone), then narrow searches up to
# NARROW_WIDTH; if the exact search has not ended after EXACT_SLICE of the time,
# wider ones in at most WIDEN_SHARE of the time left.
QUICK_EXACT = 0.01
QUICK_EXACT_SECONDS = 0.005
NARROW_WIDTH = 4
EXACT_SLICE = 0.25
WIDEN_SHARE = 0.2
STAT_NAMES = ("frames", "depth2_solves", "cache_hits", "pruned", "leaf_evaluations")
_NO_COUNTS = np.zeros(0)  # a rebuilt node's class weights until DPSolver._fill_counts


@dataclass
class BinaryNode:
    """A node of a tree over binary features: ``feature`` is -1 at leaves; ``true``/``false`` are
    the children for instances where the feature is 1 / 0; ``counts`` the class weights."""

    feature: int
    counts: np.ndarray
    true: BinaryNode | None = None
    false: BinaryNode | None = None

    @property
    def n_splits(self) -> int:
        if self.feature < 0:
            return 0
        return 1 + self.true.n_splits + self.false.n_splits

    @property
    def cost(self) -> float:
        """Misclassified weight of the subtree (each leaf predicts its heaviest class)."""
        stack, total = [self], 0.0
        while stack:
            node = stack.pop()
            if node.feature < 0:
                total += float(node.counts.sum() - node.counts.max())
            else:
                stack += [node.true, node.false]
        return total


def scaled_weights(sample_weight: np.ndarray | None, n: int) -> tuple[np.ndarray, float, bool]:
    """``(weights / scale, scale, unit)``: equal weights become unit weights (the kernels'
    fast paths) and costs are multiplied back by ``scale``."""
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, np.float64)
    scale = float(w[0]) if n and np.all(w == w[0]) and w[0] > 0 else 1.0
    return np.ascontiguousarray(w / scale), scale, bool(np.all(w == scale))


def equivalent_points_bound(rows: np.ndarray, labels: np.ndarray, weights: np.ndarray,
                            n_classes: int) -> float:
    """Weight every tree misclassifies: rows equal in ``rows`` (one row of features each) share
    a leaf, so all but the heaviest class of each such group are wrong (GOSDT's
    equivalent-points bound). A cheap global lower bound when a search is cut short."""
    group = row_groups(rows)
    if group is None:
        return 0.0
    weight = np.zeros((group.max() + 1, n_classes))
    np.add.at(weight, (group, labels), weights)
    return float(weight.sum() - weight.max(axis=1).sum())


def row_groups(rows: np.ndarray) -> np.ndarray | None:
    """Each row's group among the rows equal in every column (ids from 0), or None when no two
    rows are equal. Column by column, one sort of integers each, stopping once every row
    stands alone: raw numeric columns stop after one or two (``np.unique`` over whole rows took
    0.8 s on 300,000 rows of 10 columns, the time a cut-short fit of them had left)."""
    n = len(rows)
    if n == 0:
        return None
    group = np.zeros(n, np.int64)
    for column in rows.T:
        _, ids = np.unique(column, return_inverse=True)
        # (group < n and ids < n: the key stays below n**2, within int64 for n < 3e9)
        _, group = np.unique(group * (int(ids.max()) + 1) + ids.ravel(), return_inverse=True)
        if group.max() == n - 1:
            return None
    return group.ravel()


@dataclass
class DPSolution:
    tree: BinaryNode
    cost: float
    lower_bound: float
    optimal: bool
    stats: dict = field(default_factory=dict)
    # Why a search that is not optimal stopped: "time_limit" (also Ctrl-C) or "memory_limit".
    limit: str | None = None


def check_problem_size(n: int, m: int, n_classes: int, limit: float | None = None, *,
                       weighted: bool = False, max_depth: int = 3,
                       estimator: str | None = None) -> float:
    """Refuse (:class:`~exactree.limits.MemoryLimitError`) a binary-feature search of ``n``
    rows and ``m`` binary features whose set-up would need more than ``limit`` bytes (the
    fit's budget: ``memory_limit`` less the input, or half the memory available; None: the
    memory available now, what a problem whose data is already built may still take, at most
    :data:`MAX_DATA_BYTES` when set).
    Returns the estimate in bytes.

    The estimate is the peak of :class:`DPSolver`'s set-up over the boolean matrix (built in
    blocks, 1 byte a cell): the matrix, the column-major copy, the canonical copy and its
    packed bits while duplicate splits are found (3.125 bytes a cell), then the matrix, its
    distinct columns, the kernel's uint8 copy and two bitset copies (3.25 bytes a cell), plus,
    with unequal weights, the rows' feature lists (``np.nonzero``'s two int64 arrays and a
    copy: 24 bytes a true cell, about half of the cells) and the pair matrices (up to
    :data:`PAIR_MATRIX_BYTES`); and ~48 bytes a row (labels, weights, positions), the class
    bitsets and the archive of ``ARCHIVE * (max_depth + 1)`` bitsets."""
    from ...estimators.base import available_memory
    from ...limits import check_memory

    words = (n + 63) // 64
    need = (3.25 * n * m + 48.0 * n + 8.0 * (n_classes + 3) * words * 2
            + 8.0 * ARCHIVE * (max_depth + 1) * (words + (1 << max_depth)))
    if weighted:
        need += 12.0 * n * m + min(PAIR_MATRIX_BYTES, 8.0 * (n_classes + 1) * m * m)
    budget = float(limit) if limit is not None else (
        available_memory() if MAX_DATA_BYTES is None else min(available_memory(), MAX_DATA_BYTES))
    per_feature = need / max(m, 1)
    fits = int(max(budget - 48.0 * n, 0.0) // max(per_feature, 1.0))
    ways = ["search='ordered' (no rows x thresholds matrix)",
            f"max_thresholds small enough for about {fits:,} binary features in all"
            if 0 < fits < m else "a smaller max_thresholds",
            f"memory_limit of at least {int(np.ceil(need / 2**20)):,} (MiB) if the machine has "
            "the memory", "fewer rows"]
    check_memory(need, budget, f"the binary-feature search of {n:,} rows x {m:,} binary features "
                 "(the boolean matrix, its copies and bitsets)", ways, estimator)
    return need


def distinct_splits(X: np.ndarray) -> np.ndarray:
    """Indices of the first column of every distinct non-constant split of the rows of ``X``
    (a column and its complement make the same split)."""
    if X.shape[0] == 0:
        return np.zeros(0, np.int64)
    columns = np.ascontiguousarray(X.T)  # packing along contiguous rows is the fast way
    canonical = columns ^ columns[:, :1]  # flip columns so the first row is False in each
    packed = np.packbits(canonical, axis=1)  # one column's bits per row
    splits = packed.any(axis=1).tolist()  # padding bits are 0: whether the column varies
    data, width = packed.tobytes(), packed.shape[1]
    seen: set[bytes] = set()
    keep = []
    for j in range(len(splits)):
        key = data[j * width:(j + 1) * width]
        if splits[j] and key not in seen:
            seen.add(key)
            keep.append(j)
    return np.array(keep, np.int64)


def _pack(mask: np.ndarray) -> np.ndarray:
    """:func:`~exactree.solvers._bits.pack_rows` (the same words) with one packing pass and
    no padded copy of ``mask``."""
    rows, n = mask.shape
    if sys.byteorder != "little":
        return pack_rows(mask)
    out = np.zeros((rows, max(1, (n + 63) // 64)), np.uint64)
    if n:
        out.view(np.uint8)[:, :(n + 7) // 8] = np.packbits(mask, axis=1, bitorder="little")
    return out


def _all_bits(n: int) -> np.ndarray:
    """The bitset of all ``n`` rows: ``pack_rows(np.ones((1, n), bool))[0]``."""
    out = np.full(max(1, (n + 63) // 64), np.uint64(0xFFFFFFFFFFFFFFFF))
    if n % 64 or n == 0:
        out[-1] = np.uint64((1 << (n % 64)) - 1)
    return out


_DEFAULT_FLAGS = np.array([name not in DEFAULT_OFF for name in TECHNIQUES])  # + minimal_size
_ZOBRIST: dict[tuple[int, int], np.ndarray] = {}  # a few recent tables (read-only use)


def _zobrist(seed: int, size: int) -> np.ndarray:
    """``size`` random 64-bit hash keys from ``seed``: the same for the same arguments, so
    recent tables are kept (making a generator costs tens of microseconds). The search only
    reads them."""
    key = (int(seed), int(size))
    table = _ZOBRIST.get(key)
    if table is None:
        rng = np.random.default_rng(seed)
        table = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=size,
                             dtype=np.int64)
        if len(_ZOBRIST) >= 8:
            _ZOBRIST.pop(next(iter(_ZOBRIST)))
        _ZOBRIST[key] = table
    return table


_LOOKUP = -3  # _rebuild_arrays: a subtree whose split is read from the cache


@njit(cache=True)
def _rebuild_arrays(F, all_bits, zob, index, keys, meta, bounds, split, use_cache, depth, feat,
                    nl, nr, cap, labels, weights, unit, incremental, row_ptr, row_feat,
                    n_classes, min_leaf, ws_X, ws_pos, ws_bits, ws_C, ws_prev, ws_f, ws_i,
                    route_w, penalty):
    """:meth:`DPSolver._rebuild` of the root (split ``feat``, children budgets ``nl``/``nr``,
    depth-2 solver on) and :meth:`DPSolver._fill_counts` in one compiled pass: the same tree as
    flat arrays in the preorder of ``_fill_counts`` (a node, its false subtree, its true
    subtree). Returns ``(ok, n_nodes, feature, true_child, false_child, counts)``; not ``ok``
    when a subtree's split is not in the cache (the caller rebuilds in Python, which solves it
    again) or the tree would pass ``cap`` nodes."""
    W = F.shape[1]
    feature = np.full(cap, -1, np.int64)
    true_child = np.zeros(cap, np.int64)
    false_child = np.zeros(cap, np.int64)
    counts = np.zeros((0, n_classes))
    # Pending subtrees, depth first (at most one per level waits): rows, branch literals,
    # parent, side, depth and budget.
    S = depth + 2
    st_bits = np.empty((S, W), np.uint64)
    st_path = np.zeros((S, depth + 1), np.int64)
    st_plen = np.zeros(S, np.int64)
    st_parent = np.zeros(S, np.int64)
    st_true = np.zeros(S, np.bool_)
    st_depth = np.zeros(S, np.int64)
    st_budget = np.zeros(S, np.int64)
    st_feat = np.zeros(S, np.int64)  # the split when known (the root's), else _LOOKUP
    st_nl = np.zeros(S, np.int64)
    st_nr = np.zeros(S, np.int64)
    idx = np.empty(W * 64, np.int64)
    cur_bits = np.empty(W, np.uint64)
    cur_path = np.zeros(depth + 1, np.int64)
    tmp = np.zeros(depth + 1, np.int64)
    out = np.zeros((5, 4))
    st_bits[0] = all_bits
    st_parent[0] = -1
    st_depth[0] = depth
    st_budget[0] = 1  # not a leaf by budget: the root's split is given
    st_feat[0], st_nl[0], st_nr[0] = feat, nl, nr
    top = 1
    count = 0
    while top > 0:
        top -= 1
        s = top
        if count >= cap:
            return False, 0, feature, true_child, false_child, counts
        node = count
        count += 1
        p = st_parent[s]
        if p >= 0:
            if st_true[s]:
                true_child[p] = node
            else:
                false_child[p] = node
        d, b = st_depth[s], st_budget[s]
        if b == 0 or d == 0:
            continue  # a leaf
        f, l, r = st_feat[s], st_nl[s], st_nr[s]
        plen = st_plen[s]
        cur_bits[:] = st_bits[s]  # the children below take this slot
        cur_path[:plen] = st_path[s, :plen]
        if f == _LOOKUP and d <= 2:
            k = set_bits(cur_bits, idx)
            max_budget = min(b, (1 << d) - 1)
            solve_depth2(idx, k, labels, weights, unit, incremental, row_ptr, row_feat,
                         n_classes, min_leaf, max_budget, ws_X, ws_pos, ws_bits, ws_C, ws_prev,
                         ws_f, ws_i, out, penalty)
            root = int(out[1, max_budget])
            if root < 0:
                continue
            if count + 2 + 2 * (out[3, max_budget] >= 0) + 2 * (out[4, max_budget] >= 0) > cap:
                return False, 0, feature, true_child, false_child, counts
            feature[node] = root
            for side in range(2):  # the false child first (preorder of _fill_counts)
                child = count
                count += 1
                if side == 0:
                    false_child[node] = child
                    child_feat = int(out[4, max_budget])
                else:
                    true_child[node] = child
                    child_feat = int(out[3, max_budget])
                if child_feat >= 0:
                    feature[child] = child_feat
                    false_child[child] = count
                    true_child[child] = count + 1
                    count += 2
            continue
        if f == _LOOKUP:
            if not use_cache:
                return False, 0, feature, true_child, false_child, counts
            h = np.int64(0)
            for j in range(plen):
                h ^= zob[cur_path[j]]
            e = find(index, keys, meta, h, cur_path, plen, tmp)
            if e < 0:
                return False, 0, feature, true_child, false_child, counts
            slot = meta[e, 2] + b
            if not bounds[slot, 1] < INF:
                return False, 0, feature, true_child, false_child, counts
            f, l, r = split[slot, 0], split[slot, 1], split[slot, 2]
            if f == UNKNOWN:
                return False, 0, feature, true_child, false_child, counts
        if f < 0:
            continue  # a leaf
        feature[node] = f
        # Children: the true one below the false one, so the false one comes out first.
        for side in range(2):
            c = top
            top += 1
            for w in range(W):
                st_bits[c, w] = cur_bits[w] & F[f, w] if side == 0 else cur_bits[w] & ~F[f, w]
            for j in range(plen):
                st_path[c, j] = cur_path[j]
            st_path[c, plen] = 2 * f + 1 if side == 0 else 2 * f
            st_plen[c] = plen + 1
            st_parent[c] = node
            st_true[c] = side == 0
            st_depth[c] = d - 1
            st_budget[c] = l if side == 0 else r
            st_feat[c] = _LOOKUP
    counts = np.zeros((count, n_classes))
    feature, true_child, false_child = feature[:count], true_child[:count], false_child[:count]
    route_weights(ws_X, labels, route_w, feature, true_child, false_child, counts)
    return True, count, feature, true_child, false_child, counts


class DPSolver:
    """Minimum weighted misclassification trees of bounded depth and node count.

    Parameters
    ----------
    X : bool array (n_samples, n_features) -- binary features (true/false).
    y : int array of class indices ``0..n_classes-1``.
    sample_weight : non-negative float array, or None for unit weights.
    max_depth : depth limit (root alone is depth 0).
    min_samples_leaf : least number of instances in every leaf.
    cache_limit : most cache entries kept, or None (beyond it the search caches less).
    memory_limit : bytes the solver may hold (data, workspaces, cache), or None. The search
        stops (``DPSolution.limit == "memory_limit"``) when the cache would outgrow it.
    techniques : switches for ablation, ``{name: bool}`` over :data:`TECHNIQUES` (all on
        by default except those in :data:`DEFAULT_OFF`). ``"minimal_size"``: among optimal
        trees, one with the fewest splits (MurTree's order); off, the first one found.
    """

    # A parallel solve's tasks per worker (see .parallel): workers merge each other's caches
    # between tasks, so small tasks solve few subproblems twice (german-credit at depth 5:
    # 1.6x the serial depth-2 solves with 4 tasks a worker and no merging, 1.08x with 16).
    tasks_per_worker = 16

    def __init__(self, X: np.ndarray, y: np.ndarray, n_classes: int, *, sample_weight=None,
                 max_depth: int = 3, min_samples_leaf: int = 1, cache_limit: int | None = None,
                 memory_limit: float | None = None, techniques: dict[str, bool] | None = None,
                 seed: int = 0) -> None:
        X = np.asarray(X, dtype=bool)
        # Columns that split the data the same way (duplicates, complements) or not at all
        # (constants) add nothing: search one column per distinct split. Many benchmark sets
        # hold every feature next to its complement, so this halves their width.
        self.columns = distinct_splits(X)
        X = X[:, self.columns]
        n, m = X.shape
        check_problem_size(n, m, n_classes)
        self.n_classes = int(n_classes)
        self.labels = np.ascontiguousarray(y, dtype=np.int64)
        # Equal weights count as unit weights (popcount path); costs are scaled back.
        w = None if sample_weight is None else np.asarray(sample_weight, np.float64)
        if w is not None and len(w) == n > 0 and w[0] > 0 and (w == w[0]).all():
            # scaled_weights' answer for equal weights, without its slower np.all calls
            self.weights, self.scale, self.unit = w / w[0], float(w[0]), True
        else:
            self.weights, self.scale, self.unit = scaled_weights(sample_weight, n)
        self.cost_scale = self.scale  # kernel costs times this are the objective
        self.max_weight = float(self.weights.max()) if n else 1.0
        self.max_depth = int(max_depth)
        self.min_leaf = max(1, int(min_samples_leaf))
        self.F = _pack(X.T) if m else np.zeros((0, max(1, (n + 63) // 64)), np.uint64)
        self.class_bits = _pack(self.labels[None, :] == np.arange(self.n_classes)[:, None])
        self.all_bits = _all_bits(n)
        self.flags = _DEFAULT_FLAGS.copy()  # + minimal_size
        for name, on in (techniques or {}).items():
            if name not in _FLAG_INDEX:
                raise ValueError(f"unknown technique {name!r}; known: {', '.join(TECHNIQUES)}")
            self.flags[_FLAG_INDEX[name]] = bool(on)
        self.zob = _zobrist(seed, 2 * m + 2)
        # Kernel costs are integers with unit weights; a split costs `penalty` more.
        self.integral = self.unit
        resolution = 1.0 if self.unit else 1e-9 * max(1.0, float(self.weights.sum()))
        self.penalty = split_penalty(resolution, self.max_depth) if self.flags[_MINIMAL_SIZE] \
            else 0.0
        self.flags = self.flags[:_MINIMAL_SIZE]
        D = self.max_depth
        # Full pair matrices (general weights, or incremental counting) up to PAIR_MATRIX_BYTES;
        # beyond it pairs are counted row by row. Unit weights otherwise popcount rows.
        matrix = not self.unit or self.flags[USE_INCREMENTAL]
        cap = int(min(m, np.sqrt(PAIR_MATRIX_BYTES / (8 * (self.n_classes + 1))))) if matrix else 0
        self._ws = workspace(X, self.n_classes, cap)
        # Each row's features, for counting into the pair matrices (none without them).
        self.row_ptr, self.row_feat = np.zeros(n + 1, np.int64), np.zeros(0, np.int64)
        if cap:
            rows, cols = np.nonzero(X)  # row-major order: each row's features ascending
            self.row_ptr = np.searchsorted(rows, np.arange(n + 1)).astype(np.int64)
            self.row_feat = cols.astype(np.int64)
        slots = ARCHIVE * (D + 1)
        self._archive = (np.zeros((slots, self.F.shape[1]), np.uint64), np.zeros((slots, 1 << D)),
                         np.zeros(slots, np.bool_))
        self.stats = np.zeros(len(STAT_NAMES), np.int64)
        self.stats_names = STAT_NAMES
        self._all_roots = np.ones(m, np.bool_)
        self._snap = np.zeros((D + 2, 4), np.int64)  # the kernel's incumbent on a time-out
        self._depth2_memo: dict[int, BinaryNode] = {}
        self._width = m  # frames try every split (see _widen)
        # Bytes held besides the cache: data, workspaces.
        self.fixed_bytes = sum(a.nbytes for a in (self.F, self.class_bits, self.row_ptr,
                                                  self.row_feat, self.labels, self.weights,
                                                  *self._ws, *self._archive))
        cache_bytes = np.inf if memory_limit is None else float(memory_limit) - self.fixed_bytes
        # A small start (the arrays double as entries come): a first capacity of 4096 took
        # about 0.1 ms to allocate and zero, a tenth of a millisecond fit.
        self.cache = Cache(D, 2**62 if cache_limit is None else int(cache_limit), capacity=256,
                           max_bytes=max(cache_bytes, 0.0))
        self.progress: Progress | None = None
        self.track_best = True  # False: the caller reports its own objective (penalised fits)

    @property
    def max_budget(self) -> int:
        return (1 << self.max_depth) - 1

    @property
    def tolerance(self) -> float:
        """Objective values closer than this are equal (sums of fractional weights depend on
        their order)."""
        return 1e-9 * max(1.0, float(self.weights.sum())) * self.scale

    def plan_parallel(self, n_tasks: int,
                      max_nodes: int | None = None) -> tuple[list[np.ndarray], DPSolution]:
        """About ``n_tasks`` disjoint shares of the root's features, as ``roots`` for
        :meth:`solve`, and the optimal tree of depth <= 2 (a first incumbent). Features are
        dealt round-robin in order of their best depth-2 tree, cheapest first, so every share
        starts with a promising root and shares take similar time."""
        m = self.F.shape[0]
        budget = self.max_budget if max_nodes is None else min(int(max_nodes), self.max_budget)
        tree = self._depth2_tree(self.all_bits, min(2, self.max_depth), min(budget, 3))
        cost = self._ws[5][F_ROOT, :m].copy()  # each root's best depth-2 tree, from that solve
        order = np.argsort(cost, kind="stable")
        order = order[cost[order] < INF]  # features that split the rows
        tasks = []
        for k in range(min(n_tasks, len(order))):
            roots = np.zeros(m, np.bool_)
            roots[order[k::n_tasks]] = True
            tasks.append(roots)
        cost = self._fill_counts(tree)
        self._to_input_columns(tree)
        return tasks, DPSolution(tree, cost, 0.0, False)

    def narrow_roots(self, roots: np.ndarray, feature: int) -> np.ndarray:
        """The share ``roots`` narrowed to ``feature``, the root feature (input column, -1: a
        leaf) of a tree a restricted solve returned, when that feature is in it: the share's
        first feature reaching an optimum its bound never excluded (see :mod:`.parallel`)."""
        f = int(np.searchsorted(self.columns, feature))
        if feature < 0 or f >= len(self.columns) or self.columns[f] != feature \
                or not roots[f]:
            return roots
        one = np.zeros_like(roots)
        one[f] = True
        return one

    # ------------------------------------------------------------------ search
    def _search(self, bits, path, depth, budget, ub, deadline, progress=None, roots=None,
                board=None, width=None):
        """Run the kernel on one branch; ``progress`` (the root's solve only) reports it."""
        path_buf = np.zeros(self.max_depth + 1, np.int64)
        path_buf[: len(path)] = path
        stopped = self.progress is not None and self.progress.interrupted
        if board is None:
            board = new_board()
        board[DEADLINE] = -INF if stopped else deadline
        args = (self.F, self.class_bits, self.labels, self.weights, self.unit,
                self.max_weight, self.row_ptr, self.row_feat, self.min_leaf, self.zob,
                self.flags, bits, path_buf, len(path), depth, budget, ub, board,
                *self.cache.arrays(), self.cache.state, self.stats, *self._ws, *self._archive,
                self._all_roots if roots is None else roots, self.penalty, self._snap,
                self._width if width is None else width)
        if progress is None:
            out = search(*args)
        else:
            out = progress.run(search, board, *args, scale=self.scale, track=self.track_best,
                               count=(self.stats, ST_FRAMES))
        self.cache.update(out[7:12])
        return out[:7]

    def solve(self, max_nodes: int | None = None, *, upper_bound: float = INF,
              time_limit: float | None = None, progress: Progress | None = None,
              roots: np.ndarray | None = None,
              board: np.ndarray | None = None) -> DPSolution | None:
        """Optimal tree with at most ``max_nodes`` branching nodes (default: full depth); among
        optimal trees one with the fewest splits (unless the "minimal_size" technique is off).

        ``upper_bound``: only trees strictly cheaper are sought (cheaper in the order above:
        cost, then splits); returns None when none exists. With ``time_limit`` (seconds), or
        once ``progress`` is interrupted, the best tree found so far is returned, not optimal.

        ``roots`` (one of :meth:`root_tasks`) restricts the root's split: the answer is then the
        best tree splitting the root there (or a better small tree found on the way), and
        ``lower_bound`` bounds only those trees. ``board`` is a board (see
        :mod:`exactree.progress`) to run on, e.g. one another process tightens ``BOUND`` on.
        """
        self.progress = progress
        budget = self.max_budget if max_nodes is None else min(int(max_nodes), self.max_budget)
        start = time.perf_counter()
        deadline = INF if time_limit is None else start + float(time_limit)
        ub = upper_bound / self.scale if upper_bound < INF else INF
        asked = ub  # trees at or above it are not answers, even when found on the way
        self._deadline, self._rebuilt_exactly = deadline, True
        incumbent = None  # (tree, kernel objective) of the best tree found outside the search
        filled = None  # (tree, cost) of _rebuild_compiled
        # (end of the exact search's slice, narrow widths searched before it)
        plan = [(deadline, None)]
        if deadline < INF and roots is None:
            # Anytime: a short exact attempt (most small problems end in it), then narrow
            # searches and the exact search under their best tree; if that has not ended after a
            # share of the time, wider narrow searches and the exact search again (its cache kept).
            span = deadline - start
            plan = [(start + min(QUICK_EXACT * span, QUICK_EXACT_SECONDS), None),
                    (start + EXACT_SLICE * span, (1, NARROW_WIDTH)),
                    (deadline, (2 * NARROW_WIDTH, self.F.shape[0]))]
        for slice_end, widths in plan:
            if widths is not None:
                incumbent = self._widen(budget, ub, incumbent, deadline, progress, *widths)
            if incumbent is not None:
                ub = min(ub, incumbent[1])
            if (incumbent is not None and self.flags[USE_PERFECT_FINAL]
                    and perfect_is_final(incumbent[1], self.penalty, self.max_depth)):
                # A tree without errors: optimal, and final (as in the search, see _search).
                outcome, cost = DONE, INF
                break
            outcome, cost, lb, feat, nl, nr, _ = self._search(self.all_bits, [], self.max_depth,
                                                              budget, ub, slice_end, progress,
                                                              roots, board)
            if outcome == DONE or slice_end == deadline or self._stopped():
                break
            if cost < INF:  # (the exact search's best so far bounds the wider searches too)
                incumbent = self._better(incumbent, self._rebuild_snapshot())
                ub = min(ub, incumbent[1])
        self._rebuilt_exactly = True
        if cost == INF and outcome == DONE:
            if incumbent is None or incumbent[1] >= asked:
                return None
            tree, lb = incumbent[0], incumbent[1]  # nothing beats it: optimal
        elif outcome != DONE:
            # The kernel's incumbent (a leaf when it found no tree below the bound).
            tree = self._rebuild_snapshot() if cost < INF else BinaryNode(LEAF, _NO_COUNTS)
        elif self.max_depth <= 2 and self.flags[USE_DEPTH2]:
            tree = self._depth2_tree(self.all_bits, self.max_depth, budget)
        else:
            filled = self._rebuild_compiled(budget, feat, nl, nr)
            tree = filled[0] if filled is not None else self._rebuild(
                self.all_bits, [], self.max_depth, feat, nl, nr)
        # Subtrees missing from the cache are solved again within the same deadline; one cut
        # short leaves a valid but possibly worse subtree, so the answer is no longer proven.
        optimal = outcome == DONE and self._rebuilt_exactly
        if not optimal and roots is None:
            # The narrow searches' tree or the optimal depth-2 tree may beat what the exact
            # search holds.
            for other in ([incumbent[0]] if incumbent else []) + [self._root_depth2_tree(budget)]:
                if self._rank(other) < self._rank(tree):
                    tree = other
        if incumbent is not None:
            lb = min(lb, incumbent[1])  # the search looked only below the incumbent
        if filled is not None and tree is filled[0]:
            cost = filled[1]  # counted, in input columns already
        else:
            cost = self._fill_counts(tree)
            self._to_input_columns(tree)
        lb = solver_cost_bound(self, lb * self.scale)
        if not optimal:
            lb = max(lb, self.equivalent_points_bound())
        limit = None if optimal else "memory_limit" if self.cache.full else "time_limit"
        # Proven: the tree's own cost (the kernel's sums differ from it by rounding, and its
        # bound by the split penalties).
        return DPSolution(tree, cost, cost if optimal else min(lb, cost), optimal,
                          dict(zip(STAT_NAMES, self.stats.tolist()),
                               cache_entries=self.cache.n_entries), limit)

    def _stopped(self) -> bool:
        """Ctrl-C or the memory limit ended the search."""
        return self.cache.full or (self.progress is not None and self.progress.interrupted)

    def _rank(self, tree: BinaryNode) -> float:
        """``tree``'s kernel objective (cost and penalties, in kernel units)."""
        return self._fill_counts(tree) / self.scale + self.penalty * tree.n_splits

    def _better(self, incumbent, tree: BinaryNode):
        rank = self._rank(tree)
        return (tree, rank) if incumbent is None or rank < incumbent[1] else incumbent

    def _widen(self, budget: int, ub: float, incumbent, deadline: float,
               progress: Progress | None, first: int, last: int):
        """Narrow searches: every node tries only its ``first``, then twice as many, ... up to
        ``last`` most promising splits (see ``_search.search``'s ``width``) while the time spent
        here stays under :data:`WIDEN_SHARE` of what was left and each width finds a tree
        better than ``ub`` and ``incumbent`` (once there is one). Returns the best ``(tree,
        kernel objective)`` of ``incumbent`` and theirs: a good tree early, and a bound that
        prunes the exact search."""
        m = self.F.shape[0]
        if self.max_depth < 3 or not (self.flags[USE_DEPTH2] and self.flags[USE_DEPTH2_INCUMBENT]):
            return incumbent
        start = time.perf_counter()
        stop = start + WIDEN_SHARE * (deadline - start)
        width = first
        while width <= last and width < m and time.perf_counter() < stop and not self._stopped():
            self._width = width
            try:
                outcome, cost, _, feat, nl, nr, _ = self._search(
                    self.all_bits, [], self.max_depth, budget, ub, stop, progress, width=width)
                if outcome != DONE:
                    break
                if cost < ub:
                    ub = cost
                    tree = self._rebuild(self.all_bits, [], self.max_depth, feat, nl, nr)
                    incumbent = self._better(incumbent, tree)
                elif incumbent is not None:
                    # Nothing better at this width: a wider one costs more for less, and the
                    # exact search gets the time (ionosphere at depth 4: the widths past one
                    # that found nothing took 1.5 s of a 10 s limit and the proof missed it).
                    break
            finally:
                self._width = m
            width *= 2
        return incumbent

    def _root_depth2_tree(self, budget: int) -> BinaryNode:
        """A copy of the optimal tree of depth <= 2 of all rows (in kernel columns)."""
        b = min(budget, 3)
        if b not in self._depth2_memo:
            self._depth2_memo[b] = self._depth2_tree(self.all_bits, min(2, self.max_depth), b)
        return copy.deepcopy(self._depth2_memo[b])

    def _rebuild_snapshot(self) -> BinaryNode:
        """The kernel's incumbent after a time-out (see ``_search._snapshot``): a path of
        splits down to a frame's own incumbent; a child beside the path that was solved comes
        from the cache, one that was not gets its optimal tree of depth <= 2."""
        snap = self._snap.copy()  # subtrees solved again below write the kernel's copy
        k = int(snap[0, 0])
        bits, path, depth = self.all_bits, [], self.max_depth
        root = parent = None
        for j in range(k):
            f, path_left, other_budget, solved = (int(v) for v in snap[1 + j])
            node = BinaryNode(f, _NO_COUNTS)
            sides = ((bits & self.F[f], path + [2 * f + 1]), (bits & ~self.F[f], path + [2 * f]))
            (bits, path), (other_bits, other_path) = sides if path_left else sides[::-1]
            if solved:
                other = self._node(other_bits, other_path, depth - 1, other_budget)
            else:
                other = self._depth2_tree(other_bits, min(2, depth - 1), min(other_budget, 3))
            node.true, node.false = (None, other) if path_left else (other, None)
            if parent is None:
                root = node
            elif parent.true is None:
                parent.true = node
            else:
                parent.false = node
            parent = node
            depth -= 1
        node = self._rebuild(bits, path, depth, *(int(v) for v in snap[1 + k, :3]))
        if parent is None:
            return node
        if parent.true is None:
            parent.true = node
        else:
            parent.false = node
        return root

    def equivalent_points_bound(self) -> float:
        """See :func:`equivalent_points_bound`: rows with identical binary features."""
        return equivalent_points_bound(np.packbits(self._ws[0], axis=1), self.labels,
                                       self.weights * self.scale, self.n_classes)

    # ------------------------------------------------------------------ reconstruction
    def _to_input_columns(self, root: BinaryNode) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            if node.feature >= 0:
                node.feature = int(self.columns[node.feature])
                stack += [node.true, node.false]

    def _fill_counts(self, root: BinaryNode) -> float:
        """Set every node's class weights (one compiled pass of the rows down the tree); returns
        the tree's misclassified weight, its leaves summed in the order of
        :attr:`BinaryNode.cost`."""
        nodes, stack = [], [root]  # preorder, false child first (BinaryNode.cost's order)
        while stack:
            node = stack.pop()
            nodes.append(node)
            if node.feature >= 0:
                stack += [node.true, node.false]
        index = {id(node): i for i, node in enumerate(nodes)}
        n = len(nodes)
        feature = np.full(n, -1, np.int64)
        true_child = np.zeros(n, np.int64)
        false_child = np.zeros(n, np.int64)
        for i, node in enumerate(nodes):
            if node.feature >= 0:
                feature[i] = node.feature
                true_child[i], false_child[i] = index[id(node.true)], index[id(node.false)]
        counts = np.zeros((n, self.n_classes))
        route_weights(self._ws[0], self.labels, self.weights * self.scale, feature, true_child,
                      false_child, counts)
        for i, node in enumerate(nodes):
            node.counts = counts[i]
        leaves = counts[feature < 0]
        total = 0.0
        for c in (leaves.sum(axis=1) - leaves.max(axis=1)).tolist():
            total += c
        return total

    def _rebuild_compiled(self, budget: int, feat: int, nl: int,
                          nr: int) -> tuple[BinaryNode, float] | None:
        """``_rebuild`` of the root, then ``_fill_counts`` and ``_to_input_columns``, in one
        compiled pass (:func:`_rebuild_arrays`): ``(tree, cost)``, or None where it does not
        apply (a subtree missing from the cache, the depth-2 solver or the cache off)."""
        if not (self.flags[USE_DEPTH2] and self.flags[USE_CACHE]):
            return None
        D = self.max_depth
        cap = min(2 * budget + 1, (1 << (D + 1)) - 1)
        ok, n_nodes, feature, true_child, false_child, counts = _rebuild_arrays(
            self.F, self.all_bits, self.zob, *self.cache.arrays(), True, D, int(feat),
            int(nl), int(nr), cap, self.labels, self.weights, self.unit,
            self.flags[USE_INCREMENTAL], self.row_ptr, self.row_feat, self.n_classes,
            self.min_leaf, *self._ws, self.weights * self.scale, self.penalty)
        if not ok:
            return None
        leaf = feature < 0
        leaves = counts[leaf]
        total = 0.0  # summed as _fill_counts does (its preorder)
        for c in (leaves.sum(axis=1) - leaves.max(axis=1)).tolist():
            total += c
        split = ~leaf
        feature[split] = self.columns[feature[split]]  # input columns (_to_input_columns)
        columns = feature.tolist()
        trues, falses = true_child.tolist(), false_child.tolist()
        nodes: list[BinaryNode] = [None] * n_nodes  # type: ignore[list-item]
        for i in range(n_nodes - 1, -1, -1):  # children come after their parent
            j = columns[i]
            nodes[i] = (BinaryNode(j, counts[i]) if j < 0 else
                        BinaryNode(j, counts[i], nodes[trues[i]], nodes[falses[i]]))
        return nodes[0], total

    def _rebuild(self, bits, path, depth, feat, nl, nr) -> BinaryNode:
        """The subtree splitting on ``feat`` with children budgets ``nl``/``nr`` (leaf if < 0);
        class weights are left to :meth:`_fill_counts`."""
        node = BinaryNode(int(feat), _NO_COUNTS)
        if feat < 0 or depth == 0:
            node.feature = -1
            return node
        node.true = self._node(bits & self.F[feat], path + [2 * feat + 1], depth - 1, nl)
        node.false = self._node(bits & ~self.F[feat], path + [2 * feat], depth - 1, nr)
        return node

    def _node(self, bits, path, depth, budget) -> BinaryNode:
        """The optimal subtree of a branch, read from the cache or solved again."""
        if budget == 0 or depth == 0:
            return BinaryNode(-1, _NO_COUNTS)
        if depth <= 2 and self.flags[USE_DEPTH2]:
            return self._depth2_tree(bits, depth, budget)
        feat, nl, nr = UNKNOWN, 0, 0
        if self.flags[USE_CACHE]:
            h = np.int64(0)
            for lit in path:
                h ^= self.zob[lit]
            buf = np.array(path + [0], np.int64)
            e = find(self.cache.index, self.cache.keys, self.cache.meta, h, buf, len(path),
                     np.zeros(len(path) + 1, np.int64))
            if e >= 0:
                slot = self.cache.meta[e, 2] + budget
                if self.cache.bounds[slot, 1] < INF:
                    feat, nl, nr = self.cache.split[slot, :3]
        if feat == UNKNOWN:  # not cached (limit reached or caching off): solve it again
            outcome, _, _, feat, nl, nr, _ = self._search(bits, path, depth, budget, INF,
                                                          self._deadline)
            self._rebuilt_exactly &= outcome == DONE
        return self._rebuild(bits, path, depth, feat, nl, nr)

    def _depth2_tree(self, bits, depth, budget) -> BinaryNode:
        idx = np.flatnonzero(np.unpackbits(bits.view(np.uint8),
                                           bitorder="little")[: len(self.labels)])
        out = np.zeros((5, 4))
        max_budget = min(budget, (1 << depth) - 1)
        solve_depth2(idx, len(idx), self.labels, self.weights, self.unit,
                     self.flags[USE_INCREMENTAL], self.row_ptr,
                     self.row_feat, self.n_classes, self.min_leaf, max_budget, *self._ws, out,
                     self.penalty)
        b = max_budget
        root = int(out[1, b])
        node = BinaryNode(root, _NO_COUNTS)
        if root < 0:
            return node
        for side, child_feat in ((True, int(out[3, b])), (False, int(out[4, b]))):
            child = BinaryNode(child_feat, _NO_COUNTS)
            if child_feat >= 0:
                child.true = BinaryNode(-1, _NO_COUNTS)
                child.false = BinaryNode(-1, _NO_COUNTS)
            if side:
                node.true = child
            else:
                node.false = child
        return node
