"""exactree: provably optimal decision trees with a scikit-learn API.

Public names are imported on first use (see :mod:`exactree._lazy`).
"""

from ._lazy import attach

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = attach(__name__, {
    "BSPTree": ".applications", "KDTree": ".applications", "optimal_bsp": ".applications",
    "optimal_kdtree": ".applications",
    "MemoryLimitError": ".limits", "HighCardinalityWarning": ".data.columns",
    "load_anneal": ".data", "load_demo": ".data", "LeafCost": ".objectives",
    "RegressionLeafCost": ".objectives",
    "DyadicPathEntry": ".estimators", "DyadicTreeClassifier": ".estimators",
    "ObliqueTreeClassifier": ".estimators", "ObliqueTreeRegressor": ".estimators",
    "OptimalTreeClassifier": ".estimators", "OptimalTreeRegressor": ".estimators",
    "PathPoint": ".estimators", "SparseTreeClassifier": ".estimators",
    "TreeClassifierBase": ".estimators",
    "Tree": ".tree", "export_graphviz": ".tree", "export_text": ".tree",
    "CompiledTree": ".tree.compiled", "compile_tree": ".tree.compiled",
    "plot_partition": ".plotting", "plot_path": ".plotting", "plot_tree": ".plotting",
})
