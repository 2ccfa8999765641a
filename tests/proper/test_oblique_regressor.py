"""ObliqueTreeRegressor: least-squares proper trees against a brute-force oracle, agreement with
OptimalTreeRegressor on axis rules, the estimator contract and scikit-learn's checks.

The oracle shares nothing with the solver: the splits of each family are the dichotomies of the
whole point set (threshold sets for axis rules; linear-programming separability in the plane
or in the degree-2 monomials for hyperplanes and conics, :mod:`oracle_lp`), and a plain
memoised recursion tries every split with every share of the split budget, with squared errors
computed around each leaf's mean.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import is_regressor
from sklearn.metrics import r2_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from exactree import ObliqueTreeRegressor, OptimalTreeRegressor
from exactree.solvers.proper import make_rules, odt, point_data
from exactree.tree import LEAF, LINEAR, THRESHOLD, from_json, to_json

sys.path.insert(0, str(Path(__file__).parent))
from oracle_lp import linear_splits

# ---------------------------------------------------------------------------- oracle


def axis_splits(X: np.ndarray) -> set[int]:
    """Every threshold split ``x_f <= v`` of the rows, as a bitmask of its left side."""
    out = set()
    for f in range(X.shape[1]):
        for v in np.unique(X[:, f])[:-1]:
            out.add(int(sum(1 << int(i) for i in np.flatnonzero(X[:, f] <= v))))
    return out


def quadratic_features(X: np.ndarray) -> np.ndarray:
    """``(x, y, x**2, x*y, y**2)``: a conic in the plane is a hyperplane here."""
    x0, x1 = X[:, 0], X[:, 1]
    return np.column_stack([x0, x1, x0 * x0, x0 * x1, x1 * x1])


def family_splits(X: np.ndarray, family: str) -> set[int]:
    if family == "axis":
        return axis_splits(X)
    return linear_splits(quadratic_features(X) if family == "polynomial" else X)


def sse(y: np.ndarray, w: np.ndarray) -> float:
    """Weighted squared error around the weighted mean (0 for no rows)."""
    if len(y) == 0:
        return 0.0
    mean = float(w @ y) / float(w.sum())
    return float(w @ (y - mean) ** 2)


def brute_sse(X: np.ndarray, y: np.ndarray, w: np.ndarray, family: str, k: int,
              min_leaf: int = 1, max_depth: int | None = None) -> float:
    """Least weighted squared error of a tree with at most ``k`` splits of ``family`` (each
    split any split of the family restricted to the rows that reach it), every leaf holding at
    least ``min_leaf`` rows, depth at most ``max_depth``."""
    n = len(y)
    splits = sorted(family_splits(X, family))
    full = (1 << n) - 1
    depth_cap = k if max_depth is None else max_depth

    def rows(region: int) -> np.ndarray:
        return np.array([i for i in range(n) if (region >> i) & 1], np.int64)

    @functools.cache
    def leaf(region: int) -> float:
        idx = rows(region)
        return sse(y[idx], w[idx]) if len(idx) >= min_leaf else np.inf

    @functools.cache
    def best(region: int, budget: int, depth: int) -> float:
        value = leaf(region)
        if budget == 0 or depth >= depth_cap:
            return value
        for s in splits:
            a, b = region & s, region & ~s & full
            if a == 0 or b == 0:
                continue
            for ka in range(budget):
                value = min(value, best(a, ka, depth + 1) + best(b, budget - 1 - ka, depth + 1))
        return value

    return best(full, k, 0)


def _points(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` random points in the plane (general position), targets (integers or reals,
    sometimes far from 0) and weights (unit, integral or fractional)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2)).round(3)
    y = (rng.integers(0, 4, n).astype(float) if seed % 2 else rng.normal(size=n) * 5)
    y = y + (1e3 if seed % 5 == 0 else 0.0)
    kind = seed % 3
    w = (np.ones(n) if kind == 0 else rng.integers(1, 4, n).astype(float) if kind == 1
         else rng.uniform(0.2, 2.0, n))
    return X, y, w


def _close(a: float, b: float, scale: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, scale)


# ---------------------------------------------------------------------------- vs the oracle

_CASES = [("axis", 9, 3), ("hyperplane", 8, 2), ("hyperplane", 7, 3), ("polynomial", 7, 2)]


@pytest.mark.parametrize("family, n, k", _CASES)
@pytest.mark.parametrize("seed", range(5))
def test_optimal_sse_matches_brute_force(family, n, k, seed):
    X, y, w = _points(seed, n)
    min_leaf = 1 + seed % 2
    max_depth = None if seed < 3 else k - 1
    expect = brute_sse(X, y, w, family, k, min_leaf, max_depth)
    model = ObliqueTreeRegressor(n_splits=k, rules=family, degree=2, min_samples_leaf=min_leaf,
                                 max_depth=max_depth).fit(X, y, sample_weight=w)
    root = sse(y, w)
    assert _close(model.objective_, expect, root), (model.objective_, expect)
    assert model.status_ == "optimal" and model.lower_bound_ == model.objective_
    # objective_ is what the fitted tree does on the training rows
    assert _close(float(w @ (y - model.predict(X)) ** 2), model.objective_, root)
    leaves = model.apply(X)
    assert np.bincount(leaves)[np.unique(leaves)].min() >= min_leaf
    assert model.tree_.max_depth <= (k if max_depth is None else max_depth)
    assert model.tree_.n_leaves - 1 <= k


@pytest.mark.parametrize("seed", range(4))
def test_identical_points_and_the_equivalent_points_bound(seed):
    """Repeated coordinates with different targets always share a leaf: the search bounds
    regions by their points' own squared errors (a large part of the cost here) and still
    finds the optimum."""
    rng = np.random.default_rng(seed + 10)
    X = rng.uniform(-1, 1, size=(5, 2)).round(3)
    X = np.repeat(X, 2, axis=0)
    y = rng.normal(size=10) * 3
    w = rng.integers(1, 3, 10).astype(float)
    for family in ("axis", "hyperplane"):
        for k in (1, 2):
            expect = brute_sse(X, y, w, family, k)
            model = ObliqueTreeRegressor(n_splits=k, rules=family).fit(X, y, sample_weight=w)
            assert _close(model.objective_, expect, sse(y, w)), (family, k)


def test_regions_and_combinations_searches_agree():
    """The two searches of ``odt`` (regions branch and bound, and ``sodt`` over every
    combination) give the same squared error in kernel units."""
    X, y, w = _points(4, 10)
    data = point_data(X, y, w, 1, squared_error=True)
    rules = make_rules(data.X, "hyperplane")
    for k in (1, 2):
        a = odt(rules, data, k, method="regions")
        b = odt(rules, data, k, method="combinations")
        c = odt(rules, data, k, method="regions", prune=False)
        assert a.value == b.value == c.value
        assert _close(a.value * data.unit, brute_sse(X, y, w, "hyperplane", k), 1.0)


# ---------------------------------------------------------------------------- vs the DP


@pytest.mark.parametrize("seed", range(6))
def test_axis_rules_agree_with_optimal_tree_regressor(seed):
    """With axis rules and room for a full tree, the proper-tree optimum is the depth-limited
    DP's (two independent searches)."""
    rng = np.random.default_rng(seed)
    n = 24
    X = rng.integers(0, 6, size=(n, 2)).astype(float) + rng.normal(size=(n, 2)) * (seed % 2)
    y = np.sin(X[:, 0]) + X[:, 1] ** 2 / 5 + rng.normal(size=n) * 0.3
    w = rng.uniform(0.5, 2, n) if seed % 3 == 2 else None
    depth = 1 + seed % 2
    leaf = 1 + (seed // 2) % 2
    dp = OptimalTreeRegressor(max_depth=depth, min_samples_leaf=leaf).fit(X, y, w)
    ours = ObliqueTreeRegressor(rules="axis", n_splits=2 ** depth - 1, max_depth=depth,
                                min_samples_leaf=leaf).fit(X, y, w)
    assert _close(ours.objective_, dp.objective_, dp.objective_)
    assert ours.status_ == dp.status_ == "optimal"


# ---------------------------------------------------------------------------- estimator


_REFUSED = "has ~1e10+ candidate hyperplanes (N**D); refused up front by design"
_EXPECTED_FAILED_HYPERPLANE = {
    name: what + " " + _REFUSED for name, what in (
        ("check_positive_only_tag_during_fit", "10-D data"), ("check_dtype_object", "10-D data"),
        ("check_regressors_train", "10-D data"), ("check_regressor_data_not_an_array", "10-D data"),
        ("check_regressors_int", "10-D data"))}


@parametrize_with_checks([ObliqueTreeRegressor(rules="axis", n_splits=2),
                          ObliqueTreeRegressor(rules="hyperplane", n_splits=1, ties="left",
                                               max_rules=20_000)],
                         expected_failed_checks=lambda est: (
                             {} if est.rules == "axis" else _EXPECTED_FAILED_HYPERPLANE))
def test_scikit_learn_checks(estimator, check):
    check(estimator)


def test_predict_is_leaf_mean_score_is_r2_and_exports():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(30, 2))
    y = np.where(X[:, 0] + 0.6 * X[:, 1] > 0.1, 3.0, -1.0) + rng.normal(size=30) * 0.1
    model = ObliqueTreeRegressor(n_splits=1).fit(X, y)
    assert is_regressor(model) and model.tree_.is_regression
    assert model.tree_.kind[0] == LINEAR
    leaves = model.apply(X)
    for leaf in np.unique(leaves):
        assert np.isclose(model.predict(X[leaves == leaf])[0], y[leaves == leaf].mean())
    assert np.isclose(model.score(X, y), r2_score(y, model.predict(X)))
    assert np.isclose(model.objective_, np.sum((y - model.predict(X)) ** 2))
    assert np.isclose(model.tree_.impurity[model.tree_.kind == LEAF].sum(), model.objective_)
    imp = model.feature_importances_
    assert np.isclose(imp.sum(), 1.0) and np.all(imp > 0)
    assert from_json(to_json(model.tree_)) == model.tree_
    json.loads(to_json(model.tree_))
    assert "value" in model.export_text() and "digraph" in model.export_graphviz()
    axis = ObliqueTreeRegressor(n_splits=2, rules="axis").fit(X, y)
    assert set(axis.tree_.kind[axis.tree_.kind != LEAF]) == {THRESHOLD}
    mixed = ObliqueTreeRegressor(n_splits=2, rules="mixed", degree=1).fit(X, y)
    assert mixed.objective_ <= min(axis.objective_, model.objective_) + 1e-9


