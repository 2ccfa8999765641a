"""Numba kernel of the one-rule search without a rule list: every hyperplane/hypersurface through
G points is scored as it is formed, so millions of rules that would not fit in memory are never
stored.

Incremental evaluation: the subsets are visited prefix by prefix. For a prefix of ``G - 1``
defining points, the planes through them form a pencil spanned by two vectors ``U, V`` (an
orthonormal basis of the prefix's null space in ``(a, b)`` space, with the plane ``Z @ a = b``);
every point's values ``u_p = U . (z_p, -1)`` and ``v_p = V . (z_p, -1)`` are computed once per
prefix. Adding the last defining point ``q`` fixes the plane ``(v_q) U - (u_q) V``, whose value
on point ``p`` is ``v_q u_p - u_q v_p``: two multiplications per point instead of a ``G``-term
dot product and a factorisation per subset.

A subset is *deferred* to the exact rule generation of :mod:`.rules` whenever the fast
arithmetic could disagree with it: a nearly degenerate prefix or subset, or a point other than
the defining ones within ``TOL`` of the plane. Otherwise every non-defining point's side is the
sign of its value (the tilt that places the defining points never moves it), and the best side
pattern of the defining points is chosen by enumeration. The scores are therefore those of the
exact rules, except that a rule the exact generation cannot store faithfully is still scored
here; the caller verifies the winners with the exact generation.
"""

from __future__ import annotations

import numpy as np
from numba import njit

INF = np.inf
#: distance (standardised coordinates, unit normal) to the plane below which a subset goes to
#: the exact generation: far above the exact generation's 1e-9 "on the plane" and far above the
#: rounding of the pencil arithmetic
TOL = 1e-7


@njit(cache=True, nogil=True)
def _dot(a, b):
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i] * b[i]
    return acc


@njit(cache=True, nogil=True)
def _pencil(Z, prefix, basis, q, cand):
    """Orthonormal basis (rows 0 and 1 of ``basis``) of the planes through the prefix points;
    False when the prefix is nearly degenerate. ``q`` (G-1 x dim) and ``cand`` (dim) are
    scratch (no allocation: this runs once per prefix)."""
    g1 = prefix.shape[0]
    dim = Z.shape[1] + 1
    for r in range(g1):
        for i in range(dim - 1):
            q[r, i] = Z[prefix[r], i]
        q[r, dim - 1] = -1.0
        norm0 = np.sqrt(_dot(q[r], q[r]))
        for _ in range(2):  # Gram-Schmidt twice: accurate to rounding
            for t in range(r):
                dd = _dot(q[r], q[t])
                for i in range(dim):
                    q[r, i] -= dd * q[t, i]
        norm = np.sqrt(_dot(q[r], q[r]))
        if norm <= 1e-5 * norm0:
            return False
        for i in range(dim):
            q[r, i] /= norm
    for found in range(2):
        best = -1.0
        best_e = 0
        for e in range(dim):
            # residual of the unit vector e against the prefix rows and the basis so far
            nrm = 1.0
            for t in range(g1):
                nrm -= q[t, e] * q[t, e]
            for t in range(found):
                nrm -= basis[t, e] * basis[t, e]
            if nrm > best:
                best = nrm
                best_e = e
        if best < 0.25:
            return False
        for i in range(dim):
            cand[i] = 0.0
        cand[best_e] = 1.0
        for _ in range(2):
            for t in range(g1):
                dd = _dot(cand, q[t])
                for i in range(dim):
                    cand[i] -= dd * q[t, i]
            for t in range(found):
                dd = _dot(cand, basis[t])
                for i in range(dim):
                    cand[i] -= dd * basis[t, i]
        norm = np.sqrt(_dot(cand, cand))
        for i in range(dim):
            basis[found, i] = cand[i] / norm
    return True


@njit(cache=True, nogil=True)
def _cost2(wl, wr):
    """Misclassification of two leaves with class weights ``wl`` and ``wr``."""
    tl = 0.0
    bl = -1.0
    tr = 0.0
    br = -1.0
    for c in range(wl.shape[0]):
        tl += wl[c]
        tr += wr[c]
        if wl[c] > bl:
            bl = wl[c]
        if wr[c] > br:
            br = wr[c]
    return (tl - bl) + (tr - br)


