"""MurTree's specialised solver for trees of depth at most two (paper section 4.3).

Phase one counts, per class, how many of the node's instances hold each pair of features;
phase two reads every depth-2 tree's cost off those counts without touching the data again.

Layout (what made it fast): the node's instances are packed into class-partitioned bitsets
stored word-major (``bits[w, f]``), so every loop over features runs over contiguous memory and
vectorises, popcounts included. With unit weights the pair counts of one root feature with all
others are popcounted row by row; general weights use per-instance updates into a full matrix.
MurTree's incremental counting (section 4.4.3: update the previous node's full matrix by the
instances that differ) is available for unit weights but off by default: popcounting afresh
was faster on every benchmark. Splits that leave a side with fewer than ``min_samples_leaf``
instances (degenerate ones included) cost infinity, so no feature filtering is needed. Each
root's best children are found by a vectorised minimum; only the winning roots' child features
are looked up at the end. Each root's best cost is returned too: the search tries roots in
that order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._bits import popcount

INF = np.inf
# Rows of the float scratch ``ws_f`` (see :func:`workspace`): class totals, pair counts of one
# root row, children costs, each root's best cost, then the diagonal (K + 1 rows) and the pair
# weights of one root row (K rows). Rows of ``ws_i``: class sizes, class word offsets, kept
# columns, a flag per column. The last three rows of ``ws_bits``: popcount accumulator, column
# flips and hashes. Preallocated because small nodes are solved thousands of times.
F_TOT, F_NROW, F_COST_L, F_COST_R, F_ROOT, F_DIAG = range(6)
I_CLASS, I_WOFF, I_COLUMNS, I_KEEP = range(4)
B_ACC, B_FLIP, B_HASH = -1, -2, -3


def workspace(X: np.ndarray, n_classes: int, matrix_features: int) -> tuple:
    """Preallocated arrays for :func:`solve_depth2` on the dense 0/1 data ``X`` (from ``ws_X``
    to ``ws_i``), with full pair matrices for up to ``matrix_features`` features."""
    n, m = X.shape
    K = n_classes
    width = max(m, K + 1)
    prev = np.zeros(n + 1, np.int64)
    prev[0] = -1  # the matrices describe no instances yet
    return (np.ascontiguousarray(X, dtype=np.uint8), np.zeros(n, np.int64),
            np.zeros(((n + 63) // 64 + K + 3, m), np.uint64),
            np.zeros((K + 1, matrix_features, matrix_features)), prev,
            np.zeros((2 * K + 6, width)), np.zeros((4, width), np.int64))


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
def solve_depth2(idx, n_node, labels, weights, unit, incremental, row_ptr, row_feat, n_classes,
                 min_leaf, max_budget, ws_X, ws_pos, ws_bits, ws_C, ws_prev, ws_f, ws_i, out,
                 penalty):
    """Optimal trees of depth <= 2 on the instances ``idx[:n_node]`` for every budget 0..3.

    ``out`` (5 x 4, float64) receives per budget b: cost, root feature, left budget (0/1),
    left child feature, right child feature (-1 where absent). Budgets above ``max_budget``
    repeat the best allowed tree. Budget b holds the best tree with at most b splits in the
    search's order, cost plus ``penalty`` per split (see _lexicographic): with fractional
    weights a larger tree whose cost is the same up to rounding (pair weights are subtracted,
    so an exact tie may come out an ulp lower, even below 0) does not displace a smaller one.
    ``ws_X`` is the data as a dense 0/1 uint8 matrix; the other ``ws_*`` are preallocated
    workspaces. ``ws_C`` holds the full pair matrices (per class, then instance counts) of the
    instances listed in ``ws_prev`` (see :func:`_matrix_counts`); it is used for general
    weights and, with ``incremental``, for unit weights too.
    ``ws_f[F_ROOT, f]`` receives the cost of the best tree within ``max_budget`` with root ``f``:
    INF for features whose split is infeasible here or repeats (or complements) an earlier one.
    """
    K = n_classes
    m = ws_X.shape[1]
    ws_f[F_ROOT, :m] = INF
    tot = ws_f[F_TOT, :K]
    tot[:] = 0.0
    n_per_class = ws_i[I_CLASS, :K]
    n_per_class[:] = 0
    for t in range(n_node):
        i = idx[t]
        k = labels[i]
        tot[k] += weights[i]
        ws_pos[t] = n_per_class[k]
        n_per_class[k] += 1
    for b in range(4):
        out[0, b] = INF
        for r in range(1, 5):
            out[r, b] = -1.0
    out[0, 0] = leaf_cost(tot)
    if max_budget < 1 or m == 0 or out[0, 0] == 0:
        _monotone(out, 0.0)
        return
    rows = max_budget >= 2
    matrix = rows and m <= ws_C.shape[1] and (incremental or not unit)
    woff = ws_i[I_WOFF, : K + 1]
    woff[0] = 0
    for k in range(K):
        woff[k + 1] = woff[k] + (n_per_class[k] + 63) // 64
    bitsets = rows and unit and not matrix  # the popcount path
    if bitsets:
        ws_bits[: woff[K], :m] = 0
    # Per-class weight and instance count of every feature (the diagonal), and the bitsets:
    # class k owns words [woff[k], woff[k+1]). With bitsets the diagonal is popcounted after.
    diag = ws_f[F_DIAG : F_DIAG + K + 1]
    diag[:, :m] = 0.0
    columns = ws_i[I_COLUMNS]
    for f in range(m):
        columns[f] = f
    if matrix:
        _matrix_counts(idx, n_node, labels, weights, row_ptr, row_feat, K, ws_C, ws_prev,
                       incremental and unit)
        for k in range(K + 1):
            for f in range(m):
                diag[k, f] = ws_C[k, f, f]
        m = _distinct_from_counts(ws_C[K], diag[K], m, n_node, min_leaf, columns)
        _keep_columns(diag, K + 1, columns, m)
    for t in range(n_node if not matrix else 0):
        i = idx[t]
        k = labels[i]
        wi = weights[i]
        row = ws_X[i]
        if not bitsets:
            for f in range(m):
                diag[k, f] += row[f] * wi
                diag[K, f] += row[f]
        else:
            word = woff[k] + (ws_pos[t] >> 6)
            shift = np.uint64(ws_pos[t] & 63)
            bits = ws_bits[word]
            for f in range(m):
                bits[f] |= np.uint64(row[f]) << shift
    if bitsets:
        _popcount_diagonal(ws_bits, woff, K, m, diag)
        # One column per distinct split of this node's instances: at deep nodes many features
        # coincide (or complement each other), and the work grows like m**2.
        m = _distinct_columns(ws_bits, woff, n_per_class, m, woff[labels[idx[0]]], diag[K],
                              n_node, min_leaf, columns, ws_i[I_KEEP])
        _keep_columns(ws_bits, woff[K], columns, m)
        _keep_columns(diag, K + 1, columns, m)
    for a in range(m):
        if diag[K, a] < min_leaf or n_node - diag[K, a] < min_leaf:
            continue
        if bitsets:  # (the common case)
            _pair_row_bits(a, K, m, woff, ws_bits, ws_f)
        elif rows:
            _pair_row(a, matrix, unit, idx, n_node, labels, weights, ws_X, K, m, woff, ws_bits,
                      ws_C, columns, ws_f)
        ws_f[F_ROOT, columns[a]] = _root(a, ws_f, K, m, n_node, min_leaf, max_budget, out)
    # The winners' child features: recompute their rows and take the first minimiser.
    for b in (2, 3):
        a = np.int64(out[1, b])
        if a >= 0 and (out[3, b] == -2 or out[4, b] == -2):
            _pair_row(a, matrix, unit, idx, n_node, labels, weights, ws_X, K, m, woff, ws_bits,
                      ws_C, columns, ws_f)
            _children(ws_f, K, a, m, n_node, min_leaf)
            if out[3, b] == -2:
                out[3, b] = _argmin(ws_f[F_COST_L], m)
            if out[4, b] == -2:
                out[4, b] = _argmin(ws_f[F_COST_R], m)
    for b in range(1, 4):  # back to the caller's feature indices
        for r in (1, 3, 4):
            if out[r, b] >= 0:
                out[r, b] = columns[np.int64(out[r, b])]
    # (unit weights: integer costs, exact; the penalty would decide alike)
    _monotone(out, 0.0 if unit else penalty)


@njit(cache=True)
def _popcount_diagonal(bits, woff, K, m, diag):
    """Per-class instance counts of every feature (unit weights), and their total, from the
    class-partitioned bitsets: 64 instances per popcount instead of one addition each."""
    acc = bits[B_ACC, :m]
    for k in range(K):
        acc[:] = 0
        for w in range(woff[k], woff[k + 1]):
            row = bits[w]
            for f in range(m):  # vectorises
                acc[f] += popcount(row[f])
        for f in range(m):
            diag[k, f] = acc[f]
            diag[K, f] += acc[f]


@njit(cache=True)
def _keep_columns(A, n_rows, columns, m):
    """Move columns ``columns[:m]`` (ascending) of the first ``n_rows`` rows of ``A`` to the
    front, in place."""
    for r in range(n_rows):
        row = A[r]
        for j in range(m):
            row[j] = row[columns[j]]


@njit(cache=True)
def _distinct_columns(bits, woff, n_per_class, m, first_word, counts, n_node, min_leaf, columns,
                      keep):
    """Write into ``columns`` the first feature of every distinct split of the node that leaves
    ``min_leaf`` instances on each side (a column and its complement split alike); return how
    many. Columns are compared after flipping those whose first instance bit is set. ``keep``
    is scratch space."""
    K = n_per_class.shape[0]
    W = woff[K]
    mask = np.empty(W, np.uint64)  # valid bits of each word (a class's last word is partial)
    for k in range(K):
        for w in range(woff[k], woff[k + 1]):
            mask[w] = ~np.uint64(0)
        rest = n_per_class[k] & 63
        if rest:
            mask[woff[k + 1] - 1] = (np.uint64(1) << np.uint64(rest)) - np.uint64(1)
    flip = bits[B_FLIP]
    h = bits[B_HASH]
    for a in range(m):
        flip[a] = np.uint64(0) - (bits[first_word, a] & np.uint64(1))  # all ones when set
        x = np.uint64(0x9E3779B97F4A7C15)
        for w in range(W):
            x = (x ^ ((bits[w, a] ^ flip[a]) & mask[w])) * np.uint64(0xFF51AFD7ED558CCD)
            x ^= x >> np.uint64(33)
        h[a] = x
    order = np.argsort(h[:m], kind="mergesort")  # stable: ascending feature within equal hashes
    keep[:m] = 0
    i = 0
    while i < m:
        j = i
        while j < m and h[order[j]] == h[order[i]]:
            j += 1
        for p in range(i, j):
            a = order[p]
            if counts[a] < min_leaf or n_node - counts[a] < min_leaf:
                continue
            new = True
            for q in range(i, p):
                c = order[q]
                if keep[c]:
                    same = True
                    for w in range(W):
                        if ((bits[w, a] ^ flip[a]) ^ (bits[w, c] ^ flip[c])) & mask[w]:
                            same = False
                            break
                    if same:
                        new = False
                        break
            keep[a] = 1 if new else 0
        i = j
    n = 0
    for a in range(m):
        if keep[a]:
            columns[n] = a
            n += 1
    return n


@njit(cache=True)
def _monotone(out, penalty):
    # A budget may always hold a smaller tree: costs non-increasing in the budget, preferring
    # the smaller tree on ties. Trees rank by cost plus ``penalty`` per split: a larger tree
    # replaces a smaller one only when it costs less by more than the penalties it adds.
    for b in range(1, 4):
        if out[0, b - 1] + penalty * _size(out, b - 1) <= out[0, b] + penalty * _size(out, b):
            for r in range(5):
                out[r, b] = out[r, b - 1]


@njit(cache=True, inline="always")
def _size(out, b):
    """Splits of budget ``b``'s tree in ``out`` (its child features looked up already)."""
    if out[1, b] < 0:
        return 0
    return 1 + (out[3, b] >= 0) + (out[4, b] >= 0)


