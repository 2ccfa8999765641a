"""Multi-class ordered search (issue 45): the unpredicted-classes bound (a child of depth d
has 2**d leaves at most, so it misclassifies every class but as many) prunes splits and ends
depth-one sweeps early; optima and sizes must stay the brute force's and the binary search's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import optimal_cost_and_splits

from exactree import OptimalTreeClassifier
from exactree.solvers.dp._ordered import _unpredicted

SEED = st.integers(0, 2**31 - 1)


def raw_splits(X: np.ndarray) -> np.ndarray:
    """Every distinct split ``x <= v`` of the raw numeric columns as 0/1 columns."""
    cols = [X[:, j] <= v for j in range(X.shape[1]) for v in np.unique(X[:, j])[:-1]]
    return np.array(cols, bool).T.reshape(len(X), len(cols))


def many_classes(rng, n_lo=12, n_hi=30):
    n = int(rng.integers(n_lo, n_hi + 1))
    m = int(rng.integers(1, 4))
    K = int(rng.integers(3, 9))
    X = np.round(rng.normal(size=(n, m)), int(rng.integers(0, 2)))
    y = np.digitize(X[:, 0] + rng.normal(scale=0.7, size=n), np.linspace(-1.5, 1.5, K - 1))
    y = np.where(rng.random(n) < 0.25, rng.integers(0, K, n), y)
    y[:K] = np.arange(K)
    rng.shuffle(y)
    return X, y, K


def test_unpredicted():
    scratch = np.zeros(5)
    tot = np.array([3.0, 0.0, 7.0, 2.0, 2.0])
    assert _unpredicted(tot, 1, scratch) == 7.0
    assert _unpredicted(tot, 2, scratch) == 4.0
    assert _unpredicted(tot, 4, scratch) == 0.0
    assert _unpredicted(tot, 8, scratch) == 0.0


@settings(max_examples=80, deadline=None)
@given(SEED)
def test_size_minimal_optimum_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    X, y, K = many_classes(rng)
    depth = int(rng.integers(2, 4))
    min_leaf = 1 if rng.random() < 0.7 else int(rng.integers(2, 4))
    model = OptimalTreeClassifier(max_depth=depth, min_samples_leaf=min_leaf,
                                  search="ordered").fit(X, y)
    cost, splits = optimal_cost_and_splits(raw_splits(X), y, K, depth, min_leaf=min_leaf)
    assert model.status_ == "optimal"
    assert model.objective_ == pytest.approx(cost, abs=1e-9)
    assert model.tree_.n_splits == splits
    assert float(np.sum(model.predict(X) != y)) == pytest.approx(cost, abs=1e-9)


@settings(max_examples=20, deadline=None)
@given(SEED)
def test_ordered_equals_binary_and_ablation(seed):
    rng = np.random.default_rng(seed)
    n, m, K = int(rng.integers(60, 200)), int(rng.integers(2, 5)), int(rng.integers(3, 11))
    X = np.round(rng.normal(size=(n, m)), 2)
    s = X[:, 0] + 0.5 * X[:, 1]
    y = np.digitize(s, np.quantile(s, np.linspace(0, 1, K + 1)[1:-1]))
    y = np.where(rng.random(n) < 0.15, rng.integers(0, K, n), y)
    depth = int(rng.integers(2, 4))
    fits = [OptimalTreeClassifier(max_depth=depth, search=search, techniques=tech).fit(X, y)
            for search, tech in (("ordered", None), ("binary", None),
                                 ("ordered", {"class_count_bound": False}))]
    assert all(f.status_ == "optimal" for f in fits)
    assert {f.objective_ for f in fits} == {fits[0].objective_}
    assert {f.tree_.n_splits for f in fits} == {fits[0].tree_.n_splits}
