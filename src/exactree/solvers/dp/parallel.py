"""One depth-limited optimal-tree solve spread over workers (joblib processes or threads, or a
Dask cluster through ``joblib.parallel_config(backend="dask")``).

The root's candidate splits are dealt into tasks (the solver's ``plan_parallel``); a task is
the whole search with the root restricted to its share, so the best task answer is the optimum.
Tasks share the best objective found so far through a small file every worker on this machine
maps into memory: a finished task lowers it, the fitting process passes on every running
task's incumbent (board slot ``INCUMBENT``) every ``MONITOR_INTERVAL`` seconds, and running
kernels read it at their clock checks (slot ``BOUND``), so every task but the first (see
below) prunes against the best tree of any worker. A worker on another machine gets the best
objective known when its task was dispatched. Each worker keeps its own copy of the solver for
the whole fit, so the data travels to a worker once; binary-search workers on this machine also
pass each other the entries their caches gained, through files in a folder of the fit (merged
between tasks: facts about subproblems, so only the work changes).

Determinism: a task is bounded by the best objective found strictly, except by one found in a
later task (in root order), which it may tie. So the first task in root order whose share
holds an optimal tree always reports the optimum and wins, whatever the timing, while most
tasks need not explore ties. The first task of all is bounded by nothing but the depth-2 tree,
on the solver as the fit sent it (no other worker's cache): its search is that of its share
solved alone from the depth-2 tree's bound, whatever the timing, so when it wins its tree is
the answer. (Its price: the first task, the root's most promising share, never gains from the
others' incumbents.) Another
winner's tree is solved once more with the optimum as its bound (binary search: only the root
feature it found, the first of its share to reach the optimum whatever the timing; ordered
search: its whole share, up to the first optimal tree), on the solver as the fit sent it, so
the returned tree does not depend on the timing either. A worker does this as soon as the
winner is known, beside the tasks still running (``_settle``).
"""

from __future__ import annotations

import copy
import math
import mmap
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...progress import BOARD_SIZE, BOUND, DEADLINE, INCUMBENT, NODES, Progress, new_board
from .._workers import n_workers
from ._lexicographic import ranking, solver_cost_bound
from .ordered import OrderedSolver
from .solver import DPSolution

# Seconds between two looks of the fitting process at the running tasks (their incumbents are
# passed on, Ctrl-C turned into a stop).
MONITOR_INTERVAL = 0.1
# Share of a time limit the ordered search's plan (its depth-2 first incumbent) may take.
PLAN_SHARE = 0.25
_STOP = -math.inf
# Each worker's state (its copy of the solver) for the running fit, by (fit, process, thread).
_local: dict[tuple[str, int, int], Any] = {}
_local_lock = threading.Lock()


@dataclass
class TaskTiming:
    """When one task ran (``time.time`` seconds, as seen by its worker) and where."""

    index: int
    start: float
    seconds: float
    worker: str
    work: dict[str, int] = field(default_factory=dict)  # the search's counters
    settle_seconds: float = 0.0  # of ``seconds``: re-solving the likely winner (see _settle)


@dataclass
class ParallelReport:
    """How a parallel solve went: its tasks' timings, the wall time of the whole solve (from
    the first dispatch to the last result, re-solve of the winner included) and the winner."""

    n_workers: int
    tasks: list[TaskTiming] = field(default_factory=list)
    wall: float = 0.0
    winner: int = -1
    resolve_seconds: float = 0.0


# Columns of the shared boards after a kernel's board: the objective a finished task found
# (inf: none) and its tree's root feature, whether it finished, whether a worker took on
# re-solving its share (_settle).
FOUND, ROOT, FINISHED, CLAIMED = range(BOARD_SIZE, BOARD_SIZE + 4)
_WIDTH = BOARD_SIZE + 4