@njit(cache=True, inline="always")
def _pair_row(a, matrix, unit, idx, n_node, labels, weights, ws_X, K, m, woff, ws_bits, ws_C,
              columns, ws_f):
    """Pair weights (per class, rows ``F_DIAG + K + 1 + k`` of ``ws_f``) and instance counts
    (row ``F_NROW``) of root feature ``a`` with every feature: from the full matrix
    (``columns`` maps to its indices), by popcounts (unit weights), or by adding up the rows
    holding ``a`` (general weights with too many features for the matrix)."""
    crow = F_DIAG + K + 1
    if matrix:
        ca = columns[a]
        for b in range(m):
            cb = columns[b]
            for k in range(K):
                ws_f[crow + k, b] = ws_C[k, ca, cb]
            ws_f[F_NROW, b] = ws_C[K, ca, cb]
        return
    if not unit:
        ws_f[crow : crow + K, :m] = 0.0
        ws_f[F_NROW, :m] = 0.0
        for t in range(n_node):
            i = idx[t]
            row = ws_X[i]
            if row[a]:
                wi = weights[i]
                c = crow + labels[i]
                for b in range(m):
                    ws_f[c, b] += row[b] * wi
                    ws_f[F_NROW, b] += row[b]
        return
    _pair_row_bits(a, K, m, woff, ws_bits, ws_f)


