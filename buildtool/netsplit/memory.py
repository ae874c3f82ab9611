"""Peak activation RAM of an int8 split network, as our planner measures it (no TensorFlow).

`peaks` plans the .tflite layer by layer with the default order search (`plain`), with
optimize=ram (`optimized`: operator splitting / patch-based fusion), and layer by layer in three
fixed orders: the converter's (`converter`), one branch at a time (`branch`: depth first, each
branch run to its end before the next starts) and one layer of every branch at a time (`layer`:
breadth first). The branches of a split block are independent, so `branch` keeps one branch's
intermediates alive; the order search must find an order at least as good (tests check it).

`peaks_isolated` plans in a fresh Python process: OR-Tools' CP-SAT solver (the exact arena packer)
crashes in a process where TensorFlow's converter has run, so the netsplit driver plans there.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ..errors import BuildtoolError, InternalError
from ..model.ir import Graph


def _consumers(g: Graph) -> dict:
    out = {}
    for op in g.operators:
        for t in op.inputs:
            if t >= 0:
                out.setdefault(t, []).append(op.index)
    return out


def topo_order(g: Graph, depth_first: bool) -> list:
    """A topological order: the most recently readied operator first (depth first: one branch to
    its end) or the earliest readied first (breadth first: the branches interleaved)."""
    producer = {t: op.index for op in g.operators for t in op.outputs}
    waiting = {op.index: len({t for t in op.inputs if t in producer}) for op in g.operators}
    users = _consumers(g)
    ready = [i for i, n in sorted(waiting.items()) if n == 0]
    order = []
    while ready:
        i = ready.pop() if depth_first else ready.pop(0)
        order.append(i)
        fresh = []
        for t in g.operators[i].outputs:
            for u in users.get(t, []):
                waiting[u] -= 1
                if waiting[u] == 0:
                    fresh.append(u)
        ready += sorted(set(fresh), reverse=depth_first)
    return order


def reordered(g: Graph, order: list) -> Graph:
    """g with its operators in this order (renumbered)."""
    ops = [dataclasses.replace(g.operators[i], index=k) for k, i in enumerate(order)]
    return dataclasses.replace(g, operators=ops)


def _arena(g: Graph, **options) -> int | None:
    from ..options import PlanOptions  # (here: the planner loads OR-Tools, which crashes where TensorFlow
    from ..steps.plan import plan_memory  # has run: only the child process plans)

    try:
        return plan_memory(g, PlanOptions.from_map(options)).arena_bytes
    except BuildtoolError:
        return None  # a plan this optimiser cannot make: shown as n/a


def peaks(model_bytes: bytes) -> dict:
    """{plain, optimized, converter, branch, layer}: arena bytes of each plan (None: no plan)."""
    from ..model.reader import parse  # (in the planning child process: see the module's docstring)

    g = parse(model_bytes, name="netsplit")
    fixed = {"order_search": False}
    return {"plain": _arena(g), "optimized": _arena(g, optimize="ram"),
            "converter": _arena(g, **fixed),
            "branch": _arena(reordered(g, topo_order(g, True)), **fixed),
            "layer": _arena(reordered(g, topo_order(g, False)), **fixed)}


def peaks_isolated(model_bytes: bytes) -> dict:
    """peaks(model_bytes), computed in a child process (see the module's docstring)."""
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    with tempfile.TemporaryDirectory(prefix="netsplit-") as d:
        path = os.path.join(d, "model.tflite")
        Path(path).write_bytes(model_bytes)
        p = subprocess.run([sys.executable, "-m", "buildtool.netsplit.memory", path], capture_output=True,
                           text=True, env=env, timeout=3600)
    if p.returncode != 0:
        raise InternalError(f"planning the int8 split model failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(p.stdout)


if __name__ == "__main__":
    print(json.dumps(peaks(Path(sys.argv[1]).read_bytes())))
