"""Anytime fits users can rely on (issue 13, the estimators' side): ``time_limit`` over the whole
fit, the single-leaf answer when it runs out before any search, ``memory_limit``, and the
penalised path that goes on past a budget cut short, with an honest lower bound."""

from __future__ import annotations

import time

import numpy as np
import pytest
from oracles import optimal_cost, optimal_penalised

import exactree.estimators.optimal as optimal_module
from exactree import OptimalTreeClassifier, OptimalTreeRegressor
from exactree.data import Binarizer
from exactree.data.encoding import FeatureEncoder
from exactree.data.ordered import mean_splits_bound, ordered_features
from exactree.data.validation import TimeLimitReached
from exactree.estimators._params import InvalidParameterError
from exactree.estimators.base import available_memory, memory_limit_bytes

TINY = 1e-9  # seconds: gone before the first look at the clock


def _misclassified(model, X, y, w=None):
    w = np.ones(len(y)) if w is None else w
    return float(w[model.predict(X) != y].sum())


def _random_binary(seed, n=40, m=6, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.random((n, m)) < 0.5
    y = (X[:, 0] ^ X[:, 1] ^ (rng.random(n) < 0.2)).astype(np.int64)
    if classes > 2:
        y = np.where(rng.random(n) < 0.2, rng.integers(0, classes, n), y)
    return X, y


# ---------------------------------------------------------------- time_limit over the whole fit
def test_time_limit_is_honoured_on_a_hard_problem(binary_data):
    X, y = binary_data("splice-1")
    OptimalTreeClassifier(max_depth=2).fit(X[::10], y[::10])  # kernels compiled and loaded
    start = time.perf_counter()
    model = OptimalTreeClassifier(max_depth=5, time_limit=0.5).fit(X, y)
    wall = time.perf_counter() - start
    assert wall < 0.5 + 1.5, wall
    assert model.status_ == "time_limit"
    assert 0 <= model.lower_bound_ <= model.objective_
    assert _misclassified(model, X, y) == model.objective_


def test_regressor_time_limit_is_honoured():
    rng = np.random.default_rng(3)
    X = rng.random((20000, 8))
    y = np.sin(4 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=len(X))
    OptimalTreeRegressor(max_depth=2).fit(X[:300], y[:300])  # kernels compiled and loaded
    start = time.perf_counter()
    model = OptimalTreeRegressor(max_depth=4, time_limit=0.3).fit(X, y)
    wall = time.perf_counter() - start
    assert wall < 0.3 + 1.5, wall
    assert model.status_ in ("time_limit", "optimal")
    assert 0 <= model.lower_bound_ <= model.objective_
    assert np.isclose(((y - model.predict(X)) ** 2).sum(), model.objective_)


def test_a_limit_gone_before_any_search_gives_the_majority_leaf():
    X, y = _random_binary(0, n=60, classes=3)
    w = np.random.default_rng(1).random(len(y)) + 0.1
    model = OptimalTreeClassifier(max_depth=3, time_limit=TINY).fit(X, y, sample_weight=w)
    counts = np.bincount(y, weights=w)
    assert model.status_ == "time_limit" and model.search_ is None
    assert model.tree_.n_leaves == 1 and model.tree_.n_splits == 0
    assert model.lower_bound_ == 0 and model.objective_ == pytest.approx(counts.sum() - counts.max())
    assert (model.predict(X) == np.argmax(counts)).all()
    assert np.allclose(model.predict_proba(X), counts / counts.sum())
    assert model.gap_ == 1.0
    assert "class" in model.export_text()
    # Penalised: the leaf's objective is its error rate (no split to pay for).
    model = OptimalTreeClassifier(max_depth=3, cost_complexity=0.01, time_limit=TINY).fit(
        X, y, sample_weight=w)
    assert model.objective_ == pytest.approx(1 - counts.max() / counts.sum())
    assert model.lower_bound_ == 0 and model.status_ == "time_limit"


def test_a_limit_gone_before_any_search_on_the_path_and_the_regressor():
    X, y = _random_binary(2)
    path = OptimalTreeClassifier(max_depth=3, time_limit=TINY).fit_path(X, y)
    counts = np.bincount(y)
    assert len(path) == 1 and path[0].max_nodes == 0 and path[0].optimal
    assert path[0].objective == counts.sum() - counts.max()
    rng = np.random.default_rng(4)
    Xr, yr = rng.random((50, 3)), rng.normal(size=50)
    w = rng.random(50) + 0.5
    reg = OptimalTreeRegressor(max_depth=3, time_limit=TINY).fit(Xr, yr, sample_weight=w)
    mean = float(w @ yr / w.sum())
    assert reg.status_ == "time_limit" and reg.tree_.n_leaves == 1 and reg.lower_bound_ == 0
    assert np.allclose(reg.predict(Xr), mean)
    assert reg.objective_ == pytest.approx(float(w @ (yr - mean) ** 2))


def test_the_clock_starts_when_fit_is_entered(monkeypatch):
    """Time spent before the search (here a slow encoding) counts against time_limit."""
    X, y = _random_binary(5)
    slow = FeatureEncoder.fit_transform

    def fit_transform(self, X):
        time.sleep(0.2)
        return slow(self, X)

    monkeypatch.setattr(FeatureEncoder, "fit_transform", fit_transform)
    model = OptimalTreeClassifier(max_depth=2, time_limit=0.1).fit(X, y)
    assert model.status_ == "time_limit" and model.tree_.n_splits == 0


def test_the_data_layer_looks_at_the_clock(monkeypatch):
    import exactree.data.binarize as binarize

    monkeypatch.setattr(binarize, "DEADLINE_CELLS", 64)  # many small blocks
    rng = np.random.default_rng(6)
    X = rng.random((40, 12))
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:, 3] = rng.integers(0, 4, 40)  # categorical, between numeric columns
    X[:, 7] = np.round(X[:, 7] * 3)
    X[:, 7][np.isnan(X[:, 7])] = 0
    encoder = FeatureEncoder(categorical=[3], allow_nan=True)
    E = encoder.fit_transform(X)
    y = rng.integers(0, 2, 40)
    plain = Binarizer().fit(E, y, encoder.columns_, keep_ranks=True)
    later = time.perf_counter() + 60
    blocked = Binarizer().fit(E, y, encoder.columns_, keep_ranks=True, deadline=later)
    assert np.array_equal(plain.value_, blocked.value_)
    assert np.array_equal(plain.column_, blocked.column_)
    assert plain.ranks.keys() == blocked.ranks.keys()
    assert all(np.array_equal(plain.ranks[j], blocked.ranks[j]) for j in plain.ranks)
    assert np.array_equal(plain.transform(E), blocked.transform(E, deadline=later))
    a, b = ordered_features(plain, E), ordered_features(blocked, E, later)
    assert np.array_equal(a.bucket, b.bucket)
    assert mean_splits_bound(plain, E) == mean_splits_bound(plain, E, later)
    gone = time.perf_counter() - 1
    for call in (lambda: Binarizer().fit(E, y, encoder.columns_, deadline=gone),
                 lambda: plain.transform(E, deadline=gone),
                 lambda: ordered_features(plain, E, gone),
                 lambda: mean_splits_bound(plain, E, gone)):
        with pytest.raises(TimeLimitReached):
            call()


