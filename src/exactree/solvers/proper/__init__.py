"""Proper decision trees with arbitrary splitting rules (He & Little).

Rule families (axis-parallel, hyperplane, polynomial hypersurface, mixed) are data:
:func:`make_rules` lists candidate rules with their sides and defining points, the ancestry
matrix (Definition 2.2) relates them, :func:`sodt` solves the tree over K fixed rules and
:func:`odt` the best tree over all K-combinations.
"""

from .rules import (AXIS, HYPERPLANE, POLYNOMIAL, RuleSet, ancestry_matrix, estimate_rule_count,
                    make_rules, monomial_powers, splits)
from .search import (ODTResult, PointData, build_tree, odt, odt_generic, point_data, sodt,
                     sodt_generic, solve_proper)

__all__ = ["AXIS", "HYPERPLANE", "POLYNOMIAL", "ODTResult", "PointData", "RuleSet",
           "ancestry_matrix", "build_tree", "estimate_rule_count", "make_rules",
           "monomial_powers", "odt", "odt_generic", "point_data", "sodt", "sodt_generic",
           "solve_proper", "splits"]
