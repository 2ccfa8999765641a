"""Live progress of long fits, and Ctrl-C that stops a search instead of losing it.

A search kernel shares one small float array with Python, its *board*: the kernel writes what it
knows (nodes explored, the best objective found, the proven lower bound) as it goes, with plain
stores in its main loop, and reads ``board[DEADLINE]`` wherever it already looks at the clock.
So there is no Python callback per node: :meth:`Progress.run` runs the kernel in a worker thread
(the kernels release the GIL) while the calling thread prints a line about once a second and
turns Ctrl-C into a stop request (a deadline in the past). The kernel then returns its best tree
as on a time limit, and the fit reports status ``"interrupted"``.
"""

from __future__ import annotations

import contextlib
import math
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator
from typing import Any, Callable, TextIO

import numpy as np

# Board slots.
DEADLINE, NODES, BEST, LOWER = range(4)
BOARD_SIZE = 4
INTERVAL = 1.0  # seconds between two progress lines
QUIET_START = 1.0  # a fit shows live lines only once it has run this long

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _worker() -> ThreadPoolExecutor:
    """One long-lived worker thread for kernels (starting a thread per fit costs more)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="exactree-search")
        return _pool


def new_board(deadline: float = math.inf) -> np.ndarray:
    """A board with ``deadline`` (a ``time.perf_counter`` value; inf: none) and nothing known."""
    board = np.zeros(BOARD_SIZE)
    board[DEADLINE] = deadline
    board[BEST] = math.inf
    return board


class Progress:
    """Reports one fit on ``stream`` (stderr) at ``verbose`` 1 or 2 and stops it on Ctrl-C.

    ``name`` labels the lines. Run each kernel call through :meth:`run` (or, for a search driven
    from Python, call :meth:`update` and :meth:`check` as it goes, and catch
    ``KeyboardInterrupt`` there), then call :meth:`finish` once with the result.
    """

    def __init__(self, verbose: int = 0, name: str = "fit", stream: TextIO | None = None) -> None:
        self.verbose = int(verbose)
        self.name = name
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.perf_counter()
        self.interrupted = False
        self.nodes = 0.0
        self.best = math.inf
        self.lower = 0.0
        self._last_line = self.start
        self._nodes_done = self._nodes_before = 0.0  # nodes of the kernel calls before this one

    # ------------------------------------------------------------------ running kernels
    def run(self, kernel: Callable[..., Any], board: np.ndarray, *args: Any,
            scale: float = 1.0, track: bool = True) -> Any:
        """``kernel(*args)`` (which reads and writes ``board``) in the worker thread, reporting
        every :data:`INTERVAL` seconds; Ctrl-C sets the board's deadline to the past and waits
        for the kernel's answer. After an interrupt every later call returns at once too.
        ``scale`` turns the board's costs into the fit's units; ``track=False`` reads only the
        node count (the caller reports its own objective with :meth:`update`)."""
        if self.interrupted:
            board[DEADLINE] = -math.inf
        self._nodes_before = self._nodes_done
        future = _worker().submit(kernel, *args)
        while True:
            try:
                try:
                    result = future.result(timeout=INTERVAL if self.verbose else None)
                    break
                except TimeoutError:
                    self._read(board, scale, track)
                    self._report()
            except KeyboardInterrupt:
                self.interrupted = True
                board[DEADLINE] = -math.inf  # the kernel stops at its next look at the clock
        self._read(board, scale, track)
        self._nodes_done = self.nodes
        return result

    @contextlib.contextmanager
    def deferred_interrupts(self) -> Iterator[None]:
        """For searches driven from Python: Ctrl-C inside the block sets ``interrupted`` (the
        search checks it between kernel calls) instead of raising where the state may be half
        updated. Outside the main thread, where no handler can be set, Ctrl-C raises as usual."""
        def note(signum: int, frame: Any) -> None:
            self.interrupted = True

        try:
            previous = signal.signal(signal.SIGINT, note)
        except ValueError:  # not the main thread
            yield
            return
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def check(self) -> None:
        """For searches driven from Python: report when a line is due (see :meth:`update`)."""
        if self.verbose and time.perf_counter() - self._last_line >= INTERVAL:
            self._report()

    def update(self, *, nodes: float | None = None, best: float | None = None,
               lower: float | None = None) -> None:
        """What a Python-driven search knows now (see :meth:`check`)."""
        if nodes is not None:
            self.nodes = float(nodes)
        if best is not None:
            self.best = min(self.best, float(best))
        if lower is not None:
            self.lower = max(self.lower, float(lower))

    def _read(self, board: np.ndarray, scale: float, track: bool) -> None:
        self.nodes = self._nodes_before + float(board[NODES])
        if track and board[BEST] < math.inf:
            self.best = min(self.best, float(board[BEST]) * scale)
        if track:
            self.lower = max(self.lower, float(board[LOWER]) * scale)

    # ------------------------------------------------------------------ output
    def _gap(self) -> float:
        if self.best == math.inf:
            return math.inf
        if self.best - self.lower <= 1e-12 * max(1.0, abs(self.best)):
            return 0.0
        return (self.best - self.lower) / abs(self.best) if self.best else math.inf

    def _line(self, prefix: str) -> str:
        elapsed = time.perf_counter() - self.start
        best = "-" if self.best == math.inf else f"{self.best:.6g}"
        gap = "-" if self._gap() == math.inf else f"{100 * self._gap():.1f}%"
        return (f"{prefix} {self.name}: {elapsed:7.1f}s  nodes {self.nodes:,.0f}  best {best}  "
                f"bound {self.lower:.6g}  gap {gap}")

    def _report(self) -> None:
        now = time.perf_counter()
        self._last_line = now
        if self.verbose >= 2 or now - self.start >= QUIET_START:
            print(self._line("[exactree]"), file=self.stream, flush=True)

    def finish(self, status: str, objective: float, lower_bound: float,
               detail: str = "") -> None:
        """The summary line (verbose >= 1): status, objective, bound, time, nodes."""
        if not self.verbose:
            return
        self.best, self.lower = float(objective), float(lower_bound)
        extra = f"  {detail}" if detail and self.verbose >= 2 else ""
        print(self._line(f"[exactree] {status}:") + extra, file=self.stream, flush=True)
