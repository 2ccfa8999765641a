"""DyadicTreeClassifier under time_limit (issue 46): the clock counts from fit's start, is read
in the preparation (between the automatic k's grids) and inside the search kernel (through the
progress board), and a search it stops returns the best tree found, never called optimal."""

from __future__ import annotations

import time

import numpy as np
import pytest

from exactree.data.validation import TimeLimitReached
from exactree.estimators import dyadic as dyadic_estimator
from exactree.estimators._params import InvalidParameterError
from exactree.estimators.dyadic import DyadicTreeClassifier
from exactree.progress import NODES, Progress, new_board
from exactree.solvers.dyadic import build_tree, compute_path, prepare, search, solve


def _data(seed=0, n=300, d=3):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.3)).astype(int)
    flip = rng.random(n) < 0.1
    return X, np.where(flip, 1 - y, y)


def _problem(seed=0, n=300, k=3):
    X, y = _data(seed, n)
    return prepare(X, y, np.ones(len(y)), 2, max_splits=k), X, y


def _true_values(problem, tree, X, y):
    """Training error (weight units, offset included) and leaves of ``tree``."""
    return float(np.sum(tree.predict(X) != y)), tree.n_leaves


@pytest.mark.parametrize("bad", [0, -1.0])
def test_time_limit_is_validated(bad):
    X, y = _data()
    with pytest.raises(InvalidParameterError):
        DyadicTreeClassifier(time_limit=bad).fit(X, y)


def test_kernel_past_the_deadline_returns_the_root_leaf():
    p, X, y = _problem()
    board = new_board(-np.inf)
    sol = solve(p, 0.5, board=board)
    assert not sol.complete and sol.leaves == 1
    tree = build_tree(p, sol)
    assert tree.n_leaves == 1
    assert p.offset + sol.err == pytest.approx(min(np.bincount(y, minlength=2)))
    assert board[NODES] == sol.visited == 1


@pytest.mark.parametrize("delay", [0.0, 1e-5, 1e-4, 1e-3, 1e-2])
def test_stopped_search_gives_a_true_tree_no_better_than_the_optimum(delay):
    """Whenever the clock stops the search, the tree is complete and its stored (error, leaves)
    are its true values on the training data; a finished search is the optimum."""
    p, X, y = _problem(1, n=2000, k=4)
    lam = 0.5
    best = solve(p, lam)
    sol = solve(p, lam, board=new_board(time.perf_counter() + delay))
    tree = build_tree(p, sol)
    err, leaves = _true_values(p, tree, X, y)
    assert (p.offset + sol.err, sol.leaves) == (pytest.approx(err), leaves)
    assert sol.err + lam * sol.leaves >= best.err + lam * best.leaves - p.tol
    if sol.complete:
        assert (sol.err, sol.leaves) == (best.err, best.leaves)


def test_ctrl_c_stops_the_kernel_through_the_board():
    p, _, _ = _problem()
    progress = Progress()
    progress.interrupted = True  # what the watcher records on Ctrl-C
    sol = solve(p, 0.5, board=new_board(), progress=progress)
    assert not sol.complete and sol.leaves == 1


def test_estimator_past_the_deadline_is_a_leaf_before_any_search(monkeypatch):
    def forbidden(*a, **k):
        raise AssertionError("the search ran past the deadline")

    monkeypatch.setattr(dyadic_estimator, "solve", forbidden)
    X, y = _data()
    clf = DyadicTreeClassifier(time_limit=1e-9).fit(X, y)
    assert clf.status_ == "time_limit" and clf.tree_.n_leaves == 1
    assert clf.objective_ == pytest.approx(np.mean(y != np.bincount(y).argmax()) + clf.penalty_)
    assert clf.lower_bound_ == pytest.approx(clf.penalty_) and clf.lower_bound_ <= clf.objective_
    assert clf.predict(X).shape == y.shape


def test_automatic_k_reads_the_clock_between_grids(monkeypatch):
    calls = []

    def deadline_on_third(deadline):
        calls.append(deadline)
        if len(calls) >= 3:
            raise TimeLimitReached

    monkeypatch.setattr(search, "check_deadline", deadline_on_third)
    X, y = _data(2, n=400)
    clf = DyadicTreeClassifier(time_limit=100.0).fit(X, y)
    assert len(calls) == 3 and all(c is not None for c in calls)
    assert clf.status_ == "time_limit" and clf.tree_.n_leaves == 1


