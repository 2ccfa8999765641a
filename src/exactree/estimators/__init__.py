"""scikit-learn estimators, one thin class per model family."""

from .base import TreeClassifierBase

__all__ = ["TreeClassifierBase"]
