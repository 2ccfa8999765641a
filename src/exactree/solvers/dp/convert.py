"""From a tree over binary features to a :class:`~exactree.tree.Tree` over the raw columns."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...data.binarize import LE, MISSING_TRUE, NO_MISSING, Binarizer
from ...data.encoding import Column
from ...tree import Tree, TreeBuilder
from .solver import BinaryNode


def to_tree(root: BinaryNode, binarizer: Binarizer, columns: Sequence[Column],
            n_classes: int, regression: bool = False) -> Tree:
    """Translate binary tests back: ``x <= t`` becomes a THRESHOLD node (true branch left),
    ``x == category`` a CATEGORICAL node sending that category to the true branch and every
    other category to the false branch. A threshold test on a column with missing values at fit
    time sends them the way the binary feature does (``x <= t or missing``: left); on other
    columns they take the Tree's default, the heavier child. ``regression``: node counts are
    ``(mean, weight, squared error)`` and the tree is a regression tree."""
    builder = TreeBuilder(len(columns), 1 if regression else n_classes, regression=regression)
    missing = binarizer.missing_

    def label(counts: np.ndarray) -> int:
        return 0 if regression else int(np.argmax(counts))

    # Post-order over an explicit stack: children are built before their parent.
    done: dict[int, int] = {}
    stack: list[tuple[BinaryNode, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if node.feature < 0:
            done[id(node)] = builder.leaf(node.counts, label(node.counts))
            continue
        if not expanded:
            stack.append((node, True))
            stack.append((node.false, False))
            stack.append((node.true, False))
            continue
        j = node.feature
        col = int(binarizer.column_[j])
        yes, no = done[id(node.true)], done[id(node.false)]
        if binarizer.op_[j] == LE:
            side = int(missing[j])
            done[id(node)] = builder.threshold(
                col, binarizer.value_[j], [yes, no], node.counts, label(node.counts),
                missing_left=None if side == NO_MISSING else side == MISSING_TRUE)
        else:
            code = int(binarizer.value_[j])
            slots = [yes if c == code else no for c in range(len(columns[col].categories))]
            done[id(node)] = builder.categorical(col, slots, node.counts, label(node.counts))
    # check=False: a solver's tree is valid by construction
    return builder.build(done[id(root)], check=False, missing_seen=binarizer.missing_columns_)
