"""Binary features regrouped into *ordered features* for the threshold-aware search.

An ordered feature is a column of bucket indices ``0..B`` with one split per bucket boundary:
split ``b`` sends a row left when its bucket is ``<= b``. Each split is one binary feature of
the :class:`~exactree.data.binarize.Binarizer` (``split_feature``), possibly complemented
(``split_flip``: left is where the binary feature is *false*), so a tree found over ordered
features translates back to the binary features and from there to the raw columns.

* The thresholds of one numeric column form one ordered feature (the bucket is the number of
  thresholds below the value).
* A numeric column with missing values gives two ordered features over its thresholds: one
  with the missing rows ranked below every value (bucket 0: its first split is ``missing`` vs
  the rest and every later split sends missing values left), one with them above every value
  (its last split is the rest vs ``missing``; every split sends missing values right). Their
  splits are the binarizer's ``x <= t or missing``, ``x <= t`` and ``x is not missing`` tests.
* A ``column == category`` test is a two-bucket feature.
* Binary features whose row sets are nested (a numeric column in thermometer code,
  ``x <= t1``, ``x <= t2``, ... in either orientation) are merged into one ordered feature, so
  pre-binarised numeric data gets the same search as raw numbers. Merging is tried between
  neighbouring binary features, which is how thermometer codes are laid out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from numba import njit

from ..solvers._clock import now
from .binarize import LE, MISSING_TRUE, NO_MISSING, NOT_MISSING, Binarizer
from .validation import TimeLimitReached, check_deadline


@dataclass
class OrderedFeatures:
    """``bucket`` (n_ordered, n_samples) int32; ``split_feature[f][b]`` the binary feature of split
    ``b`` of ordered feature ``f``; ``split_flip[f][b]`` whether its left side is that feature's
    false side. ``n_splits`` = number of binary splits represented."""

    bucket: np.ndarray
    split_feature: list[np.ndarray]
    split_flip: list[np.ndarray]

    @property
    def n_features(self) -> int:
        return len(self.split_feature)

    @property
    def n_splits(self) -> int:
        return int(sum(len(s) for s in self.split_feature))

    @property
    def nbytes(self) -> int:
        """Bytes of the buckets and the split maps."""
        return int(self.bucket.nbytes + sum(a.nbytes for a in self.split_feature)
                   + sum(a.nbytes for a in self.split_flip))


@njit(cache=True)
def _chain_insert(level, k, inside, seen, rank):
    """Refine the chain ``level`` (row -> level ``0..k-1``) in place by the row set ``inside``
    if that set is a prefix of levels in one orientation (splitting at most one level), in
    one pass over the rows: ``(number of levels now, whether the set had to be complemented,
    ok)``; not ``ok`` (``level`` unchanged) when it does not nest. ``seen`` (bool) and
    ``rank`` (int64) are scratch of ``2k`` entries or more."""
    n = level.shape[0]
    has_in, has_out = seen[:k], seen[k:2 * k]
    has_in[:] = False
    has_out[:] = False
    for r in range(n):
        if inside[r]:
            has_in[level[r]] = True
        else:
            has_out[level[r]] = True
    first_in = first_out = k
    last_in = last_out = -1
    for b in range(k):
        if has_in[b]:
            first_in = min(first_in, b)
            last_in = b
        if has_out[b]:
            first_out = min(first_out, b)
            last_out = b
    if last_in < 0 or last_out < 0:
        return k, False, False  # constant on these rows: nothing to merge
    if last_in <= first_out:
        flip = False  # the set's rows come first: they go left of the new cut
    elif last_out <= first_in:
        flip = True
    else:
        return k, False, False
    # Row r goes to (level, side) with side 0 left of the new cut; levels renumbered densely.
    present = seen[:2 * k]
    present[:] = False
    for r in range(n):
        present[2 * level[r] + (inside[r] == flip)] = True
    acc = -1
    for key in range(2 * k):
        acc += present[key]
        rank[key] = acc
    for r in range(n):
        level[r] = rank[2 * level[r] + (inside[r] == flip)]
    return acc + 1, flip, True


@njit(cache=True)
def heap_class_weights(bucket, labels, weights, tree_f, tree_b, n_classes):
    """Class weights reaching every node of a heap-layout tree over ordered features (node
    ``i`` splits on feature ``tree_f[i]``, -1 for a leaf, sending a row to ``2i+1`` when its
    bucket is ``<= tree_b[i]``, else to ``2i+2``; nodes of the last level are leaves): an
    ``(nodes, n_classes)`` float array. Each node's weights are summed in row order, as
    ``np.bincount`` over the node's rows would (the same floats)."""
    H = tree_f.shape[0]
    counts = np.zeros((H, n_classes))
    for r in range(labels.shape[0]):
        i = 0
        while True:
            counts[i, labels[r]] += weights[r]
            f = tree_f[i]
            if f < 0 or 2 * i + 2 >= H:
                break
            i = 2 * i + 1 if bucket[f, r] <= tree_b[i] else 2 * i + 2
    return counts


