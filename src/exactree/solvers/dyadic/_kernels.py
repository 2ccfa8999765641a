"""Numba kernel of the memoised recursive dyadic search (Hush & Porter, sections 3 and 6).

The recursion of Procedure 1 runs on an explicit stack (Numba cannot cache recursive functions).
Every frame is one dyadic rectangle; its samples are a contiguous segment of a permutation array
that the frame partitions in place for each candidate split, so the children work on
sub-segments and the parent's segment still holds the same set when they return.

Rectangles are keyed by the paper's *endpoint index sum* vector ``(s_1, ..., s_d)``,
``s_i = p_i + q_i``, packed into one int64 (``k_i + 1`` bits per coordinate), and stored in an
open-addressing hash table indexed with the universal hash ``sum_i u_i s_i mod P`` (``P``
prime). The table grows (new prime, new ``u``) when it is half full, so its size follows the
rectangles actually visited rather than the ``n * prod(k_i + 1)`` bound.

The search reads the clock (``board[DEADLINE]``, see :mod:`exactree.progress`) every
:data:`CHECK_WORK` units of work (a frame, plus a unit per sample summed or partitioned). Past
the deadline it *stops*: every open frame keeps the best of the candidates it has finished (or
its leaf), a child still needed becomes a leaf, and the frames return as usual. The root then
holds a complete tree of ``T_k`` (the best found), whose stored values are its true error and
leaves, but not a proven optimum.

:func:`group_rows` and :func:`grid_loss` group equal rows by hashing (one pass, no sort): the
automatic choice of ``k`` compares hundreds of grids, where ``np.unique(axis=0)`` took a
large share of a second per grid at 100,000 rows.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...progress import DEADLINE, NODES
from .._clock import now as _now

# Frame stages.
_NEW, _NEXT, _LEFT_DONE, _RIGHT_DONE, _FINISH = 0, 1, 2, 3, 4
#: Units of work (frames, samples summed or partitioned) between two looks at the clock: a
#: unit costs a few nanoseconds, a look some tens.
CHECK_WORK = 1 << 15
#: Rows between two looks at the clock in :func:`group_rows`.
_GROUP_CHECK = 1 << 16


@njit(cache=True, nogil=True, inline="always")
def _row_hash(A: np.ndarray, r: int, drop: np.ndarray) -> int:
    h = np.int64(-3750763034362895579)  # FNV-1a offset basis, as int64
    for j in range(A.shape[1]):
        h = (h ^ (A[r, j] >> drop[j])) * np.int64(1099511628211)
        h ^= (h >> 29) & np.int64(0x7FFFFFFFF)
    return h


@njit(cache=True, nogil=True)
def group_rows(A: np.ndarray, drop: np.ndarray, inv: np.ndarray, deadline: float) -> int:
    """Number the distinct rows of ``A >> drop`` (per column) in order of first occurrence:
    ``inv[r]`` is row ``r``'s group. Returns the number of groups, or -1 once ``deadline``
    (a :func:`.._clock.now` value; inf: none) has passed (``inv`` then partly filled)."""
    n, d = A.shape
    P = 2
    while P < 2 * n:
        P <<= 1
    slot_row = np.full(P, -1, np.int64)
    g = 0
    for r in range(n):
        if r % _GROUP_CHECK == _GROUP_CHECK - 1 and deadline < np.inf and _now() > deadline:
            return -1
        h = _row_hash(A, r, drop) & (P - 1)
        while True:
            s = slot_row[h]
            if s < 0:
                slot_row[h] = r
                inv[r] = g
                g += 1
                break
            same = True
            for j in range(d):
                if (A[s, j] >> drop[j]) != (A[r, j] >> drop[j]):
                    same = False
                    break
            if same:
                inv[r] = inv[s]
                break
            h = (h + 1) & (P - 1)
    return g


@njit(cache=True, nogil=True)
def grid_loss(fine: np.ndarray, drop: np.ndarray, W: np.ndarray, deadline: float) -> float:
    """Least error of the grid whose cells are ``fine >> drop`` (per column): the sum over
    occupied cells of the cell's smallest summed loss (rows of ``W``). NaN once ``deadline``
    has passed."""
    n = fine.shape[0]
    K = W.shape[1]
    inv = np.empty(n, np.int64)
    g = group_rows(fine, drop, inv, deadline)
    if g < 0:
        return np.nan
    sums = np.zeros((g, K))
    for r in range(n):
        for c in range(K):
            sums[inv[r], c] += W[r, c]
    total = 0.0
    for q in range(g):
        m = sums[q, 0]
        for c in range(1, K):
            m = min(m, sums[q, c])
        total += m
    return total


@njit(cache=True)
def _is_prime(m: int) -> bool:
    if m < 2:
        return False
    if m % 2 == 0:
        return m == 2
    f = 3
    while f * f <= m:
        if m % f == 0:
            return False
        f += 2
    return True


@njit(cache=True)
def next_prime(m: int) -> int:
    """Smallest prime strictly larger than ``m``."""
    c = m + 1
    while not _is_prime(c):
        c += 1
    return c


@njit(cache=True)
def rect_hash(key: int, shift: np.ndarray, mask: np.ndarray, u: np.ndarray, P: int) -> int:
    """Universal hash ``sum_i u_i s_i mod P`` of the packed endpoint-index-sum vector ``key``."""
    h = 0
    for i in range(shift.shape[0]):
        s = (key >> shift[i]) & mask[i]
        h = (h + u[i] * s) % P
    return h


@njit(cache=True)
def _probe(keys: np.ndarray, P: int, key: int, h: int) -> int:
    """Slot of ``key`` (hash ``h``) in the linear-probing table, -1 when absent."""
    while keys[h] >= 0:
        if keys[h] == key:
            return h
        h += 1
        if h == P:
            h = 0
    return -1


@njit(cache=True)
def _better(e1: float, l1: int, e2: float, l2: int, lam: float, tol: float,
            more_leaves: bool) -> bool:
    """Is ``(e1, l1)`` strictly preferred to ``(e2, l2)`` at penalty ``lam``?

    Risks within ``tol`` are ties, broken towards more leaves (the paper's Definition 2) or,
    in the ``lam = 0`` limit mode, towards fewer leaves.
    """
    r1 = e1 + lam * l1
    r2 = e2 + lam * l2
    if r1 < r2 - tol:
        return True
    if r1 > r2 + tol:
        return False
    if more_leaves:
        return l1 > l2
    return l1 < l2


@njit(cache=True, nogil=True)
def solve_dyadic(cells, W, kvec, lam, tol, more_leaves, prune, init_cap, seed, board):
    """Minimise ``error + lam * leaves`` over the dyadic class ``T_k``.

    Parameters
    ----------
    cells : int64 (n, d)
        Finest-grid cell of every (compressed) sample per coordinate, in ``0 .. 2**k_i - 1``.
    W : float64 (n, K)
        Loss of giving each sample each label (shifted so every row has minimum 0).
    kvec : int64 (d,)
        Splits allowed per coordinate (all >= 1).
    lam, tol : float
        Penalty per leaf (same units as ``W``) and the tie tolerance.
    more_leaves : bool
        Tie-break towards more leaves (Definition 2); ``False`` with ``lam = 0`` gives the
        lexicographic (error, leaves) minimum.
    prune : bool
        Lemma 1 look-ahead pruning (off: the DP-equivalent full memoised recursion).
    init_cap, seed : int
        Initial table size hint and seed of the hash multipliers.
    board : float64 (BOARD_SIZE,)
        The progress board (:mod:`exactree.progress`): its ``DEADLINE`` is read every
        :data:`CHECK_WORK` units of work (the search stops past it, see the module docstring),
        ``NODES`` gets the rectangles stored so far.

    Returns
    -------
    keys, t_err, t_leaves, t_split, t_label : table arrays (key -1 = empty slot)
    u, P : the hash multipliers and table size, for look-ups outside the kernel
    visited : number of rectangles visited (= stored)
    heur : largest local break-point penalty below ``lam`` (the search heuristic), -1 if none
    root_err, root_leaves : the optimal solution value (the best found when stopped)
    stopped : whether the deadline stopped the search (the tree is then not proven optimal)
    """
    n, d = cells.shape
    K = W.shape[1]
    shift = np.zeros(d, np.int64)
    mask = np.zeros(d, np.int64)
    bits = 0
    for i in range(d):
        shift[i] = bits
        mask[i] = (np.int64(1) << (kvec[i] + 1)) - 1
        bits += kvec[i] + 1
    root_key = np.int64(0)
    for i in range(d):
        root_key |= (np.int64(1) << kvec[i]) << shift[i]

    np.random.seed(seed)
    P = next_prime(max(init_cap, 17))
    u = np.empty(d, np.int64)
    for i in range(d):
        u[i] = np.random.randint(1, P)
    kmax = 1
    for i in range(d):
        kmax = max(kmax, kvec[i])
    # du[i, b] = u_i * 2**b mod P: the hash moves by +-du when s_i moves by +-2**b (a split),
    # so children's hashes cost one add and a conditional subtract, no modulo.
    du = np.zeros((d, kmax), np.int64)
    for i in range(d):
        for b in range(kmax):
            du[i, b] = ((np.int64(1) << b) % P) * u[i] % P
    keys = np.full(P, -1, np.int64)
    t_err = np.zeros(P, np.float64)
    t_leaves = np.zeros(P, np.int64)
    t_split = np.zeros(P, np.int64)
    t_label = np.zeros(P, np.int64)
    count = 0

    depth_cap = 1
    for i in range(d):
        depth_cap += kvec[i]
    f_lo = np.zeros(depth_cap, np.int64)
    f_hi = np.zeros(depth_cap, np.int64)
    f_mid = np.zeros(depth_cap, np.int64)
    f_key = np.zeros(depth_cap, np.int64)
    f_hash = np.zeros(depth_cap, np.int64)
    f_lev = np.zeros((depth_cap, d), np.int64)
    f_stage = np.zeros(depth_cap, np.int64)
    f_ci = np.zeros(depth_cap, np.int64)
    f_label = np.zeros(depth_cap, np.int64)
    f_pruned = np.zeros(depth_cap, np.bool_)
    f_be = np.zeros(depth_cap, np.float64)
    f_bl = np.zeros(depth_cap, np.int64)
    f_bs = np.zeros(depth_cap, np.int64)
    f_le = np.zeros(depth_cap, np.float64)
    f_ll = np.zeros(depth_cap, np.int64)
    f_ce = np.zeros((depth_cap, d), np.float64)
    f_cl = np.zeros((depth_cap, d), np.int64)

    order = np.arange(n)
    tot = np.zeros(K, np.float64)
    heur = -1.0
    ret_e = 0.0
    ret_l = 0
    ckey = np.int64(0)
    chash = 0
    lo_c = 0
    hi_c = 0
    i = 0

    stopped = False
    work = CHECK_WORK  # look at the clock before the first frame
    top = 0
    f_lo[0] = 0
    f_hi[0] = n
    f_key[0] = root_key
    f_hash[0] = rect_hash(root_key, shift, mask, u, P)
    f_stage[0] = _NEW
    while top >= 0:
        work += 1
        if work >= CHECK_WORK:
            work = 0
            board[NODES] = count
            if not stopped and board[DEADLINE] < np.inf and _now() > board[DEADLINE]:
                stopped = True  # finish every open frame with what it has (a valid tree)
        t = top
        st = f_stage[t]
        if st == _NEW:
            work += f_hi[t] - f_lo[t]
            for c in range(K):
                tot[c] = 0.0
            for p in range(f_lo[t], f_hi[t]):
                j = order[p]
                for c in range(K):
                    tot[c] += W[j, c]
            lab = 0
            for c in range(1, K):
                if tot[c] < tot[lab]:
                    lab = c
            e0 = tot[lab]
            f_label[t] = lab
            f_be[t] = e0
            f_bl[t] = 1
            f_bs[t] = -1
            for i in range(d):
                f_cl[t, i] = 0
            if stopped or (prune and (e0 <= tol or e0 < lam - tol)):
                # Lemma 1: no subtree can beat the leaf (or out of time: a leaf).
                f_pruned[t] = True
                f_stage[t] = _FINISH
            else:
                f_pruned[t] = False
                f_ci[t] = -1
                f_stage[t] = _NEXT
            continue
        if st == _NEXT:
            if stopped:  # out of time: the best candidate finished so far
                f_stage[t] = _FINISH
                continue
            i = f_ci[t] + 1
            while i < d and f_lev[t, i] >= kvec[i]:
                i += 1
            if i == d:
                f_stage[t] = _FINISH
                continue
            f_ci[t] = i
            b = kvec[i] - f_lev[t, i] - 1
            # Both children already solved (the common case: a rectangle has up to d parents)?
            # Then the candidate needs no partition of the samples at all.
            hl = f_hash[t] - du[i, b]
            if hl < 0:
                hl += P
            sl = _probe(keys, P, f_key[t] - ((np.int64(1) << b) << shift[i]), hl)
            if sl >= 0:
                hr = f_hash[t] + du[i, b]
                if hr >= P:
                    hr -= P
                sr = _probe(keys, P, f_key[t] + ((np.int64(1) << b) << shift[i]), hr)
                if sr >= 0:
                    f_le[t] = t_err[sl]
                    f_ll[t] = t_leaves[sl]
                    ret_e = t_err[sr]
                    ret_l = t_leaves[sr]
                    f_stage[t] = _RIGHT_DONE
                    continue
            lo = f_lo[t]
            hi = f_hi[t]
            work += hi - lo
            a = lo
            z = hi - 1
            while a <= z:  # samples with bit b clear go left
                if (cells[order[a], i] >> b) & 1 == 0:
                    a += 1
                else:
                    tmp = order[a]
                    order[a] = order[z]
                    order[z] = tmp
                    z -= 1
            f_mid[t] = a
            f_stage[t] = _LEFT_DONE
            if a == lo:
                ret_e = 0.0  # empty rectangle: a leaf with no error
                ret_l = 1
                continue
            ckey = f_key[t] - ((np.int64(1) << b) << shift[i])
            chash = f_hash[t] - du[i, b]
            if chash < 0:
                chash += P
            lo_c = lo
            hi_c = a
        elif st == _LEFT_DONE:
            f_le[t] = ret_e
            f_ll[t] = ret_l
            i = f_ci[t]
            b = kvec[i] - f_lev[t, i] - 1
            f_stage[t] = _RIGHT_DONE
            if f_mid[t] == f_hi[t]:
                ret_e = 0.0
                ret_l = 1
                continue
            ckey = f_key[t] + ((np.int64(1) << b) << shift[i])
            chash = f_hash[t] + du[i, b]
            if chash >= P:
                chash -= P
            lo_c = f_mid[t]
            hi_c = f_hi[t]
        elif st == _RIGHT_DONE:
            i = f_ci[t]
            e = f_le[t] + ret_e
            l = f_ll[t] + ret_l
            f_ce[t, i] = e
            f_cl[t, i] = l
            if _better(e, l, f_be[t], f_bl[t], lam, tol, more_leaves):
                f_be[t] = e
                f_bl[t] = l
                f_bs[t] = i
            f_stage[t] = _NEXT
            continue
        else:  # _FINISH: heuristic, store, return to the parent
            be = f_be[t]
            bl = f_bl[t]
            if not f_pruned[t]:
                for i in range(d):
                    lc = f_cl[t, i]
                    if lc > bl and f_ce[t, i] < be - tol:
                        ratio = (be - f_ce[t, i]) / (lc - bl)
                        if ratio < lam - tol and ratio > heur:
                            heur = ratio
            if 2 * (count + 1) > P:  # grow: new prime, new multipliers, re-insert
                P2 = next_prime(2 * P)
                for i in range(d):
                    u[i] = np.random.randint(1, P2)
                keys2 = np.full(P2, -1, np.int64)
                err2 = np.zeros(P2, np.float64)
                lv2 = np.zeros(P2, np.int64)
                sp2 = np.zeros(P2, np.int64)
                lb2 = np.zeros(P2, np.int64)
                for q in range(P):
                    if keys[q] >= 0:
                        h = rect_hash(keys[q], shift, mask, u, P2)
                        while keys2[h] >= 0:
                            h += 1
                            if h == P2:
                                h = 0
                        keys2[h] = keys[q]
                        err2[h] = t_err[q]
                        lv2[h] = t_leaves[q]
                        sp2[h] = t_split[q]
                        lb2[h] = t_label[q]
                P = P2
                for i in range(d):
                    for b in range(kmax):
                        du[i, b] = ((np.int64(1) << b) % P) * u[i] % P
                for q in range(t + 1):  # frames on the stack hold hashes for the old table
                    f_hash[q] = rect_hash(f_key[q], shift, mask, u, P)
                keys = keys2
                t_err = err2
                t_leaves = lv2
                t_split = sp2
                t_label = lb2
            h = f_hash[t]
            while keys[h] >= 0:
                h += 1
                if h == P:
                    h = 0
            keys[h] = f_key[t]
            t_err[h] = be
            t_leaves[h] = bl
            t_split[h] = f_bs[t]
            t_label[h] = f_label[t]
            count += 1
            ret_e = be
            ret_l = bl
            top -= 1
            continue
        # A child is needed: look it up, else push a frame for it.
        found = _probe(keys, P, ckey, chash)
        if found >= 0:
            ret_e = t_err[found]
            ret_l = t_leaves[found]
            continue
        c = t + 1
        f_lo[c] = lo_c
        f_hi[c] = hi_c
        f_key[c] = ckey
        f_hash[c] = chash
        for q in range(d):
            f_lev[c, q] = f_lev[t, q]
        f_lev[c, i] += 1
        f_stage[c] = _NEW
        top = c
    board[NODES] = count
    return (keys, t_err, t_leaves, t_split, t_label, u, P, count, heur, ret_e, ret_l, stopped)
