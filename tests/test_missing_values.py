"""Missing values (NaN, None, pandas.NA) in numeric columns: every split on a column with missing
values at fit time sends them to the side the optimisation chose; brute force over all such
trees checks the optimum. Columns clean at fit time send them to the heavier child; compiled
trees, JSON, the exports and the plots follow; estimators that cannot route them refuse."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from oracles import missing_value_splits, optimal_cost, optimal_penalised

from exactree import (DyadicTreeClassifier, ObliqueTreeClassifier, OptimalTreeClassifier,
                      SparseTreeClassifier)
from exactree.data import Binarizer, Column
from exactree.data.ordered import ordered_features
from exactree.tree import Tree, TreeBuilder
from exactree.tree.compiled import CompiledTree, predict_leaves
from exactree.tree.export import export_text


def random_nan_data(seed: int, n: int = 12, d: int = 2, levels: int = 4, rate: float = 0.25):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, (n, d)).astype(float)
    X[rng.random(X.shape) < rate] = np.nan
    y = rng.integers(0, 2, n)
    if len(np.unique(y)) < 2:
        y[0] = 1 - y[1]
    return X, y


# ------------------------------------------------------------------------- optimum (oracle)
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("search", ["binary", "ordered"])
def test_optimal_tree_matches_brute_force_over_missing_value_routings(seed, search):
    X, y = random_nan_data(seed, d=2 + seed % 2)
    depth = 1 + seed % 2
    model = OptimalTreeClassifier(max_depth=depth, search=search).fit(X, y)
    assert model.search_ == search
    best = optimal_cost(missing_value_splits(X), y, 2, depth)
    assert model.objective_ == best
    assert (model.predict(X) != y).sum() == best  # the tree routes NaN as the fit counted


@pytest.mark.parametrize("seed", range(8))
def test_weighted_and_budgeted_fits_match_brute_force(seed):
    X, y = random_nan_data(100 + seed, n=10)
    w = np.random.default_rng(seed).integers(1, 4, len(y)).astype(float)
    model = OptimalTreeClassifier(max_depth=2, max_nodes=2).fit(X, y, sample_weight=w)
    assert model.objective_ == optimal_cost(missing_value_splits(X), y, 2, 2, max_nodes=2,
                                            weights=w)


@pytest.mark.parametrize("seed", range(8))
def test_sparse_tree_matches_brute_force_over_missing_value_routings(seed):
    X, y = random_nan_data(200 + seed, n=10)
    penalty = [0.0, 0.02, 0.05, 0.1][seed % 4]
    depth = [None, 2][seed % 2]
    model = SparseTreeClassifier(penalty=penalty, max_depth=depth).fit(X, y)
    best = optimal_penalised(missing_value_splits(X), y, 2, penalty, depth)
    assert model.objective_ == pytest.approx(best, abs=1e-12)
    errors = (model.predict(X) != y).sum() / len(y)
    assert errors + penalty * model.tree_.n_splits == pytest.approx(best, abs=1e-12)


def test_the_oracle_can_tell_routings_apart():
    """With missing values always sent left, the optimum is worse on this data: the oracle
    (and so the tests above) would notice a fit that never sends them right."""
    X = np.array([[1.0], [2.0], [3.0], [4.0], [np.nan], [np.nan]])
    y = np.array([0, 0, 1, 1, 1, 1])
    splits = missing_value_splits(X)
    assert optimal_cost(splits, y, 2, 1) == 0
    assert optimal_cost(splits[:, 0::2], y, 2, 1) == 2  # "x <= t or missing" only


# ------------------------------------------------------------------- routing decides the optimum
def test_routing_missing_values_to_the_lighter_side_is_optimal():
    """Four low values of class 0, two high ones of class 1 and three missing of class 1: the
    left child is the heavier one, yet the only perfect split sends missing values right.
    Imputing the mean (3.5) instead costs a mistake."""
    X = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [np.nan], [np.nan], [np.nan]])
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1])
    for search in ("binary", "ordered"):
        model = OptimalTreeClassifier(max_depth=1, search=search).fit(X, y)
        tree = model.tree_
        assert model.objective_ == 0 and tree.n_splits == 1
        assert tree.threshold[0] == 4.5 and not tree.missing_left[0]  # missing go right
        left, right = tree.children(0)
        assert tree.value[left].sum() == 4 < tree.value[right].sum() == 5
    imputed = np.where(np.isnan(X), np.nanmean(X), X)
    assert OptimalTreeClassifier(max_depth=1).fit(imputed, y).objective_ == 1
    # The heavier-child rule (scikit-learn's for unseen missing values) would cost 3.
    clean = OptimalTreeClassifier(max_depth=1).fit(X[:6], y[:6])
    assert clean.tree_.missing_left[0] and (clean.predict(X) != y).sum() == 3


def test_depth_two_routes_missing_values_differently_at_two_nodes():
    """x0 splits the rows; below it, x1's missing values belong left under one branch and right
    under the other: the optimum needs both directions on one column."""
    rows = []
    for a in (0.0, 1.0):
        for b, label in ((0.0, 0), (1.0, 1), (np.nan, int(a == 0))):
            rows += [(a, b, label)] * 3
    data = np.array(rows)
    X, y = data[:, :2], data[:, 2].astype(int)
    model = OptimalTreeClassifier(max_depth=2).fit(X, y)
    assert model.objective_ == 0
    t = model.tree_
    inner = [i for i in range(t.n_nodes) if t.kind[i] == 1 and t.feature[i] == 1]
    assert len(inner) == 2
    # x1 <= 0.5 (left: class 0): under x0 = 0 missing (class 1) go right, under x0 = 1 left
    sides = {bool(t.missing_left[i]) for i in inner}
    assert sides == {True, False}
    assert SparseTreeClassifier(penalty=0.01).fit(X, y).objective_ == pytest.approx(0.03)


# --------------------------------------------------------------------- columns clean at fit
def test_nan_in_a_column_clean_at_fit_goes_to_the_heavier_child():
    X = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [4.0, 1.0], [5.0, 1.0]])
    y = np.array([0, 0, 0, 1, 1])
    for model in (OptimalTreeClassifier(max_depth=1), SparseTreeClassifier(penalty=0.01)):
        model.fit(X, y)
        t = model.tree_
        left, right = t.children(0)
        heavier = left if t.value[left].sum() >= t.value[right].sum() else right
        assert not t.missing_seen.any()
        Xn = np.array([[np.nan, np.nan]])
        assert model.apply(Xn)[0] == heavier
        assert model.predict(Xn)[0] == 0
        assert "missing" not in model.export_text()
    # a lighter left child sends them right
    y2 = np.array([0, 1, 1, 1, 1])
    t = OptimalTreeClassifier(max_depth=1).fit(X, y2).tree_
    assert not t.missing_left[0]
    assert t.apply(np.array([[np.nan, 0.0]]))[0] == t.children(0)[1]


def test_tree_builder_default_and_explicit_sides():
    b = TreeBuilder(n_features=1, n_classes=2)
    light, heavy = b.leaf([1, 0], 0), b.leaf([0, 5], 1)
    root = b.threshold(0, 0.5, [light, heavy], [1, 5], 1)
    t = b.build(root)
    assert not t.missing_left[0] and t.apply(np.array([[np.nan]]))[0] == t.children(0)[1]
    b = TreeBuilder(n_features=1, n_classes=2)
    light, heavy = b.leaf([1, 0], 0), b.leaf([0, 5], 1)
    root = b.threshold(0, 0.5, [light, heavy], [1, 5], 1, missing_left=True)
    t = b.build(root, missing_seen=[True])
    assert t.missing_left[0] and t.apply(np.array([[np.nan]]))[0] == t.children(0)[0]
    assert "x0 <= 0.5 or missing" in export_text(t)


# ------------------------------------------------------------- compiled trees, serialisation
@pytest.mark.parametrize("seed", range(6))
def test_compiled_and_traversal_agree_with_nan(seed):
    X, y = random_nan_data(300 + seed, n=40, d=3, levels=6, rate=0.3)
    Xp = X.copy()
    Xp[::3, 2] = np.nan  # more missing values at predict time, in every column
    for model in (OptimalTreeClassifier(max_depth=3), SparseTreeClassifier(penalty=0.005)):
        tree = model.fit(X, y).tree_
        expected = tree.apply(Xp)
        assert np.array_equal(predict_leaves(tree, Xp, method="compiled"), expected)
        ct = tree.compile()
        for method in ("bitvector", "walk", "matmul"):
            assert np.array_equal(ct.apply(Xp, method=method), expected), method
        assert ct.to_tree() == tree
        again = Tree.from_dict(json.loads(json.dumps(tree.to_dict())))
        assert again == tree and np.array_equal(again.apply(Xp), expected)


def test_compiled_tree_save_load_keeps_the_sides(tmp_path):
    X, y = random_nan_data(7, n=30, levels=6, rate=0.3)
    tree = OptimalTreeClassifier(max_depth=2).fit(X, y).tree_
    ct = tree.compile()
    ct.save(tmp_path / "t.npz")
    loaded = CompiledTree.load(tmp_path / "t.npz")
    assert loaded == ct and np.array_equal(loaded.missing_left, ct.missing_left)
    assert np.array_equal(loaded.apply(X), tree.apply(X))


def test_changing_a_side_changes_prediction_and_equality():
    X = np.array([[1.0], [2.0], [np.nan]])
    tree = OptimalTreeClassifier(max_depth=1).fit(X, [0, 1, 1]).tree_
    flipped = Tree.from_dict({**tree.to_dict(), "missing_left": [not v for v in
                                                                 tree.missing_left.tolist()]})
    assert flipped != tree
    assert tree.predict(X[2:])[0] != flipped.predict(X[2:])[0]
    assert flipped.compile().predict(X[2:])[0] == flipped.predict(X[2:])[0]


def test_old_json_without_sides_loads_with_the_heavier_child():
    b = TreeBuilder(n_features=1, n_classes=2)
    root = b.threshold(0, 0.5, [b.leaf([1, 0], 0), b.leaf([0, 3], 1)], [1, 3], 1)
    d = b.build(root).to_dict()
    del d["missing_left"], d["missing_seen"]
    t = Tree.from_dict(d)
    assert not t.missing_left[0] and not t.missing_seen.any()
    with pytest.raises(ValueError, match="missing_left"):
        Tree.from_dict({**d, "missing_left": ["yes", 1, 0]})


def test_nan_reaching_a_rule_or_a_category_is_an_error():
    b = TreeBuilder(n_features=2, n_classes=2)
    lin = b.linear([1.0, 1.0], [[1, 0], [0, 1]], 1.0, [b.leaf([1, 0], 0), b.leaf([0, 1], 1)],
                   [1, 1], 0)
    t = b.build(lin)
    with pytest.raises(ValueError, match="missing value in column 1.*rule"):
        t.apply(np.array([[0.0, np.nan]]))
    with pytest.raises(ValueError, match="rule"):
        t.compile().apply(np.array([[0.0, np.nan]]))
    b = TreeBuilder(n_features=1, n_classes=2)
    cat = b.categorical(0, [b.leaf([1, 0], 0), b.leaf([0, 1], 1)], [1, 1], 0)
    t = b.build(cat)
    for apply in (t.apply, t.compile().apply):
        with pytest.raises(ValueError, match="categorical column"):
            apply(np.array([[np.nan]]))


# --------------------------------------------------------------------------- exports, plots
def test_export_text_and_plot_show_the_side_only_for_columns_with_missing_values():
    X = pd.DataFrame({"age": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, np.nan, np.nan, np.nan] * 2,
                      "score": [0.0, 1.0] * 9})
    # class 1 for high or missing ages, and for low ages with score 1
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1] * 2) | X["score"].to_numpy(int)
    model = OptimalTreeClassifier(max_depth=2).fit(X, y)
    text = model.export_text()
    assert "age > 4.5 or missing" in text and "age <= 4.5\n" in text
    assert "score <= 0.5\n" in text and "score > 0.5\n" in text
    assert "score <= 0.5 or" not in text and "score > 0.5 or" not in text
    assert "age > 4.5 or missing" in model.export_graphviz()
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    from exactree import plot_tree

    ax = plot_tree(model)
    shown = [t.get_text() for t in ax.texts]
    plt.close("all")
    assert any(s.startswith("age <= 4.5 (missing: right)") for s in shown), shown
    assert any(s.startswith("score <= 0.5") and "missing" not in s for s in shown), shown


def test_split_of_missing_from_present_values_reads_as_such():
    X = np.array([[1.0], [2.0], [3.0], [np.nan], [np.nan]])
    y = np.array([0, 0, 0, 1, 1])
    model = OptimalTreeClassifier(max_depth=1).fit(X, y)
    assert model.objective_ == 0
    text = model.export_text()
    assert "x0 is not missing" in text and "x0 is missing" in text
    assert model.predict([[1e300], [np.nan]]).tolist() == [0, 1]


# ------------------------------------------------------------------------------ input forms
def test_pandas_na_none_and_nan_fit_the_same_tree():
    values = [1.0, 2.0, None, 4.0, 5.0, None, 7.0, 8.0]
    y = np.array([0, 0, 1, 0, 1, 1, 1, 1])
    base = OptimalTreeClassifier(max_depth=2).fit(np.array(values, float)[:, None], y)
    forms = [
        pd.DataFrame({"x0": pd.array(values, dtype="Float64")}),
        pd.DataFrame({"x0": pd.array([None if v is None else int(v) for v in values],
                                     dtype="Int64")}),
        np.array(values, dtype=object)[:, None],
        pd.DataFrame({"x0": values}),
    ]
    for X in forms:
        model = OptimalTreeClassifier(max_depth=2).fit(X, y)
        assert model.objective_ == base.objective_
        assert np.array_equal(model.tree_.missing_left, base.tree_.missing_left)
        assert np.array_equal(model.predict(X), base.predict(np.array(values, float)[:, None]))
        assert np.array_equal(model.tree_.apply(X), model.apply(X))
    sparse = SparseTreeClassifier(penalty=0.01).fit(forms[0], y)
    assert np.array_equal(sparse.predict(forms[0]), sparse.predict(forms[3]))


def test_infinity_is_still_an_error():
    for model in (OptimalTreeClassifier(), SparseTreeClassifier()):
        with pytest.raises(ValueError, match="infinity in column 0"):
            model.fit([[np.inf], [1.0]], [0, 1])
        with pytest.raises(ValueError, match="infinity"):
            model.fit(pd.DataFrame({"a": [np.inf, 1.0]}), [0, 1])


def test_categorical_missing_values_are_an_error_or_their_own_category():
    X = pd.DataFrame({"colour": ["red", None, "blue", "red", None, "blue"]})
    y = [0, 1, 0, 0, 1, 1]
    for model in (OptimalTreeClassifier(max_depth=1), SparseTreeClassifier()):
        with pytest.raises(ValueError, match="'colour' is categorical and contains missing "
                                             r"values \(row 1\).*fillna"):
            model.fit(X, y)
        fitted = model.fit(X.fillna("missing"), y)
        assert fitted.predict(pd.DataFrame({"colour": ["missing"]}))[0] == 1
        with pytest.raises(ValueError, match="categorical and contains missing"):
            fitted.predict(pd.DataFrame({"colour": [None]}))


@pytest.mark.parametrize("make", [lambda: DyadicTreeClassifier(),
                                  lambda: ObliqueTreeClassifier(n_splits=1)])
def test_estimators_that_cannot_route_missing_values_say_so(make):
    X = np.array([[0.0, 1.0], [1.0, np.nan], [2.0, 0.0], [3.0, 1.0]])
    name = type(make()).__name__
    for bad in (X, pd.DataFrame(X, columns=["a", "b"])):
        with pytest.raises(ValueError) as e:
            make().fit(bad, [0, 1, 0, 1])
        message = str(e.value)
        assert "\n" not in message and "NaN in column" in message and name in message
        assert "OptimalTreeClassifier and SparseTreeClassifier" in message
    model = make().fit(np.nan_to_num(X), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="NaN in column 1"):
        model.predict(X)
    assert not make().__sklearn_tags__().input_tags.allow_nan


def test_allow_nan_tag():
    assert OptimalTreeClassifier().__sklearn_tags__().input_tags.allow_nan
    assert SparseTreeClassifier().__sklearn_tags__().input_tags.allow_nan


# -------------------------------------------------------------------------------- data layer
def test_binarizer_features_of_a_column_with_missing_values():
    X = np.array([[1.0], [np.nan], [3.0], [2.0]])
    b = Binarizer().fit(X, np.array([0, 1, 0, 1]), [Column("a")])
    assert b.names_ == ["a <= 1.5 or a is missing", "a <= 2.5 or a is missing", "a <= 1.5",
                        "a <= 2.5", "a is not missing"]
    T = b.transform(X)
    assert T[1].tolist() == [True, True, False, False, False]
    assert T[:, 4].tolist() == [True, False, True, True]
    assert b.missing_columns_.tolist() == [True]
    all_nan = Binarizer().fit(np.full((3, 1), np.nan), np.array([0, 1, 0]), [Column("a")])
    assert all_nan.n_features_out == 0


@pytest.mark.parametrize("seed", range(5))
def test_ordered_features_agree_with_the_binary_features(seed):
    X, y = random_nan_data(400 + seed, n=30, d=3, levels=8, rate=0.3)
    b = Binarizer().fit(X, y, [Column(f"c{j}") for j in range(3)], keep_ranks=True)
    T = b.transform(X)
    of = ordered_features(b, X)
    covered = set()
    for f in range(of.n_features):
        for k, (bf, flip) in enumerate(zip(of.split_feature[f], of.split_flip[f])):
            assert np.array_equal(of.bucket[f] <= k, T[:, bf] != flip)
            covered.add(int(bf))
    # every split the binary features make (up to its complement) is an ordered split
    for j in range(T.shape[1]):
        if 0 < T[:, j].sum() < len(T):
            assert any(np.array_equal(T[:, j], T[:, c]) or np.array_equal(T[:, j], ~T[:, c])
                       for c in covered)


def test_auto_search_takes_the_ordered_search_on_many_thresholds():
    rng = np.random.default_rng(5)
    X = rng.random((120, 2)).round(3)
    X[rng.random(X.shape) < 0.2] = np.nan
    y = ((np.nan_to_num(X[:, 0], nan=1.0) > 0.5) ^ (np.nan_to_num(X[:, 1]) > 0.3)).astype(int)
    auto = OptimalTreeClassifier(max_depth=2).fit(X, y)
    binary = OptimalTreeClassifier(max_depth=2, search="binary").fit(X, y)
    assert auto.search_ == "ordered" and auto.objective_ == binary.objective_
    assert auto.score(X, y) == binary.score(X, y)
