"""Features that split a branch's rows alike (BRANCHES' ``dedup`` technique).

Two features *split a branch alike* when they partition its rows into the same non-empty blocks
(for binary features: equal or complementary on those rows). Their splits then give the same
children (as row sets, in another order); in a child, the other feature takes one value only,
so it can never split it (a split sending every row one way is never strictly better), and the
children of both splits have the same optimal subtrees (same rows, same usable features up to
features constant there, same depth). So the two splits cost the same, and every subtree of a
branch or of its descendants that splits on one has a twin of the same cost splitting on the
other: keeping one feature of every class is exact, for the branch's own splits and for the
splits of its descendants. Features taking one value on the branch are dropped as well (they
never split it or its descendants).

:func:`distinct` finds one feature per class from an order-free hash of every feature's
non-empty blocks (bitsets of the branch's rows), checking every hash match exactly; a partition
into two blocks is hashed by the block without the branch's first row (for a binary feature, a
pass over its rows with code 1 gives both blocks).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


@njit(cache=True, inline="always")
def _mix(x):
    """splitmix64's finaliser: a bijection of uint64 that spreads every bit."""
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


@njit(cache=True)
def _same_blocks(f, f2, S, nzw, nnz, lit_bits, lit_off):
    """Whether every non-empty block of ``f`` on the rows ``S`` is a block of ``f2`` (with as
    many non-empty blocks on both, the partitions are then equal)."""
    for g in range(lit_off[f], lit_off[f + 1]):
        empty = True
        for i in range(nnz):
            if S[i] & lit_bits[g, nzw[i]]:
                empty = False
                break
        if empty:
            continue
        found = False
        for g2 in range(lit_off[f2], lit_off[f2 + 1]):
            eq = True
            for i in range(nnz):
                s = S[i]
                ow = nzw[i]
                if (s & lit_bits[g, ow]) != (s & lit_bits[g2, ow]):
                    eq = False
                    break
            if eq:
                found = True
                break
        if not found:
            return False
    return True


@njit(cache=True)
def distinct(S, nzw, nnz, UF, nu, out, lit_bits, lit_off, hkey, htab):
    """One feature of every class of ``UF[:nu]`` that splits the rows ``S`` (non-zero words
    ``S[:nnz]`` at word indices ``nzw``) alike, the first in ``UF`` order, into ``out`` (which
    may be ``UF``), features constant on the rows left out; returns their number. ``hkey``
    (``nu`` entries) and ``htab`` (a power of two of at least ``2 * nu`` entries) are scratch."""
    mask = htab.shape[0] - 1
    for t in range(htab.shape[0]):
        htab[t] = -1
    m = 0
    if nnz == 0:
        return 0
    first = S[0] & (~S[0] + np.uint64(1))  # the branch's first row (S[0] is non-zero)
    for i in range(nu):
        f = UF[i]
        h = np.uint64(0)
        nb = 0
        if lit_off[f + 1] - lit_off[f] == 2:
            # two blocks, complementary on the rows: hash the one without the first row
            g = lit_off[f] + 1
            flip = (S[0] & lit_bits[g, nzw[0]] & first) != 0
            ones = False
            zeros = False
            for t in range(nnz):
                b = S[t] & lit_bits[g, nzw[t]]
                ones |= b != 0
                zeros |= b != S[t]
                if flip:
                    b ^= S[t]
                if b != 0:
                    h += _mix(b ^ (np.uint64(nzw[t]) * _GOLD))
            nb = 2 if ones and zeros else 0
        else:
            for g in range(lit_off[f], lit_off[f + 1]):
                nonempty = False
                for t in range(nnz):
                    if S[t] & lit_bits[g, nzw[t]]:
                        nonempty = True
                        break
                if nonempty:
                    nb += 1
            if nb == 2:  # the same hash as a binary feature splitting the rows alike
                for g in range(lit_off[f], lit_off[f + 1]):
                    if (S[0] & lit_bits[g, nzw[0]] & first) != 0:
                        continue
                    for t in range(nnz):
                        b = S[t] & lit_bits[g, nzw[t]]
                        if b != 0:
                            h += _mix(b ^ (np.uint64(nzw[t]) * _GOLD))
            elif nb > 2:
                for g in range(lit_off[f], lit_off[f + 1]):
                    bh = np.uint64(0)
                    for t in range(nnz):
                        b = S[t] & lit_bits[g, nzw[t]]
                        if b != 0:
                            bh += _mix(b ^ (np.uint64(nzw[t]) * _GOLD))
                    if bh != 0:
                        h += _mix(bh)
        if nb < 2:
            continue
        h = _mix(h ^ np.uint64(nb))
        idx = np.int64(h & np.uint64(mask))
        dup = False
        while htab[idx] >= 0:
            r = htab[idx]
            if hkey[r] == h and _same_blocks(f, out[r], S, nzw, nnz, lit_bits, lit_off):
                dup = True
                break
            idx = (idx + 1) & mask
        if dup:
            continue
        out[m] = f
        hkey[m] = h
        htab[idx] = m
        m += 1
    return m


@njit(cache=True)
def mark_duplicates(S, nzw, nnz, used, lit_bits, lit_off, UF, hkey, htab):
    """Mark as ``used`` every unused feature that :func:`distinct` leaves out on the rows
    ``S``; returns how many were marked. ``UF``: scratch of at least ``q`` entries."""
    q = used.shape[0]
    nu = 0
    for f in range(q):
        if not used[f]:
            UF[nu] = f
            nu += 1
    m = distinct(S, nzw, nnz, UF, nu, UF, lit_bits, lit_off, hkey, htab)
    for f in range(q):
        if not used[f]:
            used[f] = True
    for i in range(m):
        used[UF[i]] = False
    return nu - m
