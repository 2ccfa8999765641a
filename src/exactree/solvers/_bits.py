"""Bitset helpers for the DP kernels: popcount and set-bit extraction on uint64 words."""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import intrinsic


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of a uint64 (LLVM ``ctpop``; Numba has no built-in)."""
    if x != types.uint64:
        return None
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@njit(cache=True)
def count_bits(bits: np.ndarray) -> int:
    total = 0
    for w in range(bits.shape[0]):
        total += popcount(bits[w])
    return total


@njit(cache=True)
def count_and(a: np.ndarray, b: np.ndarray) -> int:
    total = 0
    for w in range(a.shape[0]):
        total += popcount(a[w] & b[w])
    return total


@njit(cache=True)
def count_andnot(a: np.ndarray, b: np.ndarray) -> int:
    """Bits set in ``a`` but not in ``b``."""
    total = 0
    for w in range(a.shape[0]):
        total += popcount(a[w] & ~b[w])
    return total


@njit(cache=True)
def set_bits(bits: np.ndarray, out: np.ndarray) -> int:
    """Write the indices of the set bits into ``out`` (ascending); return how many."""
    k = 0
    for w in range(bits.shape[0]):
        word = bits[w]
        while word:
            low = word & (~word + np.uint64(1))
            out[k] = w * 64 + popcount(low - np.uint64(1))
            k += 1
            word ^= low
    return k


def pack_rows(mask: np.ndarray) -> np.ndarray:
    """Boolean matrix ``(rows, n)`` to uint64 bitsets ``(rows, ceil(n / 64))``, bit i = column i."""
    rows, n = mask.shape
    n_words = max(1, (n + 63) // 64)
    padded = np.zeros((rows, n_words * 64), dtype=bool)
    padded[:, :n] = mask
    return np.packbits(padded, axis=1, bitorder="little").view("<u8").astype(np.uint64)
