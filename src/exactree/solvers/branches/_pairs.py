"""Depth-2 bounds of a branch from pair counts (BRANCHES' frontier solve).

All costs are in units of weight, as in :mod:`._kernels`. For a branch ``l`` with rows ``R``
(its literals fix ``dep`` features; ``UF`` lists the others), and a child ``c = l & g`` (``g`` a
literal of an unused feature ``f``):

*frontier bound* of a branch ``b``: its leaf cost where a leaf is provably optimal there (pure
enough that ``leaf <= lam_w + EQ``, or no split allowed), else ``lam_w + EQ(b)``: a split costs
``lam_w`` and no tree classifies the EQ rows (rows outvoted within their group of identical
feature vectors). It is a lower bound on the optimal subtree cost of ``b``.

``q1(f)``   ``lam_w`` plus the frontier bounds of the children of ``f``: a lower bound on every
            subtree of ``l`` with root split ``f``;
``bl[g]``   the least of ``leaf(c)`` and, over every split ``f2`` of ``c`` leaving two non-empty
            grandchildren, ``lam_w`` plus the grandchildren's frontier bounds: a lower bound on
            the optimal subtree cost of ``c`` (computed by :func:`pair_row`, for the literals of
            one feature ``f`` at a time, from the class and EQ weights of every cell
            ``c & (x_f2 = b)``);
``bu[g]``   the cost of the best subtree of depth <= 1 of ``c`` (the leaf unless a split beats
            it by more than ``tol``), an achievable cost, and ``bf[g]`` that split (-1: a leaf);
``q2(f)``   ``lam_w + sum_j bl[l & (x_f = j)] >= q1(f)``, a lower bound on every subtree of
            ``l`` with root split ``f``.

:func:`branch_bounds` gives the branch's depth-2 bounds: ``lb2 = min(leaf, min_f q2(f))``, a
lower bound on its optimal subtree cost, and ``ub2``, the cost of a subtree of depth <= 2 (an
achievable cost). It computes ``q2`` only for the features in increasing order of ``q1`` until
the next ``q1`` reaches the least ``q2`` found (``q2 >= q1`` bounds the others), so ``lb2`` is
exact while most feature pairs are never counted. ``lb2 >= ub2 - tol`` proves that subtree
optimal: the branch is solved without storing anything below it.

Splits that send every row to one child are skipped everywhere: such a split keeps the same
rows with one feature fewer and costs ``lam_w`` more, so it is never strictly better.

With unit row weights (``weighted`` false, every weight ``w0``) the counts are integers: cells
with codes ``>= 1`` on both features are popcounts over the branch's rows packed into
``ceil(|R| / 64)`` words, the others follow by subtraction, and costs are counts times ``w0``
as in the search's other kernels. General weights are summed row by row.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._bits import popcount
from .._clock import now
from ._codes import code
from ._chains import lift, members
from ._classes import distinct

# Unit weights: rows are packed afresh (instead of gathering the data's nonzero words) when
# there are fewer than PACK_FACTOR rows per word saved.
PACK_FACTOR = 4


@njit(cache=True)
def rows_of(S, nzw, nnz, R):
    """Row indices of the bitset ``S`` (its nonzero words ``nzw``) into ``R``; returns their
    number."""
    m = 0
    for i in range(nnz):
        word = S[i]
        base = nzw[i] * 64
        while word != 0:
            low = word & (~word + np.uint64(1))
            R[m] = base + np.int64(popcount(low - np.uint64(1)))
            m += 1
            word ^= low
    return m


@njit(cache=True)
def _pack_rows(S, nzw, nnz, nS, R):
    """Whether to pack the branch's ``nS`` rows afresh (listing them in ``R``) rather than
    gathering the data's ``nnz`` nonzero words: when that saves PACK_FACTOR rows per word."""
    nwc = (nS + 63) >> 6
    if nS < PACK_FACTOR * (nnz - nwc):
        rows_of(S, nzw, nnz, R)
        return True
    return False


