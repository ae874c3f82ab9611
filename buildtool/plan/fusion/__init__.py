"""Memory optimisers: operator splitting and patch-based multi-stage fusion.

planner.plan_fused() is the one entry point; execute.run_fused() runs the result in numpy.

The modules, each importing only those before it: geometry (receptive fields, block shapes,
per-axis intervals) <- costs (MACs, window and accumulator bytes, the Sweep of a block's tilings)
<- dag (the network as a DAG of cuts) <- schedule (the IR: BlockRun, Schedule, FusedPlan)
<- instructions, lifetimes (buffer lifetimes) <- pipeline (pipelined pairs) <- search, split
<- groups <- planner; execute (the tile executor) runs a FusedPlan.

This file imports nothing: reading a fused plan back (schedule, lifetimes, execute) never loads
the search, so a step that only reads plans does not depend on the planner's code
(steps.sources, imports.closure). Import each name from the module that owns it.
"""
