"""Leaf objectives: how much a leaf costs given the (weighted) classes that reach it.

An objective is one object with the hooks a solver needs; register it once by name. Solvers
whose kernels are specialised (the Numba searches) declare which objectives they support and
look them up here for everything outside the kernel (leaf labels, reporting).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Objective(Protocol):
    name: str

    def leaf_costs(self, class_weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For rows of class weights ``(m, K)``: each leaf's cost and the label achieving it.
        Ties go to the smallest class index."""
        ...

    def lower_bound(self, class_weights: np.ndarray) -> float:
        """A cost no tree can beat on data with these class totals (0 for misclassification)."""
        ...


class Misclassification:
    """Weighted misclassification: a leaf costs the weight of the rows not in its majority class."""

    name = "misclassification"

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