class _SharedBoards:
    """A ``(1 + 2 n_tasks, _WIDTH)`` float array in a memory-mapped file: row 0 holds the best
    objective found (slot ``BOUND``) and a stop flag (slot ``DEADLINE``, -inf: stop); row
    ``1 + i`` is task ``i``'s kernel board (its first ``BOARD_SIZE`` slots, ``BOUND`` in the
    kernel's cost units), then its outcome (``FOUND``, ``ROOT``, ``FINISHED``, ``CLAIMED``); row
    ``1 + n_tasks + i`` the kernel board of the re-solve of task ``i``'s share (no bound)."""

    def __init__(self, path: str, n_tasks: int) -> None:
        self.path, self.n_tasks = path, n_tasks
        rows = 1 + 2 * n_tasks
        with open(path, "r+b") as fh:
            self._map = mmap.mmap(fh.fileno(), rows * _WIDTH * 8)
        self.array = np.frombuffer(self._map, np.float64).reshape(rows, _WIDTH)

    @classmethod
    def create(cls, n_tasks: int, best: float, cost_scale: float) -> _SharedBoards:
        folder = "/dev/shm" if os.path.isdir("/dev/shm") else None
        fd, path = tempfile.mkstemp(prefix="exactree-", suffix=".board", dir=folder)
        rows = np.zeros((1 + 2 * n_tasks, _WIDTH))
        rows[:, :BOARD_SIZE] = new_board()
        rows[:, FOUND] = np.inf
        rows[0, BOUND], rows[0, DEADLINE] = best, 0.0
        rows[1:1 + n_tasks, BOUND] = best / cost_scale
        with os.fdopen(fd, "wb") as fh:
            fh.write(rows.tobytes())
        return cls(path, n_tasks)

    @classmethod
    def open(cls, path: str, n_tasks: int) -> _SharedBoards | None:
        """The boards of a fit, or None on a machine that cannot see the file."""
        try:
            return cls(path, n_tasks)
        except OSError:
            return None

    @property
    def tasks(self) -> np.ndarray:
        """The tasks' rows."""
        return self.array[1:1 + self.n_tasks]

    def publish(self, index: int, cost: float, margin: float, cost_scale: float) -> None:
        """Task ``index`` found a tree of objective ``cost``: bound the later tasks by it and
        the earlier ones by it plus ``margin`` (they may tie it); not itself, which is to
        report that tree, or a better one (bounded by its own tree it would report none), nor
        the first task, whose search must not depend on the timing (see the module's notes).
        Only minima are written, so a race between two publishers can leave a weaker bound,
        never a wrong one."""
        a, t = self.array, self.tasks
        a[0, BOUND] = min(a[0, BOUND], cost)
        earlier, later = t[1:index, BOUND], t[index + 1:, BOUND]
        np.minimum(earlier, (cost + margin) / cost_scale, out=earlier)
        np.minimum(later, cost / cost_scale, out=later)

    def finish(self, index: int, found: float, root: int) -> None:
        """Task ``index`` ended, its best tree of objective ``found`` (inf: none) splitting the
        root on feature ``root``."""
        self.tasks[index, [FOUND, ROOT, FINISHED]] = found, root, 1.0

    def likely_winner(self, margin: float) -> int:
        """The task that wins unless a task still running finds a better tree (the first in
        root order within ``margin`` of the best found, every one before it finished), not yet
        claimed by a worker (and now claimed); -1 if none, or the first task (its own tree is
        the answer)."""
        a = self.tasks
        best = a[:, FOUND].min()  # -inf: a task ran out of time, and nothing is re-solved
        if not math.isfinite(best) or self.array[0, DEADLINE] == _STOP:
            return -1
        for i in range(len(a)):
            if a[i, FINISHED] == 0.0:
                return -1
            if a[i, FOUND] <= best + margin:
                if a[i, CLAIMED] or i == 0:
                    return -1
                a[i, CLAIMED] = 1.0  # two workers may both take it: only work lost
                return i
        return -1

    def stop(self) -> None:
        self.array[:, DEADLINE] = _STOP

    def close(self, remove: bool = False) -> None:
        """Drop this view (the mapping closes with its last user); ``remove``: the file too."""
        self.array = self._map = None
        if remove:
            os.unlink(self.path)


