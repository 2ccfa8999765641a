"""Python driver of the BRANCHES search: data layout, growable state, anytime loop, tree output.

The solver works on *solver features*: integer-coded columns ``Z[:, f]`` in ``0..card[f]-1``.
A categorical column is one solver feature (one child per category); a numeric column gives one
binary solver feature per threshold ``t`` (code 0 when ``x <= t``, code 1 otherwise), all of them
read from one column of ranks (:class:`Codes`, :mod:`._codes`): no rows x thresholds matrix.
The tree handed back is in the original feature space: CATEGORICAL nodes for the former,
THRESHOLD nodes for the latter.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ...limits import check_memory
from ...progress import Progress, new_board
from ...tree import Tree, TreeBuilder
from ..result import (INTERRUPTED, MEMORY_LIMIT, NODE_LIMIT, OPTIMAL, TIME_LIMIT,
                      SolveResult)
from . import _kernels as K
from ._chains import link_nested
from ._codes import disjoint, literal_bits
from ._pairs import branch_bounds, set_chains, workspace

_SEED = 0x5EED_B4A7C4E5
_MAX_LEN = 2**31 - 1


@dataclass
class Codes:
    """The solver features' codes without a rows x features matrix (see :mod:`._codes`):
    ``values`` (n, m) non-negative integers; solver feature ``f`` reads column ``column[f]``
    of it, as a categorical feature (its code the value) where ``index[f]`` is -1, else as a
    threshold feature: code 0 where the value is at most ``index[f]``, 1 elsewhere (a numeric
    column coded once by rank, each row's count of thresholds below its raw value, serves all
    its thresholds)."""

    values: np.ndarray
    column: np.ndarray
    index: np.ndarray


@dataclass
class FeatureMap:
    """Where each solver feature comes from: ``column[f]`` of the encoded matrix, and
    ``threshold[f]`` (NaN for a categorical column, else the binary test ``x <= threshold``)."""

    column: np.ndarray
    threshold: np.ndarray
    n_columns: int


def _bits(mask: np.ndarray, n_words: int) -> np.ndarray:
    """Rows of a boolean matrix ``(m, n)`` packed into ``(m, n_words)`` uint64 bitsets."""
    m = mask.shape[0]
    packed = np.zeros((m, n_words * 8), np.uint8)  # padded in bytes, not in booleans
    if m and mask.shape[1]:
        b = np.packbits(mask, axis=1, bitorder="little")
        packed[:, : b.shape[1]] = b
    return packed.view("<u8").astype(np.uint64).reshape(m, n_words)


def code_dtype(card: Sequence[int] | np.ndarray) -> type:
    """The integer type the search holds its codes in: bytes when every feature has at most
    256 categories (threshold features have two), else int32. The kernels are compiled for
    each type used."""
    return np.uint8 if len(card) == 0 or int(np.max(card)) <= 256 else np.int32


def _binary(Z: np.ndarray) -> np.ndarray:
    """``Z != 0`` for codes that are all 0 or 1: a view when they are bytes (no copy)."""
    return Z.view(np.bool_) if Z.dtype == np.uint8 else Z != 0


def _column_bits(mask: np.ndarray, n_words: int) -> np.ndarray:
    """Columns of a boolean matrix ``(n, m)`` packed into ``(m, n_words)`` uint64 bitsets, as
    :func:`_bits` packs the rows of its transpose. Bytes are formed from eight rows at a time
    (whole rows of bytes: ten times faster than ``np.packbits`` down the columns), then
    transposed."""
    n, m = mask.shape
    rows = np.ascontiguousarray(mask).view(np.uint8)
    out = np.zeros((n_words * 8, m), np.uint8)  # byte b of every column: rows 8b..8b+7
    full = n // 8
    eights = rows[: 8 * full].reshape(full, 8, m)
    for k in range(8):
        out[:full] |= eights[:, k] << k
    for k in range(n - 8 * full):
        out[full] |= rows[8 * full + k] << k
    return np.ascontiguousarray(out.T).view("<u8").astype(np.uint64).reshape(m, n_words)


def _row_groups(Z: np.ndarray | tuple, card: np.ndarray) -> np.ndarray:
    """Group id of every row; rows share a group exactly when all their codes are equal.
    ``Z``: a matrix of codes, or the kernels' pair (:func:`_pair`): then rows are grouped by
    one class a value column, the value itself where a categorical feature reads it, else the
    number of its thresholds below the row's rank (equal exactly when every threshold
    feature on it has equal codes)."""
    if isinstance(Z, tuple):
        V, zmap = Z
        classes, cards = [], []
        for c in np.unique(zmap[0]).tolist():
            on = zmap[0] == c
            if np.any(zmap[1, on] < 0):
                classes.append(V[:, c].astype(np.int64))
                cards.append(max(int(card[on].max()), int(V[:, c].max()) + 1 if len(V) else 1))
            else:
                ts = np.unique(zmap[1, on])
                classes.append(np.searchsorted(ts, V[:, c], side="left").astype(np.int64))
                cards.append(len(ts) + 1)
        if not classes:
            return np.zeros(V.shape[0], np.int64)
        return _row_groups(np.ascontiguousarray(np.stack(classes, axis=1)),
                           np.array(cards, np.int64))
    n, q = Z.shape
    if q == 0:
        return np.zeros(n, np.int64)
    if np.sum(np.log2(np.maximum(card, 2))) <= 62:  # exact mixed-radix key fits in int64
        mult = np.cumprod(np.r_[1, card[:-1]]).astype(np.int64)
        return np.unique(Z.astype(np.int64) @ mult, return_inverse=True)[1].ravel()
    if np.all(card == 2):  # each row's bits as one byte string: one sort of n strings
        packed = np.ascontiguousarray(np.packbits(_binary(Z), axis=1))
        keys = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
        return np.unique(keys, return_inverse=True)[1].ravel().astype(np.int64)
    order = np.lexsort(Z.T[::-1])
    rows = Z[order]
    starts = np.r_[True, np.any(rows[1:] != rows[:-1], axis=1)]
    group = np.empty(n, np.int64)
    group[order] = np.cumsum(starts) - 1
    return group


def _chains(lit_bits: np.ndarray, lit_off: np.ndarray, card: np.ndarray,
            fmap: FeatureMap | None) -> tuple[np.ndarray, np.ndarray]:
    """The chains of ordered thresholds (see :mod:`._chains`): ``nxt[f]``/``prv[f]``, the next
    and previous binary feature of ``f``'s column by threshold (-1: none). Neighbours are linked
    only where the data confirm the nesting: every row left (code 0) of the first is left of
    the second (no row in code 0's bitset of the first and code 1's of the second)."""
    q = len(card)
    nxt = np.full(q, -1, np.int64)
    prv = np.full(q, -1, np.int64)
    if fmap is None or q == 0:
        return nxt, prv
    thr = np.asarray(fmap.threshold, np.float64)
    col = np.asarray(fmap.column, np.int64)
    ok = (card == 2) & np.isfinite(thr)
    for c in np.unique(col[ok]):
        feats = np.flatnonzero(ok & (col == c))
        feats = feats[np.argsort(thr[feats], kind="stable")]
        a, b = feats[:-1], feats[1:]
        nested = disjoint(lit_bits, lit_off[a], lit_off[b] + 1)  # no copies of the bitsets
        nxt[a[nested]] = b[nested]
        prv[b[nested]] = a[nested]
    return nxt, prv


def _nested(Z: np.ndarray, card: np.ndarray, nxt: np.ndarray, prv: np.ndarray,
            lit_bits: np.ndarray | None = None) -> int:
    """Link nested binary features into chains (in place; see :mod:`._chains`): among the binary
    features not on a chain yet, ``a`` is followed by ``b`` when every row with code 0 on ``a``
    has code 0 on ``b`` and ``b`` has more such rows (thermometer-coded numeric columns, and
    any other nesting the data show). Each feature gets the nested feature with the fewest
    zero rows that has no predecessor yet (a path cover of the nesting order, strictly
    increasing along every chain, so every chain is nested end to end). ``lit_bits``: the bit
    rows of every literal (built from ``Z`` when not given). Returns the number of links."""
    card = np.asarray(card, np.int64)
    lit_off, _, built = _literals(Z, card, lit_bits is None)
    return int(link_nested(built if lit_bits is None else lit_bits, lit_off, card, nxt, prv))


def _pair(Z: np.ndarray | Codes | tuple) -> tuple[np.ndarray, np.ndarray]:
    """The kernels' form of the codes (see :mod:`._codes`): ``(V, zmap)``, ``V`` C-contiguous
    and writable, in bytes when its values fit (else int32), ``zmap`` (2, q) int64. A matrix
    ``Z`` of codes is its own ``V``, every feature categorical."""
    if isinstance(Z, tuple):
        return Z
    if isinstance(Z, Codes):
        V = np.asarray(Z.values)
        zmap = np.stack([np.asarray(Z.column, np.int64), np.asarray(Z.index, np.int64)])
    else:
        V = np.asarray(Z)
        zmap = np.stack([np.arange(V.shape[1], dtype=np.int64),
                         np.full(V.shape[1], -1, np.int64)])
    if V.dtype.kind not in "biu":
        V = V.astype(np.int64)
    top = int(V.max()) if V.size else 0
    V = np.require(V, np.uint8 if top <= 255 else np.int32, ["C_CONTIGUOUS", "WRITEABLE"])
    return V, np.ascontiguousarray(zmap)


def _feature_codes(Z: tuple, f: int) -> np.ndarray:
    """Codes of solver feature ``f`` on every row."""
    V, zmap = Z
    v = V[:, zmap[0, f]]
    return v.astype(np.int64) if zmap[1, f] < 0 else (v > zmap[1, f]).astype(np.int64)


def _literals(Z: np.ndarray | tuple, card: np.ndarray, bits: bool = True,
              deadline: float = np.inf) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Every literal ``feature == code`` in feature order: the offsets of each feature's
    literals (``len(card) + 1``), each literal's feature, and (with ``bits``) its rows as
    bitsets (:func:`_bits`). ``Z``: a matrix of codes, or the kernels' pair (:func:`_pair`),
    whose threshold features' bitsets are built from their column's ranks
    (:func:`._codes.literal_bits`); past ``deadline`` (``time.perf_counter()``), raises
    :class:`_OutOfTime`."""
    q = len(card)
    n = Z[0].shape[0] if isinstance(Z, tuple) else Z.shape[0]
    lit_off = np.zeros(q + 1, np.int64)
    lit_off[1:] = np.cumsum(card)
    lit_feat = np.repeat(np.arange(q, dtype=np.int64), card)
    if not bits:
        return lit_off, lit_feat, None
    n_words = max(1, (n + 63) // 64)
    out = np.zeros((int(lit_off[-1]), n_words), np.uint64)
    if isinstance(Z, tuple):
        V, zmap = Z
        thr = np.flatnonzero(zmap[1] >= 0)
        order = thr[np.lexsort((zmap[1, thr], zmap[0, thr]))].astype(np.int64)
        if not literal_bits(V, zmap, lit_off, order, out, float(deadline)):
            raise _OutOfTime
        return lit_off, lit_feat, out
    two = np.flatnonzero(card == 2)  # most features: code 1 packed once, code 0 its complement
    if len(two):
        ones = _column_bits(_binary(Z) if len(two) == q else Z[:, two] != 0, n_words)
        out[lit_off[two] + 1] = ones
        out[lit_off[two]] = ~ones & _bits(np.ones((1, n), bool), n_words)
    rest = np.flatnonzero(card != 2)
    if len(rest):
        lits = np.concatenate([np.arange(lit_off[f], lit_off[f + 1]) for f in rest])
        codes = lits - lit_off[lit_feat[lits]]
        out[lits] = _bits(Z.T[lit_feat[lits]] == codes[:, None], n_words)
    return lit_off, lit_feat, out


class _OutOfTime(Exception):
    """The set-up of :func:`solve` ran past its time limit."""


def _in_time(deadline: float) -> None:
    if time.perf_counter() >= deadline:
        raise _OutOfTime


def _check_codes(V: np.ndarray, zmap: np.ndarray, card: np.ndarray) -> None:
    """:class:`Codes` that the kernels can read: a column and an index for every feature,
    two categories for a threshold feature, categorical values below their count."""
    q = zmap.shape[1]
    if card.shape != (q,) or np.any(card < 1):
        raise ValueError("card must give a positive category count for every solver feature")
    if q and (zmap[0].min() < 0 or zmap[0].max() >= V.shape[1] or zmap[1].min() < -1):
        raise ValueError("Codes.column must name columns of Codes.values, Codes.index be >= -1")
    if np.any(card[zmap[1] >= 0] != 2):
        raise ValueError("a threshold feature of Codes (index >= 0) has two categories")
    cat = np.flatnonzero(zmap[1] < 0)
    if len(cat) and V.shape[0] and np.any(V[:, zmap[0, cat]].max(axis=0) >= card[cat]):
        raise ValueError("Codes.values hold a code outside 0..card-1 of a categorical feature")


def memory_need(n: int, q: int, G: int, m: int, n_classes: int, itemsize: int, cmax: int,
                depth2: bool = True, dedup: bool = True) -> tuple[int, int, int]:
    """Bytes :func:`solve` allocates beyond its inputs on ``n`` rows, ``q`` solver features of
    ``G`` literals (``cmax`` the most categories of one), ``m`` value columns of
    ``itemsize`` bytes and ``n_classes`` classes: ``(fixed, state, least_state)``, what it
    holds throughout (the codes in the kernels' form, the literal bitsets, the kernels' buffers
    and depth-2 workspace, the set-up's largest temporaries), its usual initial search state,
    and the least one that runs (the state then grows within ``memory_limit``)."""
    C = n_classes
    W = max(1, (n + 63) // 64)
    Wd = W if depth2 else 1
    fixed = (n * m * itemsize                       # the values, as the kernels read them
             + 8 * G * W                            # literal bitsets
             + 8 * (C + 6) * W                      # class, EQ, support bitsets
             + 8 * G * Wd + 8 * Wd * (q + 1)        # workspace: bitsets by literal, by feature
             + 8 * G * (3 * (C + 1) + 12)           # counts, bounds, keys by literal
             + 8 * q * 40 + 8 * (2 * q + 2) * 2     # by feature
             + 8 * (cmax + 1) ** 2 * (C + 1)        # cell table of a pair of features
             + 8 * n * (m + 6)                      # row groups (set-up), rows of a branch
             + 16 * (C + 1) * (q + 1) + (1 << 16))
    nodes = 1024 + 4 * G
    wide = 8 * ((q + 63) // 64) if dedup and q <= 256 else 0

    def state(nodes: int, lits: int, ch: int) -> int:
        table = 1 << max(4, int(math.ceil(math.log2(4 * nodes))))
        return (nodes * (4 * K.N_INT_FIELDS + 8 * (K.N_FLOAT_FIELDS + n_classes) + 8 + wide)
                + 4 * lits + 48 * (256 + 4 * q) + 4 * ch + 12 * table)

    return fixed, state(nodes, 4096 + 8 * G, nodes), state(G + 1025, 3 * G + 4096, G + 1025)


def _leaf_only(y: np.ndarray, w: np.ndarray, n_classes: int, fmap: FeatureMap, q: int,
               start_time: float) -> SolveResult:
    """The result of a solve whose set-up ran out of time: the root leaf, bound 0."""
    counts = np.bincount(y, weights=w, minlength=n_classes)
    builder = TreeBuilder(fmap.n_columns, n_classes)
    tree = builder.build(builder.leaf(counts, int(np.argmax(counts))))
    objective = float(counts.sum() - counts.max()) / float(w.sum())
    stats = {"iterations": 0, "expansions": 0, "branches": 0, "incumbent_given": False,
             "n_solver_features": q, "n_splits": 0, "accuracy_minus_penalty": 1.0 - objective,
             "time": time.perf_counter() - start_time}
    return SolveResult(tree=tree, objective=objective, lower_bound=0.0, status=TIME_LIMIT,
                       upper_bound=objective, stats=stats)


class _State:
    """The growable search arrays (see :mod:`._kernels` for their layout). Ids and offsets are
    int32 to halve memory; growth past 2**31 entries counts as the memory limit."""

    def __init__(self, n_classes: int, n_nodes: int, n_lits: int, n_acts: int, n_ch: int,
                 n_class_words: int = 0) -> None:
        self.nd_i = np.zeros((n_nodes, K.N_INT_FIELDS), np.int32)
        self.nd_f = np.zeros((n_nodes, K.N_FLOAT_FIELDS + n_classes), np.float64)
        self.nd_h = np.zeros(n_nodes, np.uint64)
        self.lit_store = np.zeros(n_lits, np.int32)
        self.ac_i = np.zeros((n_acts, K.N_ACT_FIELDS), np.int32)
        self.ac_f = np.zeros((n_acts, K.N_ACT_FLOATS), np.float64)
        self.ch = np.zeros(n_ch, np.int32)
        size = 1 << max(4, int(math.ceil(math.log2(4 * n_nodes))))
        self.ht_key = np.zeros(size, np.uint64)
        self.ht_val = np.full(size, -1, np.int32)
        self.ctr = np.zeros(K.N_COUNTERS, np.int64)
        self.nd_c = np.zeros((n_nodes, n_class_words), np.uint64)

    def arrays(self) -> tuple:
        return (self.nd_i, self.nd_f, self.nd_h, self.lit_store, self.ac_i, self.ac_f, self.ch,
                self.ht_key, self.ht_val, self.ctr, self.nd_c)

    @staticmethod
    def _new_len(a: np.ndarray, need: int, factor: float) -> int:
        return a.shape[0] if need <= a.shape[0] else max(need, int(factor * a.shape[0]))

    def grow(self, G: int, q: int, memory_limit: int) -> bool:
        """Enlarge what may overflow in the next iteration; False (nothing changed) when the
        arrays after growth, plus the largest copy in flight, would pass ``memory_limit`` bytes.
        Arrays double while that fits, then grow by smaller steps, so that the search can use
        most of the limit."""
        c = self.ctr
        need_nodes = int(c[K.C_NODES]) + G + 1
        need = {"nd_i": need_nodes, "nd_f": need_nodes, "nd_h": need_nodes, "nd_c": need_nodes,
                "lit_store": int(c[K.C_LITS]) + G * (int(c[K.C_MAXDEP]) + 2),
                "ac_i": int(c[K.C_ACTS]) + q + 1, "ac_f": int(c[K.C_ACTS]) + q + 1,
                "ch": int(c[K.C_CH]) + G + 1}
        size = self.ht_key.shape[0]
        while 2 * need_nodes > size:
            size *= 4 if 8 * need_nodes * 12 < memory_limit else 2
        if max(size, *need.values()) >= _MAX_LEN:  # ids and offsets are int32
            return False
        for factor in (2.0, 1.5, 1.25, 1.1):  # smaller steps would copy too often
            new_bytes = (size * 12 if size != self.ht_key.shape[0] else
                         self.ht_key.nbytes + self.ht_val.nbytes) + self.ctr.nbytes
            in_flight = 0
            for name, n in need.items():
                a = getattr(self, name)
                grown = self._new_len(a, n, factor)
                new_bytes += a.nbytes // a.shape[0] * grown
                if grown != a.shape[0]:
                    in_flight = max(in_flight, a.nbytes)
            if new_bytes + in_flight <= memory_limit:
                break
        else:
            return False
        for name, n in need.items():
            a = getattr(self, name)
            grown = self._new_len(a, n, factor)
            if grown != a.shape[0]:
                new = np.zeros((grown,) + a.shape[1:], a.dtype)
                new[: a.shape[0]] = a
                setattr(self, name, new)
        if size != self.ht_key.shape[0]:
            self.ht_key = np.zeros(0, np.uint64)  # free the old table before the new one
            self.ht_val = np.zeros(0, np.int32)
            self.ht_key = np.zeros(size, np.uint64)
            self.ht_val = np.full(size, -1, np.int32)
            K.rehash(self.nd_h, int(c[K.C_NODES]), self.ht_key, self.ht_val)
        return True

    def find_rows(self, rows: np.ndarray, dep: int, depth_keyed: bool, allmask: np.ndarray,
                  lit_bits: np.ndarray) -> int:
        """Node id of the branch with these rows (a boolean mask; at ``dep`` literals when
        ``depth_keyed``) in a memo keyed by rows, or -1."""
        S_all = _bits(rows[None, :], allmask.shape[0])[0]
        nzw = np.flatnonzero(S_all).astype(np.int64)
        S = np.ascontiguousarray(S_all[nzw])
        h = np.uint64(K.rows_key(S, nzw, len(nzw), lit_bits, -1, dep, depth_keyed))
        return int(K.find_rows(h, S, nzw, len(nzw), -1, dep, depth_keyed, allmask, lit_bits,
                               self.nd_i, self.lit_store, self.ht_key, self.ht_val))

    def find(self, lits: tuple[int, ...], zob: np.ndarray) -> int:
        """Node id of the branch with these sorted literals, or -1."""
        h = 0
        for g in lits:
            h ^= int(zob[g])
        mask = self.ht_key.shape[0] - 1
        idx = h & mask
        while self.ht_val[idx] >= 0:
            c = int(self.ht_val[idx])
            if int(self.ht_key[idx]) == h and self.nd_i[c, K.DEP] == len(lits):
                start = self.nd_i[c, K.LS]
                if tuple(self.lit_store[start : start + len(lits)].tolist()) == lits:
                    return c
            idx = (idx + 1) & mask
        return -1


def solve(Z: np.ndarray, card: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int,
          penalty: float, *, max_depth: int | None = None, time_limit: float | None = None,
          max_branches: int | None = None, memory_limit: int = 2048,
          feature_map: FeatureMap | None = None,
          child_rule: int = 0, keep_actions: int = 8, lookahead: int = 3,
          similar_support: bool = False, depth2: int = 16, dedup: bool = True,
          memo_rows: bool = True, split_budget: bool = True, ordered: bool = True,
          nested: bool = True, chain_similar: bool = False, refresh: bool = True,
          refine_kept: bool = True, progress: Progress | None = None,
          incumbent: Callable[[float], tuple[Tree, float] | None] | None = None,
          memory_ways_out: Sequence[str] | None = None) -> SolveResult:
    """Minimise ``weighted misclassification / total weight + penalty * splits`` with BRANCHES.

    Parameters
    ----------
    Z : (n, q) integer codes of the solver features, ``0 <= Z[:, f] < card[f]`` (best given
        as :func:`code_dtype` gives, C-contiguous and writable: otherwise copied), or
        :class:`Codes`, which hold the threshold features of a numeric column as one column of
        ranks (no rows x thresholds matrix).
    card : (q,) number of categories of each solver feature (one child per category).
    y, w : class indices ``0..n_classes-1`` and non-negative sample weights.
    penalty : the paper's lambda, the cost of one split (``0 <= penalty <= 1``).
    max_depth : optional limit on the number of splits along any root-to-leaf path.
    time_limit : seconds from the call; the search stops there with the best tree found and a
        proven lower bound (status ``"time_limit"``; a single leaf, bound 0, when the set-up
        itself ran out of time). The kernels read the clock before every iteration and in
        the long loops of an expansion, which past the limit stop refining bounds.
    max_branches : optional cap on stored branches (status ``"node_limit"`` when reached).
    progress : reports the search and stops it on Ctrl-C (status ``"interrupted"``, best tree and
        proven bound so far); see :mod:`exactree.progress`.
    incumbent : called once, with a number of seconds, if the search goes on after its first
        iteration (the root's expansion): it may return a tree of the same problem (splits of
        the solver features' kinds, over ``feature_map``'s columns) found by other means
        within that time, and its objective. A better one becomes the root's incumbent: the
        answer if the search stops first or proves it optimal (best-first search finds good
        trees late on wide numeric data, where a depth-limited optimum comes fast). Asked at
        that fixed point, not after some time, so the tree does not depend on the machine's
        speed (unless ``incumbent`` does). Speed and anytime quality, not the objective.
    memory_limit : MiB the solve may take beyond its inputs: the literal bitsets and the
        kernels' buffers (see :func:`memory_need`), estimated before they are allocated
        (:class:`~exactree.limits.MemoryLimitError` when they and the least search state do
        not fit), and the search state, which gets the rest (status ``"memory_limit"`` when
        it is full).
    memory_ways_out : the ways out named by that error (default: a larger ``memory_limit``,
        fewer rows or features).
    feature_map : how solver features map to the original columns (default: solver feature
        ``f`` is categorical column ``f``).
    child_rule : which incomplete child the selection descends into (see ``_kernels.run``).
    keep_actions : how many splits an expansion stores (the most promising; the others are
        summarised by their least bound and re-generated when needed). Memory, not results.
    lookahead : bound new child branches by their best split (one-step look-ahead) and solve
        those whose best subtree of depth <= 1 is provably optimal: 0 never, 1 when a split is
        first selected, ``d + 1`` also for every split evaluated by expansions of branches
        with fewer than ``d`` literals (default 3: the root and its children). Speed, not
        results.
    similar_support : with the look-ahead, also bound a new child branch by the bounds of its
        siblings (other splits of the same branch) minus the weight they do not share with it
        (GOSDT's similar-support bound). Speed, not results; off by default, as it prunes a
        few percent of branches but costs more than that in time on the shared data sets.
    depth2 : bound every child of every split evaluated by its best split (exact depth-1
        look-ahead from pair counts), and every branch stored by its best subtree of depth <= 2
        (solved outright, nothing stored below it, when that subtree meets the bound); replaces
        ``lookahead`` and ``similar_support`` when on. Speed and memory, not results.
    dedup : at every expansion, and in every depth-2 bound, keep one feature of every class of
        features that split the branch's rows alike (equal or complementary binary columns on
        those rows; in general the same non-empty blocks) and drop the features constant there
        (see :mod:`._classes`); a branch keeps the features found (few features only), for its
        expansions and its children's. Speed, not results.
    memo_rows : key the memo of branches by their rows (and, under ``max_depth``, their depth)
        instead of their literals: branches with the same rows have the same optimal subtree
        (the features their literals fix are constant there), so one node serves every split
        order and every set of literals selecting those rows (GOSDT keys its subproblems by
        their rows too). Speed and memory, not results.
    split_budget : with ``depth2``, a branch whose leaf cost is less than ``k * penalty`` (in
        weight) above the weight no split can separate has an optimal subtree with fewer than
        ``k`` splits: for ``k <= 3`` its best subtree of depth <= 2 (each child at its best
        stump or leaf) is optimal and settles it, and a child with ``k <= 2`` is bounded by its
        best stump exactly. Speed, not results.
    ordered : with ``depth2``, treat the threshold features of every numeric column (the binary
        features of ``feature_map`` with a finite threshold on one column, ordered by threshold,
        each left side checked on the data to hold the previous one's) as a chain: a bound proven
        for a child of one threshold bounds the nested children of the others (the optimum of a
        branch only grows with its rows), which lifts the bounds of whole runs of thresholds at
        once (see :mod:`._chains`). Speed, not results.
    nested : with ``depth2``, also chain the binary features that no threshold chain holds
        where the data nest them (every row with code 0 on one has code 0 on the next:
        thermometer-coded numeric columns given as 0/1 columns, see :func:`_nested`); the same
        lifting as ``ordered``. Speed, not results.
    chain_similar : with ``depth2`` and chains (``ordered`` or ``nested``), also lift bounds
        the other way along a chain, less the weight in between: an optimal tree of a branch,
        applied to a branch holding its rows and ``r`` more weight, costs at most ``r`` more, so
        a bound on the larger branch less ``r`` bounds the smaller one (GOSDT's similar-support
        bound, on the nested children of one branch's chained splits; see
        :func:`._chains.lift`). Speed, not results; off by default: it changes the order of
        the search, which helped on some problems and hurt on others (CPU seconds to prove,
        off / on: wine at ``penalty`` 0.01, 37 / 26; at 0.005, 44 / 109; heart-cleveland at
        0.015, 24 / 23).
    refresh : at every branch the selection descends through, first bring the bound of its best
        action up to date from the action's children and choose again while it rose (children
        are shared through the memo, so their bounds rise through other branches: without it
        the search descends on stale bounds until the path's Bellman update); an action's bound
        then never falls below what its expansion proved (a bound lifted along a chain can
        exceed the sum of its children's), nor rises by rounding alone. Speed, not results.
    refine_kept : with ``depth2``, an expansion refines the bounds of its splits (each child new
        to the memo bounded by its best split, from the branch's pair counts) in increasing
        order of bound until the ``keep_actions + 1`` least refined bounds are no more than
        every bound not refined, rather than until the least one is: the splits it keeps are
        ranked, and the bound of those it leaves out (which decides when it is expanded again)
        is, by refined bounds; a split's children then seldom need storing only to find its
        bound too weak. Off: only the best split is settled so. Speed, not results
        (``penalty`` 0.01, CPU seconds to prove, off / on: heart-cleveland 107 / 87).

    The objective, bounds and ``stats`` (``iterations``, ``expansions``, ``branches``, ...) are
    reported in the returned :class:`~exactree.solvers.result.SolveResult`.
    """
    start_time = time.perf_counter()
    card = np.array(card, dtype=np.int64)
    y = np.array(y, dtype=np.int64)
    w = np.array(w, dtype=np.float64)
    if not 0.0 <= penalty <= 1.0:
        raise ValueError(f"penalty must be in [0, 1], got {penalty!r}")
    codes = isinstance(Z, Codes)
    if not codes:
        Z = np.asarray(Z)
        if Z.ndim != 2:
            raise ValueError("Z must be a matrix of codes (rows x features) or Codes")
        n, q = Z.shape
        if card.shape != (q,) or np.any(card < 1):
            raise ValueError("card must give a positive category count for every column of Z")
        if n and q and (Z.min() < 0 or np.any(Z.max(axis=0) >= card)):
            raise ValueError("Z holds a code outside 0..card-1")
    # Writable C-contiguous arrays (read-only inputs would make Numba compile again); the
    # values, never written, are copied only when they must be, and held in bytes where they
    # fit: a quarter of the memory, and of the memory traffic, of int32.
    Z = _pair(Z)
    V, zmap = Z
    n, q = V.shape[0], zmap.shape[1]
    if codes:
        _check_codes(V, zmap, card)
    if y.shape != (n,) or w.shape != (n,):
        raise ValueError(f"y and w need one entry per row of Z ({n})")
    if n and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(f"y holds a class index outside 0..{n_classes - 1}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
        raise ValueError("w must be finite, non-negative and not all zero")
    if feature_map is None:
        feature_map = FeatureMap(np.arange(q), np.full(q, np.nan), q)
    # Memory: what the search holds besides its state (the literal bitsets and the kernels'
    # buffers, about their size again), estimated before any of it is allocated; the state
    # gets the rest of memory_limit.
    G = int(card.sum())
    fixed, state0, state_min = memory_need(n, q, G, V.shape[1], n_classes, V.itemsize,
                                           int(card.max()) if q else 1, bool(depth2),
                                           bool(dedup))
    budget = int(memory_limit) << 20
    check_memory(fixed + state_min, budget, f"BRANCHES on {n} rows and {q} solver features "
                 f"({G} literals)", memory_ways_out or ("a larger memory_limit", "fewer rows",
                                                        "fewer features"))
    deadline = np.inf if time_limit is None else start_time + float(time_limit)
    total = float(w.sum())
    lam_w = penalty * total
    tol = 1e-9 * max(total, 1.0)
    weighted = bool(np.any(w != w[0]))
    w0 = float(w[0])
    try:
        lit_off, lit_feat, lit_bits = _literals(Z, card, deadline=deadline)
        G = int(lit_off[-1])
        n_words = lit_bits.shape[1]
        cls_bits = _bits(y[None, :] == np.arange(n_classes)[:, None], n_words)
        allmask = _bits(np.ones((1, n), bool), n_words)[0]
        # Equivalent points: rows outvoted within their group of identical feature vectors are
        # misclassified by every tree (GOSDT's equivalent-points bound).
        if n:
            group = _row_groups(Z, card)
            gw = np.zeros((group.max() + 1, n_classes))
            np.add.at(gw, (group, y), w)
            minority = y != np.argmax(gw, axis=1)[group]
            del group, gw
        else:
            minority = np.zeros(0, bool)
        _in_time(deadline)
        mis_bits = _bits(minority[None, :], n_words)[0]
        eq_root = float(w[minority].sum())
        nxt, prv = _chains(lit_bits, lit_off, card, feature_map) if ordered and depth2 else (
            np.full(q, -1, np.int64), np.full(q, -1, np.int64))
        n_nested = _nested(Z, card, nxt, prv, lit_bits) if nested and depth2 and n else 0
        _in_time(deadline)
    except _OutOfTime:  # the set-up ran past the time limit: the root leaf, nothing proven
        return _leaf_only(y, w, n_classes, feature_map, q, start_time)
    rng = np.random.default_rng(_SEED)
    zob = rng.integers(1, np.iinfo(np.int64).max, size=G, dtype=np.int64).astype(np.uint64)
    zob |= rng.integers(0, 2, size=G).astype(np.uint64) << np.uint64(63)

    # each branch's classes of features (see _kernels: nd_c), kept when they take few words
    n_class_words = (q + 63) // 64 if dedup and q <= 256 else 0
    small = fixed + state0 > budget  # the least state that runs, where the usual does not fit
    st = _State(n_classes, G + 1025 if small else 1024 + 4 * G,
                3 * G + 4096 if small else 4096 + 8 * G, 256 + 4 * q,
                G + 1025 if small else 1024 + 4 * G, n_class_words)
    counts = np.bincount(y, weights=w, minlength=n_classes)
    leaf = float(counts.sum() - counts.max())
    st.nd_i[0] = (0, 0, -1, 0, 0, 0)
    st.nd_f[0, : K.N_FLOAT_FIELDS] = (leaf, min(leaf, lam_w + eq_root), leaf, eq_root, np.inf)
    st.nd_f[0, K.N_FLOAT_FIELDS :] = counts
    if leaf <= lam_w + eq_root + tol or q == 0 or max_depth == 0:
        st.nd_f[0, K.LB] = leaf
        st.nd_i[0, K.FLG] = K.COMPLETE | K.EXPANDED
    md = -1 if max_depth is None else int(max_depth)
    if memo_rows:
        nzw_all = np.arange(n_words, dtype=np.int64)
        st.nd_h[0] = K.rows_key(allmask, nzw_all, n_words, lit_bits, -1, 0, md >= 0)
    K._insert(st.nd_h[0], 0, st.ht_key, st.ht_val)
    st.ctr[K.C_NODES] = 1

    max_nodes = 0 if max_branches is None else int(max_branches)
    # One kernel call until the root is expanded (the incumbent is asked for there), then one
    # to the end; each stops at the deadline (read before every iteration and in the long
    # loops of an expansion), at Ctrl-C (through the board) or to grow the state.
    board = new_board(deadline)
    given = None  # (tree, cost) from `incumbent`, while the root's incumbent
    chunk = 1 if incumbent is not None else 1 << 60
    out_of_memory = interrupted = False
    code = K.BUDGET
    while True:
        args = (lit_bits, cls_bits, mis_bits, allmask, lit_off, lit_feat, card, zob, Z, y, w,
                weighted, w0, lam_w, tol, md, child_rule, keep_actions, chunk, max_nodes,
                int(lookahead), bool(similar_support), int(depth2), bool(dedup),
                bool(memo_rows), bool(split_budget), nxt, prv, bool(chain_similar),
                bool(refresh), bool(refine_kept), *st.arrays(), board)
        code = (K.run(*args) if progress is None else
                progress.run(K.run, board, *args, scale=1.0 / total))
        if code == K.DONE or code == K.NODE_LIMIT:
            break
        if progress is not None and progress.interrupted:
            interrupted = True
            break
        if code == K.GROW:
            if not st.grow(G, q, budget - fixed):
                out_of_memory = True
                break
            continue
        now = time.perf_counter()
        if now >= deadline:
            break
        if incumbent is not None and st.nd_i[0, K.FLG] & K.EXPANDED:
            with (progress.deferred_interrupts() if progress is not None
                  else contextlib.nullcontext()):
                given = _ask(incumbent, st, total, tol,
                             None if time_limit is None else deadline - now, max_depth)
            incumbent = None
            chunk = 1 << 60
            if progress is not None and progress.interrupted:
                interrupted = True
                break
            if st.nd_i[0, K.FLG] & K.COMPLETE:
                break
    proven = bool(st.nd_i[0, K.FLG] & K.COMPLETE)
    # a proven tree cannot improve; one cut short can, in the time left (none past time_limit)
    settle_by = -np.inf if proven or interrupted else deadline  # (np.inf without a limit)
    if st.nd_i[0, K.UBA] == K.UBA_GIVEN:
        tree, cost = given
    else:
        tree, cost = _extract(st, zob, Z, y, w, weighted, w0, n_classes, card, lit_off, lam_w,
                              tol, md, feature_map, lit_bits, cls_bits, mis_bits, bool(dedup),
                              allmask if memo_rows else None, nxt, prv, bool(chain_similar),
                              settle_by)
    objective = cost / total
    if cost > st.nd_f[0, K.UB] + 1e-6 * max(total, 1.0):
        raise AssertionError("BRANCHES: extracted tree costs more than the search's incumbent")
    lower = min(float(st.nd_f[0, K.LB]) / total, objective)
    if proven:
        status = OPTIMAL
        if abs(cost - st.nd_f[0, K.LB]) > 1e-6 * max(total, 1.0):
            raise AssertionError("BRANCHES: extracted tree cost differs from the proven optimum")
        lower = objective
    else:
        status = (MEMORY_LIMIT if out_of_memory else INTERRUPTED if interrupted
                  else NODE_LIMIT if code == K.NODE_LIMIT else TIME_LIMIT)
    c = st.ctr
    stats = {
        "iterations": int(c[K.C_ITERS]), "expansions": int(c[K.C_EXPANSIONS]),
        "branches": int(c[K.C_NODES]), "actions": int(c[K.C_ACTS]), "memo_hits": int(c[K.C_HITS]),
        "pruned_actions": int(c[K.C_PRUNED]), "re_expansions": int(c[K.C_REEXP]),
        "lookaheads": int(c[K.C_LOOKAHEADS]), "solved_by_lookahead": int(c[K.C_SOLVED]),
        "raised_by_similar_support": int(c[K.C_SIMILAR]),
        "depth2_bounds": int(c[K.C_D2]), "solved_by_depth2": int(c[K.C_D2SOLVED]),
        "depth2_rows": int(c[K.C_D2ROWS]), "dedup_removed": int(c[K.C_DEDUP]),
        "lifted_by_chains": int(c[K.C_LIFTED]),
        "refreshed": int(c[K.C_REFRESHED]), "nested_links": n_nested,
        "incumbent_given": given is not None,
        "n_solver_features": q, "n_splits": tree.n_splits,
        "accuracy_minus_penalty": 1.0 - objective, "root_bound": float(st.nd_f[0, K.LB]) / total,
        "time": time.perf_counter() - start_time,
    }
    return SolveResult(tree=tree, objective=objective, lower_bound=lower, status=status,
                       upper_bound=objective, stats=stats)


def _ask(incumbent: Callable, st: _State, total: float, tol: float, time_left: float | None,
         max_depth: int | None) -> tuple[Tree, float] | None:
    """Ask ``incumbent`` (see :func:`solve`) for a tree, with a tenth of the time left (at
    most 10 s; 2 s without a time limit), and make it the (expanded) root's incumbent where it
    beats the search's. Returns ``(tree, cost in weight)`` when it does, else None."""
    budget = 2.0 if time_left is None else min(0.1 * time_left, 10.0)  # Ctrl-C waits for it
    got = incumbent(budget) if budget > 0 else None
    if got is None:
        return None
    tree, objective = got
    if max_depth is not None and tree.max_depth > max_depth:
        raise ValueError(f"the incumbent tree has depth {tree.max_depth}, deeper than "
                         f"max_depth={max_depth}")
    if not np.isfinite(objective) or objective < 0:
        raise ValueError(f"the incumbent tree's objective must be finite and >= 0, "
                         f"got {objective!r}")
    cost = objective * total
    if cost >= st.nd_f[0, K.UB] - tol:
        return None
    st.nd_f[0, K.UB] = cost
    st.nd_i[0, K.UBA] = K.UBA_GIVEN
    if st.nd_f[0, K.LB] >= cost - tol:  # proven by the bound already
        st.nd_f[0, K.LB] = cost
        st.nd_i[0, K.FLG] |= K.COMPLETE
    return tree, cost


class _Depth2:
    """Best subtree of depth <= 2 of a branch, by the kernels' rule (:mod:`._pairs`)."""

    def __init__(self, Z, y, w, weighted, w0, lit_bits, cls_bits, mis_bits, card, lit_off,
                 n_classes, lam_w, tol, max_depth, dedup, nxt, prv, chain_similar):
        n, q = Z[0].shape[0], Z[1].shape[1]
        self.args = (Z, y, w, weighted, w0, lit_bits, cls_bits, mis_bits, lit_off, card,
                     n_classes, lam_w, tol, max_depth, dedup)
        self.n_words = lit_bits.shape[1]
        self.ws = workspace(n, self.n_words, q, int(lit_off[-1]), n_classes,
                            int(card.max()) if q else 1, new_board())
        set_chains(self.ws, nxt, prv, chain_similar)

    def __call__(self, rows: np.ndarray, used: set, target: float,
                 deadline: float) -> tuple[int, np.ndarray]:
        """Root feature (-1: a leaf) and, per literal, the child's split (-1: a leaf) of the
        best subtree of depth <= 2 of the branch with these rows (a boolean mask), or, once
        ``time.perf_counter()`` passes ``deadline``, of the first found costing at most
        ``target`` (inf: the best stump or leaf), in the kernels' order."""
        (Z, y, w, weighted, w0, lit_bits, cls_bits, mis_bits, lit_off, card, K, lam_w, tol, md,
         dedup) = self.args
        q = Z[1].shape[1]
        UF = np.array([f for f in range(q) if f not in used] + [0], np.int64)
        S = _bits(rows[None, :], self.n_words)[0]
        nzw = np.arange(self.n_words, dtype=np.int64)
        branch_bounds(S, nzw, self.n_words, len(used), UF, q - len(used), Z, y, w, weighted, w0,
                      lit_bits, cls_bits, mis_bits, lit_off, card, K, lam_w, tol, md, True, q,
                      dedup, False, self.ws, target, deadline)
        out, bf = self.ws[12], self.ws[9]
        return int(out[2]), bf


def _extract(st: _State, zob: np.ndarray, Z: np.ndarray, y: np.ndarray, w: np.ndarray,
             weighted: bool, w0: float, n_classes: int, card: np.ndarray, lit_off: np.ndarray,
             lam_w: float, tol: float, max_depth: int, fmap: FeatureMap, lit_bits: np.ndarray,
             cls_bits: np.ndarray, mis_bits: np.ndarray, dedup: bool,
             allmask: np.ndarray | None, nxt: np.ndarray, prv: np.ndarray,
             chain_similar: bool, deadline: float) -> tuple[Tree, float]:
    """Follow the incumbent action of every expanded branch from the root. A branch never
    expanded (not stored, or stored with its look-ahead or depth-2 bounds only), or expanded
    with its stored subtree still the incumbent (``UBA_DEPTH2``), gets its best subtree of
    depth <= 2 (it may beat the incumbent when the search stopped early); past ``deadline``
    (``time.perf_counter()``), the first found that costs at most what the kernels count as
    its incumbent (its upper bound when stored, else its best subtree of depth <= 1), which a
    few pair rows give: finding the best can take every feature's (17 s over 13k
    thresholds). Returns the tree and its cost (in weight units)."""
    n = len(y)
    q = Z[1].shape[1]
    lit_feat = np.repeat(np.arange(q), card)
    depth2 = _Depth2(Z, y, w, weighted, w0, lit_bits, cls_bits, mis_bits, card, lit_off,
                     n_classes, lam_w, tol, max_depth, dedup, nxt, prv, chain_similar)
    # literals, rows, fallback label, forced split (None: look the branch up; -1: a leaf)
    entries: list[list] = [[(), np.ones(n, bool), -1, None]]
    info: list[tuple] = [None]
    i = 0
    cost = 0.0
    n_splits = 0
    while i < len(entries):
        lits, rows, fallback, forced = entries[i]
        counts = np.bincount(y[rows], weights=w[rows], minlength=n_classes)
        label = int(np.argmax(counts)) if counts.sum() > 0 else max(fallback, 0)
        f = -1
        kid_forced = None  # the children's forced splits (None: look them up)
        if forced is not None:
            f = forced
            if f >= 0:
                kid_forced = [-1] * int(card[f])
        elif rows.any() and len(lits) < q and (max_depth < 0 or len(lits) < max_depth):
            node = (st.find(lits, zob) if allmask is None else
                    st.find_rows(rows, len(lits), max_depth >= 0, allmask, lit_bits))
            if (node >= 0 and st.nd_i[node, K.FLG] & K.EXPANDED
                    and st.nd_i[node, K.UBA] != K.UBA_DEPTH2):
                act = int(st.nd_i[node, K.UBA])
                f = int(st.ac_i[act, K.FEAT]) if act >= 0 else -1
            else:
                # what the kernels count for it: a stored branch its upper bound, another its
                # best subtree of depth <= 1 (a child solved by its depth-1 look-ahead, or a
                # leaf)
                target = float(st.nd_f[node, K.UB]) if node >= 0 else np.inf
                f, bf = depth2(rows, {int(lit_feat[g]) for g in lits}, target, deadline)
                if f >= 0:
                    kid_forced = [int(bf[lit_off[f] + j]) for j in range(int(card[f]))]
        if f < 0:
            cost += float(counts.sum() - (counts[label] if counts.sum() > 0 else 0.0))
            info[i] = (counts, label, -1, [])
        else:
            n_splits += 1
            kids = []
            codes_f = _feature_codes(Z, f)
            for j in range(int(card[f])):
                g = int(lit_off[f]) + j
                kids.append(len(entries))
                kf = None if kid_forced is None else kid_forced[j]
                entries.append([tuple(sorted(lits + (g,))), rows & (codes_f == j), label, kf])
                info.append(None)
            info[i] = (counts, label, f, kids)
        i += 1
    cost += lam_w * n_splits
    builder = TreeBuilder(fmap.n_columns, n_classes)
    ids = [0] * len(entries)
    for i in range(len(entries) - 1, -1, -1):  # children have larger indices than parents
        counts, label, f, kids = info[i]
        if f < 0:
            ids[i] = builder.leaf(counts, label)
        elif np.isnan(fmap.threshold[f]):
            ids[i] = builder.categorical(int(fmap.column[f]), [ids[k] for k in kids], counts, label)
        else:
            ids[i] = builder.threshold(int(fmap.column[f]), float(fmap.threshold[f]),
                                       [ids[k] for k in kids], counts, label)
    return builder.build(ids[0]), cost