@njit(cache=True, inline="always")
def _pair_row_bits(a, K, m, woff, ws_bits, ws_f):
    """:func:`_pair_row` by popcounts (unit weights), into the pair rows of ``ws_f``. (Rows of
    the workspaces are indexed, not passed as slices: every array an inlined helper binds
    costs atomic reference counts, per root feature.)"""
    acc = ws_bits.shape[0] + B_ACC
    crow = F_DIAG + K + 1
    for k in range(K):
        # The first word sets the counts (no pass to clear them first: it showed in profiles).
        w0 = woff[k]
        if w0 == woff[k + 1]:  # no instance of this class
            for b in range(m):
                ws_bits[acc, b] = 0
        else:
            x = ws_bits[w0, a]
            for b in range(m):
                ws_bits[acc, b] = popcount(x & ws_bits[w0, b])
        for w in range(w0 + 1, woff[k + 1]):
            x = ws_bits[w, a]
            for b in range(m):  # vectorises (vpopcntq where available)
                ws_bits[acc, b] += popcount(x & ws_bits[w, b])
        if k == 0:
            for b in range(m):
                ws_f[crow, b] = ws_bits[acc, b]
                ws_f[F_NROW, b] = ws_bits[acc, b]
        else:
            for b in range(m):
                ws_f[crow + k, b] = ws_bits[acc, b]
                ws_f[F_NROW, b] += ws_bits[acc, b]


