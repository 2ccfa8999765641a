"""Depth-two nodes where only a subtree with at most one error can win (technique
``perfect_depth2``).

Once a node's bound is below the cost of ``E + 1`` misclassified rows (``E`` = 0, or 1 with
unit weights), as under a size-minimal search whose incumbent has at most ``E`` errors, its
subtree misclassifies ``E`` rows at most, and the question is only how few splits do it. Four
properties of a set of rows matter: *pure* (one class), *pure but one* (a leaf with one
error), *separable* (one split, each side one class: at most two classes, and in some feature
all buckets of one class lie below all of the other's) and *separable but one* (one split, one
error: two classes separable once one row at an end of a class's range is left out, or three
classes of which one is a single row and the other two are separable). Each passes to subsets,
so along one feature's order the prefixes with a property end at one position, as do the
suffixes; a depth-two tree splits some feature where its prefix and its suffix have the
properties of its sides. One sweep per feature from either end, keeping each class's two least
and two greatest buckets in every feature until the prefix (suffix) stops being separable (but
one), finds the cheapest such tree (its errors plus a penalty per split) or proves that none
exists: O(features x rows swept x features), with no split evaluated.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._clock import late as _late

INF = np.inf
# The properties, indices into a sweep's ends: errors = index >= 2, splits = index & 1.
PURE, SEPARABLE, PURE_BUT_ONE, SEPARABLE_BUT_ONE = range(4)
FAR = 1 << 62  # above every bucket


@njit(cache=True)
def _reset(ext, cnt):
    """No rows yet: ``ext[0..3]`` (least, second least, greatest, second greatest bucket per
    class and feature) and ``cnt`` (rows per class)."""
    K, F = ext.shape[1], ext.shape[2]
    for k in range(K):
        cnt[k] = 0
        for h in range(F):
            ext[0, k, h] = FAR
            ext[1, k, h] = FAR
            ext[2, k, h] = -1
            ext[3, k, h] = -1


@njit(cache=True)
def _add_row(ext, cnt, row_buckets, r, k):
    """Row ``r`` of class ``k`` joins the set."""
    cnt[k] += 1
    for h in range(ext.shape[2]):
        v = row_buckets[r, h]
        if v < ext[0, k, h]:
            ext[1, k, h] = ext[0, k, h]
            ext[0, k, h] = v
        elif v < ext[1, k, h]:
            ext[1, k, h] = v
        if v > ext[2, k, h]:
            ext[3, k, h] = ext[2, k, h]
            ext[2, k, h] = v
        elif v > ext[3, k, h]:
            ext[3, k, h] = v


@njit(cache=True)
def _split_of(ext, a, b, one):
    """A feature and bucket splitting classes ``a`` and ``b`` with no error, or with ``one``
    with one (a row at an end of a class's range on the wrong side), as ``(feature, bucket,
    errors)``; none: ``(-1, 0, 2)``. Rows up to the bucket go left."""
    F = ext.shape[2]
    for h in range(F):
        if ext[2, a, h] < ext[0, b, h]:
            return h, ext[2, a, h], 0
        if ext[2, b, h] < ext[0, a, h]:
            return h, ext[2, b, h], 0
    if one:
        for h in range(F):
            if ext[3, a, h] < ext[0, b, h]:  # a's greatest row goes right
                return h, ext[3, a, h], 1
            if ext[2, a, h] < ext[1, b, h]:  # b's least row goes left
                return h, ext[2, a, h], 1
            if ext[3, b, h] < ext[0, a, h]:
                return h, ext[3, b, h], 1
            if ext[2, b, h] < ext[1, a, h]:
                return h, ext[2, b, h], 1
    return -1, 0, 2


@njit(cache=True)
def _best_tree(ext, cnt, cls, present, total, one):
    """The set's best tree of depth <= 1 with at most ``one`` error: ``(feature, bucket,
    errors)``, feature -1 for a leaf (errors 2: neither exists)."""
    most = 0
    for i in range(present):
        most = max(most, cnt[cls[i]])
    if present <= 1:
        return -1, 0, 0
    if present == 2:
        h, v, e = _split_of(ext, cls[0], cls[1], False)
        if h >= 0:
            return h, v, 0
    if one and total - most <= 1:
        return -1, 0, 1
    if not one or present > 3:
        return -1, 0, 2
    if present == 2:
        return _split_of(ext, cls[0], cls[1], True)
    for i in range(3):  # three classes: one a single row, the other two separable
        if cnt[cls[i]] == 1:
            h, v, e = _split_of(ext, cls[(i + 1) % 3], cls[(i + 2) % 3], False)
            if h >= 0:
                return h, v, 1
    return -1, 0, 2


@njit(cache=True)
def _sweep_end(rows, bv, lab, row_buckets, g, n, forward, one, ext, cnt, cls, ends):
    """Sweep feature ``g``'s order from its start (``forward``) or its end: ``ends[p]`` is the
    split position (rows before it) farthest from that end whose prefix (suffix) has property
    ``p`` (PURE ...; without one: 0 going forward, ``n`` backwards). ``one``: the properties
    with an error too. Returns the rows it swept. (_add_row and _best_tree written out: a call
    per row or split position costs atomic reference counts on its arrays.)"""
    F = ext.shape[2]
    _reset(ext, cnt)
    for p in range(4):
        ends[p] = 0 if forward else n
    present = 0
    most = 0  # rows of the largest class
    done = 1  # rows swept, and the extremes reset
    for i in range(n):
        done = i + 1
        t = i if forward else n - 1 - i
        # The split before row t (forward: between t - 1 and t, the prefix rows[:t]) or
        # after it (backwards: between t and t + 1, the suffix rows[t + 1:]).
        at = t if forward else t + 1
        if 0 < at < n and bv[g, at - 1] != bv[g, at]:
            e = 2  # the errors of the set's best tree of depth <= 1, 2 for more
            if present == 1:
                e = 0
            elif present == 2:
                a = cls[0]
                b = cls[1]
                for h in range(F):
                    if ext[2, a, h] < ext[0, b, h] or ext[2, b, h] < ext[0, a, h]:
                        e = 0
                        break
                if e == 2 and one:
                    if i - most <= 1:
                        e = 1
                    else:
                        for h in range(F):
                            if (ext[3, a, h] < ext[0, b, h] or ext[2, a, h] < ext[1, b, h]
                                    or ext[3, b, h] < ext[0, a, h]
                                    or ext[2, b, h] < ext[1, a, h]):
                                e = 1
                                break
            elif present == 3 and one:
                for j in range(3):  # a single row of one class, the other two separable
                    if e == 2 and cnt[cls[j]] == 1:
                        a = cls[(j + 1) % 3]
                        b = cls[(j + 2) % 3]
                        for h in range(F):
                            if ext[2, a, h] < ext[0, b, h] or ext[2, b, h] < ext[0, a, h]:
                                e = 1
                                break
            if e > (1 if one else 0):
                break
            if present == 1:
                ends[PURE] = at
            if e == 0:
                ends[SEPARABLE] = at
            if one:
                if i - most <= 1:
                    ends[PURE_BUT_ONE] = at
                ends[SEPARABLE_BUT_ONE] = at
        k = lab[g, t]
        if cnt[k] == 0:
            if present == 4:
                break  # five classes: no later prefix (suffix) qualifies
            cls[present] = k
            present += 1
        cnt[k] += 1
        most = max(most, cnt[k])
        r = rows[g, t]
        if one:
            for h in range(F):
                v = row_buckets[r, h]
                if v < ext[0, k, h]:
                    ext[1, k, h] = ext[0, k, h]
                    ext[0, k, h] = v
                elif v < ext[1, k, h]:
                    ext[1, k, h] = v
                if v > ext[2, k, h]:
                    ext[3, k, h] = ext[2, k, h]
                    ext[2, k, h] = v
                elif v > ext[3, k, h]:
                    ext[3, k, h] = v
        else:
            for h in range(F):
                v = row_buckets[r, h]
                ext[0, k, h] = min(ext[0, k, h], v)
                ext[2, k, h] = max(ext[2, k, h], v)
    return done


@njit(cache=True)
def _side(rows, lab, row_buckets, g, a, b, kind, ext, cnt, cls, tf, tb, node):
    """Write the side ``rows[g, a:b]`` as node ``node``, a tree of property ``kind`` (a leaf
    for PURE and PURE_BUT_ONE, else a leaf or a split; an error only with the _BUT_ONE ones);
    returns its errors and splits."""
    _reset(ext, cnt)
    present = 0
    for t in range(a, b):
        k = lab[g, t]
        if cnt[k] == 0:
            cls[min(present, 3)] = k
            present += 1
        _add_row(ext, cnt, row_buckets, rows[g, t], k)
    h, v, e = -1, 0, b - a - cnt.max()
    if kind & 1:
        h, v, e = _best_tree(ext, cnt, cls, min(present, 4), b - a, kind >= 2)
    tf[node] = h
    tb[node] = v if h >= 0 else 0
    return e, 1 if h >= 0 else 0


@njit(cache=True)
def few_errors_depth2(rows, bv, lab, row_buckets, n, budget, one, penalty, ext, cnt, cls, ends,
                      tf, tb, deadline, allowance):
    """The cheapest tree of depth <= 2 (its errors plus ``penalty`` per split) with at most
    one error with ``one`` (unit weights), else none, and at most ``budget`` splits, over a
    node's ``n`` rows (``rows[g, :n]`` sorted by feature ``g``, ``bv``/``lab`` their buckets and
    labels, ``row_buckets[row]`` every row's buckets): its cost, with the tree in ``tf``/``tb``
    (heap layout, 7 nodes); INF when there is none. Returns ``(cost, swept, cut)``: ``swept``
    the rows x features the sweeps touched (each row a sweep passes updates every feature's
    extremes), ``cut`` when, past ``allowance`` of that work (what the caller may do before it
    looks at the clock), it stopped past ``deadline`` (see :func:`.._clock.late`; the cost is
    then no answer).
    ``ext`` (4 x classes x features), ``cnt`` (classes), ``cls`` (4) and ``ends`` (2 x 4) are
    scratch."""
    F = rows.shape[0]
    for i in range(7):
        tf[i] = -1
        tb[i] = 0
    # The node as a leaf: its rows outside its largest class are its errors.
    cnt[:] = 0
    for t in range(n):
        cnt[lab[0, t]] += 1
    e_leaf = n - cnt.max() if n else 0
    if e_leaf == 0:
        return 0.0, n, False
    classes = 0
    for k in range(cnt.shape[0]):
        classes += cnt[k] > 0
    best = INF
    swept = n
    bg = bt = bkl = bkr = -1
    # Trees without errors first (shorter sweeps); those with one only if they can be better.
    for errors_allowed in range(2 if one else 1):
        if errors_allowed:
            if best <= 1.0:
                break
            if e_leaf == 1:
                best, bg = 1.0, -1
        # No tree with this many errors costs less: each class needs a leaf, but for a single
        # row with the error (trees with fewer errors are in best already).
        least = penalty * (classes - 1 - errors_allowed) + errors_allowed
        for g in range(F):
            if best <= least:
                break
            swept += _sweep_end(rows, bv, lab, row_buckets, g, n, True, errors_allowed == 1,
                                ext, cnt, cls, ends[0])
            swept += _sweep_end(rows, bv, lab, row_buckets, g, n, False, errors_allowed == 1,
                                ext, cnt, cls, ends[1])
            if swept * F >= allowance and _late(n * F, deadline):
                return INF, swept * F, True
            for kl in range(4):
                t = ends[0, kl]
                if t == 0:
                    continue
                for kr in range(4):
                    errors = (kl >= 2) + (kr >= 2)
                    splits = 1 + (kl & 1) + (kr & 1)
                    if errors > errors_allowed or splits > budget or ends[1, kr] > t:
                        continue
                    cost = errors + penalty * splits
                    if cost < best:
                        best, bg, bt, bkl, bkr = cost, g, t, kl, kr
    if best == INF:
        return INF, swept * F, False
    if bg < 0:  # the leaf with one error
        return best, swept * F, False
    tf[0] = bg
    tb[0] = bv[bg, bt - 1]
    # (Within its property a side costs what the property does: a cheaper tree there would be
    # a cheaper pair of properties.)
    e_l, s_l = _side(rows, lab, row_buckets, bg, 0, bt, bkl, ext, cnt, cls, tf, tb, 1)
    e_r, s_r = _side(rows, lab, row_buckets, bg, bt, n, bkr, ext, cnt, cls, tf, tb, 2)
    return (e_l + penalty * s_l) + (e_r + penalty * s_r) + penalty, swept * F, False
