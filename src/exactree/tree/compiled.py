"""Compiled trees: Zhang's bitvector-matrix form ``T(x) = v[argmax(B σ(S x − t))]``.

A binary tree with ``L`` leaves and ``L − 1`` internal (split) nodes becomes four arrays:

``S`` (n_internal x n_monomials)
    Selection matrix. Row ``j`` holds the rule of internal node ``j`` over the monomial basis
    ``powers`` (one monomial ``prod_f x_f ** powers[m, f]`` per column). The basis starts with the
    ``n_features`` raw columns, so an axis-parallel node is a one-hot row and a hyperplane a
    general weight row; polynomial rules append their higher-degree monomials.
``t`` (n_internal)
    Thresholds.
``B`` (n_leaves x n_internal, 0/1)
    Bitvector (structure) matrix. Rows are the leaves left to right, columns the internal nodes
    in preorder; column ``j`` is 0 exactly on the leaves of node ``j``'s *left* subtree.
``v`` (n_leaves x n_classes)
    Leaf values: the weighted training class totals of each leaf (``Tree.value`` rows). For a
    regression tree (``regression=True``) the three columns ``(mean, weight, impurity)`` of each
    leaf (see :class:`~exactree.tree.Tree`); it predicts the mean.

``σ`` is the step ``σ(z) = 1 if z > 0 else 0``, so a node is "false" (goes right) when its rule
value exceeds the threshold, which is exactly the :class:`~exactree.tree.Tree` convention "left
when value <= threshold". ``argmax`` returns the first maximum: the first leaf whose bit is set
in every false node's bitvector, which is the leaf the traversal reaches.

Structural rules (Zhang, Section 3) are checked for every ``B``: each column's zeros form one
non-empty contiguous block (the left subtree's leaves) with ones elsewhere, and the blocks nest as
a binary tree (this is equivalent to the paper's four rules and makes ``B`` ↔ tree a bijection,
Lemma 1). Columns may come in any order (Theorem 1 identifies trees up to a column
permutation); :meth:`CompiledTree.to_tree` always rebuilds the tree in preorder.

A missing value (NaN) goes the way ``missing_left`` (one flag per column of ``B``) says at an
axis-parallel node, as in :meth:`Tree.apply`; one reaching a LINEAR rule is an error.

Prediction computes the rule values exactly as :meth:`Tree.rule_values` does (raw column reads
for axis-parallel nodes, the same term-by-term polynomial evaluation for LINEAR nodes), so rows
on a threshold go the same way as in the traversal. Three evaluators give identical leaves (see
:meth:`CompiledTree.leaf_rows`): the formula as a NumPy matrix product, a Numba bitvector-AND
kernel, and a Numba root-to-leaf walk over the structure decoded from ``B`` (the default: the
fastest on CPUs at every depth measured). The same formula also runs on ``torch``/``jax``
arrays (GPU inference) without importing either library.
"""

from __future__ import annotations

import json
import warnings
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from .tree import (CATEGORICAL, LEAF, LINEAR, THRESHOLD, Tree, TreeBuilder, feature_matrix,
                   prefer_compiled, weighted_terms)

__all__ = ["CompiledTree", "check_bitvector_matrix", "compile_tree", "predict_leaves"]

_FORMAT = "exactree.CompiledTree/1"


# ---------------------------------------------------------------------------------- structure
def _decode(B: np.ndarray) -> tuple[np.ndarray, ...]:
    """Check ``B`` against the structural rules and recover the tree it encodes.

    Returns ``(order, lo, mid, left, right)``: ``order`` lists the columns in preorder; column
    ``j`` splits the leaf range ``[lo[j], hi)`` into a left part ``[lo[j], mid[j])`` and a right
    part ``[mid[j], hi)``; ``left[j]``/``right[j]`` are its children, a column index or
    ``-1 - r`` for leaf row ``r``. Raises ``ValueError`` naming the first violated rule.
    """
    if B.ndim != 2:
        raise ValueError(f"B must be a 2-D matrix, got {B.ndim} dimensions")
    n_leaves, n_int = B.shape
    if n_leaves == 0 or n_int != n_leaves - 1:
        raise ValueError(
            f"B must have one column fewer than rows (n_leaves x n_leaves-1), got shape {B.shape}")
    if not np.all((B == 0) | (B == 1)):
        raise ValueError("B must hold only 0 and 1")
    lo = np.empty(n_int, np.int64)
    mid = np.empty(n_int, np.int64)
    by_start: dict[int, list[tuple[int, int]]] = {}
    for j in range(n_int):
        zeros = np.flatnonzero(B[:, j] == 0)
        if len(zeros) == 0:
            raise ValueError(f"column {j} of B has no 0: every internal node has a left subtree")
        if len(zeros) == n_leaves:
            raise ValueError(f"column {j} of B has no 1: every internal node has a right subtree")
        if zeros[-1] - zeros[0] + 1 != len(zeros):
            raise ValueError(
                f"column {j} of B: its 0s (the leaves of the node's left subtree) are not one "
                "contiguous block of rows; rows must list the leaves left to right")
        lo[j], mid[j] = zeros[0], zeros[-1] + 1
        by_start.setdefault(int(lo[j]), []).append((int(mid[j]), j))
    for lst in by_start.values():
        lst.sort()
        for a, b in zip(lst, lst[1:]):
            if a[0] == b[0]:
                raise ValueError(f"columns {a[1]} and {b[1]} of B are equal: no tree has two "
                                 "nodes with the same left subtree")
    order = np.empty(n_int, np.int64)
    children = np.empty((2, n_int), np.int64)
    used = 0
    stack = [(0, n_leaves, -1, 0)]  # (leaf range, parent column, slot)
    while stack:  # preorder: the node splitting [a, b) is the column whose 0-block is the
        a, b, parent, slot = stack.pop()  # longest one starting at a and ending before b
        if b - a == 1:
            if parent >= 0:
                children[slot, parent] = -1 - a
            continue
        best = None
        for m, j in by_start.get(a, ()):
            if m < b:
                best = (m, j)
        if best is None:
            raise ValueError(
                f"B is not a tree: no column splits the leaves {a}..{b - 1} (the 0-blocks of "
                "the columns do not nest like the left subtrees of a binary tree)")
        m, j = best
        if parent >= 0:
            children[slot, parent] = j
        order[used] = j
        used += 1
        stack.append((m, b, j, 1))
        stack.append((a, m, j, 0))
    # Every column was placed at most once (distinct blocks) and used == L-1 here, so all were.
    return order, lo, mid, children[0], children[1]


