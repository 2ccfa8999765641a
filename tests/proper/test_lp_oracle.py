"""Proper-tree search against an oracle that shares nothing with it: LP separability.

The rule family ``ties="all"`` must hold exactly the linear splits of the points (checked
against scipy's LP, not against exactree's own rule generation), whatever the translation and
scale of the data; the searched optimum must equal the best tree over all linear splits; and a
search that may miss splits (``ties="left"``, unrepresentable rules) must say
``"optimal_on_rules"``, never ``"optimal"``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from oracle_lp import all_labellings, best_tree, linear_splits, normalise  # noqa: E402

from exactree import ObliqueTreeClassifier
from exactree.solvers.proper import make_rules, solve_proper
from exactree.solvers.proper.rules import monomial_powers, monomials

# (offset, scale): the geometry of a split does not change under x -> scale * x + offset
TRANSFORMS = [(0.0, 1.0), (1e6, 1.0), (1e9, 1.0), (0.0, 1e-9), (0.0, 1e9), (-3e4, 1e-2)]


def point_set(seed: int, n: int = 7, d: int = 2, grid: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if grid:  # collinear and axis-aligned points: the degenerate cases
        return np.unique(rng.integers(0, 3, size=(n, d)).astype(float), axis=0)
    return rng.normal(size=(n, d))


def family_splits(X: np.ndarray, family: str = "hyperplane", ties: str = "all",
                  degree: int = 2) -> tuple[set[int], object]:
    rules = make_rules(X, family, ties=ties, degree=degree)
    return {normalise(s) for s in rules.side_matrix()}, rules


@pytest.mark.parametrize("seed,grid", [(0, False), (1, False), (2, True), (3, True), (4, False)])
def test_hyperplane_family_is_every_linear_split_under_any_affine_map(seed, grid):
    X = point_set(seed, grid=grid)
    oracle = linear_splits(X)
    for offset, scale in TRANSFORMS:
        got, rules = family_splits(X * scale + offset)
        assert got == oracle, (offset, scale)
        assert rules.n_unrepresentable == 0 and rules.exhaustive


@pytest.mark.parametrize("d,degree,seed", [(1, 2, 0), (1, 3, 1), (2, 2, 2)])
def test_polynomial_family_is_every_split_in_monomial_space(d, degree, seed):
    X = point_set(seed, n=7, d=d)
    oracle = linear_splits(monomials(X, monomial_powers(d, degree)))
    got, rules = family_splits(X, "polynomial", degree=degree)
    assert got == oracle and rules.n_unrepresentable == 0


def test_left_ties_miss_splits_and_are_flagged():
    X = point_set(0)
    got, rules = family_splits(X, ties="left")
    assert got < linear_splits(X) and not rules.exhaustive


def test_polynomial_far_from_origin_is_flagged_not_silently_dropped():
    """Degree-2 rules of data at 1e4 +- 1e-3 cancel ~1e8-sized terms: float64 cannot store
    them faithfully, and the rule set says so instead of losing them silently."""
    X = point_set(0, n=7, d=1)
    oracle = linear_splits(monomials(X, monomial_powers(1, 2)))
    got, rules = family_splits(X * 1e-3 + 1e4, "polynomial", degree=2)
    assert got == oracle or rules.n_unrepresentable > 0
    w = np.ones(7)
    for y in list(all_labellings(7))[:: 9]:
        res = solve_proper(X * 1e-3 + 1e4, y, w, 2, n_splits=1, rules="polynomial", degree=2)
        exact = best_tree(7, oracle, np.eye(2)[y], 1)
        assert res.objective >= exact
        assert res.status != "optimal" or res.objective == exact
        if rules.n_unrepresentable:
            assert res.status == "optimal_on_rules" and res.lower_bound == 0.0


@pytest.mark.parametrize("seed,grid,offset,scale", [(0, False, 0.0, 1.0), (1, False, 1e9, 1.0),
                                                    (2, True, 0.0, 1e-9), (5, False, 1e6, 1e3)])
def test_search_equals_best_tree_over_all_linear_splits(seed, grid, offset, scale):
    """Every labelling of a small point set: ``ties="all"`` finds the LP oracle's optimum and
    says optimal; ``ties="left"`` is never better and never says optimal."""
    X = point_set(seed, n=6, grid=grid)
    n = len(X)
    splits = linear_splits(X)
    Xt = X * scale + offset
    w = np.ones(n)
    left_worse = 0
    for y in all_labellings(n):
        onehot = np.eye(2)[y]
        for k in (1, 2):
            exact = best_tree(n, splits, onehot, k)
            res = solve_proper(Xt, y, w, 2, n_splits=k, rules="hyperplane")
            assert res.objective == exact and res.status == "optimal", (y, k)
            assert res.lower_bound == exact
            if k == 2:
                left = solve_proper(Xt, y, w, 2, n_splits=k, rules="hyperplane", ties="left")
                assert left.objective >= exact and left.status == "optimal_on_rules"
                assert left.lower_bound <= exact
                left_worse += left.objective > exact
    if not grid:
        assert left_worse > 0  # the case the "left" status exists for does occur


def test_issue_example_is_translation_and_scale_invariant():
    rng = np.random.default_rng(3)
    X0 = rng.normal(size=(14, 2))
    y = np.array([0, 1] * 7)
    rng.shuffle(y)
    results = []
    for offset, scale in TRANSFORMS:
        m = ObliqueTreeClassifier(n_splits=2, rules="hyperplane").fit(X0 * scale + offset, y)
        results.append((m.objective_, m.status_, m.stats_["rules"]))
    assert results == [(2.0, "optimal", 360)] * len(TRANSFORMS)


def test_time_limit_covers_rule_generation():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 3)), rng.integers(0, 2, 50)
    ObliqueTreeClassifier(n_splits=1).fit(X[:6], y[:6])  # kernels loaded outside the clock
    start = time.perf_counter()
    m = ObliqueTreeClassifier(n_splits=2, time_limit=0.05).fit(X, y)
    elapsed = time.perf_counter() - start
    assert m.status_ == "time_limit" and m.lower_bound_ == 0.0
    assert elapsed < 0.05 + 1.0, elapsed
    assert m.score(X, y) * 50 == 50 - m.objective_