# ---------------------------------------------------------------- the penalised path
def _cut_budgets(monkeypatch, cut, always=True):
    """Make the searches of the node budgets in ``cut`` stop at once (every time, or only the
    first time each is searched)."""
    real = optimal_module.solve_dp
    seen = set()

    def solve_dp(solver, n_jobs, **args):
        b = args.get("max_nodes")
        if b in cut and (always or b not in seen):
            seen.add(b)
            args["time_limit"] = TINY
        return real(solver, n_jobs, **args)

    monkeypatch.setattr(optimal_module, "solve_dp", solve_dp)


@pytest.mark.parametrize("seed", range(6))
def test_a_truncated_penalised_path_keeps_an_honest_bound(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    X, y = _random_binary(seed, n=36, m=5, classes=2 + seed % 2)
    K = len(np.unique(y))
    w = None if seed % 3 else rng.random(len(y)) + 0.2
    alpha = (0.005, 0.02, 0.05)[seed % 3]
    truth = optimal_penalised(X, y, K, alpha, depth=3, weights=w)
    exact = OptimalTreeClassifier(max_depth=3, cost_complexity=alpha).fit(X, y, sample_weight=w)
    assert exact.status_ == "optimal" and exact.objective_ == pytest.approx(truth)
    cut = {int(b) for b in rng.choice(8, size=int(rng.integers(1, 4)), replace=False)}
    _cut_budgets(monkeypatch, cut)
    model = OptimalTreeClassifier(max_depth=3, cost_complexity=alpha).fit(X, y, sample_weight=w)
    weights = np.ones(len(y)) if w is None else w
    realised = _misclassified(model, X, y, weights) / weights.sum() + alpha * model.tree_.n_splits
    assert model.objective_ == pytest.approx(realised)
    assert model.lower_bound_ <= truth + 1e-12 <= model.objective_ + 2e-12, cut
    if model.status_ == "optimal":
        assert model.objective_ == pytest.approx(truth)
    else:
        assert model.status_ == "time_limit"


def test_a_budget_cut_short_once_is_settled_later(monkeypatch):
    """The path goes on past a budget cut short; the round after it settles that budget."""
    X, y = _random_binary(11, n=40, m=6, classes=3)
    truth = optimal_penalised(X, y, 3, 0.01, depth=3)
    _cut_budgets(monkeypatch, {1, 2, 3}, always=False)
    model = OptimalTreeClassifier(max_depth=3, cost_complexity=0.01).fit(X, y)
    assert model.status_ == "optimal"
    assert model.objective_ == pytest.approx(truth) and model.lower_bound_ == model.objective_


def test_fit_path_goes_on_past_a_budget_cut_short(monkeypatch):
    X, y = _random_binary(7, n=40, m=6, classes=3)
    exact = OptimalTreeClassifier(max_depth=3).fit_path(X, y)
    _cut_budgets(monkeypatch, {2, 4})
    model = OptimalTreeClassifier(max_depth=3)
    path = model.fit_path(X, y)
    assert [p.max_nodes for p in path] == list(range(8))
    for point, best in zip(path, exact):
        assert point.lower_bound <= best.objective + 1e-9 <= point.objective + 2e-9
        assert _misclassified_tree(point.tree, X, y) == point.objective
        if point.optimal:
            assert point.objective == best.objective and point.lower_bound == point.objective
    assert all(a.objective >= b.objective for a, b in zip(path, path[1:]))
    assert model.objective_ == path[-1].objective
    assert model.lower_bound_ <= optimal_cost(X, y, 3, 3) <= model.objective_


def _misclassified_tree(tree, X, y):
    from exactree.tree.compiled import predict_leaves

    leaves = predict_leaves(tree, np.asarray(X, float), method="traversal")
    return float((tree.label[leaves] != y).sum())


def test_wine_penalised_path_reaches_the_depth_two_optimum_in_time():
    """Issue 13's example: at depth 3, alpha = 0.01, a budget cut short once ended the path at
    0.1043 where the depth-2 optimum, 0.0637, takes a fraction of a second."""
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    depth2 = OptimalTreeClassifier(max_depth=2, cost_complexity=0.01).fit(X, y)  # also warms up
    assert depth2.status_ == "optimal" and depth2.objective_ == pytest.approx(0.0637, abs=1e-4)
    start = time.perf_counter()
    model = OptimalTreeClassifier(max_depth=3, cost_complexity=0.01, time_limit=1.0).fit(X, y)
    wall = time.perf_counter() - start
    assert wall < 1.0 + 1.5, wall
    assert model.objective_ <= depth2.objective_ + 1e-12
    assert 0 <= model.lower_bound_ <= model.objective_
    realised = _misclassified(model, X, y) / len(y) + 0.01 * model.tree_.n_splits
    assert model.objective_ == pytest.approx(realised)


# ---------------------------------------------------------------- memory_limit
# (time_limit only as a backstop: a search held to memory_limit stops long before it)
def test_memory_limit_stops_the_binary_search_with_a_valid_bound(binary_data, optima):
    X, y = binary_data("splice-1")
    # 4 MiB beyond the input hold the binary matrix's set-up (3 MiB, checked before it is
    # built; 1 MiB is refused with a MemoryLimitError) but no branch cache beside the input.
    with pytest.raises(MemoryError, match="memory_limit of at least 3"):
        OptimalTreeClassifier(max_depth=4, memory_limit=1, search="binary").fit(X, y)
    model = OptimalTreeClassifier(max_depth=4, memory_limit=4, search="binary",
                                  time_limit=5).fit(X, y)
    assert model.status_ == "memory_limit"
    assert 0 <= model.lower_bound_ <= model.objective_
    assert _misclassified(model, X, y) == model.objective_
    if ("splice-1", 4) in optima:
        assert model.lower_bound_ <= optima[("splice-1", 4)] <= model.objective_


def test_memory_limit_on_the_penalised_path(binary_data):
    X, y = binary_data("splice-1")
    model = OptimalTreeClassifier(max_depth=4, cost_complexity=0.001, memory_limit=1,
                                  time_limit=5).fit(X, y)
    assert model.status_ == "memory_limit"
    assert 0 <= model.lower_bound_ <= model.objective_
    realised = _misclassified(model, X, y) / len(y) + 0.001 * model.tree_.n_splits
    assert model.objective_ == pytest.approx(realised)


def test_memory_limit_of_the_ordered_searches():
    rng = np.random.default_rng(8)
    X = rng.random((4000, 6))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0.8).astype(int)
    model = OptimalTreeClassifier(max_depth=4, memory_limit=0.05, search="ordered",
                                  time_limit=5).fit(X, y)
    assert model.status_ == "memory_limit"
    assert 0 <= model.lower_bound_ <= model.objective_ == _misclassified(model, X, y)
    target = X[:, 0] + X[:, 1] * X[:, 2]
    reg = OptimalTreeRegressor(max_depth=4, memory_limit=0.05, time_limit=5).fit(X, target)
    assert reg.status_ == "memory_limit"
    assert 0 <= reg.lower_bound_ <= reg.objective_
    assert np.isclose(((target - reg.predict(X)) ** 2).sum(), reg.objective_)