@njit(cache=True, nogil=True)
def _next_combination(comb, n):
    """Advance the sorted combination ``comb`` of ``range(n)`` lexicographically in place;
    False after the last one."""
    k = comb.shape[0]
    i = k - 1
    while i >= 0 and comb[i] == n - k + i:
        i -= 1
    if i < 0:
        return False
    comb[i] += 1
    for j in range(i + 1, k):
        comb[j] = comb[j - 1] + 1
    return True


@njit(cache=True, nogil=True)
def _record(v, m, idx, g, top_value, top_subset, top_pattern):
    """Insert ``(v, subset idx, pattern m)`` into the sorted top list (ties: earlier first)."""
    t_count = top_value.shape[0]
    k = t_count - 1
    while k > 0 and top_value[k - 1] > v:
        top_value[k] = top_value[k - 1]
        top_pattern[k] = top_pattern[k - 1]
        for i in range(g):
            top_subset[k, i] = top_subset[k - 1, i]
        k -= 1
    top_value[k] = v
    top_pattern[k] = m
    for i in range(g):
        top_subset[k, i] = idx[i]


@njit(cache=True, nogil=True)
def _defer(deferred, n_deferred, prefix, g, q):
    k = n_deferred[0]
    if k < deferred.shape[0]:
        for i in range(prefix.shape[0]):
            deferred[k, i] = prefix[i]
        deferred[k, g - 1] = q
    n_deferred[0] = k + 1