def check_bitvector_matrix(B: Any) -> np.ndarray:
    """Raise ``ValueError`` unless ``B`` is the bitvector matrix of a binary tree.

    Rows are leaves left to right; columns are internal nodes in any order. Returns the column
    permutation that puts them in preorder.
    """
    return _decode(np.asarray(B))[0]


def _dfs(tree: Tree) -> tuple[list[int], np.ndarray, np.ndarray]:
    """Left-to-right preorder of a binary ``tree`` and each node's leaf range ``[first, end)``."""
    order: list[int] = []
    stack = [0]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(tree.children(i).tolist()))
    first = np.zeros(tree.n_nodes, np.int64)
    end = np.zeros(tree.n_nodes, np.int64)
    n_seen = 0
    for i in order:  # leaves appear in preorder left to right
        if tree.kind[i] == LEAF:
            first[i], n_seen = n_seen, n_seen + 1
            end[i] = n_seen
    for i in reversed(order):  # children come after their parent in preorder
        if tree.kind[i] != LEAF:
            kids = tree.children(i)
            first[i], end[i] = first[kids[0]], end[kids[-1]]
    return order, first, end


# ------------------------------------------------------------------------------- regression
def regression_rows(tree: Tree) -> np.ndarray:
    """A regression tree's nodes as ``(mean, weight, impurity)`` rows."""
    return np.column_stack([tree.value[:, 0], tree.node_weight, tree.impurity])


def merge_regression(rows: np.ndarray) -> np.ndarray:
    """``(mean, weight, impurity)`` of the union of disjoint nodes given as such rows: the
    weighted mean, the summed weight, and the summed impurity plus each part's weight times its
    squared distance to the joint mean."""
    weight = float(rows[:, 1].sum())
    mean = float(rows[:, 0] @ rows[:, 1]) / weight if weight > 0 else float(rows[:, 0].mean())
    impurity = float(rows[:, 2].sum() + rows[:, 1] @ (rows[:, 0] - mean) ** 2)
    return np.array([mean, weight, impurity])


# ------------------------------------------------------------------------------ categorical
def _expand_categorical(tree: Tree) -> tuple[Tree, np.ndarray]:
    """An equivalent binary tree: every categorical node becomes a chain of ``code <= c + 0.5``
    tests (one per run of consecutive codes sharing a child; a child reached by separate runs is
    duplicated). Returns the tree and, per new node, the original node id (for leaves: what
    ``apply`` reports).

    Internal values of the chain are the sums of the *distinct* original children they cover, so
    duplicated subtrees are not double-counted there; leaves keep their original values.
    """
    regression = tree.is_regression
    b = TreeBuilder(tree.n_features, tree.n_classes, regression=regression)
    values = regression_rows(tree) if regression else tree.value
    origin: dict[int, int] = {}

    def emit(i: int) -> int:
        kind = tree.kind[i]
        kids = tree.children(i).tolist()
        if kind == LEAF:
            new = b.leaf(values[i], tree.label[i])
        elif kind == THRESHOLD:
            new = b.threshold(tree.feature[i], tree.threshold[i], [emit(k) for k in kids],
                              values[i], tree.label[i],
                              missing_left=bool(tree.missing_left[i]))
        elif kind == LINEAR:
            lo, hi = tree.rule_ptr[i], tree.rule_ptr[i + 1]
            new = b.linear(tree.rule_coef[lo:hi], tree.rule_powers[lo:hi], tree.threshold[i],
                           [emit(k) for k in kids], values[i], tree.label[i])
        else:
            runs: list[tuple[int, int]] = []  # (child, last code of the run)
            for code, k in enumerate(kids):
                if runs and runs[-1][0] == k:
                    runs[-1] = (k, code)
                else:
                    runs.append((k, code))
            new = emit(runs[-1][0])
            covered = {runs[-1][0]}
            for k, last in reversed(runs[:-1]):
                covered.add(k)
                if regression:
                    value = merge_regression(values[sorted(covered)])
                    label = 0
                else:
                    value = tree.value[sorted(covered)].sum(axis=0)
                    label = int(np.argmax(value))
                new = b.threshold(tree.feature[i], last + 0.5, [emit(k), new], value, label)
            if len(runs) > 1:
                origin[new] = i  # the chain's first test stands for the categorical node
            return new
        origin[new] = i
        return new

    root = emit(0)
    bt = b.build(root, feature_names=tree.feature_names, class_names=tree.class_names,
                 categories=tree.categories, missing_seen=tree.missing_seen)
    # TreeBuilder numbers nodes in preorder of the builder ids: recover the map.
    order: list[int] = []
    stack = [root]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(list(dict.fromkeys(b._nodes[i][3]))))
    return bt, np.array([origin.get(i, -1) for i in order], np.int64)