@njit(cache=True)
def _matrix_counts(idx, n_node, labels, weights, row_ptr, row_feat, K, C, prev, incremental):
    """Bring the pair matrices ``C`` (class weights ``C[k, a, b]`` of the instances holding
    features a and b, instance counts in ``C[K]``) to the instances ``idx[:n_node]``.

    ``prev[0]`` is how many instances ``C`` describes now (-1: none) and ``prev[1:]`` their
    sorted ids. With ``incremental``, when the two sets differ in fewer instances than the new
    one holds, only the difference is subtracted and added (MurTree section 4.4.3); otherwise
    the matrices are counted afresh. (Only exact for integer weights: float sums would drift.)
    """
    if incremental and prev[0] >= 0 and _difference(prev, idx, n_node, labels, weights, row_ptr,
                                                    row_feat, K, C, n_node, False) < n_node:
        _difference(prev, idx, n_node, labels, weights, row_ptr, row_feat, K, C, n_node, True)
    else:
        C[:, :, :] = 0.0
        for t in range(n_node):
            _add_instance(idx[t], 1.0, labels, weights, row_ptr, row_feat, K, C)
    if incremental:  # only an incremental count reads the previous node back
        prev[0] = n_node
        prev[1 : n_node + 1] = idx[:n_node]


@njit(cache=True)
def _difference(prev, idx, n_node, labels, weights, row_ptr, row_feat, K, C, limit, apply):
    """Size of the symmetric difference of the sorted id lists ``prev[1:]`` and ``idx`` (counted
    up to ``limit``); with ``apply``, subtract the instances only in ``prev`` from ``C`` and add
    those only in ``idx``."""
    n_prev = prev[0]
    p, t, diff = 0, 0, 0
    while (p < n_prev or t < n_node) and (apply or diff < limit):
        i = prev[1 + p] if p < n_prev else -1
        j = idx[t] if t < n_node else -1
        if j < 0 or (0 <= i < j):
            diff += 1
            if apply:
                _add_instance(i, -1.0, labels, weights, row_ptr, row_feat, K, C)
            p += 1
        elif i < 0 or j < i:
            diff += 1
            if apply:
                _add_instance(j, 1.0, labels, weights, row_ptr, row_feat, K, C)
            t += 1
        else:
            p += 1
            t += 1
    return diff


