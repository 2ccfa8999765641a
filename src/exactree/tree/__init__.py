"""The flat-array :class:`Tree` every solver returns, its exports and its compiled form
(:mod:`exactree.tree.compiled`, imported on demand: it loads Numba kernels)."""

from .export import export_graphviz, export_text, from_json, to_json
from .tree import CATEGORICAL, LEAF, LINEAR, THRESHOLD, Tree, TreeBuilder

__all__ = ["CATEGORICAL", "LEAF", "LINEAR", "THRESHOLD", "Tree", "TreeBuilder", "export_graphviz",
           "export_text", "from_json", "to_json"]
