"""MurTree: optimal depth- and size-limited classification trees by dynamic programming and
branch-and-bound over binary features (:class:`~exactree.solvers.dp.solver.DPSolver`)."""
