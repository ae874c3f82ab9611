"""`buildtool plan`: the arena plan as one summary line (or JSON). It prints from the plan's JSON alone:
a warm daemon hit formats its answer without importing a planner."""

from __future__ import annotations

import json
import sys

from ..units import count, exact, size, size_exact
from .common import MODEL_HELP, add_plan_options, load_model, request_plan


def _sayplacement_of(a, plan_json: dict) -> None:
    """`plan --board B`: one line per memory region the placement uses (bytes used / size)."""
    from .. import targets  # (only with --board: the boards, the plan read back, numpy; `plan --help` stays light)
    from ..plan import kinds, regions  # (as targets)

    g, t = load_model(a.model), targets.get(a.board)
    for line in regions.describe(regions.place(g, regions.place_arena(g, kinds.plan_from_json(plan_json, g), t), t)):
        print(f"  {line}")


def _print(text: str, err: bool = False) -> None:
    print(text, file=sys.stderr if err else sys.stdout)


def cmd_plan(a, say=_print) -> int:
    """say(text, err): where the lines go (the daemon collects them for a client's command line)."""
    from ..steps.models import model_name  # (a model argument's name: numpy and the zoo; `plan --help` stays light)

    if a.board:
        from .. import targets  # (as in _sayplacement_of)

        targets.get(a.board)  # an unknown board is refused before planning
    r = request_plan(a)
    plan = r["plan"]
    name = model_name(a.model)  # a zoo name whole: mbv2-w0.35
    _say_tradeoff(name, plan, say)
    if a.json:
        out = dict(plan)
        if r["via_daemon"]:
            out["cache"], out["plan_ms"] = r["cache"], r["plan_ms"]
        say(json.dumps(out, indent=1))
        return 0
    bound = exact(plan["lower_bound_bytes"])
    if "mac_overhead" in plan:  # printed from the plan's JSON alone: no fusion or numpy import
        acc = "input streamed" if plan.get("input_accounting") == "streamed" else "input in the arena"
        arena = size_exact(plan["arena_bytes"], f"{acc}, residuals counted", f"search bound {bound}")
        say(f"{name}: arena {arena}; {count(plan['macs'])} MACs = {plan['mac_overhead']:.3f} x unfused; "
            f"{len(plan.get('fusion_blocks', []))} fusion blocks, {len(plan.get('splits', []))} split regions")
    else:
        arena = size_exact(plan["arena_bytes"], f"lower bound {bound}, "
                           f"{'optimal' if plan['optimal'] else 'not proven optimal'}, planner {plan['planner']}")
        say(f"{name}: arena {arena}; activations total {size(plan['total_activation_bytes'])}; "
            f"{count(plan['macs'])} MACs; params {size(plan['params_bytes'])}")
    if a.board:
        _sayplacement_of(a, plan)
    return 0


def _say_tradeoff(name: str, plan: dict, say=_print) -> None:
    """One line on stderr when the MAC cap made a difference (the plan JSON holds the figures)."""
    t = plan.get("tradeoff")  # (formatted here: a warm daemon hit imports no planner)
    if not t:
        return
    a, o = plan["arena_bytes"], t["arena_bytes"]
    pct = f"{(o - a) / a * 100:+.1f} %"
    if t["max_mac_overhead"] == "none":
        line = (f"at most {plan['max_mac_overhead']:g}x MACs gives {a:,} B ({plan['mac_overhead']:.2f}x); "
                f"least RAM {o:,} B ({pct}) costs {t['mac_overhead']:.2f}x MACs: --max-mac-overhead none")
    else:
        line = (f"least RAM {a:,} B costs {plan['mac_overhead']:.2f}x MACs; at most {t['max_mac_overhead']:g}x "
                f"MACs gives {o:,} B ({pct}): --max-mac-overhead {t['max_mac_overhead']:g}")
    say(f"{name}: {line}", True)


def add_plan(sub) -> None:
    s = sub.add_parser("plan",
                       description="Plan every activation byte of a model: the arena's size, its lower bound, "
                                   "each buffer's offset and lifetime, the execution order; with the memory "
                                   "optimisers, the fusion blocks and their MAC cost. Prints a summary line.")
    s.add_argument("model", help=MODEL_HELP)
    s.add_argument("--json", action="store_true",
                   help="print the whole plan as JSON (arena_bytes, lower_bound_bytes, order, tensors, buffers, ...)")
    s.add_argument("--board", help="also print the placement in this board's memory regions")
    add_plan_options(s)
    s.set_defaults(fn=cmd_plan)