@dataclass
class _Worker:
    """A worker's own copy of the fit's solver (kernels write into its arrays and cache), and
    what it passed through the fit's cache folder: the other workers' files it merged, the
    files it wrote and the entries of its cache those hold or came from others."""

    solver: Any
    merged: set[str] = field(default_factory=set)
    files: int = 0
    entries: int = 0

    def merge_others(self, folder: str, me: str) -> None:
        """Merge the entries the other workers added since this one last looked (each writes
        those it added to a new file after every task): a subproblem one worker solved is not
        solved again by the others. Only facts pass, so only the work changes."""
        try:
            names = sorted(os.listdir(folder))
        except OSError:  # a worker on another machine
            return
        for name in names:
            if name.startswith(me) or name.endswith(".part") or name in self.merged:
                continue
            try:
                self.solver.cache.merge_file(os.path.join(folder, name))
                self.merged.add(name)
            except OSError:
                pass
        self.entries = self.solver.cache.n_entries  # the rest is written or came from others

    def write_own(self, folder: str, me: str) -> None:
        """Write the entries this worker's cache gained since it last wrote or merged."""
        try:
            self.entries = self.solver.cache.dump(
                os.path.join(folder, f"{me}{self.files:05d}"), self.entries)
            self.files += 1
        except OSError:  # no room: the others solve it themselves
            pass


def _worker(fit: str, solver: Any, fresh: bool = False) -> _Worker:
    """This worker's state for the fit, made on its first task of the fit (a copy of
    ``solver``), or anew when ``fresh`` (the first task, see the module's notes) comes after
    others (a scheduler that does not keep the order); the states of earlier fits are dropped."""
    key = (fit, os.getpid(), threading.get_ident())
    with _local_lock:
        mine = _local.get(key)
        if mine is None or fresh:
            for old in [k for k in _local if k[1:] == key[1:]]:
                del _local[old]
            files = 0 if mine is None else mine.files  # (new names for its next files)
            mine = _local[key] = _Worker(copy.deepcopy(solver), files=files)
        return mine


def _keep_worker_alive() -> None:
    """loky ends a worker whose memory grew by 300 MB since its first task, taking the growth
    for a leak; a worker's search cache grows by design (within its share of the fit's memory
    limit) and must last the whole fit, or its work is lost and a new worker starts cold."""
    loky = sys.modules.get("joblib.externals.loky.process_executor")
    if loky is not None and isinstance(getattr(loky, "_MAX_MEMORY_LEAK_SIZE", None), int):
        loky._MAX_MEMORY_LEAK_SIZE = max(loky._MAX_MEMORY_LEAK_SIZE, 2**62)


