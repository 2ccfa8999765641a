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

from typing import Protocol

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
