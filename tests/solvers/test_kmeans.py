"""The k-means lower bound of regression trees (``solvers/dp/_kmeans.py``): the best partition of
the targets into at most ``k`` groups against brute force, and the threshold-aware search with
the bound on and off against the brute-force optimum."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import optimal_sse
from ordered_cases import features_of, raw_splits

from exactree.solvers.dp._kmeans import kmeans_bound
from exactree.solvers.dp.ordered import OrderedSolver

SEED = st.integers(0, 2**31 - 1)


def best_partition(y, w, k, penalty):
    """min over ``j <= k`` of the least squared error of ``j`` groups plus ``(j - 1) * penalty``,
    trying every partition (not only contiguous ones) of a few targets."""
    n = len(y)
    best = np.inf
    for labels in itertools.product(range(k), repeat=n):
        cost = 0.0
        for g in set(labels):
            idx = [i for i in range(n) if labels[i] == g]
            ww, yy = w[idx], y[idx]
            if ww.sum() > 0:
                cost += ww @ (yy - ww @ yy / ww.sum()) ** 2
        best = min(best, cost + (len(set(labels)) - 1) * penalty)
    return best


def bound(y, w, k, penalty, ub=np.inf):
    order = np.argsort(y, kind="mergesort").astype(np.int32)
    return kmeans_bound(order, len(y), y, w, k, penalty, ub, np.zeros((7, len(y) + 1)),
                        np.zeros((64, 4), np.int64))


@settings(max_examples=150, deadline=None)
@given(SEED)
def test_the_bound_is_the_best_partition(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 8))
    y = rng.integers(0, 4, n) * float(rng.choice([1.0, 0.37, 25.0]))
    w = rng.choice([0.0, 0.5, 1.0, 2.0], n)
    k = int(rng.integers(1, 5))
    penalty = float(rng.choice([0.0, 0.0, 0.1, 2.0]))
    want = best_partition(y, w, k, penalty)
    slack = 1e-8 * (1.0 + w @ y**2)  # the bound's own slack against rounding is 1e-9 of that
    got = bound(y, w, k, penalty)
    assert want - slack <= got <= want
    # The quick look answers 0 only when the bound stays below `ub`.
    assert bound(y, w, k, penalty, ub=want * (1 + 1e-6) + slack) in (0.0, got)
    if want > 2 * slack:
        assert bound(y, w, k, penalty, ub=want - 2 * slack) == got


def _case(seed):
    """Clustered targets on a few columns with many ties: trees cannot reach the k-means
    optimum, which is what lets the bound prune."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 13))
    X = rng.integers(0, 4, (n, 2)).astype(float)
    t = (rng.integers(0, 3, n) * 3 + rng.normal(size=n) * 0.3).round(2)
    w = None if rng.random() < 0.6 else rng.integers(1, 3, n).astype(float)
    return rng, X, t, w


@settings(max_examples=40, deadline=None)
@given(SEED)
def test_the_search_with_the_bound_finds_the_optimum(seed):
    rng, X, t, w = _case(seed)
    depth = int(rng.integers(1, 4))
    budget = int(rng.integers(0, 1 << depth))
    feats, _ = features_of(X)
    ww = np.ones(len(t)) if w is None else w
    sse0 = float(ww @ (t - ww @ t / ww.sum()) ** 2)
    alpha = float(rng.choice([0.0, 0.02, 0.1]))
    B = raw_splits(X)
    want = min(optimal_sse(B, t, depth, w, max_nodes=b) + alpha * sse0 * b
               for b in range(budget + 1))
    for on in (True, False):
        sol = OrderedSolver(feats, None, 1, sample_weight=w, max_depth=depth, target=t,
                            split_cost=alpha * sse0,
                            techniques={"kmeans_bound": on}).solve(max_nodes=budget)
        assert sol.optimal
        assert sol.cost == pytest.approx(want, abs=1e-8 * max(1.0, sse0))


def test_the_bound_prunes():
    """On clustered targets with a price per split the bound ends frames the search would
    otherwise evaluate splits in; the optimum is the same."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 6, (46, 3)).astype(float)
    t = (rng.integers(0, 4, 46) * 3 + rng.normal(size=46) * 0.3).round(2)
    feats, _ = features_of(X)
    price = 0.1 * float(((t - t.mean()) ** 2).sum())
    runs = {}
    for on in (True, False):
        sol = OrderedSolver(feats, None, 1, max_depth=3, target=t, split_cost=price,
                            techniques={"kmeans_bound": on}).solve()
        runs[on] = sol.cost, sol.stats["split_evaluations"]
    assert runs[True][0] == pytest.approx(runs[False][0], abs=1e-9)
    assert runs[True][1] < runs[False][1]
