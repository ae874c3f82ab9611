"""Operator splitting and patch-based fusion: cost model, exact search, arena plan, tile execution.

The oracle for every executed plan is the plain layer-by-layer executor (run_unplanned),
which the refops tests tie to TFLite Micro; outputs must be byte-identical.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from buildtool.model import reader as tflite_reader
from buildtool import zoo
from buildtool.plan.arena import checker
from buildtool.errors import PlanError, UsageError
from buildtool.plan.arena.execute import run_unplanned
from buildtool.options import parse_bytes, parse_split
from buildtool.plan.fusion.planner import plan_fused
from buildtool.plan.fusion.search import search_front
from buildtool.plan.fusion.dag import block_ok, build_network
from buildtool.plan.fusion.geometry import Axis, cached_1d, geometry, recompute_1d, uniform_bounds
from buildtool.plan.fusion.lifetimes import checker_view
from buildtool.plan.fusion.planner import plan_schedule
from buildtool.plan.fusion.schedule import BlockRun, Schedule, schedule_from_edges
from buildtool.plan.fusion.search import block_edges
from buildtool.plan.fusion.execute import run_fused
from buildtool.plan.fusion.instructions import recompute_factors
from buildtool.model.ops import graph_macs

from conftest import ROOT, SHARED_MODEL_NAMES, fixed_input, load_file, shared_model

INF = float("inf")


def _zoo(name):
    return zoo.build(name)


def _shared(name):
    return tflite_reader.load(shared_model(name))


def _check_plan(g, plan, x, ref):
    stats = {}
    out = run_fused(g, plan, [x], stats)
    assert all(np.array_equal(a, b) for a, b in zip(out, ref))
    assert stats["macs"] == plan.macs  # the cost model counts exactly what runs
    # and each operator's recompute factor (what predict_instructions scales it by) is what the tiles compute
    for it in plan.schedule.items:
        blk = it if isinstance(it, BlockRun) else None
        for op, f in (recompute_factors(g, blk) if blk else {it: 1}).items():
            n = sum(int(np.prod(g.tensors[o].shape)) for o in g.operators[op].outputs)
            assert stats["computed"].get(op, 0) == f * n, (op, stats["computed"].get(op), f, n)
    sg, ap = checker_view(plan)
    assert checker.problems(sg, ap) == []
    assert plan.arena_bytes >= plan.lower_bound_bytes == max(plan.profile)


def _settings(g, settings):
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = run_unplanned(g, [x])
    for kw in settings:
        plan = plan_fused(g, time_budget=0.5, **kw)
        _check_plan(g, plan, x, ref)
    return x, ref


FAST = [dict(optimize="ram", max_mac_overhead=1.2), dict(optimize="ram"),
        dict(optimize="ram", input_streamed=True), dict(splits="auto"),
        dict(optimize="ram", max_mac_overhead=1.05, input_streamed=True)]


# -- receptive fields -------------------------------------------------------------------------

@pytest.mark.parametrize("n,k,s,pad", [(9, 3, 1, 1), (10, 3, 2, 0), (11, 5, 2, 2), (7, 7, 1, 3), (8, 1, 1, 0)])
def test_axis_need_matches_brute_force(n, k, s, pad):
    n_out = (n + 2 * pad - k) // s + 1
    ax = Axis(k, s, pad, n, n_out)
    for lo in range(n_out):
        for hi in range(lo + 1, n_out + 1):
            read = {o * s - pad + j for o in range(lo, hi) for j in range(k)} & set(range(n))
            a, b = ax.need(np.array([lo]), np.array([hi]))
            assert (int(a[0]), int(b[0])) == (min(read), max(read) + 1)
    a, b = ax.need(np.array([3]), np.array([3]))
    assert (int(a[0]), int(b[0])) == (0, 0)


def test_cache_mode_computes_each_position_once_and_windows_cover_reads():
    g = _zoo("tiny")
    geo = geometry(g, range(0, 4))
    for t in (1, 2, 3, 5, 16):
        b = uniform_bounds(16, t)
        iv = cached_1d(geo.steps, 1, geo.tile_tensor, [b])
        rec = recompute_1d(geo.steps, 1, geo.tile_tensor, [b])
        for s in geo.steps:
            h = iv[s.out][0][0]
            assert np.all(np.diff(h) >= 0) and h[-1] == g.tensors[s.out].shape[2]
            # recompute intervals cover the tile exactly at the end of the chain
        assert [tuple(x) for x in zip(rec[geo.tile_tensor][0][0], rec[geo.tile_tensor][1][0])] == \
            list(zip(b[:-1], b[1:]))


# -- the search ---------------------------------------------------------------------------------

def _brute_front(g, streamed):
    """All paths of the DAG over (cut, banded) nodes, enumerated: the Pareto set of (peak, macs)."""
    from buildtool.plan.fusion.dag import main_tensor, plain_ok
    from buildtool.model.ops import op_macs

    net = build_network(g, streamed)
    blocks = block_edges(net)
    n = len(g.operators)
    edges = {}
    for p in range(n):
        if plain_ok(net, p):
            edges.setdefault((p, 0), []).append(((p + 1, 0), net.edge_whole(p, p + 1), op_macs(g, g.operators[p])))
    for (p, q), combos in blocks.items():
        for combo, opts in combos.items():
            bp, bq = int(combo[0]), int(combo[1])
            if q == n and bq:
                continue
            w = net.edge_whole(p, q)
            w -= net.held(main_tensor(net, p)) if bp else 0
            w -= net.held(main_tensor(net, q)) if bq else 0
            for ram, macs, *_ in opts:
                edges.setdefault((p, bp), []).append(((q, bq), w + ram, macs))
    results = set()

    def walk(node, peak, macs):
        if node == (n, 0):
            results.add((peak, macs))
            return
        for nxt, ram, m in edges.get(node, []):
            walk(nxt, max(peak, ram), macs + m)
    walk((0, 0), 0, 0)
    if main_tensor(net, 0) is not None:
        walk((0, 1), 0, 0)
    return sorted((pk, m) for pk, m in results if not any(
        (a <= pk and b <= m and (a, b) != (pk, m)) for a, b in results))


@pytest.mark.parametrize("streamed", [False, True])
def test_label_search_equals_brute_force(streamed):
    g = _zoo("tiny")
    front = search_front(g, streamed=streamed)
    assert sorted((s.peak, s.macs) for s in front.solutions) == _brute_front(g, streamed)
    for s in front.solutions:  # every solution's path is real: its edges chain 0 -> n
        assert s.edges[0].p == 0 and s.edges[-1].q == len(g.operators)
        assert all(a.q == b.p for a, b in zip(s.edges, s.edges[1:]))
        assert max(e.ram for e in s.edges) == s.peak and sum(e.macs for e in s.edges) == s.macs


def test_p1_p2_answers():
    g = _zoo("mcunet-vww1")
    front = search_front(g)
    v = front.vanilla_macs
    assert v == graph_macs(g)
    prev = None
    for f in (1.0, 1.1, 1.2, 1.3, 1.5, INF):
        s = front.p1(f)
        assert s.macs <= f * v
        assert prev is None or s.peak <= prev  # a looser budget never needs more RAM
        prev = s.peak
    best = min(s.peak for s in front.solutions)
    with pytest.raises(PlanError, match=f"smallest reachable peak is {best} B"):
        front.p2(best - 1)
    s = front.p2(best)
    assert s.peak <= best


def test_impossible_ram_limit_names_smallest_peak():
    import re

    g = _zoo("tiny")
    with pytest.raises(PlanError, match=r"smallest reachable peak is \d+ B") as e:
        plan_fused(g, optimize="macs", ram_limit=64, time_budget=0.5)
    named = int(re.search(r"peak is (\d+) B", str(e.value)).group(1))
    assert named >= min(s.peak for s in search_front(g).solutions)
    ok = plan_fused(g, optimize="macs", ram_limit=named, time_budget=0.5)  # the named peak is reachable
    assert ok.arena_bytes <= named


def test_memo_caches_blocks_by_structure():
    class Memo:
        def __init__(self):
            self.d, self.misses = {}, 0

        def get_or_compute(self, kind, key, compute):
            if (kind, key) not in self.d:
                self.misses += 1
                self.d[(kind, key)] = compute()
            return self.d[(kind, key)]

    g = _zoo("tiny")
    m = Memo()
    a = search_front(g, memo=m)
    first = m.misses
    assert first > 0
    b = search_front(g, memo=m)
    assert m.misses == first  # all hits the second time
    assert [(s.peak, s.macs) for s in a.solutions] == [(s.peak, s.macs) for s in b.solutions]
    assert [(s.peak, s.macs) for s in search_front(g).solutions] == [(s.peak, s.macs) for s in a.solutions]


# -- execution, byte-identical ------------------------------------------------------------------

def test_tiny_zoo_all_schemes_byte_identical():
    g = _zoo("tiny")
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = run_unplanned(g, [x])
    net = build_network(g)
    from buildtool.plan.fusion.search import Edge
    for scheme, th, tw in itertools.product(("recompute", "hcache", "linebuf"), (1, 3, 16), (1, 5, 16)):
        if scheme == "linebuf" and tw != 16:
            continue
        for q in (4, 5, 6):  # blocks ending at the ADD, at the strided conv, at the MEAN
            if not block_ok(net, 0, q):
                continue
            edges = [Edge(0, q, scheme, th, tw)] + [Edge(p, p + 1, None) for p in range(q, len(g.operators))]
            plan = plan_schedule(g, schedule_from_edges(g, edges, False), 16, 0.2)
            _check_plan(g, plan, x, ref)
            ps = plan_schedule(g, schedule_from_edges(g, edges, True), 16, 0.2)
            _check_plan(g, ps, x, ref)
            assert ps.arena_bytes <= plan.arena_bytes  # the input window never exceeds the input


def test_expansion_made_channel_by_channel():
    g = _zoo("mcunet-vww1")  # stem conv -> depthwise -> 1x1: the stem output is only read by the depthwise
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = run_unplanned(g, [x])
    from buildtool.plan.fusion.search import Edge
    stem = g.operators[0].outputs[0]
    for streamed in (False, True):
        edges = [Edge(0, 3, "recompute", 8, 8)] + [Edge(p, p + 1, None) for p in range(3, len(g.operators))]
        plan = plan_schedule(g, schedule_from_edges(g, edges, streamed), 16, 0.2)
        blk = plan.schedule.items[0]
        assert blk.channelwise(g, stem) and blk.window_shape(g, stem)[2] == 1
        _check_plan(g, plan, x, ref)


def test_inplace_projection_and_pulled_input_rows():
    """vww1 ops 0-5 in one recompute block, 4 x 4 tiles of the 20 x 20 output: the 1x1 projection
    (16 -> 8 channels) writes over the depthwise output window, and the streamed input is pulled
    three rows (the stem's kernel height) at a time instead of its whole 23-row interval."""
    g = _zoo("mcunet-vww1")
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = run_unplanned(g, [x])
    from buildtool.plan.fusion.search import Edge
    dw_out, proj_out, inp = g.operators[1].outputs[0], g.operators[2].outputs[0], g.inputs[0]
    edges = [Edge(0, 6, "recompute", 4, 4)] + [Edge(p, p + 1, None) for p in range(6, len(g.operators))]
    plan = plan_schedule(g, schedule_from_edges(g, edges, True), 16, 0.0)
    blk = plan.schedule.items[0]
    assert blk.inplace_source(g, proj_out) == dw_out
    assert plan.window_offset[(0, proj_out)] == plan.window_offset[(0, dw_out)]
    # input rows of one 4-row output tile: dw 4 (s2) 9 rows, 1x1s 9, dw 1 11, stem (s2) 23
    assert blk.rows.ext[inp] == 23 and blk.window_shape(g, inp) == (3, 23, 3)
    pool = next(b for b in plan.buffers if b.kind == "windows")
    # the pool never holds the projection output next to the depthwise output it replaces
    sizes = {t: -(-int(np.prod(blk.window_shape(g, t))) // 16) * 16 for t in blk.windows}
    assert pool.size < sum(sizes.values())
    _check_plan(g, plan, x, ref)
    plain = plan_schedule(g, schedule_from_edges(g, edges, False), 16, 0.0)
    assert inp not in plain.schedule.items[0].windows  # held in the arena: nothing is pulled
    assert plain.window_offset[(0, proj_out)] == plain.window_offset[(0, dw_out)]
    _check_plan(g, plain, x, ref)


def test_mean_accumulator_is_int16_up_to_256_pixels():
    from buildtool.plan.fusion.costs import accumulator_bytes, accumulator_dtype
    from buildtool.plan.fusion.geometry import Geometry
    g = _zoo("tiny")  # ... conv -> 8 x 8 x 16 -> MEAN: a sum of 64 int8 values fits int16
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = run_unplanned(g, [x])
    from buildtool.plan.fusion.search import Edge
    plan = plan_schedule(g, schedule_from_edges(g, [Edge(0, 6, "recompute", 2, 2), Edge(6, 7, None)], False),
                         16, 0.0)
    assert [b.size for b in plan.buffers if b.kind == "accumulator"] == [2 * 16]
    _check_plan(g, plan, x, ref)
    t16 = g.operators[0].outputs[0]  # 16 x 16 = 256 pixels: |sum| <= 128 * 256 still fits int16
    assert accumulator_dtype(g, Geometry((), (), t16, 5)) == "int16"
    big = Geometry((), (), g.inputs[0], 5)  # 32 x 32 pixels
    assert accumulator_dtype(g, big) == "int32" and accumulator_bytes(g, big) == 4 * 3


def dense_head(flatten: bool = True):
    """conv 3x3 s2 -> depthwise 3x3 -> conv 1x1 -> RESHAPE to [1, 12*12*24] -> FULLY_CONNECTED(10).

    flatten=False drops the RESHAPE: the dense layer reads the [1, 12, 12, 24] tensor itself
    (ops.py accepts any input whose size is a multiple of the weights' depth)."""
    import dataclasses

    from buildtool.zoo.builder import GraphBuilder
    from buildtool.model.writer import serialize

    b = GraphBuilder("dense-head", seed=3)
    y = b.conv2d(b.input((1, 24, 24, 4)), 16, k=3, stride=2)
    y = b.conv2d(b.depthwise(y, k=3), 24, k=1)
    h, w, c = b.shape(y)[1:]
    g = b.finish([b.fully_connected(b.reshape(y, (1, h * w * c)), 10)])
    if not flatten:
        rs, fc = g.operators[3], g.operators[4]
        g.operators = g.operators[:3] + [dataclasses.replace(fc, index=3, inputs=(rs.inputs[0],) + fc.inputs[1:])]
        g = tflite_reader.parse(serialize(g))
    return g


@pytest.mark.parametrize("flatten", [True, False])
def test_iterative_dense_accumulates_tiles(flatten):
    """A block ending in the dense layer never holds its 3,456-byte input: per output neuron an
    int32 sum of each tile's partial dot products, finished once; outputs equal TFLM's."""
    from conftest import tflm_run

    from buildtool.plan.arena.planner import plan_arena
    from buildtool.plan.fusion.geometry import is_dense
    from buildtool.plan.fusion.schedule import BlockRun
    from buildtool.model.writer import serialize

    g = dense_head(flatten)
    n = len(g.operators)
    fc = g.operators[-1]
    assert fc.opcode == "FULLY_CONNECTED" and len(g.operators) == (5 if flatten else 4)
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = run_unplanned(g, [x])
    assert np.array_equal(ref[0], tflm_run(serialize(g), [x])[0])
    y = g.operators[2].outputs[0]  # the block's last spatial tensor, 12 x 12 x 24
    held_fc = 3456 + 16  # a plain dense layer holds its whole input and its (aligned) output
    plain = plan_arena(g).arena_bytes
    for streamed in (False, True):
        plan = plan_fused(g, optimize="ram", max_mac_overhead="none", input_streamed=streamed, time_budget=0.3)
        blk = plan.schedule.items[-1]
        assert isinstance(blk, BlockRun) and blk.q == n and is_dense(g, blk.geo) and blk.geo.reduce_op == fc.index
        assert [b.size for b in plan.buffers if b.kind == "accumulator"] == [4 * 10]
        assert y not in plan.bands and all(t not in plan.bands for t in fc.inputs)  # never made whole
        assert plan.arena_bytes < held_fc < plain
        assert plan.macs >= graph_macs(g)  # the dense layer's MACs are all done, once
        assert search_front(g, streamed).p1(INF).peak == plan.lower_bound_bytes
        _check_plan(g, plan, x, ref)
    # input in the arena: the 2,304-byte input, the output, the 1x1 tile windows, the sums
    plan = plan_fused(g, optimize="ram", max_mac_overhead="none", time_budget=0.3)
    assert plan.arena_bytes == 2304 + 16 + 48 + 48
    # every scheme accumulates each pixel once (cached tiles too), and split regions may end in it
    from buildtool.plan.fusion.search import Edge
    for edges in ([Edge(0, n, "hcache", 5, 7)], [Edge(0, n, "linebuf", 5, 12)],
                  [Edge(0, 2, "recompute", 4, 12), Edge(2, n, "linebuf", 3, 12)]):
        for streamed in (False, True):
            _check_plan(g, plan_schedule(g, schedule_from_edges(g, edges, streamed), 16, 0.0), x, ref)
    _check_plan(g, plan_fused(g, splits=[(0, n - 1, 3)], time_budget=0.2), x, ref)


def test_dense_tail_only_where_the_block_output_is_read_whole():
    """FULLY_CONNECTED after a global MEAN (MobileNets) reads 1 x C: no dense edge, plans unchanged;
    a dense layer fed by a RESHAPE whose output is also a graph output is not fused."""
    from buildtool.plan.fusion.dag import tail_cut

    for name in ("tiny", "mcunet-vww1"):
        g = _zoo(name)
        assert all(tail_cut(g, q) is None for q in range(2, len(g.operators) + 1))
    g = dense_head()
    assert [q for q in range(2, 6) if tail_cut(g, q) is not None] == [5]
    net = build_network(g)
    assert block_ok(net, 0, 5) and block_ok(net, 2, 5) and not block_ok(net, 3, 5) and not block_ok(net, 4, 5)
    g.outputs = g.outputs + [g.operators[3].outputs[0]]
    assert not any(block_ok(build_network(g), p, 5) for p in range(5))


def test_mbv2_least_ram_streamed_below_msf_cnn_board_figure():
    """Issue 3: mbv2-w0.35 at F = inf, input streamed, residuals counted: below 8,560 B."""
    g = _zoo("mbv2-w0.35")
    plan = plan_fused(g, optimize="ram", max_mac_overhead="none", input_streamed=True, time_budget=0)
    assert plan.arena_bytes < 8560
    assert checker.problems(*checker_view(plan)) == []
    again = plan_fused(g, optimize="ram", max_mac_overhead="none", input_streamed=True, time_budget=0)
    assert plan.to_json(g) == again.to_json(g)


def test_zoo_tiny_and_vww1_settings():
    _settings(_zoo("tiny"), FAST)
    _settings(_zoo("mcunet-vww1"), [dict(optimize="ram", max_mac_overhead=1.1, input_streamed=True)])


@pytest.mark.parametrize("name", ["tiny_cnn_32", "dscnn_kws", "resnet_concat_64"])
def test_shared_models_settings(name):
    _settings(_shared(name), FAST)


def test_banded_input_stays_contiguous_and_frees_rows():
    g = _zoo("mcunet-vww1")
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = run_unplanned(g, [x])
    plan = plan_fused(g, optimize="ram", max_mac_overhead=1.05, time_budget=0.2)
    t = g.tensors[g.inputs[0]]
    bands = sorted(plan.bands[g.inputs[0]])
    row = t.nbytes // t.shape[1]
    assert len(bands) > 1 and g.inputs[0] in plan.schedule.banded
    assert all(a[2] + (a[1] - a[0]) * row == b[2] for a, b in zip(bands, bands[1:]))  # one contiguous tensor
    _check_plan(g, plan, x, ref)
    whole = plan_fused(g, optimize="ram", max_mac_overhead=1.05, band_input=False, time_budget=0.2)
    assert len(whole.bands[g.inputs[0]]) == 1
    assert plan.arena_bytes < whole.arena_bytes  # rows the tiles have passed are reused


def test_plain_schedule_matches_vanilla_and_streamed_saves_input():
    g = _zoo("mcunet-vww1")
    plain = plan_schedule(g, Schedule(list(range(len(g.operators))), False), 16, 0.5)
    front = search_front(g)
    assert plain.lower_bound_bytes == front.vanilla_peak == 96000
    assert plain.macs == graph_macs(g)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mbv2-w0.35", "mcunet-in3", "mobilenetv2"])
def test_zoo_big_models_settings(name):
    """The numpy executor on the big zoo models (mbv2-w0.35, the benchmark model, at F = 1.3 too: the
    other two run those plans as firmware in test_fusion_tables.py)."""
    fused = [dict(optimize="ram", max_mac_overhead=1.3),
             dict(optimize="ram", max_mac_overhead=1.3, input_streamed=True)]
    _settings(_zoo(name), (fused if name == "mbv2-w0.35" else []) + [dict(optimize="macs", ram_limit=256 * 1024)])


@pytest.mark.slow
def test_least_ram_plans_execute():
    """F = inf plans recompute a lot (and make expansions channel by channel): run the small one. Its
    streamed twin (a pipelined pair at 7.5x MACs, a minute in numpy) runs once, in test_fusion_tables.py's
    streamed table extremes."""
    _settings(_zoo("mcunet-vww1"), [dict(optimize="ram", max_mac_overhead="none")])


@pytest.mark.slow
def test_mbv2_least_ram_streamed_executes():
    g = _zoo("mbv2-w0.35")
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    plan = plan_fused(g, optimize="ram", max_mac_overhead="none", input_streamed=True, time_budget=0)
    assert plan.arena_bytes < 8560
    _check_plan(g, plan, x, run_unplanned(g, [x]))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mbv2_w035_144", "mobilenetv2_160_a1"])
def test_shared_big_models(name):
    g = _shared(name)
    _settings(g, [dict(optimize="ram", max_mac_overhead=1.2),
                  dict(optimize="ram", max_mac_overhead=1.2, input_streamed=True),
                  dict(splits=[(0, 5, 12), (6, 12, 8), (13, 20, 2)]), dict(splits="auto")])


# -- splitting ----------------------------------------------------------------------------------

def test_parse_split_and_bytes():
    assert parse_split("0:5:12") == (0, 5, 12)
    for bad in ("0:5", "5:0:2", "a:b:c", "0:5:0"):
        with pytest.raises(UsageError):
            parse_split(bad)
    assert parse_bytes("64KiB") == 65536 and parse_bytes("64kB") == 64000 and parse_bytes("100") == 100
    with pytest.raises(UsageError):
        parse_bytes("lots")


def test_split_regions_execute_and_reject_bad_regions():
    g = _zoo("mcunet-vww1")
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = run_unplanned(g, [x])
    one = plan_fused(g, splits=[(0, 5, 4)], time_budget=0.2)
    two = plan_fused(g, splits=[(0, 5, 4), (6, 8, 3)], time_budget=0.2)
    for p in (one, two):
        _check_plan(g, p, x, ref)
        assert p.to_json(g)["splits"][0] == {"top": 0, "bottom": 5, "slices": 4}
    with pytest.raises(PlanError, match="overlap"):
        plan_fused(g, splits=[(0, 5, 4), (5, 8, 3)])
    n = len(g.operators)
    with pytest.raises(PlanError, match="cannot be split"):
        plan_fused(g, splits=[(n - 3, n - 1, 2)])  # ends in the classifier
    auto = plan_fused(g, splits="auto", time_budget=0.2)
    assert auto.arena_bytes <= min(one.arena_bytes, two.arena_bytes)
    assert all(b["cache"] == "hcache" for b in auto.to_json(g)["fusion_blocks"]) or auto.to_json(g)["splits"]


def test_json_fields_and_determinism():
    g = _zoo("tiny")
    a = plan_fused(g, optimize="ram", max_mac_overhead=1.3)
    b = plan_fused(g, optimize="ram", max_mac_overhead=1.3)
    ja, jb = a.to_json(g), b.to_json(g)
    assert ja == jb
    # with a budget the exact solver stops on deterministic time only: no dependence on machine load
    c, d = (plan_fused(g, optimize="ram", max_mac_overhead=1.3, time_budget=0.3) for _ in range(2))
    assert c.to_json(g) == d.to_json(g) and c.arena_bytes <= a.arena_bytes
    for k in ("fusion_blocks", "splits", "macs", "mac_overhead", "arena_bytes", "input_accounting"):
        assert k in ja
    assert ja["mac_overhead"] <= 1.3
    for blk in ja["fusion_blocks"]:
        assert blk["cache"] in ("recompute", "hcache", "linebuf") and blk["first_op"] <= blk["last_op"]


@pytest.mark.slow
def test_search_table_answers_are_monotone():
    """One search answers the whole table (its speed is benchmarks/fusion.py's, not a test's): a looser
    MAC cap never costs RAM, a larger RAM limit never costs MACs, and each answer keeps its bound."""
    g = _zoo("mbv2-w0.35")
    front = search_front(g, streamed=True)
    p1 = [front.p1(f) for f in (1.1, 1.2, 1.3, 1.4, 1.5, INF)]
    assert all(a.peak >= b.peak for a, b in zip(p1, p1[1:])), [s.peak for s in p1]
    assert all(s.macs <= f * front.vanilla_macs for s, f in zip(p1, (1.1, 1.2, 1.3, 1.4, 1.5)))
    p2 = []
    for kb in (16, 32, 64, 128, 256):
        try:
            p2.append(front.p2(kb * 1024))
            assert p2[-1].peak <= kb * 1024
        except PlanError as e:
            assert "smallest reachable peak" in str(e) and not p2  # only the tightest limits are unreachable
    assert p2 and all(a.macs >= b.macs for a, b in zip(p2, p2[1:])), [s.macs for s in p2]


def test_zero_mac_model_every_optimiser_mode():
    """A model of pools, pad and reshape only: 0 MACs (inf x 0 used to be NaN: every plan refused)."""
    from buildtool.zoo.builder import GraphBuilder
    from buildtool.model.writer import serialize

    from conftest import tflm_run

    b = GraphBuilder("zero-mac")
    x = b.input((1, 24, 24, 8))
    y = b.max_pool(b.max_pool(x, 3, 1, padding="SAME"), 3, 1, padding="SAME")
    y = b.pad(b.avg_pool(y, 2, 2), [[0, 0], [1, 1], [1, 1], [0, 0]])
    y = b.reshape(b.max_pool(y, 3, 2), (1, 6 * 6 * 8))
    g = b.finish([y])
    assert graph_macs(g) == 0
    xin = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = run_unplanned(g, [xin])
    assert np.array_equal(ref[0], tflm_run(serialize(g), [xin])[0])
    plain = plan_fused(g, optimize="ram", max_mac_overhead=1.0, time_budget=0.2)
    assert plain.arena_bytes < 2 * 24 * 24 * 8  # fusion pays off even without MACs
    settings = FAST + [dict(optimize="ram", max_mac_overhead=1.0), dict(optimize="macs", ram_limit=plain.arena_bytes),
                       dict(splits=[(0, 1, 4)])]
    _settings(g, settings)
    with pytest.raises(PlanError, match=r"smallest reachable peak is \d+ B \(1.00 x the MACs\)"):
        plan_fused(g, optimize="macs", ram_limit=16)


@pytest.fixture
def analysed(monkeypatch) -> list:
    """The length of the longest block the search analyses at each block end, in the order analysed."""
    from buildtool.plan.fusion import search

    lengths = []

    class Counting(search.Sweep):
        def __init__(self, g, longest, align, memo=None):
            lengths.append(len(longest.ops))
            super().__init__(g, longest, align, memo)

    monkeypatch.setattr(search, "Sweep", Counting)
    return lengths


def test_search_work_is_linear_on_wide_and_deep_graphs(analysed):
    """One input read by 300 pools (every output used after it): only one-operator blocks exist,
    and the search analyses just those (it used to analyse every run [0, q): cubic time, and hold
    every cut's live tensors: quadratic memory). A deep chain analyses blocks of at most
    MAX_BLOCK_OPS operators, and within --time-budget's work shorter ones (the front says it was cut)."""
    from buildtool.zoo.builder import GraphBuilder
    from buildtool.plan.fusion import search
    from buildtool.plan.fusion.dag import MAX_BLOCK_OPS

    b = GraphBuilder("wide-pools")
    x = b.input((1, 4, 4, 4))
    g = b.finish([b.max_pool(x, 1, 1) for _ in range(300)])
    plan = plan_fused(g, optimize="ram", time_budget=0.1)
    assert analysed == [1] * 300
    assert plan.arena_bytes == plan.lower_bound_bytes == 64 + 300 * 64
    assert checker.problems(*checker_view(plan)) == []
    b = GraphBuilder("deep")
    y = b.input((1, 4, 4, 2))
    for _ in range(MAX_BLOCK_OPS + 20):
        y = b.max_pool(y, 3, 1, padding="SAME")
    deep = b.finish([y])
    for budget in (2.0, 0.0, 1000.0):  # the work the search may do follows --time-budget (issue 32)
        analysed.clear()
        front = search_front(deep, time_budget=budget)
        assert sum(n * n for n in analysed) <= search.work_budget(budget)
        if budget < 1000:
            assert max(analysed) < MAX_BLOCK_OPS and front.cut > 0
        else:
            assert max(analysed) == MAX_BLOCK_OPS and front.cut == 0
    d = plan_fused(deep, optimize="ram").to_json(deep)  # a plan whose search was cut says so
    assert d["optimal"] is False and 0 < d["search_cut_to_block_ops"] < MAX_BLOCK_OPS


def test_time_budget_holds_on_a_500_layer_chain(analysed):
    """--optimize ram on 500 3x3 convolutions (issue 32): the search's work stays within the default
    --time-budget's count (each block end analysed once, about L^2 units for L starts), so blocks
    are shorter than MAX_BLOCK_OPS, and the plan says its search was cut. Counts, not clocks."""
    from buildtool.plan.fusion import search
    from buildtool.plan.fusion.dag import MAX_BLOCK_OPS
    from buildtool.zoo.synthetic import conv_chain

    g = conv_chain(500, channels=4, size=8)
    plan = plan_fused(g, optimize="ram")
    assert len(analysed) <= len(g.operators)
    assert sum(n * n for n in analysed) <= search.work_budget(2.0)
    d = plan.to_json(g)
    assert d["optimal"] is False and 0 < d["search_cut_to_block_ops"] <= max(analysed) < MAX_BLOCK_OPS
    assert checker.problems(*checker_view(plan)) == []


def _efficientnet_stem_blocks():
    """EfficientNet-B0's first blocks at 96x96 (swish, squeeze-and-excitation): the plain plan
    writes the swish MUL over its input in place, which no fusion block beats."""
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder("effnet-b0-head")

    def swish(x):
        return b.mul(x, b.logistic(x))

    def mbconv(x, cout, exp, stride, k=3):
        cin = b.shape(x)[3]
        h = swish(b.conv2d(x, cin * exp, 1, activation="NONE")) if exp != 1 else x
        h = swish(b.depthwise(h, k, stride, activation="NONE"))
        s = swish(b.conv2d(b.mean(h, keep_dims=True), max(1, cin // 4), 1, activation="NONE"))
        h = b.mul(h, b.logistic(b.conv2d(s, b.shape(h)[3], 1, activation="NONE")))
        h = b.conv2d(h, cout, 1, activation="NONE")
        return b.add(h, x) if stride == 1 and cin == cout else h

    x = b.input((1, 96, 96, 3))
    y = mbconv(swish(b.conv2d(x, 32, 3, 2, activation="NONE")), 16, 1, 1)
    y = mbconv(mbconv(y, 24, 6, 2), 24, 6, 1)
    y = b.fully_connected(b.mean(swish(b.conv2d(y, 64, 1, activation="NONE"))), 10)
    return b.finish([y])


def test_optimisers_never_lose_to_the_plain_plan():
    """--optimize ram and --split auto used to return 498,528 and 511,488 B here, above the plain
    plan's 442,368 B: now an optimiser that cannot beat running every layer as usual returns that."""
    from tflite_micro import runtime

    from buildtool.plan.arena.planner import plan_arena
    from buildtool.model.writer import serialize

    g = _efficientnet_stem_blocks()
    plain = plan_arena(g).arena_bytes
    assert plain == 442368
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = run_unplanned(g, [x])
    tflm = runtime.Interpreter.from_bytes(serialize(g), arena_size=4 << 20)  # more than tflm_run's default
    tflm.set_input(x, 0)
    tflm.invoke()
    assert np.array_equal(ref[0], tflm.get_output(0))
    for kw in (dict(optimize="ram"), dict(splits="auto"), dict(optimize="ram", max_mac_overhead=1.0),
               dict(optimize="macs", ram_limit=plain)):
        plan = plan_fused(g, time_budget=0.2, **kw)
        assert plan.arena_bytes <= plain, kw
        _check_plan(g, plan, x, ref)
    assert plan.schedule.inplace and not plan.schedule.blocks()  # the plain plan, element-wise in place


@pytest.mark.slow
@pytest.mark.parametrize("name", zoo.names() + [f"shared:{n}" for n in SHARED_MODEL_NAMES])
def test_every_optimiser_mode_at_most_the_plain_arena(name):
    """--optimize ram (any MAC bound, input in the arena or streamed), --split auto and --optimize
    macs with the plain arena as the limit: never above the plain plan (one search per front)."""
    from buildtool.plan.arena.planner import plan_arena
    from buildtool.plan.fusion.planner import plan_from_front

    g = _shared(name[7:]) if name.startswith("shared:") else _zoo(name)
    plain = plan_arena(g).arena_bytes
    front, split, streamed = search_front(g), search_front(g, split_only=True), search_front(g, streamed=True)
    plans = [plan_from_front(g, front, factor=f, time_budget=0.0) for f in (1.0, 1.2, INF)]
    plans += [plan_from_front(g, front, optimize="macs", ram_limit=plain, time_budget=0.0),
              plan_from_front(g, split, mode="split", time_budget=0.0),
              plan_from_front(g, streamed, time_budget=0.0)]
    assert max(p.arena_bytes for p in plans) <= plain


def test_plain_plan_in_place_runs_on_host_firmware(tmp_path):
    """The fused firmware of that plain plan (a MUL writing over its input) is bit-exact."""
    from buildtool import pipeline
    from buildtool.firmware import runner

    g = _efficientnet_stem_blocks()
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    pipeline.build(g, "host", tmp_path, {"optimize": "ram", "time_budget": 0.2})
    y, _, ram = runner.run("host", tmp_path, x)
    assert np.array_equal(y, run_unplanned(g, [x])[0]) and ram["arena_bytes"] == 442368


# -- the MAC cap: 1.3 x unless told, the trade-off named (issue 16 item 3) ---------------------------------
def _tiny_streamed_front():
    g = _zoo("tiny")
    return g, search_front(g, streamed=True)


def test_default_mac_cap_applies_and_names_what_no_cap_would_give():
    """tiny, input streamed: least RAM is 416 B at 2.69x MACs; the default cap keeps 1.3x and
    says what it costs. Without a value, 1.3 and "none" mean the same in every layer."""
    from buildtool.plan.fusion.planner import plan_from_front
    from buildtool.serve.service import normalize_options

    g, front = _tiny_streamed_front()
    plan = plan_fused(g, optimize="ram", input_streamed=True, time_budget=0.2)
    at13 = plan_from_front(g, front, factor=1.3, time_budget=0.2)
    least = plan_from_front(g, front, factor=INF, time_budget=0.2)
    assert plan.mac_overhead <= 1.3 < least.mac_overhead and least.arena_bytes < plan.arena_bytes
    j = plan.to_json(g)
    want = at13.to_json(g)
    assert j["layout"].pop("mac_cap") == 1.3 and want["layout"].pop("mac_cap") is None  # the cap, exactly
    assert {k: v for k, v in j.items() if k not in ("max_mac_overhead", "tradeoff")} == want
    assert j["max_mac_overhead"] == 1.3 and j["tradeoff"] == {
        "max_mac_overhead": "none", "arena_bytes": least.arena_bytes, "macs": least.macs,
        "mac_overhead": round(least.mac_overhead, 6)}
    explicit = plan_fused(g, optimize="ram", max_mac_overhead=1.3, input_streamed=True, time_budget=0.2).to_json(g)
    assert explicit["layout"].pop("mac_cap") == 1.3
    assert explicit == j
    # no value is "the default cap", kept apart from an explicit 1.3: when nothing is within the default
    # cap the planner takes the fewest MACs, while an explicit cap is a promise
    assert normalize_options({"optimize": "ram"})["max_mac_overhead"] is None
    assert normalize_options({"optimize": "ram", "max_mac_overhead": 1.3})["max_mac_overhead"] == 1.3
    assert normalize_options({"optimize": "ram", "max_mac_overhead": "none"})["max_mac_overhead"] == "none"
    assert normalize_options({})["max_mac_overhead"] is None  # plain plans: the cap means nothing, no key change


def test_scons_mac_cap_variable_means_what_the_cli_option_means():
    """scons max_mac_overhead=none / =1.3: the strings the command line gives become the CLI's values."""
    tool = load_file("btfirmware_tool", ROOT / "buildtool" / "scons" / "btfirmware" / "__init__.py")
    assert tool.plan_options({"optimize": "ram", "max_mac_overhead": "None "})["max_mac_overhead"] == "none"
    assert tool.plan_options({"optimize": "ram", "max_mac_overhead": "1.3"})["max_mac_overhead"] == 1.3
    with pytest.raises(UsageError, match="max_mac_overhead='x' is invalid: it must be a number from 1 to 1000"):
        tool.plan_options({"optimize": "ram", "max_mac_overhead": "x"})


def test_no_mac_cap_restores_the_least_ram_plan_byte_identically():
    """max_mac_overhead "none" is the uncapped least-RAM plan (the old default), JSON byte-identical
    apart from the cap fields, and names the default cap's plan as the other side."""
    import json

    from buildtool.plan.fusion.planner import plan_from_front

    g, front = _tiny_streamed_front()
    plan = plan_fused(g, optimize="ram", max_mac_overhead="none", input_streamed=True, time_budget=0.2)
    j = plan.to_json(g)
    assert j.pop("max_mac_overhead") == "none" and j.pop("tradeoff")["max_mac_overhead"] == 1.3
    assert j["layout"].pop("mac_cap") == "none"
    want = plan_from_front(g, front, factor=INF, time_budget=0.2).to_json(g)
    assert want["layout"].pop("mac_cap") is None
    assert json.dumps(j) == json.dumps(want)
    assert plan.arena_bytes == 416 and plan.mac_overhead > 2.6
    assert plan_fused(g, optimize="ram", max_mac_overhead=INF, input_streamed=True,
                      time_budget=0.2).to_json(g) == plan.to_json(g)
    with pytest.raises(UsageError, match="or 'none' for no cap"):
        plan_fused(g, optimize="ram", max_mac_overhead="None", input_streamed=True)


def test_cli_prints_the_mac_trade_off_on_one_stderr_line(capsys):
    """`buildtool plan M --optimize ram`: stdout as before, one line on stderr naming the other
    side of the cap and the option that takes it; --json carries it as fields; the same through
    the (test session's private) planner daemon."""
    import json

    from buildtool import cli

    base = ["plan", "tiny", "--optimize", "ram", "--input-streamed", "--time-budget", "0.2", "--no-daemon"]
    capsys.readouterr()
    assert cli.main(base) == 0
    out, err = capsys.readouterr()
    assert err == ("tiny: at most 1.3x MACs gives 1,104 B (1.23x); least RAM 416 B (-62.3 %) costs 2.69x MACs: "
                   "--max-mac-overhead none\n") and "(1,104 B;" in out
    assert cli.main(base + ["--max-mac-overhead", "none"]) == 0
    out, err = capsys.readouterr()
    assert err == ("tiny: least RAM 416 B costs 2.69x MACs; at most 1.3x MACs gives 1,104 B (+165.4 %): "
                   "--max-mac-overhead 1.3\n") and "arena 416 B (" in out
    assert cli.main(base + ["--json"]) == 0
    out, err = capsys.readouterr()
    j = json.loads(out)
    assert j["max_mac_overhead"] == 1.3 and j["tradeoff"]["arena_bytes"] == 416 and len(err.splitlines()) == 1
    assert cli.main(["plan", "tiny", "--optimize", "ram", "--time-budget", "0.2", "--no-daemon"]) == 0
    assert capsys.readouterr().err == ""  # no trade-off: quiet
    for extra in ([], ["--max-mac-overhead", "none"], ["--max-mac-overhead", "1.3"]):
        assert cli.main(base + extra) == 0
        here = capsys.readouterr()
        assert cli.main(base[:-1] + extra) == 0  # through the daemon
        assert capsys.readouterr() == here


def test_ram_limit_is_a_limit_under_optimize_ram_and_splits_too():
    """Issue 31 item 3: --ram-limit with --optimize ram (or --split) is met or refused in one line naming
    the least RAM reached (and the option that reaches less), never ignored."""
    g = zoo.build("tiny")
    plan = plan_fused(g, optimize="ram")
    assert plan_fused(g, optimize="ram", ram_limit=plan.arena_bytes).arena_bytes == plan.arena_bytes
    with pytest.raises(PlanError) as e:
        plan_fused(g, optimize="ram", ram_limit=plan.arena_bytes - 16)
    assert f"no plan fits {plan.arena_bytes - 16} B of RAM: the least RAM reached" in str(e.value)
    assert f"is {plan.arena_bytes} B" in str(e.value)
    with pytest.raises(PlanError, match="no plan fits 64 B of RAM"):
        plan_fused(g, splits="auto", ram_limit=64)