@njit(cache=True)
def _add_instance(i, sign, labels, weights, row_ptr, row_feat, K, C):
    k = labels[i]
    w = sign * weights[i]
    lo, hi = row_ptr[i], row_ptr[i + 1]
    # (unsigned indices: no wraparound code)
    for p in range(lo, hi):
        a = np.uint64(row_feat[np.uint64(p)])
        ck = C[k, a]
        cn = C[K, a]
        for q in range(lo, hi):
            b = np.uint64(row_feat[np.uint64(q)])
            ck[b] += w
            cn[b] += sign


@njit(cache=True)
def _distinct_from_counts(N, counts, m, n_node, min_leaf, columns):
    """Like :func:`_distinct_columns`, read off the instance-count matrix ``N``: features a and
    b split alike when ``N[a, b]`` equals both counts (same instances) or is zero with the
    counts adding up to the node (complements)."""
    n = 0
    for a in range(m):
        ca = counts[a]
        if ca < min_leaf or n_node - ca < min_leaf:
            continue
        new = True
        for j in range(n):
            c = columns[j]
            nab = N[a, c]
            if (nab == ca and nab == counts[c]) or (nab == 0 and ca + counts[c] == n_node):
                new = False
                break
        if new:
            columns[n] = a
            n += 1
    return n


@njit(cache=True, inline="always")
def _root(a, ws_f, K, m, n_node, min_leaf, max_budget, out):
    """Offer the best trees with root feature ``a`` (true branch left) for budgets 1..3 and
    return the cheapest, from the class totals, the diagonal and ``a``'s pair rows in ``ws_f``.
    A child feature still to be looked up is marked -2."""
    total, tot_l, best_l, best_r = 0.0, 0.0, 0.0, 0.0
    for k in range(K):
        t, d = ws_f[F_TOT, k], ws_f[F_DIAG + k, a]
        total += t
        tot_l += d
        best_l = max(best_l, d)
        best_r = max(best_r, t - d)
    left0 = tot_l - best_l
    right0 = (total - tot_l) - best_r
    left1, right1 = INF, INF
    if max_budget >= 2 and (left0 > 0 or right0 > 0):
        _children(ws_f, K, a, m, n_node, min_leaf)
        if left0 > 0:
            left1 = _least(ws_f, F_COST_L, m)
        if right0 > 0:
            right1 = _least(ws_f, F_COST_R, m)
    _offer(out, 1, left0 + right0, a, 0, -1, -1)
    if left1 < INF:
        _offer(out, 2, left1 + right0, a, 1, -2, -1)
    if right1 < INF:
        _offer(out, 2, left0 + right1, a, 0, -1, -2)
    best = min(left0 + right0, left1 + right0, left0 + right1)
    if max_budget >= 3 and left1 < INF and right1 < INF:
        _offer(out, 3, left1 + right1, a, 1, -2, -2)
        best = min(best, left1 + right1)
    return best


