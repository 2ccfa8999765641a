"""Refusing a fit before it allocates more memory than it may use.

Every estimator estimates the peak memory of its largest structures from the problem's shape
*before* allocating them. When the estimate exceeds the budget (``memory_limit`` or, without
one, a share of the memory available), the fit raises :class:`MemoryLimitError` with a message
naming the ways out, never a raw NumPy allocation error or the kernel's out-of-memory killer.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["MemoryLimitError", "check_memory", "format_bytes"]


class MemoryLimitError(MemoryError, ValueError):
    """A fit would need more memory than its budget allows.

    A :class:`MemoryError` (what it is) and a :class:`ValueError` (the problem given is too
    large for the settings; older code caught that). ``need`` and ``limit`` are in bytes.
    """

    def __init__(self, message: str, need: float = 0.0, limit: float = 0.0) -> None:
        super().__init__(message)
        self.need = float(need)
        self.limit = float(limit)


def format_bytes(n: float) -> str:
    """``n`` bytes in the largest unit that keeps it above 1 (MiB, GiB, ...)."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


def check_memory(need: float, limit: float, what: str, ways_out: Iterable[str],
                 estimator: str | None = None) -> None:
    """Raise :class:`MemoryLimitError` when ``need`` bytes (the estimated peak of ``what``)
    exceed ``limit`` bytes; the message lists ``ways_out`` (e.g. ``"max_thresholds=32"``)."""
    if need <= limit:
        return
    who = f"{estimator}: " if estimator else ""
    ways = "; ".join(ways_out)
    raise MemoryLimitError(
        f"{who}{what} would need about {format_bytes(need)}, more than the "
        f"{format_bytes(limit)} this fit may use (memory_limit, or half the memory available "
        f"without one). Ways out: {ways}", need, limit)
