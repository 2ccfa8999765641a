"""Numba kernels of the region branch-and-bound search for proper trees (``odt``'s default).

A proper tree is built top down over *regions* (bitsets of points): the root of a region may be
any rule whose defining points all lie in the region (that is exactly Definition 2.2's ancestry
condition against every ancestor, since the region is the intersection of the ancestors' sides),
and the budget of ``k - 1`` remaining rules is shared between the two children. Every proper tree
with at most ``k`` rules is reached this way, so the minimum is the one ``odt`` over all
combinations finds, without ever forming a combination that has no proper tree.

Speed-ups, each switchable off without changing the optimum:

- ``use_bound``: the incumbent (best tree so far) bounds every subproblem; a root whose children's
  lower bounds (leaf cost for a child without rules, the equivalent-points bound otherwise)
  cannot beat it is skipped, and the left child's value tightens the right child's bound;
- ``use_dominance``: thinning of partial trees that cannot be better than one already kept: a
  child region whose leaf already meets its lower bound (pure up to identical points), or that
  cannot be split (too few points, depth reached), never gets rules (giving them to the sibling
  dominates), and a one-rule scan stops at the first split meeting the region's lower bound.

Evaluating a rule on a region is incremental: the region's class totals and count are computed
once, and each candidate rule costs only the popcounts of its positive side; the negative side's
totals are the difference (exact for integral weights, which use bit planes).

No recursion: subproblems with two or more rules live on an explicit stack of frames; one-rule
subproblems are flat scans.

Objectives: ``sse`` selects the squared error (see :mod:`._kernels`); ``minority`` is then each
merged point's own squared error, rounded down (a region's squared error is at least the sum of
its points'). The bounds and dominance rules above use only that leaf costs are non-negative,
add over leaves and are bounded below by ``minority``, so they hold unchanged. The negative
side's statistics are the region's minus the positive side's only when that subtraction is
exact (integral class weights): squared-error statistics of both sides are summed directly, as
``W_region - W_positive`` cancels badly when weights span many orders of magnitude.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._bits import popcount
from ._kernels import _class_weights, _weighted_popcount, leaf_stat_cost

INF = np.inf


@njit(cache=True, nogil=True)
def _minority_sum(mask, minority):
    """Equivalent-points bound of a region: the weight no tree can classify right (points with
    identical coordinates but different classes were merged; their minority weight is lost)."""
    total = 0.0
    for w in range(mask.shape[0]):
        word = mask[w]
        while word != 0:
            low = word & (~word + np.uint64(1))
            bit = popcount(low - np.uint64(1))  # index of the lowest set bit
            total += minority[w * 64 + bit]
            word ^= low
    return total


@njit(cache=True, nogil=True)
def _lower(mask, minority, has_minority):
    return _minority_sum(mask, minority) if has_minority else 0.0


@njit(cache=True, nogil=True)
def _allowed(j, region, defmask):
    """Rule ``j`` may split ``region``: all its defining points lie in it."""
    for w in range(region.shape[0]):
        if defmask[j, w] & ~region[w]:
            return False
    return True


@njit(cache=True, nogil=True)
def _member(group, region, gptr, gmem, defmask):
    """First rule of ``group`` (rules with identical sides) that may split ``region``, or -1.

    Rules with the same sides give the same subtrees wherever they may be used, so a region
    evaluates the split once (thinning of equivalent rules); which member is used only
    matters for properness, i.e. for being allowed here."""
    for t in range(gptr[group], gptr[group + 1]):
        j = gmem[t]
        if _allowed(j, region, defmask):
            return j
    return -1


@njit(cache=True, nogil=True)
def best1(region, depth, lo, hi, order, gptr, gmem, sides, defmask, class_planes, weights, use_planes,
          sse, count_planes, minority, has_minority, min_leaf, max_depth, use_dominance, stats,
          cw_r, cw_p, cw_n, tmp):
    """Best tree with at most one rule on ``region``, roots from ``order[lo:hi]``.

    Returns ``(value, rule)``; ``rule`` is -1 for a leaf, ``value`` is ``inf`` when nothing is
    feasible. Exact (the first minimum in ``order``). ``stats[0]`` counts rule evaluations.
    """
    cnt = _weighted_popcount(region, count_planes)
    _class_weights(region, class_planes, weights, use_planes, cw_r)
    best = leaf_stat_cost(cw_r, sse) if cnt >= min_leaf else INF
    bj = -1
    if depth >= max_depth or cnt < 2 * min_leaf:
        return best, bj
    lb = _lower(region, minority, has_minority)
    if use_dominance and best <= lb:
        return best, bj
    n_classes = cw_r.shape[0]
    n_words = region.shape[0]
    total = 0.0
    for c in range(n_classes):
        total += cw_r[c]
    for p in range(lo, hi):
        j = _member(order[p], region, gptr, gmem, defmask)
        if j < 0:
            continue
        stats[0] += 1
        for w in range(n_words):
            tmp[w] = region[w] & sides[j, w]
        if min_leaf == 1 and use_planes:
            # only emptiness matters, and integral positive weights make a side empty exactly
            # when its weight is 0 (no count planes needed)
            _class_weights(tmp, class_planes, weights, use_planes, cw_p)
            wp = 0.0
            for c in range(n_classes):
                wp += cw_p[c]
            if wp <= 0.0 or wp >= total:
                continue
        else:
            cp = _weighted_popcount(tmp, count_planes)
            if cp < min_leaf or cnt - cp < min_leaf:
                continue
            _class_weights(tmp, class_planes, weights, use_planes, cw_p)
        if use_planes:
            for c in range(n_classes):
                cw_n[c] = cw_r[c] - cw_p[c]
        else:
            for w in range(n_words):
                tmp[w] = region[w] & ~sides[j, w]
            _class_weights(tmp, class_planes, weights, use_planes, cw_n)
        v = leaf_stat_cost(cw_p, sse) + leaf_stat_cost(cw_n, sse)
        if v < best:
            best = v
            bj = j
            if use_dominance and best <= lb:
                break
    return best, bj


@njit(cache=True, nogil=True)
def _leaf(region, class_planes, weights, use_planes, sse, count_planes, min_leaf, cw):
    """(leaf cost or inf when too small, count)."""
    cnt = _weighted_popcount(region, count_planes)
    if cnt < min_leaf:
        return INF, cnt
    _class_weights(region, class_planes, weights, use_planes, cw)
    return leaf_stat_cost(cw, sse), cnt


@njit(cache=True, nogil=True, inline="always")
def _frame_leaf(region, depth, class_planes, weights, use_planes, sse, count_planes, min_leaf,
                cw, max_depth, use_dominance, minority, has_minority):
    """``(leaf cost, splittable)`` of a frame's region: False when it cannot (usefully) be
    split (depth reached, too few samples, or a leaf already meeting its lower bound)."""
    lf, cnt = _leaf(region, class_planes, weights, use_planes, sse, count_planes, min_leaf, cw)
    splittable = not (depth >= max_depth or cnt < 2 * min_leaf
                      or (use_dominance and lf <= _lower(region, minority, has_minority)))
    return lf, splittable


@njit(cache=True, nogil=True, inline="always")
def _open_frame(c, region, k, depth, bound, lf, splittable, reg, kk, dep, best, bj, ubin, ub,
                pos, phi, kl, kl_hi, phase, n_rules, use_bound, stats):
    """Start frame ``c``: ``region`` split by at most ``k`` more rules, below ``bound``; its
    incumbent is the leaf (cost ``lf``, see :func:`_frame_leaf`)."""
    reg[c, :] = region
    kk[c] = k
    dep[c] = depth
    best[c] = lf
    bj[c] = -1
    ubin[c] = bound
    ub[c] = min(bound, lf) if use_bound else INF
    pos[c] = -1
    phi[c] = n_rules if splittable else 0  # 0: the frame returns its leaf
    kl[c] = 0
    kl_hi[c] = -1
    phase[c] = 0
    stats[3] += 1


@njit(cache=True, nogil=True)
def bnb_solve(region0, k0, depth0, ub0, lo, hi, order, gptr, gmem, sides, defmask, class_planes, weights,
              use_planes, sse, count_planes, minority, has_minority, min_leaf, max_depth,
              use_bound, use_dominance, work_limit, stats, out):
    """Best tree with at most ``k0 >= 2`` rules on ``region0`` whose root is one of
    ``order[lo:hi]`` (the leaf alone is the caller's business), better than ``ub0``.

    ``out`` receives ``[value, root rule, left budget, left value, right value]`` of the best
    tree found (``value = inf`` when none beats ``ub0``). ``stats``: [rule evaluations, roots
    examined, roots skipped by the bound, frames]. Returns False when ``work_limit`` rule
    evaluations were spent before the search finished (``out`` then holds the best so far).
    """
    n_words = region0.shape[0]
    n_classes = weights.shape[1]
    n_f = k0 + 1
    reg = np.zeros((n_f, n_words), np.uint64)
    preg = np.zeros((n_f, n_words), np.uint64)
    nreg = np.zeros((n_f, n_words), np.uint64)
    kk = np.zeros(n_f, np.int64)
    dep = np.zeros(n_f, np.int64)
    ub = np.zeros(n_f)
    ubin = np.zeros(n_f)
    best = np.zeros(n_f)
    bj = np.zeros(n_f, np.int64)
    bkl = np.zeros(n_f, np.int64)
    blv = np.zeros(n_f)
    brv = np.zeros(n_f)
    pos = np.zeros(n_f, np.int64)
    rj = np.zeros(n_f, np.int64)  # the rule (group member) of the current root
    phi = np.zeros(n_f, np.int64)  # end of the root range
    kl = np.zeros(n_f, np.int64)
    kl_hi = np.zeros(n_f, np.int64)
    phase = np.zeros(n_f, np.int64)
    lv = np.zeros(n_f)
    cp = np.zeros(n_f)
    cn = np.zeros(n_f)
    lbp = np.zeros(n_f)
    lbn = np.zeros(n_f)
    cw_r = np.zeros(n_classes)
    cw_p = np.zeros(n_classes)
    cw_n = np.zeros(n_classes)
    tmp2 = np.zeros(n_words, np.uint64)

    # frame 0: the caller's subproblem
    for w in range(n_words):
        reg[0, w] = region0[w]
    kk[0] = k0
    dep[0] = depth0
    ub[0] = ub0
    ubin[0] = ub0
    best[0] = INF
    bj[0] = -1
    pos[0] = lo - 1
    phi[0] = hi
    kl[0] = 0
    kl_hi[0] = -1  # forces the move to the next root
    phase[0] = 0
    if depth0 >= max_depth or _weighted_popcount(region0, count_planes) < 2 * min_leaf:
        phi[0] = lo  # the region cannot be split
    top = 0
    ret = INF
    spent = stats[0]
    completed = True
    stats[3] += 1
    while True:
        f = top
        if phase[f] == 0:
            # ---------------------------------------------- choose the next (root, left budget)
            kl[f] += 1
            if kl[f] > kl_hi[f]:
                # next root
                found = False
                while pos[f] + 1 < phi[f]:
                    if stats[0] - spent > work_limit:
                        completed = False
                        break
                    pos[f] += 1
                    j = _member(order[pos[f]], reg[f], gptr, gmem, defmask)
                    if j < 0:
                        continue
                    rj[f] = j
                    stats[0] += 1
                    for w in range(n_words):
                        preg[f, w] = reg[f, w] & sides[j, w]
                        nreg[f, w] = reg[f, w] & ~sides[j, w]
                    vp, np_ = _leaf(preg[f], class_planes, weights, use_planes, sse,
                                    count_planes, min_leaf, cw_p)
                    if np_ < min_leaf:
                        continue
                    vn, nn_ = _leaf(nreg[f], class_planes, weights, use_planes, sse,
                                    count_planes, min_leaf, cw_n)
                    if nn_ < min_leaf:
                        continue
                    stats[1] += 1
                    cp[f] = vp
                    cn[f] = vn
                    lbp[f] = _lower(preg[f], minority, has_minority)
                    lbn[f] = _lower(nreg[f], minority, has_minority)
                    lo_kl = 0
                    hi_kl = kk[f] - 1
                    if use_dominance:
                        # a child that cannot improve on its leaf gets no rules: giving them all
                        # to its sibling dominates every other share of the budget
                        full_depth = dep[f] + 1 >= max_depth
                        if vp <= lbp[f] or np_ < 2 * min_leaf or full_depth:
                            hi_kl = 0
                        elif vn <= lbn[f] or nn_ < 2 * min_leaf:
                            lo_kl = hi_kl
                    if use_bound:
                        # lower bound of this root over its budget splits
                        lb_root = INF
                        for t in range(lo_kl, hi_kl + 1):
                            a = vp if t == 0 else lbp[f]
                            b = vn if t == kk[f] - 1 else lbn[f]
                            if a + b < lb_root:
                                lb_root = a + b
                        if lb_root >= ub[f]:
                            stats[2] += 1
                            continue
                    kl[f] = lo_kl
                    kl_hi[f] = hi_kl
                    found = True
                    break
                if not found:
                    # ---------------------------------------------- frame done: return
                    ret = best[f] if best[f] < ubin[f] else INF
                    if f == 0 or not completed:
                        break
                    top -= 1
                    continue
            # evaluate (root pos[f], left budget kl[f])
            t = kl[f]
            kr = kk[f] - 1 - t
            lb_right = cn[f] if kr == 0 else lbn[f]
            lb_left = cp[f] if t == 0 else lbp[f]
            if use_bound and lb_left + lb_right >= ub[f]:
                continue
            if t == 0:
                ret = cp[f]
            elif t == 1:
                ret, _ = best1(preg[f], dep[f] + 1, 0, order.shape[0], order, gptr, gmem, sides, defmask,
                               class_planes, weights, use_planes, sse, count_planes, minority,
                               has_minority, min_leaf, max_depth, use_dominance, stats, cw_r,
                               cw_p, cw_n, tmp2)
            else:
                lf, splittable = _frame_leaf(preg[f], dep[f] + 1, class_planes, weights,
                                             use_planes, sse, count_planes, min_leaf, cw_r,
                                             max_depth, use_dominance, minority, has_minority)
                _open_frame(f + 1, preg[f], t, dep[f] + 1, ub[f] - lb_right if use_bound else INF,
                            lf, splittable, reg, kk, dep, best, bj, ubin, ub, pos, phi, kl,
                            kl_hi, phase, order.shape[0], use_bound, stats)
                phase[f] = 1
                top = f + 1
                continue
            phase[f] = 1
            # fall through to phase 1 with ret = left value
        if phase[f] == 1:
            vl = ret
            t = kl[f]
            kr = kk[f] - 1 - t
            phase[f] = 0
            lb_right = cn[f] if kr == 0 else lbn[f]
            if vl == INF or (use_bound and vl + lb_right >= ub[f]):
                continue
            lv[f] = vl
            if kr == 0:
                ret = cn[f]
            elif kr == 1:
                ret, _ = best1(nreg[f], dep[f] + 1, 0, order.shape[0], order, gptr, gmem, sides, defmask,
                               class_planes, weights, use_planes, sse, count_planes, minority,
                               has_minority, min_leaf, max_depth, use_dominance, stats, cw_r,
                               cw_p, cw_n, tmp2)
            else:
                lf, splittable = _frame_leaf(nreg[f], dep[f] + 1, class_planes, weights,
                                             use_planes, sse, count_planes, min_leaf, cw_r,
                                             max_depth, use_dominance, minority, has_minority)
                _open_frame(f + 1, nreg[f], kr, dep[f] + 1, ub[f] - vl if use_bound else INF,
                            lf, splittable, reg, kk, dep, best, bj, ubin, ub, pos, phi, kl,
                            kl_hi, phase, order.shape[0], use_bound, stats)
                phase[f] = 2
                top = f + 1
                continue
            phase[f] = 2
        if phase[f] == 2:
            vr = ret
            vl = lv[f]
            phase[f] = 0
            v = vl + vr
            if v < best[f]:
                best[f] = v
                bj[f] = rj[f]
                bkl[f] = kl[f]
                blv[f] = vl
                brv[f] = vr
                if use_bound and v < ub[f]:
                    ub[f] = v
    out[0] = best[0] if best[0] < ubin[0] else INF
    out[1] = bj[0]
    out[2] = bkl[0]
    out[3] = blv[0]
    out[4] = brv[0]
    return completed


@njit(cache=True, nogil=True)
def best1_top(region, depth, lo, hi, order, gptr, gmem, sides, defmask, class_planes, weights, use_planes,
              sse, count_planes, minority, has_minority, min_leaf, max_depth, use_dominance,
              stats, out):
    """:func:`best1` restricted to the roots ``order[lo:hi]`` with the leaf excluded (the
    caller's incumbent): ``out = [value, rule]``."""
    n_classes = weights.shape[1]
    cw_r = np.zeros(n_classes)
    cw_p = np.zeros(n_classes)
    cw_n = np.zeros(n_classes)
    tmp = np.zeros(region.shape[0], np.uint64)
    v, j = best1(region, depth, lo, hi, order, gptr, gmem, sides, defmask, class_planes, weights,
                 use_planes, sse, count_planes, minority, has_minority, min_leaf, max_depth,
                 use_dominance, stats, cw_r, cw_p, cw_n, tmp)
    out[0] = v if j >= 0 else INF
    out[1] = j


@njit(cache=True, nogil=True)
def split_costs(sides, full, class_planes, weights, use_planes, sse, count_planes, min_leaf, out):
    """``out[m]`` = cost of the one-rule tree on rule ``m`` (inf when a side is smaller than
    ``min_leaf``): the order in which roots are tried."""
    n_classes = weights.shape[1]
    cw_p = np.zeros(n_classes)
    cw_n = np.zeros(n_classes)
    tmp = np.zeros(full.shape[0], np.uint64)
    for m in range(sides.shape[0]):
        for w in range(full.shape[0]):
            tmp[w] = full[w] & sides[m, w]
        vp, a = _leaf(tmp, class_planes, weights, use_planes, sse, count_planes, min_leaf, cw_p)
        for w in range(full.shape[0]):
            tmp[w] = full[w] & ~sides[m, w]
        vn, b = _leaf(tmp, class_planes, weights, use_planes, sse, count_planes, min_leaf, cw_n)
        out[m] = vp + vn