@njit(cache=True, inline="always")
def _children(ws_f, K, a, m, n_node, min_leaf):
    """Cost of splitting each child of root ``a`` on every feature b, into rows ``F_COST_L``
    and ``F_COST_R`` of ``ws_f`` (INF where a side would hold fewer than ``min_leaf``
    instances)."""
    n_left = ws_f[F_DIAG + K, a]
    if K == 2:
        _children_binary(ws_f, a, m, n_left, n_node - n_left, min_leaf)
    else:
        _children_multiclass(ws_f, K, a, m, n_left, n_node - n_left, min_leaf)


@njit(cache=True, inline="always")
def _children_binary(ws_f, a, m, n_left, n_right, min_leaf):
    # Two classes: a leaf costs min(c0, c1). Branch-free, so the loop vectorises.
    ta0, ta1 = ws_f[F_DIAG, a], ws_f[F_DIAG + 1, a]
    r0, r1 = ws_f[F_TOT, 0] - ta0, ws_f[F_TOT, 1] - ta1
    crow = F_DIAG + 3
    for b in range(m):
        p, q = ws_f[crow, b], ws_f[crow + 1, b]
        d0, d1 = ws_f[F_DIAG, b] - p, ws_f[F_DIAG + 1, b] - q
        nab = ws_f[F_NROW, b]
        nb = ws_f[F_DIAG + 2, b] - nab
        ok_l = (nab >= min_leaf) & (n_left - nab >= min_leaf)
        ok_r = (nb >= min_leaf) & (n_right - nb >= min_leaf)
        ws_f[F_COST_L, b] = (min(p, q) + min(ta0 - p, ta1 - q)) if ok_l else INF
        ws_f[F_COST_R, b] = (min(d0, d1) + min(r0 - d0, r1 - d1)) if ok_r else INF


@njit(cache=True)
def _children_multiclass(ws_f, K, a, m, n_left, n_right, min_leaf):
    crow = F_DIAG + K + 1
    for b in range(m):
        nab = ws_f[F_NROW, b]
        nb = ws_f[F_DIAG + K, b] - nab
        cl, cr = INF, INF
        if nab >= min_leaf and n_left - nab >= min_leaf:
            cl = 0.0
            for sb in range(2):  # leaves a&b and a&~b
                total, best = 0.0, 0.0
                for k in range(K):
                    c = ws_f[crow + k, b] if sb == 1 else ws_f[F_DIAG + k, a] - ws_f[crow + k, b]
                    total += c
                    best = max(best, c)
                cl += total - best
        if nb >= min_leaf and n_right - nb >= min_leaf:
            cr = 0.0
            for sb in range(2):  # leaves ~a&b and ~a&~b
                total, best = 0.0, 0.0
                for k in range(K):
                    ab = ws_f[F_DIAG + k, b] - ws_f[crow + k, b]
                    c = ab if sb == 1 else ws_f[F_TOT, k] - ws_f[F_DIAG + k, a] - ab
                    total += c
                    best = max(best, c)
                cr += total - best
        ws_f[F_COST_L, b] = cl
        ws_f[F_COST_R, b] = cr


@njit(cache=True, inline="always")
def _least(ws_f, row, m):
    """The least of ``ws_f[row, :m]`` (never NaN here) by a plain loop, which vectorises:
    NumPy's ``min`` in Numba checks every value for NaN, and took a fifth of a depth-4
    search's time."""
    best = INF
    for i in range(m):
        v = ws_f[row, i]
        best = v if v < best else best
    return best


@njit(cache=True)
def _argmin(x, n):
    """First index of the minimum."""
    best = 0
    for i in range(1, n):
        if x[i] < x[best]:
            best = i
    return best


@njit(cache=True, inline="always")
def _offer(out, b, cost, f, left_budget, jl, jr):
    if cost < out[0, b]:
        out[0, b] = cost
        out[1, b] = f
        out[2, b] = left_budget
        out[3, b] = jl
        out[4, b] = jr
