"""Leaf objectives: how much a leaf costs given the statistics of the rows that reach it.

An objective is one object with the hooks a solver needs; register it once by name. Solvers
whose kernels are specialised (the Numba searches) declare which objectives they support and
look them up here for everything outside the kernel (leaf labels, reporting).

Classification objectives take a leaf's class weights as its statistics. :class:`SquaredError`
(regression) takes ``(weight, weighted sum of y, weighted sum of y**2)``; its statistics add
row by row and over disjoint nodes, and its ``kernel_code`` tells the Numba kernels which leaf
cost to compile in (kernels take an integer code, never a Python function: Numba cannot cache
kernels that take functions as arguments).
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import numpy as np


class Objective(Protocol):
    """What every objective supplies (regression objectives take ``(W, S, Q)`` statistics
    instead of class weights, and bound from the targets and groups of equal rows: see
    :class:`SquaredError`)."""

    name: str

    def leaf_costs(self, class_weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For rows of leaf statistics ``(m, K)``: each leaf's cost and its prediction (the
        label achieving it; ties go to the smallest class index)."""
        ...

    def lower_bound(self, class_weights: np.ndarray) -> float:
        """A cost no tree can beat on data with these class totals (0 for misclassification)."""
        ...


#: Kernel codes of the objectives the Numba searches compile in.
KERNEL_MISCLASSIFICATION, KERNEL_SQUARED_ERROR = 0, 1