def ordered_features(binarizer: Binarizer, X: np.ndarray, deadline: float | None = None,
                     min_mean_splits: float | None = None) -> OrderedFeatures | None:
    """Ordered features of the encoded matrix ``X`` for a fitted ``binarizer``. ``deadline``
    (a ``time.perf_counter()`` value): past it, raise
    :class:`~exactree.data.validation.TimeLimitReached` (the clock is read once per feature).
    ``min_mean_splits``: None instead when the ordered features would carry fewer splits than
    this on average (found before their buckets are built)."""
    column, op, value = binarizer.column_, binarizer.op_, binarizer.value_
    missing = binarizer.missing_
    n = X.shape[0]
    runs = _numeric_runs(binarizer)
    if runs is not None and runs and all(j in binarizer.ranks for j, _, _ in runs):
        # One ordered feature per column of two or more thresholds, its buckets the ranks:
        # what the loop below gives, without its microseconds per feature.
        check_deadline(deadline)
        if min_mean_splits is not None and runs[-1][2] < min_mean_splits * len(runs):
            return None
        bucket = np.array([binarizer.ranks[j] for j, _, _ in runs], np.int32)
        index, flip = np.arange(runs[-1][2], dtype=np.int64), np.zeros(runs[-1][2], np.bool_)
        return OrderedFeatures(bucket.reshape(len(runs), n),
                               [index[start:stop] for _, start, stop in runs],
                               [flip[start:stop] for _, start, stop in runs])
    sizes = getattr(binarizer, "_numeric_runs", None)
    if (min_mean_splits is not None and sizes is not None and len(column) < min_mean_splits
            and max(sizes, default=0) <= 1):
        # Numeric columns of at most one threshold each (0/1 data): every feature is a single
        # one, all in one block of neighbours, whose chains carry at most all of them as splits
        # of one ordered feature: fewer than asked (what the plan below finds, sooner).
        return None
    # Runs of thresholds of one numeric column (and one missing side), and every category
    # test on its own. A run of one binary feature (a category, a column of one threshold) is
    # a two-bucket feature; neighbouring ones whose row sets nest merge into one ordered
    # feature (see _chains). Plan: ("run", start, stop) or ("chains", their features).
    plan: list[tuple] = []
    runs = _runs(column, op, missing)
    first = np.array([j for j, _ in runs], np.int64)
    single = ((np.array([stop for _, stop in runs], np.int64) - first == 1)
              & ((op[first] != LE) | (missing[first] != MISSING_TRUE))).tolist()
    for (j, stop), alone in zip(runs, single):
        if alone:
            if plan and plan[-1][0] == "chains":
                plan[-1][1].append(j)
            else:
                plan.append(("chains", [j]))
        else:
            plan.append(("run", j, stop))
    singles = [j for step in plan if step[0] == "chains" for j in step[1]]
    n_features = n_splits = 0
    if min_mean_splits is not None:
        for step in plan:
            if step[0] == "run":
                n_features += 1
                n_splits += step[2] - step[1] + (missing[step[1]] == MISSING_TRUE)
        # The chains add at most one split per single feature, in one ordered feature or
        # more: when even that cannot reach the mean, they need not be found (binary data).
        most = max(n_splits / n_features if n_features else 0.0,
                   (n_splits + len(singles)) / (n_features + 1))
        if most < min_mean_splits:
            return None
    chains = _single_chains(binarizer, X, [step[1] for step in plan if step[0] == "chains"],
                            deadline) if singles else []
    if min_mean_splits is not None:
        for levels, feat, _ in chains:
            n_features += len(levels)
            n_splits += sum(len(f) for f in feat)
        if n_splits < min_mean_splits * n_features:
            return None
    buckets: list[np.ndarray] = []
    feats: list[np.ndarray] = []
    flips: list[np.ndarray] = []
    # "x is not missing" of each column with missing values: the split that parts the missing
    # rows from all the others (first split of the missing-low feature, left = missing).
    not_missing = {int(column[f]): f for f in np.flatnonzero((op == LE) & (value == NOT_MISSING)
                                                             & (missing != NO_MISSING))}
    blocks = iter(chains)
    for step in plan:
        check_deadline(deadline)
        if step[0] == "chains":
            levels, feat, flip = next(blocks)
            buckets.extend(levels)
            feats.extend(feat)
            flips.extend(flip)
            continue
        j, stop = step[1], step[2]
        col = int(column[j])
        if missing[j] == MISSING_TRUE:  # missing rows first, in bucket 0
            x = X[:, col]
            buckets.append(np.where(np.isnan(x), 0,
                                    np.searchsorted(value[j:stop], x, side="left") + 1)
                           .astype(np.int32))
            feats.append(np.r_[not_missing[col], np.arange(j, stop)].astype(np.int64))
            flips.append(np.r_[True, np.zeros(stop - j, np.bool_)])
            continue
        # Missing rows (if any) last: NaN sorts above every threshold, NOT_MISSING included.
        rank = binarizer.ranks.get(col)
        if rank is None:
            rank = np.searchsorted(value[j:stop], X[:, col], side="left")
        buckets.append(rank.astype(np.int32))
        feats.append(np.arange(j, stop, dtype=np.int64))
        flips.append(np.zeros(stop - j, np.bool_))
    check_deadline(deadline)
    bucket = np.array(buckets, np.int32).reshape(len(buckets), n)
    return OrderedFeatures(np.ascontiguousarray(bucket), feats, flips)