@njit(cache=True)
def _prepare_binary(S, nzw, nnz, UF, nu, Z, y, lit_bits, cls_bits, mis_bits, lit_off, K, R, ck,
                    BW, R1, own, raw):
    """:func:`prepare` when every feature is binary, with unit weights: word-major bitsets
    ``BW[wi, i]`` of the rows with code 1 of ``UF[i]``, and ``R1[:, i]`` their class counts
    (then EQ), contiguous over ``i`` so that the loops over features vectorise."""
    nS = 0
    for i in range(nnz):
        nS += np.int64(popcount(S[i]))
    if _pack_rows(S, nzw, nnz, nS, R):
        nw = (nS + 63) >> 6
        for wi in range(nw):
            for i in range(nu):
                BW[wi, i] = np.uint64(0)
            for k in range(K):
                ck[k, wi] = np.uint64(0)
        for p in range(nS):
            r = R[p]
            yk = y[r]
            wi = p >> 6
            bit = np.uint64(1) << np.uint64(p & 63)
            if yk < K - 1:
                ck[yk, wi] |= bit
            if (mis_bits[r >> 6] >> np.uint64(r & 63)) & np.uint64(1):
                ck[K - 1, wi] |= bit
        # code 1 of each feature from its literal's bitset, one feature at a time: the rows
        # ascend, so each literal's words are read in order (no codes matrix needed)
        for i in range(nu):
            g = lit_off[UF[i]] + 1
            for p in range(nS):
                r = R[p]
                if (lit_bits[g, r >> 6] >> np.uint64(r & 63)) & np.uint64(1):
                    BW[p >> 6, i] |= np.uint64(1) << np.uint64(p & 63)
    else:
        nw = nnz
        for wi in range(nnz):
            sw = S[wi]
            ow = nzw[wi]
            for k in range(K - 1):
                ck[k, wi] = cls_bits[k, ow] & sw
            ck[K - 1, wi] = mis_bits[ow] & sw
            for i in range(nu):
                BW[wi, i] = lit_bits[lit_off[UF[i]] + 1, ow] & sw
    for k in range(K + 1):
        for i in range(nu):
            R1[k, i] = 0.0
    acc = 0.0
    for k in range(K - 1):
        c = 0
        for wi in range(nw):
            c += np.int64(popcount(ck[k, wi]))
        own[k] = c
        acc += c
    own[K - 1] = nS - acc
    c = 0
    for wi in range(nw):
        c += np.int64(popcount(ck[K - 1, wi]))
    own[K] = c
    for wi in range(nw):
        for i in range(nu):
            R1[K - 1, i] += np.int64(popcount(BW[wi, i]))  # totals for now
        for k in range(K - 1):
            m = ck[k, wi]
            for i in range(nu):
                R1[k, i] += np.int64(popcount(BW[wi, i] & m))
        m = ck[K - 1, wi]
        for i in range(nu):
            R1[K, i] += np.int64(popcount(BW[wi, i] & m))
    for k in range(K - 1):
        for i in range(nu):
            R1[K - 1, i] -= R1[k, i]
    for i in range(nu):
        g0 = lit_off[UF[i]]
        for k in range(K + 1):
            raw[g0 + 1, k] = R1[k, i]
            raw[g0, k] = own[k] - R1[k, i]
    return nS, nw


@njit(cache=True)
def prepare(S, nzw, nnz, UF, nu, Z, y, w, weighted, lit_bits, cls_bits, mis_bits, lit_off, card,
            K, R, cb, ck, raw, own, BW, R1, pos):
    """Counts of the branch whose rows are the bitset ``S`` (nonzero words ``nzw[:nnz]`` of the
    data's words), into workspace arrays (see :func:`workspace`): ``own`` (class counts,
    then EQ, of the branch) and ``raw[g]`` (same, of the child ``g``) for every literal of the
    features ``UF[:nu]``; row counts with unit weights, weights otherwise. Returns ``(nS, nw,
    binary)``: with general weights the rows listed in ``R[:nS]``; with unit weights the
    branch's rows as ``nw``-word bitsets, either the nonzero words of the data's bitsets
    (gathered) or, when the rows are spread thinly over them, the rows packed afresh; word-major
    by feature when every feature is ``binary``, else by literal."""
    binary = not weighted
    for i in range(nu):
        pos[UF[i]] = i
        if card[UF[i]] != 2:
            binary = False
    if binary:
        nS, nw = _prepare_binary(S, nzw, nnz, UF, nu, Z, y, lit_bits, cls_bits, mis_bits,
                                 lit_off, K, R, ck, BW, R1, own, raw)
    else:
        nS, nw = _prepare_general(S, nzw, nnz, UF, nu, Z, y, w, weighted, lit_bits, cls_bits,
                                  mis_bits, lit_off, K, R, cb, ck, raw, own)
    return nS, nw, binary


