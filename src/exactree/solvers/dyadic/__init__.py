"""Optimal dyadic decision trees (Hush & Porter 2010): memoised recursion with look-ahead
pruning, rectangle hashing, automatic ``k``, compression and the complete penalty path."""

from .path import SEARCHES, PathResult, compute_path, original_list_size
from .search import (DyadicProblem, DyadicSolution, build_tree, estimate_rectangles,
                     greedy_leaf_bound, prepare, solve)

__all__ = ["SEARCHES", "DyadicProblem", "DyadicSolution", "PathResult", "build_tree",
           "compute_path", "estimate_rectangles", "greedy_leaf_bound", "original_list_size",
           "prepare", "solve"]
