"""Numba kernels of the rule generation (:mod:`.rules`): the tilted hyperplane of every
(defining subset, side pattern) pair, its raw-coordinate form, its representability check and its
sides, in one pass per subset instead of a dozen ``(subsets x points)`` NumPy temporaries per
pattern; and hashing of rule keys for duplicate detection.

The arithmetic follows :func:`.rules._plane_rules`'s description exactly; only the order of
summation in dot products may differ from NumPy's, which the rounding bound ``rel_err`` covers
(a rule is kept only when every point is on its side by more than that bound).
"""

from __future__ import annotations

import numpy as np
from numba import njit

INF = np.inf


@njit(cache=True, nogil=True)
def pattern_rules(block, Z, null, u, sv, vt, patterns, phi, abs_phi, mu, sd, rel_err, status,
                  coef, thr, sides):
    """Every (subset ``block[s]``, pattern ``patterns[q]``) rule of one block.

    ``null[s]`` is the plane ``(a, b)`` (``Z @ a - b = 0`` on the subset) in standardised
    coordinates, ``u, sv, vt`` the SVD of the subset's ``[Z, -1]`` matrix (for the
    pseudo-inverse). Row ``r = q * S + s`` of the outputs: ``status`` 0 (no rule: a point on the
    plane the tilt does not move, or an empty side), 1 (kept), 2 (cannot be stored faithfully
    in raw coordinates); ``coef`` (raw, largest magnitude one), ``thr`` and ``sides`` (packed
    bits, positive side = value ``<= thr``) for kept rules and, for status 2, the sides.
    """
    n_sub, g = block.shape
    n_pts = Z.shape[0]
    n_pat = patterns.shape[0]
    v = np.zeros(n_pts)
    dv = np.zeros(n_pts)
    raw = np.zeros(n_pts)
    err = np.zeros(n_pts)
    left = np.zeros(n_pts, np.bool_)
    is_def = np.zeros(n_pts, np.int64)  # pattern column + 1 of a defining point, else 0
    dz = np.zeros(g + 1)
    a = np.zeros(g)
    c = np.zeros(g)
    for s in range(n_sub):
        for i in range(g):
            is_def[block[s, i]] = i + 1
        for p in range(n_pts):
            acc = 0.0
            for i in range(g):
                acc += Z[p, i] * null[s, i]
            v[p] = acc - null[s, g]
        for q in range(n_pat):
            r = q * n_sub + s
            status[r] = 0
            # dz = pinv(A) @ pattern, pinv = V diag(1/sv) U^T over the g nonzero values
            for i in range(g + 1):
                acc = 0.0
                for m in range(g):
                    ut = 0.0
                    for e in range(g):
                        ut += u[s, e, m] * patterns[q, e]
                    acc += vt[s, m, i] * ut / sv[s, m]
                dz[i] = acc
            ratio = INF
            undecided = False
            for p in range(n_pts):
                acc = 0.0
                for i in range(g):
                    acc += Z[p, i] * dz[i]
                dv[p] = acc - dz[g]
                on = abs(v[p]) <= 1e-9
                if on:
                    if is_def[p] == 0 and abs(dv[p]) <= 1e-9:
                        undecided = True
                else:
                    rt = abs(v[p]) / max(abs(dv[p]), 1e-300)
                    if rt < ratio:
                        ratio = rt
            eta = 0.5 * min(ratio, 1.0)
            n_left = 0
            for p in range(n_pts):
                if is_def[p]:
                    left[p] = patterns[q, is_def[p] - 1] < 0
                else:
                    left[p] = (v[p] + eta * dv[p]) < 0
                n_left += left[p]
            if undecided or n_left == 0 or n_left == n_pts:
                continue
            # raw coordinates, scaled so the largest coefficient has magnitude one
            t_raw = null[s, g] + eta * dz[g]
            scale = 0.0
            for i in range(g):
                a[i] = null[s, i] + eta * dz[i]
                c[i] = a[i] / sd[i]
                t_raw += a[i] * mu[i] / sd[i]
                scale = max(scale, abs(c[i]))
            for i in range(g):
                c[i] /= scale
            t_raw /= scale
            lo = -INF
            hi = INF
            for p in range(n_pts):
                acc = 0.0
                bound = 0.0
                for i in range(g):
                    acc += phi[p, i] * c[i]
                    bound += abs_phi[p, i] * abs(c[i])
                raw[p] = acc
                err[p] = rel_err * bound
                if left[p]:
                    lo = max(lo, acc + err[p])
                else:
                    hi = min(hi, acc - err[p])
            for w in range(sides.shape[1]):
                sides[r, w] = np.uint64(0)
            if hi > lo:
                t = lo + 0.5 * (hi - lo)
                status[r] = 1
                for i in range(g):
                    coef[r, i] = c[i]
                thr[r] = t
                for p in range(n_pts):
                    if raw[p] <= t:
                        sides[r, p >> 6] |= np.uint64(1) << np.uint64(p & 63)
            else:
                status[r] = 2
                for p in range(n_pts):
                    if left[p]:
                        sides[r, p >> 6] |= np.uint64(1) << np.uint64(p & 63)
        for i in range(g):
            is_def[block[s, i]] = 0


@njit(cache=True, nogil=True)
def row_hashes(keys):
    """A 64-bit hash of every row of the int64 matrix ``keys`` (FNV-style mixing)."""
    out = np.zeros(keys.shape[0], np.int64)
    for r in range(keys.shape[0]):
        h = np.uint64(14695981039346656037)
        for c in range(keys.shape[1]):
            h ^= np.uint64(keys[r, c])
            h *= np.uint64(1099511628211)
            h ^= h >> np.uint64(29)
        out[r] = np.int64(h)
    return out


@njit(cache=True, nogil=True)
def first_equal_row(keys, order, hashes):
    """``rep[r]``: the first row equal to row ``r`` (``r`` itself for a first occurrence), with
    ``order`` a stable argsort of ``hashes`` (so that equal keys are adjacent within a run of
    equal hashes, indices ascending)."""
    n = keys.shape[0]
    rep = np.arange(n)
    i = 0
    while i < n:
        j = i + 1
        while j < n and hashes[order[j]] == hashes[order[i]]:
            j += 1
        for a in range(i + 1, j):
            ra = order[a]
            for b in range(i, a):
                rb = order[b]
                if rep[rb] != rb:
                    continue
                same = True
                for c in range(keys.shape[1]):
                    if keys[ra, c] != keys[rb, c]:
                        same = False
                        break
                if same:
                    rep[ra] = rb
                    break
        i = j
    return rep
