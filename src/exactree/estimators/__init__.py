"""scikit-learn estimators, one thin class per model family."""

from .base import TreeClassifierBase
from .optimal import OptimalTreeClassifier, PathPoint

__all__ = ["OptimalTreeClassifier", "PathPoint", "TreeClassifierBase"]
