"""The best tree of depth two of a node among those whose root splits one given feature, over
all its thresholds at once, in ``O(pairs x features x rows x log rows)`` whatever the bounds
(``pairs``: of classes), by segment trees of prefix sums.

The ordered search (:mod:`._ordered`) evaluates a depth-two node's root splits one at a time,
each a sweep over every feature's rows. Its bounds skip most root splits when the node's
classes separate well, but on large noisy nodes they skip few, and then every root split costs
``features x rows`` (150,000 rows of 10 features: 2,900 of them evaluated, a minute); the
search then hands the splits a root feature still has queued (a few spans of its order) to
:func:`best_split_on`.

The best test of a set of rows on feature ``g`` needs no sweep once, for every pair of classes
``a < b``, the running difference ``d = P_a - P_b`` of their weights along ``g``'s order is
known: leaves predicting ``a`` (left) and ``b`` (right) cost ``T - T_b - d``, the other way
round ``T - T_a + d`` (``T``: the set's weights), so the best test costs the least of the leaf,
``T - T_b - max d`` and ``T - T_a + min d`` over the pairs (``min``/``max`` over the positions
where ``g``'s value changes; with two classes ``min(T0, T1, T1 + min d, T0 - max d)``). A
segment tree over ``g``'s order holding each row's ``+w`` (class ``a``), ``-w`` (class ``b``) or
``0`` (another class, or not in the set) keeps ``min d`` and ``max d`` at its root under
single-row updates in ``O(log rows)``. Sweeping the root feature ``f``'s rows in order moves
one row at a time from the right side's trees to the left side's: after each threshold of
``f`` both sides' best tests on ``g`` are read off the roots. Across a wide gap between two
spans the trees are built again instead, in ``O(rows)``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .._clock import late as _late

INF = np.inf
# Tree node indices are unsigned (no negative-index wraparound code in the loops); in Numba,
# uint64 mixed with int64 gives float64, hence these constants.
ONE = np.uint64(1)
THREE = np.uint64(3)


@njit(cache=True)
def tree_size(n):
    """Leaves of the segment trees for ``n`` rows (a power of two)."""
    size = 1
    while size < n:
        size *= 2
    return size


@njit(cache=True, inline="always")
def pairs(n_classes):
    """Pairs of classes, one segment tree each per side."""
    return n_classes * (n_classes - 1) // 2


@njit(cache=True, inline="always")
def _leaf(seg, i, j, y, v, cut, K):
    """Leaf ``i`` of side ``j``'s trees (0: left, 1: right) holds a row of class ``y`` and weight
    ``v`` (0: none): ``+v`` in the trees of the pairs ``(y, b)``, ``-v`` in those of ``(a, y)``; a
    prefix may end there only at a ``cut``."""
    if K == 2:  # (the common case, unrolled)
        x = v if y == 0 else -v
        seg[i, 3 * j] = x
        seg[i, 3 * j + 1] = x if cut else INF
        seg[i, 3 * j + 2] = x if cut else -INF
        return
    c = np.uint64(3 * pairs(K) * j)
    for a in range(K - 1):
        for b in range(a + 1, K):
            x = v if y == a else (-v if y == b else 0.0)
            seg[i, c] = x
            seg[i, c + ONE] = x if cut else INF
            seg[i, c + ONE + ONE] = x if cut else -INF
            c += THREE


@njit(cache=True, inline="always")
def _pull_tree(seg, i, a, b, j):
    """Node ``i`` of the tree in columns ``j .. j + 2`` from its children ``a`` and ``b``: sum,
    least and largest prefix sum."""
    s = seg[a, j]
    j1 = j + ONE
    j2 = j1 + ONE
    seg[i, j] = s + seg[b, j]
    seg[i, j1] = min(seg[a, j1], s + seg[b, j1])
    seg[i, j2] = max(seg[a, j2], s + seg[b, j2])


@njit(cache=True, inline="always")
def _pull(seg, i):
    """Node ``i`` (unsigned) of every tree from its children."""
    for j in range(0, seg.shape[1], 3):
        _pull_tree(seg, i, i + i, i + i + ONE, np.uint64(j))


@njit(cache=True, inline="always")
def _move_left(seg, i, y, v, cut, K):
    """The row of class ``y`` and weight ``v`` at leaf ``i`` moves from the right side's trees to
    the left side's; the paths above it follow. (``i`` unsigned: no wraparound code.)"""
    if K == 2:  # (the common case, with the path's loop unrolled)
        _leaf(seg, i, 0, y, v, cut, 2)
        _leaf(seg, i, 1, y, 0.0, cut, 2)
        i >>= ONE
        while i >= ONE:
            _pull_tree(seg, i, i + i, i + i + ONE, np.uint64(0))
            _pull_tree(seg, i, i + i, i + i + ONE, THREE)
            i >>= ONE
        return
    _leaf(seg, i, 0, y, v, cut, K)
    _leaf(seg, i, 1, y, 0.0, cut, K)
    i >>= ONE
    while i >= ONE:
        _pull(seg, i)
        i >>= ONE


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
def _rebuild(seg, g, f, rows, bv, lab, n, K, weights, pos, last):
    """Feature ``g``'s trees with the rows up to position ``last`` of ``f``'s order left.
    (Unsigned node and row indices: no wraparound code.)"""
    size = seg.shape[0] // 2
    for q in range(size):
        cut = q < n - 1 and bv[g, q + 1] != bv[g, q]
        v = 0.0
        y = 0
        left = False
        if q < n:
            r = np.uint32(rows[g, q])
            v = weights[r]
            y = lab[g, q]
            left = pos[r, f] <= last
        i = np.uint64(size + q)
        _leaf(seg, i, 0, y, v if left else 0.0, cut, K)
        _leaf(seg, i, 1, y, 0.0 if left else v, cut, K)
    if K == 2:  # (the common case, unrolled)
        for ii in range(size - 1, 0, -1):
            i = np.uint64(ii)
            _pull_tree(seg, i, i + i, i + i + ONE, np.uint64(0))
            _pull_tree(seg, i, i + i, i + i + ONE, THREE)
    else:
        for ii in range(size - 1, 0, -1):
            _pull(seg, np.uint64(ii))


