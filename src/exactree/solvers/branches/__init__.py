"""BRANCHES (Chaouki et al.): optimal sparse trees with native multiway categorical splits.

Minimises ``weighted misclassification rate + penalty * (number of splits)`` by best-first value
iteration over branches with purification bounds, Bellman updates and a memo of branches in
canonical (sorted-literal) form, and proves optimality when the root branch becomes complete.
"""

from .search import Codes, FeatureMap, memory_need, solve

__all__ = ["Codes", "FeatureMap", "memory_need", "solve"]