@njit(cache=True)
def _prepare_general(S, nzw, nnz, UF, nu, Z, y, w, weighted, lit_bits, cls_bits, mis_bits,
                     lit_off, K, R, cb, ck, raw, own):
    """:func:`prepare` on any features: bitsets ``cb[g]`` by literal (codes >= 1)."""
    for k in range(K + 1):
        own[k] = 0.0
    if weighted:
        for i in range(nu):
            f = UF[i]
            for g in range(lit_off[f], lit_off[f + 1]):
                for k in range(K + 1):
                    raw[g, k] = 0.0
        nS = rows_of(S, nzw, nnz, R)
        for p in range(nS):
            r = R[p]
            yk = y[r]
            wr = w[r]
            mis = ((mis_bits[r >> 6] >> np.uint64(r & 63)) & np.uint64(1)) != 0
            own[yk] += wr
            if mis:
                own[K] += wr
            for i in range(nu):
                f = UF[i]
                g = lit_off[f] + code(Z, r, f)
                raw[g, yk] += wr
                if mis:
                    raw[g, K] += wr
        return nS, 0
    nS = 0
    for i in range(nnz):
        nS += np.int64(popcount(S[i]))
    if _pack_rows(S, nzw, nnz, nS, R):  # few rows per word: pack them afresh
        nw = (nS + 63) >> 6
        for i in range(nu):
            f = UF[i]
            for g in range(lit_off[f] + 1, lit_off[f + 1]):
                for wi in range(nw):
                    cb[g, wi] = np.uint64(0)
        for k in range(K):
            for wi in range(nw):
                ck[k, wi] = np.uint64(0)
        for p in range(nS):
            r = R[p]
            yk = y[r]
            wi = p >> 6
            bit = np.uint64(1) << np.uint64(p & 63)
            if yk < K - 1:
                ck[yk, wi] |= bit
            if (mis_bits[r >> 6] >> np.uint64(r & 63)) & np.uint64(1):
                ck[K - 1, wi] |= bit
            for i in range(nu):
                f = UF[i]
                cf = code(Z, r, f)
                if cf > 0:
                    cb[lit_off[f] + cf, wi] |= bit
    else:
        nw = nnz
        for wi in range(nnz):
            sw = S[wi]
            ow = nzw[wi]
            for k in range(K - 1):
                ck[k, wi] = cls_bits[k, ow] & sw
            ck[K - 1, wi] = mis_bits[ow] & sw
            for i in range(nu):
                f = UF[i]
                for g in range(lit_off[f] + 1, lit_off[f + 1]):
                    cb[g, wi] = lit_bits[g, ow] & sw
    acc = 0.0
    for k in range(K - 1):
        c = 0
        for wi in range(nw):
            c += np.int64(popcount(ck[k, wi]))
        own[k] = c
        acc += c
    own[K - 1] = nS - acc
    c = 0
    for wi in range(nw):
        c += np.int64(popcount(ck[K - 1, wi]))
    own[K] = c
    for i in range(nu):
        f = UF[i]
        g0 = lit_off[f]
        for k in range(K + 1):
            raw[g0, k] = own[k]
        for g in range(g0 + 1, lit_off[f + 1]):
            t = 0
            e = 0
            for k in range(K - 1):
                raw[g, k] = 0.0
            for wi in range(nw):
                x = cb[g, wi]
                if x != 0:
                    t += np.int64(popcount(x))
                    for k in range(K - 1):
                        raw[g, k] += np.int64(popcount(x & ck[k, wi]))
                    e += np.int64(popcount(x & ck[K - 1, wi]))
            acc = 0.0
            for k in range(K - 1):
                acc += raw[g, k]
                raw[g0, k] -= raw[g, k]
            raw[g, K - 1] = np.int64(t) - acc
            raw[g0, K - 1] -= raw[g, K - 1]
            raw[g, K] = np.int64(e)
            raw[g0, K] -= raw[g, K]
    return nS, nw


@njit(cache=True, inline="always")
def row_leaf(a, g, K):
    """Total and leaf cost (total minus the largest class) of row ``g`` of ``a`` (indexed, not
    sliced: a view would cost reference counting in the hot loops; inlined: a function calling
    another keeps a reference count on every array it passes, per call)."""
    tot = 0.0
    mx = 0.0
    for k in range(K):
        v = a[g, k]
        tot += v
        if v > mx:
            mx = v
    return tot, tot - mx


@njit(cache=True)
def _leaf3(T, a, b, K):
    tot = 0.0
    mx = 0.0
    for k in range(K):
        v = T[a, b, k]
        tot += v
        if v > mx:
            mx = v
    return tot, tot - mx


@njit(cache=True)
def q1_bound(f, raw, lit_off, K, s, lam_w, tol, children_leaves):
    """``q1(f)`` (``inf`` when ``f`` leaves fewer than two non-empty children) and the cost of
    the stump on ``f`` (its children leaves)."""
    nonempty = 0
    lb = lam_w
    ub = lam_w
    for g in range(lit_off[f], lit_off[f + 1]):
        tot, lc = row_leaf(raw, g, K)
        if tot <= 0.0:
            continue
        nonempty += 1
        lc *= s
        eq = raw[g, K] * s
        ub += lc
        if children_leaves or lc <= lam_w + eq + tol:
            lb += lc
        else:
            lb += lam_w + eq
    if nonempty < 2:
        return np.inf, np.inf
    return lb, ub