def _run_task(fit: str, solver: Any, index: int, roots: Any, path: str, n_tasks: int,
              bound: float, wall_deadline: float | None, solve_args: dict,
              exchange: str | None = None, shares: list | None = None) -> tuple:
    """Solve task ``index`` in a worker: ``(index, solution or None, lower bound of its share,
    proven, timing, settled)``; the timing holds the task's search counters. ``bound`` is the
    task's kernel bound when it was dispatched (for workers that cannot see the shared file);
    ``exchange`` the folder where workers leave their caches for each other; ``shares`` every
    task's share, to re-solve the likely winner's here once this task is done (``settled``:
    ``(task, its objective, its root feature, solution)`` or None; see :func:`_settle`)."""
    start = time.time()
    _keep_worker_alive()
    pristine, worker = solver, _worker(fit, solver, fresh=index == 0)
    solver = worker.solver
    me = f"{os.getpid()}-{threading.get_ident()}-"
    shared = _SharedBoards.open(path, n_tasks)
    try:
        if shared is None:
            board = new_board()
            board[BOUND] = bound
        else:
            board = shared.array[1 + index, :BOARD_SIZE]
            if shared.array[0, DEADLINE] == _STOP:
                wall_deadline = start  # stopped (Ctrl-C) before this task began
        work: dict[str, int] = {}
        settled, settle_seconds = None, 0.0
        if wall_deadline is not None and wall_deadline <= time.time():
            sol, lower, proven = None, 0.0, False
        else:
            if exchange is not None and index > 0:  # (the first task on the solver as sent)
                worker.merge_others(exchange, me)
            left = None if wall_deadline is None else wall_deadline - time.time()
            before = solver.stats.copy()
            sol = solver.solve(**solve_args, time_limit=left, roots=roots, board=board)
            work = dict(zip(solver.stats_names, (solver.stats - before).tolist()))
            if exchange is not None:
                worker.write_own(exchange, me)
            if shared is not None and sol is not None:
                shared.publish(index, _rank(solver, sol), 2 * solver.tolerance,
                               solver.cost_scale)
            # Nothing in the share is below the bound the kernel kept to, which is at least
            # the best objective known now.
            known = min(float(board[BOUND]) * solver.cost_scale,
                        solve_args.get("upper_bound", math.inf))
            if shared is not None:
                known = min(known, float(shared.array[0, BOUND]))
            known = solver_cost_bound(solver, known)
            proven = sol is None or sol.optimal
            lower = (known if sol is None else min(sol.cost, known) if sol.optimal
                     else sol.lower_bound)
            if shared is not None:
                shared.finish(index, -math.inf if not proven else math.inf if sol is None
                              else _rank(solver, sol), -1 if sol is None else sol.tree.feature)
                if shares is not None:
                    t0 = time.time()
                    settled = _settle(pristine, shared, shares, solve_args, wall_deadline)
                    settle_seconds = time.time() - t0
    finally:
        if shared is not None:
            shared.close()
    timing = TaskTiming(index, start, time.time() - start,
                        f"{os.getpid()}:{threading.get_ident()}", work, settle_seconds)
    return index, sol, lower, proven, timing, settled


def _settle(solver: Any, shared: _SharedBoards, shares: list, solve_args: dict,
            wall_deadline: float | None) -> tuple[int, float, int, DPSolution] | None:
    """The winner is solved once more for a tree that does not depend on the timing (see
    :func:`_resolve`); a worker that ends a task does it at once for the task that wins unless
    a running one finds better, while other workers go on. ``solver`` is the fit's solver as
    sent: a copy of it is solved, in the state the fitting process would solve it in (not the
    worker's own, whose cache holds what other tasks found and could break ties otherwise).
    ``(task, objective, root feature, solution)``, or None."""
    k = shared.likely_winner(2 * solver.tolerance)
    if k < 0:
        return None
    cost, root = float(shared.tasks[k, FOUND]), int(shared.tasks[k, ROOT])
    left = None if wall_deadline is None else wall_deadline - time.time()
    if left is not None and left <= 0:
        return None
    solver = copy.deepcopy(solver)
    # On the share's re-solve board, which Ctrl-C stops and no task bounds.
    sol = _resolve(solver, solver.narrow_roots(shares[k], root), cost, solve_args, left,
                   shared.array[1 + shared.n_tasks + k, :BOARD_SIZE])
    return (k, cost, root, sol) if sol is not None and sol.optimal else None


def _resolve(solver: Any, roots: Any, cost: float, solve_args: dict,
             time_limit: float | None = None, board: np.ndarray | None = None
             ) -> DPSolution | None:
    """The winning task's share (``roots``) solved again, bounded by the objective ``cost`` it
    found (ties allowed): the first optimal tree of a fixed search, whatever the timing. The
    ordered search, which keeps the whole share (``narrow_roots``), stops at that tree."""
    stop = {"stop_at": cost} if isinstance(solver, OrderedSolver) else {}
    return solver.solve(**{**solve_args, "upper_bound": cost + 2 * solver.tolerance},
                        roots=roots, time_limit=time_limit, board=board, **stop)


