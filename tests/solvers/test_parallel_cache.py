"""Workers of a parallel binary search pass each other their caches (``Cache.dump`` /
``Cache.merge_file``, between tasks): what one worker solved, the others look up. Only facts
pass, so answers never change, and work falls."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest

from exactree.solvers.dp import parallel as parallel_module
from exactree.solvers.dp._cache import UNKNOWN
from exactree.solvers.dp.solver import DPSolver


def _problem(seed: int, n: int = 120, m: int = 9):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, m)).astype(bool)
    y = (X[:, 0] ^ X[:, 1] ^ (X[:, 2] & X[:, 3]) ^ (rng.random(n) < 0.2)).astype(int)
    return X, y


def _solver(X, y, depth=4, **kw):
    return DPSolver(X, y, 2, max_depth=depth, **kw)


def _entries(solver):
    """Every entry as {sorted key: (optimal costs by budget, -1 where unknown; lower bounds by
    budget)}."""
    c = solver.cache
    n, slots = c.n_entries, int(c.state[1])
    out = {}
    for e in range(n):
        plen, _, s = c.meta[e]
        end = c.meta[e + 1, 2] if e + 1 < n else slots
        known = c.split[s:end, 0] != UNKNOWN
        out[tuple(c.keys[e, :plen])] = (tuple(np.where(known, c.bounds[s:end, 1], -1.0)),
                                        tuple(c.bounds[s:end, 0]))
    return out


def test_dump_and_merge_copy_every_entry(tmp_path):
    X, y = _problem(0)
    a = _solver(X, y)
    a.solve()
    a.cache.dump(str(tmp_path / "all"))
    b = _solver(X, y)
    assert b.cache.merge_file(str(tmp_path / "all")) == a.cache.n_entries > 100
    assert _entries(b) == _entries(a)


def test_dumps_from_a_first_entry_add_up_to_the_whole(tmp_path):
    X, y = _problem(1)
    a = _solver(X, y)
    share = np.zeros(X.shape[1], bool)
    share[::2] = True
    a.solve(roots=share)
    first = a.cache.dump(str(tmp_path / "one"))
    assert first == a.cache.n_entries
    a.solve(roots=~share)
    assert a.cache.dump(str(tmp_path / "two"), first) == a.cache.n_entries > first
    b = _solver(X, y)
    b.cache.merge_file(str(tmp_path / "one"))
    b.cache.merge_file(str(tmp_path / "two"))
    # Entries the second solve updated after the first dump keep their older content in b.
    got, want = _entries(b), _entries(a)
    assert got.keys() == want.keys()
    late = [k for k in want if got[k] != want[k]]
    assert len(late) < 0.2 * len(want)


@pytest.mark.parametrize("seed", range(6))
def test_a_merged_cache_changes_the_work_not_the_answer(seed, tmp_path):
    """A solver that merged another's cache answers as a fresh one, with fewer depth-2 solves."""
    X, y = _problem(seed, n=100 + 10 * seed, m=8)
    share = np.zeros(X.shape[1], bool)
    share[seed % 3::3] = True
    other = _solver(X, y)
    other.solve(roots=~share)
    other.cache.dump(str(tmp_path / "other"))
    fresh, merged = _solver(X, y), _solver(X, y)
    merged.cache.merge_file(str(tmp_path / "other"))
    for max_nodes in (None, 5, 2):
        want = fresh.solve(max_nodes, roots=share)
        got = merged.solve(max_nodes, roots=share)
        assert (got is None) == (want is None)
        if want is not None:
            assert got.cost == pytest.approx(want.cost) and got.optimal and want.optimal
            assert got.tree.n_splits == want.tree.n_splits
            assert got.cost == pytest.approx(_errors(got.tree, X, y))
    assert merged.stats[1] < fresh.stats[1]  # depth-2 solves


def _errors(tree, X, y):
    errors = 0
    for row, label in zip(X, y):
        node = tree
        while node.feature >= 0:
            node = node.true if row[node.feature] else node.false
        errors += int(np.argmax(node.counts) != label)
    return errors