@njit(cache=True, inline="always")
def _best_test(seg, j, others, K):
    """The least cost of a test (two leaves) of side ``j`` on the feature in ``seg``
    (``others[c]``: the side's weight of every class but ``c``)."""
    best = INF
    c = 3 * pairs(K) * j
    for a in range(K - 1):
        for b in range(a + 1, K):
            best = min(best, others[a] + seg[1, c + 1], others[b] - seg[1, c + 2])
            c += 3
    return best


@njit(cache=True, inline="always")
def _others(w, out, K):
    """``out[c]``: the weight of every class but ``c`` in ``w``; returns the least (the leaf)."""
    leaf = INF
    for c in range(K):
        x = 0.0
        for d in range(K):
            if d != c:
                x += w[d]
        out[c] = x
        leaf = min(leaf, x)
    return leaf


@njit(cache=True)
def best_split_on(f, rows, bv, lab, n, K, weights, penalty, spans, k, deadline, pos, seg,
                  side_best):
    """The least cost of a tree of depth at most two of a node with ``K`` classes whose root
    splits feature ``f`` after a position ``t`` of its order within one of the ``k`` first
    ``spans`` (rows ``(a, b)``: ``a <= t <= b``; sorted, disjoint), every split charged
    ``penalty`` (misclassified weight plus penalties; a side may stay a leaf; no minimum leaf
    size). Returns ``(cost, t, cut)``: the root splits after ``f``'s ``t + 1`` first rows
    (``t = -1``, cost INF: no such split); ``cut`` (cost INF) when it stopped past the
    ``deadline`` (see :func:`.._clock.late`).

    ``rows[g, :n]`` are the node's rows sorted by feature ``g``, ``bv``/``lab`` their buckets and
    labels (``0 .. K - 1``) in that order, ``pos`` from :func:`row_positions`. Scratch: ``seg``
    (twice :func:`tree_size` x ``6 * pairs(K)``: each node's sum, least and largest prefix sum
    in the left side's tree of each pair, then the right side's), ``side_best`` (2 x rows).
    Between two spans the rows move one by one or the trees are built again, whichever costs
    less (:func:`update_work`).
    """
    F = rows.shape[0]
    size = seg.shape[0] // 2
    depth = np.log2(size) + 1.0
    tot = np.zeros(K)
    left = np.zeros(K)
    right = np.zeros(K)
    o_left = np.zeros(K)
    o_right = np.zeros(K)
    for t in range(n):
        tot[lab[f, t]] += weights[rows[f, t]]
    # Each threshold's sides as leaves; -1 marks a position that is no threshold.
    side_best[0, :n] = -1.0
    any_cut = False
    j = 0
    for t in range(n - 1):
        left[lab[f, t]] += weights[rows[f, t]]
        while j < k and spans[j, 1] < t:
            j += 1
        if j < k and spans[j, 0] <= t and bv[f, t + 1] != bv[f, t]:
            for c in range(K):
                right[c] = tot[c] - left[c]
            side_best[0, t] = _others(left, o_left, K)
            side_best[1, t] = _others(right, o_right, K)
            any_cut = True
    if not any_cut:
        return INF, -1, False
    for g in range(F):
        last = -2  # rows up to this position of f's order are left (-2: no trees yet)
        for j in range(k):
            a = spans[j, 0]
            if last < -1 or (a - 1 - last) * depth > 1.5 * size:
                last = a - 1
                _rebuild(seg, g, f, rows, bv, lab, n, K, weights, pos, last)
                left[:] = 0.0
                for t in range(a):
                    left[lab[f, t]] += weights[rows[f, t]]
            for tt in range(last + 1, min(spans[j, 1], n - 2) + 1):
                t = np.uint64(tt)  # unsigned indices: no wraparound code
                r = np.uint32(rows[f, t])
                w = weights[r]
                y = np.uint32(lab[f, t])
                left[y] += w
                q = np.uint64(pos[r, g])
                cut = q < np.uint64(n - 1) and bv[g, q + ONE] != bv[g, q]
                _move_left(seg, np.uint64(size) + q, y, w, cut, K)
                last = tt
                if tt < a or side_best[0, t] < 0.0:
                    continue
                if K == 2:  # (the common case: T - T_b is the other class's weight)
                    cost_l = min(left[1] + seg[1, 1], left[0] - seg[1, 2])
                    cost_r = min(tot[1] - left[1] + seg[1, 4], tot[0] - left[0] - seg[1, 5])
                else:
                    for c in range(K):
                        right[c] = tot[c] - left[c]
                    _others(left, o_left, K)
                    _others(right, o_right, K)
                    cost_l = _best_test(seg, 0, o_left, K)
                    cost_r = _best_test(seg, 1, o_right, K)
                side_best[0, t] = min(side_best[0, t], cost_l + penalty)
                side_best[1, t] = min(side_best[1, t], cost_r + penalty)
        if _late(n, deadline):
            return INF, -1, True
    best = INF
    at = -1
    for t in range(n - 1):
        if side_best[0, t] >= 0.0:
            cost = side_best[0, t] + side_best[1, t] + penalty
            if cost < best:
                best = cost
                at = t
    return best, at, False


