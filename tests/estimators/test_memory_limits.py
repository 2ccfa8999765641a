"""memory_limit in every estimator (issue 46): the peak is estimated before the large structures
are allocated, and what would not fit is refused with a MemoryLimitError (a MemoryError and a
ValueError) whose message names the ways out; fits within the limit still work."""

import numpy as np
import pytest

import exactree.estimators.dyadic as dyadic_module
import exactree.solvers.proper.search as proper_search
from exactree import (DyadicTreeClassifier, MemoryLimitError, ObliqueTreeClassifier,
                      ObliqueTreeRegressor, OptimalTreeClassifier, OptimalTreeRegressor)
from exactree.data.binarize import Binarizer
from exactree.solvers.dp import solver as dp_solver
from exactree.solvers.dyadic.search import RECTANGLE_BYTES, prepare_bytes


def _data(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    return X, y


def _never(*args, **kwargs):
    raise AssertionError("allocated before the memory estimate refused the fit")


# ------------------------------------------------------------------ binary search (MurTree)
def test_binary_search_is_refused_against_the_fit_budget_before_binarising(monkeypatch):
    X, y = _data(400, 6)
    monkeypatch.setattr(Binarizer, "transform", _never)  # the rows x features matrix
    monkeypatch.setattr(dp_solver.DPSolver, "__init__", _never)
    with pytest.raises(MemoryLimitError) as info:
        OptimalTreeClassifier(search="binary", max_depth=2, memory_limit=0.5).fit(X, y)
    msg = str(info.value)
    assert "OptimalTreeClassifier" in msg and "binary" in msg
    for way in ("search='ordered'", "max_thresholds", "memory_limit", "fewer rows"):
        assert way in msg
    assert isinstance(info.value, MemoryError) and isinstance(info.value, ValueError)
    assert info.value.need > info.value.limit > 0


def test_binary_search_within_the_limit_still_fits():
    X, y = _data(400, 6)
    est = OptimalTreeClassifier(search="binary", max_depth=2, memory_limit=64).fit(X, y)
    assert est.search_ == "binary" and est.status_ == "optimal"
    same = OptimalTreeClassifier(search="binary", max_depth=2).fit(X, y)
    assert est.objective_ == same.objective_


def test_check_problem_size_uses_the_given_budget_and_counts_weights():
    need = dp_solver.check_problem_size(1000, 50, 2, 1e9)
    weighted = dp_solver.check_problem_size(1000, 50, 2, 1e9, weighted=True)
    assert 3.25 * 1000 * 50 <= need < weighted
    with pytest.raises(MemoryLimitError, match="max_thresholds"):
        dp_solver.check_problem_size(1000, 50, 2, need - 1)
    dp_solver.check_problem_size(1000, 50, 2, need)  # exactly the estimate fits


def test_ordered_searches_stop_at_their_memory_limit():
    X, y = _data(300, 4)
    clf = OptimalTreeClassifier(search="ordered", max_depth=4, memory_limit=0.05).fit(X, y)
    assert clf.status_ == "memory_limit" and clf.lower_bound_ <= clf.objective_
    reg = OptimalTreeRegressor(max_depth=4, memory_limit=0.05).fit(X, X[:, 0] + X[:, 1])
    assert reg.status_ == "memory_limit" and reg.lower_bound_ <= reg.objective_


# ------------------------------------------------------------------ dyadic
def test_dyadic_refuses_the_preparation_before_it_runs(monkeypatch):
    X, y = _data(2000, 5)
    monkeypatch.setattr(dyadic_module, "prepare", _never)
    with pytest.raises(MemoryLimitError) as info:
        DyadicTreeClassifier(max_splits_per_dim=2, memory_limit=0.1).fit(X, y)
    msg = str(info.value)
    assert "DyadicTreeClassifier" in msg and "fewer rows" in msg and "memory_limit" in msg
    assert info.value.need == pytest.approx(prepare_bytes(2000, 5, 2))


def test_dyadic_refuses_the_rectangle_table_before_the_search(monkeypatch):
    X, y = _data(500, 5)
    monkeypatch.setattr(dyadic_module, "solve", _never)
    with pytest.raises(MemoryLimitError) as info:
        DyadicTreeClassifier(max_splits_per_dim=3, memory_limit=1).fit(X, y)
    msg = str(info.value)
    assert "rectangles" in msg and "max_splits_per_dim" in msg and "memory_limit" in msg
    assert info.value.need >= RECTANGLE_BYTES


def test_dyadic_max_rectangles_refusal_is_a_memory_limit_error():
    X, y = _data(500, 5)
    with pytest.raises(MemoryLimitError, match="max_rectangles=1,000"):
        DyadicTreeClassifier(max_splits_per_dim=3, max_rectangles=1000).fit(X, y)


def test_dyadic_within_the_limit_still_fits():
    X, y = _data(500, 5)
    est = DyadicTreeClassifier(max_splits_per_dim=2, memory_limit=64).fit(X, y)
    ref = DyadicTreeClassifier(max_splits_per_dim=2).fit(X, y)
    assert est.status_ == "optimal" and est.objective_ == ref.objective_


# ------------------------------------------------------------------ oblique
@pytest.mark.parametrize("cls", [ObliqueTreeClassifier, ObliqueTreeRegressor])
def test_oblique_refuses_the_rules_before_generating_them(monkeypatch, cls):
    X, y = _data(200, 3)
    if cls is ObliqueTreeRegressor:
        y = X[:, 0] - X[:, 2]
    monkeypatch.setattr(proper_search, "make_rules", _never)
    with pytest.raises(MemoryLimitError) as info:
        cls(n_splits=2, memory_limit=1).fit(X, y)
    msg = str(info.value)
    assert cls.__name__ in msg and "too many candidate rules" in msg
    for way in ("fewer rows", "n_splits", "rules='axis'", "memory_limit"):
        assert way in msg


@pytest.mark.parametrize("cls", [ObliqueTreeClassifier, ObliqueTreeRegressor])
def test_oblique_refuses_merging_the_points_before_it_runs(monkeypatch, cls):
    X, y = _data(2000, 6)
    monkeypatch.setattr(proper_search, "point_data", _never)
    with pytest.raises(MemoryLimitError, match="fewer rows"):
        cls(n_splits=1, rules="axis", memory_limit=0.01).fit(X, y)


def test_oblique_within_the_limit_still_fits():
    X, y = _data(40, 2)
    est = ObliqueTreeClassifier(n_splits=1, memory_limit=64).fit(X, y)
    ref = ObliqueTreeClassifier(n_splits=1).fit(X, y)
    assert est.status_ == ref.status_ and est.objective_ == ref.objective_
    reg = ObliqueTreeRegressor(n_splits=1, rules="axis", memory_limit=64).fit(X, X[:, 0])
    assert reg.status_ == "optimal"
