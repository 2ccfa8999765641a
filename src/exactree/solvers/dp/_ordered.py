"""Depth-limited optimal trees over *ordered* features, in Numba (ideas from ConTree, Brita, van
der Linden & Demirovic, AAAI 2025, and Quant-BnB, Mazumder, Meng & Wang, ICML 2022).

Every feature is a column of small integers, its *buckets* (a numeric column's rank among its
candidate thresholds; 0/1 for a binary or ``== category`` test), and a split ``(f, b)`` sends a
row left when ``bucket[f, row] <= b``. A node holds its rows once per feature, sorted by that
feature, so

* the best tree of depth one is a single sweep per feature with running class weights, and a
  depth-two evaluation of one root split is one sweep per feature that routes each row to its
  side and keeps both sides' sweeps at once: O(features x rows), no pair-count matrix;
* the split points of one feature are ordered and nested: moving the threshold moves only the
  rows in between, so one evaluated split bounds its neighbours (each moved row changes a
  subtree's cost by at most its weight) and two evaluated splits bound every split between them
  (the left subtree only gains rows, the right only loses them). Splits are searched by interval
  bisection, and whole intervals whose bound reaches the incumbent are skipped.

Objectives. Misclassification (node statistics: class weights) is the default; passing a
``target`` array (instead of None) makes it the weighted sum of squared errors with mean leaves
(statistics ``(W, S, Q) = (sum w, sum w*y, sum w*y**2)``, a leaf costs ``Q - S**2 / W``), with
the statistics added row by row through :func:`_add`; ``fn`` (not None) makes it a user's
objective of the class weights (see :mod:`._statistics`). Every kernel is compiled for each
type of ``target`` and ``fn``: Numba prunes the ``is None`` branches at compile time, so the
misclassification code is what it was, and every specialisation loads from the cache. The bounds
stay valid for squared error: a subset of rows never costs more than its superset (its mean is
one candidate leaf value), and a row moved into or out of a subtree changes its optimal cost by
at most ``w * R**2``, where ``R`` is the range of the targets of the frame's node (a row added
to a leaf whose mean lies in that range raises the leaf's cost by at most ``w (y - mean)**2``);
so the "moved weight" bounds hold with weights scaled by ``R**2`` (``fr_rho``). The two-class
sweep and its per-feature bounds are misclassification facts and run only for it. A user's
objective promises what the bounds need (:class:`exactree.objectives.LeafCost`): a leaf never
costs less with more rows, and a unit of weight changes its cost by ``row_cost`` at most (its
``fn[1]``, the weights' scale in ``fr_rho``). With a ``target`` too, ``fn`` costs the
statistics ``(W, S, Q)`` (:class:`exactree.objectives.RegressionLeafCost`) and gives the scale
of each node from its targets' range.

Size-minimal optima: every split costs a small ``penalty`` on top (see :mod:`._lexicographic`),
added wherever a split's cost is formed (two leaves of a depth-one split, two children of a
node's split). The bounds stay valid: a tree moved to a neighbouring split keeps its splits,
and a subset of rows never needs more (a split left empty is dropped, with its penalty).
Classification adds a bound that only the penalty makes useful (:func:`_class_bound`): rows of
``k`` classes cost ``(k - 1)`` penalties or a misclassified row at least, which prunes the
search for the smallest error-free subtrees.

Anytime: cut short, the kernel returns a proven lower bound (:func:`_stack_lower`: the least
value any tree not yet ruled out can have, from every frame's queued intervals and waiting
split) and its best complete tree, which can be one assembled along the stack from the solved
parts of unfinished splits (:func:`_global_update`; pruning never uses it).

The recursion over depths runs on an explicit stack of frames (one per level) so the kernel can
be cached on disk. A frame's incumbent tree is kept in heap layout (node ``i`` has children
``2i+1`` (left) and ``2i+2``); feature ``-1`` marks a leaf.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...progress import BEST, BOUND, DEADLINE, INCUMBENT, LOWER, NODES
from .._clock import late as _late
from .._clock import now as _now
from ._depth2 import leaf_cost
from ._kmeans import kmeans_bound
from ._histogram import MAX_BUCKETS, bucket_offsets, solve_depth2, worth_it, worth_it_squared
from ._segment import best_split_on, best_tests, pairs, row_positions, tree_size, update_work
from ._perfect import few_errors_depth2
from ._statistics import add as _add
from ._statistics import leaf as _leaf
from ._statistics import split_cost as _split_cost
from ._lexicographic import perfect_is_final

INF = np.inf

# Switches (indices into `flags`).
(USE_INTERVALS, USE_NEIGHBOURS, USE_DEPTH1_FIRST, USE_WIDE_SECOND, USE_FEATURE_BOUNDS,
 USE_MINIMAL_SIZE, USE_GLOBAL, USE_CLASS_BOUND, USE_HISTOGRAMS, USE_KMEANS,
 USE_SEGMENT, USE_PERFECT_FINAL, USE_PERFECT_DEPTH2) = range(13)
# minimal_size: the driver charges each split a penalty (0 when off); global_incumbent: keep the
# best complete tree assembled along the stack (an anytime answer; pruning never uses it);
# class_count_bound: with minimal_size, a side holding k classes costs min((k-1) splits, a row)
# at least (see _class_bound); bucket_histograms: depth-two nodes with few buckets solved at
# once from per-bucket statistics (see _histogram); kmeans_bound: squared error, a frame starts
# from the k-means bound of its targets (see _kmeans) and ends at once when that reaches its
# upper bound; segment_trees: in a depth-two node of 2-4 classes, a root feature whose splits
# cost more to evaluate one by one than all at once is finished at once (see _segment and
# SEGMENT_SWITCH); perfect_is_final: with minimal_size, a tree of depth PERFECT_IS_FINAL_DEPTH
# or more without errors ends the search (off: the fewest splits among perfect trees too);
# perfect_depth2: a depth-two node whose bound only a tree with at most one error (unit weights)
# or none can meet is solved by sweeps (see _perfect), and below depth PERFECT_IS_FINAL_DEPTH a
# size-minimal search first looks for a tree with as few errors, as its incumbent.
TECHNIQUES = ("interval_pruning", "neighbour_pruning", "depth1_first", "wide_second_bound",
              "feature_bounds", "minimal_size", "global_incumbent", "class_count_bound",
              "bucket_histograms", "kmeans_bound", "segment_trees", "perfect_is_final",
              "perfect_depth2")
# Statistics (indices into `stats`).
ST_FRAMES, ST_EVALS, ST_PRUNED = range(3)
STAT_NAMES = ("frames", "split_evaluations", "intervals_pruned")
# Frame phases.
SELECT, WAIT_FIRST, WAIT_SECOND, NEXT_PAIR = range(4)
# Kernel outcome.
DONE, TIMED_OUT = 0, 1
# Rows x features swept between two looks at the clock (the default of search's clock_work).
CLOCK_WORK = 4_000_000
ALL_BUCKETS = 1 << 62  # root_hi of an unrestricted feature
# Rows a two-class side sweep takes between two checks of whether it can still improve.
SWEEP_BLOCK = 64
# A root feature of a depth-two node (2-4 classes) whose splits, evaluated one by one, have
# swept SEGMENT_SWITCH x what solving its queued splits at once by segment trees takes (in
# tree-node updates, _segment.update_work, per pair of classes; an update costs about twice what
# a row swept costs) has them solved at once (_segment.best_split_on). A frame with a bound
# from its parent prunes its queue fast, so it waits longer; one without (the root of a
# depth-two fit) mostly evaluates what it queued, and switches at parity. Measured on
# bench_continuous.py's sets at depths 2 and 3 (0.5-3): lower values made some fits 10-30%
# slower (bidding and breast cancer at depth 2, raisin and occupancy at depth 3), these are
# within noise of sweeping alone or faster.
SEGMENT_SWITCH = 2.0
SEGMENT_SWITCH_UNBOUNDED = 1.0
# Classes up to which segment trees run (one per pair of classes: memory and updates grow with
# the pairs, 6 at 4 classes).
SEGMENT_MAX_CLASSES = 4


@njit(cache=True, inline="always")
def _gini(pre, tot, s, target):
    """Weighted Gini impurity of the two leaves ``pre[s]`` and ``tot[s] - pre[s]`` (squared
    error: their cost itself), which orders the features."""
    if target is not None:
        return _split_cost(pre, tot, s, target, None)
    t1 = 0.0
    q1 = 0.0
    t2 = 0.0
    q2 = 0.0
    for k in range(pre.shape[1]):
        a = pre[s, k]
        b = tot[s, k] - a
        t1 += a
        t2 += b
        q1 += a * a
        q2 += b * b
    g = 0.0
    if t1 > 0.0:
        g += t1 - q1 / t1
    if t2 > 0.0:
        g += t2 - q2 / t2
    return g


@njit(cache=True, inline="always")
def _consider(pre, tot, s, c, cnt_tot, min_leaf, g, prev, best, feat_cost, feat_pos, per_feature,
              target, fn, penalty):
    """Evaluate the split of side ``s`` after its first ``c`` rows (in feature ``g``'s order);
    returns the weight the next rows must move before another split there can do better (INF:
    none of this feature's later splits can).
    ``per_feature``: also keep each feature's least Gini impurity (``feat_cost``) and where it
    lies (``feat_pos``), which orders the features and their first splits; every split is then
    evaluated. A split costs its two leaves plus ``penalty``. (The sweeps write out
    misclassification's evaluation and its skip, see _sweep_sides.)"""
    if c < min_leaf or cnt_tot - c < min_leaf:
        return -1.0
    cost = _split_cost(pre, tot, s, target, fn) + penalty
    if per_feature:
        if target is not None:
            gini = cost - penalty  # (what _gini would compute again)
        else:
            gini = _gini(pre, tot, s, target)
        if gini < feat_cost[g]:
            feat_cost[g] = gini
            feat_pos[g] = c
    if cost < best[s, 0]:
        best[s, 0] = cost
        best[s, 1] = g
        best[s, 2] = prev
        best[s, 3] = c
        return 0.0
    if per_feature:
        return -1.0
    # A later split's left leaf holds these rows and more: once they alone cost the best, no
    # later split of this feature can beat it.
    if _leaf(pre[s], target, fn) + penalty >= best[s, 0]:
        return INF
    if target is None and fn is not None:
        # A user's objective: a moved row changes the two leaves' costs by its weight times
        # row_cost at most.
        return (cost - best[s, 0]) / fn[1] if fn[1] > 0.0 else INF
    return -1.0  # no skip: every split is evaluated (squared error)


@njit(cache=True)
def _sweep_node(rows, bv, lab, n, weights, min_leaf, tot, pre, best, feat_cost, feat_pos,
                target, fn, penalty, deadline):
    """The best tree of depth <= 1 of a node (``best[0] = (cost, feature, bucket, position)``,
    feature -1: a leaf), and every feature's least Gini impurity and where it lies.

    ``rows[g, :n]`` are the node's rows sorted by feature ``g``, ``bv``/``lab`` their buckets and
    labels in that order, ``tot[0]`` the node's class weights. Returns True when it stopped
    early, past the ``deadline`` (see :func:`.._clock.late`): ``best`` then covers the features
    swept.
    """
    F = rows.shape[0]
    K = tot.shape[1]
    best[0, 0] = _leaf(tot[0], target, fn)
    best[0, 1] = -1.0
    best[0, 2] = -1.0
    best[0, 3] = -1.0
    for g in range(F):
        feat_cost[g] = INF
        feat_pos[g] = -1
        for k in range(K):
            pre[0, k] = 0.0
        prev = -1
        for t in range(n):
            bg = bv[g, t]
            if bg != prev:
                if target is None and fn is None:
                    if t >= min_leaf and n - t >= min_leaf:
                        # _consider and _gini written out (see _sweep_sides)
                        t1 = 0.0
                        q1 = 0.0
                        m1 = 0.0
                        t2 = 0.0
                        q2 = 0.0
                        m2 = 0.0
                        for k in range(K):
                            a = pre[0, k]
                            b = tot[0, k] - a
                            t1 += a
                            t2 += b
                            q1 += a * a
                            q2 += b * b
                            m1 = max(m1, a)
                            m2 = max(m2, b)
                        gini = 0.0
                        if t1 > 0.0:
                            gini += t1 - q1 / t1
                        if t2 > 0.0:
                            gini += t2 - q2 / t2
                        if gini < feat_cost[g]:
                            feat_cost[g] = gini
                            feat_pos[g] = t
                        cost = t1 - m1 + t2 - m2 + penalty
                        if cost < best[0, 0]:
                            best[0, 0] = cost
                            best[0, 1] = g
                            best[0, 2] = prev
                            best[0, 3] = t
                else:
                    _consider(pre, tot, 0, t, n, min_leaf, g, prev, best, feat_cost, feat_pos,
                              True, target, fn, penalty)
            r = np.uint32(rows[g, t])
            _add(pre, 0, np.uint32(lab[g, t]), weights[r], r, target)  # (ones for unit weights)
            prev = bg
        if _late(n, deadline):
            return True
    return False


@njit(cache=True)
def _sweep_sides(rows, bv, lab, n, side, weights, min_leaf, tot, cnt_tot, pre, best,
                 until, last, target, fn, penalty, floor):
    """Best trees of depth <= 1 of both sides (``side[row]``) of a node's rows, in one sweep per
    feature: ``best[s] = (cost, feature, bucket, position)``, feature -1 when a leaf is best.

    ``tot[s]``/``cnt_tot[s]`` are each side's class weights and row count; ``weights`` are ones
    for unit weights. A split is evaluated only where it can beat its side's best: after one
    that misses by ``gap``, the next rows must move more than ``gap`` weight first (ConTree's
    skip). A side is done with a feature once the rows swept cost its best as one leaf (every
    later split's left leaf holds them), and with all features once its best costs at most
    ``floor[s]``, what every split of the side costs at least (``penalty``, or more: see
    :func:`_unpredicted`). ``until`` and ``last`` (two entries each) hold each side's state in a sweep:
    the side's weight swept past which its next split is evaluated, and the last row's bucket.
    Returns the rows swept, over all features.
    """
    F = rows.shape[0]
    K = tot.shape[1]
    for s in range(2):
        best[s, 0] = _leaf(tot[s], target, fn)
        best[s, 1] = -1.0
        best[s, 2] = -1.0
        best[s, 3] = -1.0
    swept = 0
    for g in range(F):
        if best[0, 0] <= floor[0] and best[1, 0] <= floor[1]:
            break
        pre[:, :] = 0.0
        for s in range(2):
            # a side done with the feature waits for an infinite weight
            until[s] = INF if best[s, 0] <= floor[s] else 0.0
            last[s] = -1
        # The state is indexed by the side, not branched on: the sides interleave
        # unpredictably, while a split worth evaluating is rare. The rows and weight swept on
        # side 1 and in all are running sums in registers (side 0's are the difference), not
        # entries updated in memory: consecutive rows would wait on each other's stores.
        # (Unsigned indices: no negative-index wraparound in the loads.)
        c1 = 0
        w1 = 0.0
        w_all = 0.0
        t = 0
        while t < n:
            bg = bv[g, t]
            r = np.uint32(rows[g, t])
            w = weights[r]
            s = np.uint64(side[r])
            ws = w1 if s else w_all - w1
            if ws > until[s] and bg != last[s]:
                c = c1 if s else t - c1  # the side's rows before this one
                if target is None and fn is None:
                    # Misclassification, _consider's evaluation written out: an inlined helper
                    # takes an atomic reference count on every array it binds (three per
                    # evaluation, 15% of wine's fit at depth three).
                    gap = -1.0
                    if c >= min_leaf and cnt_tot[s] - c >= min_leaf:
                        t1 = 0.0  # left weight, its two largest classes, right weight and max
                        p1 = -INF
                        p2 = -INF
                        k1 = 0
                        t2 = 0.0
                        m2 = 0.0
                        for k in range(K):
                            a = pre[s, k] + pre[s + np.uint64(2), k]
                            b = tot[s, k] - a
                            t1 += a
                            t2 += b
                            if a > p1:
                                p2 = p1
                                p1 = a
                                k1 = k
                            elif a > p2:
                                p2 = a
                            if b > m2:
                                m2 = b
                        left = t1 - max(p1, 0.0) + penalty
                        cost = left + t2 - m2
                        if cost < best[s, 0]:
                            best[s, 0] = cost
                            best[s, 1] = g
                            best[s, 2] = last[s]
                            best[s, 3] = c
                            gap = 0.0
                        elif left >= best[s, 0]:
                            gap = INF  # later splits' left leaves hold these rows and more
                        else:
                            # The weight the next rows must move before a split can cost less
                            # than the best: leaves predicting k (left) and j (right) cost
                            # N - T_j - (P_k - P_j), a moved row changes P_k - P_j by its
                            # weight at most, and k == j is the leaf (constant), left out.
                            aim = t1 + t2 - best[s, 0] + penalty
                            gap = INF
                            for j in range(K):
                                top = p2 if j == k1 else p1
                                gap = min(gap, aim - tot[s, j] + pre[s, j]
                                          + pre[s + np.uint64(2), j] - top)
                else:
                    # (until and last stand in for _consider's unused per-feature outputs)
                    gap = _consider(pre, tot, s, c, cnt_tot[s], min_leaf, g, last[s], best,
                                    until, last, False, target, fn, penalty)
                until[s] = INF if best[s, 0] <= floor[s] else ws + gap
                if until[0] == INF and until[1] == INF:
                    break
            if target is None and fn is None:
                # Class weights of even and odd rows apart: rows of one class in a row would
                # each wait for the previous one's addition to reach memory.
                pre[s + np.uint64(2 * (t & 1)), np.uint32(lab[g, t])] += w
            else:
                _add(pre, s, np.uint32(lab[g, t]), w, r, target)
            c1 += np.int64(s)
            w1 += w if s else 0.0
            w_all += w
            last[s] = bg
            t += 1
        swept += t
    return swept


@njit(cache=True, inline="always")
def _leaf_span(n, min_leaf):
    """``(first, span)``: a split after ``c`` of a side's ``n`` rows leaves ``min_leaf`` rows
    on both sides exactly when ``np.uint64(c - first) <= span`` (one comparison in a sweep)."""
    if n >= 2 * min_leaf:
        return min_leaf, np.uint64(n - 2 * min_leaf)
    return n + 1, np.uint64(0)


@njit(cache=True)
def _sweep_sides_binary(rows, bv, n, side, side_w, min_leaf, tot, cnt_tot, best, feat_lb,
                        order, feat_out, penalty):
    """Two classes: :func:`_sweep_sides` without evaluating splits one by one.

    With class weights ``P0, P1`` left of a split and ``T0, T1`` on the side, the best leaves
    cost ``min(P0, P1) + min(T0 - P0, T1 - P1)``: the leaf costs ``T0`` or ``T1``, or
    ``T1 + (P0 - P1)``, or ``T0 - (P0 - P1)``. So a feature's best split is where the running
    difference ``P0 - P1`` is least or greatest. Both sides are swept at once with their state
    in scalars updated by additions, not branches (the sides interleave unpredictably): each
    row adds its entry of ``side_w`` (see :func:`_route_two_class`) to both sides' running
    differences and weights. Candidates are taken at the end of every run of equal buckets
    (for a side without rows in the run this repeats its previous candidate, which is
    harmless).

    Features are taken in ``order``; ``feat_lb[s, g]`` bounds feature ``g``'s best tree of depth
    <= 1 on side ``s`` from below (from splits evaluated nearby), and a feature whose bounds
    reach both sides' best so far is skipped. ``feat_out[g, s]`` receives each feature's best
    (or its bound, when skipped).

    Every ``SWEEP_BLOCK`` rows a sweep stops once neither side can still beat its best: a later
    split's left leaf holds the rows swept, so it costs ``min(P0, P1)`` at least. Every split
    costs ``penalty`` more than its two leaves. Returns the rows swept, over all features.
    """
    F = rows.shape[0]
    swept = 0
    n0 = cnt_tot[0]
    n1 = cnt_tot[1]
    # A side's split after c of its rows leaves min_leaf rows on both sides when c - first,
    # as an unsigned number, is at most span (a side too small for any: first beyond its rows).
    first0, span0 = _leaf_span(n0, min_leaf)
    first1, span1 = _leaf_span(n1, min_leaf)
    for s in range(2):
        best[s, 0] = leaf_cost(tot[s])
        best[s, 1] = -1.0
        best[s, 2] = -1.0
        best[s, 3] = -1.0
    for i in range(F):
        g = order[i]
        if feat_lb[0, g] >= best[0, 0] and feat_lb[1, g] >= best[1, 0]:
            feat_out[g, 0] = feat_lb[0, g]
            feat_out[g, 1] = feat_lb[1, g]
            continue
        rg = rows[g]
        bg = bv[g]
        d0 = 0.0
        d1 = 0.0
        c1 = 0  # (side 0's count is the rest of the rows swept)
        q0 = 0.0  # weight swept on each side
        q1 = 0.0
        lo0 = INF
        hi0 = -INF
        lo1 = INF
        hi1 = -INF
        rest0 = INF  # a bound on the splits not swept, when the sweep stops early
        rest1 = INF
        start = 0
        while start < n - 1:
            stop = min(start + SWEEP_BLOCK, n - 1)
            if min_leaf <= 1:
                # Every split point counts: one with a side empty costs its leaf plus the
                # penalty, never the best (the leaf is a candidate), so no rows are counted.
                for tt in range(start, stop):
                    t = np.uint64(tt)  # unsigned: no negative-index wraparound in the loads
                    r = np.uint32(rg[t])
                    d0 += side_w[r, 0]
                    d1 += side_w[r, 1]
                    q0 += side_w[r, 2]
                    q1 += side_w[r, 3]
                    if bg[t + np.uint64(1)] != bg[t]:
                        # Running extremes without branches (new ones come at random); where
                        # they lie is found again only for a feature that improves a side.
                        lo0 = min(lo0, d0)
                        hi0 = max(hi0, d0)
                        lo1 = min(lo1, d1)
                        hi1 = max(hi1, d1)
            else:
                for tt in range(start, stop):
                    t = np.uint64(tt)
                    r = np.uint32(rg[t])
                    d0 += side_w[r, 0]
                    d1 += side_w[r, 1]
                    q0 += side_w[r, 2]
                    q1 += side_w[r, 3]
                    c1 += np.int64(side[r])
                    if bg[t + np.uint64(1)] != bg[t]:
                        ok0 = np.uint64(tt + 1 - c1 - first0) <= span0
                        ok1 = np.uint64(c1 - first1) <= span1
                        lo0 = min(lo0, d0 if ok0 else INF)
                        hi0 = max(hi0, d0 if ok0 else -INF)
                        lo1 = min(lo1, d1 if ok1 else INF)
                        hi1 = max(hi1, d1 if ok1 else -INF)
            start = stop
            # Least cost any later split can reach on each side (its left leaf holds the rows
            # swept: class weights (q + d) / 2 and (q - d) / 2), against what it must beat.
            reach0 = 0.5 * min(q0 + d0, q0 - d0) + penalty
            reach1 = 0.5 * min(q1 + d1, q1 - d1) + penalty
            if (reach0 >= min(best[0, 0], tot[0, 1] + lo0 + penalty, tot[0, 0] - hi0 + penalty)
                    and reach1 >= min(best[1, 0], tot[1, 1] + lo1 + penalty,
                                      tot[1, 0] - hi1 + penalty)):
                rest0 = reach0
                rest1 = reach1
                break
        swept += start
        for s in range(2):
            lo, hi = (lo0, hi0) if s == 0 else (lo1, hi1)
            leaf = leaf_cost(tot[s])
            feat_out[g, s] = min(leaf, rest0 if s == 0 else rest1)
            if lo == INF:
                continue  # no split point on this side
            low = tot[s, 1] + lo + penalty
            high = tot[s, 0] - hi + penalty
            feat_out[g, s] = min(feat_out[g, s], low, high)
            # The least of the two, the least difference on a tie. (With min_leaf 1 an
            # extreme can lie only where a side is empty, costing the leaf up to a rounding
            # error; no split point holds it then, and it is not taken.)
            first, span = (first0, span0) if s == 0 else (first1, span1)
            at_lo = -1
            if low < best[s, 0]:
                at_lo = _extreme_at(rg, bg, n, side, side_w, s, lo, first, span)
            at = at_lo
            if high < best[s, 0] and (at_lo < 0 or high < low):
                at_hi = _extreme_at(rg, bg, n, side, side_w, s, hi, first, span)
                if at_hi >= 0:
                    at = at_hi
                    low = high
            if at >= 0:
                best[s, 0] = low
                best[s, 1] = g
                best[s, 2] = bg[at]
                best[s, 3] = -1.0  # position: not needed by the callers
    return swept


@njit(cache=True)
def _extreme_at(rg, bg, n, side, side_w, s, value, first, span):
    """Where side ``s``'s running difference of :func:`_sweep_sides_binary` over the first
    ``n`` rows first equals ``value`` (its least or greatest) at a split point: the same sums
    in the same order, so the same floating-point numbers."""
    d = 0.0
    c = 0
    for tt in range(n - 1):
        t = np.uint64(tt)
        r = np.uint32(rg[t])
        d += side_w[r, s]
        c += np.int64(side[r] == s)
        if bg[t + np.uint64(1)] != bg[t] and np.uint64(c - first) <= span and d == value:
            return tt
    return -1


@njit(cache=True)
def _feature_bounds(L, s, mono, flags, cur, ev_g, pw, sp, unit, feat_lb, order):
    """Lower bounds on every feature's best depth-one cost on each side of split ``s`` from the
    evaluated splits around it (as for whole subtrees: a superset costs at least as much, a
    removed row lowers a cost by at most its weight), and the features in order of them."""
    F = feat_lb.shape[1]
    le, re = cur[L, 2], cur[L, 3]
    feat_lb[:, :] = 0.0
    if flags[USE_FEATURE_BOUNDS]:
        gap_le = _moved(pw[L], sp[L], le, s, unit) if le >= 0 else 0.0
        gap_re = _moved(pw[L], sp[L], s, re, unit) if re >= 0 else 0.0
        for g in range(F):
            a = 0.0
            b = 0.0
            if le >= 0:
                if mono:
                    a = ev_g[L, le, g, 0]
                b = ev_g[L, le, g, 1] - gap_le
            if re >= 0:
                a = max(a, ev_g[L, re, g, 0] - gap_re)
                if mono:
                    b = max(b, ev_g[L, re, g, 1])
            feat_lb[0, g] = a
            feat_lb[1, g] = b
    # Insertion sort of the features by their summed bounds (few features).
    for g in range(F):
        key = feat_lb[0, g] + feat_lb[1, g]
        i = g
        while i > 0 and feat_lb[0, order[i - 1]] + feat_lb[1, order[i - 1]] > key:
            order[i] = order[i - 1]
            i -= 1
        order[i] = g


@njit(cache=True)
def _counting_sort(keys, out):
    """Rows ordered by their bucket, ties by row (buckets are small integers)."""
    if keys.shape[0] == 0:
        return
    count = np.zeros(keys.max() + 2, np.int64)
    for r in range(keys.shape[0]):
        count[keys[r] + 1] += 1
    for b in range(1, count.shape[0]):
        count[b] += count[b - 1]
    for r in range(keys.shape[0]):
        out[count[keys[r]]] = r
        count[keys[r]] += 1


@njit(cache=True)
def _mark_sides(rows, L, n, f, p, side):
    """``side[row]``: 0 for the first ``p`` rows of level ``L`` in feature ``f``'s order, else 1."""
    for t in range(n):
        side[np.uint32(rows[L, f, t])] = 0 if t < p else 1


@njit(cache=True)
def _route_two_class(rows, lab, L, n, f, p, weights, side, side_w, node_tot, tot, cnt):
    """Two classes: :func:`_mark_sides` and :func:`_side_totals` in one pass that also fills
    ``side_w[row] = (v0, v1, w0, w1)``: the row's signed weight ``v`` (``+w`` for class 0,
    ``-w`` for class 1) and its weight ``w`` in its side's entries, 0 in the other side's (what
    :func:`_sweep_sides_binary` adds up)."""
    w0 = 0.0  # class weights of the first p rows
    w1 = 0.0
    for t in range(p):
        r = np.uint32(rows[L, f, t])
        w = weights[r]
        k = lab[L, f, t]
        side[r] = 0
        side_w[r, 0] = w - 2.0 * w * k
        side_w[r, 1] = 0.0
        side_w[r, 2] = w
        side_w[r, 3] = 0.0
        w0 += w - w * k
        w1 += w * k
    for t in range(p, n):
        r = np.uint32(rows[L, f, t])
        w = weights[r]
        side[r] = 1
        side_w[r, 0] = 0.0
        side_w[r, 1] = w - 2.0 * w * lab[L, f, t]
        side_w[r, 2] = 0.0
        side_w[r, 3] = w
    tot[0, 0] = w0
    tot[0, 1] = w1
    for k in range(2):
        tot[1, k] = node_tot[k] - tot[0, k]
    cnt[0] = p
    cnt[1] = n - p


@njit(cache=True)
def _split_rows(rows, bv, lab, L, n, keep, side):
    """Rows of level ``L`` with ``side[row] == keep``, per feature in order, into level ``L + 1``
    (with their buckets and labels); returns their number."""
    F = rows.shape[1]
    m = np.uint64(0)
    for g in range(F):
        m = np.uint64(0)
        for t in range(n):
            # Branch-free: every row is written at m, which moves on only for kept rows (the
            # sides interleave unpredictably).
            r = rows[L, g, t]
            rows[L + 1, g, m] = r
            bv[L + 1, g, m] = bv[L, g, t]
            lab[L + 1, g, m] = lab[L, g, t]
            m += np.uint64(side[np.uint32(r)] == keep)
    return np.int64(m)


@njit(cache=True)
def _target_order(target, out):
    """All rows by target, ties by row."""
    if target is not None:
        out[:] = np.argsort(target, kind="mergesort")


@njit(cache=True)
def _split_order(order, L, n, keep, side):
    """The rows of level ``L``'s order with ``side[row] == keep``, in order, into level
    ``L + 1`` (nothing when ``order`` is empty: the k-means bound is off)."""
    if order.shape[0] == 0:
        return
    m = np.uint64(0)
    for t in range(n):
        r = order[L, t]
        order[L + 1, m] = r  # (branch-free, as in _split_rows)
        m += np.uint64(side[np.uint32(r)] == keep)


@njit(cache=True)
def _copy_subtree(src_f, src_b, dst_f, dst_b, root, depth):
    """Copy a heap-layout tree of ``depth`` levels below its root to the subtree at ``root``."""
    width = 1
    for lev in range(depth + 1):
        base = (root + 1) * width - 1
        for o in range(width):
            dst_f[base + o] = src_f[width - 1 + o]
            dst_b[base + o] = src_b[width - 1 + o]
        width *= 2


@njit(cache=True, inline="always")
def _moved(pw, sp, a, b, unit):
    """Weight of the rows between split indices ``a < b``."""
    if unit:
        return float(sp[b] - sp[a])
    return pw[sp[b]] - pw[sp[a]]


@njit(cache=True)
def _first_beyond(pw, sp, a, lo, hi, gap, unit):
    """Least split index in ``[lo, hi]`` more than ``gap`` weight right of split ``a`` (hi + 1 if
    none)."""
    while lo <= hi:
        mid = (lo + hi) // 2
        if _moved(pw, sp, a, mid, unit) > gap:
            hi = mid - 1
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def _last_before(pw, sp, a, lo, hi, gap, unit):
    """Greatest split index in ``[lo, hi]`` more than ``gap`` weight left of split ``a`` (lo - 1
    if none)."""
    while lo <= hi:
        mid = (lo + hi) // 2
        if _moved(pw, sp, mid, a, unit) > gap:
            lo = mid + 1
        else:
            hi = mid - 1
    return hi


@njit(cache=True, nogil=True)
def search(bucket, labels, weights, unit, n_classes, min_leaf, depth, root_ub, board, flags,
           stats, tree_f, tree_b, target, fn, root_lo, root_hi, penalty, clock_work, budget,
           root_lb=0.0):
    """Least misclassified weight of a tree of ``depth`` levels over all rows, below
    ``root_ub`` (``unit``: ``weights`` are all ones, the kernels' fast paths); with a
    ``target`` array (not None), least weighted squared error of mean
    leaves instead (``n_classes`` must then be 3, the statistics per node, ``labels`` is
    ignored and ``unit`` must be false); with ``fn`` (not None, ``target`` None) the least sum
    of a user's leaf costs (``unit`` false). Every split costs ``penalty`` on top: with
    ``minimal_size`` on, a tie-break (size-minimal optima, see :mod:`._lexicographic`; 0: the
    first optimal tree found); off, a price of its own (cost complexity). Costs, bounds and
    ``root_ub`` below are of this objective.

    Returns ``(outcome, cost, lower_bound)``; the tree is written to ``tree_f``/``tree_b`` (heap
    layout, ``2 ** (depth + 1) - 1`` nodes). ``cost`` is INF when no tree below ``root_ub``
    exists. On TIMED_OUT ``cost`` is the best tree found (the root's incumbent or, with
    ``global_incumbent``, a better tree assembled from the solved parts of the unfinished ones)
    and ``lower_bound`` a bound on every tree (of the root's share) not proven worse than
    ``root_ub``: see :func:`_stack_lower`. ``board`` (see :mod:`exactree.progress`): its
    deadline and its outside bound ``BOUND`` (of the penalised objective; it tightens
    ``root_ub``) are read at the start and at every look at the clock, after every
    ``clock_work`` rows x features swept (:data:`CLOCK_WORK`); the evaluations so far, the best
    tree's cost and the lower bound on the cost (both without the penalties) are written
    there.

    ``root_lo``/``root_hi`` (one bucket each per feature) restrict the root's split: feature
    ``f`` only at thresholds between buckets ``root_lo[f]`` and ``root_hi[f]`` (none if
    ``lo > hi``); a parallel fit gives each worker a share of the root's splits. The depth-one
    incumbent may still split elsewhere (any tree is a valid answer).

    ``root_lb``: a bound the caller knows no tree beats (e.g. the optimum, found by a parallel
    fit); the root's search ends at its first tree that cheap, which is then optimal.

    ``budget``: the most splits the tree may have (MurTree's node budget; ``2 ** depth - 1``
    or more: no limit). A node's split shares its budget less one between its children: each
    split is evaluated for every pair of child budgets, from the left child's largest down (see
    :func:`_pair_done`, :func:`_next_pair`); its recorded child bounds are those at each side's
    largest budget, which bound every pair, so the interval bounds hold unchanged, and those
    at every budget, which bound the splits around it pair by pair (:func:`_pair_bound`).
    """
    F, n = bucket.shape
    K = n_classes
    D = min(depth, max(budget, 0))  # b splits reach b levels at most
    H = (1 << (D + 1)) - 1
    Lmax = max(D - 1, 1)  # frames exist for depth >= 2
    mono = min_leaf <= 1  # a subset's optimum is never above its superset's
    # Level L holds the rows of the node its frame solves, once per feature sorted by that
    # feature, with their buckets and labels in the same order.
    rows = np.empty((Lmax, F, n), np.int32)
    bv = np.empty((Lmax, F, n), np.int32)
    lab = np.empty((Lmax, F, n), np.int32)
    _sort_root(bucket, labels, rows[0], bv[0], lab[0])
    side = np.zeros(n, np.uint8)
    # Frames, one per level.
    fr_n = np.zeros(Lmax, np.int64)
    fr_d = np.zeros(Lmax, np.int64)
    fr_ub_in = np.zeros(Lmax)
    fr_ub = np.zeros(Lmax)
    fr_best = np.zeros(Lmax)
    fr_tot = np.zeros((Lmax, 2, K))
    fr_rho = np.ones(Lmax)  # what a moved unit of weight can change a cost by (module doc)
    fr_order = np.zeros((Lmax, F), np.int64)
    fr_d1pos = np.zeros((Lmax, F), np.int64)
    fr_fi = np.zeros(Lmax, np.int64)
    fr_f = np.zeros(Lmax, np.int64)
    fr_phase = np.zeros(Lmax, np.int64)
    # The current feature's split points (rows left of each), prefix weights in its order.
    sp = np.zeros((Lmax, n + 1), np.int64)
    fr_m = np.zeros(Lmax, np.int64)
    pw = np.zeros((Lmax, n + 1))
    # Interval queue (lo, hi, evaluated split left of it, right of it) and evaluated bounds.
    queue = np.zeros((Lmax, n + 2, 4), np.int64)
    fr_qh = np.zeros(Lmax, np.int64)
    fr_qn = np.zeros(Lmax, np.int64)
    ev_l = np.zeros((Lmax, n + 1))
    ev_r = np.zeros((Lmax, n + 1))
    ev_c = np.zeros((Lmax, n + 1))  # the whole split (under a node budget: its best pair)
    # The split being evaluated and its first child's result.
    cur = np.zeros((Lmax, 4), np.int64)  # lo, hi, left neighbour, right neighbour
    fr_mid = np.zeros(Lmax, np.int64)
    fr_first_left = np.zeros(Lmax, np.bool_)
    fr_lb1 = np.zeros(Lmax)
    fr_ex1 = np.zeros(Lmax, np.bool_)
    fr_lb2 = np.zeros(Lmax)  # bound on the second child known before solving it
    fr_lbk = np.zeros(Lmax)  # a lower bound on each frame's optimum, known from its parent
    fr_lbk[0] = root_lb  # the caller's: the root stops at its first tree this cheap
    # Node budgets: each frame's budget; for the split being evaluated, the left child's
    # budget in the current pair, the best pair so far (its children's trees in pk_f/pk_b),
    # bounds on each side at its largest budget, and the left side's value in the last pair.
    full = (1 << D) - 1
    budget = min(budget, full)
    fr_bud = np.zeros(Lmax, np.int64)
    fr_pj = np.zeros(Lmax, np.int64)
    fr_pbest = np.zeros(Lmax)
    fr_pcap = np.zeros((Lmax, 2))
    fr_plast = np.zeros(Lmax)
    fr_pmin = np.zeros(Lmax)  # a bound on every pair of the split (the least pair bound)
    pk_f = np.full((Lmax if budget < full else 0, 2, H), -1, np.int64)
    pk_b = np.zeros((Lmax if budget < full else 0, 2, H), np.int64)
    # Per child budget: the bounds of each evaluated split's sides (ev_b[L, s, side, j]) and
    # of the split under evaluation (pb), which bound its neighbours' pairs (_pair_bound).
    C = min(budget - 1, (1 << (D - 1)) - 1) if budget < full else 0
    ev_b = np.zeros((Lmax, n + 1 if budget < full else 0, 2, C + 1))
    pb = np.zeros((Lmax, 2, C + 1))
    # Incumbent trees and the current split's child trees.
    best_f = np.full((Lmax, H), -1, np.int64)
    best_b = np.zeros((Lmax, H), np.int64)
    kid_f = np.full((Lmax, 2, H), -1, np.int64)
    kid_b = np.zeros((Lmax, 2, H), np.int64)
    # The global incumbent: the best complete tree assembled along the stack (see
    # _global_update); its objective in g_cost[0].
    use_global = flags[USE_GLOBAL] and budget == full  # (assembled trees may break budgets)
    g_f = np.full(H, -1, np.int64)
    g_b = np.zeros(H, np.int64)
    g_cost = np.full(1, INF)
    g_own = np.zeros(Lmax, np.bool_)
    g_tot = np.zeros(K)
    reach = np.zeros(H, np.bool_)
    pre = np.zeros((4, K))  # (rows 2-3: _sweep_sides' second set of sums)
    sw = np.zeros((2, 4))
    tot2 = np.zeros((2, K))
    cnt2 = np.zeros(2, np.int64)
    feat_cost = np.zeros(F)
    side_until = np.zeros(2)  # _sweep_sides' state per side
    side_last = np.zeros(2, np.int64)
    # Two classes: every evaluated split's per-feature depth-one costs, both sides, which
    # bound those of the splits around it.
    two_class = K == 2 and target is None and fn is None  # the two-class sweep's case
    ev_g = np.zeros((Lmax, n + 1 if two_class else 1, F, 2))
    side_w = np.zeros((n if two_class else 0, 4))  # its rows' entries (_route_two_class)
    feat_lb = np.zeros((2, F))
    gorder = np.zeros(F, np.int64)
    # Classes present on each side of every split of the current feature (_count_sides).
    class_bound = (flags[USE_CLASS_BOUND] and penalty > 0.0 and target is None and fn is None
                   and K > 1)
    sides_k = np.zeros((Lmax, n + 1 if class_bound else 0, 2), np.int64)
    class_rows = np.zeros((2, K), np.int64)
    fr_sides = np.zeros(Lmax, np.bool_)  # whether sides_k holds the current feature's splits
    # Unit-weight misclassification of 3 classes or more: a child of depth d is a tree with
    # 2 ** d leaves at most, it misclassifies every class but as many (_unpredicted).
    leaves_bound = flags[USE_CLASS_BOUND] and unit and target is None and fn is None and K > 2
    k_scratch = np.zeros(K)
    floor2 = np.full(2, penalty)  # _sweep_sides' least split cost per side
    wmin = 1.0
    if not unit and n:
        wmin = INF
        for r in range(n):
            if 0.0 < weights[r] < wmin:
                wmin = weights[r]
    # Frames whose bound only a subtree with at most one error (unit weights) or none can meet:
    # below p_limit, what the next error costs at least (every row has a positive weight).
    use_perfect = (flags[USE_PERFECT_DEPTH2] and target is None and fn is None
                   and min_leaf <= 1 and D >= 2)
    for r in range(n if use_perfect else 0):
        if not weights[r] > 0.0:
            use_perfect = False
            break
    p_limit = 2.0 if unit else wmin
    row_buckets = np.ascontiguousarray(bucket.T) if use_perfect else np.zeros((0, F), bucket.dtype)
    p_ext = np.zeros((4, K if use_perfect else 0, F), np.int64)
    p_cnt = np.zeros(K, np.int64)
    p_cls = np.zeros(4, np.int64)
    p_ends = np.zeros((2, 4), np.int64)
    # The penalty breaks ties (minimal_size), or is the price of a split (cost complexity:
    # then a perfect tree does not end the search and costs include the penalties).
    tie_break = flags[USE_MINIMAL_SIZE]
    # Converting the objective's bounds into bounds on the cost (see _lexicographic).
    all_splits = penalty * ((1 << D) - 1) if tie_break else 0.0
    integral = False
    if target is None:
        integral = unit and (tie_break or penalty == 0.0)
    # Scratch of _histogram.solve_depth2.
    use_hist = flags[USE_HISTOGRAMS] and D >= 2
    cap = min(MAX_BUCKETS, F * n) if use_hist else 0
    S = K if target is None else 3
    h_off = np.zeros(F + 1, np.int64)
    h_loc = np.zeros((n if use_hist else 0, F), np.int32)
    h_map = np.zeros(cap, np.int64)
    h_cum = np.zeros((cap, S))
    h_cnt = np.zeros(cap, np.int64)
    h_allb = np.zeros((cap, S))
    h_allc = np.zeros(cap, np.int64)
    h_f = np.full(7, -1, np.int64)
    h_b = np.zeros(7, np.int64)
    fr_low = np.zeros(Lmax)  # a lower bound on a frame's optimum (its optimum once solved)
    # The k-means bound: each level's rows also in target order, and scratch.
    use_km = flags[USE_KMEANS] and target is not None and fn is None
    korder = np.empty((Lmax if use_km else 0, n), np.int32)
    kbuf = np.zeros((7, n + 1 if use_km else 1))
    kstack = np.zeros((64, 4), np.int64)
    if use_km:
        _target_order(target, korder[0])
    fr_hist = np.zeros(Lmax, np.bool_)  # whether a frame is solved by solve_depth2
    # Scratch of _segment.best_split_on. Only the depth-two frame on top of the stack sweeps
    # (it starts no child frame), so scalars hold its state, keyed by its number (the frames
    # started so far): the rows its current root feature swept (SEGMENT_SWITCH), which frame
    # and feature they count for, and which frame's row positions g_pos holds.
    use_seg = (flags[USE_SEGMENT] and target is None and fn is None
               and 2 <= K <= SEGMENT_MAX_CLASSES and min_leaf <= 1 and D >= 2 and budget >= 3
               and n > 1)
    g_size = tree_size(n) if use_seg else 0
    g_pos = h_loc if use_hist or not use_seg else np.zeros((n, F), np.int32)
    g_seg = np.zeros((2 * g_size, 6 * pairs(K)))
    g_side = np.zeros((2, n if use_seg else 0))
    g_out = np.zeros((F, 2))
    g_spans = np.zeros((n + 2 if use_seg else 0, 2), np.int64)
    g_keys = np.zeros(n + 2 if use_seg else 0, np.int64)
    g_swept = 0
    g_frame = -1
    g_feat = -1
    g_pos_frame = -1
    for t in range(H):
        tree_f[t] = -1
        tree_b[t] = 0

    # ---- the root: all rows
    root_ub = min(root_ub, board[BOUND])
    tot_root = np.zeros((1, K))
    for r in range(n):
        _add(tot_root, 0, labels[r], weights[r], r, target)
    if D == 0 or n == 0 or F == 0 or budget <= 0:  # no split to make
        c = _leaf(tot_root[0], target, fn)
        if c < root_ub:
            return DONE, c, c
        return DONE, INF, root_ub
    # (The histograms solve full trees of depth 2: not under a smaller budget.)
    sweep = _sweep_first(0, D if budget >= 3 else 0, use_hist, bv, n, F, h_off, fr_hist, target,
                         fn)
    late = _init_frame(0, n, D, root_ub, rows, bv, lab, weights, unit, min_leaf, fr_n, fr_d,
                       fr_ub_in, fr_ub, fr_best, fr_tot, fr_order, fr_d1pos, fr_fi, fr_phase,
                       fr_qn, best_f, best_b, pre, sw, feat_cost, stats, target, fn, fr_rho,
                       penalty, sweep, budget, fr_bud, korder, kbuf, kstack, fr_low, fr_lbk,
                       board[DEADLINE])
    if D == 1:
        fr_fi[0] = F  # the depth-one sweep is the answer
    L = 0
    work = clock_work if late else 0  # (late: the first look at the clock ends the search)
    outcome = DONE
    lower = 0.0  # the best lower bound proven at a look at the clock
    while True:
        if fr_phase[L] == NEXT_PAIR:
            # The split under evaluation, at its next pair of child budgets: the larger child
            # first, asked to beat the incumbent (and the best pair) less what the other side
            # costs at least. A side's bound at its largest budget holds for every budget, and
            # the left side's value at the last pair's (larger) budget for this one; pairs
            # that cannot win are passed over (_next_pair).
            s = fr_mid[L]
            first_left = fr_first_left[L]
            single = not _budgeted(L, fr_bud, fr_d)  # one pair of child budgets
            j = fr_pj[L] if single else _next_pair(L, fr_pj[L], fr_ub, fr_bud, fr_d, fr_pbest,
                                                   fr_pcap, fr_plast, fr_pmin, pb, penalty)
            if j < 0:  # every pair is done: the split's best pair, bounds on the others
                f = fr_f[L]
                if fr_pbest[L] < INF:
                    kid_f[L, :, :] = pk_f[L, :, :]
                    kid_b[L, :, :] = pk_b[L, :, :]
                _keep_budgets(L, s, pb, ev_b, fr_bud, fr_d)
                fr_phase[L] = SELECT
                if _record(L, bv[L, f, sp[L, s] - 1], fr_pcap[L, 0], fr_pcap[L, 1],
                           fr_pbest[L] < INF, fr_pbest[L], fr_pmin[L], mono, flags, fr_ub,
                           fr_best, fr_f, sp, pw, unit, queue, fr_qh, fr_qn, ev_l, ev_r, ev_c,
                           cur, fr_mid, best_f, best_b, kid_f, kid_b, fr_d, penalty) \
                        and use_global and L > 0:
                    _global_update(L, penalty, fr_best, fr_phase, fr_first_left, fr_ex1,
                                   fr_lb1, fr_tot, fr_f, fr_mid, fr_d, sp, bv, best_f, best_b,
                                   kid_f, kid_b, g_cost, g_f, g_b, g_own, g_tot, target, fn)
                continue
            fr_pj[L] = j
            lb_left = max(fr_pcap[L, 0], fr_plast[L])
            lb_right = fr_pcap[L, 1]
            if not single:
                lb_left = max(lb_left, pb[L, 0, j])
                lb_right = max(lb_right, pb[L, 1, fr_bud[L] - 1 - j])
            fr_lb2[L] = lb_right if first_left else lb_left
            fr_lbk[L + 1] = lb_left if first_left else lb_right
            _mark_sides(rows, L, fr_n[L], fr_f[L], sp[L, s], side)
            m = _split_rows(rows, bv, lab, L, fr_n[L], 0 if first_left else 1, side)
            _split_order(korder, L, fr_n[L], 0 if first_left else 1, side)
            work += F * (2 * fr_n[L] + m)
            fr_phase[L] = WAIT_FIRST
            ub1 = min(fr_ub[L], fr_pbest[L]) - fr_lb2[L] - penalty
            bud1 = j if first_left else fr_bud[L] - 1 - j
            sweep = _sweep_first(L + 1, fr_d[L] - 1 if bud1 >= 3 else 0, use_hist, bv, m, F,
                                 h_off, fr_hist, target, fn) \
                and not _by_sweeps(use_perfect, min(fr_d[L] - 1, bud1), ub1, p_limit)
            if _init_frame(L + 1, m, fr_d[L] - 1, ub1, rows, bv, lab, weights, unit, min_leaf,
                           fr_n, fr_d, fr_ub_in, fr_ub, fr_best, fr_tot, fr_order, fr_d1pos,
                           fr_fi, fr_phase, fr_qn, best_f, best_b, pre, sw, feat_cost, stats,
                           target, fn, fr_rho, penalty, sweep, bud1, fr_bud, korder, kbuf,
                           kstack, fr_low, fr_lbk, board[DEADLINE]):
                work = clock_work
            L += 1
            if use_global:
                _global_update(L, penalty, fr_best, fr_phase, fr_first_left, fr_ex1, fr_lb1,
                               fr_tot, fr_f, fr_mid, fr_d, sp, bv, best_f, best_b, kid_f, kid_b,
                               g_cost, g_f, g_b, g_own, g_tot, target, fn)
            continue
        if work >= clock_work:
            work = 0
            board[NODES] = stats[ST_EVALS]
            if board[BOUND] < fr_ub[0]:
                fr_ub[0] = board[BOUND]
            lower = max(lower, _stack_lower(L, mono, penalty, fr_ub, fr_lbk, fr_fi, fr_order,
                                            fr_qh, fr_qn, queue, cur, fr_mid, fr_phase, fr_lb1,
                                            fr_lb2, ev_l, ev_r, pw, sp, unit, root_lo, root_hi,
                                            fr_bud, fr_d, fr_pbest, fr_pcap))
            low = lower - all_splits
            if integral:
                low = np.ceil(low - 1e-9)
            board[LOWER] = max(low, 0.0)
            tb = penalty if tie_break else 0.0  # a tie-break is not part of the cost
            if g_cost[0] < fr_best[0]:
                board[BEST] = g_cost[0] - tb * _n_splits(g_f, reach)
            else:
                board[BEST] = fr_best[0] - tb * _n_splits(best_f[0], reach)
            board[INCUMBENT] = min(fr_best[0], g_cost[0])
            if board[DEADLINE] < INF and _now() > board[DEADLINE]:
                outcome = TIMED_OUT
                break
        if L > 0 and fr_fi[L] == -1 and _by_sweeps(use_perfect, fr_d[L], fr_ub[L], p_limit):
            # Only a subtree with at most one error (unit weights) or none can win here: found
            # by sweeps (see _perfect).
            one = unit and fr_ub[L] > wmin
            c, swept, cut = few_errors_depth2(rows[L], bv[L], lab[L], row_buckets, fr_n[L],
                                              fr_bud[L], one, penalty, p_ext, p_cnt, p_cls,
                                              p_ends, h_f, h_b, board[DEADLINE],
                                              clock_work - work)
            work += swept
            if cut:  # past the deadline: not solved, and the next look at the clock stops
                work = clock_work
                continue
            if c < INF and _adopt(L, c, h_f, h_b, fr_best, best_f, best_b, fr_ub) \
                    and use_global:
                _global_update(L, penalty, fr_best, fr_phase, fr_first_left, fr_ex1, fr_lb1,
                               fr_tot, fr_f, fr_mid, fr_d, sp, bv, best_f, best_b, kid_f, kid_b,
                               g_cost, g_f, g_b, g_own, g_tot, target, fn)
            # Its optimum, or a bound: a tree with more errors than searched costs at least
            # what its errors do.
            fr_low[L] = min(c, p_limit if one else wmin)
            fr_fi[L] = F  # the frame is solved
        if use_hist and fr_d[L] == 2 and fr_fi[L] == -1 and fr_bud[L] >= 3 and not (
                target is not None and fn is None):
            # (squared error decided when the frame started: see _sweep_first)
            B = bucket_offsets(bv[L], fr_n[L], h_off)
            fr_hist[L] = worth_it(F, fr_n[L], B, S, target is not None or fn is not None)
        if fr_hist[L] and fr_fi[L] == -1:
            B = h_off[F]
            c, cut = solve_depth2(rows[L], bv[L], lab[L], fr_n[L], weights, unit, target, fn,
                                  min_leaf, penalty, h_off, h_loc, h_map, h_cum, h_cnt, h_allb,
                                  h_allc, root_lo, root_hi, L == 0, h_f, h_b, board[DEADLINE])
            stats[ST_EVALS] += B - F
            work += F * F * fr_n[L] + 2 * S * B * B
            if _adopt(L, c, h_f, h_b, fr_best, best_f, best_b, fr_ub) and use_global and L > 0:
                _global_update(L, penalty, fr_best, fr_phase, fr_first_left, fr_ex1, fr_lb1,
                               fr_tot, fr_f, fr_mid, fr_d, sp, bv, best_f, best_b, kid_f, kid_b,
                               g_cost, g_f, g_b, g_own, g_tot, target, fn)
            if cut:  # past the deadline: not solved, and the next look at the clock stops
                work = clock_work
                continue
            fr_low[L] = fr_best[L]  # the frame's optimum, a bound for its parent
            fr_fi[L] = F  # the frame is solved
        if (use_seg and fr_d[L] == 2 and fr_qn[L] > 0 and fr_bud[L] >= 3
                and fr_best[L] > fr_lbk[L]):
            # A depth-two node of few classes, in the middle of a root feature's splits: once
            # they cost more one by one than all of them at once, the rest at once (_segment).
            here = stats[ST_FRAMES]
            if g_frame != here or g_feat != fr_fi[L]:  # a new feature: sweeps count from here
                g_frame = here
                g_feat = fr_fi[L]
                g_swept = 0
            m = fr_n[L]
            switch = SEGMENT_SWITCH_UNBOUNDED if fr_ub_in[L] == INF else SEGMENT_SWITCH
            k = 0
            work_seg = F * pairs(K) * update_work(g_spans, 0, g_size)  # (no span: one build)
            if g_swept >= switch * work_seg:  # else no span can be worth it yet
                k = _queued_spans(L, queue, fr_qh, fr_qn, sp, ev_l, ev_r, fr_ub, penalty, mono,
                                  flags, g_spans, g_keys)
                work_seg = F * pairs(K) * update_work(g_spans, k, g_size)
            if k > 0 and g_swept >= switch * work_seg:
                if g_pos_frame != here:
                    row_positions(rows[L], m, g_pos)
                    g_pos_frame = here
                f = fr_f[L]
                c, t, cut = best_split_on(f, rows[L], bv[L], lab[L], m, K, weights, penalty,
                                          g_spans, k, board[DEADLINE], g_pos, g_seg, g_side)
                work += int(work_seg)
                if cut:  # past the deadline: the next look at the clock stops
                    work = clock_work
                    continue
                if c < fr_best[L]:
                    _segment_tree(L, f, t, rows, bv, lab, m, side, side_w, weights, fr_tot, tot2,
                                  cnt2, sw, feat_lb, gorder, g_out, penalty, h_f, h_b)
                    if _adopt(L, c, h_f, h_b, fr_best, best_f, best_b, fr_ub) and use_global \
                            and L > 0:
                        _global_update(L, penalty, fr_best, fr_phase, fr_first_left, fr_ex1,
                                       fr_lb1, fr_tot, fr_f, fr_mid, fr_d, sp, bv, best_f, best_b,
                                       kid_f, kid_b, g_cost, g_f, g_b, g_own, g_tot, target, fn)
                fr_qn[L] = 0  # the feature is done
        s = -1
        # Else the incumbent meets a known bound (it is optimal), or a deep root's has no errors
        # (see _lexicographic).
        if fr_best[L] > fr_lbk[L] and not (L == 0 and tie_break and flags[USE_PERFECT_FINAL]
                                           and perfect_is_final(fr_best[0], penalty, fr_d[0])):
            s = _next_split(L, rows, bv, lab, weights, fr_rho[L], unit, min_leaf, mono, flags,
                            stats, fr_n, fr_ub, fr_order, fr_d1pos, fr_fi, fr_f, sp, fr_m, pw,
                            queue, fr_qh, fr_qn, ev_l, ev_r, ev_c, cur, fr_mid, root_lo, root_hi,
                            penalty, sides_k, class_rows, fr_sides, ev_b, fr_bud, fr_d)
        if s >= 0:
            f = fr_f[L]
            p = sp[L, s]
            cb_l = cb_r = 0.0
            have_tot = False  # whether tot2 and cnt2 hold the split's sides
            u_l = u_r = 0.0
            leaves = 1 << (fr_d[L] - 1)  # the most leaves a child can have
            if leaves_bound and K > leaves:
                _side_totals(lab, L, f, p, fr_n[L], rows, weights, fr_tot[L, 0], tot2, cnt2,
                             target)
                have_tot = True
                u_l = _unpredicted(tot2[0], leaves, k_scratch)
                u_r = _unpredicted(tot2[1], leaves, k_scratch)
                cb_l = u_l
                cb_r = u_r
            if (class_bound and fr_sides[L]) or have_tot:
                if class_bound and fr_sides[L]:
                    cb_l = max(cb_l, _class_bound(sides_k[L, s, 0], fr_d[L] - 1, penalty, wmin))
                    cb_r = max(cb_r, _class_bound(sides_k[L, s, 1], fr_d[L] - 1, penalty, wmin))
                if cb_l + cb_r + penalty >= fr_ub[L]:  # not worth evaluating
                    stats[ST_PRUNED] += 1
                    if fr_d[L] == 2 and ev_g.shape[1] > 1:
                        # The class bounds hold for every feature's depth-one tree too (the
                        # neighbours' feature bounds read them).
                        ev_g[L, s, :, 0] = cb_l
                        ev_g[L, s, :, 1] = cb_r
                    pb[L, 0, :] = cb_l
                    pb[L, 1, :] = cb_r
                    _keep_budgets(L, s, pb, ev_b, fr_bud, fr_d)
                    _record(L, bv[L, f, p - 1], cb_l, cb_r, False, INF, cb_l + cb_r + penalty,
                            mono, flags, fr_ub, fr_best, fr_f, sp, pw, unit, queue, fr_qh, fr_qn,
                            ev_l, ev_r, ev_c, cur, fr_mid, best_f, best_b, kid_f, kid_b, fr_d,
                            penalty)
                    continue
            stats[ST_EVALS] += 1
            if fr_d[L] == 2:
                # Both children are depth-one trees: one routed sweep per feature.
                if two_class:  # (the two-class sweep is a misclassification fact)
                    _route_two_class(rows, lab, L, fr_n[L], f, p, weights, side, side_w,
                                     fr_tot[L, 0], tot2, cnt2)
                    _feature_bounds(L, s, mono, flags, cur, ev_g, pw, sp, unit, feat_lb, gorder)
                    g_swept += _sweep_sides_binary(rows[L], bv[L], fr_n[L], side, side_w,
                                                   min_leaf, tot2, cnt2, sw, feat_lb, gorder,
                                                   ev_g[L, s], penalty)
                else:
                    _mark_sides(rows, L, fr_n[L], f, p, side)
                    if not have_tot:
                        _side_totals(lab, L, f, p, fr_n[L], rows, weights, fr_tot[L, 0], tot2,
                                     cnt2, target)
                    # (a split of a side costs its unpredicted classes at least: u_l, u_r)
                    floor2[0] = u_l + penalty
                    floor2[1] = u_r + penalty
                    g_swept += _sweep_sides(rows[L], bv[L], lab[L], fr_n[L], side, weights,
                                            min_leaf, tot2, cnt2, pre, sw, side_until,
                                            side_last, target, fn, penalty, floor2)
                work += F * fr_n[L]
                cost = sw[0, 0] + sw[1, 0] + penalty
                leafy = -1  # a budget of two splits: the side left a leaf, if any
                if fr_bud[L] < 3:
                    for sd in range(2):  # each side's cost with one split (or none)
                        pb[L, sd, 0] = _leaf(tot2[sd], target, fn)
                        pb[L, sd, 1] = sw[sd, 0]
                    _keep_budgets(L, s, pb, ev_b, fr_bud, fr_d)
                    c0 = pb[L, 0, 0] + sw[1, 0]
                    c1 = sw[0, 0] + pb[L, 1, 0]
                    leafy = 0 if c0 < c1 else 1
                    cost = min(c0, c1) + penalty
                for sd in range(2):
                    kid_f[L, sd, 0] = -1 if sd == leafy else int(sw[sd, 1])
                    kid_b[L, sd, 0] = int(sw[sd, 2])
                    kid_f[L, sd, 1] = -1
                    kid_f[L, sd, 2] = -1
                if _record(L, bv[L, f, p - 1], sw[0, 0], sw[1, 0], True, cost, cost, mono,
                           flags, fr_ub, fr_best, fr_f, sp, pw, unit, queue, fr_qh, fr_qn, ev_l,
                           ev_r, ev_c, cur, fr_mid, best_f, best_b, kid_f, kid_b, fr_d,
                           penalty) \
                        and use_global and L > 0:
                    _global_update(L, penalty, fr_best, fr_phase, fr_first_left, fr_ex1, fr_lb1,
                                   fr_tot, fr_f, fr_mid, fr_d, sp, bv, best_f, best_b, kid_f,
                                   kid_b, g_cost, g_f, g_b, g_own, g_tot, target, fn)
                continue
            # Deeper: solve the larger child first (its bound may make the other needless),
            # asking it to beat the incumbent less what the other side must cost at least:
            # for each pair of child budgets (one pair without a node budget), see NEXT_PAIR.
            fr_first_left[L] = p >= fr_n[L] - p
            first = _other_side_bound(L, s, fr_first_left[L], mono, flags, cur, ev_l, ev_r, pw,
                                      sp, unit)
            # The child's class bound lets it stop at a tree that meets it. (Raising the other
            # side's bound too lowers the first child's target, which then returns a weaker
            # bound for the neighbouring splits: measured slower.)
            first = max(first, cb_l if fr_first_left[L] else cb_r)
            second = _other_side_bound(L, s, not fr_first_left[L], mono, flags, cur, ev_l,
                                       ev_r, pw, sp, unit)
            fr_pcap[L, 0] = first if fr_first_left[L] else second
            fr_pcap[L, 1] = second if fr_first_left[L] else first
            fr_pj[L] = _child_cap(L, fr_bud, fr_d)  # the left's largest
            if _budgeted(L, fr_bud, fr_d):
                _budget_bounds(L, s, mono, flags, cur, ev_b, pb, fr_pcap, fr_bud, fr_d, pw, sp,
                               unit)
                # A side without a split is a leaf: its cost is known.
                _side_totals(lab, L, f, p, fr_n[L], rows, weights, fr_tot[L, 0], tot2,
                             cnt2, target)
                for sd in range(2):
                    pb[L, sd, 0] = max(pb[L, sd, 0], _leaf(tot2[sd], target, fn))
            fr_pbest[L] = INF
            fr_plast[L] = 0.0
            fr_pmin[L] = INF
            fr_phase[L] = NEXT_PAIR
            continue
        # The frame is done: hand its result to the parent.
        ex = fr_best[L] < fr_ub_in[L]
        val = fr_best[L] if ex else max(fr_ub_in[L], fr_low[L], 0.0)
        fr_low[L] = 0.0
        if L == 0:
            break
        P = L - 1
        first = fr_phase[P] == WAIT_FIRST
        sd = 0 if fr_first_left[P] == first else 1
        if ex:
            _copy_subtree(best_f[L], best_b[L], kid_f[P, sd], kid_b[P, sd], 0, fr_d[L])
        L = P
        s = fr_mid[L]
        f = fr_f[L]
        p = sp[L, s]
        b = bv[L, f, p - 1]
        single = not _budgeted(L, fr_bud, fr_d)  # one pair of child budgets
        if first:
            fr_lb1[L] = val
            fr_ex1[L] = ex
            ub2 = min(fr_ub[L], fr_pbest[L]) - val - penalty
            if single and flags[USE_WIDE_SECOND]:
                # Wide enough to stay informative for the whole interval around the split: even
                # when this split cannot win, the second child's cost bounds its neighbours.
                m_lo = _moved(pw[L], sp[L], cur[L, 0], s, unit)
                m_hi = _moved(pw[L], sp[L], s, cur[L, 1], unit)
                if mono:
                    # Towards the end where the first side only gains rows (hi for the left
                    # side) its cost stays above val: those neighbours need the second cost up
                    # to ub2 plus the weight moved, and none if ub2 <= 0 (none can win). Towards
                    # the other end the second side only gains rows: up to what is left after
                    # the first side's val less the weight moved, at most all but a penalty.
                    m1 = m_hi if fr_first_left[L] else m_lo
                    m2 = m_lo if fr_first_left[L] else m_hi
                    wide = min(ub2 + val, ub2 + m2)
                    ub2 = max(wide, ub2 + m1) if ub2 > 0.0 else wide
                else:
                    ub2 += max(m_lo, m_hi)
                U = min(fr_ub[L], fr_pbest[L])
                if use_perfect and U <= p_limit:
                    # Only trees with no error (one) can win here: the second child's
                    # neighbours learn little more from its errors than that it has one (two),
                    # and its depth-two nodes are solved by sweeps then (see _perfect).
                    ub2 = min(ub2, wmin if U <= wmin else p_limit)
            elif not ex:
                ub2 = 0.0
            if ub2 > 0.0:
                _mark_sides(rows, L, fr_n[L], f, p, side)
                keep = 1 if fr_first_left[L] else 0
                m = _split_rows(rows, bv, lab, L, fr_n[L], keep, side)
                _split_order(korder, L, fr_n[L], keep, side)
                work += F * (2 * fr_n[L] + m)
                fr_phase[L] = WAIT_SECOND
                fr_lbk[L + 1] = fr_lb2[L]
                bud2 = fr_bud[L] - 1 - fr_pj[L] if fr_first_left[L] else fr_pj[L]
                sweep = _sweep_first(L + 1, fr_d[L] - 1 if bud2 >= 3 else 0, use_hist, bv, m,
                                     F, h_off, fr_hist, target, fn) \
                    and not _by_sweeps(use_perfect, min(fr_d[L] - 1, bud2), ub2, p_limit)
                if _init_frame(L + 1, m, fr_d[L] - 1, ub2, rows, bv, lab, weights, unit,
                               min_leaf, fr_n, fr_d, fr_ub_in, fr_ub, fr_best, fr_tot,
                               fr_order, fr_d1pos, fr_fi, fr_phase, fr_qn, best_f, best_b, pre,
                               sw, feat_cost, stats, target, fn, fr_rho, penalty, sweep, bud2,
                               fr_bud, korder, kbuf, kstack, fr_low, fr_lbk, board[DEADLINE]):
                    work = clock_work
                L += 1
                if use_global:
                    _global_update(L, penalty, fr_best, fr_phase, fr_first_left, fr_ex1, fr_lb1,
                                   fr_tot, fr_f, fr_mid, fr_d, sp, bv, best_f, best_b, kid_f,
                                   kid_b, g_cost, g_f, g_b, g_own, g_tot, target, fn)
                continue
            # The split cannot win: keep the first child's bound and the other side's.
            lb_l = val if fr_first_left[L] else fr_lb2[L]
            lb_r = fr_lb2[L] if fr_first_left[L] else val
            ex = False
        else:
            if not ex:
                val = max(val, fr_lb2[L])
            lb_l = fr_lb1[L] if fr_first_left[L] else val
            lb_r = val if fr_first_left[L] else fr_lb1[L]
            ex = ex and fr_ex1[L]
        cost = lb_l + lb_r + penalty
        bound = cost
        if not single:
            _pair_done(L, lb_l, lb_r, ex, cost, fr_bud, fr_d, fr_pj, fr_pbest, fr_pcap,
                       fr_plast, fr_pmin, kid_f, kid_b, pk_f, pk_b, pb)
            fr_phase[L] = NEXT_PAIR
            continue
        fr_phase[L] = SELECT
        if _record(L, b, lb_l, lb_r, ex, cost, bound, mono, flags, fr_ub, fr_best, fr_f, sp, pw,
                   unit, queue, fr_qh, fr_qn, ev_l, ev_r, ev_c, cur, fr_mid, best_f, best_b,
                   kid_f, kid_b, fr_d, penalty) and use_global and L > 0:
            _global_update(L, penalty, fr_best, fr_phase, fr_first_left, fr_ex1, fr_lb1, fr_tot,
                           fr_f, fr_mid, fr_d, sp, bv, best_f, best_b, kid_f, kid_b, g_cost, g_f,
                           g_b, g_own, g_tot, target, fn)
    c = fr_best[0]
    if outcome == TIMED_OUT:
        lower = max(lower, _stack_lower(L, mono, penalty, fr_ub, fr_lbk, fr_fi, fr_order, fr_qh,
                                        fr_qn, queue, cur, fr_mid, fr_phase, fr_lb1, fr_lb2,
                                        ev_l, ev_r, pw, sp, unit, root_lo, root_hi,
                                        fr_bud, fr_d, fr_pbest, fr_pcap))
        if g_cost[0] < c:
            c = g_cost[0]
            for t in range(H):
                best_f[0, t] = g_f[t]
                best_b[0, t] = g_b[t]
    else:
        lower = min(c, root_ub)
    if c >= root_ub:
        return outcome, INF, lower
    for t in range(H):
        tree_f[t] = best_f[0, t]
        tree_b[t] = best_b[0, t]
    return outcome, c, lower


@njit(cache=True, inline="always")
def _by_sweeps(use_perfect, d, ub, limit):
    """Whether a frame of ``d`` levels (its budget's) and bound ``ub`` is solved by the sweeps of
    _perfect: depth two, and only subtrees cheaper than ``limit`` (few errors) can win. (The
    frame then skips its depth-one sweep, which they cover.)"""
    return use_perfect and d == 2 and ub <= limit


@njit(cache=True, inline="always")
def _budgeted(L, fr_bud, fr_d):
    """Whether frame ``L``'s budget is below a full tree of its depth (more than one pair of
    child budgets)."""
    return fr_bud[L] < (1 << fr_d[L]) - 1


@njit(cache=True, inline="always")
def _child_cap(L, fr_bud, fr_d):
    """The largest budget one child of frame ``L``'s split can take."""
    return min(fr_bud[L] - 1, (1 << (fr_d[L] - 1)) - 1)


@njit(cache=True)
def _pair_done(L, lb_l, lb_r, exact, cost, fr_bud, fr_d, fr_pj, fr_pbest, fr_pcap, fr_plast,
               fr_pmin, kid_f, kid_b, pk_f, pk_b, pb):
    """A pair of child budgets of the split under evaluation is done: its children cost
    ``lb_l`` and ``lb_r`` (at least; exactly with ``exact``, together ``cost``). Keep the best
    pair (its trees in ``pk_f``), each side's bound at this budget (``pb``) and at its largest
    (the pair giving that side the most), and the least bound over the pairs (``fr_pmin``),
    and move to the next pair: the left's budget one less, the right's one more."""
    b = fr_bud[L] - 1  # the children's budgets add up to this
    cap = _child_cap(L, fr_bud, fr_d)
    j = fr_pj[L]
    if j == cap:
        fr_pcap[L, 0] = max(fr_pcap[L, 0], lb_l)
    if b - j == cap:
        fr_pcap[L, 1] = max(fr_pcap[L, 1], lb_r)
    pb[L, 0, j] = max(pb[L, 0, j], lb_l)
    pb[L, 1, b - j] = max(pb[L, 1, b - j], lb_r)
    if exact and cost < fr_pbest[L]:
        fr_pbest[L] = cost
        pk_f[L, :, :] = kid_f[L, :, :]
        pk_b[L, :, :] = kid_b[L, :, :]
    fr_plast[L] = lb_l
    fr_pmin[L] = min(fr_pmin[L], cost)
    fr_pj[L] = j - 1


@njit(cache=True)
def _next_pair(L, j, fr_ub, fr_bud, fr_d, fr_pbest, fr_pcap, fr_plast, fr_pmin, pb, penalty):
    """The left budget of the next pair worth solving, from ``j`` down, or -1 when none is: a
    pair whose sides' bounds reach the incumbent and the best pair is passed over (its bound
    kept in ``fr_pmin``), and once the left side's bound at the last pair's budget (which
    holds for every smaller one) and the right side's at its largest reach them, so do all the
    pairs left."""
    b = fr_bud[L] - 1
    cap = _child_cap(L, fr_bud, fr_d)
    target = min(fr_ub[L], fr_pbest[L])
    while j >= b - cap:
        rest = max(fr_pcap[L, 0], fr_plast[L]) + fr_pcap[L, 1] + penalty
        if rest >= target:
            fr_pmin[L] = min(fr_pmin[L], rest)
            return -1
        lo_l = max(fr_pcap[L, 0], fr_plast[L], pb[L, 0, j])
        c = lo_l + max(fr_pcap[L, 1], pb[L, 1, b - j]) + penalty
        if c < target:
            return j
        fr_pmin[L] = min(fr_pmin[L], c)
        fr_plast[L] = lo_l  # (a smaller budget costs no less)
        j -= 1
    return -1


@njit(cache=True)
def _budget_bounds(L, s, mono, flags, cur, ev_b, pb, fr_pcap, fr_bud, fr_d, pw, sp, unit):
    """``pb[L]``: bounds on split ``s``'s sides at each child budget, from those of the
    evaluated splits around it at the same budget (as :func:`_other_side_bound` at the
    largest), and at least each side's bound at its largest budget."""
    le, re = cur[L, 2], cur[L, 3]
    C = _child_cap(L, fr_bud, fr_d)
    mv_l = _moved(pw[L], sp[L], s, re, unit) if re >= 0 else 0.0
    mv_r = _moved(pw[L], sp[L], le, s, unit) if le >= 0 else 0.0
    for j in range(C + 1):
        a = fr_pcap[L, 0]
        c = fr_pcap[L, 1]
        if mono and le >= 0:
            a = max(a, ev_b[L, le, 0, j])
        if mono and re >= 0:
            c = max(c, ev_b[L, re, 1, j])
        if flags[USE_NEIGHBOURS] and re >= 0:
            a = max(a, ev_b[L, re, 0, j] - mv_l)
        if flags[USE_NEIGHBOURS] and le >= 0:
            c = max(c, ev_b[L, le, 1, j] - mv_r)
        pb[L, 0, j] = a
        pb[L, 1, j] = c


@njit(cache=True)
def _keep_budgets(L, s, pb, ev_b, fr_bud, fr_d):
    """Store the evaluated split ``s``'s per-budget side bounds (a side with fewer splits
    costs no less than with more); nothing without a node budget."""
    if ev_b.shape[1] == 0 or not _budgeted(L, fr_bud, fr_d):
        return
    C = _child_cap(L, fr_bud, fr_d)
    for sd in range(2):
        for j in range(C - 1, -1, -1):
            pb[L, sd, j] = max(pb[L, sd, j], pb[L, sd, j + 1])
        for j in range(C + 1):
            ev_b[L, s, sd, j] = pb[L, sd, j]


@njit(cache=True)
def _pair_bound(L, a, c, ev_b, fr_bud, fr_d):
    """A bound on every split whose left side holds split ``a``'s left rows (or more: the
    bounds of ``a``'s left side at each budget hold; -1: no such split) and whose right side
    holds split ``c``'s right rows, with the node's budget shared between the two."""
    b = fr_bud[L] - 1
    C = _child_cap(L, fr_bud, fr_d)
    best = INF
    for j in range(b - C, C + 1):
        v = 0.0
        if a >= 0:
            v += ev_b[L, a, 0, j]
        if c >= 0:
            v += ev_b[L, c, 1, b - j]
        best = min(best, v)
    return best


@njit(cache=True)
def _interval_lower(L, lo, hi, le, re, mono, pw, sp, ev_l, ev_r, unit, penalty):
    """A lower bound on every split in ``[lo, hi]`` from the evaluated splits ``le`` left and
    ``re`` right of it (-1: none), as the pruning in :func:`_next_split` uses them."""
    a = 0.0
    if mono:  # each side is a superset of an evaluated split's side
        if le >= 0:
            a += ev_l[L, le]
        if re >= 0:
            a += ev_r[L, re]
    if le >= 0 and lo <= hi:  # le's right side less the rows moved, at most up to hi
        a = max(a, ev_r[L, le] + (ev_l[L, le] if mono else 0.0)
                - _moved(pw[L], sp[L], le, hi, unit))
    if re >= 0 and lo <= hi:
        a = max(a, ev_l[L, re] + (ev_r[L, re] if mono else 0.0)
                - _moved(pw[L], sp[L], lo, re, unit))
    if le >= 0 and re >= 0:  # re's left side and le's right side, less every row between
        a = max(a, ev_l[L, re] + ev_r[L, le] - _moved(pw[L], sp[L], le, re, unit))
    return a + penalty


@njit(cache=True)
def _stack_lower(L, mono, penalty, fr_ub, fr_lbk, fr_fi, fr_order, fr_qh, fr_qn, queue, cur,
                 fr_mid, fr_phase, fr_lb1, fr_lb2, ev_l, ev_r, pw, sp, unit, root_lo, root_hi,
                 fr_bud, fr_d, fr_pbest, fr_pcap):
    """A lower bound on the root's optimum (or its ``fr_ub`` when no tree below it exists) from
    the frames ``0..L`` of the stack (frame ``L`` selecting, the others waiting on a child).

    A frame's finished work is worth at least its ``fr_ub`` (each split evaluated or ruled
    out was worth that much when it was, and ``fr_ub`` only falls); what is left is its queued
    intervals (bounded by their evaluated neighbours), the split it waits on (its finished
    child's value and the running child's bound, which is this same bound one level up) with
    the rest of that split's interval, and the features it has not started (any split:
    ``penalty``). The bound from its parent (``fr_lbk``) holds too. Under a node budget the
    split it waits on is worth its best pair so far or the bounds at each side's largest
    budget (which bound every pair left)."""
    F = fr_order.shape[1]
    child = INF
    for P in range(L, -1, -1):
        lb = fr_ub[P]
        fi = fr_fi[P]
        for i in range(max(fi + 1, 0), F):
            g = fr_order[P, i]
            if P > 0 or root_lo[g] <= root_hi[g]:
                lb = min(lb, penalty)
                break
        if 0 <= fi < F:
            h = fr_qh[P]
            for q in range(fr_qn[P]):
                lb = min(lb, _interval_lower(P, queue[P, h, 0], queue[P, h, 1], queue[P, h, 2],
                                             queue[P, h, 3], mono, pw, sp, ev_l, ev_r, unit,
                                             penalty))
                h = h + 1 if h + 1 < queue.shape[1] else 0
            if P < L:
                s = fr_mid[P]
                lo, hi, le, re = cur[P, 0], cur[P, 1], cur[P, 2], cur[P, 3]
                if lo <= s - 1:
                    lb = min(lb, _interval_lower(P, lo, s - 1, le, re, mono, pw, sp, ev_l, ev_r,
                                                 unit, penalty))
                if s + 1 <= hi:
                    lb = min(lb, _interval_lower(P, s + 1, hi, le, re, mono, pw, sp, ev_l, ev_r,
                                                 unit, penalty))
                if fr_bud[P] < (1 << fr_d[P]) - 1:
                    lb = min(lb, fr_pbest[P], fr_pcap[P, 0] + fr_pcap[P, 1] + penalty)
                elif fr_phase[P] == WAIT_FIRST:
                    lb = min(lb, child + fr_lb2[P] + penalty)
                else:
                    lb = min(lb, fr_lb1[P] + max(child, fr_lb2[P]) + penalty)
        child = max(lb, fr_lbk[P])
    return child


@njit(cache=True)
def _n_splits(tf, reach):
    """Splits of the heap-layout tree ``tf`` (nodes below a leaf are not part of it)."""
    count = 0
    for i in range(tf.shape[0]):
        reach[i] = i == 0 or (reach[(i - 1) // 2] and tf[(i - 1) // 2] >= 0)
        if reach[i] and tf[i] >= 0:
            count += 1
    return count


@njit(cache=True)
def _global_update(L, penalty, fr_best, fr_phase, fr_first_left, fr_ex1, fr_lb1, fr_tot, fr_f,
                   fr_mid, fr_d, sp, bv, best_f, best_b, kid_f, kid_b, g_cost, g_f, g_b, own,
                   tmp, target, fn):
    """Frame ``L`` has a new incumbent: the best complete tree for the root that keeps every
    waiting ancestor's split, if it beats ``g_cost[0]`` and the root's incumbent, becomes the
    global incumbent ``g_f``/``g_b``. At each ancestor the waiting child's subtree is the
    cheaper of its frame's incumbent and the tree assembled below it; the other child is the
    first child's solved tree when it has one, else a leaf. Pruning never uses it."""
    c = fr_best[L]
    for P in range(L - 1, -1, -1):
        if fr_phase[P] == WAIT_SECOND and fr_ex1[P]:
            other = fr_lb1[P]
        else:
            for k in range(tmp.shape[0]):
                tmp[k] = fr_tot[P, 0, k] - fr_tot[P + 1, 0, k]
            other = _leaf(tmp, target, fn)
        c = c + other + penalty
        own[P] = fr_best[P] <= c
        if own[P]:
            c = fr_best[P]
    if own[0] or c >= g_cost[0]:
        return
    g_cost[0] = c
    g_f[:] = -1
    pos = 0
    for P in range(L):
        if own[P]:
            _copy_subtree(best_f[P], best_b[P], g_f, g_b, pos, fr_d[P])
            return
        f = fr_f[P]
        g_f[pos] = f
        g_b[pos] = bv[P, f, sp[P, fr_mid[P]] - 1]
        first = fr_phase[P] == WAIT_FIRST
        child_left = fr_first_left[P] == first
        if not first and fr_ex1[P]:
            other_sd = 1 if child_left else 0
            _copy_subtree(kid_f[P, other_sd], kid_b[P, other_sd], g_f, g_b,
                          2 * pos + 1 + other_sd, fr_d[P] - 1)
        pos = 2 * pos + (1 if child_left else 2)
    _copy_subtree(best_f[L], best_b[L], g_f, g_b, pos, fr_d[L])


@njit(cache=True)
def _side_totals(lab, L, f, p, n, rows, weights, node_tot, tot, cnt, target):
    """Statistics (class weights) and row counts of the first ``p`` rows in feature ``f``'s
    order and the rest."""
    tot[0, :] = 0.0
    for t in range(p):
        r = np.uint32(rows[L, f, t])
        _add(tot, 0, np.uint32(lab[L, f, t]), weights[r], r, target)  # (ones for unit weights)
    for k in range(tot.shape[1]):
        tot[1, k] = node_tot[k] - tot[0, k]
    cnt[0] = p
    cnt[1] = n - p


@njit(cache=True, inline="always")
def _adopt(L, c, tf, tb, fr_best, best_f, best_b, fr_ub):
    """Frame ``L`` takes the tree of depth two ``tf``/``tb`` (heap layout, cost ``c``) as its
    incumbent if it is better; returns whether it was."""
    better = c < fr_best[L]
    if better:
        fr_best[L] = c
        best_f[L, :] = -1
        best_f[L, :7] = tf
        best_b[L, :7] = tb
    fr_ub[L] = min(fr_ub[L], fr_best[L])
    return better


@njit(cache=True)
def _segment_tree(L, f, t, rows, bv, lab, n, side, side_w, weights, fr_tot, tot, cnt, sw,
                  feat_lb, order, out, penalty, tree_f, tree_b):
    """The tree of :func:`_segment.best_split_on`'s answer at level ``L`` (root split: feature
    ``f`` after its ``t + 1`` first rows) in heap layout: the best test of each side, found
    again by one sweep."""
    for g in range(rows.shape[1]):
        order[g] = g
    if tot.shape[1] == 2:
        feat_lb[:, :] = -INF
        _route_two_class(rows, lab, L, n, f, t + 1, weights, side, side_w, fr_tot[L, 0], tot,
                         cnt)
        _sweep_sides_binary(rows[L], bv[L], n, side, side_w, 1, tot, cnt, sw, feat_lb, order,
                            out, penalty)
    else:
        _mark_sides(rows, L, n, f, t + 1, side)
        _side_totals(lab, L, f, t + 1, n, rows, weights, fr_tot[L, 0], tot, cnt, None)
        best_tests(rows[L], bv[L], lab[L], n, tot.shape[1], weights, side, tot, penalty, sw)
    tree_f[:] = -1
    tree_f[0] = f
    tree_b[0] = bv[L, f, t]
    for s in range(2):
        tree_f[1 + s] = int(sw[s, 1])
        tree_b[1 + s] = int(sw[s, 2])


@njit(cache=True)
def _other_side_bound(L, s, left, mono, flags, cur, ev_l, ev_r, pw, sp, unit):
    """A lower bound on the cost of split ``s``'s left (or right) subtree from the evaluated
    splits around it: a superset of rows costs at least as much, and each removed row lowers
    the cost by at most its weight."""
    le, re = cur[L, 2], cur[L, 3]
    bound = 0.0
    if left:
        if le >= 0 and mono:
            bound = ev_l[L, le]
        if re >= 0 and flags[USE_NEIGHBOURS]:
            bound = max(bound, ev_l[L, re] - _moved(pw[L], sp[L], s, re, unit))
    else:
        if re >= 0 and mono:
            bound = ev_r[L, re]
        if le >= 0 and flags[USE_NEIGHBOURS]:
            bound = max(bound, ev_r[L, le] - _moved(pw[L], sp[L], le, s, unit))
    return bound


@njit(cache=True)
def _sort_root(bucket, labels, rows, bv, lab):
    """All rows sorted once per feature, with their buckets and labels in that order."""
    F, n = bucket.shape
    for g in range(F):
        _counting_sort(bucket[g], rows[g])
        for t in range(n):
            bv[g, t] = bucket[g, rows[g, t]]
            lab[g, t] = labels[rows[g, t]]


@njit(cache=True)
def root_order(bucket, labels, weights, unit, n_classes, min_leaf, target, fn):
    """The features in the order the root tries them (least Gini impurity of a split first)."""
    F, n = bucket.shape
    rows = np.empty((F, n), np.int32)
    bv = np.empty((F, n), np.int32)
    lab = np.empty((F, n), np.int32)
    _sort_root(bucket, labels, rows, bv, lab)
    tot = np.zeros((2, n_classes))
    for r in range(n):
        _add(tot, 0, labels[r], weights[r], r, target)
    feat_cost = np.zeros(F)
    _sweep_node(rows, bv, lab, n, weights, min_leaf, tot, np.zeros((2, n_classes)),
                np.zeros((2, 4)), feat_cost, np.zeros(F, np.int64), target, fn, 0.0, INF)
    return np.argsort(feat_cost, kind="mergesort")


@njit(cache=True)
def _init_frame(L, n, d, ub, rows, bv, lab, weights, unit, min_leaf, fr_n, fr_d, fr_ub_in,
                fr_ub, fr_best, fr_tot, fr_order, fr_d1pos, fr_fi, fr_phase, fr_qn,
                best_f, best_b, pre, sw, feat_cost, stats, target, fn, fr_rho, penalty, sweep,
                bud, fr_bud, korder, kbuf, kstack, fr_low, fr_lbk, deadline):
    """Start the frame of level ``L``: its incumbent is the best tree of depth <= 1 (one sweep,
    which also orders the features by their depth-one cost), which ends the frame with a
    budget ``bud`` of one split (zero: a leaf). Squared error: ``fr_rho[L]`` is
    the squared range of the node's targets (see the module docstring). A tree the sweep has
    not seen has two splits or more, so it costs ``2 * penalty`` at least. Without ``sweep``
    (a node the histogram solve finds the optimum of, which covers depth one) the incumbent is
    the leaf, and an unseen tree costs ``penalty`` at least. With ``korder`` (squared error,
    ``kmeans_bound`` on) the frame first takes the k-means bound of its targets as a lower bound
    (``fr_low``, ``fr_lbk``), and ends at once, with the leaf, when that reaches ``ub``. Returns
    True when the sweep stopped past the ``deadline`` (the search must then stop)."""
    stats[ST_FRAMES] += 1
    fr_n[L] = n
    fr_d[L] = min(d, bud)  # b splits reach b levels at most
    fr_ub_in[L] = ub
    fr_bud[L] = bud
    fr_tot[L, :, :] = 0.0
    for t in range(n):
        r = rows[L, 0, t]
        _add(fr_tot[L], 0, lab[L, 0, t], 1.0 if unit else weights[r], r, target)
    if target is not None:
        lo = INF
        hi = -INF
        for t in range(n):
            y = target[rows[L, 0, t]]
            lo = min(lo, y)
            hi = max(hi, y)
        fr_rho[L] = (hi - lo) * (hi - lo) if n else 0.0
        if fn is not None and n:  # a user's regression cost: its bound for [lo, hi]
            span = np.empty(2)
            span[0] = lo
            span[1] = hi
            fr_rho[L] = fn[0](span.ctypes, span.ctypes, 2, 2)
    elif fn is not None:
        fr_rho[L] = fn[1]
    if target is not None and korder.shape[0] and n > 1:
        leaves = min(1 << fr_d[L], bud + 1)
        # (At the root: always, a lower bound when the search is cut short.)
        km = kmeans_bound(korder[L], n, target, weights, leaves, penalty, INF if L == 0 else ub,
                          kbuf, kstack)
        fr_low[L] = km
        fr_lbk[L] = max(fr_lbk[L], km)
        if km >= ub:  # no tree of this node beats ub
            fr_best[L] = _leaf(fr_tot[L, 0], target, fn)
            best_f[L, 0] = best_f[L, 1] = best_f[L, 2] = -1
            fr_ub[L] = min(ub, fr_best[L])
            fr_fi[L] = rows.shape[1]
            fr_qn[L] = 0
            fr_phase[L] = SELECT
            return False
    late = False
    if sweep:
        late = _sweep_node(rows[L], bv[L], lab[L], n, weights, min_leaf, fr_tot[L], pre,
                           sw, feat_cost, fr_d1pos[L], target, fn, penalty, deadline)
        fr_best[L] = sw[0, 0]
        best_f[L, 0] = int(sw[0, 1])
        best_b[L, 0] = int(sw[0, 2])
        fr_order[L, :] = np.argsort(feat_cost, kind="mergesort")
    else:
        fr_best[L] = _leaf(fr_tot[L, 0], target, fn)
        best_f[L, 0] = -1
        best_b[L, 0] = 0
        fr_order[L, :] = np.arange(rows.shape[1])
    best_f[L, 1] = -1
    best_f[L, 2] = -1
    fr_ub[L] = min(ub, fr_best[L])
    fr_fi[L] = -1
    fr_qn[L] = 0
    fr_phase[L] = SELECT
    if bud == 0:
        fr_best[L] = _leaf(fr_tot[L, 0], target, fn)
        best_f[L, 0] = -1
        fr_ub[L] = min(ub, fr_best[L])
    if fr_ub[L] <= (2.0 if sweep else 1.0) * penalty or bud <= 1:
        fr_fi[L] = rows.shape[1]  # nothing can beat a perfect (or zero-bound) incumbent
    return late


@njit(cache=True, inline="always")
def _sweep_first(L, d, use_hist, bv, n, F, h_off, fr_hist, target, fn):
    """Whether the frame of level ``L`` (``d`` levels, ``n`` rows) starts with its depth-one
    sweep. Squared error decides here whether :func:`_histogram.solve_depth2` solves it
    (``fr_hist[L]``; ``h_off`` then holds its buckets) and then starts without: the solve's
    optimum covers the sweep's trees. Other objectives keep the sweep (its incumbent and order)
    and decide when the frame runs."""
    fr_hist[L] = False
    if use_hist and d == 2 and target is not None and fn is None:
        fr_hist[L] = worth_it_squared(F, n, bucket_offsets(bv[L], n, h_off))
    return not fr_hist[L]


@njit(cache=True, inline="always")
def _class_bound(k, depth, penalty, wmin):
    """A lower bound on the (penalised) misclassification of any tree of ``depth`` levels over
    rows of ``k`` classes: with ``k - 1`` splits or more it pays their penalties; with fewer
    (necessarily when ``k > 2 ** depth``) it has fewer leaves than classes, so it misclassifies
    a row, of weight ``wmin`` at least."""
    if k <= 1:
        return 0.0
    if k > (1 << depth):
        return wmin
    return min((k - 1) * penalty, wmin)


@njit(cache=True)
def _unpredicted(tot_s, J, scratch):
    """A lower bound on the misclassification of any tree with ``J`` leaves or fewer over
    rows of class weights ``tot_s``: every class but the ``J`` it predicts is misclassified,
    so it costs the weight of all but the ``J`` heaviest classes at least (0 when there are no
    more than ``J`` classes). Exact sums for unit weights (the only use)."""
    K = tot_s.shape[0]
    if K <= J:
        return 0.0
    total = 0.0
    for k in range(K):
        scratch[k] = tot_s[k]
        total += tot_s[k]
    for _ in range(J):
        j = 0
        for k in range(1, K):
            if scratch[k] > scratch[j]:
                j = k
        total -= scratch[j]
        scratch[j] = -1.0
    return total


@njit(cache=True)
def _count_sides(lab_f, rows_f, weights, unit, n, sp_L, m, counts, out):
    """``out[i] = (classes left, classes right)`` of split index ``i`` (``sp_L[i]`` rows left)
    over rows ``lab_f[:n]`` in a feature's order (rows of weight 0 count for no class)."""
    total, left = counts[0], counts[1]
    total[:] = 0
    left[:] = 0
    for t in range(n):
        if unit or weights[np.uint32(rows_f[t])] > 0.0:
            total[np.uint32(lab_f[t])] += 1
    k_all = 0
    for k in range(total.shape[0]):
        if total[k] > 0:
            k_all += 1
    k_left = 0
    k_gone = 0  # classes with every row on the left
    i = 0
    for t in range(n):
        if unit or weights[np.uint32(rows_f[t])] > 0.0:
            c = np.uint32(lab_f[t])
            if left[c] == 0:
                k_left += 1
            left[c] += 1
            if left[c] == total[c]:
                k_gone += 1
        while i < m and sp_L[i] == t + 1:
            out[i, 0] = k_left
            out[i, 1] = k_all - k_gone
            i += 1


@njit(cache=True)
def _next_split(L, rows, bv, lab, weights, rho, unit, min_leaf, mono, flags, stats, fr_n, fr_ub,
                fr_order, fr_d1pos, fr_fi, fr_f, sp, fr_m, pw, queue, fr_qh, fr_qn, ev_l, ev_r,
                ev_c, cur, fr_mid, root_lo, root_hi, penalty, sides_k, class_rows, fr_sides,
                ev_b, fr_bud, fr_d):
    """The next split index of the frame at level ``L`` worth evaluating (moving on to the next
    feature when the current one's intervals are exhausted), or -1 when the frame is done.
    ``pw`` gets the prefix weights times ``rho`` (1 for misclassification; see the module
    docstring). The root (``L == 0``) splits only within ``root_lo``/``root_hi``. With
    ``sides_k`` sized for it, its row ``L`` gets the classes on each side of every split
    (``fr_sides[L]``), unless two classes and the incumbent make :func:`_class_bound` useless:
    then both sides' bounds are ``penalty`` at most and prune only below ``3 * penalty``.
    Under a node budget the interval bounds combine the sides' bounds budget by budget
    (:func:`_pair_bound`)."""
    F = rows.shape[1]
    n = fr_n[L]
    budgeted = ev_b.shape[1] > 0 and _budgeted(L, fr_bud, fr_d)
    while True:
        if fr_qn[L] == 0:
            fr_fi[L] += 1
            if fr_fi[L] >= F or fr_ub[L] <= 2.0 * penalty:  # see _init_frame
                return -1
            f = fr_order[L, fr_fi[L]]
            fr_f[L] = f
            b_lo = root_lo[f] if L == 0 else 0
            b_hi = root_hi[f] if L == 0 else ALL_BUCKETS
            if b_lo > b_hi:
                continue
            # Split points: positions (rows left) where the bucket changes, leaves >= min_leaf.
            m = 0
            acc = 0.0
            pw[L, 0] = 0.0
            for t in range(n):
                if t >= min_leaf and n - t >= min_leaf and bv[L, f, t] != bv[L, f, t - 1]:
                    if b_lo <= bv[L, f, t - 1] <= b_hi:
                        sp[L, m] = t
                        m += 1
                if not unit:
                    acc += weights[rows[L, f, t]] * rho
                    pw[L, t + 1] = acc
            fr_m[L] = m
            if m == 0:
                continue
            fr_sides[L] = sides_k.shape[1] > 0 and (class_rows.shape[1] > 2
                                                    or fr_ub[L] <= 3.0 * penalty)
            if fr_sides[L]:
                _count_sides(lab[L, f], rows[L, f], weights, unit, n, sp[L], m, class_rows,
                             sides_k[L])
            first = (m - 1) // 2
            if flags[USE_DEPTH1_FIRST] and fr_d1pos[L, f] >= 0:
                # Start where the best depth-one split of this feature lies.
                p = fr_d1pos[L, f]
                lo, hi = 0, m - 1
                while lo < hi:
                    mid = (lo + hi) // 2
                    if sp[L, mid] < p:
                        lo = mid + 1
                    else:
                        hi = mid
                first = lo
            cur[L, 0] = 0
            cur[L, 1] = m - 1
            cur[L, 2] = -1
            cur[L, 3] = -1
            fr_mid[L] = first
            return first
        # Pop the oldest interval (breadth first: coarse splits before fine ones).
        h = fr_qh[L]
        lo, hi, le, re = queue[L, h, 0], queue[L, h, 1], queue[L, h, 2], queue[L, h, 3]
        fr_qh[L] = h + 1 if h + 1 < queue.shape[1] else 0
        fr_qn[L] -= 1
        ub = fr_ub[L]
        if flags[USE_INTERVALS] and mono:
            # Every split between le and re keeps le's left rows and re's right rows.
            if budgeted:
                bound = penalty + _pair_bound(L, le, re, ev_b, fr_bud, fr_d)
            else:
                bound = _between(L, le, re, ev_l, ev_r, penalty)
            if bound >= ub:
                stats[ST_PRUNED] += 1
                continue
        if flags[USE_NEIGHBOURS] and le >= 0 and re >= 0 and (
                (_pair_bound(L, re, le, ev_b, fr_bud, fr_d) if budgeted
                 else ev_l[L, re] + ev_r[L, le])
                + penalty - _moved(pw[L], sp[L], le, re, unit) >= ub):
            # re's left subtree and le's right one lose at most the rows between them.
            stats[ST_PRUNED] += 1
            continue
        if flags[USE_NEIGHBOURS]:
            # The incumbent may have improved since the interval was queued: shrink it again.
            if le >= 0:
                gap = (ev_c[L, le] if mono else ev_r[L, le] + penalty) - ub
                if gap >= 0.0:
                    lo = _first_beyond(pw[L], sp[L], le, lo, hi, gap, unit)
            if re >= 0 and lo <= hi:
                gap = (ev_c[L, re] if mono else ev_l[L, re] + penalty) - ub
                if gap >= 0.0:
                    hi = _last_before(pw[L], sp[L], re, lo, hi, gap, unit)
        if lo > hi:
            stats[ST_PRUNED] += 1
            continue
        cur[L, 0] = lo
        cur[L, 1] = hi
        cur[L, 2] = le
        cur[L, 3] = re
        fr_mid[L] = (lo + hi) // 2
        return fr_mid[L]


@njit(cache=True, inline="always")
def _between(L, le, re, ev_l, ev_r, penalty):
    """A bound on every split between the evaluated splits ``le`` and ``re`` (-1: none), which
    keep ``le``'s left rows and ``re``'s right rows, plus ``penalty``."""
    bound = penalty
    if le >= 0:
        bound += ev_l[L, le]
    if re >= 0:
        bound += ev_r[L, re]
    return bound


@njit(cache=True)
def _queued_spans(L, queue, fr_qh, fr_qn, sp, ev_l, ev_r, fr_ub, penalty, mono, flags, spans,
                  keys):
    """The queued intervals of level ``L`` that their interval bound does not rule out, as
    position spans of the current feature's order (:func:`_segment.best_split_on`), sorted;
    returns their number."""
    k = 0
    h = fr_qh[L]
    n1 = keys.shape[0]
    for _ in range(fr_qn[L]):
        lo, hi, le, re = queue[L, h, 0], queue[L, h, 1], queue[L, h, 2], queue[L, h, 3]
        h = h + 1 if h + 1 < queue.shape[1] else 0
        if flags[USE_INTERVALS] and mono and _between(L, le, re, ev_l, ev_r, penalty) >= fr_ub[L]:
            continue
        keys[k] = (sp[L, lo] - 1) * n1 + sp[L, hi] - 1
        k += 1
    keys[:k].sort()
    for j in range(k):
        spans[j, 0] = keys[j] // n1
        spans[j, 1] = keys[j] % n1
    return k


@njit(cache=True)
def _push(L, queue, fr_qh, fr_qn, lo, hi, le, re):
    if lo > hi:
        return
    t = fr_qh[L] + fr_qn[L]
    if t >= queue.shape[1]:
        t -= queue.shape[1]
    queue[L, t, 0] = lo
    queue[L, t, 1] = hi
    queue[L, t, 2] = le
    queue[L, t, 3] = re
    fr_qn[L] += 1


@njit(cache=True)
def _record(L, b, lb_l, lb_r, exact, total, bound, mono, flags, fr_ub, fr_best, fr_f, sp, pw,
            unit, queue, fr_qh, fr_qn, ev_l, ev_r, ev_c, cur, fr_mid, best_f, best_b, kid_f,
            kid_b, fr_d, penalty):
    """Store the evaluated split's child bounds and a bound on its whole cost (``bound``: its
    children plus ``penalty``, under a node budget at their best pair of budgets, which can
    exceed ``lb_l + lb_r + penalty``), adopt it if it improves the incumbent (with ``exact``,
    it costs ``total``), and queue the rest of its interval minus the splits its bounds rule
    out. Returns whether the incumbent improved."""
    s = fr_mid[L]
    ev_l[L, s] = lb_l
    ev_r[L, s] = lb_r
    ev_c[L, s] = bound
    improved = exact and total < fr_best[L]
    if improved:
        fr_best[L] = total
        if total < fr_ub[L]:
            fr_ub[L] = total
        d = fr_d[L]
        best_f[L, 0] = fr_f[L]
        best_b[L, 0] = b
        _copy_subtree(kid_f[L, 0], kid_b[L, 0], best_f[L], best_b[L], 1, d - 1)
        _copy_subtree(kid_f[L, 1], kid_b[L, 1], best_f[L], best_b[L], 2, d - 1)
    lo, hi, le, re = cur[L, 0], cur[L, 1], cur[L, 2], cur[L, 3]
    ub = fr_ub[L]
    right_lo = s + 1
    left_hi = s - 1
    if flags[USE_NEIGHBOURS]:
        # Right of s the left subtree only gains rows and the right one loses them.
        gap = (bound if mono else lb_r + penalty) - ub
        if gap >= 0.0:
            right_lo = _first_beyond(pw[L], sp[L], s, s + 1, hi, gap, unit)
        gap = (bound if mono else lb_l + penalty) - ub  # and the other way round left of s
        if gap >= 0.0:
            left_hi = _last_before(pw[L], sp[L], s, lo, s - 1, gap, unit)
    _push(L, queue, fr_qh, fr_qn, lo, left_hi, le, s)
    _push(L, queue, fr_qh, fr_qn, right_lo, hi, s, re)
    return improved