class _Monitor(threading.Thread):
    """In the fitting process, every 0.1 s: passes each running task's incumbent on to the
    other tasks but the first (a tree found early in one share prunes the others at once, as in
    a serial search, not only when its task ends), reports a verbose fit about once a second
    and turns Ctrl-C (noted by ``progress``) into a stop of every task."""

    def __init__(self, shared: _SharedBoards, progress: Progress | None, solver: Any) -> None:
        super().__init__(name="exactree-parallel", daemon=True)
        self.shared, self.progress = shared, progress
        self.margin, self.scale = 2 * solver.tolerance, solver.cost_scale
        self.done = threading.Event()

    def run(self) -> None:
        passed = np.full(self.shared.n_tasks, np.inf)  # incumbents passed on so far
        while not self.done.wait(MONITOR_INTERVAL):
            incumbents = self.shared.tasks[:, INCUMBENT].copy()
            for i in np.flatnonzero(incumbents < passed).tolist():
                self.shared.publish(i, incumbents[i] * self.scale, self.margin, self.scale)
            np.minimum(passed, incumbents, out=passed)
            if self.progress is None:
                continue
            if self.progress.interrupted:
                self.shared.stop()
            a = self.shared.array
            self.progress.update(nodes=float(a[1:, NODES].sum()), best=float(a[0, BOUND]))
            self.progress.check()


def solve_parallel(solver: Any, n_jobs: int | None, *, time_limit: float | None = None,
                   progress: Progress | None = None,
                   **solve_args: Any) -> tuple[DPSolution | None, ParallelReport]:
    """``solver.solve(**solve_args)`` (a :class:`~.solver.DPSolver` or
    :class:`~.ordered.OrderedSolver`) over ``n_jobs`` joblib workers, with the same answer:
    the optimal tree (None when none is below ``upper_bound``), a valid lower bound and whether
    it is proven. The optimal depth-2 tree, found first, is the incumbent every task starts
    from. ``time_limit`` covers the whole solve."""
    from joblib import Parallel, delayed

    start = time.perf_counter()
    wall_deadline = None if time_limit is None else time.time() + float(time_limit)
    workers = n_workers(n_jobs)
    report = ParallelReport(workers)
    extra = {"max_nodes": solve_args["max_nodes"]} if "max_nodes" in solve_args else {}
    if time_limit is not None and isinstance(solver, OrderedSolver):
        # Its first incumbent is a depth-2 search over every threshold (milliseconds usually,
        # unbounded on big data): it gets a share of the limit, the tasks the rest.
        extra["time_limit"] = PLAN_SHARE * float(time_limit)
    # Enough tasks to keep every worker busy while the slowest one ends, as many as the solver
    # says (its tasks_per_worker: more where small tasks cost little).
    tasks, first = solver.plan_parallel(solver.tasks_per_worker * workers, **extra)
    upper = solve_args.get("upper_bound", math.inf)
    best = _rank(solver, first) if _rank(solver, first) < upper else math.inf
    shared = _SharedBoards.create(len(tasks), best, solver.cost_scale)
    exchange = (tempfile.mkdtemp(prefix="exactree-", dir=os.path.dirname(shared.path))
                if getattr(solver, "cache", None) is not None else None)
    fit = uuid.uuid4().hex
    results: list[tuple] = []
    monitor = _Monitor(shared, progress, solver)
    monitor.start()
    try:
        def calls():
            for i, roots in enumerate(tasks):
                bound = float(shared.tasks[i, BOUND])
                yield delayed(_run_task)(fit, solver, i, roots, shared.path, len(tasks), bound,
                                         wall_deadline, solve_args, exchange, tasks)

        with progress.deferred_interrupts() if progress is not None else nullcontext():
            run = Parallel(n_jobs=n_jobs, batch_size=1,
                           return_as="generator_unordered")
            for out in run(calls()):
                results.append(out)
    finally:
        monitor.done.set()
        monitor.join()
        shared.close(remove=True)
        if exchange is not None:
            shutil.rmtree(exchange, ignore_errors=True)
    results.sort(key=lambda r: r[0])
    report.tasks = [r[4] for r in results]
    sol = _combine(solver, tasks, results, first, solve_args, report)
    report.wall = time.perf_counter() - start
    return sol, report


