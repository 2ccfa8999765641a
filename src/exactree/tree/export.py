"""Human- and machine-readable views of a :class:`Tree`: indented text, Graphviz DOT, JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from .tree import CATEGORICAL, LEAF, LINEAR, NOT_MISSING, THRESHOLD, Tree


def as_tree(obj: Any) -> Tree:
    """``obj`` itself if it is a :class:`Tree`, else the tree of a fitted exactree estimator
    (``tree_``; scikit-learn's ``NotFittedError`` when it is not fitted)."""
    if isinstance(obj, Tree):
        return obj
    if hasattr(obj, "get_params"):  # an estimator
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(obj, "tree_")
        return obj.tree_
    raise TypeError(f"expected a fitted exactree estimator or an exactree.Tree, got "
                    f"{type(obj).__name__}")


def _names(tree: Tree, feature_names: Sequence[str] | None, class_names: Sequence[Any] | None):
    features = [f"x{i}" for i in range(tree.n_features)]
    for names in (feature_names, tree.feature_names):
        if names is not None:
            features = [str(f) for f in names]
            break
    if len(features) != tree.n_features:
        raise ValueError(f"feature_names needs {tree.n_features} names, got {len(features)}")
    classes = list(range(tree.n_classes))
    if tree.is_regression:
        return features, classes  # no classes: leaves show their value
    for names in (class_names, tree.class_names):
        if names is not None:
            classes = list(names)
            break
    if len(classes) != tree.n_classes:
        raise ValueError(f"class_names needs {tree.n_classes} names, got {len(classes)}")
    return features, classes


def _number(x: float) -> str:
    return f"{x:.6g}"


def rule_formula(tree: Tree, node: int, features: Sequence[str]) -> str:
    """The polynomial of a LINEAR node as text, e.g. ``x0 - 1.2*x1^2``."""
    lo, hi = tree.rule_ptr[node], tree.rule_ptr[node + 1]
    parts = []
    for coef, powers in zip(tree.rule_coef[lo:hi], tree.rule_powers[lo:hi]):
        factors = [features[f] + (f"^{p}" if p > 1 else "") for f, p in enumerate(powers) if p > 0]
        term = "*".join(factors) or "1"
        sign = "-" if coef < 0 else "+"
        magnitude = "" if abs(coef) == 1 and factors else f"{_number(abs(coef))}*"
        parts.append(f"{sign} {magnitude}{term}" if factors else f"{sign} {_number(abs(coef))}")
    if not parts:
        return "0"
    text = " ".join(parts)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]


def branch_labels(tree: Tree, node: int, features: Sequence[str]) -> list[tuple[int, str]]:
    """``(child, condition)`` for every distinct child of a split node, in slot order."""
    kids = tree.children(node)
    kind = tree.kind[node]
    if kind == THRESHOLD:
        name, t = features[tree.feature[node]], _number(tree.threshold[node])
        if not tree.missing_seen[tree.feature[node]]:
            return [(kids[0], f"{name} <= {t}"), (kids[1], f"{name} > {t}")]
        # The column had missing values in fit: say which branch takes them.
        if tree.threshold[node] == NOT_MISSING and not tree.missing_left[node]:
            return [(kids[0], f"{name} is not missing"), (kids[1], f"{name} is missing")]
        left = " or missing" if tree.missing_left[node] else ""
        right = "" if tree.missing_left[node] else " or missing"
        return [(kids[0], f"{name} <= {t}{left}"), (kids[1], f"{name} > {t}{right}")]
    if kind == LINEAR:
        formula, t = rule_formula(tree, node, features), _number(tree.threshold[node])
        return [(kids[0], f"{formula} <= {t}"), (kids[1], f"{formula} > {t}")]
    assert kind == CATEGORICAL
    f = tree.feature[node]
    cats = tree.categories[f] if tree.categories and tree.categories[f] is not None else None
    labels = [str(cats[c]) if cats is not None and c < len(cats) else str(c) for c in range(len(kids))]
    out = []
    for child in dict.fromkeys(kids.tolist()):
        members = [labels[c] for c in np.flatnonzero(kids == child)]
        cond = f"{features[f]} = {members[0]}" if len(members) == 1 else \
            f"{features[f]} in {{{', '.join(members)}}}"
        out.append((child, cond))
    return out


def _leaf_text(tree: Tree, node: int, classes: Sequence[Any]) -> str:
    if tree.is_regression:
        return (f"value: {_number(tree.value[node, 0])}  (weight "
                f"{_number(tree.node_weight[node])}, squared error {_number(tree.impurity[node])})")
    counts = tree.value[node]
    return f"class: {classes[tree.label[node]]}  (weights {', '.join(_number(c) for c in counts)})"


def export_text(tree: Tree | Any, feature_names: Sequence[str] | None = None,
                class_names: Sequence[Any] | None = None) -> str:
    """The tree (a :class:`Tree` or a fitted estimator) as indented text, one line per branch
    and leaf (in the style of scikit-learn)."""
    tree = as_tree(tree)
    features, classes = _names(tree, feature_names, class_names)
    lines: list[str] = []
    stack: list[tuple[int, int, str | None]] = [(0, 0, None)]
    while stack:
        node, depth, cond = stack.pop()
        indent = "|   " * max(depth - 1, 0) + ("|--- " if depth else "")
        if cond is not None:
            lines.append(indent + cond)
        if tree.kind[node] == LEAF:
            lines.append("|   " * depth + "|--- " + _leaf_text(tree, node, classes))
            continue
        for child, text in reversed(branch_labels(tree, node, features)):
            stack.append((child, depth + 1, text))
    return "\n".join(lines) + "\n"


def _dot_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def export_graphviz(tree: Tree | Any, feature_names: Sequence[str] | None = None,
                    class_names: Sequence[Any] | None = None) -> str:
    """The tree (a :class:`Tree` or a fitted estimator) in Graphviz DOT; branch conditions
    label the edges."""
    tree = as_tree(tree)
    features, classes = _names(tree, feature_names, class_names)
    out = ["digraph Tree {", 'node [shape=box, style="rounded", fontname="helvetica"];',
           'edge [fontname="helvetica"];']
    for node in range(tree.n_nodes):
        if tree.kind[node] == LEAF:
            label = _leaf_text(tree, node, classes)
        else:
            weight = tree.node_weight[node] if tree.is_regression else tree.value[node].sum()
            label = f"samples weight {_number(weight)}"
        out.append(f'{node} [label="{_dot_escape(label)}"];')
        if tree.kind[node] != LEAF:
            for child, text in branch_labels(tree, node, features):
                out.append(f'{node} -> {child} [label="{_dot_escape(text)}"];')
    out.append("}")
    return "\n".join(out) + "\n"


def to_json(tree: Tree | Any, **kwargs: Any) -> str:
    """The tree (a :class:`Tree` or a fitted estimator) as a JSON string (see
    :meth:`Tree.to_dict`)."""
    return json.dumps(as_tree(tree).to_dict(), **kwargs)


def from_json(text: str) -> Tree:
    """Inverse of :func:`to_json`."""
    return Tree.from_dict(json.loads(text))