def _single_chains(binarizer: Binarizer, X: np.ndarray, blocks: list[list[int]],
                   deadline: float | None) -> list[tuple[np.ndarray, list[np.ndarray],
                                                          list[np.ndarray]]]:
    """The ordered features of each block of neighbouring single binary features ``blocks``
    (binary feature indices): ``(buckets (features x rows), split features, split flips)``
    per block. A feature constant on the rows is left out (it splits nothing)."""
    singles = np.array([j for block in blocks for j in block], np.int64)
    # Rows where each binary feature is true, a feature per row.
    inside = np.ascontiguousarray(binarizer.transform(X, features=singles, deadline=deadline).T)
    varies = (inside.any(axis=1) & ~inside.all(axis=1)).tolist()
    out, at = [], 0
    for block in blocks:
        keep = [at + i for i in range(len(block)) if varies[at + i]]
        at += len(block)
        done, levels, member, flip, ends = _chains(inside[keep], math.inf if deadline is None
                                                   else float(deadline))
        if not done:
            raise TimeLimitReached
        feat = np.where(member >= 0, singles[keep][np.maximum(member, 0)], -1)
        starts = [0, *ends[:-1].tolist()]
        out.append((levels, [feat[a:b] for a, b in zip(starts, ends.tolist())],
                    [flip[a:b] for a, b in zip(starts, ends.tolist())]))
    return out


