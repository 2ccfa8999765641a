"""ObliqueTreeClassifier: scikit-learn conformance, exports, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from exactree.estimators.oblique import ObliqueTreeClassifier
from exactree.tree import LINEAR, THRESHOLD, Tree, from_json, to_json


_HYPERPLANE = "has ~1e7+ candidate hyperplanes (N**D); refused by max_rules by design"
_EXPECTED_FAILED_HYPERPLANE = {
    "check_positive_only_tag_during_fit": "4-D iris " + _HYPERPLANE,
    "check_classifiers_train": "4-D iris " + _HYPERPLANE,
    "check_dtype_object": "10-D random data " + _HYPERPLANE,
}


# The check fits class weights 1000 : 0.0001 on heavily overlapping blobs and expects class 0
# on > 87% of the test rows; it relies on min_weight_fraction_leaf to stop a tree from carving
# out class-1-only regions, which an exact tree does because the weighted objective asks for
# it. class_weight itself is tested against sample_weight in tests/estimators/test_class_weight.py.
_CLASS_WEIGHT = {"check_class_weight_classifiers": "exact unregularised trees isolate pure "
                 "class-1 regions of the noisy blobs (the check assumes min_weight_fraction_leaf)"}


def _expected(est):
    return dict(_CLASS_WEIGHT, **({} if est.rules == "axis" else _EXPECTED_FAILED_HYPERPLANE))


@parametrize_with_checks([ObliqueTreeClassifier(rules="axis", n_splits=2),
                          ObliqueTreeClassifier(rules="hyperplane", n_splits=1, ties="left",
                                                max_rules=20_000)],
                         expected_failed_checks=_expected)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def rotated(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = np.where(X[:, 0] - 0.7 * X[:, 1] > 0.05, "pos", "neg")
    return X, y


def test_hyperplane_tree_nodes_and_export():
    X, y = rotated()
    est = ObliqueTreeClassifier(n_splits=1).fit(X, y)
    assert est.status_ == "optimal" and est.objective_ == 0 and est.score(X, y) == 1.0
    assert est.tree_.kind[0] == LINEAR
    text = est.export_text()
    assert "x0" in text and "x1" in text and "<=" in text
    assert from_json(to_json(est.tree_)) == est.tree_
    json.loads(to_json(est.tree_))
    axis = ObliqueTreeClassifier(n_splits=2, rules="axis").fit(X, y)
    assert set(axis.tree_.kind[axis.tree_.kind != 0]) == {THRESHOLD}
    assert axis.objective_ >= est.objective_


def test_polynomial_and_mixed():
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(13, 2))
    y = (X[:, 0] ** 2 + X[:, 1] ** 2 < 0.5).astype(int)
    poly = ObliqueTreeClassifier(n_splits=1, rules="polynomial", degree=2, ties="left",
                                 max_rules=10**6).fit(X, y)
    plane = ObliqueTreeClassifier(n_splits=1, rules="hyperplane").fit(X, y)
    assert poly.objective_ <= plane.objective_
    assert np.any(poly.tree_.rule_powers.max(axis=1) == 2)  # a real quadratic term
    mixed = ObliqueTreeClassifier(n_splits=2, rules="mixed", degree=1).fit(X, y)
    axis = ObliqueTreeClassifier(n_splits=2, rules="axis").fit(X, y)
    assert mixed.objective_ <= min(axis.objective_, plane.objective_)
    assert isinstance(mixed.tree_, Tree)


def test_constraints_are_respected():
    X, y = rotated(30, seed=3)
    est = ObliqueTreeClassifier(n_splits=3, rules="axis", max_depth=1, min_samples_leaf=5).fit(X, y)
    assert est.tree_.max_depth <= 1
    leaves = est.apply(X)
    assert np.bincount(leaves)[np.unique(leaves)].min() >= 5


def test_too_many_rules_is_a_clear_error():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 6))
    y = rng.integers(0, 2, size=60)
    with pytest.raises(ValueError, match=r"too many candidate rules: about [\d,]+ .* GiB"):
        ObliqueTreeClassifier(n_splits=2).fit(X, y)  # 3 billion hyperplanes to store
    with pytest.raises(ValueError, match=r"too many candidate rules: about [\d,]+"):
        ObliqueTreeClassifier(n_splits=1, max_rules=1_000).fit(X[:, :2], y)  # the user's cap


def test_degenerate_collinear_points():
    X = np.array([[0.0, 0.0], [1, 1], [2, 2], [3, 3], [4, 4], [1, 1], [2, 2.0]])
    y = np.array([0, 0, 1, 1, 0, 0, 1])
    est = ObliqueTreeClassifier(n_splits=2).fit(X, y)
    assert est.status_ == "optimal"
    assert est.score(X, y) == 1.0
    same = np.zeros((5, 2))
    with pytest.raises(ValueError, match="one class"):
        ObliqueTreeClassifier().fit(same, np.zeros(5))
    est = ObliqueTreeClassifier().fit(same, [0, 1, 0, 1, 1])  # nothing can split identical rows
    assert est.tree_.n_leaves == 1


def test_work_estimate_refuses_only_what_is_out_of_reach():
    """The refusal judges the real work (rules x evaluations), not a rule count: a degree-2
    hypersurface on 30 points (4.56 million rules) fits; weeks of search without a time limit
    are refused before any rule is generated; a long one is warned about."""
    import warnings

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(30, 2))
    y = (X[:, 0] ** 2 + X[:, 1] ** 2 < 0.5).astype(int)
    poly = ObliqueTreeClassifier(n_splits=1, rules="polynomial", degree=2).fit(X, y)
    assert poly.status_ == "optimal" and poly.objective_ == 0
    X = rng.normal(size=(60, 2))
    y = rng.integers(0, 2, size=60)
    with pytest.raises(ValueError, match=r"^search out of reach: about [\d,]+ rules .* years"):
        ObliqueTreeClassifier(n_splits=4).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the warning comes before the search: stop right there
        with pytest.raises(UserWarning, match="rule evaluations"):
            ObliqueTreeClassifier(n_splits=3).fit(X, y)
    # with a time limit the search is anytime: not refused
    est = ObliqueTreeClassifier(n_splits=4, time_limit=0.5).fit(X, y)
    assert est.status_ == "time_limit" and est.objective_ <= 30


def test_categorical_columns_are_refused():
    import pandas as pd

    df = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "colour": ["r", "g", "b", "r"]})
    with pytest.raises(ValueError, match="column 'colour' is categorical"):
        ObliqueTreeClassifier(n_splits=1, rules="axis").fit(df, [0, 1, 0, 1])


def test_incomplete_rule_sets_report_optimal_on_rules():
    """A search finished over a rule set that lacks splits of its family is optimal over those
    rules only: status "optimal_on_rules" (a status of its own, not the binarisation status
    "optimal_on_binarized"), lower bound 0; the complete family says "optimal"."""
    from exactree.solvers.result import STATUSES, SolveResult

    assert "optimal_on_rules" in STATUSES
    X, y = rotated(14, seed=5)
    full = ObliqueTreeClassifier(n_splits=1).fit(X, y)
    left = ObliqueTreeClassifier(n_splits=1, ties="left").fit(X, y)  # the paper's construction
    assert full.status_ == "optimal" and full.lower_bound_ == full.objective_
    assert left.status_ == "optimal_on_rules" and left.lower_bound_ == 0.0
    assert left.stats_["rules_exhaustive"] is False and left.objective_ >= full.objective_
    # two distinct points in 3-D: fewer than the 3 defining points a plane needs
    X3 = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    few = ObliqueTreeClassifier(n_splits=1).fit(X3, [0, 1, 0])
    assert few.status_ == "optimal_on_rules" and few.stats_["rules_exhaustive"] is False
    axis = ObliqueTreeClassifier(n_splits=1, rules="axis").fit(X3, [0, 1, 0])
    assert axis.status_ == "optimal"  # axis rules are complete whatever the number of points
    assert isinstance(SolveResult(tree=left.tree_, objective=1.0, lower_bound=0.0,
                                  status="optimal_on_rules").gap, float)
