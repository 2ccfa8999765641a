"""One fit over several workers (``n_jobs``): the same objective, bound and status as a serial
fit, the same tree whatever the timing, on joblib's process and thread backends and on a Dask
cluster."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from joblib import parallel_config

from exactree import OptimalTreeClassifier, OptimalTreeRegressor
from exactree.solvers.dp import parallel as parallel_module
from exactree.solvers.dp.solver import DPSolver


def _binary_problem(seed: int, n: int = 60, m: int = 7, k: int = 2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, m))
    y = (X[:, 0] ^ X[:, 1] ^ (rng.random(n) < 0.25)).astype(int) + (k > 2) * (X[:, 2] & X[:, 3])
    return X, y


def _numeric_problem(seed: int, n: int = 80, m: int = 3):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, m)), 1)  # ties between rows
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0.5) ^ (rng.random(n) < 0.2)).astype(int)
    return X, y


def _fit(X, y, n_jobs, **params):
    return OptimalTreeClassifier(n_jobs=n_jobs, **params).fit(X, y)


def _same_fit(serial, par):
    assert par.status_ == serial.status_
    assert par.objective_ == pytest.approx(serial.objective_)
    assert par.lower_bound_ == pytest.approx(serial.lower_bound_)
    assert par.tree_.n_splits == serial.tree_.n_splits  # size-minimal optima have one size


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("search", ["binary", "ordered"])
def test_parallel_fit_matches_serial(seed, search):
    X, y = _binary_problem(seed) if search == "binary" else _numeric_problem(seed)
    serial = _fit(X, y, None, max_depth=3, search=search)
    par = _fit(X, y, 2, max_depth=3, search=search)
    assert par.search_ == search and par.parallel_ is not None and serial.parallel_ is None
    _same_fit(serial, par)
    # The tree's own training errors are the objective, and a second run returns it again.
    assert np.sum(par.predict(X) != y) == par.objective_
    again = _fit(X, y, 2, max_depth=3, search=search)
    assert again.export_text() == par.export_text()


@pytest.mark.parametrize("backend", ["threading", "loky"])
def test_backends_agree(backend):
    X, y = _numeric_problem(7, n=120)
    serial = _fit(X, y, 1, max_depth=3)
    with parallel_config(backend=backend):
        par = _fit(X, y, 2, max_depth=3)
    assert par.objective_ == serial.objective_ and par.status_ == "optimal"
    assert len(par.parallel_.tasks) >= 2


def test_weights_multiclass_min_leaf_and_budgets():
    X, y = _binary_problem(3, n=90, m=8, k=3)
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    for params in ({"min_samples_leaf": 3}, {"max_nodes": 4, "search": "binary"},
                   {"cost_complexity": 0.02, "search": "binary"}):
        serial = OptimalTreeClassifier(max_depth=3, **params).fit(X, y, sample_weight=w)
        par = OptimalTreeClassifier(max_depth=3, n_jobs=2, **params).fit(X, y, sample_weight=w)
        assert par.objective_ == pytest.approx(serial.objective_), params
        assert par.status_ == serial.status_ == "optimal"
        if "cost_complexity" not in params:
            assert par.tree_.n_splits == serial.tree_.n_splits, params


def test_fit_path_matches_serial():
    X, y = _binary_problem(5, n=70)
    serial = OptimalTreeClassifier(max_depth=3).fit_path(X, y)
    par = OptimalTreeClassifier(max_depth=3, n_jobs=2).fit_path(X, y)
    assert [p.objective for p in par] == [p.objective for p in serial]
    assert all(p.optimal for p in par)


def test_regressor_parallel_matches_serial():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(70, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=70)
    serial = OptimalTreeRegressor(max_depth=3).fit(X, y)
    par = OptimalTreeRegressor(max_depth=3, n_jobs=2).fit(X, y)
    assert par.objective_ == pytest.approx(serial.objective_, rel=1e-9)
    assert par.status_ == "optimal" and par.parallel_ is not None
    # Sparse regression: the ordered search with a price per split, over workers too.
    serial = OptimalTreeRegressor(max_depth=3, cost_complexity=0.02).fit(X, y)
    par = OptimalTreeRegressor(max_depth=3, cost_complexity=0.02, n_jobs=2).fit(X, y)
    assert par.objective_ == pytest.approx(serial.objective_, rel=1e-9)
    assert par.status_ == "optimal" and par.parallel_ is not None


def test_ordered_cost_complexity_matches_serial():
    X, y = _numeric_problem(4)
    serial = OptimalTreeClassifier(max_depth=3, cost_complexity=0.01).fit(X, y)
    par = OptimalTreeClassifier(max_depth=3, cost_complexity=0.01, n_jobs=2).fit(X, y)
    assert serial.search_ == par.search_ == "ordered"
    assert par.objective_ == pytest.approx(serial.objective_, abs=1e-12)
    assert par.status_ == serial.status_ == "optimal" and par.parallel_ is not None


def test_shallow_fits_stay_serial():
    X, y = _numeric_problem(2)
    assert _fit(X, y, 2, max_depth=2).parallel_ is None


def test_time_limit_across_workers_is_honest():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 8))
    y = (X[:, :4].sum(axis=1) + rng.normal(size=3000) > 0).astype(int)
    start = time.perf_counter()
    model = _fit(X, y, 2, max_depth=4, time_limit=1.0)
    elapsed = time.perf_counter() - start
    assert model.status_ == "time_limit"
    assert 0 <= model.lower_bound_ <= model.objective_
    assert np.sum(model.predict(X) != y) == model.objective_
    assert elapsed < 30  # loose: worker start-up and kernel loading on a busy machine


def test_worker_failure_is_an_error(monkeypatch):
    def broken(self, *args, roots=None, **kwargs):
        if roots is not None:
            raise RuntimeError("worker failed")
        return original(self, *args, **kwargs)

    original = DPSolver.solve
    monkeypatch.setattr(DPSolver, "solve", broken)
    X, y = _binary_problem(1)
    with parallel_config(backend="threading"), pytest.raises(RuntimeError, match="worker failed"):
        _fit(X, y, 2, max_depth=3, search="binary")


def test_task_bounds_are_shared(monkeypatch):
    """Later tasks start from the best objective an earlier task found (sequential run)."""
    seen = []
    original = parallel_module._run_task

    def spy(*args):
        out = original(*args)
        seen.append(out)
        return out

    X, y = _numeric_problem(4, n=150)
    serial = _fit(X, y, None, max_depth=3)
    monkeypatch.setattr(parallel_module, "_run_task", spy)
    monkeypatch.setattr(parallel_module, "n_workers", lambda n_jobs: 2)
    from exactree.solvers.dp.ordered import OrderedSolver

    monkeypatch.setattr(OrderedSolver, "tasks_per_worker", 1)  # a task per feature
    model = _fit(X, y, 1, max_depth=3)  # joblib runs the tasks one after another here
    assert model.objective_ == serial.objective_
    # One after another, whole features in the root's order, sharing the best objective: the
    # tasks do the serial search's work exactly.
    work = sum(t.work["split_evaluations"] for t in model.parallel_.tasks)
    assert work == serial.stats_["split_evaluations"]
    assert len(seen) == len(model.parallel_.tasks) >= 2
    # Every task proved its share no better than the optimum, most of them by the bound alone.
    assert all(lower >= model.objective_ - 1e-9 for _, _, lower, *_ in seen)


def test_dask_cluster():
    distributed = pytest.importorskip("distributed")
    X, y = _numeric_problem(9, n=100)
    serial = _fit(X, y, 1, max_depth=3)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster), parallel_config(backend="dask"):
        par = _fit(X, y, 2, max_depth=3)
    assert par.objective_ == serial.objective_ and par.status_ == "optimal"
    assert par.export_text() == _fit(X, y, 2, max_depth=3).export_text()


def test_grid_search_over_cost_complexity_in_parallel():
    """scikit-learn's own n_jobs (cross-validation, grids) runs exactree fits in its workers."""
    from sklearn.model_selection import GridSearchCV

    X, y = _binary_problem(6, n=80)
    grid = {"cost_complexity": [0.0, 0.01, 0.05]}
    one = GridSearchCV(OptimalTreeClassifier(max_depth=3), grid, cv=3).fit(X, y)
    two = GridSearchCV(OptimalTreeClassifier(max_depth=3, n_jobs=2), grid, cv=3,
                       n_jobs=2).fit(X, y)
    assert one.best_params_ == two.best_params_
    assert np.allclose(one.cv_results_["mean_test_score"], two.cv_results_["mean_test_score"])


