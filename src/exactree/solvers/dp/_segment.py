"""The best tree of depth two of a two-class node among those whose root splits one given
feature, over all its thresholds at once, in ``O(features x rows x log rows)`` whatever the
bounds, by segment trees of prefix sums.

The ordered search (:mod:`._ordered`) evaluates a depth-two node's root splits one at a time,
each a sweep over every feature's rows. Its bounds skip most root splits when the node's
classes separate well, but on large noisy nodes they skip few, and then every root split costs
``features x rows`` (150,000 rows of 10 features: 2,900 of them evaluated, a minute); the
search then hands the splits a root feature still has queued (a few spans of its order) to
:func:`best_split_on`.

With two classes the best test of a set of rows on feature ``g`` needs no sweep once the
running class difference ``d = P0 - P1`` along ``g``'s order is known: its two leaves cost
``min(T0, T1, T1 + min d, T0 - max d)`` (``T``: the set's class weights; ``min``/``max`` over the
positions where ``g``'s value changes). A segment tree over ``g``'s order holding each row's
``+w`` (class 0), ``-w`` (class 1) or ``0`` (not in the set) keeps ``min d`` and ``max d`` at its
root under single-row updates in ``O(log rows)``. Sweeping the root feature ``f``'s rows in
order moves one row at a time from the right side's tree to the left side's: after each
threshold of ``f`` both sides' best tests on ``g`` are read off the roots. Across a wide gap
between two spans the trees are built again instead, in ``O(rows)``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .._clock import late as _late

INF = np.inf


@njit(cache=True)
def tree_size(n):
    """Leaves of the segment trees for ``n`` rows (a power of two)."""
    size = 1
    while size < n:
        size *= 2
    return size


@njit(cache=True, inline="always")
def _leaf(seg, i, j, v, cut):
    """Leaf ``i`` of tree ``j`` (0: left side, 1: right side) holds ``v``; a prefix may end
    there only at a ``cut``."""
    seg[i, 3 * j] = v
    seg[i, 3 * j + 1] = v if cut else INF
    seg[i, 3 * j + 2] = v if cut else -INF


@njit(cache=True, inline="always")
def _pull(seg, i):
    """Node ``i`` of both trees from its children: sum, least and largest prefix sum."""
    a = 2 * i
    b = a + 1
    for j in range(0, 6, 3):
        s = seg[a, j]
        seg[i, j] = s + seg[b, j]
        seg[i, j + 1] = min(seg[a, j + 1], s + seg[b, j + 1])
        seg[i, j + 2] = max(seg[a, j + 2], s + seg[b, j + 2])


@njit(cache=True)
def row_positions(rows, n, pos):
    """``pos[r, g]``: where row ``r`` lies in feature ``g``'s order (``rows[g, :n]``)."""
    for g in range(rows.shape[0]):
        for t in range(n):
            pos[rows[g, t], g] = t


@njit(cache=True)
def update_work(spans, k, size):
    """What :func:`best_split_on` does per feature for the ``k`` first ``spans``, in tree-node
    updates: a row moved costs a path (``log2 size`` nodes), a gap between two spans costs its
    rows' paths or one rebuild of the trees (about ``1.5 * size`` nodes), whichever is less."""
    depth = np.log2(size) + 1.0
    rebuild = 1.5 * size
    work = rebuild
    for j in range(k):
        if j > 0:
            work += min(rebuild, (spans[j, 0] - spans[j - 1, 1]) * depth)
        work += (spans[j, 1] - spans[j, 0] + 1) * depth
    return work


@njit(cache=True)
def _rebuild(seg, g, f, rows, bv, lab, n, weights, pos, last):
    """Feature ``g``'s trees with the rows up to position ``last`` of ``f``'s order left."""
    size = seg.shape[0] // 2
    for q in range(size):
        cut = q < n - 1 and bv[g, q + 1] != bv[g, q]
        v = 0.0
        left = False
        if q < n:
            r = rows[g, q]
            v = weights[r] if lab[g, q] == 0 else -weights[r]
            left = pos[r, f] <= last
        _leaf(seg, size + q, 0, v if left else 0.0, cut)
        _leaf(seg, size + q, 1, 0.0 if left else v, cut)
    for i in range(size - 1, 0, -1):
        _pull(seg, i)


