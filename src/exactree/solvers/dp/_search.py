"""MurTree's depth- and size-limited branch-and-bound search (paper Algorithms 1-2), in Numba.

The recursion of Eq. 1 runs on an explicit stack of frames (one per tree level) so the kernel
can be cached on disk. A frame walks its configurations (feature, left-child budget); each
child is first *resolved* without a frame where possible -- from the cache, by a lower bound
at or above its upper bound, as a leaf, or by the depth-2 solver -- and only otherwise gets a
frame of its own.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...progress import BEST, BOUND, DEADLINE, INCUMBENT, LOWER, NODES
from .._bits import count_andnot, count_bits, popcount, set_bits
from .._clock import now as _now
from ._cache import FULL, find, insert, lower_bound, store_lower_bound, store_optimal
from ._depth2 import F_ROOT, leaf_cost, solve_depth2
from ._lexicographic import perfect_is_final

INF = np.inf

# Switches (indices into `flags`).
(USE_DEPTH2, USE_SIMILARITY, USE_CACHE, USE_REFINED_LB, USE_DYNAMIC_ORDER, USE_UPPER_BOUNDS,
 USE_DEPTH2_INCUMBENT, USE_INCREMENTAL, USE_PERFECT_FINAL) = range(9)
# Statistics (indices into `stats`).
ST_FRAMES, ST_DEPTH2, ST_CACHE_HITS, ST_PRUNED, ST_LEAVES = range(5)
# Solved nodes kept per depth for the similarity bound.
ARCHIVE = 4
# Frames with more candidate roots than this try them all in order of their depth-2 cost.
SORT_ALL_ROOTS = 256
# Frame phases.
ADVANCE, FIRST_DONE, SECOND_DONE, WAIT_FIRST, WAIT_SECOND = range(5)
# Kernel outcome.
DONE, TIMED_OUT = 0, 1


@njit(cache=True)
def _class_weights(bits, class_bits, labels, weights, unit, idx, out):
    K = class_bits.shape[0]
    if unit:
        for k in range(K):
            out[k] = 0.0
            for w in range(bits.shape[0]):
                out[k] += popcount(bits[w] & class_bits[k, w])
    else:
        for k in range(K):
            out[k] = 0.0
        n = set_bits(bits, idx)
        for t in range(n):
            out[labels[idx[t]]] += weights[idx[t]]


@njit(cache=True, nogil=True)
def search(F, class_bits, labels, weights, unit, max_weight, row_ptr, row_feat, min_leaf,
           zob, flags, root_bits, path, prefix_len, depth, budget, root_ub, board,
           index, keys, meta, bounds, split, state, stats, ws_X, ws_pos,
           ws_bits, ws_C, ws_prev, ws_f, ws_i, arch_bits, arch_lb, arch_ok, roots, penalty,
           snap, width):
    """Solve the branch ``path[:prefix_len]`` (instances ``root_bits``) to depth ``depth`` with at
    most ``budget`` branching nodes, looking for a cost below ``root_ub``.

    Returns ``(outcome, cost, lower_bound, feature, left_budget, right_budget, size, keys, meta,
    bounds, split)``: ``cost`` is INF when no tree below ``root_ub`` exists (then ``lower_bound`` >=
    ``root_ub``); ``feature`` is the root split (-1 for a leaf). On TIMED_OUT the cost is the
    best complete tree found at the root and ``lower_bound`` a proven bound on the optimum.
    ``board`` (see :mod:`exactree.progress`): its deadline and its outside bound ``BOUND``
    (which tightens ``root_ub``) are read at the start and every 16 frame steps, and the
    frames so far, the root's best cost and its lower bound are written there.

    ``roots`` (bool, one per feature) restricts the root's split to the features marked (a
    parallel fit gives each worker a share); the root's depth-2 incumbent may still split
    elsewhere (any tree is a valid answer), and a restricted root's result is not cached.

    ``width`` below the number of features makes the search a heuristic: every frame tries
    only its ``width`` most promising splits (cheapest depth-2 tree first), so the result is the
    best tree of a smaller space (what anytime fits look at first); frames then store nothing
    (their results are not the branch's optimum), depth-2 solves still do.
    """
    m, W = F.shape
    K = class_bits.shape[0]
    P = prefix_len
    n = labels.shape[0]
    idx = np.empty(n, np.int64)
    tmp = np.empty(P + depth + 1, np.int64)
    cw = np.empty(K)
    d2 = np.empty((5, 4))
    # Frames, indexed by level below the prefix.
    Lmax = depth + 1
    fr_bits = np.empty((Lmax, W), np.uint64)
    left_bits = np.empty((Lmax, W), np.uint64)
    right_bits = np.empty((Lmax, W), np.uint64)
    fr_hash = np.zeros(Lmax, np.int64)
    fr_depth = np.zeros(Lmax, np.int64)
    fr_budget = np.zeros(Lmax, np.int64)
    fr_ub_in = np.zeros(Lmax)
    fr_ub = np.zeros(Lmax)
    fr_lb = np.zeros(Lmax)
    fr_leaf = np.zeros(Lmax)
    fr_best = np.zeros(Lmax)
    fr_bfeat = np.zeros(Lmax, np.int64)
    fr_bnl = np.zeros(Lmax, np.int64)  # children budgets of the incumbent
    fr_bnr = np.zeros(Lmax, np.int64)
    fr_bsize = np.zeros(Lmax, np.int64)
    fr_refined = np.zeros(Lmax)
    fr_pos = np.zeros(Lmax, np.int64)  # position of the current root feature in fr_order
    fr_order = np.empty((Lmax, m), np.int64)
    fr_n_order = np.zeros(Lmax, np.int64)
    fr_nl = np.zeros(Lmax, np.int64)
    fr_nl_lo = np.zeros(Lmax, np.int64)
    fr_phase = np.zeros(Lmax, np.int64)
    fr_first_left = np.zeros(Lmax, np.bool_)
    fr_lb1 = np.zeros(Lmax)  # lower bounds of the first/second child of the current config
    fr_lb2 = np.zeros(Lmax)
    fr_c1 = np.zeros(Lmax)
    fr_c1_lb = np.zeros(Lmax)
    fr_c1_size = np.zeros(Lmax, np.int64)
    fr_c2 = np.zeros(Lmax)
    fr_c2_lb = np.zeros(Lmax)
    fr_c2_size = np.zeros(Lmax, np.int64)

    root_ub = min(root_ub, board[BOUND])
    masked = False
    for f in range(m):
        masked |= not roots[f]
    h0 = 0
    for i in range(P):
        h0 ^= zob[path[i]]

    # ---- resolve the root without a frame if possible
    fr_bits[0, :] = root_bits
    res = _resolve(fr_bits[0], h0, path, P, depth, budget, root_ub, F, class_bits, labels,
                   weights, unit, max_weight, row_ptr, row_feat, min_leaf, flags, index, keys,
                   meta, bounds, split, state, stats, ws_X, ws_pos, ws_bits,
                   ws_C, ws_prev, ws_f, ws_i, arch_bits, arch_lb, arch_ok, idx, tmp, cw, d2,
                   penalty)
    index, keys, meta, bounds, split = res[4], res[5], res[6], res[7], res[8]
    if res[0] == 0:
        e = find(index, keys, meta, h0, path, P, tmp)
        feat, nl, nr = -1, 0, 0
        if e >= 0 and res[1] < INF:
            s = meta[e, 2] + budget
            feat, nl, nr = split[s, 0], split[s, 1], split[s, 2]
        return DONE, res[1], res[2], feat, nl, nr, res[3], index, keys, meta, bounds, split

    top = 0
    _push(0, fr_bits, h0, depth, budget, root_ub, res[2], class_bits, labels, weights, unit, idx,
          cw, fr_hash, fr_depth, fr_budget, fr_ub_in, fr_ub, fr_lb, fr_leaf, fr_best, fr_bfeat,
          fr_bnl, fr_bsize, fr_refined, fr_pos, fr_nl, fr_nl_lo, fr_phase, stats)
    _incumbent(0, fr_bits, fr_depth, fr_budget, fr_ub, fr_best, fr_bfeat, fr_bnl, fr_bnr,
               fr_bsize, fr_order, fr_n_order, labels, weights, unit, row_ptr, row_feat, K,
               min_leaf, flags, ws_X, ws_pos, ws_bits, ws_C, ws_prev, ws_f, ws_i, idx, d2, stats,
               penalty, width)
    if masked:
        j = 0
        for i in range(fr_n_order[0]):
            f = fr_order[0, i]
            if roots[f]:
                fr_order[0, j] = f
                j += 1
        fr_n_order[0] = j
    out_cost, out_lb, out_feat, out_nl, out_nr, out_size = INF, 0.0, -1, 0, 0, 0
    ticks = 0
    seen_depth2 = stats[ST_DEPTH2]
    timed_out = False
    while top >= 0:
        L = top
        ticks += 1
        # Look at the clock every 16 steps, and after every depth-2 solve (a step may hold one:
        # milliseconds on big data).
        if (ticks & 15) == 0 or stats[ST_DEPTH2] != seen_depth2:
            seen_depth2 = stats[ST_DEPTH2]
            if (ticks & 15) == 0:
                board[NODES] = stats[ST_FRAMES]
                board[BEST] = _snapshot(top, fr_best, fr_phase, fr_first_left, fr_order, fr_pos,
                                        fr_nl, fr_budget, fr_c1, fr_bfeat, fr_bnl, fr_bnr,
                                        left_bits, right_bits, class_bits, labels, weights, unit,
                                        idx, cw, penalty, snap)
                board[INCUMBENT] = board[BEST]
                board[LOWER] = fr_lb[0]
            if board[BOUND] < fr_ub[0]:
                fr_ub[0] = board[BOUND]
            if (board[DEADLINE] < INF and _now() > board[DEADLINE]) or state[FULL]:
                timed_out = True
                break
        d = fr_depth[L]
        if fr_phase[L] == ADVANCE:
            n_order = fr_n_order[L]
            if fr_best[L] <= fr_lb[L] or (L == 0 and flags[USE_PERFECT_FINAL]
                                          and perfect_is_final(fr_best[0], penalty, d)):
                # The incumbent meets the lower bound: nothing can beat it. A deep root
                # incumbent without errors ends the search too (see _lexicographic).
                fr_pos[L] = n_order
            # next configuration: smaller left budget, else the next usable feature
            if fr_pos[L] < n_order and fr_nl[L] > fr_nl_lo[L]:
                fr_nl[L] -= 1
            else:
                pos = fr_pos[L] + 1
                while pos < n_order:
                    f = fr_order[L, pos]
                    cnt_l = 0
                    cnt_r = 0
                    for w in range(W):
                        a = fr_bits[L, w] & F[f, w]
                        b = fr_bits[L, w] & ~F[f, w]
                        left_bits[L, w] = a
                        right_bits[L, w] = b
                        cnt_l += popcount(a)
                        cnt_r += popcount(b)
                    if cnt_l >= min_leaf and cnt_r >= min_leaf:
                        break
                    pos += 1
                fr_pos[L] = pos
                cmax = (1 << (d - 1)) - 1
                nb = fr_budget[L] - 1
                fr_nl[L] = min(nb, cmax)
                fr_nl_lo[L] = max(0, nb - cmax)
            if fr_pos[L] >= n_order:
                # ---- finish this frame
                if fr_best[L] < fr_ub_in[L]:
                    rc, rlb, rs = fr_best[L], fr_best[L], fr_bsize[L]
                else:
                    rlb = min(fr_leaf[L], fr_refined[L]) if flags[USE_REFINED_LB] else 0.0
                    rlb = max(max(rlb, fr_ub_in[L]), fr_lb[L])
                    rc, rs = INF, -1
                if (L > 0 or not masked) and width >= m:  # not the branch's optimum otherwise
                    e = _entry(fr_hash[L], path, P + L, d, index, keys, meta, bounds, split,
                               state, flags, tmp)
                    index, keys, meta, bounds, split = e[1], e[2], e[3], e[4], e[5]
                    ent = e[0]
                    if rc < INF:
                        store_optimal(meta, bounds, split, ent, fr_budget[L], rc, fr_bfeat[L],
                                      fr_bnl[L], fr_bnr[L], rs)
                    else:
                        store_lower_bound(meta, bounds, ent, fr_budget[L], rlb)
                    _archive(fr_bits[L], d, ent, meta, bounds, arch_bits, arch_lb, arch_ok,
                             flags)
                top -= 1
                if top < 0:
                    out_cost, out_lb, out_size = rc, rlb, rs
                    out_feat, out_nl = fr_bfeat[L], fr_bnl[L]
                    out_nr = fr_bnr[L]
                    break
                if fr_phase[top] == WAIT_FIRST:
                    fr_c1[top], fr_c1_lb[top], fr_c1_size[top] = rc, rlb, rs
                    fr_phase[top] = FIRST_DONE
                else:
                    fr_c2[top], fr_c2_lb[top], fr_c2_size[top] = rc, rlb, rs
                    fr_phase[top] = SECOND_DONE
                continue
            # ---- evaluate a configuration: bounds first
            f = fr_order[L, fr_pos[L]]
            nl = fr_nl[L]
            nr = fr_budget[L] - 1 - nl
            hl = fr_hash[L] ^ zob[2 * f + 1]
            hr = fr_hash[L] ^ zob[2 * f]
            path[P + L] = 2 * f + 1
            lbl = _bound(left_bits[L], hl, path, P + L + 1, d - 1, nl, index, keys, meta, bounds,
                         flags, arch_bits, arch_lb, arch_ok, max_weight, min_leaf, tmp)
            path[P + L] = 2 * f
            lbr = _bound(right_bits[L], hr, path, P + L + 1, d - 1, nr, index, keys, meta, bounds,
                         flags, arch_bits, arch_lb, arch_ok, max_weight, min_leaf, tmp)
            if lbl + lbr + penalty >= fr_ub[L]:
                stats[ST_PRUNED] += 1
                fr_refined[L] = min(fr_refined[L], lbl + lbr + penalty)
                continue
            fr_first_left[L] = (lbl <= lbr) or not flags[USE_DYNAMIC_ORDER]
            if fr_first_left[L]:
                fr_lb1[L], fr_lb2[L] = lbl, lbr
            else:
                fr_lb1[L], fr_lb2[L] = lbr, lbl
            child_is_left = fr_first_left[L]
            ub_child = fr_ub[L] - fr_lb2[L] - penalty if flags[USE_UPPER_BOUNDS] else INF
            nxt = FIRST_DONE
        elif fr_phase[L] == FIRST_DONE:
            if fr_c1[L] == INF:
                fr_refined[L] = min(fr_refined[L], fr_c1_lb[L] + fr_lb2[L] + penalty)
                fr_phase[L] = ADVANCE
                continue
            child_is_left = not fr_first_left[L]
            ub_child = fr_ub[L] - fr_c1[L] - penalty if flags[USE_UPPER_BOUNDS] else INF
            nxt = SECOND_DONE
        elif fr_phase[L] == SECOND_DONE:
            total = fr_c1[L] + fr_c2[L] + penalty
            if fr_c2[L] < INF and total < fr_ub[L]:
                fr_best[L] = total
                fr_ub[L] = total
                fr_bfeat[L] = fr_order[L, fr_pos[L]]
                fr_bnl[L] = fr_nl[L]
                fr_bnr[L] = fr_budget[L] - 1 - fr_nl[L]
                fr_bsize[L] = 1 + fr_c1_size[L] + fr_c2_size[L]
                fr_refined[L] = min(fr_refined[L], total)
            else:
                second = fr_c2[L] if fr_c2[L] < INF else fr_c2_lb[L]
                fr_refined[L] = min(fr_refined[L], fr_c1[L] + second + penalty)
            fr_phase[L] = ADVANCE
            continue
        else:
            continue  # waiting: cannot happen for the top frame
        # ---- resolve one child of the current configuration (first or second)
        f = fr_order[L, fr_pos[L]]
        if child_is_left:
            lit, cb, cbud = 2 * f + 1, left_bits[L], fr_nl[L]
        else:
            lit, cb, cbud = 2 * f, right_bits[L], fr_budget[L] - 1 - fr_nl[L]
        path[P + L] = lit
        hc = fr_hash[L] ^ zob[lit]
        res = _resolve(cb, hc, path, P + L + 1, d - 1, cbud, ub_child, F, class_bits, labels,
                       weights, unit, max_weight, row_ptr, row_feat, min_leaf, flags, index, keys,
                       meta, bounds, split, state, stats, ws_X, ws_pos, ws_bits, ws_C, ws_prev,
                       ws_f, ws_i, arch_bits, arch_lb, arch_ok, idx, tmp, cw, d2, penalty)
        index, keys, meta, bounds, split = res[4], res[5], res[6], res[7], res[8]
        if res[0] == 0:
            if nxt == FIRST_DONE:
                fr_c1[L], fr_c1_lb[L], fr_c1_size[L] = res[1], res[2], res[3]
            else:
                fr_c2[L], fr_c2_lb[L], fr_c2_size[L] = res[1], res[2], res[3]
            fr_phase[L] = nxt
        else:
            fr_phase[L] = WAIT_FIRST if nxt == FIRST_DONE else WAIT_SECOND
            fr_bits[L + 1, :] = cb
            _push(L + 1, fr_bits, hc, d - 1, cbud, ub_child, res[2], class_bits, labels, weights,
                  unit, idx, cw, fr_hash, fr_depth, fr_budget, fr_ub_in, fr_ub, fr_lb, fr_leaf,
                  fr_best, fr_bfeat, fr_bnl, fr_bsize, fr_refined, fr_pos, fr_nl, fr_nl_lo,
                  fr_phase, stats)
            _incumbent(L + 1, fr_bits, fr_depth, fr_budget, fr_ub, fr_best, fr_bfeat, fr_bnl,
                       fr_bnr, fr_bsize, fr_order, fr_n_order, labels, weights, unit,
                       row_ptr, row_feat, K, min_leaf, flags, ws_X, ws_pos, ws_bits, ws_C, ws_prev,
                       ws_f, ws_i, idx, d2, stats, penalty, width)
            top = L + 1
    if timed_out:
        # A bound every unfinished root configuration respects, and the best complete tree:
        # the frames' incumbents combined along the stack (``snap``).
        lb = min(fr_refined[0], fr_best[0])
        lb = min(lb, _remaining_bound(fr_bits[0], fr_hash[0], path, P, depth, fr_budget[0],
                                      fr_order[0, max(fr_pos[0], 0):fr_n_order[0]], F, zob,
                                      min_leaf, index, keys, meta, bounds, flags, arch_bits,
                                      arch_lb, arch_ok, max_weight, tmp, left_bits[0],
                                      right_bits[0], penalty))
        lb = max(lb, fr_lb[0])
        best = _snapshot(top, fr_best, fr_phase, fr_first_left, fr_order, fr_pos, fr_nl,
                         fr_budget, fr_c1, fr_bfeat, fr_bnl, fr_bnr, left_bits, right_bits,
                         class_bits, labels, weights, unit, idx, cw, penalty, snap)
        return (TIMED_OUT, best, min(lb, best), fr_bfeat[0], fr_bnl[0], fr_bnr[0],
                fr_bsize[0], index, keys, meta, bounds, split)
    return DONE, out_cost, out_lb, out_feat, out_nl, out_nr, out_size, index, keys, meta, bounds, split


@njit(cache=True)
def _push(L, fr_bits, h, d, budget, ub, lb, class_bits, labels, weights, unit, idx, cw, fr_hash,
          fr_depth, fr_budget, fr_ub_in, fr_ub, fr_lb, fr_leaf, fr_best, fr_bfeat, fr_bnl,
          fr_bsize, fr_refined, fr_pos, fr_nl, fr_nl_lo, fr_phase, stats):
    stats[ST_FRAMES] += 1
    _class_weights(fr_bits[L], class_bits, labels, weights, unit, idx, cw)
    leaf = leaf_cost(cw)
    fr_hash[L] = h
    fr_depth[L] = d
    fr_budget[L] = budget
    fr_ub_in[L] = ub
    fr_leaf[L] = leaf
    fr_lb[L] = lb
    if leaf < ub:  # the leaf is the first incumbent; look for strictly better trees
        fr_best[L] = leaf
        fr_ub[L] = leaf
    else:
        fr_best[L] = INF
        fr_ub[L] = ub
    fr_bfeat[L] = -1
    fr_bnl[L] = 0
    fr_bsize[L] = 0
    fr_refined[L] = INF
    fr_pos[L] = -1
    fr_nl[L] = 0
    fr_nl_lo[L] = 0
    fr_phase[L] = ADVANCE


@njit(cache=True)
def _incumbent(L, fr_bits, fr_depth, fr_budget, fr_ub, fr_best, fr_bfeat, fr_bnl, fr_bnr,
               fr_bsize, fr_order, fr_n_order, labels, weights, unit, row_ptr, row_feat, K,
               min_leaf, flags, ws_X, ws_pos, ws_bits, ws_C, ws_prev, ws_f, ws_i, idx, d2, stats,
               penalty, width):
    """Start a frame from the optimal depth-2 tree of its data when that beats the leaf, and
    list its root features: one per distinct split of the frame's data, the most promising
    (cheapest depth-2 tree with that root) first. A tight upper bound early prunes more
    children (exactree's addition). Without it, every feature in index order."""
    m = fr_order.shape[1]
    if not (flags[USE_DEPTH2_INCUMBENT] and flags[USE_DEPTH2]) or fr_budget[L] < 1:
        fr_order[L, :] = np.arange(m)
        fr_n_order[L] = m
        return
    b = min(fr_budget[L], 3)
    n_node = set_bits(fr_bits[L], idx)
    solve_depth2(idx, n_node, labels, weights, unit, flags[USE_INCREMENTAL], row_ptr, row_feat,
                 K, min_leaf, b, ws_X, ws_pos, ws_bits, ws_C, ws_prev, ws_f, ws_i, d2, penalty)
    stats[ST_DEPTH2] += 1
    # The most promising root first (it often completes a tree good enough to prune the rest),
    # then the others in index order, which keeps consecutive children similar for the
    # similarity bound: on the binary benchmarks this beat sorting all roots by cost by ~10%.
    # With hundreds of candidate roots (exact thresholds of numeric columns) a good root comes
    # too late in index order, so there all are sorted (wine, depth 3: 13x faster).
    root_cost = ws_f[F_ROOT, :m]
    n_order = 0
    for f in range(m):
        n_order += root_cost[f] < INF
    if n_order > SORT_ALL_ROOTS or n_order > width:
        fr_order[L, :n_order] = np.argsort(root_cost, kind="mergesort")[:n_order]  # stable
        n_order = min(n_order, width)
    elif n_order:
        first = np.argmin(root_cost)
        fr_order[L, 0] = first
        j = 1
        for f in range(m):
            if root_cost[f] < INF and f != first:
                fr_order[L, j] = f
                j += 1
    fr_n_order[L] = n_order
    size = 1 + (d2[3, b] >= 0) + (d2[4, b] >= 0)
    if d2[0, b] + penalty * size < fr_ub[L] and d2[1, b] >= 0:
        fr_best[L] = d2[0, b] + penalty * size
        fr_ub[L] = fr_best[L]
        fr_bfeat[L] = np.int64(d2[1, b])
        fr_bnl[L] = np.int64(d2[2, b])
        fr_bnr[L] = size - 1 - fr_bnl[L]
        fr_bsize[L] = size


@njit(cache=True)
def _entry(h, path, plen, d, index, keys, meta, bounds, split, state, flags, tmp):
    if not flags[USE_CACHE]:
        return -1, index, keys, meta, bounds, split
    e = find(index, keys, meta, h, path, plen, tmp)
    if e >= 0:
        return e, index, keys, meta, bounds, split
    return insert(index, keys, meta, bounds, split, state, h, path, plen, 1 << d, tmp)


@njit(cache=True)
def _similarity(bits, d, budget, arch_bits, arch_lb, arch_ok, max_weight, min_leaf):
    """Lower bound from the last solved nodes of the same depth (MurTree section 4.5): removing
    instances lowers the optimal cost by at most their weight. With a minimum leaf size the
    new node's optimal tree may be infeasible on the old node unless the new node is a subset
    of it, so only such archived nodes count then."""
    lb = 0.0
    for slot in range(ARCHIVE * d, ARCHIVE * (d + 1)):  # the last solved nodes of this depth
        if arch_ok[slot] and (min_leaf <= 1 or count_andnot(bits, arch_bits[slot]) == 0):
            removed = count_andnot(arch_bits[slot], bits)
            lb = max(lb, arch_lb[slot, budget] - removed * max_weight)
    return lb


@njit(cache=True)
def _archive(bits, d, e, meta, bounds, arch_bits, arch_lb, arch_ok, flags):
    if not flags[USE_SIMILARITY] or e < 0:
        return
    n_slots = 1 << d
    # The last ARCHIVE nodes per depth, newest first: older ones move down a slot.
    slot = ARCHIVE * d
    for j in range(slot + ARCHIVE - 1, slot, -1):
        arch_bits[j, :] = arch_bits[j - 1]
        arch_lb[j, :] = arch_lb[j - 1]
        arch_ok[j] = arch_ok[j - 1]
    arch_bits[slot, :] = bits
    for b in range(n_slots):
        arch_lb[slot, b] = lower_bound(meta, bounds, e, b, n_slots)
    arch_ok[slot] = True


@njit(cache=True)
def _bound(bits, h, path, plen, d, budget, index, keys, meta, bounds, flags, arch_bits, arch_lb,
           arch_ok, max_weight, min_leaf, tmp):
    lb = 0.0
    if flags[USE_CACHE]:
        e = find(index, keys, meta, h, path, plen, tmp)
        lb = lower_bound(meta, bounds, e, budget, 1 << d)
    if flags[USE_SIMILARITY] and d > 0:
        lb = max(lb, _similarity(bits, d, budget, arch_bits, arch_lb, arch_ok, max_weight,
                                     min_leaf))
    return lb


@njit(cache=True)
def _resolve(bits, h, path, plen, d, budget, ub, F, class_bits, labels, weights, unit, max_weight,
             row_ptr, row_feat, min_leaf, flags, index, keys, meta, bounds, split, state, stats,
             ws_X, ws_pos, ws_bits, ws_C, ws_prev, ws_f, ws_i, arch_bits, arch_lb, arch_ok,
             idx, tmp, cw, d2, penalty):
    """Settle a node without a frame when possible.

    Returns ``(needs_frame, cost, lb, size, index, keys, meta, bounds, split)``; cost is INF when no
    tree below ``ub`` exists. When a frame is needed, ``lb`` is the node's lower bound.
    """
    e = -1
    n_slots = 1 << d
    if flags[USE_CACHE]:
        e = find(index, keys, meta, h, path, plen, tmp)
        if e >= 0:
            s = meta[e, 2] + budget
            c = bounds[s, 1]
            if c < INF:
                stats[ST_CACHE_HITS] += 1
                if c < ub:
                    return 0, c, c, split[s, 3], index, keys, meta, bounds, split
                return 0, INF, c, -1, index, keys, meta, bounds, split
    lb = lower_bound(meta, bounds, e, budget, n_slots)
    if flags[USE_SIMILARITY] and d > 0:
        lb = max(lb, _similarity(bits, d, budget, arch_bits, arch_lb, arch_ok, max_weight,
                                     min_leaf))
    if lb >= ub:
        stats[ST_PRUNED] += 1
        return 0, INF, lb, -1, index, keys, meta, bounds, split
    if d == 0 or budget == 0:
        stats[ST_LEAVES] += 1
        _class_weights(bits, class_bits, labels, weights, unit, idx, cw)
        c = leaf_cost(cw)
        if c < ub:
            return 0, c, c, 0, index, keys, meta, bounds, split
        return 0, INF, c, -1, index, keys, meta, bounds, split
    if d <= 2 and flags[USE_DEPTH2]:
        stats[ST_DEPTH2] += 1
        n_node = set_bits(bits, idx)
        solve_depth2(idx, n_node, labels, weights, unit, flags[USE_INCREMENTAL], row_ptr,
                     row_feat, class_bits.shape[0], min_leaf, n_slots - 1, ws_X, ws_pos, ws_bits,
                     ws_C, ws_prev, ws_f, ws_i, d2, penalty)
        if e < 0 and flags[USE_CACHE]:
            r = insert(index, keys, meta, bounds, split, state, h, path, plen, n_slots, tmp)
            e, index, keys, meta, bounds, split = r
        if e >= 0:
            s = meta[e, 2]
            for b in range(n_slots):
                size = 0 if d2[1, b] < 0 else 1 + (d2[3, b] >= 0) + (d2[4, b] >= 0)
                bounds[s + b, 0] = d2[0, b] + penalty * size
                bounds[s + b, 1] = d2[0, b] + penalty * size
                split[s + b, 0] = np.int64(d2[1, b])
                split[s + b, 1] = np.int64(d2[2, b])
                split[s + b, 2] = max(size - 1 - np.int64(d2[2, b]), 0)
                split[s + b, 3] = size
            _archive(bits, d, e, meta, bounds, arch_bits, arch_lb, arch_ok, flags)
        size = 0 if d2[1, budget] < 0 else 1 + (d2[3, budget] >= 0) + (d2[4, budget] >= 0)
        c = d2[0, budget] + penalty * size
        if c < ub:
            return 0, c, c, size, index, keys, meta, bounds, split
        return 0, INF, c, -1, index, keys, meta, bounds, split
    return 1, INF, lb, -1, index, keys, meta, bounds, split


@njit(cache=True)
def _remaining_bound(bits, h, path, P, d, budget, features, F, zob, min_leaf, index, keys, meta,
                     bounds, flags, arch_bits, arch_lb, arch_ok, max_weight, tmp, lb_buf, rb_buf,
                     penalty):
    """Smallest child-bound sum over the root configurations on ``features`` (those not yet
    done, the current one included)."""
    W = F.shape[1]
    best = INF
    cmax = (1 << (d - 1)) - 1
    for f in features:
        for w in range(W):
            lb_buf[w] = bits[w] & F[f, w]
            rb_buf[w] = bits[w] & ~F[f, w]
        if count_bits(lb_buf) < min_leaf or count_bits(rb_buf) < min_leaf:
            continue
        for nl in range(max(0, budget - 1 - cmax), min(budget - 1, cmax) + 1):
            path[P] = 2 * f + 1
            a = _bound(lb_buf, h ^ zob[2 * f + 1], path, P + 1, d - 1, nl, index, keys, meta,
                       bounds, flags, arch_bits, arch_lb, arch_ok, max_weight, min_leaf, tmp)
            path[P] = 2 * f
            b = _bound(rb_buf, h ^ zob[2 * f], path, P + 1, d - 1, budget - 1 - nl, index, keys,
                       meta, bounds, flags, arch_bits, arch_lb, arch_ok, max_weight, min_leaf, tmp)
            best = min(best, a + b + penalty)
    return best


@njit(cache=True)
def _snapshot(top, fr_best, fr_phase, fr_first_left, fr_order, fr_pos, fr_nl, fr_budget, fr_c1,
              fr_bfeat, fr_bnl, fr_bnr, left_bits, right_bits, class_bits, labels, weights, unit,
              idx, cw, penalty, snap):
    """The best complete tree the frames on the stack hold (MurTree's global incumbent): a
    frame waiting on a child completes its current configuration with that child's incumbent
    and, for its other child, the solved subtree or else a leaf. Returns its cost and writes
    its description to ``snap``: ``snap[0, 0] = k``, the level whose own incumbent ends the
    path; row ``1 + j`` for ``j < k``: the split feature of level ``j``, whether the path goes
    to its left (true) child, the other child's budget and whether that child was solved (its
    optimum is cached; else it counts as a leaf); row ``1 + k``: that frame's incumbent
    (feature, left and right budgets). The cost through a frame only falls as its children
    are solved, so the snapshot at any moment is the best seen."""
    val = fr_best[top]
    k = top
    for j in range(top - 1, -1, -1):
        first_waits = fr_phase[j] == WAIT_FIRST
        path_left = fr_first_left[j] == first_waits
        if first_waits:  # the other child is unsolved: a leaf
            _class_weights(right_bits[j] if path_left else left_bits[j], class_bits, labels,
                           weights, unit, idx, cw)
            other = leaf_cost(cw)
        else:
            other = fr_c1[j]
        through = val + other + penalty
        if through < fr_best[j]:
            val = through
        else:
            val = fr_best[j]
            k = j
    snap[0, 0] = k
    for j in range(k):
        first_waits = fr_phase[j] == WAIT_FIRST
        path_left = fr_first_left[j] == first_waits
        snap[1 + j, 0] = fr_order[j, fr_pos[j]]
        snap[1 + j, 1] = path_left
        snap[1 + j, 2] = fr_budget[j] - 1 - fr_nl[j] if path_left else fr_nl[j]
        snap[1 + j, 3] = not first_waits
    snap[1 + k, 0] = fr_bfeat[k]
    snap[1 + k, 1] = fr_bnl[k]
    snap[1 + k, 2] = fr_bnr[k]
    return val