def _combine(solver: Any, tasks: list, results: list[tuple], first: DPSolution,
             solve_args: dict, report: ParallelReport) -> DPSolution | None:
    """The fit's answer from every task's: the cheapest tree, the least task bound, proven when
    every task was; a proven optimum is the first task's tree or one re-solved alone in its
    winning task's share, so which of several optimal trees comes back does not depend on
    timing."""
    margin = 2 * solver.tolerance
    found = [(_rank(solver, r[1]), r[0]) for r in results if r[1] is not None]
    proven = all(r[3] for r in results)
    lower = min((r[2] for r in results), default=math.inf)
    stats: dict[str, Any] = {"tasks": len(tasks)}
    limits = {r[1].limit for r in results if r[1] is not None and r[1].limit}
    limit = None if proven else "memory_limit" if "memory_limit" in limits else "time_limit"
    for r in results:
        for k, v in r[4].work.items():
            stats[k] = stats.get(k, 0) + v
    if not found:  # no task beat the first tree (or no root split exists)
        if _rank(solver, first) < solve_args.get("upper_bound", math.inf):
            return DPSolution(first.tree, first.cost, first.cost if proven else
                              min(lower, first.cost), proven, stats, limit)
        return None
    cost = min(c for c, _ in found)
    winner = min(i for c, i in found if c <= cost + margin)
    report.winner = winner
    if proven:
        t0 = time.perf_counter()
        sol = results[winner][1]
        if winner > 0:  # (the first task's tree is the answer as it is)
            own, root = _rank(solver, sol), sol.tree.feature
            settled = [r[5][3] for r in results
                       if r[5] is not None and r[5][:3] == (winner, own, root)]
            # (On a copy: the fit's solver, sent again by fit_path, keeps the state it had.)
            again = settled[0] if settled else _resolve(
                copy.deepcopy(solver), solver.narrow_roots(tasks[winner], root), own, solve_args)
            sol = again if again is not None else sol
        report.resolve_seconds = time.perf_counter() - t0
        return DPSolution(sol.tree, sol.cost, sol.cost, True, stats)
    sol = results[winner][1]
    if _rank(solver, first) < _rank(solver, sol):
        sol = first
    return DPSolution(sol.tree, sol.cost, min(lower, sol.cost), False, stats, limit)


def _rank(solver: Any, sol: DPSolution) -> float:
    """What the solvers minimise: cost, then splits (see :mod:`._lexicographic`)."""
    return ranking(solver, sol.cost, sol.tree.n_splits)


def solve_dp(solver: Any, n_jobs: int | None, *, progress: Progress | None = None,
             **solve_args: Any) -> tuple[DPSolution | None, ParallelReport | None]:
    """``solver.solve(**solve_args)`` here, or over ``n_jobs`` workers where that can pay: more
    than one worker and a depth of 3 or more (the optimal depth-2 tree, which a parallel solve
    finds first, is the whole answer below that). The report is None for a serial solve."""
    if solver.max_depth >= 3 and n_workers(n_jobs) > 1:
        return solve_parallel(solver, n_jobs, progress=progress, **solve_args)
    return solver.solve(progress=progress, **solve_args), None
