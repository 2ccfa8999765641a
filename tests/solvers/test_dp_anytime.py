"""The binary DP's anytime side: size-minimal optima, bounds and trees of truncated searches,
the memory limit (issue #13)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import optimal_cost, optimal_cost_and_splits

from exactree.solvers.dp.solver import DPSolver


def _data(seed: int, n: int, m: int, k: int = 2, weighted: bool = False):
    rng = np.random.default_rng(seed)
    X = rng.random((n, m)) < rng.uniform(0.2, 0.8)
    y = rng.integers(0, k, n)
    w = rng.integers(1, 4, n).astype(float) if weighted else None
    return X, y, w


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(4, 14), m=st.integers(1, 4),
       depth=st.integers(1, 3), k=st.integers(2, 3), weighted=st.booleans(),
       max_nodes=st.one_of(st.none(), st.integers(0, 7)))
def test_optimum_has_the_fewest_splits(seed, n, m, depth, k, weighted, max_nodes):
    X, y, w = _data(seed, n, m, k, weighted)
    cost, splits = optimal_cost_and_splits(X, y, k, depth, max_nodes, w)
    sol = DPSolver(X, y, k, sample_weight=w, max_depth=depth).solve(max_nodes)
    assert sol.optimal
    assert sol.cost == pytest.approx(cost)
    assert sol.tree.n_splits == splits
    assert sol.lower_bound == pytest.approx(cost)


def test_a_deep_perfect_tree_ends_the_search():
    """From depth 4 a tree without errors is final (see _lexicographic)."""
    X, y, _ = _data(2, 40, 12)
    y = X[:, 0] ^ X[:, 1]  # depth 2 fits it exactly
    sol = DPSolver(X, y, 2, max_depth=5).solve(time_limit=60)
    assert sol.optimal and sol.cost == 0 and sol.lower_bound == 0


@pytest.mark.parametrize("seed", [0, 6, 19, 23, 33, 34])
def test_perfect_is_final_off_is_size_minimal_at_depth_four(seed):
    """With the technique perfect_is_final off, a perfect tree of depth 4 has the fewest
    splits too (these cases: on, the first perfect tree found, with more, ends the search)."""
    X, y, _ = _data(seed, 14, 6)
    cost, splits = optimal_cost_and_splits(X, y, 2, 4)
    first = DPSolver(X, y, 2, max_depth=4).solve()
    assert cost == first.cost == 0 and first.tree.n_splits > splits
    for time_limit in (None, 60):
        sol = DPSolver(X, y, 2, max_depth=4, techniques={"perfect_is_final": False}).solve(
            time_limit=time_limit)
        assert sol.optimal and (sol.cost, sol.tree.n_splits) == (cost, splits)


def test_issue_example_needs_three_splits():
    X = np.array([[0, 0, 0], [0, 0, 0], [1, 1, 1], [0, 0, 1], [1, 1, 0], [1, 0, 0]], bool)
    y = np.array([1, 1, 0, 0, 1, 0])
    sol = DPSolver(X, y, 2, max_depth=3).solve()
    assert (sol.cost, sol.tree.n_splits) == (0, 3)
    first_found = DPSolver(X, y, 2, max_depth=3, techniques={"minimal_size": False}).solve()
    assert first_found.cost == 0  # the switch changes only which optimal tree comes back


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(20, 60), m=st.integers(3, 7),
       depth=st.integers(3, 4), limit_kib=st.integers(0, 400))
def test_memory_limited_search_is_valid(seed, n, m, depth, limit_kib):
    """A small byte limit stops the search at a point that depends only on the data: the tree
    returned is what the solution says, its bound is below the optimum."""
    X, y, _ = _data(seed, n, m)
    opt = optimal_cost(X, y, 2, depth)
    solver = DPSolver(X, y, 2, max_depth=depth, memory_limit=64 * 1024 + 1024 * limit_kib)
    sol = solver.solve()
    assert sol.tree.cost == sol.cost >= opt
    assert sol.lower_bound <= opt + 1e-9
    if sol.optimal:
        assert sol.cost == opt and sol.limit is None
    else:
        assert sol.limit == "memory_limit" and solver.cache.full


def test_memory_limit_is_honoured():
    X, y, _ = _data(7, 400, 40)
    full = DPSolver(X, y, 2, max_depth=4).solve()
    limit = DPSolver(X, y, 2, max_depth=4).fixed_bytes + 2**18
    solver = DPSolver(X, y, 2, max_depth=4, memory_limit=limit)
    sol = solver.solve()
    assert sol.limit == "memory_limit" and not sol.optimal
    assert solver.fixed_bytes + solver.cache.nbytes <= 1.1 * limit
    assert sol.lower_bound <= full.cost <= sol.cost


@pytest.mark.parametrize("time_limit", [1e-6, 1e-4, 1e-3, 1e-2])
def test_truncated_search_is_valid(time_limit):
    X, y, _ = _data(3, 300, 30)
    exact = DPSolver(X, y, 2, max_depth=4).solve()
    sol = DPSolver(X, y, 2, max_depth=4).solve(time_limit=time_limit)
    assert sol.tree.cost == sol.cost >= exact.cost
    assert sol.lower_bound <= exact.cost
    if not sol.optimal:
        assert sol.limit == "time_limit"


def test_anytime_search_finds_the_size_minimal_optimum():
    """With a time limit the search first looks at narrow spaces (widening) and proves the
    best tree found there optimal: same answer as without."""
    X, y, _ = _data(11, 200, 25)
    exact = DPSolver(X, y, 2, max_depth=4).solve()
    timed = DPSolver(X, y, 2, max_depth=4).solve(time_limit=60)
    assert timed.optimal and timed.limit is None
    assert (timed.cost, timed.tree.n_splits) == (exact.cost, exact.tree.n_splits)


def test_snapshot_incumbents_are_valid():
    """Cut short inside a root configuration (memory limits stop deterministically), the
    frames' combined incumbent is a valid tree of the cost reported, never worse than the
    optimal depth-2 tree; some of these stops return a tree combined along the stack."""
    combined = 0
    for seed in range(5, 12):
        X, y, _ = _data(seed, 600, 60)
        depth2 = DPSolver(X, y, 2, max_depth=2).solve()
        for extra in (2**17, 2**18):
            solver = DPSolver(X, y, 2, max_depth=4,
                              memory_limit=DPSolver(X, y, 2, max_depth=4).fixed_bytes + extra)
            sol = solver.solve()
            assert sol.limit == "memory_limit"
            assert sol.tree.cost == sol.cost <= depth2.cost
            combined += solver._snap[0, 0] > 0
    assert combined


def test_upper_bound_below_the_optimum_gives_none_under_a_time_limit():
    """With a time limit the search runs in slices (a short exact slice, narrow searches, the
    exact search again); a tree that one slice leaves behind at or above ``upper_bound`` is not
    an answer: a finished search that found nothing below the bound returns None."""
    for seed, n, m in ((3, 400, 40), (1, 200, 30)):  # each left such a tree before the fix
        X, y, _ = _data(seed, n, m)
        exact = DPSolver(X, y, 2, max_depth=4).solve()
        for bound in (exact.cost / 3, exact.cost / 2, exact.cost):
            assert DPSolver(X, y, 2, max_depth=4).solve(upper_bound=bound, time_limit=120) is None
        above = DPSolver(X, y, 2, max_depth=4).solve(upper_bound=exact.cost + 1, time_limit=120)
        assert above.optimal and above.cost == exact.cost
