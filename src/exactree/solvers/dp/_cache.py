"""The branch cache of the DP search (MurTree section 4.6), as plain arrays for Numba.

A branch (the set of feature literals on a root-to-node path) is keyed by the XOR of random
64-bit codes of its literals (Zobrist hashing: order-free and incremental) in an array hash
table; the full sorted literal list is kept to rule out collisions. Plain arrays, rather than a
Numba typed dict, keep start-up cheap (a typed dict compiles itself in every new process). Each entry owns ``2 ** depth_left`` budget slots
(node limits 0 .. 2**d - 1) holding a lower bound, the optimal cost when known, and the root
split of the optimal subtree (feature, budgets of its two children, size).
"""

from __future__ import annotations

import os

import numpy as np
from numba import njit

INF = np.inf
UNKNOWN = -2  # feature slot value: optimum not known for this budget
LEAF = -1  # feature slot value: the optimum is a leaf

# Layout of `state`: number of entries, number of pool slots, entry capacity limit, most bytes
# the arrays may take, and FULL: set (1) when an entry was refused for want of those bytes.
N_ENTRIES, N_SLOTS, LIMIT, MAX_BYTES, FULL = range(5)
# Row bytes of the arrays: a key literal, an entry's meta, a hash table slot, a budget slot.
KEY_BYTES, META_BYTES, INDEX_BYTES, SLOT_BYTES = 8, 24, 8, 48