@njit(cache=True)
def best_tests(rows, bv, lab, n, K, weights, side, tot, penalty, best):
    """Each side's best tree of depth <= 1 (``side[row]``; ``tot[s]``: its class weights):
    ``best[s] = (cost, feature, bucket)``, feature -1 for a leaf; a split costs ``penalty`` on
    top of its two leaves. Rebuilds the tests of :func:`best_split_on`'s answer."""
    pre = np.zeros((2, K))
    last = np.zeros(2, np.int64)
    for s in range(2):
        best[s, 0] = tot[s].sum() - tot[s].max()
        best[s, 1] = -1.0
        best[s, 2] = -1.0
    for g in range(rows.shape[0]):
        pre[:, :] = 0.0
        last[:] = -1
        for t in range(n):
            r = rows[g, t]
            s = side[r]
            b = bv[g, t]
            if last[s] >= 0 and b != bv[g, last[s]]:  # a split of side s before this row
                a = 0.0
                top_a = 0.0
                c = 0.0
                top_c = 0.0
                for k in range(K):
                    a += pre[s, k]
                    top_a = max(top_a, pre[s, k])
                    c += tot[s, k] - pre[s, k]
                    top_c = max(top_c, tot[s, k] - pre[s, k])
                cost = a - top_a + c - top_c + penalty
                if cost < best[s, 0]:
                    best[s, 0] = cost
                    best[s, 1] = g
                    best[s, 2] = bv[g, last[s]]
            pre[s, lab[g, t]] += weights[r]
            last[s] = t
