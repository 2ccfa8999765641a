"""exactree: provably optimal decision trees with a scikit-learn API."""

from .data import load_anneal, load_demo
from .estimators import OptimalTreeClassifier, TreeClassifierBase
from .tree import Tree, export_graphviz, export_text

__version__ = "0.1.0"

__all__ = ["OptimalTreeClassifier", "Tree", "TreeClassifierBase", "export_graphviz", "export_text", "load_anneal",
           "load_demo"]
