"""Fit plumbing shared by the families (the planner today; see DESIGN.md for the rest)."""
