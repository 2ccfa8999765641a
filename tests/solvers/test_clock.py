"""The kernels' clock reads the same seconds as ``time.perf_counter`` (deadlines are set there)."""

import time

from exactree.solvers._clock import now


def test_kernel_clock_is_perf_counter():
    for _ in range(3):
        before = time.perf_counter()
        t = now()
        after = time.perf_counter()
        assert before <= t <= after