@njit(cache=True)
def _row_general(f, UF, nu, R, nS, nw, Z, y, w, weighted, mis_bits, lit_off, card, K, s, lam_w, tol,
             gc_leaves, cb, ck, T, cls, raw, bl, bu, bf):
    """:func:`pair_row` on any features and weights: a cell table ``T`` (card x card x K+1) per
    pair, popcounts of the literal bitsets ``cb`` (unit weights) or a row pass (weights)."""
    ca = card[f]
    fa = lit_off[f]
    nwc = nw
    for g in range(fa, fa + ca):
        bl[g] = np.inf
        bu[g] = np.inf
        bf[g] = -1
    for i in range(nu):
        f2 = UF[i]
        if f2 == f:
            continue
        cb2 = card[f2]
        fb = lit_off[f2]
        if weighted:
            for a in range(ca):
                for b in range(cb2):
                    for k in range(K + 1):
                        T[a, b, k] = 0.0
            for p in range(nS):
                r = R[p]
                a = code(Z, r, f)
                b = code(Z, r, f2)
                T[a, b, y[r]] += w[r]
                if (mis_bits[r >> 6] >> np.uint64(r & 63)) & np.uint64(1):
                    T[a, b, K] += w[r]
        else:
            for a in range(1, ca):
                ga = fa + a
                for b in range(1, cb2):
                    gb = fb + b
                    for k in range(K + 1):
                        cls[k] = 0.0
                    tot = 0.0
                    for wi in range(nwc):
                        x = cb[ga, wi] & cb[gb, wi]
                        if x != 0:
                            tot += np.int64(popcount(x))
                            for k in range(K - 1):
                                cls[k] += np.int64(popcount(x & ck[k, wi]))
                            cls[K] += np.int64(popcount(x & ck[K - 1, wi]))
                    acc = 0.0
                    for k in range(K - 1):
                        T[a, b, k] = cls[k]
                        acc += cls[k]
                    T[a, b, K - 1] = tot - acc
                    T[a, b, K] = cls[K]
            # cells with a code 0, by subtraction (exact: integer counts)
            for a in range(1, ca):
                for k in range(K + 1):
                    v = raw[fa + a, k]
                    for b in range(1, cb2):
                        v -= T[a, b, k]
                    T[a, 0, k] = v
            for b in range(cb2):
                for k in range(K + 1):
                    v = raw[fb + b, k]
                    for a in range(1, ca):
                        v -= T[a, b, k]
                    T[0, b, k] = v
        for a in range(ca):
            ga = fa + a
            nonempty = 0
            lbs = lam_w
            ubs = lam_w
            for b in range(cb2):
                tot, lc = _leaf3(T, a, b, K)
                if tot <= 0.0:
                    continue
                nonempty += 1
                lc *= s
                eq = T[a, b, K] * s
                ubs += lc
                if gc_leaves or lc <= lam_w + eq + tol:
                    lbs += lc
                else:
                    lbs += lam_w + eq
            if nonempty >= 2:
                bl[ga] = min(bl[ga], lbs)
                if ubs < bu[ga]:
                    bu[ga] = ubs
                    bf[ga] = f2
    _leaf_caps(raw, fa, fa + ca, K, s, tol, bl, bu, bf, True)


@njit(cache=True, inline="always")
def _leaf_caps(raw, lo, hi, K, s, tol, bl, bu, bf, track):
    """Literals ``lo..hi-1``: a leaf is a candidate too, so it caps ``bu`` (the split feature
    ``bf`` becoming -1 with ``track``) and bounds ``bl``."""
    for g in range(lo, hi):
        tot, leaf = row_leaf(raw, g, K)
        leaf *= s
        if bu[g] < leaf - tol:
            bl[g] = min(bl[g], bu[g])
        else:
            bl[g] = min(bl[g], leaf)
            bu[g] = leaf
            if track:
                bf[g] = -1


@njit(cache=True, inline="always")
def _cell11(f, nu, nw, K, ck, BW, T11, pos):
    """Class counts (then EQ) of cell (1, 1) of ``f`` with every feature into ``T11`` (see
    :func:`_row_binary`)."""
    pf = pos[f]
    for k in range(K + 1):
        for i in range(nu):
            T11[k, i] = 0.0
    for wi in range(nw):
        x1 = BW[wi, pf]
        if x1 == 0:
            continue
        for i in range(nu):
            T11[K - 1, i] += np.int64(popcount(x1 & BW[wi, i]))  # totals for now
        for k in range(K - 1):
            m = x1 & ck[k, wi]
            for i in range(nu):
                T11[k, i] += np.int64(popcount(m & BW[wi, i]))
        m = x1 & ck[K - 1, wi]
        for i in range(nu):
            T11[K, i] += np.int64(popcount(m & BW[wi, i]))
    for k in range(K - 1):
        for i in range(nu):
            T11[K - 1, i] -= T11[k, i]


@njit(cache=True, inline="always")
def _finish_row(g0, K, s, lam_w, tol, lam_c, bl0, bu0, bl1, bu1, raw, bl, bu, budget):
    """Store the bounds of the children ``g0`` (code 0) and ``g0 + 1`` of a binary split (the
    least ``bl0``.. found, in rows), capped by their leaves (:func:`_leaf_caps`) and, with
    ``budget``, raised by the split budget (:func:`_budget_row`): :func:`pair_row`'s steps."""
    bl[g0] = (lam_c + bl0) * s
    bu[g0] = (lam_c + bu0) * s
    bl[g0 + 1] = (lam_c + bl1) * s
    bu[g0 + 1] = (lam_c + bu1) * s
    for g in range(g0, g0 + 2):
        tot, lc = row_leaf(raw, g, K)
        leaf = lc * s
        if bu[g] < leaf - tol:
            bl[g] = min(bl[g], bu[g])
        else:
            bl[g] = min(bl[g], leaf)
            bu[g] = leaf
        if budget and tot > 0.0 and (lc - raw[g, K]) * s < 2.0 * lam_w - tol:
            bl[g] = bu[g]