def test_single_leaf_constant_target_and_zero_splits():
    X = np.arange(12.0).reshape(6, 2)
    const = ObliqueTreeRegressor(n_splits=2).fit(X, np.full(6, 4.2))
    assert const.objective_ == 0.0 and const.status_ == "optimal"
    assert np.allclose(const.predict(X), 4.2)
    y = np.arange(6.0)
    leaf = ObliqueTreeRegressor(n_splits=0).fit(X, y)
    assert leaf.tree_.n_leaves == 1 and np.isclose(leaf.objective_, sse(y, np.ones(6)))


def test_time_limit_reports_a_valid_bound():
    """A cut-short fit never says optimal, and its lower bound is the equivalent-points
    bound, which no tree beats."""
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(60, 2))
    X = np.vstack([X, X[:20]])
    y = rng.normal(size=80)
    model = ObliqueTreeRegressor(n_splits=3, time_limit=0.05).fit(X, y)
    assert model.status_ in ("time_limit", "optimal")
    assert model.lower_bound_ <= model.objective_ + 1e-12
    if model.status_ == "time_limit":
        pairs = [np.array([y[i], y[i + 60]]) for i in range(20)]
        bound = sum(sse(p, np.ones(2)) for p in pairs)
        assert np.isclose(model.lower_bound_, bound) and model.gap_ > 0


