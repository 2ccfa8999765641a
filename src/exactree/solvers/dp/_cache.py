"""The branch cache of the DP search (MurTree section 4.6), as plain arrays for Numba.

A branch (the set of feature literals on a root-to-node path) is keyed by the XOR of random
64-bit codes of its literals (Zobrist hashing: order-free and incremental) in an array hash
table; the full sorted literal list is kept to rule out collisions. Plain arrays, rather than a
Numba typed dict, keep start-up cheap (a typed dict compiles itself in every new process). Each entry owns ``2 ** depth_left`` budget slots
(node limits 0 .. 2**d - 1) holding a lower bound, the optimal cost when known, and the root
split of the optimal subtree (feature, budgets of its two children, size).
"""

from __future__ import annotations

import numpy as np
from numba import njit

INF = np.inf
UNKNOWN = -2  # feature slot value: optimum not known for this budget
LEAF = -1  # feature slot value: the optimum is a leaf

# Layout of `state`: number of entries, number of pool slots, entry capacity limit.
N_ENTRIES, N_SLOTS, LIMIT = 0, 1, 2


class Cache:
    """Holds the arrays; the Numba search functions take and return them (they may grow).

    ``index`` is an open-addressing hash table (linear probing, at most half full) of entry ids;
    ``meta`` holds per entry the key length, the hash and the offset of its budget slots.
    """

    def __init__(self, max_len: int, limit: int, capacity: int = 4096) -> None:
        self.index = np.full(2 * capacity, -1, np.int64)
        self.keys = np.zeros((capacity, max(max_len, 1)), np.int64)
        self.meta = np.zeros((capacity, 3), np.int64)
        self.bounds = np.zeros((capacity * 4, 2))  # lower bound, optimal cost
        self.split = np.zeros((capacity * 4, 4), np.int64)  # feature, left/right budget, size
        self.state = np.array([0, 0, limit], np.int64)

    def arrays(self):
        return self.index, self.keys, self.meta, self.bounds, self.split

    def update(self, arrays) -> None:
        self.index, self.keys, self.meta, self.bounds, self.split = arrays

    @property
    def n_entries(self) -> int:
        return int(self.state[N_ENTRIES])


@njit(cache=True)
def sorted_key(path, plen, out):
    """Insertion-sort the first ``plen`` literals of ``path`` into ``out``."""
    for i in range(plen):
        v = path[i]
        j = i - 1
        while j >= 0 and out[j] > v:
            out[j + 1] = out[j]
            j -= 1
        out[j + 1] = v


@njit(cache=True)
def _slot(h, mask):
    # Mix the bits (splitmix64 finaliser) so that Zobrist XORs spread over the table.
    x = np.uint64(h)
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(29)
    return np.int64(x & np.uint64(mask))


@njit(cache=True)
def find(index, keys, meta, h, path, plen, tmp):
    """Entry id of the branch ``path[:plen]`` with hash ``h``, or -1."""
    mask = index.shape[0] - 1
    i = _slot(h, mask)
    sorted_done = False
    while index[i] >= 0:
        e = index[i]
        if meta[e, 1] == h and meta[e, 0] == plen:
            if not sorted_done:
                sorted_key(path, plen, tmp)
                sorted_done = True
            same = True
            for j in range(plen):
                if keys[e, j] != tmp[j]:
                    same = False
                    break
            if same:
                return e
        i = (i + 1) & mask
    return -1


@njit(cache=True)
def insert(index, keys, meta, bounds, split, state, h, path, plen, n_slots, tmp):
    """Add an entry for ``path[:plen]`` with ``n_slots`` budget slots.

    Returns ``(entry, index, keys, meta, bounds, split)``; arrays grow by doubling, and the
    entry is -1 when the entry limit is reached (the search stays correct, only caches less).
    """
    e = state[N_ENTRIES]
    if e >= state[LIMIT]:
        return -1, index, keys, meta, bounds, split
    if e >= keys.shape[0]:
        keys2 = np.zeros((2 * keys.shape[0], keys.shape[1]), np.int64)
        keys2[: keys.shape[0]] = keys
        meta2 = np.zeros((2 * meta.shape[0], 3), np.int64)
        meta2[: meta.shape[0]] = meta
        keys, meta = keys2, meta2
    if 2 * (e + 1) > index.shape[0]:  # keep the table at most half full
        index = np.full(2 * index.shape[0], -1, np.int64)
        mask = index.shape[0] - 1
        for old in range(e):
            i = _slot(meta[old, 1], mask)
            while index[i] >= 0:
                i = (i + 1) & mask
            index[i] = old
    s = state[N_SLOTS]
    if s + n_slots > bounds.shape[0]:
        bounds2 = np.zeros((2 * bounds.shape[0] + n_slots, 2))
        bounds2[: bounds.shape[0]] = bounds
        split2 = np.zeros((2 * split.shape[0] + n_slots, 4), np.int64)
        split2[: split.shape[0]] = split
        bounds, split = bounds2, split2
    sorted_key(path, plen, tmp)
    for j in range(plen):
        keys[e, j] = tmp[j]
    meta[e, 0] = plen
    meta[e, 1] = h
    meta[e, 2] = s
    mask = index.shape[0] - 1
    i = _slot(h, mask)
    while index[i] >= 0:
        i = (i + 1) & mask
    index[i] = e
    for b in range(n_slots):
        bounds[s + b, 0] = 0.0
        bounds[s + b, 1] = INF
        split[s + b, 0] = UNKNOWN
        split[s + b, 1] = -1
        split[s + b, 2] = -1
        split[s + b, 3] = -1
    state[N_ENTRIES] = e + 1
    state[N_SLOTS] = s + n_slots
    return e, index, keys, meta, bounds, split


@njit(cache=True)
def lower_bound(meta, bounds, e, budget, n_slots):
    """Best known lower bound for ``budget``: bounds of larger budgets also hold (Prop. 4.6.2)."""
    if e < 0:
        return 0.0
    s = meta[e, 2]
    lb = 0.0
    for b in range(budget, n_slots):
        v = bounds[s + b, 0]
        if bounds[s + b, 1] < INF and bounds[s + b, 1] > v:
            v = bounds[s + b, 1]
        if v > lb:
            lb = v
    return lb


@njit(cache=True)
def store_optimal(meta, bounds, split, e, budget, cost, feature, left_budget, right_budget, size):
    """Record an optimal subtree; it is optimal for every budget from its size up (Prop. 4.6.1)."""
    if e < 0:
        return
    s = meta[e, 2]
    lo = size if 0 <= size < budget else budget
    for b in range(lo, budget + 1):
        if split[s + b, 0] == UNKNOWN:
            bounds[s + b, 0] = cost
            bounds[s + b, 1] = cost
            split[s + b, 0] = feature
            split[s + b, 1] = left_budget
            split[s + b, 2] = right_budget
            split[s + b, 3] = size


@njit(cache=True)
def store_lower_bound(meta, bounds, e, budget, lb):
    if e < 0:
        return
    s = meta[e, 2]
    if lb > bounds[s + budget, 0]:
        bounds[s + budget, 0] = lb
