"""The squared error of a leaf from its statistics, as every regression kernel counts it.

A leaf with weight ``W``, weighted target sum ``S`` and weighted sum of squares ``Q`` costs
``Q - S**2 / W``, clipped at 0 and rounded to a multiple of ``1 / SSE_GRID``. The drivers
scale the targets so that a single leaf over all rows costs 1, so every cost lies in [0, 1]
and sums of rounded costs are exact: equal trees tie exactly, whatever order the rows were
summed in (repeated rows and integer weights then give the same tree).
"""

from __future__ import annotations

import numpy as np
from numba import njit

SSE_GRID = 2.0 ** 44


@njit(cache=True, nogil=True, inline="always")
def sse_cost(W, S, Q):
    """Squared error of a leaf with statistics ``(W, S, Q)`` on the grid; 0 when empty."""
    if W <= 0.0:
        return 0.0
    c = Q - S * S / W
    if c <= 0.0:
        return 0.0
    return np.floor(c * SSE_GRID + 0.5) / SSE_GRID