@njit(cache=True, nogil=True)
def stream_best(Z, start, n_prefixes, weights, counts, min_leaf, top_value, top_subset,
                top_pattern, deferred, n_deferred):
    """Score every plane whose first ``G - 1`` defining points are one of the ``n_prefixes``
    combinations from ``start`` on (lexicographic; ``start`` is advanced in place) and whose
    last one has a larger index.

    Per prefix, every point ``p`` gets its pencil coordinates ``w_p = (u_p, v_p)``; the plane
    through the last point ``q`` puts ``p`` on the positive side exactly when ``w_p`` lies
    within half a turn counter-clockwise of ``w_q``. Sorting the points by the angle of ``w``
    and sweeping ``q`` around the circle moves each point across a side once: all the planes
    of a prefix are scored in ``O(n log n)`` instead of ``O(n**2)``.

    Keeps the ``T = len(top_value)`` best (value, subset, pattern) triples seen so far in the
    ``top_*`` arrays (sorted by value; ``top_pattern`` bit ``e`` set = defining point ``e`` on
    the negative side, the side of the points with positive ``u_q v_p - v_q u_p``...
    reversed: negative side = clockwise half). ``deferred`` receives the subsets for the exact
    generation (a last point of -1 means every subset of that prefix), ``n_deferred[0]``
    their number. Returns the number of subsets scored.
    """
    n, d = Z.shape
    g = d
    g1 = start.shape[0]
    n_classes = weights.shape[1]
    basis = np.zeros((2, d + 1))
    qs = np.zeros((max(g1, 1), d + 1))
    cand = np.zeros(d + 1)
    uu = np.zeros(n)
    vv = np.zeros(n)
    ang = np.zeros(n)
    key = np.zeros(n)
    un_u = np.zeros(n)  # w_p / |w_p|
    un_v = np.zeros(n)
    wn = np.zeros(n)  # |w_p|
    is_pre = np.zeros(n, np.bool_)
    pts = np.zeros(n, np.int64)  # non-prefix points
    ring = np.zeros(2 * n, np.int64)  # points by angle, twice round
    ring_ang = np.zeros(2 * n)
    win_w = np.zeros(n_classes)  # class weights of the positive side (the window)
    pre_w = np.zeros(n_classes)
    nd_w = np.zeros(n_classes)
    def_w = np.zeros((g, n_classes))
    def_c = np.zeros(g, np.int64)
    wl = np.zeros(n_classes)
    wr = np.zeros(n_classes)
    idx = np.zeros(g, np.int64)
    n_pat = 1 << g
    t_count = top_value.shape[0]
    zz = np.zeros(n)
    tot_w = np.zeros(n_classes)
    tot_c = 0
    for p in range(n):
        tot_c += counts[p]
        acc = 1.0
        for i in range(d):
            acc += Z[p, i] * Z[p, i]
        zz[p] = acc
        for c in range(n_classes):
            tot_w[c] += weights[p, c]
    prefix = start
    scored = 0
    for _pr in range(n_prefixes):
        if _pr > 0 and not _next_combination(prefix, n):
            break
        last_lo = prefix[g1 - 1] + 1 if g1 > 0 else 0
        if last_lo >= n:
            continue
        ok = _pencil(Z, prefix, basis, qs, cand)
        for i in range(g1):
            is_pre[prefix[i]] = True
        m_pts = 0
        if ok:
            for p in range(n):
                if is_pre[p]:
                    continue
                a = -basis[0, d]
                b = -basis[1, d]
                for i in range(d):
                    a += basis[0, i] * Z[p, i]
                    b += basis[1, i] * Z[p, i]
                uu[p] = a
                vv[p] = b
                nrm = np.sqrt(a * a + b * b)
                # a point in the prefix's span lies on every plane of the pencil
                if nrm <= 1e-12 * np.sqrt(zz[p]):
                    ok = False
                    break
                wn[p] = nrm
                # pseudo-angle in [0, 4): monotone in the true angle, and the opposite
                # direction is exactly 2 further (no trigonometry)
                if b >= 0.0:
                    ang[p] = b / (a + b) if a >= 0.0 else 1.0 - a / (b - a)
                else:
                    ang[p] = 2.0 - b / (-a - b) if a < 0.0 else 3.0 + a / (a - b)
                un_u[p] = a / nrm
                un_v[p] = b / nrm
                pts[m_pts] = p
                m_pts += 1
        if not ok:
            for i in range(g1):
                is_pre[prefix[i]] = False
            _defer(deferred, n_deferred, prefix, g, -1)
            continue
        for t in range(m_pts):
            key[t] = ang[pts[t]]
        order = np.argsort(key[:m_pts])
        for t in range(m_pts):
            ring[t] = pts[order[t]]
            ring_ang[t] = ang[ring[t]]
            ring[t + m_pts] = ring[t]
            ring_ang[t + m_pts] = ring_ang[t] + 4.0
        wmin = np.inf
        for t in range(m_pts):
            wmin = min(wmin, wn[pts[t]])
        n_uu = 0.0
        n_vv = 0.0
        n_uv = 0.0
        for i in range(d):
            n_uu += basis[0, i] * basis[0, i]
            n_vv += basis[1, i] * basis[1, i]
            n_uv += basis[0, i] * basis[1, i]
        for c in range(n_classes):
            pre_w[c] = tot_w[c]
            win_w[c] = 0.0
        pre_c = tot_c
        for i in range(g1):
            idx[i] = prefix[i]
            pre_c -= counts[prefix[i]]
            for c in range(n_classes):
                pre_w[c] -= weights[prefix[i], c]
        win_c = 0
        # window of q = ring[t]: ring[t+1 .. e-1], the points less than half a turn ahead
        e = 1
        for t in range(m_pts):
            q = ring[t]
            if t > 0:
                # q leaves the window it was in (it was ahead of the previous q)
                if e > t:
                    win_c -= counts[q]
                    for c in range(n_classes):
                        win_w[c] -= weights[q, c]
                else:
                    e = t + 1
            while e < t + m_pts and ring_ang[e] < ring_ang[t] + 2.0:
                r = ring[e]
                win_c += counts[r]
                for c in range(n_classes):
                    win_w[c] += weights[r, c]
                e += 1
            if q < last_lo:
                continue  # this subset belongs to another prefix
            # a point next to q, or next to the far boundary, may be on the plane: the exact
            # generation decides those subsets
            # The plane's distance to p is |w_q x w_p| / |a| (|a|: the plane's normal); a
            # distance within TOL of zero goes to the exact generation. Only points within an
            # angle s0 of the plane's two directions can be that close: walk out from q and
            # from the far boundary while the angle stays below s0.
            nq = wn[q]
            na = np.sqrt(max(vv[q] * vv[q] * n_uu + uu[q] * uu[q] * n_vv
                             - 2.0 * uu[q] * vv[q] * n_uv, 0.0))
            close = nq * nq <= 1e-6 * zz[q] or na <= 1e-9
            if not close:
                s0 = TOL * na / (nq * wmin)
                for start_k, step_k in ((t + 1, 1), (t + m_pts - 1, -1), (e - 1, -1),
                                        (e, 1)):
                    k = start_k
                    for _ in range(m_pts - 1):
                        r = ring[k % (2 * m_pts)]
                        if r == q:
                            break
                        sn = abs(un_u[q] * un_v[r] - un_v[q] * un_u[r])
                        if sn > s0:
                            break
                        if sn * nq * wn[r] <= TOL * na:
                            close = True
                            break
                        k += step_k
                        if k < 0:
                            k += 2 * m_pts
                    if close:
                        break
            if close:
                _defer(deferred, n_deferred, prefix, g, q)
                continue
            scored += 1
            idx[g - 1] = q
            for c in range(n_classes):
                nd_w[c] = pre_w[c] - weights[q, c]
                wl[c] = win_w[c]
                wr[c] = nd_w[c] - win_w[c]
            # bound: the defining points never lower a side's cost
            if _cost2(wl, wr) >= top_value[t_count - 1]:
                continue
            cl = win_c
            cr_ = pre_c - counts[q] - win_c
            for e2 in range(g):
                def_c[e2] = counts[idx[e2]]
                cl += def_c[e2]
                for c in range(n_classes):
                    def_w[e2, c] = weights[idx[e2], c]
                    wl[c] += def_w[e2, c]
            m = 0
            for step in range(n_pat):
                if step > 0:
                    # Gray code: move one defining point to the other side
                    b2 = 0
                    while not ((step >> b2) & 1):
                        b2 += 1
                    m ^= 1 << b2
                    if (m >> b2) & 1:
                        for c in range(n_classes):
                            wl[c] -= def_w[b2, c]
                            wr[c] += def_w[b2, c]
                        cl -= def_c[b2]
                        cr_ += def_c[b2]
                    else:
                        for c in range(n_classes):
                            wl[c] += def_w[b2, c]
                            wr[c] -= def_w[b2, c]
                        cl += def_c[b2]
                        cr_ -= def_c[b2]
                if cl < min_leaf or cr_ < min_leaf or cl <= 0 or cr_ <= 0:
                    continue
                v = _cost2(wl, wr)
                if v < top_value[t_count - 1]:
                    _record(v, m, idx, g, top_value, top_subset, top_pattern)
        for i in range(g1):
            is_pre[prefix[i]] = False
    return scored


@njit(cache=True, nogil=True)
def split_costs(sides, weights, counts, min_leaf, out):
    """``out[m]``: misclassification of the one-rule tree on the packed sides ``sides[m]``
    (inf when a side holds fewer than ``min_leaf`` samples)."""
    n, n_classes = weights.shape
    wl = np.zeros(n_classes)
    wr = np.zeros(n_classes)
    for m in range(sides.shape[0]):
        for c in range(n_classes):
            wl[c] = 0.0
            wr[c] = 0.0
        cl = 0
        cr = 0
        for p in range(n):
            if (sides[m, p >> 6] >> np.uint64(p & 63)) & np.uint64(1):
                cl += counts[p]
                for c in range(n_classes):
                    wl[c] += weights[p, c]
            else:
                cr += counts[p]
                for c in range(n_classes):
                    wr[c] += weights[p, c]
        out[m] = _cost2(wl, wr) if cl >= min_leaf and cr >= min_leaf else INF
