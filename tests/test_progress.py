"""Live progress lines (``verbose``) and Ctrl-C during a fit (status ``"interrupted"``)."""

from __future__ import annotations

import os
import re
import signal
import threading
import time

import numpy as np
import pytest

import exactree.progress as progress_module
from exactree import (DyadicTreeClassifier, ObliqueTreeClassifier, OptimalTreeClassifier,
                      SparseTreeClassifier)

LINE = re.compile(r"\[exactree\] .*OptimalTreeClassifier: +\d+\.\d+s  nodes [\d,]+  best \S+  "
                  r"bound \S+  gap \S+")


def hard_numeric(n=600, d=8, seed=0):
    """Random labels on random numeric columns: depth 4 takes far longer than these tests."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.integers(0, 2, n)


def hard_binary(n=500, d=60, seed=1):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2, (n, d)).astype(float), rng.integers(0, 3, n)


def press_ctrl_c_once_searching(after=0.3):
    """SIGINT to this process once a search has put exactree's own handler in place (so the
    signal can never reach pytest), ``after`` seconds later."""
    def fire():
        end = time.monotonic() + 60
        while signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            if time.monotonic() > end:
                return
            time.sleep(0.005)
        time.sleep(after)
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Thread(target=fire, daemon=True)
    timer.start()
    return timer


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler in place (a background job may start with SIGINT ignored),
    the original back afterwards."""
    original = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, original)


@pytest.fixture
def fast_lines(monkeypatch):
    monkeypatch.setattr(progress_module, "INTERVAL", 0.05)
    monkeypatch.setattr(progress_module, "QUIET_START", 0.0)


@pytest.mark.parametrize("search", ["ordered", "binary"])
def test_verbose_prints_live_lines_and_a_summary(fast_lines, capsys, search):
    X, y = hard_numeric() if search == "ordered" else hard_binary()
    depth = 4 if search == "ordered" else 5
    model = OptimalTreeClassifier(max_depth=depth, time_limit=0.6, verbose=1, search=search)
    model.fit(X, y)
    err = capsys.readouterr().err.splitlines()
    live = [line for line in err if LINE.fullmatch(line)]
    assert len(live) >= 3, err
    assert err[-1].startswith("[exactree] time_limit: OptimalTreeClassifier:"), err
    best = float(err[-1].split("best ")[1].split()[0])
    assert best == pytest.approx(model.objective_)
    # Nodes never go down from one line to the next.
    nodes = [int(line.split("nodes ")[1].split()[0].replace(",", "")) for line in live]
    assert nodes == sorted(nodes) and nodes[-1] > 0


def test_no_lines_while_kernels_compile(fast_lines, capsys, monkeypatch):
    """While an exactree kernel compiles the watcher prints nothing (its counters would be
    empty); lines resume once compiling ends."""
    import exactree._compile_note as note

    monkeypatch.setattr(note, "_depth", 1)  # as during a cold compile
    board = progress_module.new_board()
    p = progress_module.Progress(verbose=2, name="OptimalTreeClassifier")
    p.run(lambda: time.sleep(0.4), board)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(note, "_depth", 0)
    p.run(lambda: time.sleep(0.4), board)
    assert len(capsys.readouterr().err.splitlines()) >= 2


@pytest.mark.parametrize("search", ["ordered", "binary"])
def test_a_finished_fit_reports_its_real_node_count(capsys, search):
    """A fit too short for the kernel's periodic board writes still reports its nodes."""
    X, y = hard_numeric(n=80, d=3) if search == "ordered" else hard_binary(n=60, d=6)
    depth = 2 if search == "ordered" else 3  # (binary: a depth-2 fit is one depth-2 solve)
    model = OptimalTreeClassifier(max_depth=depth, verbose=1, search=search).fit(X, y)
    err = capsys.readouterr().err.strip().splitlines()
    nodes = int(err[-1].split("nodes ")[1].split()[0].replace(",", ""))
    counter = "split_evaluations" if search == "ordered" else "frames"
    assert nodes == model.stats_[counter] > 0


def test_verbose_two_adds_the_counters_and_zero_is_silent(capsys):
    X, y = hard_numeric(n=80, d=3)
    OptimalTreeClassifier(max_depth=2, verbose=0).fit(X, y)
    assert capsys.readouterr().err == ""
    OptimalTreeClassifier(max_depth=2, verbose=2).fit(X, y)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and err[0].startswith("[exactree] OptimalTreeClassifier: search ")
    assert err[1].startswith("[exactree] optimal:") and "frames" in err[1]


@pytest.mark.parametrize("n_jobs", [None, 2])
@pytest.mark.parametrize("search", ["ordered", "binary"])
def test_ctrl_c_returns_the_best_tree_so_far(search, n_jobs, python_sigint):
    X, y = hard_numeric() if search == "ordered" else hard_binary()
    press_ctrl_c_once_searching(after=0.3 if n_jobs is None else 2.0)  # workers start first
    start = time.perf_counter()
    model = OptimalTreeClassifier(max_depth=5 if search == "binary" else 4, search=search,
                                  n_jobs=n_jobs).fit(X, y)
    assert time.perf_counter() - start < 20
    assert model.status_ == "interrupted"
    assert 0 <= model.lower_bound_ <= model.objective_ < len(y)
    # The tree is the one reported: its training errors are the objective.
    assert (model.predict(X) != y).sum() == model.objective_
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.set_wakeup_fd(-1) == -1  # restored too


def test_ctrl_c_during_a_penalised_fit(python_sigint):
    X, y = hard_binary(seed=3)
    press_ctrl_c_once_searching()
    model = OptimalTreeClassifier(max_depth=5, cost_complexity=1e-4).fit(X, y)
    assert model.status_ == "interrupted"
    assert model.lower_bound_ <= model.objective_


def test_ctrl_c_stops_a_sparse_tree_search(python_sigint):
    X, y = hard_binary(n=400, d=30, seed=2)
    press_ctrl_c_once_searching()
    model = SparseTreeClassifier(penalty=0.0005).fit(X, y)
    assert model.status_ == "interrupted"
    assert model.lower_bound_ <= model.objective_ + 1e-12
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_interrupt_outside_a_fit_still_raises(python_sigint):
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)


def test_a_program_that_ignores_or_handles_sigint_keeps_its_handler():
    calls = []
    for handler in (signal.SIG_IGN, lambda signum, frame: calls.append(signum)):
        original = signal.signal(signal.SIGINT, handler)
        try:
            X, y = hard_numeric(n=100, d=3)
            OptimalTreeClassifier(max_depth=2).fit(X, y)
            assert signal.getsignal(signal.SIGINT) is handler
        finally:
            signal.signal(signal.SIGINT, original)


@pytest.mark.parametrize("make", [
    lambda: OptimalTreeClassifier(max_depth=2, verbose=1),
    lambda: SparseTreeClassifier(penalty=0.02, verbose=1),
    lambda: DyadicTreeClassifier(penalty=0.02, verbose=1),
    lambda: ObliqueTreeClassifier(n_splits=1, rules="axis", verbose=1),
])
def test_every_estimator_summarises_its_fit(make, capsys):
    rng = np.random.default_rng(4)
    X, y = rng.random((40, 2)), rng.integers(0, 2, 40)
    model = make().fit(X, y)
    err = capsys.readouterr().err.strip().splitlines()
    name = type(model).__name__
    assert err[-1].startswith(f"[exactree] {model.status_}: {name}:"), err
    assert model.get_params()["verbose"] == 1