def test_plan_keeps_to_a_share_of_the_time_limit(monkeypatch):
    # The ordered search's first incumbent (a depth-2 search over every threshold) is bounded
    # by part of the fit's time limit, so that big data cannot overrun it before the tasks.
    from exactree.solvers.dp.ordered import OrderedSolver

    seen = []
    original = OrderedSolver.plan_parallel

    def plan(self, n_tasks, time_limit=None, **kw):
        seen.append(time_limit)
        return original(self, n_tasks, time_limit=time_limit, **kw)

    monkeypatch.setattr(OrderedSolver, "plan_parallel", plan)
    X, y = _numeric_problem(3)
    model = _fit(X, y, 2, max_depth=3, time_limit=20.0, search="ordered")
    assert model.status_ == "optimal"
    share = parallel_module.PLAN_SHARE * 20.0  # of the time left when the parallel search starts
    assert len(seen) == 1 and 0.9 * share < seen[0] <= share


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("kind", ["weights", "regression", "cost_complexity"])
def test_a_known_optimum_stops_the_re_solve_at_an_optimal_tree(seed, kind):
    """``stop_at`` (the optimum a parallel fit found) ends a share's search at its first
    optimal tree: the same objective and, where size breaks ties, the same number of splits as
    the whole search of the share (fractional weights: a split more is within the tolerance of
    the cost, and must still not count as a tie)."""
    from exactree.solvers.dp.ordered import OrderedSolver
    from exactree.solvers.dp.parallel import _rank

    rng = np.random.default_rng(seed)
    X, y = _numeric_problem(seed, n=60)
    model = (OptimalTreeRegressor(max_depth=3) if kind == "regression" else
             OptimalTreeClassifier(max_depth=3, search="ordered",
                                   cost_complexity=0.02 if kind == "cost_complexity" else 0.0))
    target = X[:, 0] + (X[:, 1] > 0) + 0.3 * rng.normal(size=len(y)) if kind == "regression" else y
    w = rng.integers(1, 4, len(y)).astype(float) if kind == "weights" else None
    seen = []
    original = OrderedSolver.solve

    def spy(self, **kwargs):
        seen.append(self)
        return original(self, **kwargs)

    OrderedSolver.solve = spy
    try:
        model.fit(X, target, sample_weight=w)
    finally:
        OrderedSolver.solve = original
    solver = seen[0]
    tasks, _ = solver.plan_parallel(4)
    for roots in tasks:
        whole = solver.solve(roots=roots)
        if whole is None:
            continue
        best = _rank(solver, whole)
        stopped = solver.solve(roots=roots, upper_bound=best + 2 * solver.tolerance,
                               stop_at=best)
        assert stopped.optimal and _rank(solver, stopped) == pytest.approx(best, abs=1e-9)
        assert stopped.cost == pytest.approx(whole.cost, abs=1e-9)
        if kind != "cost_complexity":
            assert stopped.tree.n_splits == whole.tree.n_splits