@njit(cache=True)
def best_split_on(f, rows, bv, lab, n, weights, penalty, spans, k, deadline, pos, seg,
                  side_best):
    """The least cost of a tree of depth at most two of a node with two classes whose root
    splits feature ``f`` after a position ``t`` of its order within one of the ``k`` first
    ``spans`` (rows ``(a, b)``: ``a <= t <= b``; sorted, disjoint), every split charged
    ``penalty`` (misclassified weight plus penalties; a side may stay a leaf; no minimum leaf
    size). Returns ``(cost, t, cut)``: the root splits after ``f``'s ``t + 1`` first rows
    (``t = -1``, cost INF: no such split); ``cut`` (cost INF) when it stopped past the
    ``deadline`` (see :func:`.._clock.late`).

    ``rows[g, :n]`` are the node's rows sorted by feature ``g``, ``bv``/``lab`` their buckets and
    labels (0 or 1) in that order, ``pos`` from :func:`row_positions`. Scratch: ``seg``
    (twice :func:`tree_size` x 6: each node's sum, least and largest prefix sum in the left
    side's tree, then the right side's), ``side_best`` (2 x rows). Between two spans the rows
    move one by one or the trees are built again, whichever costs less (:func:`update_work`).
    """
    F = rows.shape[0]
    size = seg.shape[0] // 2
    depth = np.log2(size) + 1.0
    t0 = 0.0
    t1 = 0.0
    for t in range(n):
        if lab[f, t] == 0:
            t0 += weights[rows[f, t]]
        else:
            t1 += weights[rows[f, t]]
    # Each threshold's sides as leaves; -1 marks a position that is no threshold.
    side_best[0, :n] = -1.0
    l0 = 0.0
    l1 = 0.0
    any_cut = False
    j = 0
    for t in range(n - 1):
        if lab[f, t] == 0:
            l0 += weights[rows[f, t]]
        else:
            l1 += weights[rows[f, t]]
        while j < k and spans[j, 1] < t:
            j += 1
        if j < k and spans[j, 0] <= t and bv[f, t + 1] != bv[f, t]:
            side_best[0, t] = min(l0, l1)
            side_best[1, t] = min(t0 - l0, t1 - l1)
            any_cut = True
    if not any_cut:
        return INF, -1, False
    for g in range(F):
        last = -2  # rows up to this position of f's order are left (-2: no trees yet)
        l0 = 0.0
        l1 = 0.0
        for j in range(k):
            a = spans[j, 0]
            if last < -1 or (a - 1 - last) * depth > 1.5 * size:
                last = a - 1
                _rebuild(seg, g, f, rows, bv, lab, n, weights, pos, last)
                l0 = l1 = 0.0
                for t in range(a):
                    if lab[f, t] == 0:
                        l0 += weights[rows[f, t]]
                    else:
                        l1 += weights[rows[f, t]]
            for t in range(last + 1, min(spans[j, 1], n - 2) + 1):
                r = rows[f, t]
                w = weights[r]
                if lab[f, t] == 0:
                    v = w
                    l0 += w
                else:
                    v = -w
                    l1 += w
                q = pos[r, g]
                cut = q < n - 1 and bv[g, q + 1] != bv[g, q]
                i = size + q
                _leaf(seg, i, 0, v, cut)
                _leaf(seg, i, 1, 0.0, cut)
                i >>= 1
                while i >= 1:
                    _pull(seg, i)
                    i >>= 1
                last = t
                if t < a or side_best[0, t] < 0.0:
                    continue
                c = min(l1 + seg[1, 1], l0 - seg[1, 2]) + penalty
                if c < side_best[0, t]:
                    side_best[0, t] = c
                c = min(t1 - l1 + seg[1, 4], t0 - l0 - seg[1, 5]) + penalty
                if c < side_best[1, t]:
                    side_best[1, t] = c
        if _late(n, deadline):
            return INF, -1, True
    best = INF
    at = -1
    for t in range(n - 1):
        if side_best[0, t] >= 0.0:
            c = side_best[0, t] + side_best[1, t] + penalty
            if c < best:
                best = c
                at = t
    return best, at, False