@njit(cache=True, fastmath={"nnan", "nsz"}, error_model="numpy")
def _row_binary2(f, nu, nw, s, lam_w, tol, gc_leaves, ck, BW, R1, T11, own, pos, lit_off, raw,
                 bl, bu, budget):
    """:func:`_row_binary` with two classes: one fused loop, no stores."""
    K = 2
    _cell11(f, nu, nw, K, ck, BW, T11, pos)
    pf = pos[f]
    lam_c = lam_w / s  # a split, in rows
    tol_c = tol / s
    inf = np.inf
    a0 = own[0]
    a1 = own[1]
    ae = own[2]
    b0 = R1[0, pf]
    b1 = R1[1, pf]
    be = R1[2, pf]
    bl1 = inf
    bu1 = inf
    bl0 = inf
    bu0 = inf
    for i in range(nu):
        u0 = T11[0, i]  # cell (1, 1): class 0, class 1, EQ
        u1 = T11[1, i]
        ue = T11[2, i]
        v0 = b0 - u0  # cell (1, 0)
        v1 = b1 - u1
        ve = be - ue
        x0 = R1[0, i] - u0  # cell (0, 1)
        x1 = R1[1, i] - u1
        xe = R1[2, i] - ue
        z0 = a0 - b0 - x0  # cell (0, 0)
        z1 = a1 - b1 - x1
        ze = ae - be - xe
        l11 = u0 if u0 < u1 else u1
        l10 = v0 if v0 < v1 else v1
        l01 = x0 if x0 < x1 else x1
        l00 = z0 if z0 < z1 else z1
        m11 = l11 if gc_leaves | (l11 <= lam_c + ue + tol_c) else lam_c + ue
        m10 = l10 if gc_leaves | (l10 <= lam_c + ve + tol_c) else lam_c + ve
        m01 = l01 if gc_leaves | (l01 <= lam_c + xe + tol_c) else lam_c + xe
        m00 = l00 if gc_leaves | (l00 <= lam_c + ze + tol_c) else lam_c + ze
        ok1 = (u0 + u1 > 0.0) & (v0 + v1 > 0.0)  # child x_f = 1 split on feature i
        ok0 = (x0 + x1 > 0.0) & (z0 + z1 > 0.0)  # child x_f = 0 split on feature i
        v = m11 + m10 if ok1 else inf
        bl1 = v if v < bl1 else bl1
        v = l11 + l10 if ok1 else inf
        bu1 = v if v < bu1 else bu1
        v = m01 + m00 if ok0 else inf
        bl0 = v if v < bl0 else bl0
        v = l01 + l00 if ok0 else inf
        bu0 = v if v < bu0 else bu0
    _finish_row(lit_off[f], K, s, lam_w, tol, lam_c, bl0, bu0, bl1, bu1, raw, bl, bu, budget)


@njit(cache=True, fastmath={"nnan", "nsz"}, error_model="numpy")
def _row_binary(f, nu, nw, K, s, lam_w, tol, gc_leaves, ck, BW, R1, T11, CT, own, pos, lit_off,
                raw, bl, bu, budget):
    """:func:`pair_row` when every feature is binary, with unit weights (see
    :func:`_prepare_binary`), without tracking: the popcounts of cell (1, 1) with every
    feature, the other three cells by subtraction, in loops over the features that vectorise
    (:func:`_row_binary2` with two classes). ``bf`` is left alone. Hot loops call it (or
    :func:`_row_binary2`) directly: a function that passes arrays on to other calls (or may
    raise) keeps a reference count on each of them per call, as :func:`pair_row` would; these
    call nothing and never raise (``error_model="numpy"``: ``s > 0``), so they keep none."""
    _cell11(f, nu, nw, K, ck, BW, T11, pos)
    pf = pos[f]
    lam_c = lam_w / s  # a split, in rows
    tol_c = tol / s
    inf = np.inf
    # CT rows: totals of cells 11, 10, 01, 00, then their largest class count
    for r in range(8):
        for i in range(nu):
            CT[r, i] = 0.0
    for k in range(K):
        a = own[k]
        b = R1[k, pf]
        for i in range(nu):
            v11 = T11[k, i]
            v10 = b - v11
            v01 = R1[k, i] - v11
            v00 = a - b - v01
            CT[0, i] += v11
            CT[1, i] += v10
            CT[2, i] += v01
            CT[3, i] += v00
            c = CT[4, i]
            CT[4, i] = v11 if v11 > c else c
            c = CT[5, i]
            CT[5, i] = v10 if v10 > c else c
            c = CT[6, i]
            CT[6, i] = v01 if v01 > c else c
            c = CT[7, i]
            CT[7, i] = v00 if v00 > c else c
    a = own[K]
    b = R1[K, pf]
    bl1 = inf
    bu1 = inf
    bl0 = inf
    bu0 = inf
    for i in range(nu):
        e11 = T11[K, i]
        e10 = b - e11
        e01 = R1[K, i] - e11
        e00 = a - b - e01
        l11 = CT[0, i] - CT[4, i]
        l10 = CT[1, i] - CT[5, i]
        l01 = CT[2, i] - CT[6, i]
        l00 = CT[3, i] - CT[7, i]
        # frontier bounds (select, no branches: the loop vectorises)
        m11 = l11 if gc_leaves | (l11 <= lam_c + e11 + tol_c) else lam_c + e11
        m10 = l10 if gc_leaves | (l10 <= lam_c + e10 + tol_c) else lam_c + e10
        m01 = l01 if gc_leaves | (l01 <= lam_c + e01 + tol_c) else lam_c + e01
        m00 = l00 if gc_leaves | (l00 <= lam_c + e00 + tol_c) else lam_c + e00
        ok1 = (CT[0, i] > 0.0) & (CT[1, i] > 0.0)  # child x_f = 1 split on feature i
        ok0 = (CT[2, i] > 0.0) & (CT[3, i] > 0.0)  # child x_f = 0 split on feature i
        v = m11 + m10 if ok1 else inf
        bl1 = v if v < bl1 else bl1
        v = l11 + l10 if ok1 else inf
        bu1 = v if v < bu1 else bu1
        v = m01 + m00 if ok0 else inf
        bl0 = v if v < bl0 else bl0
        v = l01 + l00 if ok0 else inf
        bu0 = v if v < bu0 else bu0
    _finish_row(lit_off[f], K, s, lam_w, tol, lam_c, bl0, bu0, bl1, bu1, raw, bl, bu, budget)