class Cache:
    """Holds the arrays; the Numba search functions take and return them (they may grow).

    ``index`` is an open-addressing hash table (linear probing, at most half full) of entry ids;
    ``meta`` holds per entry the key length, the hash and the offset of its budget slots.
    """

    def __init__(self, max_len: int, limit: int, capacity: int = 4096,
                 max_bytes: float = np.inf) -> None:
        self.index = np.full(2 * capacity, -1, np.int64)
        self.keys = np.zeros((capacity, max(max_len, 1)), np.int64)
        self.meta = np.zeros((capacity, 3), np.int64)
        self.bounds = np.zeros((capacity * 4, 2))  # lower bound, optimal cost
        self.split = np.zeros((capacity * 4, 4), np.int64)  # feature, left/right budget, size
        self.state = np.array([0, 0, limit, min(max_bytes, 2.0**62), 0], np.int64)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays())

    @property
    def full(self) -> bool:
        """An entry was refused because the arrays would have outgrown their byte limit."""
        return bool(self.state[FULL])

    def arrays(self):
        return self.index, self.keys, self.meta, self.bounds, self.split

    def update(self, arrays) -> None:
        self.index, self.keys, self.meta, self.bounds, self.split = arrays

    @property
    def n_entries(self) -> int:
        return int(self.state[N_ENTRIES])

    def dump(self, path: str, first: int = 0) -> int:
        """Write entries ``first`` on (their budget slots follow those of the entries before)
        to ``path``, through a file beside it renamed at the end: a reader sees the whole file
        or none. Returns the number of entries, the ``first`` of the next call."""
        n, s = int(self.state[N_ENTRIES]), int(self.state[N_SLOTS])
        s0 = int(self.meta[first, 2]) if first < n else s
        part = f"{path}.part"
        with open(part, "wb") as fh:
            fh.write(np.array([n - first, self.keys.shape[1], s - s0], np.int64).tobytes())
            for a in (self.keys[first:n], self.meta[first:n] - [0, 0, s0], self.bounds[s0:s],
                      self.split[s0:s]):
                fh.write(np.ascontiguousarray(a).tobytes())
        os.replace(part, path)
        return n

    def merge_file(self, path: str) -> int:
        """Merge the entries :meth:`dump` wrote to ``path``; the number of entries added. None
        are when the union could take more than half of the byte or entry limit: the room left
        is the search's own."""
        with open(path, "rb") as fh:
            n, width, s = np.fromfile(fh, np.int64, 3).tolist()
            need = n * (width * KEY_BYTES + META_BYTES + 2 * INDEX_BYTES) + s * SLOT_BYTES
            if (2 * (self.nbytes + need) > self.state[MAX_BYTES]
                    or 2 * (self.n_entries + n) > self.state[LIMIT]):
                return 0
            keys = np.fromfile(fh, np.int64, n * width).reshape(n, width)
            meta = np.fromfile(fh, np.int64, n * 3).reshape(n, 3)
            bounds = np.fromfile(fh, np.float64, s * 2).reshape(s, 2)
            split = np.fromfile(fh, np.int64, s * 4).reshape(s, 4)
        tmp = np.zeros(max(width, self.keys.shape[1]) + 1, np.int64)
        added, *arrays = merge(*self.arrays(), self.state, keys, meta, bounds, split, tmp)
        self.update(arrays)
        return int(added)


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

    Returns ``(entry, index, keys, meta, bounds, split)``. Arrays grow by doubling, less where
    that would pass ``state[MAX_BYTES]`` (counting the old array beside its copy). The entry
    is -1 when the entry limit is reached (the search stays correct, only caches less) or when
    the byte limit leaves no room (then ``state[FULL]`` is set: the search stops).
    """
    e = state[N_ENTRIES]
    if e >= state[LIMIT] or state[FULL]:
        return -1, index, keys, meta, bounds, split
    s = state[N_SLOTS]
    grow_entries = e >= keys.shape[0]
    grow_index = 2 * (e + 1) > index.shape[0]  # keep the table at most half full
    grow_slots = s + n_slots > bounds.shape[0]
    if grow_entries or grow_index or grow_slots:
        room = state[MAX_BYTES] - (index.shape[0] * INDEX_BYTES + keys.size * KEY_BYTES
                                   + meta.shape[0] * META_BYTES + bounds.shape[0] * SLOT_BYTES)
        # A grown array is allocated beside the old one (counted in the current bytes).
        need = 0
        if grow_index:  # the table doubles (its rows are rehashed: no partial growth)
            need += 2 * index.shape[0] * INDEX_BYTES
        n_rows = keys.shape[0]
        if grow_entries:
            row = keys.shape[1] * KEY_BYTES + META_BYTES
            n_rows = min(2 * keys.shape[0], max((room - need) // row, 0))
            need += n_rows * row
        n_slot_rows = bounds.shape[0]
        if grow_slots:
            n_slot_rows = min(2 * bounds.shape[0] + n_slots, max((room - need) // SLOT_BYTES, 0))
            need += n_slot_rows * SLOT_BYTES
        if need > room or n_rows <= e or n_slot_rows < s + n_slots:
            state[FULL] = 1
            return -1, index, keys, meta, bounds, split
        if grow_entries:
            keys2 = np.zeros((n_rows, keys.shape[1]), np.int64)
            keys2[: keys.shape[0]] = keys
            meta2 = np.zeros((n_rows, 3), np.int64)
            meta2[: meta.shape[0]] = meta
            keys, meta = keys2, meta2
        if grow_index:
            index = np.full(2 * index.shape[0], -1, np.int64)
            mask = index.shape[0] - 1
            for old in range(e):
                i = _slot(meta[old, 1], mask)
                while index[i] >= 0:
                    i = (i + 1) & mask
                index[i] = old
        if grow_slots:
            bounds2 = np.zeros((n_slot_rows, 2))
            bounds2[: bounds.shape[0]] = bounds
            split2 = np.zeros((n_slot_rows, 4), np.int64)
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


@njit(cache=True, nogil=True)
def merge(index, keys, meta, bounds, split, state, o_keys, o_meta, o_bounds, o_split, tmp):
    """Add what another cache of the same problem knows (entries ``o_*``, as :func:`insert`
    lays them out): optima this one lacks and higher lower bounds. Both hold only facts about
    their branches, so the union does too. Stops short of the entry limit and never marks the
    cache full (the search would stop). Returns ``(entries added, index, keys, meta, bounds,
    split)``."""
    n = o_meta.shape[0]
    added = 0
    if state[FULL]:
        return added, index, keys, meta, bounds, split
    for o in range(n):
        plen, h, os_ = o_meta[o, 0], o_meta[o, 1], o_meta[o, 2]
        n_slots = (o_meta[o + 1, 2] if o + 1 < n else o_bounds.shape[0]) - os_
        e = find(index, keys, meta, h, o_keys[o], plen, tmp)
        if e < 0:
            if state[N_ENTRIES] + 1 >= state[LIMIT]:
                break
            e, index, keys, meta, bounds, split = insert(index, keys, meta, bounds, split, state,
                                                         h, o_keys[o], plen, n_slots, tmp)
            if e < 0:
                state[FULL] = 0
                break
            added += 1
        s = meta[e, 2]
        for b in range(n_slots):
            if split[s + b, 0] == UNKNOWN and o_split[os_ + b, 0] != UNKNOWN:
                bounds[s + b, 0] = o_bounds[os_ + b, 0]
                bounds[s + b, 1] = o_bounds[os_ + b, 1]
                for j in range(4):
                    split[s + b, j] = o_split[os_ + b, j]
            elif o_bounds[os_ + b, 0] > bounds[s + b, 0] and split[s + b, 0] == UNKNOWN:
                bounds[s + b, 0] = o_bounds[os_ + b, 0]
    return added, index, keys, meta, bounds, split