class Misclassification:
    """Weighted misclassification: a leaf costs the weight of the rows not in its majority class."""

    name = "misclassification"
    kernel_code = KERNEL_MISCLASSIFICATION

    def leaf_costs(self, class_weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cw = np.atleast_2d(np.asarray(class_weights, np.float64))
        label = np.argmax(cw, axis=1)
        return cw.sum(axis=1) - cw[np.arange(len(cw)), label], label

    def lower_bound(self, class_weights: np.ndarray) -> float:
        return 0.0


class CostSensitive:
    """Leaf label ``c`` costs ``sum_k w_k * loss[k, c]`` for true class ``k``."""

    name = "cost_sensitive"

    def __init__(self, loss: np.ndarray) -> None:
        loss = np.asarray(loss, np.float64)
        if loss.ndim != 2 or loss.shape[0] != loss.shape[1]:
            raise ValueError("loss must be a square (n_classes x n_classes) matrix")
        if not np.all(np.isfinite(loss)) or np.any(loss < 0):
            raise ValueError("loss must be finite and non-negative")
        self.loss = loss

    def leaf_costs(self, class_weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        costs = np.atleast_2d(np.asarray(class_weights, np.float64)) @ self.loss
        label = np.argmin(costs, axis=1)
        return costs[np.arange(len(costs)), label], label

    def lower_bound(self, class_weights: np.ndarray) -> float:
        return float(np.asarray(class_weights) @ self.loss.min(axis=1))


class SquaredError:
    """Weighted sum of squared errors with mean leaves (regression).

    A leaf's statistics are ``(W, S, Q) = (sum w, sum w*y, sum w*y**2)`` over its rows; they
    add over rows and over disjoint leaves. Its prediction is the weighted mean ``S / W`` and
    its cost ``Q - S**2 / W`` (0 for an empty leaf). A subset of rows never costs more than
    its superset (the superset's mean is one candidate for the subset), which the searches'
    bounds rely on.
    """

    name = "squared_error"
    kernel_code = KERNEL_SQUARED_ERROR
    n_statistics = 3

    @staticmethod
    def statistics(y: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Per-row statistics ``(n, 3)``: ``w``, ``w*y`` and ``w*y**2``."""
        y = np.asarray(y, np.float64)
        w = np.asarray(w, np.float64)
        return np.column_stack([w, w * y, w * y * y])

    @staticmethod
    def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Statistics of the union of two disjoint sets of rows."""
        return np.asarray(a, np.float64) + np.asarray(b, np.float64)

    def leaf_costs(self, stats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For rows of statistics ``(m, 3)``: each leaf's squared error and its prediction (the
        weighted mean; 0 for an empty leaf). Costs are clipped at 0 (rounding)."""
        st = np.atleast_2d(np.asarray(stats, np.float64))
        W, S, Q = st[:, 0], st[:, 1], st[:, 2]
        mean = np.divide(S, W, out=np.zeros_like(S), where=W > 0)
        return np.maximum(Q - S * mean, 0.0), mean

    @staticmethod
    def cost(y: np.ndarray, w: np.ndarray) -> float:
        """Squared error of one leaf holding rows ``y`` with weights ``w``, computed around the
        mean (two passes: exact where ``Q - S**2 / W`` would cancel)."""
        y = np.asarray(y, np.float64)
        w = np.asarray(w, np.float64)
        if not len(y) or w.sum() <= 0:
            return 0.0
        mean = float(w @ y) / float(w.sum())
        return float(w @ (y - mean) ** 2)

    def lower_bound(self, y: np.ndarray, w: np.ndarray, groups: np.ndarray | None = None) -> float:
        """A squared error no tree can beat: rows in one group of ``groups`` (rows equal in
        every feature) always share a leaf, so each group costs at least its own squared error
        around its mean (the equivalent-points bound). 0 without groups."""
        if groups is None or not len(y):
            return 0.0
        groups = np.asarray(groups).ravel()
        y = np.asarray(y, np.float64)
        w = np.asarray(w, np.float64)
        W = np.bincount(groups, weights=w)
        mean = np.bincount(groups, weights=w * y) / np.where(W > 0, W, 1.0)
        return float(w @ (y - mean[groups]) ** 2)


def _numba_reason(error: Exception) -> str:
    """The first lines of a Numba error, without terminal colours."""
    lines = [ln.strip() for ln in re.sub(r"\x1b\[[0-9;]*m", "", str(error)).splitlines()]
    return " ".join(ln for ln in lines[:3] if ln)


class _CompiledCost:
    """What the objectives written in Python share: their functions (the public attributes
    named in ``_fields``) are compiled by ``_compile`` when the object is created; copies share
    the compiled code, an unpickled object compiles again (compiled functions do not pickle)."""

    _fields: tuple[str, ...] = ()

    def _compile(self) -> None:
        raise NotImplementedError

    def __getstate__(self) -> dict:
        return {name: getattr(self, name) for name in self._fields}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._compile()

    def __deepcopy__(self, memo: dict) -> _CompiledCost:
        twin = type(self).__new__(type(self))  # shares the compiled functions (immutable)
        twin.__dict__.update(self.__dict__)
        return twin


class LeafCost(_CompiledCost):
    """A classification objective written in Python: what a leaf costs when it predicts class
    ``label`` and its rows have class weights ``weights``.

    ``cost(weights, label) -> float`` gets a float array with one weight per class (in the
    order of the estimator's ``classes_``) and a class index. Every leaf predicts its label
    of least cost (ties: the smallest index) and a tree costs the sum of its leaves' costs.
    The function is compiled with Numba (``numba.njit``; write it in the NumPy subset Numba
    supports) into the ordered search, so the optimum is proven as for misclassification,
    provided the cost keeps these promises, for every label and all weights:

    - it is finite and not negative;
    - it never decreases when a row joins the leaf (more weight of any class);
    - one unit of weight joining the leaf raises it by ``row_cost`` at most.

    The search's bounds rest on the last two (a subtree never costs less with more rows, and
    a row moved between two subtrees changes their costs by ``row_cost`` times its weight at
    most); :meth:`check` tests them on random weights before a fit and names the first one
    broken. The function is compiled when the object is created (copies share it; an
    unpickled one compiles again). Misclassification is
    ``LeafCost(lambda w, c: w.sum() - w[c], row_cost=1.0)``; a loss matrix ``L`` (true class,
    label) is ``(w * L[:, c]).sum()`` with ``row_cost=L.max()``.
    """

    _fields = ("cost", "row_cost", "name")

    def __init__(self, cost: Any, row_cost: float, *, name: str = "leaf_cost") -> None:
        if not callable(cost):
            raise TypeError(f"cost must be a function cost(weights, label), got {cost!r}")
        if not (isinstance(row_cost, (int, float, np.number)) and np.isfinite(row_cost)
                and row_cost >= 0):
            raise ValueError(f"row_cost must be a finite number >= 0, got {row_cost!r}")
        self.cost = cost
        self.row_cost = row_cost
        self.name = name
        self._compile()

    def __repr__(self) -> str:
        return f"LeafCost({getattr(self.cost, '__name__', self.cost)!r}, row_cost={self.row_cost})"

    def _compile(self) -> None:
        """Compile ``cost`` (for a float array and an int) and the search's entry to it, now
        rather than inside a fit's time limit (about a second); raise TypeError if Numba
        cannot."""
        from numba import carray, cfunc, njit, types
        from numba.core.dispatcher import Dispatcher
        from numba.core.errors import NumbaError

        cost = self.cost if isinstance(self.cost, Dispatcher) else njit(self.cost)

        @njit
        def least(w):
            best = np.inf
            for c in range(w.shape[0]):
                best = min(best, cost(w, c))
            return best

        def leaf(a, b, K, split):
            A = carray(a, K)
            if not split:
                return least(A)
            B = carray(b, K)
            return least(A) + least(B - A)

        def first_broken(w, k, d, row_cost, tol):
            """(trial, label, promise) of the first promise broken (0: finite and not
            negative, 1: never less with more rows, 2: row_cost) on the weights ``w[t]`` and
            ``w[t]`` with ``d[t]`` more of class ``k[t]``; (-1, -1, -1) when none is."""
            for t in range(w.shape[0]):
                more = w[t].copy()
                more[k[t]] += d[t]
                for c in range(w.shape[1]):
                    a = cost(w[t], c)
                    b = cost(more, c)
                    if not (np.isfinite(a) and a >= -tol):
                        return t, c, 0
                    if b < a - tol:
                        return t, c, 1
                    if b - a > row_cost * d[t] + tol:
                        return t, c, 2
            return -1, -1, -1

        sig = types.float64(types.CPointer(types.float64), types.CPointer(types.float64),
                            types.int64, types.int64)
        try:
            self._jitted, self._leaf = cost, cfunc(sig)(leaf)
            self._first_broken = njit("UniTuple(int64, 3)(float64[:, ::1], int64[::1], "
                                      "float64[::1], float64, float64)")(first_broken)
        except NumbaError as error:
            raise TypeError(f"{self!r}: Numba cannot compile cost(weights, label) for a float "
                            f"array and an int: {_numba_reason(error)}") from None

    def kernel_target(self) -> tuple[Any, float]:
        """The ordered search's ``fn``: the compiled ``leaf(a, b, K, split)``, the least cost
        over labels of the class weights ``a`` (pointers to ``K`` floats) plus, when ``split``
        is 1, that of ``b - a``; and ``row_cost``."""
        return self._leaf, float(self.row_cost)

    def leaf_costs(self, class_weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For rows of class weights ``(m, K)``: each leaf's least cost and its label."""
        cw = np.atleast_2d(np.asarray(class_weights, np.float64))
        cost = self._jitted
        costs = np.array([[cost(np.ascontiguousarray(w), c) for c in range(cw.shape[1])]
                          for w in cw]).reshape(len(cw), cw.shape[1])
        label = np.argmin(costs, axis=1)
        return costs[np.arange(len(cw)), label], label

    def lower_bound(self, class_weights: np.ndarray) -> float:
        return 0.0

    def check(self, n_classes: int, total_weight: float, trials: int = 200,
              seed: int = 0) -> None:
        """Test the promises above on ``trials`` random class weights up to ``total_weight``;
        raise ValueError naming the first one broken (with the weights and label)."""
        rng = np.random.default_rng(seed)
        top = max(float(total_weight), 1.0)
        tol = 1e-9 * max(1.0, self.row_cost * top)
        w = rng.uniform(0, top, (trials, n_classes)) * (rng.random((trials, n_classes)) < 0.8)
        w[0] = 0.0
        k = rng.integers(n_classes, size=trials)
        d = rng.uniform(0, top / 4, trials)
        t, c, promise = self._first_broken(w, k, d, float(self.row_cost), tol)
        if t < 0:
            return
        more = w[t].copy()
        more[k[t]] += d[t]
        a, b = float(self._jitted(w[t], c)), float(self._jitted(more, c))
        if promise == 0:
            raise ValueError(f"{self!r}: cost({w[t].tolist()}, {c}) = {a}; it must be finite "
                             "and not negative")
        if promise == 1:
            raise ValueError(f"{self!r}: cost({more.tolist()}, {c}) = {b} is below "
                             f"cost({w[t].tolist()}, {c}) = {a}; a leaf must never cost less "
                             "with more rows")
        raise ValueError(f"{self!r}: adding weight {d[t]} of class {k[t]} to {w[t].tolist()} "
                         f"raises cost(., {c}) by {b - a}, more than row_cost * {d[t]}; raise "
                         "row_cost")


class RegressionLeafCost(_CompiledCost):
    """A regression objective written in Python: what a leaf costs given the total weight
    ``W``, the weighted sum of targets ``S`` and the weighted sum of squared targets ``Q`` of
    the rows that reach it.

    ``cost(W, S, Q) -> float`` is the leaf's cost, ``value(W, S, Q) -> float`` what it predicts
    (default: the weighted mean ``S / W``, 0 for no weight), and a tree costs the sum of its
    leaves' costs. Squared error with mean leaves is ``Q - S**2 / W``; with leaf values shrunk
    towards zero by an L2 penalty ``lam * v**2`` on each leaf's value ``v`` (as gradient-boosting
    libraries do), ``Q - S**2 / (W + lam)`` with value ``S / (W + lam)``. The functions are
    compiled with Numba into the ordered search, so the optimum is proven as for squared error,
    provided the cost keeps these promises for all rows with targets in any interval
    ``[lo, hi]``:

    - it is finite and not negative;
    - it never decreases when a row joins the leaf;
    - one unit of weight of a row with target in ``[lo, hi]`` joining a leaf whose targets all
      lie in ``[lo, hi]`` raises the cost by ``row_cost(lo, hi)`` at most (squared error:
      ``(hi - lo)**2``; the shrunk leaves above: ``(max(hi, 0) - min(lo, 0))**2``, since their
      value lies between 0 and the mean).

    The search's bounds rest on the last two (a subtree never costs less with more rows, and
    a row moved between two subtrees of a node changes their costs by ``row_cost`` of the
    node's target range times its weight at most); :meth:`check` tests them on random leaves
    of a fit's targets before the fit and names the first one broken. The functions are
    compiled when the object is created (copies share them; an unpickled one compiles again).
    """

    _fields = ("cost", "row_cost", "value", "name")

    def __init__(self, cost: Any, row_cost: Any, *, value: Any = None,
                 name: str = "regression_leaf_cost") -> None:
        for what, fn in (("cost(W, S, Q)", cost), ("row_cost(lo, hi)", row_cost),
                         ("value(W, S, Q)", value)):
            if not (callable(fn) or (fn is None and what.startswith("value"))):
                raise TypeError(f"{what.split('(')[0]} must be a function {what}, got {fn!r}")
        self.cost = cost
        self.row_cost = row_cost
        self.value = value
        self.name = name
        self._compile()

    def __repr__(self) -> str:
        return f"RegressionLeafCost({getattr(self.cost, '__name__', self.cost)!r})"

    def _compile(self) -> None:
        """Compile ``cost``, ``row_cost`` and ``value`` (for floats) and the search's entry to
        them; raise TypeError if Numba cannot."""
        from numba import carray, cfunc, njit, types
        from numba.core.dispatcher import Dispatcher
        from numba.core.errors import NumbaError

        def jit(fn: Any) -> Any:
            return fn if isinstance(fn, Dispatcher) else njit(fn)

        def mean(W, S, Q):
            return S / W if W > 0.0 else 0.0

        cost, bound = jit(self.cost), jit(self.row_cost)
        value = jit(mean if self.value is None else self.value)

        def leaf(a, b, K, mode):
            A = carray(a, 3)
            if mode == 2:  # the bound for targets in [a[0], a[1]]
                return bound(A[0], A[1])
            c = cost(A[0], A[1], A[2])
            if mode == 1:
                B = carray(b, 3)
                c += cost(B[0] - A[0], B[1] - A[1], B[2] - A[2])
            return c

        def first_broken(ys, ws, lo, hi, d, tol):
            """(trial, promise) of the first promise broken (0: finite and not negative, 1:
            never less with more rows, 2: row_cost) by the leaf of rows ``ys[t, :-1]`` (weights
            ``ws[t, :-1]``, zero weights absent) joined by row ``ys[t, -1]`` of weight ``d[t]``,
            targets in ``[lo[t], hi[t]]``; (-1, -1) when none is."""
            for t in range(ys.shape[0]):
                W = S = Q = 0.0
                for j in range(ys.shape[1] - 1):
                    W += ws[t, j]
                    S += ws[t, j] * ys[t, j]
                    Q += ws[t, j] * ys[t, j] * ys[t, j]
                y = ys[t, -1]
                a = cost(W, S, Q)
                b = cost(W + d[t], S + d[t] * y, Q + d[t] * y * y)
                if not (np.isfinite(a) and a >= -tol[t]):
                    return t, 0
                if not (np.isfinite(b) and b >= a - tol[t]):
                    return t, 1
                if b - a > bound(lo[t], hi[t]) * d[t] + tol[t]:
                    return t, 2
            return -1, -1

        sig = types.float64(types.CPointer(types.float64), types.CPointer(types.float64),
                            types.int64, types.int64)
        try:
            self._cost, self._value, self._bound = cost, value, bound
            self._leaf = cfunc(sig)(leaf)
            self._first_broken = njit("UniTuple(int64, 2)(float64[:, ::1], float64[:, ::1], "
                                      "float64[::1], float64[::1], float64[::1], "
                                      "float64[::1])")(first_broken)
        except NumbaError as error:
            raise TypeError(f"{self!r}: Numba cannot compile cost(W, S, Q), row_cost(lo, hi) "
                            f"and value(W, S, Q) for floats: {_numba_reason(error)}") from None

    def kernel_target(self) -> tuple[Any, float]:
        """The ordered search's ``fn``: the compiled ``leaf(a, b, K, mode)``: the cost of the
        statistics ``a`` (pointers to ``(W, S, Q)``; ``mode`` 0), plus that of ``b - a``
        (``mode`` 1), or ``row_cost(a[0], a[1])`` (``mode`` 2); and 0 (unused: the search
        asks for the bound of each node's targets)."""
        return self._leaf, 0.0

    def leaf_costs(self, stats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For rows of statistics ``(m, 3)`` (``W, S, Q``): each leaf's cost and value."""
        st = np.atleast_2d(np.asarray(stats, np.float64))
        costs = np.array([self._cost(*row) for row in st.tolist()], np.float64)
        values = np.array([self._value(*row) for row in st.tolist()], np.float64)
        return costs, values

    def check(self, y: np.ndarray, w: np.ndarray, trials: int = 200, seed: int = 0) -> None:
        """Test the promises above on ``trials`` random leaves of up to four of the targets
        ``y`` (weights up to the total of ``w``) and a row joining them, each within a random
        interval of the targets' range; raise ValueError naming the first one broken."""
        y = np.asarray(y, np.float64)
        rng = np.random.default_rng(seed)
        top = max(float(np.sum(w)), 1.0)
        lo, hi = (float(y.min()), float(y.max())) if len(y) else (0.0, 0.0)
        span = np.sort(rng.choice(y, (trials, 2)) if len(y) else np.zeros((trials, 2)), axis=1)
        span[0] = lo, hi  # the whole range and, in trial 0, an empty leaf
        ys = span[:, :1] + rng.random((trials, 5)) * (span[:, 1:] - span[:, :1])
        ws = rng.uniform(0, top / 4, (trials, 5)) * (rng.random((trials, 5)) < 0.7)
        ws[0] = 0.0
        d = rng.uniform(0, top / 4, trials)
        scale = np.abs(np.array([self._bound(a, b) for a, b in span.tolist()])) * top
        tol = 1e-9 * np.maximum(1.0, scale + np.max(np.abs(ys), axis=1) ** 2 * top)
        t, promise = self._first_broken(ys, ws, span[:, 0].copy(), span[:, 1].copy(), d, tol)
        if t < 0:
            return
        keep = ws[t, :-1] > 0
        rows = ", ".join(f"(y={a:.6g}, w={b:.6g})" for a, b in zip(ys[t, :-1][keep],
                                                                   ws[t, :-1][keep]))
        leaf = f"the leaf of rows [{rows}]"
        joined = f"row (y={ys[t, -1]:.6g}, w={d[t]:.6g})"
        if promise == 0:
            raise ValueError(f"{self!r}: {leaf} costs {self._leaf_cost(ys[t], ws[t])}; a cost "
                             "must be finite and not negative")
        if promise == 1:
            raise ValueError(f"{self!r}: {leaf} costs less with {joined} added; a leaf must "
                             "never cost less with more rows")
        raise ValueError(f"{self!r}: {joined} raises the cost of {leaf} by more than "
                         f"row_cost({span[t, 0]:.6g}, {span[t, 1]:.6g}) times its weight; "
                         "raise row_cost")

    def _leaf_cost(self, ys: np.ndarray, ws: np.ndarray) -> float:
        """The cost of the leaf of rows ``ys[:-1]`` with weights ``ws[:-1]``."""
        y, w = ys[:-1], ws[:-1]
        return float(self._cost(float(w.sum()), float(w @ y), float(w @ (y * y))))


_REGISTRY: dict[str, Objective] = {}


def register_objective(objective: Objective) -> None:
    """Make ``objective`` available by its ``name``."""
    _REGISTRY[objective.name] = objective


def get_objective(name: str) -> Objective:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown objective {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None


register_objective(Misclassification())
register_objective(SquaredError())
