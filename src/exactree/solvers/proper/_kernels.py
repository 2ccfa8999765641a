"""Numba kernels of the proper-tree search: ``sodt`` over K fixed rules and the ``odt`` loop over
K-combinations. No recursion: ``sodt`` is a memoised dynamic programme over the reachable
*signed ancestor sets* of the K rules (each rule is absent / a positive ancestor / a negative
ancestor, so at most ``3**K`` states), discovered breadth first and evaluated in reverse.

Point sets are bitsets (uint64 words). Leaf class weights come from per-class *bit planes* of
integer weights (``sum_b 2**b * popcount(mask & plane[c, b])``) when every weight is integral,
else from a loop over the set bits.

Objectives. Every kernel takes ``sse``: False for misclassification (``weights`` holds each
point's class weights), True for the weighted sum of squared errors with mean leaves
(``weights`` holds each point's statistics ``(W, S, Q) = (sum w, sum w*y, sum w*y**2)`` of
targets centred and scaled so that the root costs 1, and never uses bit planes). Only the leaf
cost reads the flag (:func:`leaf_stat_cost`); a runtime flag rather than a second
specialisation keeps one compiled kernel set and the misclassification path a predicted
branch. Every bound of the searches holds for both: leaf costs are non-negative and add over
the leaves, and a set's squared error is at least the sum of its parts' (so a region costs at
least the squared errors of its merged identical points).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._bits import popcount
from .._squared_error import sse_cost

INF = np.inf


@njit(cache=True)
def _weighted_popcount(mask, planes):
    """``sum_b 2**b * popcount(mask & planes[b])`` for bit planes ``planes`` (B x W)."""
    total = 0
    for b in range(planes.shape[0]):
        cnt = 0
        for w in range(mask.shape[0]):
            cnt += popcount(mask[w] & planes[b, w])
        total += cnt << b
    return total


@njit(cache=True)
def _class_weights(mask, class_planes, weights, use_planes, out):
    """Class weights of the points in ``mask`` into ``out`` (bit planes of integer weights when
    ``use_planes``, else the rows of ``weights``)."""
    n_classes = weights.shape[1]
    if use_planes:
        for c in range(n_classes):
            out[c] = float(_weighted_popcount(mask, class_planes[c]))
        return
    for c in range(n_classes):
        out[c] = 0.0
    for w in range(mask.shape[0]):
        word = mask[w]
        while word != 0:
            low = word & (~word + np.uint64(1))
            bit = popcount(low - np.uint64(1))  # index of the lowest set bit
            p = w * 64 + bit
            for c in range(n_classes):
                out[c] += weights[p, c]
            word ^= low


# Squared errors are rounded on a grid (see ..._squared_error), so a bound's arithmetic
# (incumbent minus a child's value) loses nothing.
@njit(cache=True, nogil=True, inline="always")
def leaf_stat_cost(cw, sse):
    """Cost of a leaf from its summed statistics ``cw``: total minus majority weight
    (misclassification) or :func:`sse_cost` of ``(W, S, Q)``."""
    if sse:
        return sse_cost(cw[0], cw[1], cw[2])
    total = 0.0
    best = -1.0
    for c in range(cw.shape[0]):
        total += cw[c]
        best = max(best, cw[c])
    return total - best


@njit(cache=True)
def leaf_cost(mask, class_planes, weights, use_planes, scratch, sse):
    """Cost of a leaf holding the points in ``mask``: misclassification (total minus majority
    weight) or, with ``sse``, its squared error.

    Returns ``(cost, label)``; ties go to the smallest class index (label 0 for ``sse``).
    """
    _class_weights(mask, class_planes, weights, use_planes, scratch)
    if sse:
        return leaf_stat_cost(scratch, sse), 0
    total = 0.0
    best = -1.0
    label = 0
    for c in range(weights.shape[1]):
        total += scratch[c]
        if scratch[c] > best:
            best = scratch[c]
            label = c
    return total - best, label


@njit(cache=True)
def _count(mask, count_planes):
    return _weighted_popcount(mask, count_planes)


@njit(cache=True)
def _is_empty(mask):
    for w in range(mask.shape[0]):
        if mask[w] != 0:
            return False
    return True


@njit(cache=True)
def combo_ancestry(combo, k, sides, defining, Kc):
    """Fill ``Kc[:k, :k]`` with Definition 2.2 for the rules ``combo[:k]``."""
    g_max = defining.shape[1]
    for a in range(k):
        ra = combo[a]
        for b in range(k):
            if a == b:
                Kc[a, b] = 0
                continue
            rb = combo[b]
            npos = 0
            nneg = 0
            for g in range(g_max):
                p = defining[rb, g]
                if p < 0:
                    break
                if (sides[ra, p >> 6] >> np.uint64(p & 63)) & np.uint64(1):
                    npos += 1
                else:
                    nneg += 1
            if nneg == 0:
                Kc[a, b] = 1
            elif npos == 0:
                Kc[a, b] = -1
            else:
                Kc[a, b] = 0


@njit(cache=True)
def _can_root(i, rs, k, Kc):
    for j in range(k):
        if j != i and (rs >> j) & 1 and Kc[i, j] == 0:
            return False
    return True


@njit(cache=True)
def sodt_dp(combo, k, sides, defining, full, class_planes, weights, use_planes, sse,
            count_planes, min_leaf, max_depth, Kc, pow3, stamp, visited, rsmask, depth, ok,
            data, value, ntrees, choice, queue, scratch, side_cost, bound):
    """Optimal proper tree over the ``k`` rules ``combo[:k]`` (eq. 17) by DP over signed
    ancestor sets. Returns ``(best objective, number of proper trees generated, states)``.

    The prefix-closed constraints are fused into the generator: a state whose region holds fewer
    than ``min_leaf`` points (or fewer than ``2 * min_leaf`` while rules remain), or that still
    has rules at depth ``max_depth``, is not expanded. ``choice[code]`` holds the root picked for
    each state; ``queue[:states]`` lists the reachable states (parents before children).
    """
    combo_ancestry(combo, k, sides, defining, Kc)
    full_rs = (1 << k) - 1
    # quick exit: no rule can be the root of all the others (the usual case)
    root_exists = False
    for i in range(k):
        if _can_root(i, full_rs, k, Kc):
            root_exists = True
            break
    if not root_exists:
        return INF, 0, 0
    if bound < INF:
        # Lower bound (leaf costs are >= 0 and add up): under root i, a side holding no other
        # rule is a leaf whose cost ``side_cost`` already knows. Skip when no root can beat
        # ``bound`` (the incumbent).
        lb = INF
        for i in range(k):
            if not _can_root(i, full_rs, k, Kc):
                continue
            npos = 0
            nneg = 0
            for j in range(k):
                if j != i:
                    if Kc[i, j] == 1:
                        npos += 1
                    else:
                        nneg += 1
            v = 0.0
            if npos == 0:
                v += side_cost[combo[i], 0]
            if nneg == 0:
                v += side_cost[combo[i], 1]
            if v < lb:
                lb = v
        if lb >= bound:
            return INF, 0, -1
    n_words = full.shape[0]
    queue[0] = 0
    visited[0] = stamp
    rsmask[0] = full_rs
    depth[0] = 0
    for w in range(n_words):
        data[0, w] = full[w]
    qn = 1
    head = 0
    while head < qn:
        s = queue[head]
        head += 1
        rs = rsmask[s]
        feasible = True
        if min_leaf <= 0:
            pass  # unconstrained (used to count every proper tree)
        elif min_leaf == 1:
            if _is_empty(data[s]):
                feasible = False
        else:
            c = _count(data[s], count_planes)
            if c < min_leaf or (rs != 0 and c < 2 * min_leaf):
                feasible = False
        if rs != 0 and depth[s] >= max_depth:
            feasible = False
        ok[s] = feasible
        if not feasible or rs == 0:
            continue
        for i in range(k):
            if not ((rs >> i) & 1) or not _can_root(i, rs, k, Kc):
                continue
            pos = 0
            neg = 0
            for j in range(k):
                if j != i and (rs >> j) & 1:
                    if Kc[i, j] == 1:
                        pos |= 1 << j
                    else:
                        neg |= 1 << j
            r = combo[i]
            cp = s + pow3[i]
            if visited[cp] != stamp:
                visited[cp] = stamp
                rsmask[cp] = pos
                depth[cp] = depth[s] + 1
                for w in range(n_words):
                    data[cp, w] = data[s, w] & sides[r, w]
                queue[qn] = cp
                qn += 1
            cn = s + 2 * pow3[i]
            if visited[cn] != stamp:
                visited[cn] = stamp
                rsmask[cn] = neg
                depth[cn] = depth[s] + 1
                for w in range(n_words):
                    data[cn, w] = data[s, w] & ~sides[r, w]
                queue[qn] = cn
                qn += 1
    for q in range(qn - 1, -1, -1):
        s = queue[q]
        rs = rsmask[s]
        if not ok[s]:
            value[s] = INF
            ntrees[s] = 0
            continue
        if rs == 0:
            cost, _ = leaf_cost(data[s], class_planes, weights, use_planes, scratch, sse)
            value[s] = cost
            ntrees[s] = 1
            continue
        best = INF
        cnt = 0
        choice[s] = -1
        for i in range(k):
            if not ((rs >> i) & 1) or not _can_root(i, rs, k, Kc):
                continue
            cp = s + pow3[i]
            cn = s + 2 * pow3[i]
            cnt += ntrees[cp] * ntrees[cn]
            v = value[cp] + value[cn]
            if v < best:
                best = v
                choice[s] = i
        value[s] = best
        ntrees[s] = cnt
    return value[0], ntrees[0], qn


@njit(cache=True)
def _workspace(k, n_words, n_weights):
    """Arrays for ``sodt_dp`` over K rules: up to 3**K signed-ancestor states."""
    n_states = 1
    for _ in range(k):
        n_states *= 3
    pow3 = np.ones(k, np.int64)
    for i in range(1, k):
        pow3[i] = pow3[i - 1] * 3
    return (pow3, np.zeros((k, k), np.int64), np.full(n_states, -1, np.int64),
            np.zeros(n_states, np.int64), np.zeros(n_states, np.int64),
            np.zeros(n_states, np.bool_), np.zeros((n_states, n_words), np.uint64),
            np.zeros(n_states, np.float64), np.zeros(n_states, np.int64),
            np.zeros(n_states, np.int64), np.zeros(n_states, np.int64),
            np.zeros(n_weights, np.float64))


@njit(cache=True)
def odt_chunk(k, comb, n_rules, max_count, sides, defining, full, class_planes, weights,
              use_planes, sse, count_planes, min_leaf, max_depth, best_value, best_comb, stats,
              side_cost, prune):
    """Run ``sodt`` on up to ``max_count`` K-combinations, starting at ``comb`` (lexicographic),
    keeping the best in ``best_value[0]`` / ``best_comb``. ``comb`` is advanced in place.

    ``stats``: [combinations examined, combinations with a proper tree, proper trees generated,
    DP states, combinations skipped by the bound]. With ``prune`` a combination whose root
    bound cannot beat the incumbent is skipped (see :func:`sodt_dp`). Returns True when the last
    combination has been examined.
    """
    (pow3, Kc, visited, rsmask, depth, ok, data, value, ntrees, choice, queue,
     scratch) = _workspace(k, full.shape[0], weights.shape[1])
    done = 0
    stamp = 0
    while done < max_count:
        v, nt, ns = sodt_dp(comb, k, sides, defining, full, class_planes, weights, use_planes,
                            sse, count_planes, min_leaf, max_depth, Kc, pow3, stamp, visited,
                            rsmask, depth, ok, data, value, ntrees, choice, queue, scratch,
                            side_cost, best_value[0] if prune else INF)
        stamp += 1
        stats[0] += 1
        if nt > 0:
            stats[1] += 1
            stats[2] += nt
        if ns < 0:
            stats[4] += 1
        else:
            stats[3] += ns
        if v < best_value[0]:
            best_value[0] = v
            for i in range(k):
                best_comb[i] = comb[i]
        done += 1
        i = k - 1
        while i >= 0 and comb[i] == n_rules - k + i:
            i -= 1
        if i < 0:
            return True
        comb[i] += 1
        for j in range(i + 1, k):
            comb[j] = comb[j - 1] + 1
    return False


@njit(cache=True)
def side_costs(sides, full, class_planes, weights, use_planes, sse, out):
    """``out[m] = (cost of rule m's positive side as one leaf, cost of its negative side)``."""
    mask = np.zeros(full.shape[0], np.uint64)
    scratch = np.zeros(weights.shape[1], np.float64)
    for m in range(sides.shape[0]):
        for w in range(full.shape[0]):
            mask[w] = sides[m, w]
        out[m, 0], _ = leaf_cost(mask, class_planes, weights, use_planes, scratch, sse)
        for w in range(full.shape[0]):
            mask[w] = full[w] & ~sides[m, w]
        out[m, 1], _ = leaf_cost(mask, class_planes, weights, use_planes, scratch, sse)


@njit(cache=True)
def extend_incumbent(prev, k, n_rules, sides, defining, full, class_planes, weights, use_planes,
                     sse, count_planes, min_leaf, max_depth, best_value, best_comb):
    """Warm start for the K-combination loop: ``sodt`` on ``prev[:k-1]`` plus every other rule
    (a greedy extension of the best smaller tree); improves ``best_value`` / ``best_comb``."""
    (pow3, Kc, visited, rsmask, depth, ok, data, value, ntrees, choice, queue,
     scratch) = _workspace(k, full.shape[0], weights.shape[1])
    side_cost = np.zeros((1, 2), np.float64)
    comb = np.zeros(k, np.int64)
    for r in range(n_rules):
        pos = 0
        clash = False
        for j in range(k - 1):
            if prev[j] == r:
                clash = True
        if clash:
            continue
        inserted = False
        for j in range(k - 1):  # keep the combination sorted
            if not inserted and r < prev[j]:
                comb[pos] = r
                pos += 1
                inserted = True
            comb[pos] = prev[j]
            pos += 1
        if not inserted:
            comb[pos] = r
        v, nt, ns = sodt_dp(comb, k, sides, defining, full, class_planes, weights, use_planes,
                            sse, count_planes, min_leaf, max_depth, Kc, pow3, r, visited,
                            rsmask, depth, ok, data, value, ntrees, choice, queue, scratch,
                            side_cost, INF)
        if v < best_value[0]:
            best_value[0] = v
            for i in range(k):
                best_comb[i] = comb[i]
