"""Search algorithms. Each returns a :class:`SolveResult` holding a :class:`~exactree.tree.Tree`."""

from .result import SolveResult

__all__ = ["SolveResult"]
