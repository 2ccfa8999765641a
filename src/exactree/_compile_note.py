"""One line on stderr when exactree's Numba kernels actually compile (a cold cache).

A fresh environment compiles the search kernels once (tens of seconds to minutes); later
processes load them from Numba's on-disk cache. Rather than guess from cache files, this listens
to Numba's ``"numba:compile"`` event, which Numba broadcasts only after a cache miss, just before
compiling: so the note appears exactly when compiling starts, at most once per process, and
never when the kernels load from the cache.
"""

from __future__ import annotations

import sys

MESSAGE = ("exactree: compiling the search kernels (first run only; later runs load them from "
           "the cache) ...")

_installed = False
_said = False
_depth = 0  # exactree kernels compiling now (compiles nest: a kernel compiles its callees)


def compiling() -> bool:
    """Whether an exactree kernel is compiling at this moment (the progress thread stays
    silent meanwhile: its counters would only say that nothing has run yet)."""
    return _depth > 0


def _ours(ev) -> bool:
    """Whether a compile event is an exactree kernel's. A user's objective
    (exactree.objectives) compiles in every process: not a sign of a cold cache."""
    dispatcher = (ev.data or {}).get("dispatcher")
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    return module.startswith("exactree.") and not module.startswith("exactree.objectives")


def note_compiling() -> None:
    """Arrange for :data:`MESSAGE` to go to stderr when an exactree kernel starts compiling.

    Idempotent and cheap after the first call; it imports Numba (callers are about to run
    kernels anyway). Does nothing if this Numba has no event API.
    """
    global _installed
    if _installed:
        return
    _installed = True
    try:
        from numba.core import event
    except ImportError:  # pragma: no cover - every supported Numba has it
        return

    class _Note(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            global _said, _depth
            if not _ours(ev):
                return
            _depth += 1
            if not _said:
                _said = True
                print(MESSAGE, file=sys.stderr, flush=True)

        def on_end(self, ev: event.Event) -> None:
            global _depth
            if _ours(ev):
                _depth = max(_depth - 1, 0)

    event.register("numba:compile", _Note())
