"""Depth-two nodes where only an error-free subtree can win (technique ``perfect_depth2``).

Once a node's bound is below the cost of one misclassified row, as under a size-minimal search
whose incumbent has no errors, its subtree must classify every row correctly, and the
question is only how few splits do it. A set of rows is *separable* when one split leaves
each side a single class (at most two classes, and in some feature all buckets of one class
lie below all of the other's). Both properties pass to subsets, so along one feature's order
the prefixes that are pure or separable end at one position each, as do the suffixes; a
depth-two tree without errors splits some feature at a position where its prefix and its
suffix are both separable, and each of its sides is a leaf when pure. One sweep per feature
from either end, keeping each class's least and greatest bucket in every feature until the
prefix (suffix) stops being separable, finds the tree with the fewest splits, or proves that
none exists: O(features x rows swept x features), with no split evaluated.
"""

from __future__ import annotations

import numpy as np
from numba import njit

INF = np.inf
NONE = -1  # no class yet


@njit(cache=True, inline="always")
def _separable(lo, hi, a, b, F):
    """Feature in which every bucket of class ``a`` lies below every bucket of class ``b`` or
    above them all (-1: none)."""
    for h in range(F):
        if hi[a, h] < lo[b, h] or hi[b, h] < lo[a, h]:
            return h
    return -1


@njit(cache=True)
def _sweep_end(rows, bv, lab, bucket, g, n, forward, lo, hi, cnt):
    """Sweep feature ``g``'s order from its start (``forward``) or its end: the split
    position (rows before it) farthest from that end whose prefix (suffix) is pure, and the
    one whose prefix (suffix) is separable. Without one: 0 going forward, ``n`` backwards."""
    F = lo.shape[1]
    K = lo.shape[0]
    for k in range(K):
        cnt[k] = 0
        for h in range(F):
            lo[k, h] = 1 << 62
            hi[k, h] = -1
    none = 0 if forward else n
    pure = none
    sep = none
    first = NONE
    second = NONE
    for i in range(n):
        t = i if forward else n - 1 - i
        # The split before row t (forward: between t - 1 and t, the prefix rows[:t]) or
        # after it (backwards: between t and t + 1, the suffix rows[t + 1:]).
        at = t if forward else t + 1
        if 0 < at < n and bv[g, at - 1] != bv[g, at]:
            if second == NONE:
                pure = at
                sep = at
            elif _separable(lo, hi, first, second, F) >= 0:
                sep = at
            else:
                break
        k = lab[g, t]
        if cnt[k] == 0:
            if first == NONE:
                first = k
            elif second == NONE:
                second = k
            else:
                break  # three classes: no later prefix (suffix) is separable
        cnt[k] += 1
        r = rows[g, t]
        for h in range(F):
            v = bucket[r, h]
            if v < lo[k, h]:
                lo[k, h] = v
            if v > hi[k, h]:
                hi[k, h] = v
    return pure, sep


@njit(cache=True)
def _side_split(rows, bv, lab, bucket, g, a, b, lo, hi, cnt, tf, tb, node):
    """Write the side ``rows[g, a:b]`` as node ``node``: a leaf when pure, else its separating
    split (its lower class left)."""
    F = lo.shape[1]
    K = lo.shape[0]
    for k in range(K):
        cnt[k] = 0
        for h in range(F):
            lo[k, h] = 1 << 62
            hi[k, h] = -1
    first = NONE
    second = NONE
    for t in range(a, b):
        k = lab[g, t]
        if cnt[k] == 0:
            if first == NONE:
                first = k
            else:
                second = k
        cnt[k] += 1
        r = rows[g, t]
        for h in range(F):
            v = bucket[r, h]
            lo[k, h] = min(lo[k, h], v)
            hi[k, h] = max(hi[k, h], v)
    tf[node] = -1
    tb[node] = 0
    if second != NONE:
        h = _separable(lo, hi, first, second, F)
        tf[node] = h
        tb[node] = hi[first, h] if hi[first, h] < lo[second, h] else hi[second, h]


@njit(cache=True)
def perfect_depth2(rows, bv, lab, bucket, n, budget, penalty, lo, hi, cnt, tf, tb):
    """The error-free tree of depth <= 2 with the fewest splits (at most ``budget``) over a
    node's ``n`` rows (``rows[g, :n]`` sorted by feature ``g``, ``bv``/``lab`` their buckets and
    labels, ``bucket[row]`` every row's buckets): its cost, its splits' ``penalty`` each, with the
    tree in ``tf``/``tb`` (heap layout, 7 nodes); INF when there is none. ``lo``/``hi`` (classes
    x features) and ``cnt`` (classes) are scratch."""
    F = rows.shape[0]
    for i in range(7):
        tf[i] = -1
        tb[i] = 0
    classes = 0
    cnt[:] = 0
    for t in range(n):
        k = lab[0, t]
        if cnt[k] == 0:
            classes += 1
        cnt[k] += 1
    if classes <= 1:
        return 0.0
    if classes > 4:
        return INF  # more classes than leaves
    best = 4
    bg = -1
    bt = 0
    for g in range(F):
        pure_l, sep_l = _sweep_end(rows, bv, lab, bucket, g, n, True, lo, hi, cnt)
        pure_r, sep_r = _sweep_end(rows, bv, lab, bucket, g, n, False, lo, hi, cnt)
        # Fewest splits at a position: both sides pure; one pure, the other separable;
        # both separable.
        k = 4
        t = 0
        if pure_l > 0 and pure_r < n and pure_r <= pure_l:
            k, t = 1, pure_l
        elif pure_l > 0 and sep_r <= pure_l:
            k, t = 2, pure_l
        elif pure_r < n and pure_r <= sep_l:
            k, t = 2, pure_r
        elif sep_l > 0 and sep_r < n and sep_r <= sep_l:
            k, t = 3, sep_l
        if k < best:
            best, bg, bt = k, g, t
            if k == 1:
                break
    if best > budget:
        return INF
    tf[0] = bg
    tb[0] = bv[bg, bt - 1]
    _side_split(rows, bv, lab, bucket, bg, 0, bt, lo, hi, cnt, tf, tb, 1)
    _side_split(rows, bv, lab, bucket, bg, bt, n, lo, hi, cnt, tf, tb, 2)
    left = penalty if tf[1] >= 0 else 0.0
    right = penalty if tf[2] >= 0 else 0.0
    return left + right + penalty
