"""Live progress of long fits, and Ctrl-C that stops a search instead of losing it.

A search kernel shares one small float array with Python, its *board*: the kernel writes what it
knows (nodes explored, the best objective found, the proven lower bound) with plain stores in its
main loop, and reads ``board[DEADLINE]`` wherever it already looks at the clock. So there is no
Python callback per node, and the kernel runs in the calling thread at full speed.

The kernels release the GIL, so one background *watcher* thread can act while a kernel runs: it
prints a line about once a second (verbose fits), and when Ctrl-C arrives it sets the running
board's deadline to the past. It learns of Ctrl-C through Python's signal wake-up file
descriptor (written by the C-level signal handler even while the main thread is inside a
kernel), and during a kernel call the Python-level SIGINT handler only records the interrupt
instead of raising. The kernel then returns its best tree as on a time limit, and the fit
reports status ``"interrupted"``.
"""

from __future__ import annotations

import math
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

import numpy as np

from ._compile_note import compiling

try:  # the C functions behind `signal`, without its enum wrapping (microseconds a fit)
    import _signal as _raw_signal
except ImportError:  # pragma: no cover - CPython has it
    _raw_signal = signal

# Board slots. BOUND: an upper bound set from outside while the kernel runs (parallel fits: the
# best objective another worker has found); the root only looks for trees below it. INCUMBENT:
# the objective of the best complete tree the kernel holds, in BOUND's units (penalties
# included), for a parallel fit to pass on to the other workers while the kernel runs.
DEADLINE, NODES, BEST, LOWER, BOUND, INCUMBENT = range(6)
BOARD_SIZE = 6
INTERVAL = 1.0  # seconds between two progress lines
QUIET_START = 1.0  # at verbose=1 a fit shows live lines only once it has run this long


def new_board(deadline: float = math.inf) -> np.ndarray:
    """A board with ``deadline`` (a ``time.perf_counter`` value; inf: none) and nothing known."""
    board = np.zeros(BOARD_SIZE)
    board[DEADLINE] = deadline
    board[BEST] = math.inf
    board[BOUND] = math.inf
    board[INCUMBENT] = math.inf
    return board


class _Watcher(threading.Thread):
    """The background thread: reports the active verbose fit and turns Ctrl-C into a stop."""

    def __init__(self) -> None:
        super().__init__(name="exactree-progress", daemon=True)
        self.signals_r, self.signals_w = os.pipe()  # bytes written by the C signal handler
        self.wake_r, self.wake_w = os.pipe()  # a fit started or ended
        os.set_blocking(self.signals_w, False)
        # The running kernel calls, by thread: (progress, board, scale, track).
        self.active: dict[int, tuple[Progress, np.ndarray, float, bool]] = {}

    def run(self) -> None:
        while True:
            verbose = any(a[0].verbose for a in list(self.active.values()))
            ready, _, _ = select.select([self.signals_r, self.wake_r], [], [],
                                        INTERVAL if verbose else None)
            if self.wake_r in ready:
                os.read(self.wake_r, 512)
            interrupt = self.signals_r in ready and signal.SIGINT in os.read(self.signals_r, 512)
            for progress, board, scale, track in list(self.active.values()):
                if interrupt:  # Ctrl-C stops every running search
                    progress.interrupted = True
                    board[DEADLINE] = -math.inf  # the kernel stops at its next clock check
                elif not ready and progress.verbose and not compiling():  # a second passed
                    progress._read(board, scale, track)
                    progress._report()

    def wake(self) -> None:
        os.write(self.wake_w, b"x")


_watcher: _Watcher | None = None
_watcher_lock = threading.Lock()


class _Deferred:
    """:meth:`Progress.deferred_interrupts` as a plain class: it runs around every kernel
    call, where a generator-based context manager and ``signal``'s enum conversions took
    about ten microseconds (a few percent of a sub-millisecond fit)."""

    __slots__ = ("old_fd", "previous", "progress", "wakeup_fd")

    def __init__(self, progress: Progress, wakeup_fd: int) -> None:
        self.progress = progress
        self.wakeup_fd = wakeup_fd
        self.previous: Any = None
        self.old_fd: int | None = None

    def _note(self, signum: int, frame: Any) -> None:
        self.progress.interrupted = True

    def __enter__(self) -> None:
        if (threading.get_ident() != threading.main_thread().ident
                or _raw_signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
            return
        self.previous = _raw_signal.signal(signal.SIGINT, self._note)
        if self.wakeup_fd >= 0:
            self.old_fd = _raw_signal.set_wakeup_fd(self.wakeup_fd, warn_on_full_buffer=False)

    def __exit__(self, *exc: object) -> None:
        if self.previous is None:
            return
        if self.old_fd is not None:
            _raw_signal.set_wakeup_fd(self.old_fd)
        _raw_signal.signal(signal.SIGINT, self.previous)


def _get_watcher() -> _Watcher:
    global _watcher
    with _watcher_lock:
        if _watcher is None:
            _watcher = _Watcher()
            _watcher.start()
        return _watcher


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
            scale: float = 1.0, track: bool = True,
            count: tuple[np.ndarray, int] | None = None) -> Any:
        """``kernel(*args)``, which reads and writes ``board``: reported about once a second at
        ``verbose`` >= 1, stopped by Ctrl-C (then every later call returns at once too).
        ``scale`` turns the board's costs into the fit's units; ``track=False`` reads only the
        node count (the caller reports its own objective with :meth:`update`). ``count``:
        ``(stats, i)``, the kernel's own node counter, read once it returns (kernels write
        ``board[NODES]`` only at their periodic clock checks, which a short call never
        reaches)."""
        if self.interrupted:
            board[DEADLINE] = -math.inf
        self._nodes_before = self._nodes_done
        if count is not None:  # the kernel writes the solver's running total, not this call's
            self._nodes_before -= float(count[0][count[1]])
        watcher = _watcher if _watcher is not None else _get_watcher()
        me = threading.get_ident()
        watcher.active[me] = (self, board, scale, track)
        if self.verbose:
            watcher.wake()  # start its clock
        try:
            with _Deferred(self, watcher.signals_w):
                result = kernel(*args)
        finally:
            del watcher.active[me]
        if count is not None:
            board[NODES] = count[0][count[1]]
        self._read(board, scale, track)
        self._nodes_done = self.nodes
        return result

    def deferred_interrupts(self, wakeup_fd: int = -1) -> _Deferred:
        """A context manager: inside the block Ctrl-C sets ``interrupted`` instead of raising
        (a search driven from Python checks it between kernel calls; the watcher stops a
        running kernel through ``wakeup_fd``). Ctrl-C is left alone outside the main thread
        (where no handler can be set) and where the program set SIGINT's handler itself or
        ignores SIGINT (e.g. a background job)."""
        return _Deferred(self, wakeup_fd)

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

    def note(self, text: str) -> None:
        """One line about the fit (verbose >= 1), e.g. which search runs and why."""
        if self.verbose:
            print(f"[exactree] {self.name}: {text}", file=self.stream, flush=True)

    def finish(self, status: str, objective: float, lower_bound: float,
               stats: dict[str, Any] | None = None) -> None:
        """The summary line (verbose >= 1): status, objective, bound, time, nodes; at verbose 2
        also the search's counters ``stats``."""
        if not self.verbose:
            return
        self.best, self.lower = float(objective), float(lower_bound)
        extra = ("  " + ", ".join(f"{k} {v}" for k, v in stats.items())
                 if stats and self.verbose >= 2 else "")
        print(self._line(f"[exactree] {status}:") + extra, file=self.stream, flush=True)
