"""Plots with matplotlib (the optional ``plot`` extra: ``pip install "exactree[plot]"``).

- :func:`plot_tree`: the tree, one box per node (the test of a split node, the class and the
  weighted class totals of a leaf), coloured by class, with the branch conditions on the edges;
  a regression tree shows each leaf's value and is coloured by it;
- :func:`plot_path`: the objective against the number of splits of a ``fit_path`` result
  (:class:`~exactree.estimators.optimal.PathPoint` or
  :class:`~exactree.estimators.dyadic.DyadicPathEntry` lists), the chosen tree marked;
- :func:`plot_partition`: how a tree on two numeric features cuts the plane, over the data.

matplotlib is imported inside the functions, so ``import exactree`` never needs it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .tree.export import _names, as_tree, rule_formula
from .tree.tree import CATEGORICAL, LEAF, LINEAR, NOT_MISSING, THRESHOLD, Tree

__all__ = ["plot_partition", "plot_path", "plot_tree"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("exactree's plots need matplotlib: pip install \"exactree[plot]\" "
                          "(or pip install matplotlib)") from None
    return plt


def _class_colours(n_classes: int, cmap: Any = None) -> np.ndarray:
    """One RGBA colour per class."""
    import matplotlib as mpl

    if cmap is None:
        cmap = "tab10" if n_classes <= 10 else "tab20"
    cm = mpl.colormaps[cmap] if isinstance(cmap, str) else cmap
    n = getattr(cm, "N", 256)
    if n <= 20:  # a qualitative map: take its colours in order
        return np.array([cm(i % n) for i in range(n_classes)])
    return np.array([cm(i / max(n_classes - 1, 1)) for i in range(n_classes)])


def _node_colour(value: np.ndarray, label: int, colours: np.ndarray) -> tuple:
    """The class colour, paler the less pure the node (white for an even mix)."""
    total = value.sum()
    if total <= 0 or len(value) < 2:
        purity = 1.0
    else:
        top = np.sort(value)[::-1]
        purity = (top[0] - top[1]) / total
    base = np.asarray(colours[label][:3])
    alpha = 0.15 + 0.85 * purity
    return tuple(1 - alpha * (1 - base)) + (1.0,)


def _value_colours(tree: Tree, cmap: Any = None) -> np.ndarray:
    """Regression trees: one RGBA colour per node, from its mean on a sequential map."""
    import matplotlib as mpl

    cm = mpl.colormaps[cmap or "viridis"] if cmap is None or isinstance(cmap, str) else cmap
    v = tree.value[:, 0]
    lo, hi = float(v.min()), float(v.max())
    scaled = (v - lo) / (hi - lo) if hi > lo else np.full(len(v), 0.5)
    # Pale versions, so the black text stays readable.
    return np.array([tuple(1 - 0.55 * (1 - np.asarray(cm(x)[:3]))) + (1.0,) for x in scaled])


def _split_text(tree: Tree, node: int, features: Sequence[str], precision: int) -> str:
    kind = tree.kind[node]
    t = f"{tree.threshold[node]:.{precision}g}"
    if kind == THRESHOLD:
        name = features[tree.feature[node]]
        if not tree.missing_seen[tree.feature[node]]:
            return f"{name} <= {t}"
        # The column had missing values in fit: show the side they take.
        if tree.threshold[node] == NOT_MISSING and not tree.missing_left[node]:
            return f"{name} is not missing"
        return f"{name} <= {t} (missing: {'left' if tree.missing_left[node] else 'right'})"
    if kind == LINEAR:
        return f"{rule_formula(tree, node, features)} <= {t}"
    return f"{features[tree.feature[node]]} = ?"


def _edge_texts(tree: Tree, node: int, features: Sequence[str]) -> list[tuple[int, str]]:
    """``(child, text)`` per distinct child: yes/no for binary tests, categories otherwise."""
    kids = tree.children(node)
    if tree.kind[node] in (THRESHOLD, LINEAR):
        return [(int(kids[0]), "yes"), (int(kids[1]), "no")]
    assert tree.kind[node] == CATEGORICAL
    f = tree.feature[node]
    cats = tree.categories[f] if tree.categories and tree.categories[f] is not None else None
    labels = [str(cats[c]) if cats is not None and c < len(cats) else str(c)
              for c in range(len(kids))]
    out = []
    for child in dict.fromkeys(kids.tolist()):
        members = [labels[c] for c in np.flatnonzero(kids == child)]
        out.append((int(child), members[0] if len(members) == 1 else
                    "{" + ", ".join(members) + "}"))
    return out


def _layout(tree: Tree, max_depth: int | None) -> tuple[dict[int, tuple[float, float]], set[int]]:
    """Node positions: leaves (and nodes cut at ``max_depth``) left to right one unit apart,
    a parent centred over its children, depth downwards. Returns the positions and the
    nodes drawn as truncated."""
    pos: dict[int, tuple[float, float]] = {}
    truncated: set[int] = set()
    next_x = 0.0
    # iterative post-order so deep trees do not hit the recursion limit
    stack: list[tuple[int, int, bool]] = [(0, 0, False)]
    while stack:
        node, depth, done = stack.pop()
        kids = list(dict.fromkeys(tree.children(node).tolist()))
        cut = max_depth is not None and depth >= max_depth and tree.kind[node] != LEAF
        if tree.kind[node] == LEAF or cut:
            pos[node] = (next_x, -depth)
            next_x += 1.0
            if cut:
                truncated.add(node)
            continue
        if not done:
            stack.append((node, depth, True))
            stack.extend((k, depth + 1, False) for k in reversed(kids))
            continue
        xs = [pos[k][0] for k in kids]
        pos[node] = ((min(xs) + max(xs)) / 2, -depth)
    return pos, truncated


def plot_tree(estimator_or_tree: Any, ax: Any = None, *, feature_names: Sequence[str] | None = None,
              class_names: Sequence[Any] | None = None, max_depth: int | None = None,
              precision: int = 4, fontsize: float | None = None, cmap: Any = None,
              show_counts: bool = True) -> Any:
    """Draw a fitted tree with matplotlib and return the Axes.

    Split nodes show their test (``feature <= threshold``, with ``(missing: left)`` or
    ``(missing: right)`` where the column held missing values in fit, ``feature = ?`` for a
    multiway categorical split, the formula of an oblique/polynomial rule) and the training weight
    reaching them; the edges say ``yes``/``no`` for binary tests and the categories of each
    branch for categorical ones. Leaves show the predicted class and, with ``show_counts``,
    the weighted class totals. Boxes take the colour of their class, paler when mixed.

    Parameters
    ----------
    estimator_or_tree : fitted exactree estimator or :class:`~exactree.tree.Tree`
    ax : matplotlib Axes, optional
        Where to draw; a new figure sized to the tree when omitted.
    feature_names, class_names : sequences, optional
        Override the names recorded in the tree.
    max_depth : int, optional
        Draw only this many levels; deeper subtrees become a ``...`` box.
    precision : int
        Significant digits of thresholds.
    fontsize : float, optional
        Text size (default: shrinks with the number of leaves).
    cmap : matplotlib colormap or its name, optional
        Class colours (default ``tab10``).
    show_counts : bool
        Print the weighted class totals of each leaf.
    """
    plt = _pyplot()
    tree = as_tree(estimator_or_tree)
    features, classes = _names(tree, feature_names, class_names)
    pos, truncated = _layout(tree, max_depth)
    n_cols = max(x for x, _ in pos.values()) + 1
    n_rows = -min(y for _, y in pos.values()) + 1
    if ax is None:
        _, ax = plt.subplots(figsize=(min(2.2 * n_cols + 1, 40), min(1.5 * n_rows + 0.5, 30)))
    if fontsize is None:
        fontsize = max(5.0, 10.0 - 0.25 * max(n_cols - 6, 0))
    regression = tree.is_regression
    colours = _value_colours(tree, cmap) if regression else _class_colours(tree.n_classes, cmap)
    for node, (x, y) in pos.items():
        value = tree.value[node]
        weight = tree.node_weight[node] if regression else value.sum()
        if node in truncated:
            text = "..."
        elif tree.kind[node] == LEAF and regression:
            text = f"value: {value[0]:.{precision}g}"
            if show_counts:
                text += f"\nweight {weight:.{precision}g}"
        elif tree.kind[node] == LEAF:
            text = f"class: {classes[tree.label[node]]}"
            if show_counts:
                text += "\n" + ", ".join(f"{v:.{precision}g}" for v in value)
        else:
            text = (_split_text(tree, node, features, precision)
                    + f"\nweight {weight:.{precision}g}")
        fc = (tuple(colours[node]) if regression
              else _node_colour(value, tree.label[node], colours))
        ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, zorder=3,
                bbox=dict(boxstyle="round,pad=0.35", ec="0.3", fc=fc))
        if tree.kind[node] == LEAF or node in truncated:
            continue
        for child, label in _edge_texts(tree, node, features):
            cx, cy = pos[child]
            ax.annotate("", xy=(cx, cy), xytext=(x, y), zorder=1,
                        arrowprops=dict(arrowstyle="-", color="0.45", lw=1.0))
            ax.text((x + cx) / 2, (y + cy) / 2, label, ha="center", va="center",
                    fontsize=fontsize * 0.85, color="0.15", zorder=2,
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.9))
    ax.set_xlim(-0.7, n_cols - 0.3)
    ax.set_ylim(-(n_rows - 1) - 0.5, 0.5)
    ax.set_axis_off()
    return ax


def _path_and_choice(path: Any, chosen: Any) -> tuple[list, int | None]:
    if hasattr(path, "path_"):  # an estimator after fit_path
        est = path
        path = list(est.path_)
        if chosen is None:
            chosen = getattr(est, "selected_index_", None)
            if chosen is None:
                chosen = est.stats_.get("path_index") if isinstance(est.stats_, dict) else None
            if chosen is None:
                chosen = next((i for i, p in enumerate(path) if p.tree is est.tree_), None)
            if chosen is None:
                chosen = next((i for i, p in enumerate(path) if p.tree == est.tree_), None)
    path = list(path)
    if not path:
        raise ValueError("the path is empty")
    if chosen is not None and not isinstance(chosen, (int, np.integer)):
        chosen = next((i for i, p in enumerate(path) if p is chosen or p.tree is chosen), None)
        if chosen is None:
            raise ValueError("chosen is not an entry (or tree) of the path")
    if chosen is not None and not -len(path) <= chosen < len(path):
        raise ValueError(f"chosen index {chosen} is outside the path of {len(path)} entries")
    return path, None if chosen is None else int(chosen) % len(path)


def plot_path(path: Any, ax: Any = None, *, chosen: Any = None,
              intervals: bool | None = None) -> Any:
    """Plot a ``fit_path`` result, objective against number of splits, and return the Axes.

    ``path`` is the list :meth:`OptimalTreeClassifier.fit_path` returns (weighted
    misclassifications of the optimal tree of each node budget) or the one
    :meth:`DyadicTreeClassifier.fit_path` returns (training error fraction of every distinct
    optimum over all penalties, with its penalty interval), or the estimator itself after
    ``fit_path`` (its ``path_``). ``chosen`` (an index, an entry or a tree) is marked with a
    star; for an estimator it defaults to its fitted tree (for the dyadic path, the tree for
    ``penalty_`` or the one ``select_by_validation`` kept). ``intervals`` writes each dyadic
    entry's penalty interval next to it (default: for paths of at most 8 entries).
    """
    plt = _pyplot()
    path, chosen = _path_and_choice(path, chosen)
    dyadic = hasattr(path[0], "penalty_low")
    if dyadic:
        x = np.array([p.n_leaves - 1 for p in path], float)
        y = np.array([p.error for p in path], float)
        ylabel = "training error (fraction of weight)"
    elif hasattr(path[0], "max_nodes"):
        x = np.array([p.n_splits for p in path], float)
        y = np.array([p.objective for p in path], float)
        ylabel = "weighted misclassifications"
    else:
        raise TypeError("expected the result of fit_path (PathPoint or DyadicPathEntry entries)")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    order = np.argsort(x, kind="stable")
    ax.step(x[order], y[order], where="post", color="0.6", lw=1, zorder=1)
    ax.plot(x, y, "o", color="C0", zorder=2, label="optimal tree")
    if dyadic and (len(path) <= 8 if intervals is None else intervals):
        for xi, yi, p in zip(x, y, path):
            hi = "inf" if math.isinf(p.penalty_high) else f"{p.penalty_high:.3g}"
            ax.annotate(f"({p.penalty_low:.3g}, {hi}]", (xi, yi), textcoords="offset points",
                        xytext=(4, 4), fontsize=7, color="0.35")
    if chosen is not None:
        ax.plot([x[chosen]], [y[chosen]], "*", ms=16, color="C3", zorder=3, label="chosen")
        ax.annotate("chosen", (x[chosen], y[chosen]), textcoords="offset points",
                    xytext=(8, -14), color="C3")
    ax.set_xlabel("number of splits")
    ax.set_ylabel(ylabel)
    ax.set_title("penalty path (λ intervals)" if dyadic else "optimal tree per node budget")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(loc="upper right")
    ax.grid(alpha=0.3)
    return ax


def plot_partition(estimator: Any, X: Any, y: Any = None, ax: Any = None, *,
                   resolution: int = 300, margin: float = 0.05, cmap: Any = None) -> Any:
    """Draw how a fitted tree on two numeric features partitions the plane, and return the Axes.

    Each region takes the colour of the class it predicts (a regression tree: of its value),
    leaf boundaries are drawn in black and the rows of ``X`` are scattered on top (coloured by
    ``y`` when given). Meant for
    :class:`~exactree.DyadicTreeClassifier` and 2-D :class:`~exactree.ObliqueTreeClassifier`,
    it works for any exactree classifier fitted on two numeric columns.
    """
    plt = _pyplot()
    from matplotlib.colors import ListedColormap

    tree = as_tree(estimator)
    if tree.n_features != 2:
        raise ValueError(f"plot_partition draws trees on 2 features; this one has "
                         f"{tree.n_features}")
    if tree.categories is not None and any(c is not None for c in tree.categories):
        raise ValueError("plot_partition needs two numeric features (this tree splits a "
                         "categorical one)")
    names = getattr(estimator, "feature_names_in_", None)
    A = np.asarray(X, dtype=np.float64)
    if A.ndim != 2 or A.shape[1] != 2:
        raise ValueError(f"X must have 2 columns, got shape {A.shape}")
    lo, hi = A.min(axis=0), A.max(axis=0)
    pad = (hi - lo) * margin + (hi == lo)
    g0 = np.linspace(lo[0] - pad[0], hi[0] + pad[0], resolution)
    g1 = np.linspace(lo[1] - pad[1], hi[1] + pad[1], resolution)
    G0, G1 = np.meshgrid(g0, g1)
    grid = np.column_stack([G0.ravel(), G1.ravel()])
    leaves = tree.apply(grid).reshape(G0.shape)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 5))
    if tree.is_regression:
        return _regression_partition(ax, tree, G0, G1, leaves, A, y, names, cmap)
    labels = tree.label[leaves]
    colours = _class_colours(tree.n_classes, cmap)
    ax.pcolormesh(G0, G1, labels, cmap=ListedColormap(colours[:, :3]), vmin=-0.5,
                  vmax=tree.n_classes - 0.5, alpha=0.35, shading="nearest", zorder=0)
    for leaf in np.unique(leaves)[:500]:  # the outline of every leaf's region
        ax.contour(G0, G1, (leaves == leaf).astype(float), levels=[0.5], colors="k",
                   linewidths=0.8, zorder=1)
    classes = (list(tree.class_names) if tree.class_names is not None
               else list(range(tree.n_classes)))
    if y is None:
        ax.scatter(A[:, 0], A[:, 1], s=12, c="0.2", zorder=2)
    else:
        y = np.asarray(y)
        for k, c in enumerate(classes):
            rows = y == c
            if np.any(rows):
                ax.scatter(A[rows, 0], A[rows, 1], s=14, color=colours[k], edgecolor="k",
                           linewidth=0.4, label=str(c), zorder=2)
        ax.legend(title="class", loc="best", fontsize=8)
    features = list(names) if names is not None else list(tree.feature_names or ("x0", "x1"))
    ax.set_xlabel(str(features[0]))
    ax.set_ylabel(str(features[1]))
    ax.set_xlim(g0[0], g0[-1])
    ax.set_ylim(g1[0], g1[-1])
    return ax


def _regression_partition(ax: Any, tree: Tree, G0: np.ndarray, G1: np.ndarray,
                          leaves: np.ndarray, A: np.ndarray, y: Any, names: Any,
                          cmap: Any) -> Any:
    """:func:`plot_partition` for a regression tree: regions shaded by their value, rows by y."""
    values = tree.value[leaves, 0]
    cmap = cmap or "viridis"
    lo = float(values.min()) if y is None else float(min(values.min(), np.min(y)))
    hi = float(values.max()) if y is None else float(max(values.max(), np.max(y)))
    mesh = ax.pcolormesh(G0, G1, values, cmap=cmap, vmin=lo, vmax=hi, alpha=0.35,
                         shading="nearest", zorder=0)
    for leaf in np.unique(leaves)[:500]:
        ax.contour(G0, G1, (leaves == leaf).astype(float), levels=[0.5], colors="k",
                   linewidths=0.8, zorder=1)
    if y is None:
        ax.scatter(A[:, 0], A[:, 1], s=12, c="0.2", zorder=2)
    else:
        ax.scatter(A[:, 0], A[:, 1], s=14, c=np.asarray(y, np.float64), cmap=cmap, vmin=lo,
                   vmax=hi, edgecolor="k", linewidth=0.4, zorder=2)
    ax.figure.colorbar(mesh, ax=ax, label="value")
    features = list(names) if names is not None else list(tree.feature_names or ("x0", "x1"))
    ax.set_xlabel(str(features[0]))
    ax.set_ylabel(str(features[1]))
    ax.set_xlim(G0[0, 0], G0[0, -1])
    ax.set_ylim(G1[0, 0], G1[-1, 0])
    return ax