# --------------------------------------------------------------------------- compiled tree
class CompiledTree:
    """A binary decision tree as Zhang's matrices ``(S, t, B, v)`` (see the module docstring).

    Build one with :meth:`Tree.compile` (or :func:`compile_tree`), or directly from matrices::

        CompiledTree(S, t, B, v)                       # axis-parallel / hyperplane rows
        CompiledTree(S, t, B, v, powers=P)             # rows over the monomials P

    Parameters beyond ``(S, t, B, v)`` are optional and default to what the matrices imply:
    ``labels`` (leaf class index, default ``argmax(v)``), ``powers`` (monomial basis, default the
    identity), ``node_kind`` (THRESHOLD for a row that is exactly one raw column with weight 1,
    else LINEAR), ``rule_ptr``/``rule_monomial``/``rule_coef`` (the terms of each LINEAR row in
    evaluation order, default the nonzero entries of the row), ``leaf_node`` (what :meth:`apply`
    reports, default the leaf ids of :meth:`to_tree`), names as in :class:`Tree`, and
    ``category_codes`` (``(feature, n_codes)`` pairs checked at prediction for trees whose
    categorical nodes were expanded), and ``internal_value``/``internal_label`` (the value
    and the label of every internal node, by column of ``B``; default: the sum of its leaves'
    ``v`` rows and its argmax). The last two carry what an internal node predicts for
    objectives whose label is not the majority class (cost-sensitive trees), so that
    :meth:`to_tree` gives back the compiled tree exactly. ``missing_left`` (by column of
    ``B``): whether a missing value goes left at an axis-parallel node (default: to the side
    whose leaves hold more weight in ``v``, the left on a tie); ``missing_seen`` (per feature):
    as :attr:`Tree.missing_seen`. ``regression``: ``v`` and ``internal_value`` hold
    ``(mean, weight, impurity)`` rows and :meth:`predict` returns the mean.
    """

    def __init__(
        self,
        S: Any,
        t: Any,
        B: Any,
        v: Any,
        *,
        labels: Any = None,
        powers: Any = None,
        node_kind: Any = None,
        rule_ptr: Any = None,
        rule_monomial: Any = None,
        rule_coef: Any = None,
        leaf_node: Any = None,
        feature_names: Sequence[str] | None = None,
        class_names: Sequence[Any] | None = None,
        categories: Sequence[Sequence[Any] | None] | None = None,
        category_codes: Any = None,
        internal_value: Any = None,
        internal_label: Any = None,
        missing_left: Any = None,
        missing_seen: Any = None,
        regression: bool = False,
    ) -> None:
        self.regression = bool(regression)
        self.B = np.asarray(B)
        if self.B.ndim == 2 and np.all((self.B == 0) | (self.B == 1)):
            self.B = self.B.astype(np.uint8)
        self._order, self._lo, self._mid, self._left, self._right = _decode(self.B)
        n_leaves, n_int = self.B.shape
        self.S = np.asarray(S, np.float64)
        if self.S.ndim != 2 or self.S.shape[0] != n_int:
            raise ValueError(f"S must have one row per internal node ({n_int}), got shape "
                             f"{self.S.shape}")
        self.t = np.asarray(t, np.float64).reshape(-1)
        if self.t.shape != (n_int,):
            raise ValueError(f"t must have one entry per internal node ({n_int}), got "
                             f"{self.t.shape}")
        if not np.all(np.isfinite(self.S)) or not np.all(np.isfinite(self.t)):
            raise ValueError("S and t must be finite")
        self.v = np.asarray(v, np.float64)
        if self.v.ndim == 1:
            self.v = self.v[:, None]
        if self.v.ndim != 2 or self.v.shape[0] != n_leaves:
            raise ValueError(f"v must have one row per leaf ({n_leaves}), got shape {self.v.shape}")
        if self.regression and self.v.shape[1] != 3:
            raise ValueError("a regression tree's v needs the columns (mean, weight, impurity)")
        self.labels = (np.zeros(n_leaves, np.int64) if labels is None and self.regression
                       else np.argmax(self.v, axis=1) if labels is None
                       else np.asarray(labels, np.int64).reshape(-1))
        if self.labels.shape != (n_leaves,) or np.any(self.labels < 0) or \
                np.any(self.labels >= self.v.shape[1]):
            raise ValueError("labels must hold one class index (a column of v) per leaf")
        n_mono = self.S.shape[1]
        if powers is None:
            self.powers = np.eye(n_mono, dtype=np.int64)
        else:
            self.powers = np.asarray(powers, np.int64)
        if self.powers.ndim != 2 or self.powers.shape[0] != n_mono or np.any(self.powers < 0):
            raise ValueError(f"powers must be a non-negative (n_monomials={n_mono}, n_features) "
                             f"matrix, got shape {self.powers.shape}")
        self.n_features = self.powers.shape[1]
        if n_mono < self.n_features or not np.array_equal(
                self.powers[: self.n_features], np.eye(self.n_features, dtype=np.int64)):
            raise ValueError("the first n_features monomials (columns of S) must be the raw "
                             "features (an identity block in powers)")
        onehot = (np.count_nonzero(self.S, axis=1) == 1) & \
            (np.argmax(self.S != 0, axis=1) < self.n_features) & \
            (self.S[np.arange(n_int), np.argmax(self.S != 0, axis=1)] == 1.0)
        if node_kind is None:
            self.node_kind = np.where(onehot, THRESHOLD, LINEAR).astype(np.int8)
        else:
            self.node_kind = np.asarray(node_kind, np.int8).reshape(-1)
            if self.node_kind.shape != (n_int,) or np.any(
                    (self.node_kind != THRESHOLD) & (self.node_kind != LINEAR)):
                raise ValueError("node_kind must be THRESHOLD or LINEAR for every internal node")
            if np.any(~onehot[self.node_kind == THRESHOLD]):
                raise ValueError("a THRESHOLD node needs a one-hot row of S on a raw feature")
        self.feature = np.where(self.node_kind == THRESHOLD, np.argmax(self.S != 0, axis=1), -1)
        if rule_ptr is None:
            ptr, mono, coef = [0], [], []
            for j in range(n_int):
                if self.node_kind[j] == LINEAR:
                    nz = np.flatnonzero(self.S[j])
                    mono.extend(nz.tolist())
                    coef.extend(self.S[j, nz].tolist())
                ptr.append(len(mono))
            self.rule_ptr = np.array(ptr, np.int64)
            self.rule_monomial = np.array(mono, np.int64)
            self.rule_coef = np.array(coef, np.float64)
        else:
            self.rule_ptr = np.asarray(rule_ptr, np.int64)
            self.rule_monomial = np.asarray(rule_monomial, np.int64)
            self.rule_coef = np.asarray(rule_coef, np.float64)
            self._check_terms()
        self.leaf_node = None if leaf_node is None else np.asarray(leaf_node, np.int64)
        self.feature_names = None if feature_names is None else tuple(str(f) for f in feature_names)
        self.class_names = None if class_names is None else tuple(class_names)
        self.categories = None if categories is None else tuple(
            None if c is None else tuple(c) for c in categories)
        self.category_codes = (np.zeros((0, 2), np.int64) if category_codes is None
                               else np.asarray(category_codes, np.int64).reshape(-1, 2))
        if self.leaf_node is None:
            self.leaf_node = self._tree_leaf_ids()
        if self.leaf_node.shape != (n_leaves,):
            raise ValueError(f"leaf_node must have one entry per leaf ({n_leaves})")
        width = self.v.shape[1]
        if internal_value is None:
            ends = self._column_ends()
            merge = merge_regression if self.regression else lambda v: v.sum(axis=0)
            internal_value = np.array([merge(self.v[self._lo[j]:ends[j]])
                                       for j in range(n_int)]).reshape(n_int, width)
        self.internal_value = np.asarray(internal_value, np.float64)
        if self.internal_value.shape != (n_int, width):
            raise ValueError(f"internal_value must have shape ({n_int}, {width})")
        self.internal_label = (np.zeros(n_int, np.int64) if internal_label is None and
                               self.regression else
                               np.argmax(self.internal_value, axis=1).astype(np.int64)
                               if internal_label is None
                               else np.asarray(internal_label, np.int64).reshape(-1))
        if self.internal_label.shape != (n_int,) or np.any(self.internal_label < 0) or \
                np.any(self.internal_label >= width):
            raise ValueError("internal_label must hold one class index per internal node")
        if missing_left is None:  # the heavier side, as Tree's default
            ends = self._column_ends()
            weight = np.r_[0.0, np.cumsum(self.v[:, 1] if self.regression
                                          else self.v.sum(axis=1))]
            missing_left = (weight[self._mid] - weight[self._lo]
                            >= weight[ends] - weight[self._mid])
        self.missing_left = np.asarray(missing_left, np.bool_).reshape(-1)
        if self.missing_left.shape != (n_int,):
            raise ValueError(f"missing_left must have one entry per internal node ({n_int})")
        self.missing_seen = (np.zeros(self.n_features, np.bool_) if missing_seen is None
                             else np.asarray(missing_seen, np.bool_).reshape(-1))
        if self.missing_seen.shape != (self.n_features,):
            raise ValueError(f"missing_seen must have one entry per feature ({self.n_features})")
        self._prepare()

    def _column_ends(self) -> np.ndarray:
        """End (exclusive) of the leaf range of every column of ``B``."""
        ends = np.empty(self.n_internal, np.int64)
        stack = [(0, self.n_leaves)]
        k = 0
        while stack:  # the same preorder walk as _tree_leaf_ids
            a, b = stack.pop()
            if b - a > 1:
                j = self._order[k]
                k += 1
                ends[j] = b
                stack.append((int(self._mid[j]), b))
                stack.append((a, int(self._mid[j])))
        return ends

    def _check_terms(self) -> None:
        n_int = len(self.t)
        ptr = self.rule_ptr
        if ptr.shape != (n_int + 1,) or ptr[0] != 0 or np.any(np.diff(ptr) < 0) or \
                ptr[-1] != len(self.rule_coef) or len(self.rule_monomial) != len(self.rule_coef):
            raise ValueError("rule_ptr, rule_monomial and rule_coef are inconsistent")
        if np.any((self.rule_monomial < 0) | (self.rule_monomial >= self.S.shape[1])):
            raise ValueError("rule_monomial refers to a monomial outside powers")
        rebuilt = np.zeros_like(self.S)
        for j in range(n_int):
            if self.node_kind[j] == LINEAR:
                sl = slice(ptr[j], ptr[j + 1])
                np.add.at(rebuilt[j], self.rule_monomial[sl], self.rule_coef[sl])
            elif ptr[j + 1] != ptr[j]:
                raise ValueError(f"internal node {j} is a THRESHOLD node but has rule terms")
            else:
                rebuilt[j] = self.S[j]
        if not np.array_equal(rebuilt, self.S):
            raise ValueError("the rule terms do not add up to the rows of S")

    def _prepare(self) -> None:
        """Arrays the prediction kernels need, derived once."""
        n_leaves, n_int = self.B.shape
        self._linear = np.flatnonzero(self.node_kind == LINEAR)
        # Kernel inputs: the X columns the axis-parallel nodes read, then the LINEAR values.
        self._cols = np.unique(self.feature[self.node_kind == THRESHOLD]).astype(np.int64)
        self._src = np.empty(n_int, np.int64)
        axis = self.node_kind == THRESHOLD
        self._src[axis] = np.searchsorted(self._cols, self.feature[axis])
        self._src[self._linear] = len(self._cols) + np.arange(len(self._linear))
        self._zcol = np.zeros(n_int, np.int64)
        self._zcol[self._linear] = np.arange(len(self._linear))
        # A missing value goes right at these nodes (LINEAR nodes never see one: an error).
        self._nan_right = ~self.missing_left & (self.node_kind == THRESHOLD)
        n_words = max(1, (n_leaves + 63) // 64)
        rows = np.arange(n_leaves)
        word, bit = rows // 64, (rows % 64).astype(np.uint64)
        self._bits = np.zeros((n_int, n_words), np.uint64)
        for j in range(n_int):
            ones = self.B[:, j] == 1
            np.bitwise_or.at(self._bits[j], word[ones], np.uint64(1) << bit[ones])
        self._init = np.zeros(n_words, np.uint64)
        np.bitwise_or.at(self._init, word, np.uint64(1) << bit)
        self._Bt32 = np.ascontiguousarray(self.B.T, np.float32)
        if self.regression:
            self._proba = None
            self._mean = np.ascontiguousarray(self.v[:, 0])
            return
        total = self.v.sum(axis=1, keepdims=True)
        proba = np.divide(self.v, total, out=np.zeros_like(self.v), where=total > 0)
        empty = total[:, 0] <= 0
        proba[empty, self.labels[empty]] = 1.0
        self._proba = proba

    # ---------------------------------------------------------------------- properties
    @property
    def n_leaves(self) -> int:
        return self.B.shape[0]

    @property
    def n_internal(self) -> int:
        return self.B.shape[1]

    @property
    def n_classes(self) -> int:
        return 1 if self.regression else self.v.shape[1]

    def __repr__(self) -> str:
        return (f"CompiledTree(n_leaves={self.n_leaves}, n_internal={self.n_internal}, "
                f"n_features={self.n_features}, n_monomials={self.S.shape[1]}, "
                f"n_classes={self.n_classes})")

    _ARRAYS = ("S", "t", "B", "v", "labels", "powers", "node_kind", "rule_ptr", "rule_monomial",
               "rule_coef", "leaf_node", "category_codes", "internal_value", "internal_label",
               "missing_left", "missing_seen")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CompiledTree):
            return NotImplemented
        return all(np.array_equal(getattr(self, a), getattr(other, a)) for a in self._ARRAYS) and \
            self.regression == other.regression and (self.feature_names, self.class_names, self.categories) == \
            (other.feature_names, other.class_names, other.categories)

    __hash__ = None  # type: ignore[assignment]

    # ---------------------------------------------------------------------- prediction
    def _check_X(self, X: Any) -> np.ndarray:
        X = feature_matrix(X, self.n_features, feature_names=self.feature_names,
                           categories=self.categories)
        for f, n_codes in self.category_codes:
            code = X[:, f]
            if np.isnan(code).any():
                raise ValueError(f"X has a missing value in categorical column {f}; only "
                                 "numeric columns may hold missing values")
            bad = (code != np.floor(code)) | (code < 0) | (code >= n_codes)
            if np.any(bad):
                raise ValueError(f"category code {code[bad][0]!r} in column {f} is not one the "
                                 "tree was fitted on")
        return np.ascontiguousarray(X)

    def _linear_values(self, X: np.ndarray) -> np.ndarray:
        """Rule values of the LINEAR nodes, term by term as :meth:`Tree.rule_values` does."""
        Z = np.empty((len(X), len(self._linear)), np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            for k, j in enumerate(self._linear):
                lo, hi = self.rule_ptr[j], self.rule_ptr[j + 1]
                powers = self.powers[self.rule_monomial[lo:hi]]
                terms = np.prod(X[:, None, :] ** powers[None, :, :], axis=2)
                Z[:, k] = weighted_terms(terms, self.rule_coef[lo:hi])
        if len(self._linear) and np.isnan(Z).any():
            k = int(np.flatnonzero(np.isnan(Z).any(axis=0))[0])
            f = int(np.argmax(np.isnan(X).any(axis=0)))
            raise ValueError(f"X has a missing value in column {f}, which the rule of internal "
                             f"node {int(self._linear[k])} uses; only threshold splits route "
                             "missing values")
        return Z

    def _chunk_rows(self) -> int:
        return max(1024, (1 << 21) // max(1, self.n_leaves, len(self._linear)))

    def leaf_rows(self, X: Any, *, method: str = "auto") -> np.ndarray:
        """Row of ``B`` (leaf position, left to right) every row of ``X`` reaches.

        All methods give the same rows:

        - ``"bitvector"``: Numba kernel evaluating every node and ANDing the packed bitvectors
          of the false nodes (Zhang's formula, QuickScorer-style); vectorised over rows, but
          ``O(n_internal)`` work per row.
        - ``"walk"``: Numba kernel walking the structure decoded from ``B`` root to leaf,
          ``O(depth)`` work per row; faster for large trees.
        - ``"matmul"``: the formula ``argmax(B σ(S x − t))`` literally, in NumPy (float32
          product of the 0/1 step outputs with ``Bᵀ``; exact below 2²⁴ nodes). A reference and
          the template of the torch/jax path, not a fast one on CPUs.
        - ``"auto"``: currently ``"walk"``, which was the fastest at every depth (2..8) and batch
          size measured in ``benchmarks/bench_compiled.py`` on a CPU.
        """
        X = self._check_X(X)
        return self._leaf_rows(X, method)

    def _leaf_rows(self, X: np.ndarray, method: str) -> np.ndarray:
        if method == "auto":
            method = "walk"
        if method not in ("bitvector", "walk", "matmul"):
            raise ValueError(f"method must be 'auto', 'bitvector', 'walk' or 'matmul', got "
                             f"{method!r}")
        n = len(X)
        out = np.zeros(n, np.int64)
        if self.n_internal == 0:
            return out
        if method in ("bitvector", "walk"):
            from ._compiled_kernels import leaf_rows_bitvector, leaf_rows_walk
            step = self._chunk_rows() if len(self._linear) else max(n, 1)
            for a in range(0, n, step):
                Xc = X[a:a + step]
                Z = self._linear_values(Xc) if len(self._linear) else np.zeros((len(Xc), 0))
                if method == "bitvector":
                    leaf_rows_bitvector(Xc, Z, self._cols, self._src, self.t, self._nan_right,
                                        self._bits, self._init, out[a:a + step])
                else:
                    leaf_rows_walk(Xc, Z, self.feature, self._zcol, self.t, self._nan_right,
                                   self._left, self._right, self._order[0], out[a:a + step])
            return out
        axis = np.flatnonzero(self.node_kind == THRESHOLD)
        step = self._chunk_rows()
        for a in range(0, n, step):
            Xc = X[a:a + step]
            if len(self._linear):
                Z = np.empty((len(Xc), self.n_internal), np.float64)
                Z[:, axis] = Xc[:, self.feature[axis]]
                Z[:, self._linear] = self._linear_values(Xc)
            else:
                Z = Xc[:, self.feature]
            H = ((Z > self.t) | (np.isnan(Z) & self._nan_right)).astype(np.float32)  # σ(Sx − t)
            out[a:a + step] = np.argmax(H @ self._Bt32, axis=1)
        return out

    def apply(self, X: Any, *, method: str = "auto") -> Any:
        """Leaf id every row reaches: the same ids as :meth:`Tree.apply` of the source tree.

        ``X`` takes what the estimator took: a DataFrame or string columns are encoded by the
        recorded ``categories`` (a numeric array is read as the encoded matrix, category codes
        ``0..C-1``; see :func:`~exactree.tree.tree.feature_matrix`). It may also be a ``torch`` tensor or an array-API array (e.g. ``jax``); the result
        then comes back in the same library and on the same device (see :meth:`_apply_xp`).
        """
        if _foreign(X):
            return self._apply_xp(X)
        return self.leaf_node[self.leaf_rows(X, method=method)]

    def predict(self, X: Any, *, method: str = "auto") -> Any:
        """Class index predicted for every row (as :meth:`Tree.predict`; a regression tree's
        leaf mean)."""
        table = self._mean if self.regression else self.labels
        if _foreign(X):
            return self._apply_xp(X, table)
        return table[self.leaf_rows(X, method=method)]

    def predict_proba(self, X: Any, *, method: str = "auto") -> Any:
        """Class probabilities of each row's leaf (as :meth:`Tree.predict_proba`)."""
        if self.regression:
            raise ValueError("a regression tree has no class probabilities")
        if _foreign(X):
            return self._apply_xp(X, self._proba)
        return self._proba[self.leaf_rows(X, method=method)]

    # ------------------------------------------------------------------ any array library
    def _apply_xp(self, X: Any, table: np.ndarray | None = None) -> Any:
        """``table[argmax(B σ(S x − t))]`` in the array library of ``X`` (torch, jax, ...).

        Float32 and float64 inputs are used as they are; any other dtype (integers, bools,
        float16) is converted to float64, exactly what :meth:`Tree.predict` does, so integer
        inputs get the same leaves as the traversal (never a float32 cast, which rounds integers
        above 2**24). Axis-parallel nodes read their column directly, so they are exact in
        float64 and in float32 too (thresholds are rounded *down* to float32: for float32 ``x``,
        ``x > t  ⇔  x > round_down(t)``). Where the library has no float64 (jax without x64),
        integer columns of axis-parallel nodes are compared as integers
        (``x > t  ⇔  x >= floor(t) + 1``), still exact. LINEAR rows are computed as a matrix
        product in the (float) input's precision and may differ from the NumPy path for inputs
        within rounding of a threshold. Categorical code checks are not repeated here. A missing
        value (NaN) goes the way ``missing_left`` says at axis-parallel nodes; at a LINEAR node
        it is an error where the values can be read (not inside ``jax.jit``).
        """
        xp = _Ops(X)
        if xp.ndim(X) != 2 or xp.shape(X)[1] != self.n_features:
            raise ValueError(f"X must be 2-D with {self.n_features} columns, got shape "
                             f"{tuple(xp.shape(X))}")
        X_in = X
        X = xp.floating(X)
        exact_int = xp.is_integer(X_in) and not xp.is_float64(X)
        if xp.any_inf(X):
            raise ValueError("X contains infinity")
        if len(self._linear) and xp.any_nan(X):
            raise ValueError("X has a missing value, which reaches a LINEAR rule; only threshold "
                             "splits route missing values")
        if table is None:
            table = self.leaf_node
        n = xp.shape(X)[0]
        if self.n_internal == 0:
            return xp.take_rows(xp.asarray(table, X), xp.zeros_int(n, X))
        axis = np.flatnonzero(self.node_kind == THRESHOLD)
        cols = np.concatenate([axis, self._linear])
        parts = []
        if len(axis) and exact_int:
            info = xp.iinfo(X_in)
            # x > t  <=>  x >= floor(t) + 1 for integers; Python ints keep every bound exact
            first = [int(np.floor(v)) + 1 for v in self.t[axis]]
            never = np.array([f > info.max for f in first])  # no integer of the dtype goes right
            first = [min(max(f, int(info.min)), int(info.max)) for f in first]
            Z = xp.take_cols(X_in, xp.asarray(self.feature[axis], X, integer=True))
            right = (Z >= xp.asarray_dtype(first, X_in)) & xp.asarray_dtype(~never, None)
            parts.append(xp.astype(right, X))
        elif len(axis):
            t = self.t[axis]
            if xp.is_float32(X):
                with np.errstate(over="ignore"):  # |t| beyond float32 becomes ±inf: still right
                    t32 = t.astype(np.float32)
                t32 = np.where(t32.astype(np.float64) > t, np.nextafter(t32, np.float32(-np.inf)),
                               t32)
                t = t32
            Z = xp.take_cols(X, xp.asarray(self.feature[axis], X, integer=True))
            right = Z > xp.asarray(t, X)
            if self._nan_right[axis].any():
                right = right | (xp.isnan(Z) & xp.asarray_dtype(self._nan_right[axis].tolist(),
                                                                None))
            parts.append(xp.astype(right, X))
        if len(self._linear):
            P = self.powers
            extra = P.shape[0] > self.n_features
            Phi = X
            if extra:  # monomial expansion: prod_f x_f ** p_f for every extra monomial
                Pe = xp.asarray(P[self.n_features:].T.astype(np.float64), X)
                Phi = xp.concat([X, xp.prod_powers(X, Pe)])
            S = xp.asarray(np.ascontiguousarray(self.S[self._linear].T), X)
            parts.append(xp.astype((Phi @ S) > xp.asarray(self.t[self._linear], X), X))
        H = parts[0] if len(parts) == 1 else xp.concat(parts)
        Bt = xp.asarray(np.ascontiguousarray(self.B[:, cols].T, dtype=np.float64), X)
        rows = xp.argmax_rows(H @ Bt)
        return xp.take_rows(xp.asarray(table, X, integer=table.dtype.kind in "iu"), rows)

    # ---------------------------------------------------------------------- conversion
    def _tree_leaf_ids(self) -> np.ndarray:
        """Preorder node id of every leaf in the tree :meth:`to_tree` builds."""
        ids = np.empty(self.n_leaves, np.int64)
        mid = self._mid
        node = 0
        stack = [(0, self.n_leaves)]
        k = 0
        while stack:
            a, b = stack.pop()
            if b - a == 1:
                ids[a] = node
            else:
                j = self._order[k]
                k += 1
                stack.append((int(mid[j]), b))
                stack.append((a, int(mid[j])))
            node += 1
        return ids

    def to_tree(self) -> Tree:
        """Rebuild the :class:`Tree` (Zhang's Lemma 1 bijection), nodes in preorder.

        Internal nodes get ``internal_value`` and ``internal_label`` (what the compiled tree
        recorded; for matrices given without them, the sum of the node's leaves and its
        argmax). So ``tree.compile().to_tree() == tree`` for every binary tree whose node ids
        are in preorder (every solver's tree, cost-sensitive ones included); a tree numbered
        otherwise comes back renumbered in preorder, and a compiled categorical tree as its
        binary expansion (see :meth:`Tree.compile`).
        """
        n_leaves = self.n_leaves
        n_nodes = 2 * n_leaves - 1
        kind = np.zeros(n_nodes, np.int8)
        feature = np.full(n_nodes, -1, np.int64)
        threshold = np.full(n_nodes, np.nan)
        value = np.zeros((n_nodes, self.v.shape[1]))
        label = np.zeros(n_nodes, np.int64)
        left = np.full(n_nodes, -1, np.int64)
        right = np.full(n_nodes, -1, np.int64)
        column = np.full(n_nodes, -1, np.int64)
        stack = [(0, n_leaves, -1, 0)]  # (leaf range, parent, slot)
        node, k = 0, 0
        while stack:
            a, b, parent, slot = stack.pop()
            if parent >= 0:
                (left if slot == 0 else right)[parent] = node
            if b - a == 1:
                value[node], label[node] = self.v[a], self.labels[a]
            else:
                j = self._order[k]
                k += 1
                column[node] = j
                kind[node] = self.node_kind[j]
                threshold[node] = self.t[j]
                if kind[node] == THRESHOLD:
                    feature[node] = self.feature[j]
                stack.append((int(self._mid[j]), b, node, 1))
                stack.append((a, int(self._mid[j]), node, 0))
            node += 1
        internal = np.flatnonzero(kind != LEAF)
        value[internal] = self.internal_value[column[internal]]
        label[internal] = self.internal_label[column[internal]]
        child = np.stack([left[internal], right[internal]], axis=1).reshape(-1)
        child_ptr = np.zeros(n_nodes + 1, np.int64)
        child_ptr[internal + 1] = 2
        child_ptr = np.cumsum(child_ptr)
        rule_ptr = np.zeros(n_nodes + 1, np.int64)
        coef, powers = [], []
        for i in range(n_nodes):
            j = column[i]
            if j >= 0 and self.node_kind[j] == LINEAR:
                lo, hi = self.rule_ptr[j], self.rule_ptr[j + 1]
                coef.append(self.rule_coef[lo:hi])
                powers.append(self.powers[self.rule_monomial[lo:hi]])
            rule_ptr[i + 1] = rule_ptr[i] + (len(coef[-1]) if j >= 0 and
                                             self.node_kind[j] == LINEAR else 0)
        missing_left = np.zeros(n_nodes, np.bool_)
        missing_left[internal] = self.missing_left[column[internal]]
        regression = {}
        if self.regression:
            regression = {"node_weight": value[:, 1].copy(), "impurity": value[:, 2].copy()}
            value = value[:, :1].copy()
        return Tree(
            kind=kind, feature=feature, threshold=threshold, child_ptr=child_ptr, child=child,
            value=value, label=label, **regression, n_features=self.n_features, rule_ptr=rule_ptr,
            missing_left=missing_left, missing_seen=self.missing_seen,
            rule_coef=np.concatenate(coef) if coef else np.zeros(0),
            rule_powers=(np.concatenate(powers) if powers
                         else np.zeros((0, self.n_features), np.int64)),
            feature_names=self.feature_names, class_names=self.class_names,
            categories=self.categories,
        )

    # ---------------------------------------------------------------------- export
    def save(self, file: Any) -> None:
        """Write the compiled form to an ``.npz`` file (no pickled objects inside).

        Holds ``S``, ``t``, ``B``, ``v`` and the optional arrays, plus the names as JSON;
        :meth:`load` reads it back.
        """
        meta = {"format": _FORMAT, "regression": self.regression,
                "feature_names": _listify(self.feature_names),
                "class_names": _listify(self.class_names),
                "categories": None if self.categories is None else
                [_listify(c) for c in self.categories]}
        np.savez_compressed(file, meta=np.array(json.dumps(meta)),
                            **{a: getattr(self, a) for a in self._ARRAYS})

    @classmethod
    def load(cls, file: Any) -> CompiledTree:
        """Read a compiled tree written by :meth:`save`."""
        with np.load(file, allow_pickle=False) as data:
            if "meta" not in data:
                raise ValueError("not an exactree compiled tree (.npz without 'meta')")
            meta = json.loads(str(data["meta"]))
            if meta.get("format") != _FORMAT:
                raise ValueError(f"not an exactree compiled tree (format {meta.get('format')!r})")
            arrays = {a: data[a] for a in cls._ARRAYS if a in data}  # older files lack some
        S, t, B, v = (arrays.pop(a) for a in ("S", "t", "B", "v"))
        return cls(S, t, B, v, **arrays, feature_names=meta["feature_names"],
                   class_names=meta["class_names"], categories=meta["categories"],
                   regression=bool(meta.get("regression", False)))


def _listify(x: Any) -> Any:
    if x is None:
        return None
    return [v.item() if isinstance(v, np.generic) else v for v in x]


def compile_tree(tree: Tree) -> CompiledTree:
    """Compile ``tree`` into ``(S, t, B, v)``; the body of :meth:`Tree.compile`.

    Categorical (multiway) nodes are expanded into chains of binary ``code <= c + 0.5`` tests
    first (codes are integers), so any tree compiles; :meth:`CompiledTree.apply` still reports
    the original leaf ids, and prediction rejects category codes the tree has no slot for.
    """
    binary = np.flatnonzero((tree.kind == THRESHOLD) | (tree.kind == LINEAR))
    same = [i for i in binary if tree.children(i)[0] == tree.children(i)[1]]
    if same:
        raise ValueError(f"node {same[0]} sends both sides to the same child: it is no split, "
                         "and a bitvector matrix cannot express it")
    leaf_origin = None
    codes: list[tuple[int, int]] = []
    if np.any(tree.kind == CATEGORICAL):
        for i in np.flatnonzero(tree.kind == CATEGORICAL):
            codes.append((int(tree.feature[i]), len(tree.children(i))))
        per_feature: dict[int, int] = {}
        for f, c in codes:  # the smallest slot count of a column is the safe range for it
            per_feature[f] = min(c, per_feature.get(f, c))
        codes = sorted(per_feature.items())
        tree, leaf_origin = _expand_categorical(tree)
    order, first, end = _dfs(tree)
    internal = [i for i in order if tree.kind[i] != LEAF]
    leaves = [i for i in order if tree.kind[i] == LEAF]
    n_leaves, n_int = len(leaves), len(internal)
    B = np.ones((n_leaves, n_int), np.uint8)
    basis: dict[tuple[int, ...], int] = {
        tuple(np.eye(tree.n_features, dtype=np.int64)[f].tolist()): f
        for f in range(tree.n_features)}
    S_rows: list[dict[int, float]] = []
    node_kind = np.empty(n_int, np.int8)
    rule_ptr, rule_mono, rule_coef = [0], [], []
    for j, i in enumerate(internal):
        lc = tree.children(i)[0]
        B[first[lc]:end[lc], j] = 0
        row: dict[int, float] = {}
        node_kind[j] = tree.kind[i]
        if tree.kind[i] == THRESHOLD:
            row[int(tree.feature[i])] = 1.0
        else:
            lo, hi = tree.rule_ptr[i], tree.rule_ptr[i + 1]
            for c, p in zip(tree.rule_coef[lo:hi], tree.rule_powers[lo:hi]):
                m = basis.setdefault(tuple(p.tolist()), len(basis))
                row[m] = row.get(m, 0.0) + float(c)
                rule_mono.append(m)
                rule_coef.append(float(c))
        rule_ptr.append(len(rule_mono))
        S_rows.append(row)
    S = np.zeros((n_int, len(basis)))
    for j, row in enumerate(S_rows):
        for m, c in row.items():
            S[j, m] = c
    powers = np.zeros((len(basis), tree.n_features), np.int64)
    for p, m in basis.items():
        powers[m] = p
    leaf_node = np.array(leaves, np.int64)
    if leaf_origin is not None:
        leaf_node = leaf_origin[leaf_node]
    values = regression_rows(tree) if tree.is_regression else tree.value
    return CompiledTree(
        S, tree.threshold[internal], B, values[leaves], labels=tree.label[leaves],
        regression=tree.is_regression,
        powers=powers, node_kind=node_kind, rule_ptr=rule_ptr, rule_monomial=rule_mono,
        rule_coef=rule_coef, leaf_node=leaf_node, feature_names=tree.feature_names,
        class_names=tree.class_names, categories=tree.categories, category_codes=codes,
        internal_value=values[internal], internal_label=tree.label[internal],
        missing_left=tree.missing_left[internal] & (tree.kind[internal] == THRESHOLD),
        missing_seen=tree.missing_seen)


# ------------------------------------------------------------------------------- dispatch
_CACHE: dict[int, tuple[weakref.ref, CompiledTree]] = {}


def _cached(tree: Tree) -> CompiledTree:
    """The compiled form of ``tree``, compiled once per tree object (held while it lives)."""
    key = id(tree)
    hit = _CACHE.get(key)
    if hit is not None and hit[0]() is tree:
        return hit[1]
    compiled = compile_tree(tree)
    _CACHE[key] = (weakref.ref(tree, lambda _, k=key: _CACHE.pop(k, None)), compiled)
    return compiled


def predict_leaves(tree: Tree, X: Any, *, method: str = "auto") -> np.ndarray:
    """Leaf id of every row of ``X`` under ``tree``: compiled kernel or traversal.

    ``method="auto"`` uses the compiled kernel (:meth:`CompiledTree.apply`, compiling the tree
    once and caching it while the tree object lives) only where
    :func:`~exactree.tree.tree.prefer_compiled` expects it to pay: a batch large enough to
    repay building the ``leaves x split nodes`` matrix (and loading the kernel, if this process
    has not yet), and never a matrix above :data:`~exactree.tree.tree.MAX_COMPILED_CELLS` cells;
    :meth:`Tree.apply` otherwise. ``"compiled"`` and ``"traversal"`` force one. The ids are
    identical either way. The first compiled call in a fresh process also loads the Numba
    kernels from the on-disk cache (~0.5 s; a few seconds the very first time they are
    compiled).
    """
    if method not in ("auto", "compiled", "traversal"):
        raise ValueError(f"method must be 'auto', 'compiled' or 'traversal', got {method!r}")
    X = tree._check_X(X)
    if method == "traversal" or (method == "auto" and not prefer_compiled(tree, len(X))):
        return tree.apply(X)
    return _cached(tree).apply(X)


# --------------------------------------------------------------------- array-library shim
def _foreign(X: Any) -> bool:
    """True for a torch tensor or an array-API array that is not a NumPy array."""
    if isinstance(X, (np.ndarray, list, tuple)) or X is None:
        return False
    return type(X).__module__.split(".")[0] == "torch" or hasattr(X, "__array_namespace__")


#: Convert non-float inputs of the array-library path to float64 when the library has it
#: (tests switch it off to exercise the float32-only path of jax without x64).
_XP_FLOAT64 = True


class _Ops:
    """The handful of array operations the compiled formula needs, for torch or an array-API
    namespace (jax.numpy, array_api_strict, ...). Nothing is imported: the namespace comes from
    the input array itself, so neither library is a dependency."""

    def __init__(self, X: Any) -> None:
        self.torch = type(X).__module__.split(".")[0] == "torch"
        if self.torch:
            import sys
            self.xp = sys.modules["torch"]
        else:
            self.xp = X.__array_namespace__()
        # A jax tracer (inside jax.jit) has no device: arrays are then made without one.
        self.device = getattr(X, "device", None)

    def ndim(self, X: Any) -> int:
        return X.ndim

    def shape(self, X: Any) -> tuple[int, ...]:
        return tuple(X.shape)

    def floating(self, X: Any) -> Any:
        """``X`` itself when float32/float64, else converted to float64 (as ``Tree.predict``
        does), or to float32 where the library has no float64 (jax without x64)."""
        xp = self.xp
        if X.dtype in (xp.float32, xp.float64):
            return X
        if _XP_FLOAT64:
            try:
                with warnings.catch_warnings():  # jax warns, then gives float32, without x64
                    warnings.simplefilter("ignore")
                    Y = X.to(xp.float64) if self.torch else xp.astype(X, xp.float64)
                if Y.dtype == xp.float64:
                    return Y
            except (TypeError, RuntimeError, ValueError):  # e.g. torch on a device without it
                pass
        return X.to(xp.float32) if self.torch else xp.astype(X, xp.float32)

    def is_float32(self, X: Any) -> bool:
        return X.dtype == self.xp.float32

    def is_float64(self, X: Any) -> bool:
        return X.dtype == self.xp.float64

    def is_integer(self, X: Any) -> bool:
        """True for signed or unsigned integer dtypes (not bool)."""
        if self.torch:
            return not X.dtype.is_floating_point and not X.dtype.is_complex and \
                X.dtype != self.xp.bool
        return bool(self.xp.isdtype(X.dtype, "integral"))

    def iinfo(self, X: Any) -> Any:
        return self.xp.iinfo(X.dtype)

    def asarray_dtype(self, a: Any, like: Any) -> Any:
        """``a`` (an array or a list of Python ints) in the dtype of ``like`` (its own dtype
        when ``like`` is None)."""
        dtype = None if like is None else like.dtype
        if self.torch:
            return self.xp.as_tensor(a, dtype=dtype, device=self.device)
        return self.xp.asarray(a, dtype=dtype, device=self.device)

    def any_inf(self, X: Any) -> bool:
        """True when ``X`` holds an infinity; False when it cannot be known (a jax tracer)."""
        try:
            return bool(self.xp.any(self.xp.isinf(X)))
        except TypeError:  # jax's concretization errors are TypeErrors
            return False

    def any_nan(self, X: Any) -> bool:
        """True when ``X`` holds NaN; False when it cannot be known (a jax tracer)."""
        try:
            return bool(self.xp.any(self.xp.isnan(X)))
        except TypeError:
            return False

    def isnan(self, X: Any) -> Any:
        return self.xp.isnan(X)

    def asarray(self, a: np.ndarray, like: Any, integer: bool = False) -> Any:
        """``a`` on the device of ``like``: in its float dtype, or the library's default
        integer type (jax without x64 has no int64)."""
        if self.torch:
            dtype = self.xp.int64 if integer else like.dtype
            return self.xp.as_tensor(np.asarray(a), dtype=dtype, device=self.device)
        if integer:
            return self.xp.asarray(np.asarray(a), device=self.device)
        return self.xp.asarray(np.asarray(a), dtype=like.dtype, device=self.device)

    def astype(self, a: Any, like: Any) -> Any:
        return a.to(like.dtype) if self.torch else self.xp.astype(a, like.dtype)

    def take_cols(self, X: Any, idx: Any) -> Any:
        return X[:, idx] if self.torch else self.xp.take(X, idx, axis=1)

    def take_rows(self, table: Any, rows: Any) -> Any:
        return table[rows] if self.torch else self.xp.take(table, rows, axis=0)

    def concat(self, parts: list[Any]) -> Any:
        return self.xp.cat(parts, dim=1) if self.torch else self.xp.concat(parts, axis=1)

    def argmax_rows(self, a: Any) -> Any:
        return self.xp.argmax(a, dim=1) if self.torch else self.xp.argmax(a, axis=1)

    def zeros_int(self, n: int, like: Any) -> Any:
        if self.torch:
            return self.xp.zeros(n, dtype=self.xp.int64, device=self.device)
        return self.xp.asarray(np.zeros(n, np.int64), device=self.device)

    def prod_powers(self, X: Any, Pt: Any) -> Any:
        """``prod_f X[:, f] ** Pt[f, m]`` for every monomial ``m`` (columns of ``Pt``)."""
        if self.torch:
            return self.xp.prod(X[:, :, None] ** Pt[None, :, :], dim=1)
        return self.xp.prod(X[:, :, None] ** Pt[None, :, :], axis=1)
