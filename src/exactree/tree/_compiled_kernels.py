"""Numba kernel for compiled-tree prediction (see :mod:`exactree.tree.compiled`).

One kernel, typed consistently (float64 data, int64 indices, uint64 bit words) so it compiles
once and loads from the on-disk cache afterwards.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_ONE = np.uint64(1)
_ZERO = np.uint64(0)


@njit(cache=True, nogil=True)
def leaf_rows_bitvector(X, Z, feature, zcol, thr, bits, init, out):  # pragma: no cover - jitted
    """Leaf row (index into ``B``) of every row of ``X``, by the bitvector AND of the false nodes.

    Zhang's ``argmax(B h)`` with ``h = [z > t]`` picks the first leaf whose bit is set in every
    false node's bitvector (the proof of his Theorem 1); ANDing packed bitvectors finds the same
    leaf with ``W = ceil(L / 64)`` word operations per node instead of ``L`` multiply-adds.

    ``X`` (n, d) and ``Z`` (n, k): raw columns and precomputed oblique rule values; node ``j``
    reads ``X[:, feature[j]]`` when ``feature[j] >= 0`` and ``Z[:, zcol[j]]`` otherwise.
    ``bits`` (n_internal, W): bit ``r % 64`` of word ``r // 64`` is ``B[r, j]``. ``init`` (W):
    the bits of existing leaves. The update is branch-free: a row going left (``z <= t``) ANDs
    an all-ones word, so random inputs cost no branch mispredictions.
    """
    n = X.shape[0]
    n_int = thr.shape[0]
    n_words = bits.shape[1]
    full = ~_ZERO
    if n_words == 1:
        start = init[0]
        for i in range(n):
            m = start
            for j in range(n_int):
                f = feature[j]
                z = X[i, f] if f >= 0 else Z[i, zcol[j]]
                off = full if z > thr[j] else _ZERO
                m &= bits[j, 0] | ~off
            low = m & (~m + _ONE)
            out[i] = math.frexp(float(low))[1] - 1 if m != _ZERO else 0
        return
    m = np.empty(n_words, np.uint64)
    for i in range(n):
        for w in range(n_words):
            m[w] = init[w]
        for j in range(n_int):
            f = feature[j]
            z = X[i, f] if f >= 0 else Z[i, zcol[j]]
            off = full if z > thr[j] else _ZERO
            for w in range(n_words):
                m[w] &= bits[j, w] | ~off
        out[i] = 0
        for w in range(n_words):
            if m[w] != _ZERO:
                low = m[w] & (~m[w] + _ONE)
                out[i] = 64 * w + math.frexp(float(low))[1] - 1
                break
