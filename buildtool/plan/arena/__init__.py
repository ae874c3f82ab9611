"""Arena planning: liveness, lower bound, packers, exact solver, order search, checker.

planner.plan_arena() plans; naive.naive_plan() is the no-reuse baseline; checker.check()/problems()
is the independent checker; execute runs a plan in numpy; regional spreads an arena over memories.
This file imports nothing: importing one part (the checker, the packers) never loads the planner and
its solver. Import each name from the module that owns it.
"""
