"""The planner: which search a fit runs, and that every search it can pick gives one optimum."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exactree import OptimalTreeClassifier, OptimalTreeRegressor
from exactree.core import planner
from exactree.core.planner import ProblemShape, plan_search, predicted_log_ratio
from oracles import optimal_cost_and_splits, split_tests


def shape(**kw) -> ProblemShape:
    base = dict(n_rows=1000, n_binary=100, n_ordered=100, n_classes=2, max_depth=3)
    return ProblemShape(**{**base, **kw})


def test_binary_features_take_the_binary_search():
    """One split per feature: pair counts popcount 64 rows a word, sweeps one row at a time."""
    for m in (4, 100, 1163, 5000):
        plan = plan_search(shape(n_binary=m, n_ordered=m))
        assert plan.search == "binary" and not plan.race, plan


def test_many_thresholds_per_feature_take_the_ordered_search():
    plan = plan_search(shape(n_binary=20 * 500, n_ordered=20))
    assert plan.search == "ordered" and plan.log_ratio > 0


def test_the_model_grows_with_the_splits_per_feature():
    ratios = [predicted_log_ratio(shape(n_binary=20 * s, n_ordered=20)) for s in (1, 4, 16, 64,
                                                                                 256)]
    assert ratios == sorted(ratios) and ratios[0] < 0 < ratios[-1]


def test_the_fitted_model_grows_with_the_splits_at_every_depth():
    """The estimator counts ordered features from an upper bound on the splits per feature
    first and keeps a binary choice made there: sound only while the model grows with them."""
    for depth in range(1, 9):
        for rows in (100, 10**4, 10**6):
            r = [predicted_log_ratio(shape(n_rows=rows, n_binary=s * 50, n_ordered=50,
                                           max_depth=depth)) for s in (1, 2, 8, 64, 512)]
            assert r == sorted(r), (depth, rows, r)


def test_a_penalised_fit_prices_the_binary_search_s_budgets():
    """cost_complexity: the binary search solves node budgets one after another, the ordered
    search once with a price per split."""
    plain = predicted_log_ratio(shape(n_binary=400, n_ordered=100))
    priced = predicted_log_ratio(shape(n_binary=400, n_ordered=100, binary_budgets=7))
    assert priced == pytest.approx(plain + math.log(7))
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 3)).round(1)
    y = (X[:, 0] > 0).astype(int)
    model = OptimalTreeClassifier(max_depth=3, cost_complexity=0.01).fit(X, y)
    assert model.search_ == "ordered"


def test_one_search_only_and_what_does_not_fit():
    assert plan_search(shape(n_classes=0)).search == "ordered"  # squared error
    assert plan_search(shape(user_objective=True)).search == "ordered"
    plan = plan_search(shape(binary_fits=False))
    assert plan.search == "ordered" and "memory" in plan.reason
    for asked in ("binary", "ordered"):
        assert plan_search(shape(binary_fits=False), asked).search == asked


def test_unsure_predictions_race(monkeypatch):
    monkeypatch.setattr(planner, "MODEL", (0.1, 0.0, 0.0, 0.0, 0.0, 0.0))
    plan = plan_search(shape())
    assert plan.race and plan.search == "ordered" and "raced" in plan.reason
    monkeypatch.setattr(planner, "MODEL", (-3.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    assert not plan_search(shape()).race


def test_the_estimator_reports_its_plan(capsys):
    """Wide 0/1 data (the old rule sent 1,000 binary features or more to the ordered search,
    168x slower than STreeD on 690 x 1,163) goes to the binary search, and says why."""
    rng = np.random.default_rng(0)
    X = (rng.random((60, 1100)) < 0.3).astype(float)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    model = OptimalTreeClassifier(max_depth=2, verbose=1).fit(X, y)
    assert model.search_ == "binary" == model.plan_.search
    # (a few neighbouring columns nest by chance on 60 rows and would merge)
    assert model.plan_.n_binary == 1100 and 1000 < model.plan_.n_ordered <= 1100
    err = capsys.readouterr().err
    assert f"search 'binary': at most 1.0 splits per feature over {model.plan_.n_ordered} " in err
    X = rng.normal(size=(300, 3))
    model = OptimalTreeClassifier(max_depth=2).fit(X, (X[:, 0] > 0).astype(int))
    assert model.search_ == "ordered" and model.plan_.n_ordered == 3
    assert OptimalTreeRegressor(max_depth=1).fit(X, X[:, 0]).search_ == "ordered"


def test_a_race_keeps_the_first_search_to_finish(monkeypatch):
    """An unsure plan runs both for a few hundredths of a second: a small problem finishes in
    the predicted one, and the fit is the race's (the same optimum either way)."""
    monkeypatch.setattr(planner, "MODEL", (0.1, 0.0, 0.0, 0.0, 0.0, 0.0))
    rng = np.random.default_rng(1)
    X = rng.integers(0, 5, (80, 3)).astype(float)
    y = (X[:, 0] + rng.integers(0, 2, 80) > 2).astype(int)
    model = OptimalTreeClassifier(max_depth=2).fit(X, y)
    assert model.plan_.race and model.search_ in ("binary", "ordered")
    forced = OptimalTreeClassifier(max_depth=2, search="binary").fit(X, y)
    assert model.objective_ == pytest.approx(forced.objective_) and model.status_ == "optimal"


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 14), d=st.integers(1, 3),
       values=st.integers(2, 6), classes=st.integers(2, 3), depth=st.integers(1, 2),
       weighted=st.booleans())
def test_every_search_the_planner_can_pick_finds_the_optimum(seed, n, d, values, classes,
                                                             depth, weighted):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, values, (n, d)).astype(float)
    y = rng.integers(0, classes, n)
    y[:2] = [0, 1]  # (a classifier needs two classes)
    w = rng.integers(1, 4, n).astype(float) if weighted else np.ones(n)
    k = len(np.unique(y))
    _, y_idx = np.unique(y, return_inverse=True)
    best, splits = optimal_cost_and_splits(split_tests(X), y_idx, k, depth, weights=w)
    for search in ("auto", "binary", "ordered"):
        model = OptimalTreeClassifier(max_depth=depth, search=search).fit(X, y, sample_weight=w)
        assert math.isclose(model.objective_, best, abs_tol=1e-9), search
        assert model.tree_.n_splits == splits, search
