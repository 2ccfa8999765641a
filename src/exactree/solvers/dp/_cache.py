"""The branch cache of the DP search (MurTree section 4.6), as plain arrays for Numba.

A branch (the set of feature literals on a root-to-node path) is keyed by the XOR of random
64-bit codes of its literals (Zobrist hashing: order-free and incremental); the full sorted
literal list is kept to rule out collisions. Each entry owns ``2 ** depth_left`` budget slots
(node limits 0 .. 2**d - 1) holding a lower bound, the optimal cost when known, and the root
split of the optimal subtree (feature, budgets of its two children, size).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict

INF = np.inf
UNKNOWN = -2  # feature slot value: optimum not known for this budget
LEAF = -1  # feature slot value: the optimum is a leaf

# Layout of `state`: number of entries, number of pool slots, entry capacity limit.
N_ENTRIES, N_SLOTS, LIMIT = 0, 1, 2


class Cache:
    """Holds the arrays; the Numba search functions take and return them."""

    def __init__(self, max_len: int, limit: int, capacity: int = 4096) -> None:
        self.index = Dict.empty(key_type=types.int64, value_type=types.int64)
        self.keys = np.zeros((capacity, max(max_len, 1)), np.int64)
        self.meta = np.zeros((capacity, 3), np.int64)  # key length, next in chain, slot offset
        self.bounds = np.zeros((capacity * 4, 2))  # lower bound, optimal cost
        self.split = np.zeros((capacity * 4, 4), np.int64)  # feature, left/right budget, size
        self.state = np.array([0, 0, limit], np.int64)

    def arrays(self):
        return self.index, self.keys, self.meta, self.bounds, self.split, self.state

    def update(self, arrays) -> None:
        self.index, self.keys, self.meta, self.bounds, self.split, self.state = arrays

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
def find(index, keys, meta, h, path, plen, tmp):
    """Entry id of the branch ``path[:plen]`` with hash ``h``, or -1."""
    if h not in index:
        return -1
    e = index[h]
    sorted_key(path, plen, tmp)
    while e >= 0:
        if meta[e, 0] == plen:
            same = True
            for i in range(plen):
                if keys[e, i] != tmp[i]:
                    same = False
                    break
            if same:
                return e
        e = meta[e, 1]
    return -1


@njit(cache=True)
def insert(index, keys, meta, bounds, split, state, h, path, plen, n_slots, tmp):
    """Add an entry for ``path[:plen]`` with ``n_slots`` budget slots.

    Returns ``(entry, keys, meta, bounds, split)``; arrays grow by doubling and the entry is -1
    when the entry limit is reached (the search stays correct, it only caches less).
    """
    e = state[N_ENTRIES]
    if e >= state[LIMIT]:
        return -1, keys, meta, bounds, split
    if e >= keys.shape[0]:
        keys2 = np.zeros((2 * keys.shape[0], keys.shape[1]), np.int64)
        keys2[: keys.shape[0]] = keys
        meta2 = np.zeros((2 * meta.shape[0], 3), np.int64)
        meta2[: meta.shape[0]] = meta
        keys, meta = keys2, meta2
    s = state[N_SLOTS]
    if s + n_slots > bounds.shape[0]:
        bounds2 = np.zeros((2 * bounds.shape[0] + n_slots, 2))
        bounds2[: bounds.shape[0]] = bounds
        split2 = np.zeros((2 * split.shape[0] + n_slots, 4), np.int64)
        split2[: split.shape[0]] = split
        bounds, split = bounds2, split2
    sorted_key(path, plen, tmp)
    for i in range(plen):
        keys[e, i] = tmp[i]
    meta[e, 0] = plen
    meta[e, 1] = index[h] if h in index else -1
    meta[e, 2] = s
    index[h] = e
    for b in range(n_slots):
        bounds[s + b, 0] = 0.0
        bounds[s + b, 1] = INF
        split[s + b, 0] = UNKNOWN
        split[s + b, 1] = -1
        split[s + b, 2] = -1
        split[s + b, 3] = -1
    state[N_ENTRIES] = e + 1
    state[N_SLOTS] = s + n_slots
    return e, keys, meta, bounds, split


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
def store_optimal(meta, bounds, split, e, budget, cost, feature, left_budget, size):
    # The children's budgets stay those of `budget` (the subtree fits them) for smaller slots.
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
            split[s + b, 2] = budget - 1 - left_budget
            split[s + b, 3] = size


@njit(cache=True)
def store_lower_bound(meta, bounds, e, budget, lb):
    if e < 0:
        return
    s = meta[e, 2]
    if lb > bounds[s + budget, 0]:
        bounds[s + budget, 0] = lb