def test_prepare_past_the_deadline_raises():
    X, y = _data()
    with pytest.raises(TimeLimitReached):
        prepare(X, y, np.ones(len(y)), 2, deadline=time.perf_counter() - 1.0)


def _past_board(self):
    return new_board(-np.inf)


def test_search_cut_by_the_clock_is_anytime_and_honest(monkeypatch):
    X, y = _data(3, n=500)
    exact = DyadicTreeClassifier(penalty=0.002, max_splits_per_dim=3).fit(X, y)
    monkeypatch.setattr(DyadicTreeClassifier, "_board", _past_board)
    clf = DyadicTreeClassifier(penalty=0.002, max_splits_per_dim=3, time_limit=100.0).fit(X, y)
    assert clf.status_ == "time_limit" and clf.tree_.n_leaves == 1
    assert clf.lower_bound_ <= exact.objective_ <= clf.objective_
    assert clf.lower_bound_ >= clf.penalty_  # one leaf at least


def test_path_cut_by_the_clock(monkeypatch):
    X, y = _data(4, n=500)
    p = prepare(X, y, np.ones(len(y)), 2, max_splits=3)
    res = compute_path(p, board=new_board(-np.inf))
    assert not res.complete and not res.exact and res.cut is not None and not res.cut.complete
    exact = DyadicTreeClassifier(max_splits_per_dim=3).fit(X, y)
    monkeypatch.setattr(DyadicTreeClassifier, "_board", _past_board)
    clf = DyadicTreeClassifier(max_splits_per_dim=3, time_limit=100.0)
    path = clf.fit_path(X, y)
    assert clf.path_stats_["complete"] is False and clf.path_stats_["exact"] is False
    assert path == clf.path_ and clf.status_ == "time_limit"
    assert clf.lower_bound_ <= exact.objective_ <= clf.objective_
    with pytest.raises(ValueError, match="not exact"):
        clf.select_by_validation(X, y)


def test_cv_keeps_the_folds_finished_in_time(monkeypatch):
    X, y = _data(5, n=300)
    exact = DyadicTreeClassifier(max_splits_per_dim=2).fit(X, y)
    boards = []

    def first_path_only(self):  # the full-data path finishes, every fold is cut
        boards.append(new_board(np.inf if not boards else -np.inf))
        return boards[-1]

    monkeypatch.setattr(DyadicTreeClassifier, "_board", first_path_only)
    clf = DyadicTreeClassifier(max_splits_per_dim=2, cv=3, time_limit=100.0).fit(X, y)
    assert clf.stats_["cv_folds"] == 0 and not hasattr(clf, "cv_penalties_")
    assert clf.penalty_ == pytest.approx(2.0 / len(y))  # the default rule, cv cut
    assert clf.status_ == "time_limit" and clf.lower_bound_ == clf.objective_
    assert clf.objective_ == pytest.approx(exact.objective_)


def test_cv_cut_on_the_full_path(monkeypatch):
    X, y = _data(6, n=300)
    monkeypatch.setattr(DyadicTreeClassifier, "_board", _past_board)
    clf = DyadicTreeClassifier(max_splits_per_dim=2, cv=3, time_limit=100.0).fit(X, y)
    assert clf.status_ == "time_limit" and not hasattr(clf, "cv_penalties_")
    assert clf.path_stats_["complete"] is False
    assert clf.lower_bound_ <= clf.objective_


@pytest.mark.parametrize("seed", range(4))
def test_hashed_grouping_matches_np_unique(seed):
    from exactree.solvers.dyadic._kernels import grid_loss, group_rows

    rng = np.random.default_rng(seed)
    A = rng.integers(0, 6, (500, 4)).astype(np.int64)
    drop = rng.integers(0, 3, 4).astype(np.int64)
    inv = np.empty(len(A), np.int64)
    g = group_rows(A, drop, inv, np.inf)
    _, ref = np.unique(A >> drop, axis=0, return_inverse=True)
    ref = ref.ravel()
    assert g == ref.max() + 1
    assert len(set(zip(inv.tolist(), ref.tolist()))) == g  # the same partition
    W = rng.random((len(A), 3))
    sums = np.zeros((g, 3))
    np.add.at(sums, ref, W)
    assert grid_loss(A, drop, W, np.inf) == pytest.approx(sums.min(axis=1).sum())
    assert np.isnan(grid_loss(np.repeat(A, 200, axis=0), drop, np.repeat(W, 200, axis=0),
                              -np.inf))
