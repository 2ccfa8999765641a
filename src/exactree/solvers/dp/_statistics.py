"""Node statistics of the ordered search's kernels, chosen by the type of ``target``:

- ``None``: class weights, misclassification;
- a float array (the rows' targets): ``(W, S, Q) = (sum w, sum w*y, sum w*y**2)``, squared
  error with mean leaves;
- a ``(cost, row_cost)`` tuple (a user's :class:`~exactree.objectives.LeafCost`): class
  weights; the compiled ``cost(a, b, K, split)`` gives the cost of a leaf with class weights
  ``a`` (``split`` 0) or of the two leaves ``a`` and ``b - a`` (``split`` 1).

Numba compiles each kernel once per type of ``target`` (every user objective has the same
type, a function pointer, so one compiled kernel serves them all and loads from the cache);
Numba prunes the ``target is None`` branches at compile time, so the misclassification code is
what it was; the other two are told apart by overloads (chosen by type at compile time, and
inlined as Numba IR: functions compiled apart would be calls in the sweeps' inner loops).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from .._squared_error import sse_cost
from ._depth2 import leaf_cost


def _kind(target) -> str:
    """Which statistics a kernel typed with ``target`` (not None) keeps, at compile time."""
    return "squared" if isinstance(target, types.Array) else "custom"


@njit(cache=True, inline="always")
def add(acc, s, k, w, r, target):
    """Add row ``r`` (class ``k``, weight ``w``) to the statistics ``acc[s]``."""
    if target is None:
        acc[s, k] += w
    else:
        _add(acc, s, k, w, r, target)


@njit(cache=True, inline="always")
def leaf(tot_s, target):
    """Cost of one leaf with statistics ``tot_s``."""
    if target is None:
        return leaf_cost(tot_s)
    return _leaf(tot_s, target)


@njit(cache=True, inline="always")
def split_cost(pre, tot, s, target):
    """Cost of two leaves: statistics ``pre[s]`` and ``tot[s] - pre[s]``."""
    if target is not None:
        return _split_cost(pre, tot, s, target)
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


@njit(cache=True, inline="always")
def width(target, n_classes):
    """Statistics per node: the class count, or 3 for squared error."""
    if target is None:
        return n_classes
    return _width(target, n_classes)


@njit(cache=True, inline="always")
def row_cost(target, rows, n):
    """The most one unit of weight moved into or out of a node of rows ``rows[:n]`` can change
    its subtrees' optimal costs by (the moved-weight bounds scale weights by it): 1 for
    misclassification, the squared range of the node's targets for squared error, the user's
    ``row_cost`` for a custom objective."""
    if target is None:
        return 1.0
    return _row_cost(target, rows, n)


@njit(cache=True, inline="always")
def skip_weight(target, gap):
    """Weight the rows after a split that costs ``gap`` more than the best must move before
    another split of the same sweep can beat it (the misclassification kernels have a sharper
    rule): a moved row changes the two leaves' costs by its weight times ``row_cost`` at most.
    Squared error skips nothing (-1: its bound, the squared range of the node's targets, is
    too loose to pay)."""
    if target is None:
        return -1.0
    return _skip_weight(target, gap)


@njit(cache=True, inline="always")
def _range_squared(target, rows, n):
    if n == 0:
        return 0.0
    lo = np.inf
    hi = -np.inf
    for t in range(n):
        y = target[rows[t]]
        lo = min(lo, y)
        hi = max(hi, y)
    return (hi - lo) * (hi - lo)


def _add(acc, s, k, w, r, target):
    pass


def _leaf(tot_s, target):
    pass


def _split_cost(pre, tot, s, target):
    pass


def _width(target, n_classes):
    pass


def _row_cost(target, rows, n):
    pass


def _skip_weight(target, gap):
    pass


@overload(_add, inline="always")
def _add_other(acc, s, k, w, r, target):
    if _kind(target) == "squared":
        def squared(acc, s, k, w, r, target):
            y = target[r]
            acc[s, 0] += w
            acc[s, 1] += w * y
            acc[s, 2] += w * y * y
        return squared

    def classes(acc, s, k, w, r, target):
        acc[s, k] += w
    return classes


@overload(_leaf, inline="always")
def _leaf_other(tot_s, target):
    if _kind(target) == "squared":
        return lambda tot_s, target: sse_cost(tot_s[0], tot_s[1], tot_s[2])
    return lambda tot_s, target: target[0](tot_s.ctypes, tot_s.ctypes, tot_s.shape[0], 0)


@overload(_split_cost, inline="always")
def _split_cost_other(pre, tot, s, target):
    if _kind(target) == "squared":
        return lambda pre, tot, s, target: (
            sse_cost(pre[s, 0], pre[s, 1], pre[s, 2])
            + sse_cost(tot[s, 0] - pre[s, 0], tot[s, 1] - pre[s, 1], tot[s, 2] - pre[s, 2]))
    return lambda pre, tot, s, target: target[0](pre[s].ctypes, tot[s].ctypes, pre.shape[1], 1)


@overload(_width, inline="always")
def _width_other(target, n_classes):
    if _kind(target) == "squared":
        return lambda target, n_classes: 3
    return lambda target, n_classes: n_classes


@overload(_row_cost, inline="always")
def _row_cost_other(target, rows, n):
    if _kind(target) == "squared":
        return lambda target, rows, n: _range_squared(target, rows, n)
    return lambda target, rows, n: target[1]


@overload(_skip_weight, inline="always")
def _skip_weight_other(target, gap):
    if _kind(target) == "squared":
        return lambda target, gap: -1.0
    return lambda target, gap: gap / target[1] if target[1] > 0.0 else np.inf
