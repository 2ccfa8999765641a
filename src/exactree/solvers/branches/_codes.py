"""The solver features' codes without a rows x features matrix.

The search reads the code of solver feature ``f`` on row ``r`` through :func:`code` from a pair
``Z = (V, zmap)``: ``V`` (rows x value columns, small integers) and ``zmap`` (2 x features,
int64). Feature ``f`` reads column ``c = zmap[0, f]`` of ``V``; ``t = zmap[1, f]`` is -1 for a
categorical feature (its code is the value) and ``t >= 0`` for a threshold feature, whose code
is 0 where the value is at most ``t`` and 1 elsewhere. A numeric column with many thresholds is
then one column of ranks (each row's count of thresholds below its raw value), not one byte
per row and threshold: 3,000 rows of 20 numeric columns take 240 KB, not 180 MB.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._clock import now


@njit(cache=True, inline="always")
def code(Z, r, f):
    """The code of solver feature ``f`` on row ``r`` (see the module docstring)."""
    V, zmap = Z
    v = np.int64(V[r, zmap[0, f]])
    t = zmap[1, f]
    if t < 0:
        return v
    return np.int64(1) if v > t else np.int64(0)


@njit(cache=True)
def literal_bits(V, zmap, lit_off, order, out, deadline):
    """Fill ``out`` (literals x words, zeros on entry) with the rows of every literal as
    bitsets: row ``r`` of literal ``lit_off[f] + code(f, r)``. Categorical features row block
    by row block; threshold features (``order``: them sorted by column, then threshold) from
    their column's rows sorted by value, each threshold's rows above it the previous
    threshold's less the rows up to it, one copy of a bitset a threshold (no rows x
    thresholds matrix; the rows sorted by counting, the values being ranks). False (``out``
    partly filled) once the clock (:func:`.._clock.now`) passes ``deadline``, read every 64
    rows and every 64 thresholds."""
    n = V.shape[0]
    q = zmap.shape[1]
    n_words = out.shape[1]
    one = np.uint64(1)
    for wi in range(n_words):
        if now() >= deadline:
            return False
        r0 = wi * 64
        r1 = min(n, r0 + 64)
        for f in range(q):
            if zmap[1, f] >= 0:
                continue
            c = zmap[0, f]
            g0 = lit_off[f]
            for r in range(r0, r1):
                out[g0 + np.int64(V[r, c]), wi] |= one << np.uint64(r - r0)
    allmask = np.zeros(n_words, np.uint64)
    for r in range(n):
        allmask[r >> 6] |= one << np.uint64(r & 63)
    cur = np.empty(n_words, np.uint64)
    vals = np.empty(n, np.int64)
    rows = np.empty(n, np.int64)
    start = np.zeros(0, np.int64)
    col = -1
    p = 0
    for o in range(order.shape[0]):
        f = order[o]
        c = zmap[0, f]
        if c != col:  # a new column: its rows by value (a counting sort), all above
            col = c
            top = 0
            for r in range(n):
                vals[r] = V[r, c]
                top = max(top, vals[r])
            if start.shape[0] < top + 2:
                start = np.zeros(top + 2, np.int64)
            for v in range(top + 2):
                start[v] = 0
            for r in range(n):
                start[vals[r] + 1] += 1
            for v in range(top + 1):
                start[v + 1] += start[v]
            for r in range(n):
                rows[start[vals[r]]] = r
                start[vals[r]] += 1
            for wi in range(n_words):
                cur[wi] = allmask[wi]
            p = 0
        if (o & 63) == 63 and now() >= deadline:
            return False
        t = zmap[1, f]
        while p < n and vals[rows[p]] <= t:
            r = rows[p]
            cur[r >> 6] &= ~(one << np.uint64(r & 63))
            p += 1
        g = lit_off[f]
        for wi in range(n_words):
            out[g + 1, wi] = cur[wi]
            out[g, wi] = allmask[wi] & ~cur[wi]
    return True


@njit(cache=True)
def disjoint(lit_bits, a, b):
    """For every ``i``: whether literals ``a[i]`` and ``b[i]`` share no row."""
    m = a.shape[0]
    out = np.ones(m, np.bool_)
    for i in range(m):
        for wi in range(lit_bits.shape[1]):
            if lit_bits[a[i], wi] & lit_bits[b[i], wi]:
                out[i] = False
                break
    return out
