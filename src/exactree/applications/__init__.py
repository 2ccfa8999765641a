"""Applications of the proper-tree search beyond classification (He & Little, section 4):
minimal BSP auto-partitions of 2-D segments and optimal K-D trees."""

from .bsp import BSPTree, optimal_bsp, permutation_bsp_size
from .kdtree import KDTree, balanced_leaves, optimal_kdtree

__all__ = ["BSPTree", "KDTree", "balanced_leaves", "optimal_bsp", "optimal_kdtree",
           "permutation_bsp_size"]
