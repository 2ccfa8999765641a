"""scikit-learn estimators, one thin class per model family (each imported on first use)."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(__name__, {
    "TreeClassifierBase": ".base", "DyadicPathEntry": ".dyadic", "DyadicTreeClassifier": ".dyadic",
    "ObliqueTreeClassifier": ".oblique", "ObliqueTreeRegressor": ".oblique",
    "OptimalTreeClassifier": ".optimal",
    "OptimalTreeRegressor": ".regressor", "TreeEstimatorBase": ".base",
    "PathPoint": "._path", "SparseTreeClassifier": ".sparse",
})
