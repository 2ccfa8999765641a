"""MurTree's specialised solver for trees of depth at most two (paper section 4.3).

Phase one counts, per class, how many of the node's instances hold each pair of features;
phase two reads every depth-2 tree's cost off those counts without touching the data again.
Counts come from popcounts of ANDed per-class bitsets over the node's instances (unit weights)
or from per-instance updates (general weights). Only features that can split the node
(each side at least ``min_samples_leaf`` instances) take part.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._bits import popcount

INF = np.inf


@njit(cache=True)
def leaf_cost(counts: np.ndarray) -> float:
    """Misclassified weight of a leaf with these class weights (total minus the largest)."""
    total = 0.0
    best = 0.0
    for k in range(counts.shape[0]):
        total += counts[k]
        if counts[k] > best:
            best = counts[k]
    return total - best


@njit(cache=True)
def _two_leaves(C, a, b, tot, sign_a, K):
    """Cost of the two leaves under one child when it splits on feature ``b``.

    The child holds instances with feature ``a`` == sign_a (sign 1: true); the counts of a leaf
    with ``a == sa`` and ``b == sb`` follow from the pair counts by inclusion-exclusion.
    """
    cost = 0.0
    for sb in range(2):
        total = 0.0
        best = 0.0
        for k in range(K):
            ab = C[k, a, b]
            if sign_a == 1:
                c = ab if sb == 1 else C[k, a, a] - ab
            else:
                c = C[k, b, b] - ab if sb == 1 else tot[k] - C[k, a, a] - C[k, b, b] + ab
            total += c
            if c > best:
                best = c
        cost += total - best
    return cost


@njit(cache=True)
def solve_depth2(idx, n_node, labels, weights, unit, row_ptr, row_feat, n_classes, min_leaf,
                 max_budget, ws_count, ws_map, ws_act, ws_pos, ws_bits, ws_C, ws_N, out):
    """Optimal trees of depth <= 2 on the instances ``idx[:n_node]`` for every budget 0..3.

    ``out`` (5 x 4, float64) receives per budget b: cost, root feature, left budget (0/1),
    left child feature, right child feature (-1 where absent). Budgets above ``max_budget``
    repeat the best allowed tree. ``ws_*`` are preallocated workspaces.
    """
    K = n_classes
    m = ws_count.shape[0]
    tot = np.zeros(K)
    n_per_class = np.zeros(K, np.int64)
    for f in range(m):
        ws_count[f] = 0
    for t in range(n_node):
        i = idx[t]
        k = labels[i]
        tot[k] += weights[i]
        ws_pos[t] = n_per_class[k]
        n_per_class[k] += 1
        for p in range(row_ptr[i], row_ptr[i + 1]):
            ws_count[row_feat[p]] += 1
    for b in range(4):
        out[0, b] = INF
        for r in range(1, 5):
            out[r, b] = -1.0
    out[0, 0] = leaf_cost(tot)
    # Features that can split this node.
    nA = 0
    for f in range(m):
        if ws_count[f] >= min_leaf and n_node - ws_count[f] >= min_leaf:
            ws_map[f] = nA
            ws_act[nA] = f
            nA += 1
        else:
            ws_map[f] = -1
    if max_budget >= 1 and nA > 0 and out[0, 0] > 0:
        C, N = ws_C, ws_N
        if max_budget == 1:
            # Single splits need only per-feature class counts (the diagonal).
            for a in range(nA):
                for k in range(K):
                    C[k, a, a] = 0.0
            for t in range(n_node):
                i = idx[t]
                for p in range(row_ptr[i], row_ptr[i + 1]):
                    a = ws_map[row_feat[p]]
                    if a >= 0:
                        C[labels[i], a, a] += weights[i]
        elif unit:
            _pair_counts_bitsets(idx, n_node, labels, row_ptr, row_feat, K, nA, n_per_class,
                                 ws_map, ws_pos, ws_bits, C)
        else:
            _pair_counts_weighted(idx, n_node, labels, weights, row_ptr, row_feat, K, nA, ws_map,
                                  C, N)
        if unit:
            for a in range(nA):
                for b in range(nA):
                    s = 0.0
                    for k in range(K):
                        s += C[k, a, b]
                    N[a, b] = s
        elif max_budget == 1:
            for a in range(nA):
                N[a, a] = ws_count[ws_act[a]]
        _search(C, N, tot, K, nA, n_node, min_leaf, max_budget, ws_act, out)
    # A budget may always hold a smaller tree: make costs non-increasing in the budget,
    # preferring the smaller tree on ties.
    for b in range(1, 4):
        if out[0, b - 1] <= out[0, b]:
            for r in range(5):
                out[r, b] = out[r, b - 1]


@njit(cache=True)
def _pair_counts_bitsets(idx, n_node, labels, row_ptr, row_feat, K, nA, n_per_class, ws_map,
                         ws_pos, ws_bits, C):
    # Words of class k occupy [woff[k], woff[k+1]) in every feature's row of ws_bits.
    woff = np.zeros(K + 1, np.int64)
    for k in range(K):
        woff[k + 1] = woff[k] + (n_per_class[k] + 63) // 64
    n_words = woff[K]
    for a in range(nA):
        for w in range(n_words):
            ws_bits[a, w] = 0
    for t in range(n_node):
        i = idx[t]
        k = labels[i]
        word = woff[k] + (ws_pos[t] >> 6)
        bit = np.uint64(1) << np.uint64(ws_pos[t] & 63)
        for p in range(row_ptr[i], row_ptr[i + 1]):
            a = ws_map[row_feat[p]]
            if a >= 0:
                ws_bits[a, word] |= bit
    for a in range(nA):
        for b in range(a, nA):
            for k in range(K):
                s = 0
                for w in range(woff[k], woff[k + 1]):
                    s += popcount(ws_bits[a, w] & ws_bits[b, w])
                C[k, a, b] = s
                C[k, b, a] = s


@njit(cache=True)
def _pair_counts_weighted(idx, n_node, labels, weights, row_ptr, row_feat, K, nA, ws_map, C, N):
    for a in range(nA):
        for b in range(nA):
            N[a, b] = 0.0
            for k in range(K):
                C[k, a, b] = 0.0
    for t in range(n_node):
        i = idx[t]
        k = labels[i]
        w = weights[i]
        lo, hi = row_ptr[i], row_ptr[i + 1]
        for p in range(lo, hi):
            a = ws_map[row_feat[p]]
            if a < 0:
                continue
            for q in range(p, hi):
                b = ws_map[row_feat[q]]
                if b >= 0:
                    C[k, a, b] += w
                    N[a, b] += 1.0
    for a in range(nA):  # row_feat is sorted, so only the upper triangle was filled
        for b in range(a + 1, nA):
            N[b, a] = N[a, b]
            for k in range(K):
                C[k, b, a] = C[k, a, b]


@njit(cache=True)
def _search(C, N, tot, K, nA, n_node, min_leaf, max_budget, ws_act, out):
    counts = np.zeros(K)
    for a in range(nA):
        n_left = N[a, a]
        n_right = n_node - n_left
        for k in range(K):
            counts[k] = C[k, a, a]
        left0 = leaf_cost(counts)
        for k in range(K):
            counts[k] = tot[k] - C[k, a, a]
        right0 = leaf_cost(counts)
        left1, right1 = INF, INF
        best_l, best_r = -1, -1
        if max_budget >= 2:
            for b in range(nA):
                if b == a:
                    continue
                nab = N[a, b]
                # left child (a true) split on b
                if left0 > 0 and nab >= min_leaf and n_left - nab >= min_leaf:
                    c = _two_leaves(C, a, b, tot, 1, K)
                    if c < left1:
                        left1, best_l = c, b
                nb = N[b, b] - nab
                if right0 > 0 and nb >= min_leaf and n_right - nb >= min_leaf:
                    c = _two_leaves(C, a, b, tot, 0, K)
                    if c < right1:
                        right1, best_r = c, b
        f = ws_act[a]
        _offer(out, 1, left0 + right0, f, 0, -1, -1)
        if max_budget >= 2:
            if left1 < INF:
                _offer(out, 2, left1 + right0, f, 1, ws_act[best_l], -1)
            if right1 < INF:
                _offer(out, 2, left0 + right1, f, 0, -1, ws_act[best_r])
        if max_budget >= 3 and left1 < INF and right1 < INF:
            _offer(out, 3, left1 + right1, f, 1, ws_act[best_l], ws_act[best_r])


@njit(cache=True)
def _offer(out, b, cost, f, left_budget, jl, jr):
    if cost < out[0, b]:
        out[0, b] = cost
        out[1, b] = f
        out[2, b] = left_budget
        out[3, b] = jl
        out[4, b] = jr