@njit(cache=True)
def _chains(inside, deadline):
    """Chains of nested row sets, as ordered features: ``inside`` (sets x rows) holds the
    rows where each binary feature is true (none empty or full). Each set in turn joins the
    open chain when it nests in it (see :func:`_chain_insert`), else it starts a new chain;
    split ``b`` of a chain (levels ``0..b`` left) is its first member whose left side (its
    true rows, or its false rows when it joined flipped) is that prefix of levels.

    Returns ``(done, levels, member, flip, ends)``: ``done`` is false when ``deadline`` (a
    ``time.perf_counter()`` value) passed first; ``levels`` (chains x rows, int32) every row's
    level in each chain; chain ``c``'s splits are ``member[ends[c - 1]:ends[c]]`` (the set
    making each split, -1 for none) with their ``flip``."""
    S, n = inside.shape
    levels = np.empty((S, n), np.int32)
    member = np.full(S, -1, np.int64)  # a chain of m sets has at most m splits
    flip = np.zeros(S, np.bool_)
    ends = np.empty(S, np.int64)
    flipped = np.zeros(S, np.bool_)
    cur = np.empty(n, np.int64)  # the open chain's levels, 0..k-1 (at most S + 1 of them)
    seen = np.zeros(2 * S + 4, np.bool_)
    rank = np.empty(2 * S + 4, np.int64)
    G = total = start = k = 0
    for s in range(S + 1):
        if s < S:
            if now() >= deadline:
                return False, levels[:0], member[:0], flip[:0], ends[:0]
            if s > start:
                k, fl, ok = _chain_insert(cur, k, inside[s], seen, rank)
                if ok:
                    flipped[s] = fl
                    continue
        if s > start:  # close the chain of sets start..s-1
            for r in range(n):
                levels[G, r] = cur[r]
            for t in range(start, s):
                b = -1
                for r in range(n):
                    if inside[t, r] != flipped[t] and cur[r] > b:
                        b = cur[r]
                if b < k - 1 and member[total + b] < 0:
                    member[total + b] = t
                    flip[total + b] = flipped[t]
            total += k - 1
            ends[G] = total
            G += 1
        if s < S:
            start, k = s, 2
            for r in range(n):
                cur[r] = 0 if inside[s, r] else 1
    return True, levels[:G], member[:total], flip[:total], ends[:G]


def _numeric_runs(binarizer: Binarizer) -> list[tuple[int, int, int]] | None:
    """``(column, start, stop)`` of the threshold run of every column with thresholds, when
    the binarizer's features are such runs only (numeric columns without missing values) and
    none is a single threshold (those may merge with their neighbours); else None."""
    sizes = getattr(binarizer, "_numeric_runs", None)
    if sizes is None or 1 in sizes:
        return None
    runs, start = [], 0
    for j, size in enumerate(sizes):
        if size:
            runs.append((j, start, start + size))
            start += size
    return runs


def _same_run(column: np.ndarray, op: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Whether binary feature ``i + 1`` continues the threshold run of feature ``i``."""
    return ((column[1:] == column[:-1]) & (op[1:] == LE) & (op[:-1] == LE)
            & (missing[1:] == missing[:-1]))


def _runs(column: np.ndarray, op: np.ndarray, missing: np.ndarray) -> list[tuple[int, int]]:
    """``(start, stop)`` of every run of binary features that forms one ordered feature."""
    m = len(column)
    new_run = np.ones(m, bool)
    new_run[1:] = ~_same_run(column, op, missing)
    starts = np.flatnonzero(new_run)
    return list(zip(starts.tolist(), np.append(starts[1:], m).tolist()))


def mean_splits_bound(binarizer: Binarizer, X: np.ndarray,
                      deadline: float | None = None) -> float:
    """An upper bound on the mean number of splits per ordered feature, without building them:
    only neighbouring single-split features whose row sets nest can merge. ``deadline``: as
    for :func:`ordered_features`."""
    column, op = binarizer.column_, binarizer.op_
    missing = binarizer.missing_
    m = len(column)
    if m == 0:
        return 0.0
    runs = _numeric_runs(binarizer)
    if runs is not None:  # one feature per run, none can merge
        return m / max(len(runs), 1)
    same_run = _same_run(column, op, missing)
    features = m - int(same_run.sum())  # numeric columns' threshold runs, each one feature
    single = np.ones(m, bool)
    single[1:] &= ~same_run
    single[:-1] &= ~same_run
    js = np.flatnonzero(single)
    step = max(32, (1 << 22) // max(X.shape[0], 1))  # ~4M cells a chunk: temporaries stay small
    for start in range(0, len(js) - 1, step):
        check_deadline(deadline)
        chunk = js[start:start + step + 1]  # with the next chunk's first feature
        inside = np.ascontiguousarray(binarizer.transform(X, features=chunk).T)  # sets x rows
        neighbours = np.diff(chunk) == 1  # only consecutive binary features can merge
        features -= int((_nested_sets(inside[:-1], inside[1:]) & neighbours).sum())
    return m / max(features, 1)


def _nested_sets(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row of two boolean matrices (sets x rows of data): whether the two row sets are
    nested in some orientation (one contains the other, or they are disjoint, or together
    cover every row): a cheap test before a chain insertion."""
    return (~(a & ~b).any(axis=1) | ~(b & ~a).any(axis=1) | ~(a & b).any(axis=1)
            | (a | b).all(axis=1))
