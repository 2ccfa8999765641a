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
_BLOCK = 256  # rows per block: the block's columns and masks stay in L1


@njit(cache=True, nogil=True)
def leaf_rows_bitvector(X, Z, cols, src, thr, nanr, bits, init, out):  # pragma: no cover - jitted
    """Leaf row (index into ``B``) of every row of ``X``, by the bitvector AND of false nodes.

    Zhang's ``argmax(B h)`` with ``h = [z > t]`` picks the first leaf whose bit is set in every
    false node's bitvector (the proof of his Theorem 1); ANDing packed bitvectors finds the same
    leaf with ``W = ceil(L / 64)`` word operations per node instead of ``L`` multiply-adds.

    Rows go in blocks of 256. A block's needed inputs are first copied column-wise into ``buf``:
    the columns ``cols`` of ``X``, then the precomputed oblique rule values ``Z`` (n, k). Node
    ``j`` reads ``buf[src[j]]``. Every node then updates all rows of the block with a
    branch-free AND (a row going left ANDs all ones), a loop over contiguous memory that the
    compiler vectorises. ``bits`` (n_internal, W): bit ``r % 64`` of word ``r // 64`` is
    ``B[r, j]``; ``init`` (W) has the bits of the existing leaves. A missing value (NaN) goes
    right at node ``j`` where ``nanr[j]`` (a NaN compares false, so it goes left otherwise).
    """
    n = X.shape[0]
    n_int = thr.shape[0]
    n_words = bits.shape[1]
    n_cols = cols.shape[0]
    n_z = Z.shape[1]
    full = ~_ZERO
    buf = np.empty((n_cols + n_z, _BLOCK), np.float64)
    mask = np.empty((n_words, _BLOCK), np.uint64)
    off = np.empty(_BLOCK, np.uint64)
    for a in range(0, n, _BLOCK):
        cnt = min(n - a, _BLOCK)
        for i in range(cnt):
            for c in range(n_cols):
                buf[c, i] = X[a + i, cols[c]]
            for c in range(n_z):
                buf[n_cols + c, i] = Z[a + i, c]
        for w in range(n_words):
            for i in range(cnt):
                mask[w, i] = init[w]
        for j in range(n_int):
            s = src[j]
            t = thr[j]
            if nanr[j]:
                for i in range(cnt):
                    z = buf[s, i]
                    off[i] = full if (z > t or math.isnan(z)) else _ZERO
            else:
                for i in range(cnt):
                    off[i] = full if buf[s, i] > t else _ZERO
            for w in range(n_words):
                keep = bits[j, w]
                for i in range(cnt):
                    mask[w, i] &= keep | ~off[i]
        for i in range(cnt):
            out[a + i] = 0
            for w in range(n_words):
                m = mask[w, i]
                if m != _ZERO:
                    low = m & (~m + _ONE)
                    out[a + i] = 64 * w + math.frexp(float(low))[1] - 1
                    break


@njit(cache=True, nogil=True)
def leaf_rows_walk(X, Z, feature, zcol, thr, nanr, left, right, root, out):  # pragma: no cover
    """Leaf row of every row of ``X`` by walking from the root: ``O(depth)`` per row.

    The structure is the one decoded from ``B`` (``left``/``right`` per internal node: a node
    index, or ``-1 - r`` for leaf row ``r``). Deep trees are faster this way than with the
    ``O(n_internal)`` bitvector kernel. Node ``j`` reads ``X[:, feature[j]]`` when
    ``feature[j] >= 0``, else the precomputed rule value ``Z[:, zcol[j]]``; a missing value
    goes right where ``nanr[j]``, left otherwise.
    """
    for i in range(X.shape[0]):
        j = root
        while j >= 0:
            f = feature[j]
            z = X[i, f] if f >= 0 else Z[i, zcol[j]]
            j = right[j] if (z > thr[j] or (math.isnan(z) and nanr[j])) else left[j]
        out[i] = -1 - j
