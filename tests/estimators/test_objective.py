"""User-written leaf costs (``OptimalTreeClassifier(objective=LeafCost(...))``): the optimum
against a brute-force oracle over every raw split, the promises checked, what does not apply."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import clone

from exactree import LeafCost, OptimalTreeClassifier
from tests.oracles import optimal_cost, split_tests
from tests.ordered_cases import small_numeric, weights_for

LOSS = np.array([[0.0, 4.0, 1.0], [1.0, 0.0, 2.5], [3.0, 1.0, 0.0]])


def asymmetric(w, c):
    """A loss matrix: predicting ``c`` costs ``LOSS[k, c]`` per unit of weight of class ``k``."""
    total = 0.0
    for k in range(w.shape[0]):
        total += w[k] * LOSS[k, c]
    return total


def capped_root(w, c):
    """Not linear: the square root of one plus the weight misclassified, less one."""
    return np.sqrt(1.0 + w.sum() - w[c]) - 1.0


def errors(w, c):
    return w.sum() - w[c]


OBJECTIVES = [(asymmetric, 4.0), (capped_root, 0.5)]


def least(cost, K):
    return lambda counts: min(cost(np.asarray(counts, float), c) for c in range(K))


@pytest.mark.parametrize("seed", range(24))
def test_optimum_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    X, y, _ = small_numeric(rng, K=3)
    K = 3
    w = weights_for(rng, len(y))
    depth = int(rng.integers(1, 4))
    min_leaf = int(rng.integers(1, 3))
    cost, row_cost = OBJECTIVES[seed % 2]
    model = OptimalTreeClassifier(max_depth=depth, min_samples_leaf=min_leaf,
                                  objective=LeafCost(cost, row_cost)).fit(X, y, sample_weight=w)
    want = optimal_cost(split_tests(X), y, K, depth, weights=w, min_leaf=min_leaf,
                        leaf_cost=least(cost, K))
    assert model.status_ == "optimal"
    assert model.objective_ == pytest.approx(want, abs=1e-9)
    # The tree's leaves, walked independently: each predicts its label of least cost, and the
    # costs add up to the objective.
    leaf = model.apply(X)
    ww = np.ones(len(y)) if w is None else w
    total = 0.0
    for node in np.unique(leaf):
        counts = np.bincount(y[leaf == node], weights=ww[leaf == node], minlength=K)
        costs = [cost(counts, c) for c in range(K)]
        total += min(costs)
        assert model.predict(X[leaf == node][:1])[0] == int(np.argmin(costs))
    assert total == pytest.approx(model.objective_, abs=1e-9)


def test_misclassification_written_by_hand_gives_the_default_optimum():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=60) > 0).astype(int) + (X[:, 1] > 1)
    ours = OptimalTreeClassifier(max_depth=3, objective=LeafCost(errors, 1.0)).fit(X, y)
    default = OptimalTreeClassifier(max_depth=3, search="ordered").fit(X, y)
    assert ours.objective_ == default.objective_
    assert ours.tree_.n_splits == default.tree_.n_splits  # size-minimal too


def test_techniques_off_keep_the_optimum():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 6, (40, 3)).astype(float)
    y = rng.integers(0, 3, 40)
    objective = LeafCost(asymmetric, 4.0)
    base = OptimalTreeClassifier(max_depth=3, objective=objective).fit(X, y).objective_
    for name in ("interval_pruning", "neighbour_pruning", "depth1_first", "wide_second_bound",
                 "minimal_size", "bucket_histograms"):
        model = OptimalTreeClassifier(max_depth=3, objective=objective,
                                      techniques={name: False}).fit(X, y)
        assert model.objective_ == pytest.approx(base, abs=1e-9), name


@pytest.mark.parametrize("cost, row_cost, message", [
    (lambda w, c: -1.0, 1.0, "not negative"),
    (lambda w, c: 10.0 - w.sum(), 1.0, "never cost less"),
    (lambda w, c: 2.0 * (w.sum() - w[c]), 1.0, "raise row_cost"),
])
def test_broken_promises_are_refused(cost, row_cost, message):
    X, y = np.arange(8.0).reshape(-1, 1), np.array([0, 1] * 4)
    with pytest.raises(ValueError, match=message):
        OptimalTreeClassifier(max_depth=2, objective=LeafCost(cost, row_cost)).fit(X, y)


def test_functions_numba_cannot_compile_are_named():
    with pytest.raises(TypeError, match="Numba cannot compile"):
        LeafCost(lambda w, c: w[c] if object() else 0.0, 1.0)  # no objects in Numba
    with pytest.raises(TypeError, match="cost must be a function"):
        LeafCost(3.0, 1.0)
    with pytest.raises(ValueError, match="row_cost"):
        LeafCost(errors, -1.0)


def test_what_does_not_apply_is_refused():
    X, y = np.arange(8.0).reshape(-1, 1), np.array([0, 1] * 4)
    objective = LeafCost(errors, 1.0)
    with pytest.raises(ValueError, match="ordered search"):
        OptimalTreeClassifier(max_depth=2, objective=objective, search="binary").fit(X, y)
    with pytest.raises(ValueError, match="objective"):
        OptimalTreeClassifier(objective=errors).fit(X, y)  # a bare function, not a LeafCost


def test_clone_pickle_and_time_limit():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 6))
    y = rng.integers(0, 3, 300)
    model = OptimalTreeClassifier(max_depth=4, objective=LeafCost(asymmetric, 4.0),
                                  time_limit=0.5)
    model.fit(X, y)
    assert model.status_ in ("optimal", "time_limit")
    assert model.fit_time_ < 0.5 + 2.0  # loosely: the clock is looked at inside the search
    assert model.lower_bound_ <= model.objective_ + 1e-9
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    twin = clone(model).set_params(time_limit=None, max_depth=2).fit(X, y)
    assert twin.status_ == "optimal"
    # n_jobs does not apply (the compiled cost stays in this process): the same optimum.
    alone = clone(twin).set_params(max_depth=3).fit(X[:80], y[:80])
    spread = clone(twin).set_params(max_depth=3, n_jobs=2).fit(X[:80], y[:80])
    assert spread.objective_ == alone.objective_ and spread.parallel_ is None


def test_mixed_columns_with_missing_values_match_the_default_search():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    n = 120
    X = pd.DataFrame({"a": rng.normal(size=n), "c": pd.Categorical(rng.choice(list("pqrs"), n)),
                      "b": rng.integers(0, 2, n)})
    y = ((X.a > 0) ^ X.c.isin(["p", "q"])).astype(int).to_numpy().copy()
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    X.loc[rng.random(n) < 0.1, "a"] = np.nan
    objective = LeafCost(errors, 1.0)
    for depth in (1, 2, 3):
        default = OptimalTreeClassifier(max_depth=depth, search="ordered").fit(X, y)
        ours = OptimalTreeClassifier(max_depth=depth, objective=objective).fit(X, y)
        assert ours.objective_ == default.objective_
        assert ours.tree_.n_splits == default.tree_.n_splits


@pytest.mark.parametrize("alpha, class_weight",
                         [(0.01, None), (0.05, "balanced"), (0.0, "balanced")])
def test_cost_complexity_and_class_weight_as_for_misclassification(alpha, class_weight):
    rng = np.random.default_rng(2)
    X = rng.integers(0, 5, (50, 3)).astype(float)
    y = rng.integers(0, 3, 50)
    w = rng.uniform(0.2, 2.0, 50)
    params = {"max_depth": 3, "cost_complexity": alpha, "class_weight": class_weight}
    default = OptimalTreeClassifier(search="ordered", **params).fit(X, y, sample_weight=w)
    ours = OptimalTreeClassifier(objective=LeafCost(errors, 1.0), **params).fit(
        X, y, sample_weight=w)
    assert ours.objective_ == pytest.approx(default.objective_, abs=1e-9)
