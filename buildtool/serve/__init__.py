"""Serving plans: the local and team-wide plan caches, the plan request, the planner daemon."""