@pytest.mark.parametrize("search, seed", [("binary", 2), ("ordered", 0)])
def test_winner_is_settled_in_a_worker(search, seed, monkeypatch):
    """A winner after the first task is re-solved by a worker (the last task to end at the
    latest), not by the fitting thread after the tasks; the tree is the one the fitting thread
    would find."""
    calls = []
    original = parallel_module._resolve

    def spy(*args, **kwargs):
        calls.append(threading.current_thread() is threading.main_thread())
        return original(*args, **kwargs)

    monkeypatch.setattr(parallel_module, "_resolve", spy)
    X, y = _numeric_problem(seed, n=150) if search == "ordered" else _binary_problem(seed, n=150)
    with parallel_config(backend="threading"):
        par = _fit(X, y, 2, max_depth=3, search=search)
    assert par.status_ == "optimal" and par.parallel_.winner > 0
    assert calls and not any(calls)  # only workers re-solved
    assert sum(t.settle_seconds for t in par.parallel_.tasks) > 0
    serial_resolve = []
    monkeypatch.setattr(parallel_module, "_settle", lambda *a: serial_resolve.append(1))
    with parallel_config(backend="threading"):
        again = _fit(X, y, 2, max_depth=3, search=search)
    assert serial_resolve and calls[-1]  # now the fitting thread re-solved
    assert again.export_text() == par.export_text()


def test_a_task_is_not_bounded_by_its_own_tree():
    from exactree.progress import BOUND

    shared = parallel_module._SharedBoards.create(4, np.inf, 2.0)
    try:
        shared.publish(2, 10.0, 0.5, 2.0)  # earlier tasks may tie it, later ones must beat it
        # (The first task is bounded by no other: see test_first_task_wins_without_a_re_solve.)
        assert shared.tasks[:, BOUND].tolist() == [np.inf, 5.25, np.inf, 5.0]
        assert shared.array[0, BOUND] == 10.0
        shared.publish(0, 8.0, 0.5, 2.0)
        assert shared.tasks[:, BOUND].tolist() == [np.inf, 4.0, 4.0, 4.0]
    finally:
        shared.close(remove=True)


@pytest.mark.parametrize("search", ["binary", "ordered"])
def test_incumbents_pass_between_running_tasks(search, monkeypatch):
    """Looked at every millisecond, running tasks' incumbents reach the others mid-run; the
    fit still proves the serial optimum (a task bounded by its own incumbent would report
    nothing, and the fit would claim a worse tree optimal)."""
    monkeypatch.setattr(parallel_module, "MONITOR_INTERVAL", 0.001)
    passed = []
    original = parallel_module._SharedBoards.publish

    def spy(self, *args):
        passed.append(threading.current_thread().name == "exactree-parallel")
        return original(self, *args)

    monkeypatch.setattr(parallel_module._SharedBoards, "publish", spy)
    if search == "binary":
        X, y = _binary_problem(12, n=1500, m=18, k=3)
    else:
        X, y = _numeric_problem(12, n=600, m=4)
    serial = _fit(X, y, None, max_depth=4, search=search)
    with parallel_config(backend="threading"):
        par = _fit(X, y, 2, max_depth=4, search=search)
    _same_fit(serial, par)
    assert np.sum(par.predict(X) != y) == par.objective_
    assert any(passed)  # by the monitor, mid-run


