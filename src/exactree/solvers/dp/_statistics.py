"""Node statistics of the ordered search's kernels: class weights (misclassification), or
``(W, S, Q) = (sum w, sum w*y, sum w*y**2)`` when a ``target`` array is given (squared error with
mean leaves). A user's objective (``fn``, a ``(cost, row_cost)`` tuple from
:meth:`exactree.objectives.LeafCost.kernel_target`, else None) keeps class weights and costs a
leaf by its compiled ``cost(a, b, K, split)``: the leaf of class weights ``a`` (``split`` 0), or
the two leaves ``a`` and ``b - a`` (``split`` 1); with a ``target`` it costs the statistics
``(W, S, Q)`` (:class:`exactree.objectives.RegressionLeafCost`). Numba compiles each function for the types of
``target`` and ``fn`` and prunes the other branches (every user objective has the same type, a
function pointer, so one compiled kernel serves them all and loads from the cache)."""

from __future__ import annotations

from numba import njit

from .._squared_error import sse_cost
from ._depth2 import leaf_cost


@njit(cache=True, inline="always")
def add(acc, s, k, w, r, target):
    """Add row ``r`` (class ``k``, weight ``w``) to the statistics ``acc[s]``."""
    if target is None:
        acc[s, k] += w
    else:
        y = target[r]
        acc[s, 0] += w
        acc[s, 1] += w * y
        acc[s, 2] += w * y * y


@njit(cache=True, inline="always")
def leaf(tot_s, target, fn):
    """Cost of one leaf with statistics ``tot_s``."""
    if fn is not None:
        return fn[0](tot_s.ctypes, tot_s.ctypes, tot_s.shape[0], 0)
    if target is None:
        return leaf_cost(tot_s)
    return sse_cost(tot_s[0], tot_s[1], tot_s[2])


@njit(cache=True, inline="always")
def split_cost(pre, tot, s, target, fn):
    """Cost of two leaves: statistics ``pre[s]`` and ``tot[s] - pre[s]`` (misclassification:
    class weights)."""
    if fn is not None:
        return fn[0](pre[s].ctypes, tot[s].ctypes, pre.shape[1], 1)
    if target is not None:
        return (sse_cost(pre[s, 0], pre[s, 1], pre[s, 2])
                + sse_cost(tot[s, 0] - pre[s, 0], tot[s, 1] - pre[s, 1], tot[s, 2] - pre[s, 2]))
    t1 = 0.0
    m1 = 0.0
    t2 = 0.0
    m2 = 0.0
    for k in range(pre.shape[1]):
        a = pre[s, k]
        b = tot[s, k] - a
        t1 += a
        t2 += b
        if a > m1:
            m1 = a
        if b > m2:
            m2 = b
    return (t1 - m1) + (t2 - m2)
