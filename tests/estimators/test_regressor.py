"""OptimalTreeRegressor: exact least-squares trees against a brute-force oracle, the estimator
contract (predict = leaf means, R², pandas, errors) and scikit-learn's checks."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pandas as pd
import pytest
from oracles import missing_value_splits, optimal_sse, split_tests
from sklearn.base import is_regressor
from sklearn.metrics import r2_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from exactree import OptimalTreeRegressor
from exactree.objectives import SquaredError, get_objective
from exactree.tree import LEAF, from_json, to_json


@parametrize_with_checks([OptimalTreeRegressor(max_depth=2)])
def test_scikit_learn_checks(estimator, check):
    check(estimator)


def _case(rng: np.random.Generator):
    """A tiny random problem: few distinct values per column (ties), integer or real targets."""
    n = int(rng.integers(4, 11))
    F = int(rng.integers(1, 4))
    X = rng.integers(0, int(rng.integers(2, 6)), (n, F)).astype(float)
    y = rng.integers(0, 4, n).astype(float) if rng.random() < 0.5 else rng.normal(size=n) * 10
    return X, y


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


@pytest.mark.parametrize("seed", range(40))
def test_optimal_sse_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    X, y = _case(rng)
    depth = int(rng.integers(0, 4))
    min_leaf = int(rng.integers(1, 3))
    w = rng.integers(1, 4, len(y)).astype(float) if seed % 2 else None
    model = OptimalTreeRegressor(max_depth=depth, min_samples_leaf=min_leaf)
    model.fit(X, y, sample_weight=w)
    want = optimal_sse(split_tests(X), y, depth, w, min_leaf)
    assert _same(model.objective_, want), (model.objective_, want)
    assert model.status_ == "optimal" and model.lower_bound_ == model.objective_
    assert model.gap_ == 0.0
    # objective_ is the training SSE of the tree it returns, and leaves hold min_leaf rows
    ww = np.ones(len(y)) if w is None else w
    assert _same(float(ww @ (y - model.predict(X)) ** 2), model.objective_)
    assert np.bincount(model.apply(X))[model.tree_.kind == LEAF].min() >= min_leaf


@pytest.mark.parametrize("seed", range(12))
def test_categorical_columns_match_brute_force(seed):
    rng = np.random.default_rng(100 + seed)
    X, y = _case(rng)
    colour = rng.choice(["red", "green", "blue", "grey"], len(y))
    df = pd.DataFrame({f"x{j}": X[:, j] for j in range(X.shape[1])})
    df["colour"] = pd.Categorical(colour)
    depth = int(rng.integers(1, 4))
    model = OptimalTreeRegressor(max_depth=depth).fit(df, y)
    codes = df["colour"].cat.codes.to_numpy().astype(float)
    tests = split_tests(np.column_stack([X, codes]), categorical=(X.shape[1],))
    assert _same(model.objective_, optimal_sse(tests, y, depth))
    assert list(model.feature_names_in_) == list(df.columns)
    assert np.allclose(model.predict(df), model.tree_.predict(df))


@pytest.mark.parametrize("seed", range(10))
def test_fractional_weights_and_real_values(seed):
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(5, 10))
    X = rng.normal(size=(n, 2)).round(1)
    y = rng.normal(size=n) * 1000 + 5000  # a large offset: the kernel must not cancel badly
    w = rng.random(n) + 0.05
    depth = int(rng.integers(1, 4))
    model = OptimalTreeRegressor(max_depth=depth).fit(X, y, sample_weight=w)
    assert _same(model.objective_, optimal_sse(split_tests(X), y, depth, w))


@pytest.mark.parametrize("seed", range(8))
def test_missing_values_routed_optimally(seed):
    rng = np.random.default_rng(300 + seed)
    X, y = _case(rng)
    X[rng.random(X.shape) < 0.25] = np.nan
    depth = int(rng.integers(1, 3))
    model = OptimalTreeRegressor(max_depth=depth).fit(X, y)
    want = optimal_sse(missing_value_splits(X), y, depth)
    assert _same(model.objective_, want)
    assert _same(float(((y - model.predict(X)) ** 2).sum()), model.objective_)


def test_predict_is_leaf_mean_and_score_is_r2():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(120, 3))
    y = np.where(X[:, 0] > 0, 3.0, -1.0) + X[:, 1] + 0.1 * rng.normal(size=120)
    w = rng.random(120) + 0.5
    model = OptimalTreeRegressor(max_depth=2).fit(X, y, sample_weight=w)
    leaves = model.apply(X)
    for leaf in np.unique(leaves):
        rows = leaves == leaf
        assert np.isclose(model.predict(X[rows])[0], np.average(y[rows], weights=w[rows]))
    assert is_regressor(model)
    assert np.isclose(model.score(X, y), r2_score(y, model.predict(X)))
    assert np.isclose(model.score(X, y, sample_weight=w),
                      r2_score(y, model.predict(X), sample_weight=w))
    imp = model.feature_importances_
    assert np.isclose(imp.sum(), 1.0) and imp[0] > imp[2]
    assert model.tree_.feature[0] == 0  # the jump on x0 is the best first split


def test_feature_importances_are_sse_decreases():
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 3, float)
    y = np.array([0, 1, 10, 12] * 3, float)
    model = OptimalTreeRegressor(max_depth=2).fit(X, y)
    t = model.tree_
    total = t.impurity[0] - t.impurity[t.kind == LEAF].sum()
    root_gain = t.impurity[0] - t.impurity[t.children(0)].sum()
    assert np.isclose(model.feature_importances_[t.feature[0]], root_gain / total)
    assert model.objective_ == 0.0


def test_single_leaf_and_constant_target():
    X = np.arange(10.0).reshape(-1, 1)
    model = OptimalTreeRegressor(max_depth=0).fit(X, np.arange(10.0))
    assert model.tree_.n_nodes == 1 and np.isclose(model.objective_, 82.5)
    model = OptimalTreeRegressor(max_depth=3).fit(X, np.full(10, 4.0))
    assert model.objective_ == 0.0 and np.all(model.predict(X) == 4.0)
    assert np.all(model.feature_importances_ == 0.0)


def test_tree_round_trips_and_exports():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=60), "b": pd.Categorical(rng.choice(list("pqr"), 60))})
    y = X["a"].to_numpy() * 2 + (X["b"] == "q") * 5
    model = OptimalTreeRegressor(max_depth=3).fit(X, y)
    t = model.tree_
    assert t.is_regression and t.value.shape == (t.n_nodes, 1)
    assert from_json(to_json(t)) == t
    assert json.loads(to_json(t))["impurity"][0] == t.impurity[0]
    assert pickle.loads(pickle.dumps(model)).tree_ == t
    compiled = t.compile()
    assert np.array_equal(compiled.predict(X), t.predict(X))
    assert compiled.to_tree().is_regression
    assert np.array_equal(compiled.to_tree().predict(X), t.predict(X))
    text = model.export_text()
    assert "value:" in text and "class" not in text
    assert "squared error" in model.export_graphviz()
    with pytest.raises(ValueError, match="no class probabilities"):
        t.predict_proba(X)


def test_plot_tree_and_partition():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from exactree import plot_partition, plot_tree

    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 2))
    y = X[:, 0] - X[:, 1]
    model = OptimalTreeRegressor(max_depth=2).fit(X, y)
    assert plot_tree(model) is not None
    assert plot_partition(model, X, y) is not None
    matplotlib.pyplot.close("all")


def test_time_limit_keeps_a_proven_bound():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 8))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + rng.normal(size=3000)
    model = OptimalTreeRegressor(max_depth=4, time_limit=0.05).fit(X, y)
    assert model.status_ in ("time_limit", "optimal")
    assert 0.0 <= model.lower_bound_ <= model.objective_
    assert np.isclose(((y - model.predict(X)) ** 2).sum(), model.objective_)


def test_equivalent_points_bound():
    # Rows 0-1 and 2-3 are identical in X: any tree leaves (1-3)^2/2 + (5-9)^2/2 = 10.
    X = np.array([[0.0], [0.0], [1.0], [1.0]])
    y = np.array([1.0, 3.0, 5.0, 9.0])
    assert SquaredError().lower_bound(y, np.ones(4), np.array([0, 0, 1, 1])) == 10.0
    assert OptimalTreeRegressor(max_depth=3).fit(X, y).objective_ == 10.0
    assert get_objective("squared_error").name == "squared_error"


def test_max_thresholds_reports_binarized():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(80, 2))
    model = OptimalTreeRegressor(max_depth=2, max_thresholds=4).fit(X, X[:, 0] ** 2)
    assert model.status_ == "optimal_on_binarized"


@pytest.mark.parametrize("y, message", [
    ([1.0, np.nan, 2.0, 3.0], "y contains NaN"),
    ([1.0, np.inf, 2.0, 3.0], "y contains infinity"),
    (["a", "b", "c", "d"], "numbers"),
    ([1.0, "b", 2.0, 3.0], "numbers"),
    ([1.0, None, 2.0, 3.0], "missing"),
    (np.ones((4, 2)), "1-D"),
    (None, "requires y"),
])
def test_bad_targets_fail_loudly(y, message):
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match=message):
        OptimalTreeRegressor().fit(X, y)


def test_bad_input_fails_loudly():
    X = np.arange(8.0).reshape(4, 2)
    y = np.arange(4.0)
    with pytest.raises(ValueError, match="sample_weight"):
        OptimalTreeRegressor().fit(X, y, sample_weight=[1.0, -1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="max_depth"):
        OptimalTreeRegressor(max_depth=-1).fit(X, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        OptimalTreeRegressor().fit(X, y[:3])
    with pytest.raises(ValueError, match="unknown technique"):
        OptimalTreeRegressor(techniques={"nope": True}).fit(X, y)
    model = OptimalTreeRegressor().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="infinity"):
        OptimalTreeRegressor().fit(np.array([[1.0], [np.inf]]), [1.0, 2.0])
