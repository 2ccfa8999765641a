"""From a tree over binary features to a :class:`~exactree.tree.Tree` over the raw columns."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ...data.binarize import LE, MISSING_TRUE, NO_MISSING, Binarizer, true_codes
from ...data.encoding import Column
from ...tree import Tree
from ...tree.tree import CATEGORICAL, LEAF, THRESHOLD
from .solver import BinaryNode


def to_tree(root: BinaryNode, binarizer: Binarizer, columns: Sequence[Column],
            n_classes: int, regression: bool = False,
            labels: Callable[[np.ndarray], np.ndarray] | None = None) -> Tree:
    """Translate binary tests back: ``x <= t`` becomes a THRESHOLD node (true branch left),
    ``x == category`` a CATEGORICAL node sending that category to the true branch and every
    other category to the false branch (``x in S``: the categories of ``S`` to the true
    branch). A threshold test on a column with missing values at fit
    time sends them the way the binary feature does (``x <= t or missing``: left); on other
    columns they take the Tree's default, the heavier child. ``regression``: node counts are
    ``(mean, weight, squared error)`` and the tree is a regression tree. ``labels``: each
    node's label from the rows of node class weights (default: the class of most weight).

    The same tree as :class:`~exactree.tree.TreeBuilder` gives (preorder, a node's distinct
    children in slot order), with its arrays filled directly: the builder's per-node objects
    and checks cost more than a millisecond fit's search."""
    if not regression:
        fast = _threshold_tree(root, binarizer, columns, n_classes, labels)
        if fast is not None:
            return fast
    column_, op_, value_ = binarizer.column_, binarizer.op_, binarizer.value_
    missing = binarizer.missing_
    # Preorder: a node's id is its place in `order`; its distinct children follow it, in slot
    # order (a categorical node's slots run over the column's codes).
    order: list[BinaryNode] = []
    slots: list[list[BinaryNode]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        if node.feature < 0:
            slots.append([])
            continue
        j = node.feature
        if op_[j] == LE:
            kids = [node.true, node.false]
            distinct = kids
        else:
            holds = true_codes(op_[j], value_[j], len(columns[int(column_[j])].categories))
            kids = [node.true if hold else node.false for hold in holds]
            distinct = [kids[0]] + [k for k in kids[1:] if k is not kids[0]][:1]
        slots.append(kids)
        stack.extend(reversed(distinct))
    index = {id(node): i for i, node in enumerate(order)}
    n = len(order)
    kind, feature, threshold = [LEAF] * n, [-1] * n, [math.nan] * n
    ptr, child = [0], []
    sides: list[tuple[int, bool]] = []  # threshold nodes whose missing side the fit chose
    for i, node in enumerate(order):
        j = node.feature
        if j >= 0:
            feature[i] = int(column_[j])
            if op_[j] == LE:
                kind[i] = THRESHOLD
                threshold[i] = float(value_[j])
                side = int(missing[j])
                if side != NO_MISSING:
                    sides.append((i, side == MISSING_TRUE))
            else:
                kind[i] = CATEGORICAL
            child.extend([index[id(k)] for k in slots[i]])
        ptr.append(len(child))
    value = np.array([node.counts for node in order], np.float64).reshape(n, -1)
    extra: dict[str, np.ndarray] = {}
    if regression:
        extra = {"node_weight": value[:, 1].copy(), "impurity": value[:, 2].copy()}
        weight = value[:, 1].tolist()
        value = value[:, :1].copy()
        label = np.zeros(n, np.int64)
    else:
        weight = value.sum(axis=1).tolist()
        label = value.argmax(axis=1) if labels is None else labels(value)
    return _assemble(kind, feature, threshold, ptr, child, value, label, weight, sides,
                     binarizer, columns, extra)


def _assemble(kind: list[int], feature: list[int], threshold: list[float], ptr: list[int],
              child: list[int], value: np.ndarray, label: np.ndarray, weight: list[float],
              sides: list[tuple[int, bool]], binarizer: Binarizer, columns: Sequence[Column],
              extra: dict[str, np.ndarray]) -> Tree:
    """The Tree of a walk's arrays. Missing values go to the heavier child (the left one on a
    tie), as Tree's default does, unless the fit chose the side (``sides``: a column with
    missing values at fit time)."""
    missing_left = [False] * len(kind)
    for i, k in enumerate(kind):
        if k == THRESHOLD:
            missing_left[i] = weight[child[ptr[i]]] >= weight[child[ptr[i] + 1]]
    for i, left in sides:
        missing_left[i] = left
    # check=False: a solver's tree is valid by construction
    return Tree(kind=np.array(kind, np.int8), feature=np.array(feature, np.int64),
                threshold=np.array(threshold, np.float64), child_ptr=np.array(ptr, np.int64),
                child=np.array(child, np.int64), value=value, label=label,
                n_features=len(columns), missing_left=np.array(missing_left, np.bool_),
                missing_seen=binarizer.missing_columns_, check=False, **extra)


def _threshold_tree(root: BinaryNode, binarizer: Binarizer, columns: Sequence[Column],
                    n_classes: int, labels: Callable[[np.ndarray], np.ndarray] | None
                    ) -> Tree | None:
    """:func:`to_tree` of a classification tree whose splits are all threshold tests, in one
    walk (children ids filled in as they are reached); None when a split is a category test.
    The same arrays as the general walk: preorder, the true child first."""
    # .item: Python numbers straight from the arrays (no NumPy scalars to convert)
    column_, op_, value_ = binarizer.column_.item, binarizer.op_.item, binarizer.value_.item
    missing = binarizer.missing_.item
    order: list[BinaryNode] = []
    kind: list[int] = []
    feature: list[int] = []
    threshold: list[float] = []
    ptr, child = [0], []
    sides: list[tuple[int, bool]] = []  # threshold nodes whose missing side the fit chose
    stack: list[tuple[BinaryNode, int]] = [(root, -1)]
    while stack:
        node, at = stack.pop()
        i = len(order)
        order.append(node)
        if at >= 0:
            child[at] = i
        j = node.feature
        if j < 0:
            kind.append(LEAF)
            feature.append(-1)
            threshold.append(math.nan)
            ptr.append(len(child))
            continue
        if op_(j) != LE:
            return None
        kind.append(THRESHOLD)
        feature.append(column_(j))
        threshold.append(value_(j))
        side = missing(j)
        if side != NO_MISSING:
            sides.append((i, side == MISSING_TRUE))
        at = len(child)
        child += [-1, -1]
        ptr.append(at + 2)
        stack.append((node.false, at + 1))
        stack.append((node.true, at))
    n = len(order)
    value = np.array([node.counts for node in order], np.float64).reshape(n, -1)
    weight = value.sum(axis=1).tolist()
    label = value.argmax(axis=1) if labels is None else labels(value)
    return _assemble(kind, feature, threshold, ptr, child, value, label, weight, sides,
                     binarizer, columns, {})
