"""Compiled trees (Zhang's (S, t, B, v) form) against the traversal of the same Tree."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exactree.tree import LEAF, Tree, TreeBuilder
from exactree.tree.compiled import CompiledTree, check_bitvector_matrix, predict_leaves

GRID = [-1.0, -0.5, 0.0, 0.1, 0.3, 0.5, 1.0, 1.5]  # thresholds; inputs also hit them exactly
COEFS = [-2.0, -1.0, -0.5, 0.1, 0.3, 0.7, 1.0, 3.0]
N_FEATURES = 3  # column 2 holds category codes 0..2 in categorical trees

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def rule_value(coef, powers, x):
    """The rule of a LINEAR node at one point, computed as Tree.rule_values does."""
    x = np.asarray(x, np.float64)[None, :]
    return (np.prod(x[:, None, :] ** powers[None], axis=2) @ coef)[0]


@st.composite
def trees(draw, kinds=("threshold", "linear"), polynomial=False, max_depth=4, n_classes=3):
    """A random Tree whose internal values are the sums of their children's (labels argmax),
    built in preorder; leaf labels are arbitrary (not always argmax) to test they are kept."""
    b = TreeBuilder(N_FEATURES, n_classes)

    def grow(depth):
        if depth == max_depth or draw(st.integers(0, 3)) == 0:
            value = np.array(draw(st.lists(st.integers(0, 3), min_size=n_classes,
                                           max_size=n_classes)), float)
            return b.leaf(value, draw(st.integers(0, n_classes - 1))), value
        kind = draw(st.sampled_from(kinds))
        if kind == "categorical":
            slots = draw(st.lists(st.integers(0, 2), min_size=3, max_size=3))
            made = {s: grow(depth + 1) for s in sorted(set(slots))}
            value = sum(made[s][1] for s in made)
            node = b.categorical(2, [made[s][0] for s in slots], value, int(np.argmax(value)))
            return node, value
        left, lv = grow(depth + 1)
        right, rv = grow(depth + 1)
        value = lv + rv
        label = int(np.argmax(value))
        if kind == "threshold":
            f = draw(st.integers(0, N_FEATURES - 1))
            return b.threshold(f, draw(st.sampled_from(GRID)), [left, right], value, label), value
        n_terms = draw(st.integers(1, 3))
        coef = np.array(draw(st.lists(st.sampled_from(COEFS), min_size=n_terms, max_size=n_terms)))
        if polynomial:
            powers = np.array(draw(st.lists(st.lists(st.integers(0, 2), min_size=N_FEATURES,
                                                     max_size=N_FEATURES),
                                            min_size=n_terms, max_size=n_terms)))
        else:
            fs = draw(st.lists(st.integers(0, N_FEATURES - 1), min_size=n_terms, max_size=n_terms))
            powers = np.eye(N_FEATURES, dtype=np.int64)[fs]
        anchor = draw(st.lists(st.sampled_from(GRID), min_size=N_FEATURES, max_size=N_FEATURES))
        thr = rule_value(coef, powers, anchor)  # a grid point lies exactly on this threshold
        return b.linear(coef, powers, thr, [left, right], value, label), value

    root, _ = grow(0)
    return b.build(root)


@st.composite
def inputs(draw, categorical=False):
    n = draw(st.integers(1, 40))
    values = st.one_of(st.sampled_from(GRID), st.floats(-2, 2, allow_nan=False))
    X = np.array(draw(st.lists(st.lists(values, min_size=N_FEATURES, max_size=N_FEATURES),
                               min_size=n, max_size=n)))
    if categorical:
        X[:, 2] = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    return X


def assert_same_predictions(tree: Tree, X: np.ndarray) -> None:
    ct = tree.compile()
    leaves = tree.apply(X)
    for method in ("bitvector", "walk", "matmul", "auto"):
        np.testing.assert_array_equal(ct.apply(X, method=method), leaves)
        np.testing.assert_array_equal(ct.predict(X, method=method), tree.predict(X))
        np.testing.assert_array_equal(ct.predict_proba(X, method=method), tree.predict_proba(X))
    np.testing.assert_array_equal(predict_leaves(tree, X), leaves)


# ------------------------------------------------------------------------- the paper's example
PAPER_S = np.eye(4)[[0, 1, 2, 1, 3]]
PAPER_T = np.array([1.0, 4.0, 3.0, 2.0, 5.0])
PAPER_B = np.array([[0, 0, 1, 0, 1], [0, 0, 1, 1, 0], [0, 0, 1, 1, 1], [0, 1, 1, 1, 1],
                    [1, 1, 0, 1, 1], [1, 1, 1, 1, 1]])  # columns in breadth-first order


def test_paper_example():
    ct = CompiledTree(PAPER_S, PAPER_T, PAPER_B, np.eye(6))
    # Section 2.2: x = (2, 1, 2, 2) reaches v5; with no false node the first leaf.
    np.testing.assert_array_equal(ct.leaf_rows([[2, 1, 2, 2], [1, 1, 2, 3]]), [4, 0])
    for method in ("matmul", "walk", "bitvector"):
        np.testing.assert_array_equal(ct.leaf_rows([[2, 1, 2, 2]], method=method), [4])
    # Section 3: root, its left child, that child's left and right-left nodes, then the root's
    # right child: preorder is columns 0, 1, 3, 4, 2.
    np.testing.assert_array_equal(check_bitvector_matrix(PAPER_B), [0, 1, 3, 4, 2])
    tree = ct.to_tree()
    assert tree.n_leaves == 6 and tree.max_depth == 4
    recompiled = tree.compile()
    np.testing.assert_array_equal(recompiled.B, PAPER_B[:, [0, 1, 3, 4, 2]])
    np.testing.assert_array_equal(recompiled.t, PAPER_T[[0, 1, 3, 4, 2]])
    rng = np.random.default_rng(0)
    X = rng.integers(0, 7, size=(200, 4)).astype(float)
    np.testing.assert_array_equal(ct.apply(X), tree.apply(X))


# ------------------------------------------------------------------------ prediction is exact
@SETTINGS
@given(trees(kinds=("threshold",)), inputs())
def test_axis_parallel_matches_traversal(tree, X):
    assert_same_predictions(tree, X)


@SETTINGS
@given(trees(kinds=("threshold", "linear")), inputs())
def test_oblique_matches_traversal(tree, X):
    assert_same_predictions(tree, X)


@SETTINGS
@given(trees(kinds=("threshold", "linear"), polynomial=True), inputs())
def test_polynomial_matches_traversal(tree, X):
    assert_same_predictions(tree, X)


@SETTINGS
@given(trees(kinds=("threshold", "categorical", "linear")), inputs(categorical=True))
def test_categorical_expansion_matches_traversal(tree, X):
    assert_same_predictions(tree, X)
    # The expansion is a binary tree predicting the same classes.
    binary = tree.compile().to_tree()
    assert not np.any(binary.kind == 2)
    np.testing.assert_array_equal(binary.predict_proba(X), tree.predict_proba(X))


def test_categorical_rejects_unknown_codes():
    b = TreeBuilder(1, 2)
    leaves = [b.leaf([1, 0], 0), b.leaf([0, 1], 1)]
    tree = b.build(b.categorical(0, [leaves[0], leaves[1], leaves[0]], [1, 1], 0))
    ct = tree.compile()
    np.testing.assert_array_equal(ct.apply([[0], [1], [2]]), tree.apply([[0], [1], [2]]))
    for bad in (3.0, 0.5, -1.0):
        with pytest.raises(ValueError, match="category code"):
            ct.apply([[bad]])


# -------------------------------------------------------------------------------- round trip
@SETTINGS
@given(trees(kinds=("threshold", "linear"), polynomial=True))
def test_round_trip_is_identity(tree):
    ct = tree.compile()
    assert ct.to_tree() == tree
    # The bare matrices determine the same tree (Lemma 1), up to LINEAR/THRESHOLD naming of a
    # rule "1 * x_f", which predicts identically.
    bare = CompiledTree(ct.S, ct.t, ct.B, ct.v, labels=ct.labels, powers=ct.powers)
    rebuilt = bare.to_tree()
    np.testing.assert_array_equal(rebuilt.child, tree.child)
    np.testing.assert_array_equal(rebuilt.threshold, tree.threshold)
    np.testing.assert_array_equal(rebuilt.value, tree.value)
    assert rebuilt.compile().to_tree() == rebuilt


@SETTINGS
@given(trees(kinds=("threshold",)), st.randoms(use_true_random=False))
def test_any_column_order_gives_the_same_tree(tree, rnd):
    ct = tree.compile()
    perm = list(range(ct.n_internal))
    rnd.shuffle(perm)
    shuffled = CompiledTree(ct.S[perm], ct.t[perm], ct.B[:, perm], ct.v, labels=ct.labels)
    assert shuffled.to_tree() == tree
    X = np.array(list(itertools.product(GRID, repeat=N_FEATURES)))
    np.testing.assert_array_equal(shuffled.apply(X, method="matmul"), tree.apply(X))
    np.testing.assert_array_equal(shuffled.apply(X, method="bitvector"), tree.apply(X))
    np.testing.assert_array_equal(shuffled.apply(X, method="walk"), tree.apply(X))


def test_save_load(tmp_path):
    b = TreeBuilder(2, 2)
    lin = b.linear([0.5, -1.0], [[1, 0], [1, 1]], 0.25, [b.leaf([3, 1], 0), b.leaf([0, 2], 1)],
                   [3, 3], 0)
    tree = b.build(b.threshold(1, 0.5, [lin, b.leaf([1, 1], 1)], [4, 4], 0),
                   feature_names=["a", "b"], class_names=["no", 7])
    ct = tree.compile()
    ct.save(tmp_path / "tree.npz")
    back = CompiledTree.load(tmp_path / "tree.npz")
    assert back == ct and back.to_tree() == tree
    np.savez(tmp_path / "bad.npz", S=np.zeros(1))
    with pytest.raises(ValueError, match="not an exactree compiled tree"):
        CompiledTree.load(tmp_path / "bad.npz")


# ----------------------------------------------------------------------- non-trees rejected
def all_bitvector_matrices(n_leaves: int) -> set[tuple]:
    """Brute force: B of every binary tree shape with ``n_leaves`` leaves, columns sorted."""
    def shapes(n):
        if n == 1:
            yield None
            return
        for k in range(1, n):
            for a in shapes(k):
                for c in shapes(n - k):
                    yield (a, k, c)

    def columns(shape, lo, n_total):
        if shape is None:
            return []
        a, k, c = shape
        col = tuple(0 if lo <= r < lo + k else 1 for r in range(n_total))
        return [col] + columns(a, lo, n_total) + columns(c, lo + k, n_total)

    return {tuple(sorted(columns(s, 0, n_leaves))) for s in shapes(n_leaves)}


ORACLE = {n: all_bitvector_matrices(n) for n in range(2, 7)}


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 6).flatmap(
    lambda n: st.lists(st.lists(st.integers(0, 1), min_size=n - 1, max_size=n - 1),
                       min_size=n, max_size=n)))
def test_random_01_matrices_accepted_iff_tree(rows):
    B = np.array(rows)
    is_tree = tuple(sorted(map(tuple, B.T.tolist()))) in ORACLE[len(B)]
    if is_tree:
        order = check_bitvector_matrix(B)
        assert sorted(order) == list(range(B.shape[1]))
        CompiledTree(np.eye(1)[[0] * B.shape[1]], np.zeros(B.shape[1]), B, np.eye(len(B)))
    else:
        with pytest.raises(ValueError, match="B"):
            check_bitvector_matrix(B)
        with pytest.raises(ValueError):
            CompiledTree(np.eye(1)[[0] * B.shape[1]], np.zeros(B.shape[1]), B, np.eye(len(B)))


@pytest.mark.parametrize("n", range(2, 7))
def test_every_tree_shape_decodes(n):
    for cols in ORACLE[n]:
        B = np.array(cols).T
        check_bitvector_matrix(B)
    assert len(ORACLE[n]) == [1, 1, 2, 5, 14, 42][n - 1]  # Catalan numbers


def test_bad_inputs_fail_loudly():
    with pytest.raises(ValueError, match="one column fewer"):
        check_bitvector_matrix(np.ones((3, 3)))
    with pytest.raises(ValueError, match="only 0 and 1"):
        check_bitvector_matrix([[0], [2]])
    with pytest.raises(ValueError, match="contiguous"):
        check_bitvector_matrix([[0, 1], [1, 1], [0, 1]])
    with pytest.raises(ValueError, match="equal"):
        check_bitvector_matrix([[0, 0], [1, 1], [1, 1]])
    with pytest.raises(ValueError, match="does not nest|no column splits"):
        check_bitvector_matrix([[0, 1], [1, 0], [1, 0]])
    ct = CompiledTree(PAPER_S, PAPER_T, PAPER_B, np.eye(6))
    with pytest.raises(ValueError, match="4 columns"):
        ct.apply(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="infinity"):
        ct.apply([[np.inf, 0, 0, 0]])
    with pytest.raises(ValueError, match="method"):
        ct.apply(np.zeros((2, 4)), method="nope")
    with pytest.raises(ValueError, match="one row per internal node"):
        CompiledTree(PAPER_S[:3], PAPER_T, PAPER_B, np.eye(6))
    with pytest.raises(ValueError, match="THRESHOLD"):
        CompiledTree(2 * PAPER_S, PAPER_T, PAPER_B, np.eye(6), node_kind=[1] * 5)
    tree = ct.to_tree()
    with pytest.raises(ValueError, match="method"):
        predict_leaves(tree, np.zeros((2, 4)), method="nope")


def test_single_leaf_tree():
    b = TreeBuilder(2, 2)
    tree = b.build(b.leaf([0, 0], 1))
    ct = tree.compile()
    assert ct.B.shape == (1, 0)
    X = np.zeros((5, 2))
    np.testing.assert_array_equal(ct.apply(X), tree.apply(X))
    np.testing.assert_array_equal(ct.predict_proba(X), tree.predict_proba(X))
    assert ct.to_tree() == tree


def test_deep_tree_uses_several_words():
    """More than 64 leaves: the bitvectors span several 64-bit words."""
    rng = np.random.default_rng(1)
    b = TreeBuilder(4, 2)

    def grow(depth):
        if depth == 7:
            return b.leaf(rng.integers(0, 3, 2), int(rng.integers(2)))
        kids = [grow(depth + 1), grow(depth + 1)]
        value = b._nodes[kids[0]][4] + b._nodes[kids[1]][4]
        return b.threshold(int(rng.integers(4)), float(rng.normal()), kids, value,
                           int(np.argmax(value)))

    tree = b.build(grow(0))
    X = rng.normal(size=(2000, 4))
    assert tree.n_leaves == 128
    assert_same_predictions(tree, X)
    assert tree.compile().to_tree() == tree


# ------------------------------------------------------------------- array-library-agnostic
def test_array_api_path_matches_numpy():
    xp = pytest.importorskip("array_api_strict")
    b = TreeBuilder(2, 2)
    lin = b.linear([0.5, -1.0], [[1, 0], [0, 1]], 0.25, [b.leaf([3, 1], 0), b.leaf([0, 2], 1)],
                   [3, 3], 0)
    poly = b.linear([1.0], [[2, 0]], 0.5, [b.leaf([1, 0], 0), b.leaf([0, 1], 1)], [1, 1], 0)
    tree = b.build(b.threshold(1, 0.1, [lin, poly], [4, 4], 0))
    ct = tree.compile()
    rng = np.random.default_rng(2)
    X = np.concatenate([rng.normal(size=(300, 2)), [[0.0, 0.1], [2.0, 0.1]]])
    out = ct.apply(xp.asarray(X))
    assert isinstance(out, type(xp.asarray(X)))
    np.testing.assert_array_equal(np.asarray(out), tree.apply(X))
    np.testing.assert_array_equal(np.asarray(ct.predict(xp.asarray(X))), tree.predict(X))
    np.testing.assert_allclose(np.asarray(ct.predict_proba(xp.asarray(X))), tree.predict_proba(X))


@settings(max_examples=40, deadline=None)
@given(trees(kinds=("threshold",)), inputs())
def test_array_api_float32_axis_parallel_is_exact(tree, X):
    """float32 inputs against float64 thresholds: thresholds are rounded down, so every row goes
    the way the exact comparison of its float32 value sends it."""
    xp = pytest.importorskip("array_api_strict")
    X32 = X.astype(np.float32)
    expected = tree.apply(X32.astype(np.float64))
    np.testing.assert_array_equal(np.asarray(tree.compile().apply(xp.asarray(X32))), expected)


def test_leaf_ids_of_hand_made_tree_not_in_preorder():
    """Children numbered out of preorder: compile follows the structure, not the ids."""
    tree = Tree(kind=np.array([1, 0, 0], np.int8), feature=np.array([0, -1, -1]),
                threshold=np.array([0.5, np.nan, np.nan]), child_ptr=np.array([0, 2, 2, 2]),
                child=np.array([2, 1]), value=np.array([[1, 1], [0, 1], [1, 0]], float),
                label=np.array([0, 1, 0]), n_features=1)
    X = np.array([[0.0], [0.5], [1.0]])
    ct = tree.compile()
    np.testing.assert_array_equal(ct.apply(X), tree.apply(X))
    assert [k for k in ct.to_tree().kind] == [1, LEAF, LEAF]


def test_jax_path_eager_and_jit():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    b = TreeBuilder(2, 3)
    lin = b.linear([0.5, -1.0], [[1, 0], [0, 1]], 0.25, [b.leaf([3, 1, 0], 0),
                                                         b.leaf([0, 2, 0], 1)], [3, 3, 0], 0)
    tree = b.build(b.threshold(1, 0.1, [lin, b.leaf([0, 0, 4], 2)], [3, 3, 4], 2))
    ct = tree.compile()
    rng = np.random.default_rng(3)
    X = np.concatenate([rng.normal(size=(200, 2)), [[0.0, 0.1], [1.0, -0.5]]]).astype(np.float32)
    expected = tree.apply(X.astype(np.float64))
    np.testing.assert_array_equal(np.asarray(ct.apply(jnp.asarray(X))), expected)
    predict = jax.jit(ct.predict)
    np.testing.assert_array_equal(np.asarray(predict(jnp.asarray(X))), tree.label[expected])
    np.testing.assert_allclose(np.asarray(ct.predict_proba(jnp.asarray(X))),
                               tree.predict_proba(X.astype(np.float64)), rtol=1e-6)


def test_degenerate_split_is_rejected():
    with pytest.raises(ValueError, match="must differ"):
        Tree(kind=np.array([1, 0], np.int8), feature=np.array([0, -1]),
             threshold=np.array([0.5, np.nan]), child_ptr=np.array([0, 2, 2]),
             child=np.array([1, 1]), value=np.array([[1, 1], [1, 1]], float),
             label=np.array([0, 0]), n_features=1)


def test_predict_leaves_caches_per_tree_and_forces_methods():
    from exactree.tree import compiled as mod
    ct = CompiledTree(PAPER_S, PAPER_T, PAPER_B, np.eye(6))
    tree = ct.to_tree()
    X = np.random.default_rng(4).integers(0, 7, size=(50, 4)).astype(float)
    for method in ("auto", "compiled", "traversal"):
        np.testing.assert_array_equal(predict_leaves(tree, X, method=method), tree.apply(X))
    assert mod._cached(tree) is mod._cached(tree)
    key = id(tree)
    del tree
    import gc
    gc.collect()
    assert key not in mod._CACHE


def _balanced_tree(depth: int, n_features: int = 4) -> Tree:
    """A complete binary tree of the given depth (``2**depth`` leaves) over random features."""
    rng = np.random.default_rng(depth)
    b = TreeBuilder(n_features, 2)

    def grow(d):
        if d == depth:
            value = rng.integers(1, 4, 2).astype(float)
            return b.leaf(value, int(np.argmax(value))), value
        (left, lv), (right, rv) = grow(d + 1), grow(d + 1)
        value = lv + rv
        return b.threshold(int(rng.integers(n_features)), float(rng.normal()), [left, right],
                           value, int(np.argmax(value))), value

    return b.build(grow(0)[0])


def test_predict_leaves_auto_never_compiles_a_large_tree(monkeypatch):
    """``method="auto"`` follows prefer_compiled: an 8,192-leaf tree (a 67M-cell bitvector
    matrix, above MAX_COMPILED_CELLS) is traversed at any batch size, never compiled (once a
    fixed 2,000-row threshold compiled it: 16k leaves took 21 s and 1.7 GB for 2,000 rows)."""
    from exactree.tree import compiled as mod
    from exactree.tree.tree import MAX_COMPILED_CELLS, compiled_shape

    tree = _balanced_tree(13)
    assert tree.n_leaves == 8192
    leaves, splits = compiled_shape(tree)
    assert leaves * splits > MAX_COMPILED_CELLS

    def refuse(_tree):
        raise AssertionError("predict_leaves(method='auto') built the compiled form")

    monkeypatch.setattr(mod, "compile_tree", refuse)
    rng = np.random.default_rng(1)
    for n in (2000, 50_000):
        X = rng.normal(size=(n, 4))
        np.testing.assert_array_equal(predict_leaves(tree, X, method="auto"), tree.apply(X))
    with pytest.raises(AssertionError, match="built the compiled form"):
        predict_leaves(tree, X[:10], method="compiled")  # the patch is the path "auto" avoids


def test_predict_leaves_auto_defers_to_prefer_compiled(monkeypatch):
    """"auto" compiles exactly when prefer_compiled says so, whatever the batch size."""
    from exactree.tree import compiled as mod

    tree = _balanced_tree(3)
    X = np.random.default_rng(2).normal(size=(5, 4))
    built = []
    real = mod.compile_tree
    monkeypatch.setattr(mod, "compile_tree", lambda t: built.append(t) or real(t))
    monkeypatch.setattr(mod, "prefer_compiled", lambda t, n: False)
    np.testing.assert_array_equal(predict_leaves(tree, np.tile(X, (1000, 1))), tree.apply(
        np.tile(X, (1000, 1))))
    assert built == []
    monkeypatch.setattr(mod, "prefer_compiled", lambda t, n: (t is tree and n == 5))
    np.testing.assert_array_equal(predict_leaves(tree, X), tree.apply(X))
    assert built == [tree]


@pytest.mark.parametrize("float64", [True, False])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint64", "int8", "bool"])
def test_array_api_integer_input_gets_tree_leaves(monkeypatch, float64, dtype):
    """Integer inputs are compared as Tree.predict compares them (float64), never through a
    float32 cast (16777217 -> 16777216 once sent it to the wrong side of 16777216.5); without
    float64 (jax without x64) axis-parallel nodes compare integers exactly."""
    xp = pytest.importorskip("array_api_strict")
    from exactree.tree import compiled as mod

    monkeypatch.setattr(mod, "_XP_FLOAT64", float64)
    info = np.iinfo(dtype) if dtype != "bool" else None
    b = TreeBuilder(2, 3)
    thresholds = [16777216.5, -3.5, 2.0**40 + 0.5, 0.5, 1e300, -1e300, 100.0]
    rng = np.random.default_rng(0)

    def grow(depth):
        if depth == 3:
            return b.leaf(rng.integers(1, 4, 3).astype(float), int(rng.integers(3)))
        kids = [grow(depth + 1), grow(depth + 1)]
        return b.threshold(int(rng.integers(2)), float(rng.choice(thresholds)), kids,
                           b._nodes[kids[0]][4] + b._nodes[kids[1]][4], 0)

    tree = b.build(grow(0))
    if info is None:
        X = rng.integers(0, 2, size=(64, 2)).astype(bool)
    else:
        near = [16777216, 16777217, -4, -3, 0, 1, 2**40, 2**40 + 1, 99, 100, 101]
        vals = [v for v in near if info.min <= v <= info.max] + [int(info.min), int(info.max)]
        X = rng.choice(np.array(vals, dtype=dtype), size=(64, 2))
    expected = tree.apply(X)  # Tree converts to float64 itself
    ct = tree.compile()
    np.testing.assert_array_equal(np.asarray(ct.apply(xp.asarray(X))), expected)
    np.testing.assert_array_equal(np.asarray(ct.predict(xp.asarray(X))), tree.label[expected])


def test_round_trip_keeps_internal_labels_that_are_not_the_majority(tmp_path):
    """Cost-sensitive trees label internal nodes by least cost, not argmax(value): the
    compiled form records them, so to_tree() gives back the very tree (and so does save/load);
    a file without them (older format) still loads, with the argmax defaults."""
    from exactree import DyadicTreeClassifier

    rng = np.random.default_rng(0)
    X = rng.random((120, 2))
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.3)).astype(int)
    y[rng.random(120) < 0.15] ^= 1
    model = DyadicTreeClassifier(loss=[[0, 1], [6, 0]], max_splits_per_dim=3,
                                 penalty=0.005).fit(X, y)
    tree = model.tree_
    internal = tree.kind != LEAF
    assert np.any(tree.label[internal] != np.argmax(tree.value[internal], axis=1))
    ct = tree.compile()
    assert ct.to_tree() == tree
    ct.save(tmp_path / "t.npz")
    assert CompiledTree.load(tmp_path / "t.npz") == ct
    with np.load(tmp_path / "t.npz") as data:
        old = {k: data[k] for k in data.files if not k.startswith("internal_")}
    np.savez(tmp_path / "old.npz", **old)
    back = CompiledTree.load(tmp_path / "old.npz").to_tree()
    np.testing.assert_array_equal(back.value, tree.value)
    np.testing.assert_array_equal(back.label[internal],
                                  np.argmax(tree.value[internal], axis=1))
