"""The kernel sources a build compiles (issue 50 item 3): derived from the model's operators in one
place (firmware/library.py: OP_KERNELS, model_sources), used by SCons, CMake, the pipeline's kernel
library and `buildtool export`; every .c of an export compiles on its own and the lot links."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import model_calls

from buildtool import pipeline, targets
from buildtool.firmware import library
from buildtool.firmware.toolchain import KERNELS, kernel_sources
from buildtool.model.opdefs import OPDEFS
from buildtool.options import PlanOptions
from buildtool.pipeline import export as export_mod
from buildtool.plan import ArenaPlan

ROOT = Path(__file__).resolve().parents[1]
BOARDS = ["host", "cortex-m4", "cortex-m55", "riscv32", "xcore"]


@pytest.fixture(autouse=True)
def no_daemon(monkeypatch):
    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "1")


def _rel(paths) -> list:
    return [p.relative_to(KERNELS).as_posix() for p in paths]


def test_every_operator_names_its_kernel_files_and_they_exist():
    stems = {p.stem for p in (KERNELS / "reference").glob("*.c")}
    for d in OPDEFS:
        names = library.kernel_names([d.name], False)
        assert set(names) <= stems, (d.name, names)
    assert library.kernel_names([], True) == ["fused"]
    with pytest.raises(library.InternalError, match="NO_SUCH_OP"):
        library.kernel_names(["NO_SUCH_OP"], False)


def test_tiny_compiles_only_its_operators_kernels_on_every_set():
    g = pipeline.read_model("tiny").graph
    assert library.model_opcodes(g) == ["ADD", "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "MEAN"]
    want = {"add", "conv", "conv_s16", "depthwise", "fully_connected", "int32_ops", "mean"}
    parts = {"depthwise_box", "depthwise_q4s", "depthwise_rows", "depthwise_s2g", "depthwise_small"}
    for b in BOARDS:
        t = targets.get(b)
        got = library.model_sources(t, library.model_opcodes(g), False)
        # before model.c exists: cortex-m's depthwise.c (the run-time dispatcher) and every path file it calls
        assert {p.stem for p in got} == want | (parts if b == "cortex-m4" else set()), b
        assert got == [s for s in kernel_sources(t) if s in got]  # in kernel_sources' order
        assert len(kernel_sources(t)) > 3 * len(got)


def test_a_split_kernels_files_are_those_model_c_calls():
    """cortex-m's depthwise is split by path (issue 50 item 3): a model calling one path compiles its file alone (tiny:
    bt_dw_rows_q4e_32, depthwise_q4s.c), one calling the dispatcher every path's; model.c's block for other sets
    (`#define bt_dw_rows_q4e_32 bt_depthwise_s8` under #ifndef BT_VARIANTS_CORTEX_M) is no call on cortex-m."""
    t = targets.get("cortex-m4")
    assert [p.name for p in kernel_sources(t) if p.stem.startswith("depthwise")] == [
        "depthwise.c", "depthwise_box.c", "depthwise_q4s.c", "depthwise_rows.c", "depthwise_s2g.c", "depthwise_small.c"]
    assert all(p.stem == "depthwise" for p in kernel_sources(targets.get("riscv32")) if "depthwise" in p.stem)
    m = pipeline.read_model("tiny")
    ops = library.model_opcodes(m.graph)
    model_c = pipeline.code(m, pipeline.plan_memory(m.graph, PlanOptions()), "cortex-m4")["model.c"]
    assert "bt_dw_rows_q4e_32(" in model_c and "#ifndef BT_VARIANTS_CORTEX_M" in model_c
    got = {p.stem for p in library.model_sources(t, ops, False, model_c=model_c)}
    assert got == {"add", "conv", "conv_s16", "depthwise_q4s", "fully_connected", "int32_ops", "mean"}
    head = '#include <stdint.h>\n#include "bt_kernels.h"\n#include "bt_variants.h"\nvoid model_run(void) {\n'
    for call, stems in [("bt_dw_s2g_3", {"depthwise_s2g"}), ("bt_dw_kxk_rq2", {"depthwise_rows"}),
                        ("bt_dw_small_f_16", {"depthwise_small"}), ("bt_dw_pix4_rq2", {"depthwise_box"}),
                        ("bt_depthwise_s8", {"depthwise"} | {p.stem for p in kernel_sources(t)
                                                            if p.stem.startswith("depthwise_")})]:
        assert _needs("cortex-m4", head + f"  {call}(0, 0, 0, 0, 0, 1);\n}}\n") == stems, call
    # where model.c is not known yet (SCons, CMake) the split kernel is one unit of model.c's files
    split = library.split_kernels(t, library.model_sources(t, ops, False))
    assert list(split) == ["depthwise"] and len(split["depthwise"]) == 6
    # what SCons, CMake and Bazel compile (library.with_units): the unit in the place of the kernel's first file
    srcs = library.model_sources(t, ops, False)
    compiled = library.with_units(srcs, split)
    first, *rest = split["depthwise"]
    assert compiled == ["depthwise" if s == first else s for s in srcs if s not in rest]
    assert library.with_units(srcs, {}) == srcs
    assert library.split_unit(split["depthwise"], library.model_sources(t, ops, False, model_c=model_c)) == \
        ("#define DW_EMIT_Q4E\n#define DW_EMIT_W4\n#define DW_EMIT_DWP\n"  # depthwise_q4s.c's own flags, first
         f'#include "{(KERNELS / "cortex-m" / "depthwise_q4s.c").as_posix()}"\n')


def test_a_unit_of_every_depthwise_part_defines_the_asm_each_part_emits(tmp_path):
    """A unit of several parts (a model calling several paths, or the dispatcher) reads depthwise_core.h once: every
    part's DW_EMIT_* must be set before it, or the asm of all but the first part's is missing (undefined references
    to bt_dw_widen4, bt_dwp_*, bt_dws2g linking efficientnet-lite0 through CMake and Bazel)."""
    from buildtool.firmware import toolchain

    t = targets.get("cortex-m4")
    parts = library.split_kernels(t, kernel_sources(t))["depthwise"]
    unit = tmp_path / "depthwise.c"
    unit.write_text(library.split_unit(parts, parts))
    r = subprocess.run([t.cc] + toolchain.compile_flags(t, None) + ["-c", str(unit), "-o", str(tmp_path / "u.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    syms = subprocess.run([t.binutil("nm"), str(tmp_path / "u.o")], capture_output=True, text=True, check=True).stdout
    defined = {f[-1] for f in map(str.split, syms.splitlines()) if len(f) == 3 and f[1] in "TW"}
    undefined = {f[-1] for f in map(str.split, syms.splitlines()) if f[0] == "U"}
    assert {"bt_dw_widen4", "bt_dws2g", "bt_dwp_8", "bt_dw_q4_8", "bt_dw_q4e_8", "bt_depthwise_s8"} <= defined
    assert not {u for u in undefined if u.startswith("bt_dw")}, undefined


def _needs(board: str, model_c: str) -> set:
    """The stems of the kernel sources model.c text needs on board (library.needed_files)."""
    return {p.stem for p in library.needed_files(targets.get(board), model_c)[0]}


def test_a_declaration_is_no_reference_a_call_or_an_address_is():
    """A prototype, an `extern` or a typedef's declaration (in model.c or a header it includes) pulls no source in; a
    call, an address in an initialiser or a used macro's call does. riscv/bt_variants.h declares fused.c's
    bt_fx_rv_run_long (a plain riscv model included it and compiled fused.c, with activation, mul, pooling and
    leaky_relu, until the scanner told declarations apart)."""
    head = '#include <stdint.h>\n#include "bt_kernels.h"\n'
    assert "bt_fx_rv_run_long;" in (KERNELS / "riscv" / "bt_variants.h").read_text()
    assert _needs("riscv32", head + '#include "bt_variants.h"\nint model_invoke(void) { return 0; }\n') == set()
    table = "bt_fx_rv_run_fn *const bt_fx_rv_runs[17] = {[0] = bt_fx_rv_run_long};\n"
    assert "fused" in _needs("riscv32", head + '#include "bt_variants.h"\n' + table)
    softmax = "void bt_softmax_s8(const bt_softmax_params *p, const int8_t *in, int8_t *out)"
    declared = [f"{softmax};\n", f"extern {softmax};\n", "typedef void sm_fn(const void *);\nsm_fn bt_softmax_s8;\n",
                "#define SM(p, i, o) bt_softmax_s8(p, i, o)\n", '#ifdef __cplusplus\nextern "C" {\n#endif\n'
                f"{softmax};\n#ifdef __cplusplus\n}}\n#endif\n"]
    for d in declared:
        assert _needs("cortex-m4", head + d + "int model_invoke(void) { return 0; }\n") == set(), d
    used = ["int model_invoke(void) {\n  bt_softmax_s8(0, 0, 0);\n  return 0;\n}\n",
            "static void (*const sm)(const bt_softmax_params *, const int8_t *, int8_t *) = bt_softmax_s8;\n",
            "#define SM(p, i, o) bt_softmax_s8(p, i, o)\nvoid model_run(void) { SM(0, 0, 0); }\n",
            "#define SM_DEF(n) void n(void) { bt_softmax_s8(0, 0, 0); }\nSM_DEF(model_run)\nvoid model_other(int);\n"]
    for u in used:
        assert _needs("cortex-m4", head + u) == {"softmax"}, u


def _covers(m, plan, board: str) -> None:
    """What model.c calls (library.needed_files, read from its text) is within the operators' set."""
    t = targets.get(board)
    model_c = pipeline.code(m, plan, board)["model.c"]
    called, _ = library.needed_files(t, model_c)
    chosen = library.model_sources(t, library.model_opcodes(m.graph), not isinstance(plan, ArenaPlan))
    assert set(called) <= set(chosen), (board, m.graph.name, _rel(set(called) - set(chosen)))


@pytest.mark.parametrize("opts", [{}, {"optimize": "ram"}, {"splits": "auto"}])
def test_tiny_plans_call_only_chosen_kernels(opts):
    m = pipeline.read_model("tiny")
    plan = pipeline.plan_memory(m.graph, PlanOptions.from_strings(opts))
    for b in BOARDS:
        _covers(m, plan, b)


@pytest.mark.slow
def test_every_operators_model_calls_only_chosen_kernels():
    """One random model per operator (test_executor's generators), every kernel set."""
    sys.path.insert(0, str(Path(__file__).parent))
    from test_executor import GENERATORS

    for op, gen in sorted(GENERATORS.items()):
        m = pipeline.read_model(gen(np.random.default_rng(1)))
        plan = pipeline.plan_memory(m.graph, PlanOptions())
        for b in BOARDS:
            _covers(m, plan, b)


def test_scons_compiles_exactly_the_models_kernels(tmp_path):
    """`scons -n` (the commands, nothing run): the kernel CC lines of tiny on cortex-m4."""
    r = subprocess.run(["scons", "-n", "-Q", "-C", str(ROOT), "board=cortex-m4", "model=tiny",
                        f"out={tmp_path / 'b'}"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    cc = sorted(line.split("kernels/", 1)[1] for line in r.stdout.splitlines()
                if line.startswith("CC ") and "/kernels/" in line)
    t = targets.get("cortex-m4")
    want = _rel(library.model_sources(t, ["ADD", "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "MEAN"], False))
    # cortex-m's depthwise files one unit, OUT/kernels/depthwise.c (written from model.c: its calls' files)
    want = [w for w in want if not w.startswith("cortex-m/depthwise")] + ["depthwise.c"]
    assert cc == sorted(want) and len(cc) == 7


@pytest.mark.parametrize("board", ["host", "cortex-m4", "cortex-m55", "riscv32"])
def test_every_c_file_of_an_export_compiles_alone_and_links(tmp_path, board):
    """An IDE compiles every .c in the folder: none is included by another (the reference kernels other
    sets fall back to are NAME_ref.h), so the objects link with no symbol defined twice. The model has a
    depth multiplier 2 depthwise layer (the sets' depthwise.c fall back to the reference code)."""
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder("dm2", seed=3)
    x = b.input((1, 8, 8, 4))
    h = b.depthwise(b.conv2d(x, 8, 3, 1), 3, 1, multiplier=2)
    g = b.finish([b.fully_connected(b.mean(b.max_pool(b.avg_pool(h, 2, 2), 2, 2)), 4)])
    m = pipeline.read_model(g)
    files = export_mod.library(m, pipeline.plan_memory(m.graph, PlanOptions()), board)
    for n, d in files.items():
        (tmp_path / n).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / n).write_bytes(d)
    srcs = sorted(tmp_path.rglob("*.c"))
    assert any(p.name == "depthwise_ref.h" for p in tmp_path.rglob("*.h")) or board == "host"
    t = targets.get(board)
    incs = [f"-I{d}" for d in sorted({p.parent for p in tmp_path.rglob("*.h")})]
    cpu = [f for f in t.cflags if f.startswith(("-m", "-O", "-std", "-f"))] + [f"-D{d}" for d in t.defines]
    objs = []
    for s in srcs:
        o = tmp_path / (s.relative_to(tmp_path).as_posix().replace("/", "_") + ".o")
        r = subprocess.run([t.cc] + cpu + incs + ["-c", str(s), "-o", str(o)], capture_output=True, text=True)
        assert r.returncode == 0, (s, r.stderr[-1500:])
        objs.append(str(o))
    # a relocatable link of every object: a symbol defined twice fails it, as an IDE's link would
    r = subprocess.run([t.cc] + [f for f in cpu if f.startswith("-m")] + ["-nostdlib", "-r", "-o",
                       str(tmp_path / "all.o")] + objs, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-1500:]
    names = {p.relative_to(tmp_path).as_posix() for p in srcs}
    assert not any(n.startswith("kernels/reference/") and n[18:-2] in ("depthwise", "add", "fused", "pooling", "mul")
                   and board != "host" and f"kernels/{t.kernel_search()[0]}/{n[18:]}" in names for n in names)


def test_model_c_is_compiled_once_for_the_trial_links_and_the_link(tmp_path, monkeypatch):
    """The code step's trial links (toolchain.code_bytes) and the link share one compiled model.c
    (toolchain.model_object, cached by content): the compiler sees model.c once (issue 54 item 5)."""
    from buildtool.firmware import toolchain
    from buildtool.zoo.builder import GraphBuilder

    monkeypatch.setenv("BUILDTOOL_CACHE", str(tmp_path / "cache"))
    b = GraphBuilder("fc-once", seed=5)
    m = pipeline.read_model(b.finish([b.fully_connected(b.input((1, 16)), 4)]))
    plan = pipeline.plan_memory(m.graph, PlanOptions())
    t = targets.get("cortex-m4")
    out = tmp_path / "out"
    paths = pipeline.generate(m, plan, "cortex-m4", out)
    seen, real = [], subprocess.run

    def run(cmd, *a, **k):
        seen.append(cmd)
        return real(cmd, *a, **k)

    monkeypatch.setattr(toolchain.subprocess, "run", run)
    kernels = library.model_sources(t, library.model_opcodes(m.graph), False)
    sizes = {toolchain.code_bytes(t, paths["model_c"].read_text(), paths["model_h"].read_text(), kernels)
             for _ in range(2)}
    toolchain.link(t, out, paths, m.graph, plan, kernels)
    model_c = [c for c in seen if any(str(a).endswith("model.c") for a in c)]
    assert len(model_c) == 1 and "-c" in model_c[0]
    assert len(sizes) == 1 and (out / "firmware.elf").exists()
    kernel_cc = [c for c in seen if "-c" in c and "/kernels/" in str(c[c.index("-c") + 1])]
    assert sorted(Path(c[c.index("-c") + 1]).name for c in kernel_cc) == sorted(p.name for p in kernels)


def test_only_layers_with_a_share_of_the_macs_get_their_own_instance():
    """A chain of equal convolutions past INSTANCE_SHARE layers calls the shared variant everywhere (its
    model.c a tenth of the instanced one's length); tiny keeps an instance per convolution. At
    optimize_code=speed, where the code budget takes no instance away."""
    from buildtool.codegen import kernel_variants
    from buildtool.zoo.synthetic import conv_chain

    def code(g):
        m = pipeline.read_model(g)
        return pipeline.code(m, pipeline.plan_memory(m.graph, PlanOptions()), "cortex-m4",
                             PlanOptions(optimize_code="speed"))["model.c"]

    n = kernel_variants.INSTANCE_SHARE + 2
    chain = conv_chain(n, channels=8, size=8)
    assert kernel_variants.instanced(chain) == frozenset()
    few_g = conv_chain(kernel_variants.INSTANCE_SHARE // 2, channels=8, size=8)
    assert kernel_variants.instanced(few_g) == frozenset(o.index for o in few_g.operators[1:])  # not the 3-channel stem
    calls = model_calls(code(few_g), r"op\d+_conv")  # an instance each (equal layers share one; a run: one loop)
    assert len(calls) >= kernel_variants.INSTANCE_SHARE // 2 - 1
    assert code(chain).count("_conv(const bt_conv_params *q, const int8_t *in, int8_t *out)") == 0
    tiny = pipeline.read_model("tiny").graph
    convs = [o.index for o in tiny.operators if o.opcode == "CONV_2D"]
    assert kernel_variants.instanced(tiny) == frozenset(convs)
    assert code(tiny).count("_conv(const bt_conv_params *q, const int8_t *in, int8_t *out)") == len(convs)


def test_scans_kept_per_process_follow_every_edit(tmp_path):
    """toolchain.c_text and include_closure keep what they read while a file's stat is unchanged: an edit that adds an
    include is seen (a new mtime), a file deleted is no longer in the closure, and a file written within RACY_NS of
    its read is read again even when its size and mtime stay the same (two writes within the clock's tick)."""
    import os
    import time

    from buildtool.firmware import toolchain

    a, b, c = tmp_path / "a.c", tmp_path / "b.h", tmp_path / "c.h"
    old = time.time_ns() - 10 * toolchain.RACY_NS
    b.write_text("int b;\n")
    c.write_text("int c;\n")
    a.write_text('#include "b.h"\n')
    for f in (a, b, c):
        os.utime(f, ns=(old, old))
    assert toolchain.include_closure(a, []) == [a.resolve(), b.resolve()]
    assert toolchain.include_closure(a, []) == [a.resolve(), b.resolve()]  # kept
    a.write_text('#include "b.h"\n#include "c.h"\n')
    os.utime(a, ns=(old + 1000, old + 1000))
    assert toolchain.include_closure(a, []) == [a.resolve(), b.resolve(), c.resolve()]
    c.unlink()
    assert toolchain.include_closure(a, []) == [a.resolve(), b.resolve()]
    now = time.time_ns()
    a.write_text("int x = 1;\n")
    os.utime(a, ns=(now, now))
    assert toolchain.c_text(a) == "int x = 1;\n"
    a.write_text("int x = 2;\n")  # the same size, the same mtime: racy, read again
    os.utime(a, ns=(now, now))
    assert toolchain.c_text(a) == "int x = 2;\n"


def test_a_kept_scan_is_kept_at_the_stat_it_read_not_another_threads(tmp_path):
    """toolchain.kept keeps a value at the stat of each file as its own compute read it. It took _TEXTS's stat after
    the compute: when another thread (SCons -j, the daemon's requests) read the file again meanwhile, after an edit,
    the value made from the old text was kept at the new stat and returned until the next edit."""
    import os
    import threading
    import time

    from buildtool.firmware import toolchain

    f = tmp_path / "k.h"
    old = time.time_ns() - 10 * toolchain.RACY_NS
    f.write_text("int v1;\n")
    os.utime(f, ns=(old, old))
    cache = {}

    def compute():
        text = toolchain.c_text(f)
        f.write_text("int v2_edited;\n")  # edited while this compute runs; another thread reads it then
        os.utime(f, ns=(old + 1000, old + 1000))
        other = threading.Thread(target=toolchain.c_text, args=(f,))
        other.start()
        other.join()
        return text, [f]

    assert toolchain.kept(cache, "k", compute) == "int v1;\n"
    assert toolchain.kept(cache, "k", lambda: (toolchain.c_text(f), [f])) == "int v2_edited;\n"


def test_kernel_definitions_are_kept_per_closure(tmp_path):
    """library's kernel definitions are kept per (source, closure): the same source's closure differs when a
    header is edited to include another file, or on a board whose include folders find another file (two boards
    in one SCons build); it was kept per source alone, checked against the first closure's files."""
    import os
    import time

    from buildtool.firmware import toolchain

    src, a, b = tmp_path / "k.c", tmp_path / "a" / "k_ref.h", tmp_path / "b" / "k_ref.h"
    a.parent.mkdir()
    b.parent.mkdir()
    src.write_text('#include "k_ref.h"\n')
    a.write_text("void bt_from_a(void) {}\n")
    b.write_text("void bt_from_b(void) {}\n")
    old = time.time_ns() - 10 * toolchain.RACY_NS
    for f in (src, a, b):
        os.utime(f, ns=(old, old))
    defs = {d: library._definitions_of(src.resolve(), toolchain.include_closure(src, [tmp_path / d]))[0]
            for d in ("a", "b")}
    assert "bt_from_a" in defs["a"] and "bt_from_b" not in defs["a"]
    assert "bt_from_b" in defs["b"] and "bt_from_a" not in defs["b"]