def test_default_memory_limit_and_parameters():
    assert available_memory() > 0
    assert memory_limit_bytes(None) == pytest.approx(0.5 * available_memory(), rel=0.2)
    assert memory_limit_bytes(3) == 3 * 2**20
    # What the fit holds beside the search (encoded data, binarizer, ...) counts.
    one_mib = np.zeros(2**17)
    assert OptimalTreeClassifier(memory_limit=3)._memory_bytes(one_mib) == 2 * 2**20
    assert OptimalTreeClassifier(memory_limit=0.5)._memory_bytes(one_mib) == 0
    # A parallel fit's workers (depth 3 or more) each get an equal share.
    assert OptimalTreeClassifier(n_jobs=2, memory_limit=100)._memory_bytes() == 50 * 2**20
    assert OptimalTreeRegressor(max_depth=2, n_jobs=2, memory_limit=100)._memory_bytes() == \
        100 * 2**20
    X, y = _random_binary(9)
    for model in (OptimalTreeClassifier(max_depth=3), OptimalTreeClassifier(max_depth=3,
                                                                            cache_limit=10)):
        assert model.memory_limit is None
        assert model.fit(X, y).status_ == "optimal"
        assert model.objective_ == optimal_cost(X, y, 2, 3)
    assert OptimalTreeClassifier().cache_limit is None
    for bad in ({"memory_limit": 0}, {"memory_limit": -1.0}, {"cache_limit": 0}):
        with pytest.raises(InvalidParameterError):
            OptimalTreeClassifier(**bad).fit(X, y)
    with pytest.raises(InvalidParameterError):
        OptimalTreeRegressor(memory_limit=0).fit(X.astype(float), y.astype(float))
