"""From a tree over binary features to a :class:`~exactree.tree.Tree` over the raw columns."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...data.binarize import LE, Binarizer
from ...data.encoding import Column
from ...tree import Tree, TreeBuilder
from .solver import BinaryNode


def to_tree(root: BinaryNode, binarizer: Binarizer, columns: Sequence[Column],
            n_classes: int) -> Tree:
    """Translate binary tests back: ``x <= t`` becomes a THRESHOLD node (true branch left),
    ``x == category`` a CATEGORICAL node sending that category to the true branch and every
    other category to the false branch."""
    builder = TreeBuilder(len(columns), n_classes)

    def label(counts: np.ndarray) -> int:
        return int(np.argmax(counts))

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
            done[id(node)] = builder.threshold(col, binarizer.value_[j], [yes, no], node.counts,
                                               label(node.counts))
        else:
            code = int(binarizer.value_[j])
            slots = [yes if c == code else no for c in range(len(columns[col].categories))]
            done[id(node)] = builder.categorical(col, slots, node.counts, label(node.counts))
    return builder.build(done[id(root)], check=False)  # a solver's tree: valid by construction