@njit(cache=True)
def _budget_row(f, raw, lit_off, K, s, lam_w, tol, bl, bu):
    """Split budget (see :func:`branch_bounds`): a child of ``f`` whose leaf cost is less
    than ``2 * lam_w`` above its EQ weight has an optimal subtree with at most one split, so its
    best subtree of depth <= 1 (``bu``) is its optimum: ``bl = bu``."""
    for g in range(lit_off[f], lit_off[f + 1]):
        tot, leaf = row_leaf(raw, g, K)
        if tot > 0.0 and (leaf - raw[g, K]) * s < 2.0 * lam_w - tol:
            bl[g] = bu[g]


@njit(cache=True)
def pair_row(f, UF, nu, nS, nw, binary, Z, y, w, weighted, mis_bits, lit_off, card, K, s, lam_w,
             tol, gc_leaves, track, R, cb, ck, T, cls, raw, own, bl, bu, bf, BW, R1, T11, CT, pos,
             budget):
    """``bl``, ``bu`` (and with ``track`` ``bf``) of every literal of ``f``: the children of the
    branch's split on ``f``, each split further on every other unused feature (see the module
    docstring), after :func:`prepare` (which returned ``nS``, ``nw`` and ``binary``). The
    arrays are those of :func:`workspace`, passed one by one (unpacking the tuple per row would
    cost reference counting). ``budget``: see :func:`_budget_row`."""
    if binary and not track and K == 2:  # leaves and split budget applied there
        _row_binary2(f, nu, nw, s, lam_w, tol, gc_leaves, ck, BW, R1, T11, own, pos, lit_off,
                     raw, bl, bu, budget)
    elif binary and not track:
        _row_binary(f, nu, nw, K, s, lam_w, tol, gc_leaves, ck, BW, R1, T11, CT, own, pos,
                    lit_off, raw, bl, bu, budget)
    else:
        if binary:
            # tracking the best split: expand the word-major bitsets by literal and go general
            for i in range(nu):
                g = lit_off[UF[i]] + 1
                for wi in range(nw):
                    cb[g, wi] = BW[wi, i]
        _row_general(f, UF, nu, R, nS, nw, Z, y, w, weighted, mis_bits, lit_off, card, K, s,
                     lam_w, tol, gc_leaves, cb, ck, T, cls, raw, bl, bu, bf)
        if budget:
            _budget_row(f, raw, lit_off, K, s, lam_w, tol, bl, bu)


@njit(cache=True)
def workspace(n, n_words, q, G, K, cmax, board):
    """Scratch arrays of :func:`prepare`, :func:`pair_row` and :func:`branch_bounds`; entries
    21 and 22 hold the chains of :mod:`._chains` (``nxt``, ``prv``: all -1, no chains, until
    :func:`set_chains` fills them); entry 31 is ``board`` (:mod:`exactree.progress`), whose
    ``DEADLINE`` slot the long loops read: past it they stop refining bounds (weaker bounds,
    never wrong ones)."""
    size = 16
    while size < 2 * q + 2:
        size *= 2
    return (np.zeros(max(n, 1), np.int64), np.zeros((G, n_words), np.uint64),
            np.zeros((max(K, 1), n_words), np.uint64), np.zeros((cmax + 1, cmax + 1, K + 1)),
            np.zeros(K + 1), np.zeros((G, K + 1)), np.zeros(K + 1), np.zeros(G), np.zeros(G),
            np.zeros(G, np.int64), np.zeros(q + 1), np.zeros(q + 1, np.bool_), np.zeros(4),
            np.zeros((n_words, q + 1), np.uint64), np.zeros((K + 1, q + 1)),
            np.zeros((K + 1, q + 1)), np.zeros((8, q + 1)), np.zeros(q + 1, np.int64),
            np.zeros(q + 1, np.int64), np.zeros(q + 1, np.uint64),
            np.zeros(size, np.int64),
            # ordered thresholds (see _chains): nxt, prv, feature -> index (-1: inactive),
            # chain members, prefix maxima, per-literal bounds and lifted bounds, candidates
            np.full(q, -1, np.int64), np.full(q, -1, np.int64), np.full(q + 1, -1, np.int64),
            np.zeros(q + 1, np.int64), np.zeros(2 * q + 2), np.zeros(G + 1), np.zeros(G + 1),
            np.full(q + 1, -1, np.int64),
            # 29: flags, [0] = 1: lift bounds back along the chains too (see _chains.lift)
            np.zeros(1, np.int64),
            # 30: memo keys of the children of a branch, one per literal (_kernels)
            np.zeros(G + 1, np.uint64),
            # 31: the board (its slot 0, DEADLINE: a time.perf_counter value)
            board)


