"""The region branch-and-bound search (``odt(method="regions")``, the default): every pruning
switchable off gives the same optimum as the brute-force oracle and the combination search;
``n_jobs`` gives the serial result; the work estimate."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exactree.estimators.oblique import ObliqueTreeClassifier
from exactree.solvers.proper import make_rules, odt, point_data
from exactree.solvers.proper.search import estimate_work, solve_proper, tree_objective
from exactree.tree import to_json

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the oracles next door
from test_proper_search import brute_force_odt, tiny_data  # noqa: E402

PRUNINGS = [dict(), dict(bound=False), dict(dominance=False), dict(prune=False)]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(3, 7), k=st.integers(1, 3),
       family=st.sampled_from(["axis", "hyperplane", "mixed"]), grid=st.booleans(),
       min_leaf=st.integers(1, 2), max_depth=st.sampled_from([1, 2, None]),
       n_classes=st.integers(2, 3))
def test_every_pruning_keeps_the_brute_force_optimum(seed, n, k, family, grid, min_leaf,
                                                     max_depth, n_classes):
    X, y = tiny_data(seed, n, n_classes=n_classes, grid=grid)
    # integral weights (bit planes) and duplicated points (the equivalent-points bound)
    w = np.random.default_rng(seed).integers(1, 3, size=n).astype(float)
    data = point_data(X, y, w, n_classes)
    rules = make_rules(data.X, family, degree=1, ties="left" if family == "mixed" else "all")
    if len(rules) > 40 and k == 3:
        rules = rules.subset(np.arange(40))
    oracle = brute_force_odt(rules, data, k, min_leaf, 10**9 if max_depth is None else max_depth)
    for prune in PRUNINGS:
        res = odt(rules, data, k, min_samples_leaf=min_leaf, max_depth=max_depth,
                  method="regions", **prune)
        assert res.value == pytest.approx(oracle), prune
        assert res.status == "optimal"


@pytest.mark.parametrize("seed", range(6))
def test_regions_match_combinations_on_larger_sets(seed):
    """Fractional weights (no bit planes), three classes, up to three rules."""
    rng = np.random.default_rng(seed)
    n = 12
    X = rng.normal(size=(n, 2))
    y = rng.integers(0, 3, size=n)
    w = rng.uniform(0.5, 2.0, size=n)
    data = point_data(X, y, w, 3)
    rules = make_rules(data.X, "hyperplane", ties="left" if seed % 2 else "all")
    for k, md, ml in ((1, None, 1), (2, None, 2), (3, 2, 1)):
        if k == 3:
            rules = rules.subset(np.arange(min(len(rules), 120)))
        ref = odt(rules, data, k, max_depth=md, min_samples_leaf=ml, method="combinations")
        for prune in PRUNINGS:
            res = odt(rules, data, k, max_depth=md, min_samples_leaf=ml, **prune)
            assert res.value == pytest.approx(ref.value), (k, prune)


def test_plan_is_the_tree_the_search_scored():
    X, y = tiny_data(4, 40, n_classes=3)
    for family, k in (("axis", 3), ("hyperplane", 2)):
        est = ObliqueTreeClassifier(n_splits=k, rules=family).fit(X, y)
        assert est.stats_["method"] == "regions"
        assert est.objective_ == est.stats_["search_objective"]
        assert tree_objective(est.tree_, X, np.searchsorted(est.classes_, y),
                              np.ones(len(y))) == est.objective_
        assert est.tree_.n_splits <= k


def test_n_jobs_gives_the_serial_tree():
    import joblib

    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(int) ^ (rng.random(40) < 0.1)
    serial = ObliqueTreeClassifier(n_splits=2).fit(X, y)
    par = ObliqueTreeClassifier(n_splits=2, n_jobs=2).fit(X, y)
    assert par.stats_["n_jobs"] == 2 and par.stats_["chunks"] > 1
    assert par.objective_ == serial.objective_
    assert to_json(par.tree_) == to_json(serial.tree_)
    with joblib.parallel_config(backend="loky", n_jobs=2):  # processes, as Dask would
        proc = ObliqueTreeClassifier(n_splits=2, n_jobs=-1).fit(X, y)
    assert to_json(proc.tree_) == to_json(serial.tree_)


def test_work_estimate_grows_with_the_problem():
    small = estimate_work(30, 2, "polynomial", 2, "all", 1)
    assert small.rules == 4_560_192 and small.seconds < 60
    big = estimate_work(60, 2, "hyperplane", 2, "all", 4)
    assert big.search_evaluations > 1e16 and big.seconds > 30 * 86400
    assert estimate_work(150, 2, "hyperplane", 2, "all", 2).seconds < 3600


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(4, 13), d=st.integers(1, 3),
       family=st.sampled_from(["hyperplane", "polynomial"]), grid=st.booleans(),
       min_leaf=st.integers(1, 2), fractional=st.booleans())
def test_streamed_one_rule_search_equals_the_rule_list(seed, n, d, family, grid, min_leaf,
                                                      fractional):
    """The one-rule search without a rule list (incremental pencil sweep, exact generation for
    the subsets it cannot decide, verified winner) proves what the rule-list search proves."""
    if family == "polynomial":
        d = min(d, 2)
    X, y = tiny_data(seed, n, d=d, n_classes=3, grid=grid)
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.5, 2.0, size=n) if fractional else rng.integers(1, 3, size=n) * 1.0
    listed = solve_proper(X, y, w, 3, n_splits=1, rules=family, min_samples_leaf=min_leaf,
                          stream=False)
    streamed = solve_proper(X, y, w, 3, n_splits=1, rules=family, min_samples_leaf=min_leaf,
                            stream=True)
    assert streamed.objective == pytest.approx(listed.objective)
    assert streamed.status == listed.status
    assert streamed.stats.get("method") in ("stream", "regions")


def test_streamed_search_with_n_jobs_and_collinear_points():
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(17, 2))
    X[:6] = np.linspace(-1, 1, 6)[:, None] * [1.0, 0.5]  # six collinear points: exact path
    y = (X[:, 0] ** 2 + X[:, 1] ** 2 < 0.4).astype(int)
    one = solve_proper(X, y, np.ones(17), 2, n_splits=1, rules="polynomial", stream=True)
    two = solve_proper(X, y, np.ones(17), 2, n_splits=1, rules="polynomial", stream=True,
                       n_jobs=2)
    ref = solve_proper(X, y, np.ones(17), 2, n_splits=1, rules="polynomial", stream=False)
    assert one.objective == two.objective == ref.objective
    assert one.stats["exact_subsets"] > 0 and one.status == ref.status == "optimal"
    assert to_json(one.tree) == to_json(two.tree)
