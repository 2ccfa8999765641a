"""Pre-processing, exact search at one penalty, and tree building for optimal dyadic trees.

Pipeline (Hush & Porter, sections 2, 5 and 6):

1. Weighted data set: every sample gets a loss vector ``w_j = c_j @ loss`` (``c_j`` its
   sample-weighted one-hot class row; ``loss[true, predicted]``, 0/1 by default).
2. Duplicate replacement: samples with equal ``x`` become one surrogate whose loss vector is the
   sum, translated so its minimum component is 0. The translation only adds a constant to every
   tree's error (kept in ``offset`` so reported errors are the true ones).
3. Scaling: each feature's training range ``[lo, hi]`` is the unit interval; the dyadic split
   points of coordinate ``i`` are ``lo + (hi - lo) * m / 2**k_i``. A row's finest cell is the
   number of those thresholds strictly below its value, so ``x <= t`` goes left exactly as
   :class:`~exactree.tree.Tree` routes it: the tree predicts on training data what the search
   optimised.
4. Automatic ``k`` (section 5, made robust, see :func:`_auto_k`): the smallest uniform ``k0``
   whose grid reaches the least error of any grid up to ``MAX_AUTO_K`` (zero unless conflicting
   samples are near-duplicates, which are ignored with a warning), then per-coordinate
   reductions that keep that error.
5. Compression: no tree of ``T_k`` separates two samples in the same finest cell, so each
   occupied finest cell becomes one surrogate (summed, translated loss vector).

The search itself is the Numba kernel :func:`~._kernels.solve_dyadic`.

Time limit: :func:`prepare` takes a ``deadline`` (a ``time.perf_counter()`` value) and raises
:class:`~exactree.data.validation.TimeLimitReached` once it has passed, between its steps and
between the grids of the automatic ``k``; :func:`solve` passes the board's deadline to the
kernel, which stops with the best tree found (:attr:`DyadicSolution.complete` false).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...data.validation import TimeLimitReached, check_deadline
from ...limits import MemoryLimitError, check_memory, format_bytes
from ...progress import new_board
from ...tree import Tree, TreeBuilder
from ._kernels import grid_loss, group_rows, solve_dyadic

#: Cap on the automatic uniform ``k0`` (2**20 cells per coordinate).
MAX_AUTO_K = 20
#: Hard cap on ``k_i`` (the packed rectangle key must fit an int64).
MAX_K = 30
#: Peak bytes of the search's hash table per stored rectangle: five 8-byte arrays of ``P``
#: slots, ``P`` at least twice the rectangles stored, and while the table grows the old and the
#: new (twice as large) table side by side: ``40 * (2 + 4)`` bytes per rectangle at worst.
RECTANGLE_BYTES = 240


def prepare_bytes(n: int, d: int, n_classes: int) -> float:
    """Peak bytes of :func:`prepare` on ``n`` rows, ``d`` columns and ``n_classes`` classes
    beyond its input: the kept rows, ``np.unique``'s sorted copies and the distinct points,
    the cell codes (about 64 bytes a cell, 62-68 measured with tracemalloc at 20k-100k rows),
    the class weights and losses (about 32 bytes a row and class) and row indices (64 a row)."""
    return 64.0 * n * d + 32.0 * n * n_classes + 64.0 * n


@dataclass
class DyadicProblem:
    """A prepared (scaled, compressed) problem over the active coordinates."""

    cells: np.ndarray          # (n_hat, d_act) int64 finest cell per active coordinate
    W: np.ndarray              # (n_hat, K) translated loss vectors (row minimum 0)
    C: np.ndarray              # (n_hat, K) class weights (for node values)
    kvec: np.ndarray           # (d_act,) splits per active coordinate (all >= 1)
    features: np.ndarray       # (d_act,) original column of each active coordinate
    thresholds: list           # per active coordinate: 2**k_i - 1 split points, original units
    k: np.ndarray              # (n_features,) k per original feature (0: never split)
    offset: float              # error every tree pays (removed by the translation)
    total_weight: float        # sum of sample weights (errors are divided by it)
    n_features: int
    n_classes: int
    lower: np.ndarray          # bounding box of the training data
    upper: np.ndarray
    constant: np.ndarray       # (n_features,) bool: constant columns
    stats: dict = field(default_factory=dict)

    @property
    def tol(self) -> float:
        """Tie tolerance on internal (weight-unit) risks."""
        return 1e-10 * max(1.0, float(self.W.sum()) + 1.0)

    def to_internal(self, penalty: float) -> float:
        """Penalty per leaf as a fraction of the total weight -> weight units."""
        return float(penalty) * self.total_weight

    def to_fraction(self, internal_err: float) -> float:
        """Internal (translated, weight-unit) error -> true error as a fraction of the weight."""
        return (float(internal_err) + self.offset) / self.total_weight


@dataclass
class DyadicSolution:
    """Result of one exact search at one penalty (internal units)."""

    lam: float
    err: float                 # internal (translated) error of the optimal tree
    leaves: int
    visited: int               # rectangles visited (= stored in the hash table)
    heuristic: float           # largest local break-point below lam (-1: none)
    nodes: dict                # packed key -> (split coordinate or -1, label) of the optimal
                               # tree's occupied rectangles (the hash table itself is dropped)
    complete: bool = True      # False: the deadline stopped the search; the tree is the best
                               # found, ``err``/``leaves`` its true values, not a proven optimum


def _group(cells: np.ndarray, bits: np.ndarray,
           deadline: float | None = None) -> tuple[np.ndarray, int]:
    """Group equal rows of ``cells``: (inverse index, number of groups). Groups are numbered
    in the order of their packed codes where ``bits`` fit in 62, else in order of first
    occurrence (:func:`~._kernels.group_rows`; ``np.unique(axis=0)`` sorted 100,000 rows x 20
    columns in about half a second). Raises TimeLimitReached past ``deadline``."""
    n, d = cells.shape
    if d == 0:
        return np.zeros(n, np.int64), 1 if n else 0
    if int(bits.sum()) <= 62:
        code = np.zeros(n, np.int64)
        for j in range(d):
            code = (code << int(bits[j])) | cells[:, j]
        _, inv = np.unique(code, return_inverse=True)
        inv = inv.ravel().astype(np.int64)
        return inv, int(inv.max()) + 1 if n else 0
    return _group_rows(np.ascontiguousarray(cells, np.int64), deadline)


def _group_rows(A: np.ndarray, deadline: float | None) -> tuple[np.ndarray, int]:
    """:func:`~._kernels.group_rows` of the int64 matrix ``A`` (exact rows)."""
    inv = np.empty(len(A), np.int64)
    g = group_rows(A, np.zeros(A.shape[1], np.int64), inv,
                   math.inf if deadline is None else deadline)
    if g < 0:
        raise TimeLimitReached
    return inv, g


def _unique_points(X: np.ndarray, deadline: float | None) -> tuple[np.ndarray, int]:
    """(inverse index, number of distinct rows) of the float matrix ``X`` (finite): rows are
    equal when their values are (``-0.0`` is ``0.0``), in order of first occurrence."""
    bits = np.ascontiguousarray(X + 0.0).view(np.int64)  # + 0.0 turns -0.0 into 0.0
    return _group_rows(bits, deadline)


def _translate(W: np.ndarray) -> tuple[np.ndarray, float]:
    m = W.min(axis=1)
    return W - m[:, None], float(m.sum())


def _thresholds(lo: float, hi: float, k: int) -> np.ndarray:
    """The ``2**k - 1`` dyadic split points of ``[lo, hi]`` (exact binary fractions of the range)."""
    return lo + (hi - lo) * (np.arange(1, 2**k, dtype=np.float64) / float(2**k))


def _cells(x: np.ndarray, thr: np.ndarray) -> np.ndarray:
    """Finest cell of every value: the number of split points strictly below it."""
    return np.searchsorted(thr, x, side="left").astype(np.int64)


def _cells_at(x: np.ndarray, lo: float, hi: float, k: int) -> np.ndarray:
    """:func:`_cells` of ``x`` for the ``2**k - 1`` thresholds of ``[lo, hi]``, without listing
    them (``2**20`` per feature would cost more than the search): an estimate, then corrected
    against the exact threshold arithmetic of :func:`_thresholds`."""
    n_thr = 2**k - 1

    def thr(m: np.ndarray) -> np.ndarray:
        return lo + (hi - lo) * (m.astype(np.float64) / float(2**k))

    with np.errstate(invalid="ignore", divide="ignore"):
        est = np.floor((x - lo) / (hi - lo) * 2**k) if hi > lo else np.zeros(len(x))
    c = np.clip(np.nan_to_num(est), 0, n_thr).astype(np.int64)
    while True:  # c = number of thresholds m (1-based) with thr(m) < x
        up = (c < n_thr) & (thr(c + 1) < x)
        down = (c > 0) & (thr(c) >= x)
        if not up.any() and not down.any():
            return c
        c = c + up - down


def _grid_loss(fine: np.ndarray, k_fine: int, kc: np.ndarray, W: np.ndarray,
               deadline: float | None = None) -> float:
    """Least error of the grid with ``kc[j]`` splits per column: the sum over occupied cells of
    the cell's smallest loss. ``fine`` holds every row's cell at ``k_fine`` splits per column.
    Raises TimeLimitReached once ``deadline`` has passed (checked before and inside)."""
    check_deadline(deadline)
    loss = grid_loss(fine, (k_fine - kc).astype(np.int64), W,
                     math.inf if deadline is None else deadline)
    if loss != loss:  # NaN: out of time
        raise TimeLimitReached
    return float(loss)


def _auto_k(X: np.ndarray, W: np.ndarray, lo: np.ndarray, hi: np.ndarray, active: np.ndarray,
            tol: float, deadline: float | None = None) -> tuple[np.ndarray, int, dict]:
    """Section 5, made robust: the coarsest grid that reaches the least error any grid up to
    ``MAX_AUTO_K`` splits per coordinate reaches.

    1. ``floor``: that least error at ``MAX_AUTO_K`` (0 unless conflicting samples lie closer
       than ``2**-MAX_AUTO_K`` of a feature's range: near-duplicates no sensible grid separates,
       so they are ignored instead of driving ``k`` up).
    2. ``k0``: the smallest uniform ``k`` whose grid error is ``floor`` (the paper's zero-loss
       ``k0`` when ``floor`` is 0).
    3. Per-coordinate reduction from ``k0``: repeatedly lower by one the largest ``k_i`` (first
       coordinate on ties) whose decrement keeps the grid error at ``floor``, until none can.
       (The paper's "same partition of the samples" test, coordinate after coordinate, can
       drop the one informative coordinate once another one alone isolates every sample.)

    Returns (k per feature, k0, info) with info keys ``zero_loss_grid``, ``floor``,
    ``conflicting_cells`` (finest cells with conflicting samples) and ``capped`` (``k0`` reached
    ``MAX_AUTO_K``).

    Raises TimeLimitReached once ``deadline`` has passed (read before every grid).
    """
    cols = np.flatnonzero(active)
    k = np.zeros(X.shape[1], np.int64)
    info = dict(zero_loss_grid=True, floor=0.0, conflicting_cells=0, capped=False)
    if len(cols) == 0:
        return k, 0, info
    kmax = MAX_AUTO_K
    fine = np.empty((len(X), len(cols)), np.int64)
    for a, j in enumerate(cols):
        check_deadline(deadline)
        fine[:, a] = _cells_at(X[:, j], lo[j], hi[j], kmax)
    full = np.full(len(cols), kmax, np.int64)
    inv, g = _group(fine, full + 1, deadline)
    sums = np.zeros((g, W.shape[1]))
    np.add.at(sums, inv, W)
    cell_floor = sums.min(axis=1)
    floor = float(cell_floor.sum())
    info.update(floor=floor, conflicting_cells=int(np.sum(cell_floor > tol)),
                zero_loss_grid=bool(floor <= tol))
    target = floor + tol
    k0 = kmax
    for kk in range(kmax + 1):
        if _grid_loss(fine, kmax, np.full(len(cols), kk, np.int64), W, deadline) <= target:
            k0 = kk
            break
    info["capped"] = bool(k0 == kmax and kmax > 0 and _grid_loss(
        fine, kmax, np.full(len(cols), kmax - 1, np.int64), W, deadline) > target)
    kc = np.full(len(cols), k0, np.int64)
    while True:
        order = sorted((a for a in range(len(cols)) if kc[a] > 0), key=lambda a: (-kc[a], a))
        for a in order:
            trial = kc.copy()
            trial[a] -= 1
            if _grid_loss(fine, kmax, trial, W, deadline) <= target:
                kc = trial
                break
        else:
            break
    k[cols] = kc
    return k, k0, info


def estimate_rectangles(n_hat: int, kvec: np.ndarray) -> tuple[int, int, int]:
    """(estimate, n_hat * prod(k_i + 1), |sigma_k| = prod(2**(k_i+1) - 1)) as exact integers."""
    rho, sigma = 1, 1
    for ki in kvec.tolist():
        rho *= ki + 1
        sigma *= 2 ** (ki + 1) - 1
    return min(n_hat * rho, sigma), n_hat * rho, sigma


def prepare(X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray, n_classes: int, *,
            loss: np.ndarray | None = None, max_splits: Any = "auto", compress: bool = True,
            max_rectangles: int = 10_000_000, memory_bytes: float | None = None,
            deadline: float | None = None) -> DyadicProblem:
    """Build the weighted, scaled and (optionally) compressed problem.

    Refuses (:class:`~exactree.limits.MemoryLimitError`, before the search allocates its
    table) a problem whose rectangle bound exceeds ``max_rectangles``, or whose prepared
    arrays and table (:data:`RECTANGLE_BYTES` per rectangle of the bound) exceed
    ``memory_bytes`` (None: no byte budget; the caller checks :func:`prepare_bytes` first).

    ``X`` numeric (n, d), ``y`` class indices, ``sample_weight`` non-negative. Rows with zero
    weight carry no loss and are dropped (they do not widen the bounding box).

    ``deadline`` (a ``time.perf_counter()`` value; None: none) is read between the steps and
    inside the long ones: past it :class:`~exactree.data.validation.TimeLimitReached`.
    """
    X = np.asarray(X, np.float64)
    n, d = X.shape
    keep = sample_weight > 0
    X, y, sw = X[keep], np.asarray(y)[keep], sample_weight[keep]
    total = float(sw.sum())
    L = (1.0 - np.eye(n_classes)) if loss is None else np.asarray(loss, np.float64)
    C = np.zeros((len(y), n_classes))
    C[np.arange(len(y)), y] = sw
    lo, hi = X.min(axis=0), X.max(axis=0)
    constant = ~(hi > lo)
    stats: dict[str, Any] = {"n_samples": int(n), "n_weighted": int(len(y))}

    # Duplicate replacement (always for choosing k: conflicting duplicates are never zero-loss).
    check_deadline(deadline)
    inv, g = _unique_points(X, deadline)
    Xu = np.zeros((g, d))
    Xu[inv] = X
    Cu = np.zeros((g, n_classes))
    np.add.at(Cu, inv, C)
    stats["n_unique"] = int(g)
    if compress:
        X, C = Xu, Cu
    W, offset = _translate(C @ L)
    Wu = _translate(Cu @ L)[0]
    tol = 1e-10 * max(1.0, float(W.sum()) + 1.0)

    if isinstance(max_splits, str):  # "auto"
        k, k0, info = _auto_k(Xu, Wu, lo, hi, ~constant, tol, deadline)
        stats.update(k0=int(k0), zero_loss_grid=info["zero_loss_grid"],
                     auto_k_capped=info["capped"], auto_k_conflicts=info["conflicting_cells"])
        if info["conflicting_cells"]:
            warnings.warn(
                f"automatic k: {info['conflicting_cells']} group(s) of samples with different "
                f"labels lie closer than 1/2**{MAX_AUTO_K} of a feature's range; no grid "
                f"separates them, so they were ignored when choosing k = {k.tolist()} (their "
                "error stays in every tree). Pass max_splits_per_dim to choose k yourself.",
                UserWarning, stacklevel=4)
        if info["capped"]:
            warnings.warn(
                f"automatic k hit the cap of {MAX_AUTO_K} splits per feature (k = "
                f"{k.tolist()}): samples with different labels lie almost as close as "
                f"1/2**{MAX_AUTO_K} of a feature's range. Pass max_splits_per_dim to choose k.",
                UserWarning, stacklevel=4)
    else:
        k = np.broadcast_to(np.asarray(max_splits, np.int64), (d,)).copy()
        if np.any(k < 0):
            raise ValueError("max_splits_per_dim must be non-negative")
        if np.any(k > MAX_K):
            raise ValueError(f"max_splits_per_dim is capped at {MAX_K} splits per feature")
    k[constant] = 0
    features = np.flatnonzero(k > 0)
    kvec = k[features].astype(np.int64)
    check_deadline(deadline)
    thresholds = [_thresholds(lo[j], hi[j], int(kj)) for j, kj in zip(features, kvec)]
    cells = (np.stack([_cells(X[:, j], t) for j, t in zip(features, thresholds)], axis=1)
             if len(features) else np.zeros((len(X), 0), np.int64))

    check_deadline(deadline)
    if compress:  # one surrogate per occupied finest cell
        inv, g = _group(cells, kvec, deadline)
        cells2 = np.zeros((g, len(features)), np.int64)
        cells2[inv] = cells
        C2 = np.zeros((g, n_classes))
        np.add.at(C2, inv, C)
        cells, C = cells2, C2
        W, off2 = _translate(C @ L)
        offset = off2
    stats["n_compressed"] = int(len(cells))

    est, nrho, sigma = estimate_rectangles(len(cells), kvec)
    stats.update(est_rectangles=int(est), n_rho=int(nrho), sigma_k=int(sigma))
    held = sum(a.nbytes for a in (cells, W, C))
    table = float(est) * RECTANGLE_BYTES
    over_cap = est > max_rectangles or int((kvec + 1).sum()) > 62
    what = (f"the dyadic search would store up to {est:,} rectangles (n_hat * prod(k_i + 1) = "
            f"{len(cells):,} * {nrho // max(len(cells), 1):,}; |sigma_k| = {sigma:,}) with "
            f"k = {k.tolist()} on {len(features)} splittable features")
    if over_cap:
        raise MemoryLimitError(
            f"DyadicTreeClassifier: {what}, above max_rectangles={max_rectangles:,} (up to "
            f"{RECTANGLE_BYTES} bytes each, {format_bytes(table)}). Ways out: fewer features; a "
            "smaller max_splits_per_dim; raise max_rectangles if the memory is there",
            table, float(max_rectangles) * RECTANGLE_BYTES)
    if memory_bytes is not None:
        check_memory(held + table, memory_bytes,
                     f"{what} (up to {RECTANGLE_BYTES} bytes each, with the prepared points)",
                     ["a smaller max_splits_per_dim", "fewer features",
                      "compress=True" if not compress else "fewer rows",
                      "a larger memory_limit (MiB)"], "DyadicTreeClassifier")
    return DyadicProblem(cells=np.ascontiguousarray(cells), W=np.ascontiguousarray(W),
                         C=C, kvec=kvec, features=features, thresholds=thresholds, k=k,
                         offset=float(offset), total_weight=total, n_features=d,
                         n_classes=n_classes, lower=lo, upper=hi, constant=constant,
                         stats=stats)


def solve(problem: DyadicProblem, lam: float, *, prune: bool = True, more_leaves: bool = True,
          seed: int = 0, capacity_hint: int | None = None, board: np.ndarray | None = None,
          progress: Any = None) -> DyadicSolution:
    """Exact minimum of ``error + lam * leaves`` (internal units) over ``T_k``.

    ``lam = 0`` with ``more_leaves=False`` gives the lexicographic minimum (error, leaves), the
    limit of the solutions as the penalty goes to 0 from above. ``capacity_hint`` (expected
    number of rectangles) sizes the hash table; it grows anyway when needed.

    ``board`` (:func:`exactree.progress.new_board`; None: no deadline) carries the deadline:
    past it the search stops with the best tree found (``complete=False``). ``progress`` (a
    :class:`exactree.progress.Progress`) runs the kernel: live lines, and Ctrl-C stops it the
    same way.
    """
    cap = min(problem.stats.get("est_rectangles", 1 << 16), 1 << 16)
    if capacity_hint is not None:
        cap = min(problem.stats.get("est_rectangles", capacity_hint), capacity_hint)
    init_cap = 2 * max(int(cap), 8)
    if board is None:
        board = new_board()
    args = (problem.cells, problem.W, problem.kvec, float(lam), problem.tol, bool(more_leaves),
            bool(prune), int(init_cap), int(seed), board)
    out = solve_dyadic(*args) if progress is None else progress.run(solve_dyadic, board, *args,
                                                                      track=False)
    keys, t_err, t_leaves, t_split, t_label, u, P, visited, heur, e, l, stopped = out
    return DyadicSolution(lam=float(lam), err=float(e), leaves=int(l), visited=int(visited),
                          heuristic=float(heur),
                          nodes=_extract(problem.kvec, (keys, t_split, t_label, u, int(P))),
                          complete=not bool(stopped))


def _bit_layout(kvec: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    shift = np.concatenate([[0], np.cumsum(kvec + 1)[:-1]]).astype(np.int64)
    mask = ((np.int64(1) << (kvec + 1)) - 1).astype(np.int64)
    return shift, mask


def _root_key(kvec: np.ndarray, shift: np.ndarray) -> int:
    key = 0
    for i, ki in enumerate(kvec.tolist()):
        key |= (1 << ki) << int(shift[i])
    return key


def _extract(kvec: np.ndarray, table: tuple) -> dict[int, tuple[int, int]]:
    """Walk the optimal tree in the hash table; a child missing from it is empty."""
    keys, t_split, t_label, u, P = table
    shift, mask = _bit_layout(kvec)
    layout = list(zip(shift.tolist(), mask.tolist(), u.tolist()))
    nodes: dict[int, tuple[int, int]] = {}
    stack = [_root_key(kvec, shift)]
    while stack:
        key = stack.pop()
        h = sum(ui * ((key >> sh) & m) for sh, m, ui in layout) % P  # rect_hash, in Python
        while keys[h] >= 0 and keys[h] != key:
            h = h + 1 if h + 1 < P else 0
        if keys[h] < 0:
            continue  # empty rectangle: never stored
        split = int(t_split[h])
        nodes[key] = (split, int(t_label[h]))
        if split >= 0:
            s = (key >> int(shift[split])) & int(mask[split])
            half = (s & -s) // 2
            stack.append(key - (half << int(shift[split])))
            stack.append(key + (half << int(shift[split])))
    return nodes


def build_tree(problem: DyadicProblem, sol: DyadicSolution) -> Tree:
    """The optimal tree of ``sol`` as an exactree :class:`Tree` in original feature units.

    Empty rectangles become leaves with their parent's label (the paper's rule).
    """
    kvec = problem.kvec
    shift, mask = _bit_layout(kvec)
    builder = TreeBuilder(problem.n_features, problem.n_classes)
    root_key = _root_key(kvec, shift)
    all_rows = np.arange(len(problem.cells))
    # Iterative post-order: (key, rows, parent label, expanded?)
    stack: list[tuple[int, np.ndarray, int, bool]] = [(root_key, all_rows, 0, False)]
    results: list[int] = []
    while stack:
        key, rows, parent_label, expanded = stack.pop()
        value = problem.C[rows].sum(axis=0)
        if len(rows) == 0:
            results.append(builder.leaf(value, parent_label))
            continue
        if key not in sol.nodes:
            raise KeyError("an occupied rectangle of the solution is missing: solver bug")
        split, label = sol.nodes[key]
        if split < 0:
            results.append(builder.leaf(value, label))
            continue
        if expanded:
            right, left = results.pop(), results.pop()
            s = (key >> int(shift[split])) & int(mask[split])
            thr = problem.thresholds[split][s // 2 - 1]
            results.append(builder.threshold(int(problem.features[split]), float(thr),
                                             [left, right], value, label))
            continue
        s = (key >> int(shift[split])) & int(mask[split])
        h = (s & -s) // 2  # half the interval length in finest-grid units
        go_right = problem.cells[rows, split] >= s // 2
        stack.append((key, rows, parent_label, True))
        stack.append((key + (h << int(shift[split])), rows[go_right], label, False))
        stack.append((key - (h << int(shift[split])), rows[~go_right], label, False))
    return builder.build(results[-1])


def greedy_leaf_bound(problem: DyadicProblem) -> int:
    """``l_bound`` of section 4: leaves of a greedy minimum-error dyadic tree.

    Splits (maximal single-split error reduction, first coordinate on ties) until every
    rectangle reaches the least error ``T_k`` allows on it (its finest cells' errors).
    """
    cells, W, kvec = problem.cells, problem.W, problem.kvec
    inv, g = _group(cells, kvec + 1)
    cellsum = np.zeros((g, W.shape[1]))
    np.add.at(cellsum, inv, W)
    floor_err = cellsum.min(axis=1)[inv]  # each row's share of its finest cell's least error
    # A row of a finest cell counts the cell's least error once: use per-cell first rows.
    first = np.zeros(len(cells), bool)
    first[np.unique(inv, return_index=True)[1]] = True
    floor_err = np.where(first, floor_err, 0.0)
    tol = problem.tol
    leaves = 0
    stack = [(np.arange(len(cells)), np.zeros(len(kvec), np.int64))]
    while stack:
        rows, lev = stack.pop()
        if len(rows) == 0:
            leaves += 1
            continue
        e0 = W[rows].sum(axis=0).min()
        if e0 <= floor_err[rows].sum() + tol or np.all(lev >= kvec):
            leaves += 1
            continue
        best, best_gain = -1, -np.inf
        for i in range(len(kvec)):
            if lev[i] >= kvec[i]:
                continue
            b = kvec[i] - lev[i] - 1
            right = ((cells[rows, i] >> b) & 1) == 1
            gain = e0 - W[rows[~right]].sum(axis=0).min() - W[rows[right]].sum(axis=0).min()
            if gain > best_gain + tol:
                best, best_gain = i, gain
        b = kvec[best] - lev[best] - 1
        right = ((cells[rows, best] >> b) & 1) == 1
        lev2 = lev.copy()
        lev2[best] += 1
        stack.append((rows[right], lev2))
        stack.append((rows[~right], lev2))
    return leaves
