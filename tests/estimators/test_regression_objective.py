"""User-written regression leaf costs (``OptimalTreeRegressor(objective=RegressionLeafCost(...))``):
the optimum against a brute-force oracle over every raw split, squared error written by hand
against the built-in one, the promises checked, copies and time limits."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import clone

from exactree import OptimalTreeRegressor, RegressionLeafCost
from exactree.solvers.dp.ordered import TECHNIQUES
from tests.oracles import optimal_sse, split_tests
from tests.ordered_cases import weights_for

LAM = 2.0


def squared_error(W, S, Q):
    return Q - S * S / W if W > 0.0 else 0.0


def spread(lo, hi):
    return (hi - lo) ** 2


def shrunk(W, S, Q):
    """Squared error around the leaf value ``S / (W + LAM)``, plus ``LAM`` times its square."""
    return Q - S * S / (W + LAM)


def shrunk_value(W, S, Q):
    return S / (W + LAM)


def shrunk_bound(lo, hi):
    return (max(hi, 0.0) - min(lo, 0.0)) ** 2


def root_error(W, S, Q):
    """Not a sum over rows: the square root of one plus the squared error, less one."""
    return np.sqrt(1.0 + max(Q - S * S / W, 0.0)) - 1.0 if W > 0.0 else 0.0


SHRUNK = RegressionLeafCost(shrunk, shrunk_bound, value=shrunk_value)
SQUARED = RegressionLeafCost(squared_error, spread)
# d sqrt(1 + e) / de <= 1/2, and a unit of weight raises the squared error by (hi - lo)**2 at most.
ROOT = RegressionLeafCost(root_error, lambda lo, hi: 0.5 * (hi - lo) ** 2)
CASES = [(SHRUNK, shrunk), (ROOT, root_error)]


def small_regression(rng):
    """Tiny data: 1-3 numeric columns of few distinct values (ties), targets with an offset."""
    n = int(rng.integers(5, 14))
    X = rng.integers(0, int(rng.integers(2, 5)), (n, int(rng.integers(1, 4)))).astype(float)
    y = np.round(rng.normal(size=n) * 2 + rng.integers(-2, 3), 2)
    return X, y


@pytest.mark.parametrize("seed", range(24))
def test_optimum_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    X, y = small_regression(rng)
    w = weights_for(rng, len(y))
    depth = int(rng.integers(1, 4))
    min_leaf = int(rng.integers(1, 3))
    objective, cost = CASES[seed % 2]
    model = OptimalTreeRegressor(max_depth=depth, min_samples_leaf=min_leaf,
                                 objective=objective).fit(X, y, sample_weight=w)
    want = optimal_sse(split_tests(X), y, depth, w, min_leaf=min_leaf, leaf_cost=cost)
    assert model.status_ == "optimal"
    assert model.objective_ == pytest.approx(want, abs=1e-9)
    # The tree's leaves, walked independently: their costs add up to the objective and each
    # predicts its value.
    leaf = model.apply(X)
    ww = np.ones(len(y)) if w is None else w
    total = 0.0
    for node in np.unique(leaf):
        rows = leaf == node
        W, S, Q = ww[rows].sum(), ww[rows] @ y[rows], ww[rows] @ y[rows] ** 2
        total += cost(W, S, Q)
        want_value = shrunk_value(W, S, Q) if objective is SHRUNK else S / W
        assert model.predict(X[rows][:1])[0] == pytest.approx(want_value, abs=1e-12)
    assert total == pytest.approx(model.objective_, abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_squared_error_written_by_hand_gives_the_default_optimum(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(80, 3))
    y = X[:, 0] * 3 + (X[:, 1] > 0.5) * 2 + rng.normal(size=80) + 10 * seed
    w = rng.uniform(0.2, 2.0, 80) if seed % 2 else None
    for depth in (1, 2, 3):
        ours = OptimalTreeRegressor(max_depth=depth, objective=SQUARED).fit(X, y, sample_weight=w)
        default = OptimalTreeRegressor(max_depth=depth).fit(X, y, sample_weight=w)
        assert ours.objective_ == pytest.approx(default.objective_, rel=1e-9)
        assert ours.tree_.n_splits == default.tree_.n_splits  # size-minimal too
        np.testing.assert_allclose(ours.predict(X), default.predict(X), rtol=1e-9, atol=1e-9)


def test_techniques_off_keep_the_optimum():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 6, (40, 3)).astype(float)
    y = rng.normal(size=40) + X[:, 0]
    base = OptimalTreeRegressor(max_depth=3, objective=SHRUNK).fit(X, y).objective_
    for name in TECHNIQUES:
        model = OptimalTreeRegressor(max_depth=3, objective=SHRUNK,
                                     techniques={name: False}).fit(X, y)
        assert model.objective_ == pytest.approx(base, abs=1e-9), name


@pytest.mark.parametrize("cost, bound, message", [
    (lambda W, S, Q: -1.0, spread, "not negative"),
    (lambda W, S, Q: 10.0 / (1.0 + W), spread, "never cost less"),
    (shrunk, spread, "raise row_cost"),  # shrunk leaves need the distance to 0 too
])
def test_broken_promises_are_refused(cost, bound, message):
    X, y = np.arange(8.0).reshape(-1, 1), np.arange(8.0) + 5
    with pytest.raises(ValueError, match=message):
        OptimalTreeRegressor(max_depth=2, objective=RegressionLeafCost(cost, bound)).fit(X, y)


def test_functions_numba_cannot_compile_are_named():
    with pytest.raises(TypeError, match="Numba cannot compile"):
        RegressionLeafCost(lambda W, S, Q: W if object() else 0.0, spread)
    with pytest.raises(TypeError, match="row_cost must be a function"):
        RegressionLeafCost(squared_error, 1.0)
    with pytest.raises(TypeError, match="value must be a function"):
        RegressionLeafCost(squared_error, spread, value=2.0)
    X, y = np.arange(8.0).reshape(-1, 1), np.arange(8.0)
    with pytest.raises(ValueError, match="objective"):
        OptimalTreeRegressor(objective=squared_error).fit(X, y)  # a bare function


def test_clone_pickle_time_limit_and_n_jobs():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 6))
    y = X[:, 0] + np.sin(3 * X[:, 1]) + rng.normal(size=400)
    model = OptimalTreeRegressor(max_depth=4, objective=SHRUNK, time_limit=0.3).fit(X, y)
    assert model.status_ in ("optimal", "time_limit")
    assert model.fit_time_ < 0.3 + 2.0  # loosely: the clock is looked at inside the search
    assert model.lower_bound_ <= model.objective_ + 1e-9
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    twin = clone(model).set_params(time_limit=None, max_depth=2).fit(X, y)
    assert twin.status_ == "optimal"
    assert twin.objective._leaf is model.objective._leaf  # a copy shares the compiled cost
    # n_jobs does not apply (the compiled cost stays in this process): the same optimum.
    alone = clone(twin).set_params(max_depth=3).fit(X[:80], y[:80])
    parallel = clone(twin).set_params(max_depth=3, n_jobs=2).fit(X[:80], y[:80])
    assert parallel.objective_ == alone.objective_ and parallel.parallel_ is None


def test_a_time_limit_spent_before_the_search_gives_the_objectives_leaf():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(50, 2))
    y = rng.normal(size=50) + 4
    model = OptimalTreeRegressor(max_depth=2, objective=SHRUNK, time_limit=1e-9).fit(X, y)
    assert model.status_ == "time_limit" and model.tree_.n_splits == 0
    W, S, Q = 50.0, y.sum(), y @ y
    assert model.objective_ == pytest.approx(shrunk(W, S, Q))
    assert model.predict(X[:1])[0] == pytest.approx(shrunk_value(W, S, Q))


def test_mixed_columns_with_missing_values_match_the_default_search():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    n = 120
    X = pd.DataFrame({"a": rng.normal(size=n), "c": pd.Categorical(rng.choice(list("pqrs"), n)),
                      "b": rng.integers(0, 2, n)})
    y = (X.a.fillna(0) * 2 + X.c.isin(["p", "q"]) * 3 + rng.normal(size=n)).to_numpy()
    X.loc[rng.random(n) < 0.1, "a"] = np.nan
    for depth in (1, 2, 3):
        default = OptimalTreeRegressor(max_depth=depth).fit(X, y)
        ours = OptimalTreeRegressor(max_depth=depth, objective=SQUARED).fit(X, y)
        assert ours.objective_ == pytest.approx(default.objective_, rel=1e-9)


@pytest.mark.parametrize("alpha", [0.01, 0.05])
def test_cost_complexity_as_for_squared_error(alpha):
    rng = np.random.default_rng(2)
    X = rng.integers(0, 5, (60, 3)).astype(float)
    y = X[:, 0] - X[:, 1] + rng.normal(size=60)
    w = rng.uniform(0.2, 2.0, 60)
    default = OptimalTreeRegressor(max_depth=3, cost_complexity=alpha).fit(X, y, sample_weight=w)
    ours = OptimalTreeRegressor(max_depth=3, cost_complexity=alpha, objective=SQUARED).fit(
        X, y, sample_weight=w)
    assert ours.objective_ == pytest.approx(default.objective_, rel=1e-9)
    assert ours.tree_.n_splits == default.tree_.n_splits
