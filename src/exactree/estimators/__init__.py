"""scikit-learn estimators, one thin class per model family."""

from .base import TreeClassifierBase
from .dyadic import DyadicPathEntry, DyadicTreeClassifier
from .oblique import ObliqueTreeClassifier
from .optimal import OptimalTreeClassifier, PathPoint
from .sparse import SparseTreeClassifier

__all__ = ["DyadicPathEntry", "DyadicTreeClassifier", "ObliqueTreeClassifier",
           "OptimalTreeClassifier", "PathPoint", "SparseTreeClassifier", "TreeClassifierBase"]
