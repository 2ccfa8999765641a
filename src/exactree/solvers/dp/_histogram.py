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

from ._statistics import add, leaf, split_cost

INF = np.inf
# Most buckets (all features together) a node may have for this solver (its scratch size).
MAX_BUCKETS = 4096
# The solver runs when it costs less than this share of evaluating every root split by sweeps:
# the search's bounds skip most root splits of a misclassification node, while squared-error
# bounds skip few (measured: bench_regression.py's quantile codes gain 2-3x at depth 3; raw
# columns with some few-valued ones, bidding, lose at any larger share for classification).
SWEEP_SHARE_CLASSES = 0.25
SWEEP_SHARE_SQUARED = 1.0


@njit(cache=True)
def worth_it(F, n, B, S, squared):
    """Whether :func:`solve_depth2` should solve a node of ``n`` rows, ``F`` features and ``B``
    buckets in all (``S`` statistics each; ``squared``: squared error)."""
    if B > MAX_BUCKETS or B <= F:
        return False
    share = SWEEP_SHARE_SQUARED if squared else SWEEP_SHARE_CLASSES
    return F * F * n + 2 * S * B * B < share * (B - F) * F * n


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
                 cum, cnt, allb, allc, root_lo, root_hi, restrict, tree_f, tree_b):
    """The least cost of a tree of depth two whose root splits, over the node's rows
    (``rows[g, :n]`` sorted by feature ``g``, ``bv``/``lab`` their buckets and labels), every
    split charged ``penalty``; its tree goes to ``tree_f``/``tree_b`` (heap layout, 7 nodes).
    Returns INF (tree untouched) when no split meets the minimum leaf size.

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
        b = off[g]
        for t in range(n):
            if t > 0 and bv[g, t] != bv[g, t - 1]:
                b += 1
            gmap[b] = bv[g, t]
            r = rows[g, t]
            loc[r, g] = b
            add(allb, b, lab[g, t], 1.0 if unit else weights[r], r, target)
            allc[b] += 1
            if g == 0:
                add(tot, 0, lab[g, t], 1.0 if unit else weights[r], r, target)
    # Statistics of the root split's sides (left, rt) and of the parts of the tests below it
    # left of their threshold (pl: on the left side, pr: on the right side).
    left = np.zeros((1, S))
    rt = np.zeros((1, S))
    pl = np.zeros((1, S))
    pr = np.zeros((1, S))
    best = INF
    for f in range(F):
        cum[:B, :] = 0.0
        cnt[:B] = 0
        left[:] = 0.0
        for t in range(n - 1):
            r = rows[f, t]
            k = lab[f, t]
            w = 1.0 if unit else weights[r]
            for g in range(F):
                c = loc[r, g]
                add(cum, c, k, w, r, target)
                cnt[c] += 1
            add(left, 0, k, w, r, target)
            if bv[f, t + 1] == bv[f, t]:
                continue
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
            for g in range(F):
                pl[:] = 0.0
                pr[:] = 0.0
                kl = kr = 0
                for c in range(off[g], off[g + 1] - 1):
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
    return best
