"""SCons tool: firmware for one (board, model) pair, with every output declared.

    env = Environment(tools=["default", "btfirmware"])
    elf = env.BtFirmware(board="cortex-m4", model="tiny", out="build/cortex-m4/tiny")

Pipeline (each step a Builder whose targets are declared, so SCons' content
signatures decide what reruns):
  zoo name    -> model.tflite                       (BtZooModel; a .tflite path is used as is)
  model       -> skeleton.json                      (BtSkeleton: the model minus weight values)
  skeleton    -> plan.json                          (BtPlan)
  skeleton+plan -> model.c, model.h, firmware.json  (BtCode)
  model       -> weights.bin                        (BtFlash)
  sources     -> obj/*.o -> firmware.elf            (Object / Program; board.ld from BtLinkerScript)
  compile_commands.json                             (BtText: the exact commands of the objects)
A weight change rewrites model.tflite and weights.bin; skeleton.json comes out
byte-identical, so plan.json, model.c and their objects are not rebuilt: only
weights.o (which .incbin's weights.bin) and the link run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import SCons.Action
import SCons.Builder
import SCons.Script

ROOT = Path(__file__).resolve().parents[3]


# The Python modules each generated file is computed by (a change reruns the step; the
# step's output is compared by content, so an unchanged result stops the rebuild there).
_GENERATORS = {
    "zoo": ("zoo.py", "builder.py", "tflite_writer.py", "ir.py", "refops"),
    "skeleton": ("tflite_reader.py", "ir.py", "ops.py", "flash.py", "codegen/skeleton.py"),
    "plan": ("arena", "plan.py", "ops.py", "ir.py", "codegen/skeleton.py"),
    "code": ("codegen", "refops", "flash.py", "firmware.py", "plan.py", "ops.py", "ir.py"),
    "flash": ("flash.py", "tflite_reader.py", "ir.py"),
}


def _python_deps(step: str) -> list:
    pkg = ROOT / "buildtool"
    out = []
    for rel in _GENERATORS[step]:
        p = pkg / rel
        out += sorted(str(f) for f in p.rglob("*.py")) if p.is_dir() else [str(p)]
    return out


def _write(path, data) -> None:
    from buildtool.firmware import _write as write

    write(Path(path), data)


def _zoo_model(target, source, env):
    from buildtool import zoo
    from buildtool.tflite_writer import serialize

    _write(str(target[0]), serialize(zoo.build(env["BT_ZOO_NAME"])))
    return 0


def _skeleton(target, source, env):
    from buildtool import tflite_reader
    from buildtool.codegen.skeleton import to_json
    from buildtool.ops import check_graph

    g = tflite_reader.load(str(source[0]))
    check_graph(g)
    _write(str(target[0]), json.dumps(to_json(g), indent=0, sort_keys=True) + "\n")
    return 0


def _load_skeleton(path):
    from buildtool.codegen.skeleton import from_json

    return from_json(json.loads(Path(path).read_text()))


def _plan(target, source, env):
    """Plan through the planner daemon (started on demand; BUILDTOOL_NO_DAEMON=1 plans in-process).

    The daemon only saves time: its answer is byte-identical to the in-process planner's.
    """
    from buildtool.daemon.client import plan

    r = plan(_load_skeleton(str(source[0])), dict(env["BT_PLAN_OPTIONS"]))
    _write(str(target[0]), json.dumps(r["plan"], indent=1) + "\n")
    return 0


def _code(target, source, env):
    from buildtool.codegen import generate
    from buildtool.firmware import manifest
    from buildtool.plan import ArenaPlan

    g = _load_skeleton(str(source[0]))
    plan = ArenaPlan.from_json(json.loads(Path(str(source[1])).read_text()))
    c, h = generate(g, plan, env["BT_BOARD"], env["BT_WEIGHTS_ALIGN"])
    _write(str(target[0]), c)
    _write(str(target[1]), h)
    _write(str(target[2]), json.dumps(manifest(g, plan, env["BT_BOARD"]), indent=1) + "\n")
    return 0


def _flash(target, source, env):
    from buildtool import flash, tflite_reader

    g = tflite_reader.load(str(source[0]))
    _write(str(target[0]), flash.build_image(g, env["BT_BOARD"], env["BT_WEIGHTS_ALIGN"]))
    return 0


def _text(target, source, env):
    _write(str(target[0]), source[0].get_contents())
    return 0


def _run(target, source, env):
    import numpy as np

    from buildtool import firmware

    man = json.loads(Path(env["BT_OUT"], "firmware.json").read_text())
    if env.get("BT_INPUT"):
        x = np.load(env["BT_INPUT"], allow_pickle=False)
    else:
        spec = man["inputs"][0]
        dt = np.dtype(spec["dtype"])  # int8, or an int16 model input (values in the int8 range)
        x = np.random.default_rng(0).integers(-128, 128, size=spec["shape"], dtype=np.int8).astype(dt)
    y, prof, ram = firmware.run(env["BT_BOARD"], env["BT_OUT"], x)
    ys = y if isinstance(y, list) else [y]
    for k, v in enumerate(ys):
        print(f"output{k if len(ys) > 1 else ''}: {' '.join(str(e) for e in v.reshape(-1).tolist())}")
    print(firmware.format_report(prof, ram))
    if env.get("BT_OUTPUT"):
        np.save(env["BT_OUTPUT"], ys[0])
    return 0


def _cdb_entry(env, com: str, obj, src) -> dict:
    """One compile_commands.json entry, the command exactly as SCons runs it."""
    src_node = env.File(str(src)) if not hasattr(src, "abspath") else src
    return {"directory": env.Dir("#").abspath, "file": src_node.abspath, "output": obj.abspath,
            "command": env.subst(com, target=[obj], source=[src_node])}


def _split_ldflags(flags) -> tuple:
    libs = [f[2:] for f in flags if f.startswith("-l")]
    return [f for f in flags if not f.startswith("-l")], libs


def bt_firmware(env, board: str, model: str, out: str, kernels: str = "", plan_options: dict | None = None,
                run_input: str = "", run_output: str = "", kernel_root: str = ""):
    """Declare the whole firmware build; return the default nodes (ELF, compile_commands.json,
    weights.bin, plan.json) and register the 'run' alias (build, run, print output and RAM)."""
    from buildtool import firmware, targets

    t = targets.get(board)
    kroot = Path(kernel_root).resolve() if kernel_root else firmware.KERNELS
    if kernels:
        t = t.with_kernels(tuple(kernels.split(",")))
    o = env.Dir(out).abspath
    fenv = env.Clone(BT_BOARD=board, BT_WEIGHTS_ALIGN=t.weights_align,
                     BT_PLAN_OPTIONS=dict(sorted((plan_options or {}).items())))
    if model.endswith(".tflite") or os.sep in model or os.path.exists(model):
        model_node = env.File(model)
    else:
        model_node = fenv.BtZooModel(os.path.join(o, "model.tflite"), fenv.Value(model), BT_ZOO_NAME=model)[0]
        fenv.Depends(model_node, _python_deps("zoo"))
    skel = fenv.BtSkeleton(os.path.join(o, "skeleton.json"), model_node)
    fenv.Depends(skel, _python_deps("skeleton"))
    plan = fenv.BtPlan(os.path.join(o, "plan.json"), skel)
    fenv.Depends(plan, [fenv.Value(repr(fenv["BT_PLAN_OPTIONS"]))] + _python_deps("plan"))
    code = fenv.BtCode([os.path.join(o, n) for n in ("model.c", "model.h", "firmware.json")], [skel, plan])
    fenv.Depends(code, [fenv.Value(f"{board}:{t.weights_align}")] + _python_deps("code"))
    weights = fenv.BtFlash(os.path.join(o, "weights.bin"), model_node)
    fenv.Depends(weights, [fenv.Value(f"{board}:{t.weights_align}")] + _python_deps("flash"))

    cflags = [f for f in firmware.compile_flags(t, o, kroot) if not f.startswith("-I")]
    ldflags, libs = _split_ldflags(list(t.ldflags))
    # include directories through CPPPATH so SCons' scanner sees model.h and every kernel header
    cenv = fenv.Clone(CC=t.cc, AS=t.cc, ASPP=t.cc, LINK=t.cc, CCFLAGS=cflags, ASPPFLAGS=cflags,
                      CPPPATH=[str(d) for d in firmware.include_dirs(t, o, kroot)], LINKFLAGS=ldflags, LIBS=libs,
                      PROGSUFFIX=".elf", OBJSUFFIX=".o")
    objs, db = [], []
    for src in firmware.sources(t, o, kroot):
        src = Path(src)
        if src.name == "weights.S":
            wenv = cenv.Clone()
            wenv.Append(ASPPFLAGS=[f'-DBT_WEIGHTS_FILE=\\"{weights[0].abspath}\\"'])  # through the shell
            obj = wenv.Object(os.path.join(o, "obj", "weights.o"), str(src))
            wenv.Depends(obj, weights)
            db.append(_cdb_entry(wenv, "$ASPPCOM", obj[0], src))
        else:
            if src.is_relative_to(kroot):
                name = f"kernels/{src.stem}.o"
            elif src.name in ("model.c",):
                name = "model.o"
            else:
                name = f"fw/{src.parent.name}_{src.stem}.o"
            obj = cenv.Object(os.path.join(o, "obj", name), code[0] if src.name == "model.c" else str(src))
            if src.name == "model.c":
                cenv.Depends(obj, code[1])
            db.append(_cdb_entry(cenv, "$CCCOM", obj[0], src if src.name != "model.c" else code[0]))
        objs += obj
    if t.linker_template:
        ld = fenv.BtText(os.path.join(o, "board.ld"), fenv.Value(t.linker_script()))
        cenv.Append(LINKFLAGS=[f"-T{ld[0].abspath}"])
        elf = cenv.Program(os.path.join(o, "firmware.elf"), objs)
        cenv.Depends(elf, ld)
    else:
        elf = cenv.Program(os.path.join(o, "firmware.elf"), objs)
    # our own compilation database: SCons' CompilationDatabase is AlwaysBuild, which defeats `scons -q`
    cdb = fenv.BtText(os.path.join(o, "compile_commands.json"), fenv.Value(json.dumps(db, indent=1) + "\n"))
    renv = fenv.Clone(BT_OUT=o, BT_INPUT=run_input, BT_OUTPUT=run_output)
    nodes = elf + cdb + weights + plan
    run = renv.Alias("run", nodes + [code[2]], SCons.Action.Action(_run, "running firmware on $BT_BOARD"))
    renv.AlwaysBuild(run)
    return nodes


def generate(env):
    mk = SCons.Builder.Builder
    env["BUILDERS"]["BtZooModel"] = mk(action=SCons.Action.Action(_zoo_model, "zoo model $BT_ZOO_NAME -> $TARGET"))
    env["BUILDERS"]["BtSkeleton"] = mk(action=SCons.Action.Action(_skeleton, "skeleton $TARGET"))
    env["BUILDERS"]["BtPlan"] = mk(action=SCons.Action.Action(_plan, "plan $TARGET"))
    env["BUILDERS"]["BtCode"] = mk(action=SCons.Action.Action(_code, "codegen $TARGETS"))
    env["BUILDERS"]["BtFlash"] = mk(action=SCons.Action.Action(_flash, "flash image $TARGET"))
    env["BUILDERS"]["BtText"] = mk(action=SCons.Action.Action(_text, "write $TARGET"))
    env.AddMethod(bt_firmware, "BtFirmware")


def exists(env):
    return True