@pytest.mark.parametrize("limit", ["bytes", "entries"])
def test_merge_keeps_to_half_of_the_limits(limit, tmp_path):
    X, y = _problem(2)
    a = _solver(X, y)
    a.solve()
    a.cache.dump(str(tmp_path / "all"))
    b = _solver(X, y)
    b.solve(2)  # entries of its own first
    held = b.cache.n_entries
    if limit == "bytes":  # MAX_BYTES: room for a's entries, but not twice over
        b.cache.state[3] = b.cache.nbytes + a.cache.nbytes
    else:  # LIMIT
        b.cache.state[2] = 2 * (held + a.cache.n_entries) - 1
    assert b.cache.merge_file(str(tmp_path / "all")) == 0
    assert not b.cache.full and b.cache.n_entries == held
    # The search goes on with the room left, and finds the optimum.
    assert b.solve().cost == pytest.approx(a.solve().cost)


def test_merge_stops_where_the_cache_is_refused_room(tmp_path):
    """An insert the byte limit refuses inside the merge ends it without marking the cache
    full (the search, not the merge, decides that), and the entries merged so far stay."""
    X, y = _problem(4, n=200, m=14)
    a = _solver(X, y)
    a.solve()
    assert a.cache.n_entries > 256  # more than a new cache holds before it grows
    b = _solver(X, y)
    keys, meta, bounds, split = (np.ascontiguousarray(x) for x in (
        a.cache.keys[:a.cache.n_entries], a.cache.meta[:a.cache.n_entries],
        a.cache.bounds[:a.cache.state[1]], a.cache.split[:a.cache.state[1]]))
    b.cache.state[3] = b.cache.nbytes + 1000  # MAX_BYTES: the first entries fit, not all
    from exactree.solvers.dp._cache import merge
    added, *arrays = merge(*b.cache.arrays(), b.cache.state, keys, meta, bounds, split,
                           np.zeros(keys.shape[1] + 1, np.int64))
    b.cache.update(arrays)
    assert 0 < added == b.cache.n_entries < a.cache.n_entries
    assert not b.cache.full
    want = a.solve()
    got = b.solve()
    assert got.cost == pytest.approx(want.cost) and got.tree.n_splits == want.tree.n_splits


def test_a_partial_merge_rebuilds_missing_subtrees(tmp_path):
    """Entries whose optimal subtrees' children are missing (only the later half of a cache
    merged): the tree is rebuilt by solving those children again, and is still optimal."""
    X, y = _problem(5, n=150)
    a = _solver(X, y)
    want = a.solve()
    half = a.cache.n_entries // 2
    a.cache.dump(str(tmp_path / "late"), half)
    b = _solver(X, y)
    assert b.cache.merge_file(str(tmp_path / "late")) == a.cache.n_entries - half
    got = b.solve()
    assert got.optimal and got.cost == pytest.approx(want.cost)
    assert got.tree.n_splits == want.tree.n_splits
    assert got.cost == pytest.approx(_errors(got.tree, X, y))


def test_workers_merge_each_others_caches_between_tasks(tmp_path):
    """Two workers (threads here) run a fit's tasks in turn: the second, which merged the
    first's cache, does less work than without it, and every answer is the same."""
    X, y = _problem(3, n=200, m=10)

    def run(exchange):
        solver = _solver(X, y)
        tasks, first = solver.plan_parallel(4)
        shared = parallel_module._SharedBoards.create(len(tasks), math.inf, solver.cost_scale)
        fit, out = f"test-{exchange is not None}", []

        done = threading.Event()

        def worker(indices, wait):
            for i in indices:
                out.append(parallel_module._run_task(fit, solver, i, tasks[i], shared.path,
                                                     shared.n_tasks, math.inf, None, {},
                                                     exchange))
            if wait:  # alive, so that the other thread is another worker
                done.wait()

        one = threading.Thread(target=worker, args=([0], True))
        one.start()
        while len(out) < 1:
            time.sleep(0.01)
        two = threading.Thread(target=worker, args=(range(1, len(tasks)), False))
        two.start()
        two.join()
        done.set()
        one.join()
        shared.close(remove=True)
        return out

    alone, together = run(None), run(str(tmp_path))
    assert len(list(tmp_path.iterdir())) == len(alone) >= 3  # a file per task
    for a, b in zip(alone, together):
        assert a[0] == b[0]
        assert (a[1] is None) == (b[1] is None)
        if a[1] is not None:
            assert a[1].cost == pytest.approx(b[1].cost)
    solves = [sum(r[4].work["depth2_solves"] for r in run_[1:]) for run_ in (alone, together)]
    assert solves[1] < solves[0]