@njit(cache=True)
def set_chains(ws, nxt, prv, back):
    """Copy the chains of :mod:`._chains` into a :func:`workspace`; ``back``: lift bounds
    both ways along them (see :func:`._chains.lift`)."""
    a, b = ws[21], ws[22]
    for f in range(a.shape[0]):
        a[f] = nxt[f]
        b[f] = prv[f]
    ws[29][0] = 1 if back else 0


@njit(cache=True, inline="always")
def _frontier(raw, g, K, s, lam_w, tol):
    """The frontier bound of the child ``g`` (see the module docstring; 0 when empty)."""
    tot, lc = row_leaf(raw, g, K)
    if tot <= 0.0:
        return 0.0
    lc *= s
    eq = raw[g, K] * s
    return lc if lc <= lam_w + eq + tol else lam_w + eq


@njit(cache=True)
def _lift_q1(f, UF, done, q1, raw, bl, lit_off, K, s, lam_w, tol, ix, nxt, prv, mem, pre, lo,
             back):
    """Raise ``q1`` of the features of ``f``'s chain whose ``q2`` is not computed yet by the
    bounds of their chain neighbours' children (see :mod:`._chains`): ``bl`` of those computed,
    the frontier bound of the others."""
    m = members(f, nxt, prv, ix, mem)
    if m < 2:
        return
    for k in range(m):
        i = ix[mem[k]]
        for g in range(lit_off[mem[k]], lit_off[mem[k]] + 2):
            lo[g] = bl[g] if done[i] else _frontier(raw, g, K, s, lam_w, tol)
            if row_leaf(raw, g, K)[0] <= 0.0:
                lo[g] = 0.0
    lift(mem, m, lit_off, lo, lo, pre, raw, K, s, back)
    for k in range(m):
        i = ix[mem[k]]
        if done[i] or q1[i] == np.inf:
            continue
        g = lit_off[mem[k]]
        v = lam_w + lo[g] + lo[g + 1]
        if v > q1[i]:
            q1[i] = v


