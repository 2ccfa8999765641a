"""Size-minimal optima with unequal weights (issue 46, item 3): among the trees of least
weighted misclassification the binary search returns one with the fewest splits, deciding
equal costs within the solver's tolerance (sums of fractional weights differ by rounding with
their order), and reports the tree's own cost with a lower bound equal to it when optimal."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import _subtree_costs, split_tests
from sklearn.utils.class_weight import compute_sample_weight

from exactree import OptimalTreeClassifier
from exactree.tree.tree import LEAF


def _tree_cost(tree) -> float:
    """Weighted misclassification of a fitted tree, from its leaves' class weights."""
    return float(sum(v.sum() - v.max() for v in tree.value[tree.kind == LEAF]))


def _check_reported(est, total: float) -> None:
    """objective_ is the returned tree's cost; lower_bound_ <= objective_, equal if optimal."""
    assert est.lower_bound_ <= est.objective_
    if est.status_ == "optimal":
        assert est.lower_bound_ == est.objective_
    assert abs(est.objective_ - _tree_cost(est.tree_)) <= 1e-12 * max(1.0, total)


def test_perfect_tree_of_one_split_fractional_weights():
    # The depth-2 solver took a tree of two splits whose cost came out -4e-16 (pair counts
    # subtracted) over the perfect single split.
    X = np.array([[0.], [0.], [2.], [3.], [2.]])
    y = [1, 1, 0, 0, 0]
    w = [1.012, 2.118, 1.539, 2.601, 1.821]
    for search in ("binary", "ordered"):
        est = OptimalTreeClassifier(max_depth=2, search=search).fit(X, y, sample_weight=w)
        assert est.tree_.n_splits == 1, search
        assert est.objective_ == 0.0
        assert est.status_ == "optimal"
        _check_reported(est, sum(w))


def test_split_tying_the_leaf_on_a_string_column():
    # "a" | rest leaves class 0 misclassified on the left and nothing on the right: exactly
    # the leaf's cost, one rounding step below it in the kernel's sums. The leaf is returned,
    # with its own cost as objective and bound.
    X = pd.DataFrame({"c": ["a", "a", "c", "b"]})
    y = np.array([1, 0, 1, 1])
    w = np.array([2.992, 2.944, 2.088, 1.986])
    counts = np.bincount(y, w)
    leaf = float(counts.sum() - counts.max())
    for search in ("binary", "ordered"):
        est = OptimalTreeClassifier(max_depth=1, search=search).fit(X, y, sample_weight=w)
        assert est.tree_.n_splits == 0, search
        assert est.status_ == "optimal"
        assert est.objective_ == leaf
        assert est.lower_bound_ == est.objective_
        _check_reported(est, w.sum())


@st.composite
def _problems(draw, max_rows: int = 9, depths=(1, 2)):
    n = draw(st.integers(4, max_rows))
    n_columns = draw(st.integers(1, 3))
    columns, categorical = {}, []
    for j in range(n_columns):
        if draw(st.booleans()):
            values = draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
            columns[f"x{j}"] = pd.Series(values, dtype=object)
            categorical.append(j)
        else:
            columns[f"x{j}"] = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    n_classes = draw(st.integers(2, 3))
    y = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)))
    if len(np.unique(y)) < 2:
        y[0], y[1] = 0, 1
    # Weights on a grid of thousandths: exact ties in real numbers are frequent, and their
    # floating-point sums differ by rounding.
    weights = draw(st.one_of(
        st.lists(st.integers(1, 3000), min_size=n, max_size=n).map(lambda v: np.array(v) / 1e3),
        st.just(None)))
    balanced = weights is None or draw(st.booleans())
    depth = draw(st.sampled_from(depths))
    max_nodes = draw(st.one_of(st.none(), st.integers(1, (1 << depth) - 1)))
    return pd.DataFrame(columns), categorical, y, weights, balanced, depth, max_nodes


def _fit(search, X, y, weights, balanced, depth, max_nodes):
    return OptimalTreeClassifier(max_depth=depth, max_nodes=max_nodes, search=search,
                                 class_weight="balanced" if balanced else None).fit(
        X, y, sample_weight=weights)


def _check_against_oracle(problem):
    X, categorical, y, weights, balanced, depth, max_nodes = problem
    w = np.ones(len(y)) if weights is None else weights
    if balanced:
        w = w * compute_sample_weight("balanced", y)
    total = float(w.sum())
    tol = 1e-9 * max(1.0, total)  # the solvers' tolerance
    codes = np.column_stack([
        pd.factorize(X[c], sort=True)[0] if j in categorical else X[c].to_numpy(float)
        for j, c in enumerate(X.columns)])
    tests = split_tests(codes, categorical=tuple(categorical))
    n_classes = len(np.unique(y))
    cost = _subtree_costs(tests, np.searchsorted(np.unique(y), y), n_classes, w, 1)
    cap = (1 << depth) - 1 if max_nodes is None else max_nodes
    best = cost(depth, cap)
    fewest = next(b for b in range(cap + 1) if cost(depth, b) <= best + tol)
    fits = {}
    for search in ("binary", "ordered"):
        est = _fit(search, X, y, weights, balanced, depth, max_nodes)
        assert est.status_ == "optimal"
        assert abs(est.objective_ - best) <= tol, search
        assert est.tree_.n_splits == fewest, (search, est.tree_.n_splits, fewest)
        _check_reported(est, total)
        fits[search] = est
    assert abs(fits["binary"].objective_ - fits["ordered"].objective_) <= tol
    assert fits["binary"].tree_.n_splits == fits["ordered"].tree_.n_splits


@settings(max_examples=200, deadline=None)
@given(_problems())
def test_fewest_splits_among_weighted_optima(problem):
    _check_against_oracle(problem)


@settings(max_examples=40, deadline=None)
@given(_problems(max_rows=7, depths=(3,)))
def test_fewest_splits_among_weighted_optima_depth3(problem):
    # Depth 3: the general search's frames above depth-2 subproblems.
    _check_against_oracle(problem)
