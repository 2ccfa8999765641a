"""The k-means lower bound of regression trees (the bound of OSRT, Zhang et al., AAAI 2023, that
STreeD also uses), in Numba.

A tree with at most ``k`` leaves partitions its rows into at most ``k`` groups and predicts each
group's mean, so its squared error is at least that of the best partition of the targets into
``k`` groups, whatever the features: the weighted 1-D k-means optimum. In one dimension an
optimal partition is contiguous in sorted order, so the optimum is a dynamic programme over the
sorted distinct targets; the best split point of a prefix never moves left as the prefix grows
(the segment cost is Monge), so each layer is solved by divide and conquer in ``O(m log m)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

INF = np.inf
# Relative slack on the bound: the kernel's own costs are rounded sums, so a bound computed by
# other sums must stay below them (targets are centred and scaled: the root costs 1).
SLACK = 1e-9
# Most work (groups x distinct targets x log2 of them) the programme may take, about 50 ms: it
# does not look at the clock, and beyond this a fit's time limit would feel it (a depth-5 root
# of 300,000 rows is 0.4 s).
MAX_WORK = 2e7
(VAL, WT, PW, PS, PQ, PREV, CUR) = range(7)  # rows of the scratch `buf`


@njit(cache=True, inline="always")
def _segment(buf, i, j):
    """Squared error of the mean over distinct targets ``i..j-1``."""
    w = buf[PW, j] - buf[PW, i]
    s = buf[PS, j] - buf[PS, i]
    return max(buf[PQ, j] - buf[PQ, i] - s * s / w, 0.0)


@njit(cache=True)
def _layer(buf, k, m, stack):
    """``buf[CUR, j]``: the least error of ``k`` groups over the first ``j`` distinct targets
    (``k <= j <= m``), from ``buf[PREV]`` (``k - 1`` groups); explicit-stack divide and conquer
    over ``j`` with the window of optimal last cut points."""
    stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3] = k, m, k - 1, m - 1
    top = 1
    while top:
        top -= 1
        lo, hi, olo, ohi = stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]
        j = (lo + hi) >> 1
        best = INF
        arg = olo
        for i in range(olo, min(ohi, j - 1) + 1):
            c = buf[PREV, i] + _segment(buf, i, j)
            if c < best:
                best = c
                arg = i
        buf[CUR, j] = best
        if lo <= j - 1:
            stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = lo, j - 1, olo, arg
            top += 1
        if j + 1 <= hi:
            stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = j + 1, hi, arg, ohi
            top += 1


@njit(cache=True)
def _equal_weights(buf, k, m):
    """The error of ``k`` groups of about equal weight: a cheap upper bound on the optimum."""
    total = buf[PW, m]
    cost = 0.0
    i = 0
    for g in range(1, k + 1):
        j = i
        while j < m and (g == k or buf[PW, j] < total * g / k):
            j += 1
        if j > i:
            cost += _segment(buf, i, j)
        i = j
    return cost


@njit(cache=True)
def kmeans_bound(order, n, target, weights, k, penalty, ub, buf, stack):
    """A lower bound on the penalised squared error of every tree with at most ``k`` leaves over
    the rows ``order[:n]`` (sorted by target): ``min over j <= k`` of the ``j``-group optimum
    plus ``(j - 1) * penalty``, less a rounding slack; 0 when a quick look (groups of equal
    weight, or one group) shows it stays below ``ub`` (finite), the only use of the bound then being
    to prune at ``ub``, and 0 when the programme would take more than :data:`MAX_WORK`.
    ``buf`` is ``(7, n + 1)`` scratch, ``stack`` ``(64, 4)`` integers."""
    # Distinct targets with their total weights (zero weights cost nothing), and prefix sums.
    m = 0
    for t in range(n):
        r = order[t]
        w = weights[r]
        if w <= 0.0:
            continue
        if m and target[r] == buf[VAL, m - 1]:
            buf[WT, m - 1] += w
        else:
            buf[VAL, m] = target[r]
            buf[WT, m] = w
            m += 1
    if m <= 1:
        return 0.0
    buf[PW, 0] = buf[PS, 0] = buf[PQ, 0] = 0.0
    for i in range(m):
        w = buf[WT, i]
        y = buf[VAL, i]
        buf[PW, i + 1] = buf[PW, i] + w
        buf[PS, i + 1] = buf[PS, i] + w * y
        buf[PQ, i + 1] = buf[PQ, i] + w * y * y
    slack = SLACK * (1.0 + buf[PQ, m])
    g = min(k, m)
    if ub < INF and min(_segment(buf, 0, m), _equal_weights(buf, g, m) + (g - 1) * penalty) < ub:
        return 0.0
    if g * m * np.log2(m) > MAX_WORK:
        return 0.0
    for j in range(1, m + 1):
        buf[PREV, j] = _segment(buf, 0, j)
    best = buf[PREV, m]
    for g in range(2, min(k, m) + 1):
        if g == m:  # as many groups as distinct targets: no error
            best = min(best, (g - 1) * penalty)
            break
        _layer(buf, g, m, stack)
        best = min(best, buf[CUR, m] + (g - 1) * penalty)
        for j in range(g, m + 1):
            buf[PREV, j] = buf[CUR, j]
    return max(best - slack, 0.0)
