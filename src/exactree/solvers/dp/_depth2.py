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
def solve_depth2(idx, n_node, labels, weights, unit, row_ptr, row_feat, n_classes, min_leaf,
                 max_budget, ws_X, ws_count, ws_map, ws_act, ws_pos, ws_bits, ws_C, ws_N, out):
    """Optimal trees of depth <= 2 on the instances ``idx[:n_node]`` for every budget 0..3.

    ``out`` (5 x 4, float64) receives per budget b: cost, root feature, left budget (0/1),
    left child feature, right child feature (-1 where absent). Budgets above ``max_budget``
    repeat the best allowed tree. ``ws_X`` is the data as a dense 0/1 uint8 matrix (rows read
    whole, so the per-feature loops vectorise); the other ``ws_*`` are preallocated workspaces.
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
        row = ws_X[i]
        for f in range(m):
            ws_count[f] += row[f]
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
        rows = max_budget >= 2
        # Unit weights: popcount one root row at a time (vectorised; no matrix traffic).
        # General weights: per-instance updates into the full symmetric matrix when it fits.
        full = rows and not unit and nA <= ws_C.shape[1]
        woff = np.zeros(K + 1, np.int64)
        for k in range(K):
            woff[k + 1] = woff[k] + (n_per_class[k] + 63) // 64
        if rows:
            for w in range(woff[K]):
                for a in range(nA):
                    ws_bits[w, a] = 0
        # Per-class weight and instance count of every usable feature (the diagonal), and the
        # node's class-partitioned bitsets: ws_bits[w, a] holds 64 instances of feature a
        # (word-major, so loops over features are contiguous); class k owns words
        # [woff[k], woff[k+1]).
        diag = np.zeros((K + 1, nA))
        for t in range(n_node):
            i = idx[t]
            k = labels[i]
            wi = weights[i]
            row = ws_X[i]
            word = woff[k] + (ws_pos[t] >> 6)
            shift = np.uint64(ws_pos[t] & 63)
            for a in range(nA):
                v = row[ws_act[a]]
                diag[k, a] += v * wi
                diag[K, a] += v
                if rows:
                    ws_bits[word, a] |= np.uint64(v) << shift
        if full:
            _pair_counts_weighted(idx, n_node, labels, weights, row_ptr, row_feat, K, nA, ws_map,
                                  ws_C, ws_N)
        crow = np.zeros((K, nA))
        nrow = np.zeros(nA)
        acc = np.zeros(nA, np.uint64)
        cost_l = np.empty(nA)
        cost_r = np.empty(nA)
        for a in range(nA):
            if full:
                for k in range(K):
                    crow[k, :] = ws_C[k, a, :nA]
                nrow[:] = ws_N[a, :nA]
            elif rows:
                _pair_row(a, idx, n_node, labels, weights, unit, row_ptr, row_feat, K, nA, ws_map,
                          ws_pos, ws_bits, woff, crow, nrow, acc)
            _root(a, crow, nrow, diag, tot, K, nA, n_node, min_leaf, max_budget, ws_act, out,
                  cost_l, cost_r)
    # A budget may always hold a smaller tree: make costs non-increasing in the budget,
    # preferring the smaller tree on ties.
    for b in range(1, 4):
        if out[0, b - 1] <= out[0, b]:
            for r in range(5):
                out[r, b] = out[r, b - 1]


@njit(cache=True)
def _pair_row(a, idx, n_node, labels, weights, unit, row_ptr, row_feat, K, nA, ws_map, ws_pos,
              ws_bits, woff, crow, nrow, acc):
    """Pair counts of root feature ``a`` with every feature (row mode)."""
    if unit:
        nrow[:nA] = 0.0
        for k in range(K):
            acc[:nA] = 0
            for w in range(woff[k], woff[k + 1]):
                x = ws_bits[w, a]
                row = ws_bits[w]
                for b in range(nA):  # vectorises (vpopcntq where available)
                    acc[b] += popcount(x & row[b])
            for b in range(nA):
                crow[k, b] = acc[b]
                nrow[b] += acc[b]
        return
    crow[:, :] = 0.0
    nrow[:] = 0.0
    for t in range(n_node):
        i = idx[t]
        k = labels[i]
        word = woff[k] + (ws_pos[t] >> 6)
        if (ws_bits[word, a] >> np.uint64(ws_pos[t] & 63)) & np.uint64(1):
            for p in range(row_ptr[i], row_ptr[i + 1]):
                b = ws_map[row_feat[p]]
                if b >= 0:
                    crow[k, b] += weights[i]
                    nrow[b] += 1.0


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
def _root(a, crow, nrow, diag, tot, K, nA, n_node, min_leaf, max_budget, ws_act, out, cost_l,
          cost_r):
    """Offer the best trees with root feature ``a`` (true branch left) for budgets 1..3."""
    n_left = diag[K, a]
    n_right = n_node - n_left
    left0 = 0.0
    right0 = 0.0
    best_in_l, best_in_r, tot_l = 0.0, 0.0, 0.0
    for k in range(K):
        cl = diag[k, a]
        tot_l += cl
        best_in_l = max(best_in_l, cl)
        best_in_r = max(best_in_r, tot[k] - cl)
    left0 = tot_l - best_in_l
    right0 = (tot.sum() - tot_l) - best_in_r
    left1, right1 = INF, INF
    best_l, best_r = -1, -1
    if max_budget >= 2 and (left0 > 0 or right0 > 0):
        if K == 2:
            _children_binary(crow, nrow, diag, tot, a, nA, n_left, n_right, min_leaf, cost_l,
                             cost_r)
        else:
            _children_multiclass(crow, nrow, diag, tot, K, a, nA, n_left, n_right, min_leaf,
                                 cost_l, cost_r)
        cost_l[a] = INF
        cost_r[a] = INF
        best_l = _argmin(cost_l, nA)
        best_r = _argmin(cost_r, nA)
        left1 = cost_l[best_l] if left0 > 0 else INF
        right1 = cost_r[best_r] if right0 > 0 else INF
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
def _children_binary(crow, nrow, diag, tot, a, nA, n_left, n_right, min_leaf, cost_l, cost_r):
    """Cost of splitting each child of root ``a`` on every feature b, for two classes (a leaf
    costs min(c0, c1)); infeasible splits cost INF. Branch-free so the loop vectorises."""
    ta0, ta1 = diag[0, a], diag[1, a]
    r0, r1 = tot[0] - ta0, tot[1] - ta1
    for b in range(nA):
        p, q = crow[0, b], crow[1, b]
        d0, d1 = diag[0, b] - p, diag[1, b] - q
        nab = nrow[b]
        nb = diag[2, b] - nab
        ok_l = (nab >= min_leaf) & (n_left - nab >= min_leaf)
        ok_r = (nb >= min_leaf) & (n_right - nb >= min_leaf)
        cost_l[b] = (min(p, q) + min(ta0 - p, ta1 - q)) if ok_l else INF
        cost_r[b] = (min(d0, d1) + min(r0 - d0, r1 - d1)) if ok_r else INF


@njit(cache=True)
def _children_multiclass(crow, nrow, diag, tot, K, a, nA, n_left, n_right, min_leaf, cost_l,
                         cost_r):
    for b in range(nA):
        nab = nrow[b]
        nb = diag[K, b] - nab
        cl, cr = INF, INF
        if nab >= min_leaf and n_left - nab >= min_leaf:
            cl = 0.0
            for sb in range(2):  # leaves a&b and a&~b
                total, best = 0.0, 0.0
                for k in range(K):
                    c = crow[k, b] if sb == 1 else diag[k, a] - crow[k, b]
                    total += c
                    best = max(best, c)
                cl += total - best
        if nb >= min_leaf and n_right - nb >= min_leaf:
            cr = 0.0
            for sb in range(2):  # leaves ~a&b and ~a&~b
                total, best = 0.0, 0.0
                for k in range(K):
                    ab = diag[k, b] - crow[k, b]
                    c = ab if sb == 1 else tot[k] - diag[k, a] - ab
                    total += c
                    best = max(best, c)
                cr += total - best
        cost_l[b] = cl
        cost_r[b] = cr


@njit(cache=True)
def _argmin(x, n):
    """First index of the minimum (a vectorised min, then a short scan)."""
    low = x[:n].min()
    for i in range(n):
        if x[i] == low:
            return i
    return 0


@njit(cache=True)
def _offer(out, b, cost, f, left_budget, jl, jr):
    if cost < out[0, b]:
        out[0, b] = cost
        out[1, b] = f
        out[2, b] = left_budget
        out[3, b] = jl
        out[4, b] = jr