def test_parallel_roots_give_the_serial_tree():
    X, y, w = _points(7, 30)
    serial = ObliqueTreeRegressor(n_splits=2).fit(X, y, w)
    parallel = ObliqueTreeRegressor(n_splits=2, n_jobs=2).fit(X, y, w)
    assert parallel.tree_ == serial.tree_ and parallel.objective_ == serial.objective_


def test_ties_left_is_optimal_on_rules_only():
    X, y, _ = _points(3, 8)
    model = ObliqueTreeRegressor(n_splits=1, ties="left").fit(X, y)
    assert model.status_ == "optimal_on_rules"
    assert 0.0 <= model.lower_bound_ <= model.objective_


@pytest.mark.parametrize("y, message", [
    ([1.0, np.nan, 2.0, 3.0], "y contains NaN"),
    ([1.0, np.inf, 2.0, 3.0], "y contains infinity"),
    (["a", "b", "c", "d"], "numbers"),
    ([1.0, None, 2.0, 3.0], "missing"),
    (np.ones((4, 2)), "1-D"),
    (None, "requires y"),
])
def test_bad_targets_fail_loudly(y, message):
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match=message):
        ObliqueTreeRegressor().fit(X, y)


def test_bad_input_fails_loudly():
    pd = pytest.importorskip("pandas")
    X = np.arange(8.0).reshape(4, 2)
    y = np.arange(4.0)
    with pytest.raises(ValueError, match="sample_weight"):
        ObliqueTreeRegressor().fit(X, y, sample_weight=[1.0, -1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="n_splits"):
        ObliqueTreeRegressor(n_splits=-1).fit(X, y)
    with pytest.raises(ValueError, match="rules"):
        ObliqueTreeRegressor(rules="circle").fit(X, y)
    with pytest.raises(TypeError, match="class_weight"):
        ObliqueTreeRegressor(class_weight="balanced")
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        ObliqueTreeRegressor().fit(X, y[:3])
    with pytest.raises(ValueError, match="infinity"):
        ObliqueTreeRegressor().fit(np.array([[1.0], [np.inf]]), [1.0, 2.0])
    with pytest.raises(ValueError, match="min_samples_leaf=3"):
        ObliqueTreeRegressor(min_samples_leaf=3).fit(X[:2], y[:2])
    with pytest.raises(ValueError, match="numeric features"):
        ObliqueTreeRegressor().fit(pd.DataFrame({"a": ["u", "v", "u", "v"], "b": y}), y)
    model = ObliqueTreeRegressor(n_splits=1).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(np.zeros((2, 3)))
