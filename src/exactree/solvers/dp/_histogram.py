"""The optimal tree of depth two of a node from its per-bucket statistics, for features with few
buckets (quantile or thermometer codes, few-valued columns).

The ordered search (:mod:`._ordered`) evaluates a depth-two node's root splits one at a time,
each a sweep over every feature's rows: ``O(features x rows)`` per split it cannot prune. When
the node's features have few distinct buckets, every root split can be evaluated at once
instead, as STreeD's depth-two solver does with pair counts: sweep each root feature's rows in
order, adding every row to a running per-bucket histogram of each other feature; at each of the
root feature's thresholds the best test of each side on feature ``g`` is one scan of ``g``'s
histogram prefix (left side) and of its complement (right side). A node of ``n`` rows and ``F``
features with ``B`` buckets in all costs ``O(F**2 n + S B**2)`` (``S`` statistics per bucket),
whatever the bounds, and gives the node's exact optimum, which the search then passes up as a
bound as well as a tree.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._clock import late as _late
from .._squared_error import SSE_GRID, sse_cost
from ._statistics import add, leaf, split_cost

INF = np.inf
# Most buckets (all features together) a node may have for this solver (its scratch size).
MAX_BUCKETS = 4096
# The solver runs when it costs less than this share of evaluating every root split by sweeps:
# the search's bounds skip most root splits of a misclassification node, while squared-error
# bounds skip few (measured: bench_regression.py's quantile codes gain 2-3x at depth 3; raw
# columns with some few-valued ones, bidding, lose at any larger share for classification).
SWEEP_SHARE_CLASSES = 0.25
SWEEP_SHARE_SQUARED = 1.0  # a user's objective (squared error itself: worth_it_squared)
# Squared error: a candidate test whose unrounded cost exceeds the best so far by this much
# (times the side's sum of squares, when above 1) cannot beat it once rounded: each leaf's
# rounding moves it by half a grid step at most (see .._squared_error), and floating-point
# error is a few units of 2**-52 of the sum of squares. Such a test is not costed exactly.
SKIP_MARGIN = 8.0 / SSE_GRID


@njit(cache=True)
def worth_it(F, n, B, S, squared):
    """Whether :func:`solve_depth2` should solve a node of ``n`` rows, ``F`` features and ``B``
    buckets in all (``S`` statistics each; ``squared``: squared error)."""
    if B > MAX_BUCKETS or B <= F:
        return False
    share = SWEEP_SHARE_SQUARED if squared else SWEEP_SHARE_CLASSES
    return F * F * n + 2 * S * B * B < share * (B - F) * F * n


@njit(cache=True)
def worth_it_squared(F, n, B):
    """:func:`worth_it` for squared error (not a user's objective), whose scan costs a candidate
    test about what a sweep costs a row of a feature (see :func:`_scan_squared`). A solve costs
    ``F**2 n`` (histograms) plus ``2 B (B - F)`` (scans); sweeps cost ``F n`` per root split
    plus about ``5`` per bucket (a split is costed at each bucket change) and evaluate
    ``log2(1 + splits per feature)`` root splits per feature or more: squared-error bounds
    prune little, relatively more among many splits. (Measured on bench_regression.py's sets
    at depth 3: quantile codes gain 3x on the nodes this sends to the histograms; on raw
    columns it sends few, and those not slower.)"""
    if B > MAX_BUCKETS or B <= F:
        return False
    splits = B - F
    evaluated = min(float(splits), F * np.log2(1.0 + splits / F))
    return F * F * n + 2 * B * splits < evaluated * (F * n + 5 * B)


@njit(cache=True)
def bucket_offsets(bv, n, off):
    """``off[g] .. off[g + 1] - 1`` index feature ``g``'s distinct buckets among the node's
    ``n`` rows (``bv[g, :n]`` sorted); returns their total number, or stops counting (and
    returns more than MAX_BUCKETS) once they exceed MAX_BUCKETS: raw numeric columns cost a
    feature or two of counting per node, not all of them."""
    F = bv.shape[0]
    off[0] = 0
    for g in range(F):
        b = 1 if n else 0
        for t in range(1, n):
            if bv[g, t] != bv[g, t - 1]:
                b += 1
        off[g + 1] = off[g] + b
        if off[g + 1] > MAX_BUCKETS:
            return off[g + 1]
    return off[F]


@njit(cache=True)
def solve_depth2(rows, bv, lab, n, weights, unit, target, fn, min_leaf, penalty, off, loc, gmap,
                 cum, cnt, allb, allc, root_lo, root_hi, restrict, tree_f, tree_b, deadline):
    """The least cost of a tree of depth two whose root splits, over the node's rows
    (``rows[g, :n]`` sorted by feature ``g``, ``bv``/``lab`` their buckets and labels), every
    split charged ``penalty``; its tree goes to ``tree_f``/``tree_b`` (heap layout, 7 nodes).
    Returns ``(cost, cut)``: cost INF (tree untouched) when no split meets the minimum leaf
    size; ``cut`` when it stopped past the ``deadline`` (see :func:`.._clock.late`), the cost
    then that of the best tree over the root features done, not proven optimal.

    ``off`` from :func:`bucket_offsets`; scratch: ``loc`` (all rows x features), ``gmap``,
    ``cnt``, ``allc`` (at least ``off[F]`` entries), ``cum``, ``allb`` (as many rows of
    statistics). With ``restrict``, the root splits feature ``f`` only at buckets within
    ``root_lo[f] .. root_hi[f]``."""
    F = rows.shape[0]
    S = cum.shape[1]
    B = off[F]
    # Each row's bucket rank per feature, each rank's bucket, and every bucket's statistics.
    allb[:B, :] = 0.0
    allc[:B] = 0
    tot = np.zeros((1, S))
    for g in range(F):
        b = np.uint64(off[g])  # (unsigned indices in the loops: no wraparound code)
        for t in range(n):
            if t > 0 and bv[g, t] != bv[g, t - 1]:
                b += np.uint64(1)
            gmap[b] = bv[g, t]
            r = np.uint32(rows[g, t])
            k = np.uint32(lab[g, t])
            loc[r, g] = b
            add(allb, b, k, 1.0 if unit else weights[r], r, target)
            allc[b] += 1
            if g == 0:
                add(tot, 0, k, 1.0 if unit else weights[r], r, target)
    # Statistics of the root split's sides (left, rt) and of the parts of the tests below it
    # left of their threshold (pl: on the left side, pr: on the right side).
    left = np.zeros((1, S))
    rt = np.zeros((1, S))
    pl = np.zeros((1, S))
    pr = np.zeros((1, S))
    best = INF
    # Squared error: the row's statistics in scalars (the generic add reloads them per feature).
    sq = target is not None and fn is None
    for f in range(F):
        cum[:B, :] = 0.0
        cnt[:B] = 0
        left[:] = 0.0
        cf = off[f]  # f's bucket of row t: f's own histogram is filled a whole bucket at once
        for t in range(n - 1):
            r = np.uint32(rows[f, t])
            k = np.uint32(lab[f, t])
            w = 1.0 if unit else weights[r]
            if sq:
                y = target[r]
                wy = w * y
                wyy = wy * y
                for g in range(F):
                    if g != f:
                        c = np.uint32(loc[r, g])
                        cum[c, 0] += w
                        cum[c, 1] += wy
                        cum[c, 2] += wyy
                        cnt[c] += 1
            else:
                for g in range(F):
                    if g != f:
                        c = np.uint32(loc[r, g])
                        add(cum, c, k, w, r, target)
                        cnt[c] += 1
            add(left, 0, k, w, r, target)
            if bv[f, t + 1] == bv[f, t]:
                continue
            # f's bucket is complete (its rows added in the order allb was summed in).
            for j in range(S):
                cum[cf, j] = allb[cf, j]
            cnt[cf] = allc[cf]
            cf += 1
            nl = t + 1
            if nl < min_leaf or n - nl < min_leaf:
                continue
            if restrict and not root_lo[f] <= bv[f, t] <= root_hi[f]:
                continue
            for j in range(S):
                rt[0, j] = tot[0, j] - left[0, j]
            cl = leaf(left[0], target, fn)
            cr = leaf(rt[0], target, fn)
            gl = gr = -1
            ul = ur = 0
            if sq:
                cl, gl, ul, cr, gr, ur = _scan_squared(off, cum, cnt, allb, allc, gmap, left,
                                                       rt, nl, n, min_leaf, penalty, cl, cr)
            for g in range(0 if sq else F):
                pl[:] = 0.0
                pr[:] = 0.0
                kl = kr = 0
                for cc in range(off[g], off[g + 1] - 1):
                    c = np.uint64(cc)
                    for j in range(S):
                        pl[0, j] += cum[c, j]
                        pr[0, j] += allb[c, j] - cum[c, j]
                    kl += cnt[c]
                    kr += allc[c] - cnt[c]
                    if kl >= min_leaf and nl - kl >= min_leaf:
                        v = split_cost(pl, left, 0, target, fn) + penalty
                        if v < cl:
                            cl = v
                            gl = g
                            ul = gmap[c]
                    if kr >= min_leaf and n - nl - kr >= min_leaf:
                        v = split_cost(pr, rt, 0, target, fn) + penalty
                        if v < cr:
                            cr = v
                            gr = g
                            ur = gmap[c]
            v = cl + cr + penalty
            if v < best:
                best = v
                tree_f[:] = -1
                tree_f[0] = f
                tree_b[0] = bv[f, t]
                tree_f[1] = gl
                tree_b[1] = ul
                tree_f[2] = gr
                tree_b[2] = ur
        if _late(n, deadline):
            return best, True
    return best, False


@njit(cache=True, inline="always")
def _scan_squared(off, cum, cnt, allb, allc, gmap, left, rt, nl, n, min_leaf, penalty, cl, cr):
    """Squared error: the best test below each side of a root split (``left``/``rt``: the
    sides' statistics; ``cl``/``cr``: their leaves' costs), as the generic scan of
    :func:`solve_depth2` finds it, returned as ``(cl, gl, ul, cr, gr, ur)``. A candidate is
    costed exactly only where it may beat its side's best: two leaves ``(W1, S1, Q1)`` and the
    rest of ``(W, S, Q)`` cost ``Q - S1**2 / W1 - S2**2 / W2`` before rounding, so one whose
    ``S1**2 W2 + S2**2 W1`` is at most ``(Q - best + penalty - margin) W1 W2`` cannot (tested
    without dividing; ``margin``: see SKIP_MARGIN)."""
    F = off.shape[0] - 1
    Wl, Sl, Ql = left[0, 0], left[0, 1], left[0, 2]
    Wr, Sr, Qr = rt[0, 0], rt[0, 1], rt[0, 2]
    margin_l = SKIP_MARGIN * max(1.0, Ql)
    margin_r = SKIP_MARGIN * max(1.0, Qr)
    need_l = Ql - cl + penalty - margin_l
    need_r = Qr - cr + penalty - margin_r
    gl = gr = -1
    ul = ur = 0
    for g in range(F):
        w1 = s1 = q1 = 0.0  # left side, left of the test
        w2 = s2 = q2 = 0.0  # right side, left of the test
        kl = kr = 0
        for cc in range(off[g], off[g + 1] - 1):
            c = np.uint64(cc)  # unsigned: no wraparound code
            a0 = cum[c, 0]
            a1 = cum[c, 1]
            a2 = cum[c, 2]
            w1 += a0
            s1 += a1
            q1 += a2
            w2 += allb[c, 0] - a0
            s2 += allb[c, 1] - a1
            q2 += allb[c, 2] - a2
            kl += cnt[c]
            kr += allc[c] - cnt[c]
            if kl >= min_leaf and nl - kl >= min_leaf:
                u = Wl - w1
                d = Sl - s1
                if not (w1 > 0.0 and u > 0.0 and s1 * s1 * u + d * d * w1 <= need_l * w1 * u):
                    v = sse_cost(w1, s1, q1) + sse_cost(u, d, Ql - q1) + penalty
                    if v < cl:
                        cl = v
                        gl = g
                        ul = gmap[c]
                        need_l = Ql - cl + penalty - margin_l
            if kr >= min_leaf and n - nl - kr >= min_leaf:
                u = Wr - w2
                d = Sr - s2
                if not (w2 > 0.0 and u > 0.0 and s2 * s2 * u + d * d * w2 <= need_r * w2 * u):
                    v = sse_cost(w2, s2, q2) + sse_cost(u, d, Qr - q2) + penalty
                    if v < cr:
                        cr = v
                        gr = g
                        ur = gmap[c]
                        need_r = Qr - cr + penalty - margin_r
    return cl, gl, ul, cr, gr, ur