@njit(cache=True)
def branch_bounds(S, nzw, nnz, dep, UF, nu, Z, y, w, weighted, w0, lit_bits, cls_bits, mis_bits,
                  lit_off, card, K, lam_w, tol, max_depth, full, max_rows, dedup, budget, ws,
                  target=np.inf, deadline=np.inf):
    """Depth-2 bounds of the branch with rows ``S`` (see :func:`prepare`) and ``dep`` literals
    (which must be allowed to split): ``out[0] = lb2``, ``out[1] = ub2``, ``out[2]`` the root
    split of a subtree of depth <= 2 costing ``ub2`` (-1: the leaf; the children's splits are in
    ``bf``). Returns the number of features whose ``q2`` was computed: at most ``max_rows``
    (then ``lb2`` is the least ``q2`` or ``q1`` left, a weaker bound) unless ``full``, which
    looks for the best subtree of depth <= 2, for the tree extraction: features in increasing
    order of ``q1`` until ``q1`` reaches the best subtree found, or one found costs at most
    ``target`` (inf: any, the stumps) and the clock (:func:`.._clock.now`) has passed
    ``deadline``; then the children's splits of its root into ``bf``. ``ws``: see
    :func:`workspace`.
    With ``dedup``, only one of the features of ``UF`` that split the rows alike is examined
    (see :mod:`._classes`; ``out[3]``: how many were left out).

    With ``budget`` (and not ``full``), the *split budget*: every split costs ``lam_w`` and no
    subtree misclassifies less than the branch's EQ weight, so an optimal subtree has fewer
    than ``(leaf - EQ) / lam_w`` splits (the leaf costs ``leaf``). Below two, the best stump or
    the leaf is optimal; below three, the best subtree of depth <= 2, each child at its best
    subtree of depth <= 1, is: the features are examined in increasing order of ``q1`` until
    ``q1`` reaches the best such subtree found (then ``lb2 = ub2``, whatever ``max_rows``)."""
    (R, cb, ck, T, cls, raw, own, bl, bu, bf, q1, done, out, BW, R1, T11, CT, pos, UFd, hkey,
     htab) = ws[:21]
    nxt, prv, ix, mem, pre, lo = ws[21], ws[22], ws[23], ws[24], ws[25], ws[26]
    back = ws[29][0] != 0
    board = ws[31]
    q = card.shape[0]
    out[3] = 0.0
    if dedup:
        for i in range(nu):
            UFd[i] = UF[i]
        m = distinct(S, nzw, nnz, UFd, nu, UFd, lit_bits, lit_off, hkey, htab)
        out[3] = nu - m
        UF = UFd
        nu = m
    nS, nw, binary = prepare(S, nzw, nnz, UF, nu, Z, y, w, weighted, lit_bits, cls_bits,
                             mis_bits, lit_off, card, K, R, cb, ck, raw, own, BW, R1, pos)
    s = 1.0 if weighted else w0
    tot = 0.0
    mx = 0.0
    for k in range(K):
        tot += own[k]
        mx = max(mx, own[k])
    leaf = tot - mx
    leaf *= s
    children_leaves = dep + 1 >= q or (max_depth >= 0 and dep + 1 >= max_depth)
    gc_leaves = dep + 2 >= q or (max_depth >= 0 and dep + 2 >= max_depth)
    best_ub = np.inf
    best_f = -1
    for i in range(nu):
        lb, ub = q1_bound(UF[i], raw, lit_off, K, s, lam_w, tol, children_leaves)
        q1[i] = lb
        done[i] = False
        if ub < best_ub:
            best_ub = ub
            best_f = UF[i]  # the stump: its children stay leaves (bf = -1)
    for i in range(nu):
        f = UF[i]
        for g in range(lit_off[f], lit_off[f + 1]):
            bf[g] = -1
    best_lb = leaf
    best_row = False  # best_f's children split (its q2 row), not leaves (its stump)
    n_rows = 0
    exact2 = False
    cut = False  # rows left out at the search's deadline (see workspace): a weaker lb2
    # a row costs about nu * nw word operations: look at the clock before each one that is
    # long, and every 16th one otherwise
    watch = nu * max(nw, 1) >= 2048
    row_budget = budget and not full
    if row_budget and not children_leaves and lam_w > 0.0:
        slack = leaf - own[K] * s
        if slack < 2.0 * lam_w - tol:  # at most one split: the best stump or the leaf
            if best_ub < leaf - tol:
                out[0] = best_ub
                out[1] = best_ub
                out[2] = best_f
            else:
                out[0] = leaf
                out[1] = leaf
                out[2] = -1
            return 0
        exact2 = slack < 3.0 * lam_w - tol
    if children_leaves:  # q1 is exact: the children of every split are leaves
        for i in range(nu):
            best_lb = min(best_lb, q1[i])
    else:
        for i in range(nu):
            ix[UF[i]] = i
        while True:
            pick = -1
            v = np.inf
            for i in range(nu):
                if not done[i] and q1[i] < v:
                    v = q1[i]
                    pick = i
            if pick < 0:
                break
            if exact2:
                if v >= min(best_ub, leaf) - tol:  # no subtree rooted at the rest beats it
                    break
            elif full:
                # nothing left can beat it (q1 bounds a split's cost too), or good enough in time
                if v >= min(best_ub, leaf - tol) or (min(best_ub, leaf) <= target + tol
                                                     and now() >= deadline):
                    best_lb = min(best_lb, v)
                    break
            else:
                if v >= best_lb:  # lb2 is exact
                    break
                lb = min(best_lb, v)  # a lower bound already
                if lb >= best_ub - tol or lb >= leaf - tol or n_rows >= max_rows:
                    best_lb = lb  # solved (the subtree found is optimal), or out of rows
                    break
            if not full and (watch or (n_rows & 15) == 15) and now() >= board[0]:
                best_lb = min(best_lb, v)  # the search is out of time: the bound so far
                cut = True
                break
            done[pick] = True
            f = UF[pick]
            if binary and K == 2:  # directly (see _row_binary)
                _row_binary2(f, nu, nw, s, lam_w, tol, gc_leaves, ck, BW, R1, T11, own, pos,
                             lit_off, raw, bl, bu, row_budget)
            elif binary:
                _row_binary(f, nu, nw, K, s, lam_w, tol, gc_leaves, ck, BW, R1, T11, CT, own, pos,
                            lit_off, raw, bl, bu, row_budget)
            else:
                pair_row(f, UF, nu, nS, nw, binary, Z, y, w, weighted, mis_bits, lit_off, card, K,
                         s, lam_w, tol, gc_leaves, False, R, cb, ck, T, cls, raw, own, bl, bu, bf,
                         BW, R1, T11, CT, pos, row_budget)
            n_rows += 1
            # (a call costs reference counting: only where f has active chain neighbours)
            if (nxt[f] >= 0 or prv[f] >= 0) and members(f, nxt, prv, ix, mem) >= 2:
                _lift_q1(f, UF, done, q1, raw, bl, lit_off, K, s, lam_w, tol, ix, nxt, prv, mem,
                         pre, lo, back)
            lb = lam_w
            ub = lam_w
            for g in range(lit_off[f], lit_off[f + 1]):
                t, lc = row_leaf(raw, g, K)
                if t <= 0.0:
                    continue
                lb += bl[g]
                ub += bu[g]
            best_lb = min(best_lb, lb)
            if ub < best_ub:
                best_ub = ub
                best_f = f
                best_row = True
        for i in range(nu):
            ix[UF[i]] = -1
    if full and best_row:  # the best subtree's second level: its root's row, tracked
        pair_row(best_f, UF, nu, nS, nw, binary, Z, y, w, weighted, mis_bits, lit_off, card, K,
                 s, lam_w, tol, gc_leaves, True, R, cb, ck, T, cls, raw, own, bl, bu, bf, BW,
                 R1, T11, CT, pos, False)
    if exact2 and not cut:
        best_lb = min(best_ub, leaf)  # at most two splits: the best such subtree is optimal
    if best_ub < leaf - tol:
        out[1] = best_ub
        out[2] = best_f
        out[0] = min(best_lb, best_ub)
    else:
        out[1] = leaf
        out[2] = -1
        out[0] = best_lb
    return n_rows

