"""``now()``: the seconds of ``time.perf_counter`` read from inside Numba kernels; ``late()``:
whether a long step of a kernel should stop for its deadline.

On Linux ``time.perf_counter`` is ``clock_gettime(CLOCK_MONOTONIC)``, which a kernel can call
directly: that compiles into the cached kernel. Elsewhere the kernel calls back into Python
(object mode), which Numba cannot cache, so it compiles once per process on first use.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from numba import njit, objmode, types

if sys.platform.startswith("linux"):
    from llvmlite import ir
    from numba.core import cgutils
    from numba.extending import intrinsic

    _CLOCK_MONOTONIC = 1  # <time.h> on Linux

    @intrinsic
    def _monotonic(typingctx):
        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            timespec = ir.LiteralStructType([i64, i64])  # tv_sec, tv_nsec
            ts = cgutils.alloca_once(builder, timespec)
            fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32), timespec.as_pointer()])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "clock_gettime")
            builder.call(fn, [ir.Constant(ir.IntType(32), _CLOCK_MONOTONIC), ts])
            sec = builder.sitofp(builder.load(cgutils.gep_inbounds(builder, ts, 0, 0)),
                                 ir.DoubleType())
            nsec = builder.sitofp(builder.load(cgutils.gep_inbounds(builder, ts, 0, 1)),
                                  ir.DoubleType())
            return builder.fadd(sec, builder.fmul(nsec, ir.Constant(ir.DoubleType(), 1e-9)))

        return types.float64(), codegen

    @njit(cache=True, nogil=True)
    def now():
        return _monotonic()

else:  # pragma: no cover - exercised on other platforms only

    @njit(cache=True)
    def now():
        with objmode(t="float64"):
            t = time.perf_counter()
        return t


# Steps over at least this many rows look at the clock inside (after each feature): one over
# 300,000 rows, such as a node's depth-one sweep or histogram solve, takes a quarter of a
# second or more, while on small nodes the look would cost more than it saves.
LATE_ROWS = 4096


@njit(cache=True, inline="always")
def late(n, deadline):
    """Whether a step over ``n`` rows should stop now: a large one, past ``deadline``."""
    return n >= LATE_ROWS and deadline < np.inf and now() > deadline
