"""BSP auto-partitions and K-D trees built with the proper-tree search."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from exactree.applications import (balanced_leaves, optimal_bsp, optimal_kdtree,
                                   permutation_bsp_size)
from exactree.tree import LINEAR, THRESHOLD


# ------------------------------------------------------------------ BSP
@pytest.mark.parametrize("segments, size", [
    ([[[0, 0], [1, 0]]], 1),                                      # one segment: a leaf
    ([[[0, 0], [1, 0]], [[3, 0], [3, 1]]], 3),                    # two disjoint segments
    ([[[0, 0], [1, 0]], [[0, 1], [1, 1]], [[0, 2], [1, 2]]], 3),  # stacked: split on the middle
    ([[[0, 0], [2, 2]], [[0, 2], [2, 0]]], 3),                    # an X: one cut, two pieces
    ([[[0, 0], [1, 0]], [[2, 0], [3, 0]], [[0, 1], [1, 1]]], 3),  # collinear pair stored together
    # four stacked horizontals: root on a middle line leaves 2 + 1 -> 1 + 3 + 1 = 5
    ([[[0, 0], [1, 0]], [[0, 1], [1, 1]], [[0, 2], [1, 2]], [[0, 3], [1, 3]]], 5),
])
def test_bsp_known_minimal_sizes(segments, size):
    tree = optimal_bsp(segments)
    assert tree.size == size
    assert tree.size == len(tree.nodes())
    assert tree.to_tree().n_nodes == tree.size
    # every segment is covered exactly by its fragments
    seg = np.asarray(segments, float)
    for i in range(len(seg)):
        pieces = sorted((f[1], f[2]) for n in tree.nodes() for f in n.fragments if f[0] == i)
        assert pieces[0][0] == 0.0 and pieces[-1][1] == 1.0
        assert all(abs(a[1] - b[0]) < 1e-12 for a, b in zip(pieces, pieces[1:]))


@pytest.mark.parametrize("seed", range(4))
def test_bsp_never_worse_than_any_permutation(seed):
    seg = np.random.default_rng(seed).uniform(0, 10, size=(6, 2, 2))
    tree = optimal_bsp(seg)
    best_perm = min(permutation_bsp_size(seg, p) for p in itertools.permutations(range(6)))
    assert tree.size <= best_perm
    for node in tree.nodes():  # leaves hold at most one fragment
        assert node.line is not None or len(node.fragments) <= 1
    assert set(np.unique(tree.to_tree().kind)) <= {0, LINEAR}


def test_bsp_painter_order_and_locate():
    tree = optimal_bsp([[[0, 0], [2, 2]], [[0, 2], [2, 0]]])
    order = tree.painter_order([5.0, 1.0])
    assert len(order) == tree.n_fragments == 3
    leaves = tree.locate([[1.0, 0.2], [1.0, 1.8]])
    assert leaves[0] != leaves[1]


def test_bsp_bad_input():
    with pytest.raises(ValueError, match="shape"):
        optimal_bsp([[0, 0], [1, 1]])
    with pytest.raises(ValueError, match="zero length"):
        optimal_bsp([[[0, 0], [0, 0]]])
    with pytest.raises(ValueError, match="max_segments"):
        optimal_bsp(np.random.default_rng(0).uniform(size=(20, 2, 2)))


# ------------------------------------------------------------------ K-D tree
def test_kdtree_properties():
    X = np.random.default_rng(1).normal(size=(15, 2))
    kd = optimal_kdtree(X, 3)
    t = kd.tree
    assert kd.status == "optimal" and t.n_splits == 3
    assert set(np.unique(t.kind)) == {0, THRESHOLD}
    # axes cycle with depth, thresholds are the split points' coordinates
    depth = t.depth
    for node, r in kd.split_point.items():
        assert t.feature[node] == depth[node] % 2
        assert t.threshold[node] == X[r, t.feature[node]]
    # split points and leaf points partition the data; leaves agree with query()
    stored = sorted(list(kd.split_point.values()) + [i for v in kd.leaf_points.values() for i in v])
    assert stored == list(range(15))
    for leaf, pts in kd.leaf_points.items():
        assert np.all(kd.query(X[pts]) == leaf)
    sizes = [len(v) for v in kd.leaf_points.values()]
    assert kd.objective == sum(s * s for s in sizes)


def test_kdtree_matches_brute_force_on_leaf_sizes():
    """Exhaustive check: no other choice of split points and roots gives a smaller max leaf."""
    X = np.random.default_rng(2).uniform(size=(9, 2))
    kd = optimal_kdtree(X, 2, leaf_cost=lambda p: float(len(p)), combine="max")
    best = np.inf
    for a, b in itertools.permutations(range(9), 2):  # root a, child b on its side
        left = X[:, 0] <= X[a, 0]
        rest = np.ones(9, bool)
        rest[[a, b]] = False
        side = left if X[b, 0] <= X[a, 0] else ~left
        other = rest & ~side
        inside = rest & side
        go = X[:, 1] <= X[b, 1]
        best = min(best, max(other.sum(), (inside & go).sum(), (inside & ~go).sum()))
    assert kd.objective == best


def test_kdtree_bad_input_and_custom_axes():
    X = np.random.default_rng(3).normal(size=(8, 3))
    kd = optimal_kdtree(X, 2, axis_order=[2], leaf_cost=balanced_leaves)
    assert set(kd.tree.feature[kd.tree.kind == THRESHOLD]) == {2}
    with pytest.raises(ValueError, match="n_splits"):
        optimal_kdtree(X, 9)
    with pytest.raises(ValueError, match="axis_order"):
        optimal_kdtree(X, 1, axis_order=[5])


def test_plot_helpers():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2)
    optimal_bsp([[[0, 0], [2, 2]], [[0, 2], [2, 0]], [[3, 0], [3, 2]]]).plot(a)
    optimal_kdtree(np.random.default_rng(0).normal(size=(10, 2)), 2).plot(b)
    assert len(a.lines) >= 3 and len(b.lines) == 2
    plt.close(fig)


@pytest.mark.parametrize("seed", range(3))
def test_bsp_invariant_under_translation_and_scaling(seed):
    """The on-line test is relative: moving or resizing the scene never changes the optimum
    (an absolute tolerance once made every segment 'on' every line at scale 1e-9)."""
    seg = np.random.default_rng(seed).uniform(0, 10, size=(6, 2, 2))
    stacked = np.array([[[0, k], [1, k]] for k in range(4)], float)
    for base in (seg, stacked):
        sizes = {optimal_bsp(base * scale + offset).size
                 for offset, scale in ((0, 1), (0, 1e-9), (0, 1e9), (1e6, 1), (-3e4, 1e-2))}
        assert sizes == {optimal_bsp(base).size}
        order = list(range(len(base)))
        assert permutation_bsp_size(base * 1e-9, order) == permutation_bsp_size(base, order)
