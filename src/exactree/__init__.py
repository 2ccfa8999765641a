"""exactree: provably optimal decision trees with a scikit-learn API."""

from .applications import BSPTree, KDTree, optimal_bsp, optimal_kdtree
from .data import load_anneal, load_demo
from .estimators import (
    DyadicPathEntry,
    DyadicTreeClassifier,
    ObliqueTreeClassifier,
    OptimalTreeClassifier,
    PathPoint,
    SparseTreeClassifier,
    TreeClassifierBase,
)
from .tree import Tree, export_graphviz, export_text
from .tree.compiled import CompiledTree, compile_tree

__version__ = "0.1.0"

__all__ = [
    "BSPTree", "CompiledTree", "DyadicPathEntry", "DyadicTreeClassifier", "KDTree",
    "ObliqueTreeClassifier", "OptimalTreeClassifier", "PathPoint", "SparseTreeClassifier", "Tree",
    "TreeClassifierBase", "compile_tree", "export_graphviz", "export_text", "load_anneal",
    "load_demo", "optimal_bsp", "optimal_kdtree",
]