def _shape(node):
    """A tree's splits, as nested tuples (its features at every node)."""
    return None if node is None else (node.feature, _shape(node.true), _shape(node.false))


@pytest.mark.parametrize("search, seed", [("binary", 0), ("ordered", 2)])
def test_first_task_wins_without_a_re_solve(search, seed, monkeypatch):
    """No other task bounds the first one (in root order), which starts on the solver as the
    fit sent it: when it wins, its tree is the answer as it is, without a re-solve, and it did
    exactly the work (and found the tree) of its share solved alone with the depth-2 bound,
    however often the others' incumbents were passed on."""
    import copy

    from exactree.progress import BOUND, new_board
    from exactree.solvers.dp.parallel import _rank

    sent, answers, resolved = [], [], []
    original = parallel_module.solve_parallel

    def spy(solver, *args, **kwargs):
        sent.append((copy.deepcopy(solver), kwargs))
        answers.append(original(solver, *args, **kwargs))
        return answers[-1]

    monkeypatch.setattr(parallel_module, "solve_parallel", spy)
    monkeypatch.setattr(parallel_module, "_resolve", lambda *a, **k: resolved.append(1))
    monkeypatch.setattr(parallel_module, "MONITOR_INTERVAL", 0.001)
    X, y = _numeric_problem(seed, n=150) if search == "ordered" else _binary_problem(seed, n=150)
    with parallel_config(backend="threading"):
        par = _fit(X, y, 2, max_depth=3, search=search)
    serial = _fit(X, y, None, max_depth=3, search=search)
    _same_fit(serial, par)
    assert par.parallel_.winner == 0 and not resolved
    solver, kwargs = sent[0]
    tasks, first = solver.plan_parallel(solver.tasks_per_worker * 2)
    board = new_board()
    board[BOUND] = _rank(solver, first) / solver.cost_scale
    args = {k: v for k, v in kwargs.items() if k not in ("time_limit", "progress")}
    before = solver.stats.copy()
    alone = solver.solve(**args, roots=tasks[0], board=board)
    work = dict(zip(solver.stats_names, (solver.stats - before).tolist()))
    assert alone.optimal and _shape(alone.tree) == _shape(answers[0][0].tree)
    assert par.parallel_.tasks[0].work == work


def test_first_task_runs_on_the_solver_as_sent_whatever_the_order():
    """The first task does the work of its share alone even when its worker ran other tasks
    of the fit before it (a scheduler that does not keep the order: it gets a new copy of the
    solver), or when other workers left their caches for it (it merges none)."""
    import copy
    import shutil
    import tempfile
    import uuid

    from exactree.progress import BOUND

    sent = []
    original = parallel_module.solve_parallel

    def spy(solver, *args, **kwargs):
        sent.append((copy.deepcopy(solver), kwargs))
        return original(solver, *args, **kwargs)

    X, y = _binary_problem(12, n=300, m=10, k=3)
    parallel_module.solve_parallel = spy
    try:
        _fit(X, y, 2, max_depth=4, search="binary")
    finally:
        parallel_module.solve_parallel = original
    solver, kwargs = sent[0]
    args = {k: v for k, v in kwargs.items() if k not in ("time_limit", "progress")}
    tasks, first = solver.plan_parallel(solver.tasks_per_worker * 2)
    best = parallel_module._rank(solver, first)

    def first_task_work(before, in_other_thread):
        shared = parallel_module._SharedBoards.create(len(tasks), best, solver.cost_scale)
        exchange, fit = tempfile.mkdtemp(), uuid.uuid4().hex

        def run(i):
            return parallel_module._run_task(fit, solver, i, tasks[i], shared.path, len(tasks),
                                             float(shared.tasks[i, BOUND]), None, args,
                                             exchange, None)
        try:
            if in_other_thread:
                other = threading.Thread(target=lambda: [run(i) for i in before])
                other.start()
                other.join()
            else:
                for i in before:
                    run(i)
            return run(0)[4].work
        finally:
            shared.close(remove=True)
            shutil.rmtree(exchange)

    alone = first_task_work([], False)
    assert alone["depth2_solves"] > 0
    assert first_task_work([3, 5], False) == alone  # the same worker, after two others
    assert first_task_work([1, 2, 3, 4, 5], True) == alone  # their caches left to merge
