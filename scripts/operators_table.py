"""Write docs/operators.md: every supported operator, its activation types, the kernels each target set
has for it, whether the planner runs it in place, whether it may sit in a fusion block, and the
bit-exact test cases behind it. Everything comes from the code and the test suite, so rerunning the
script keeps the page true:

- operators and activation types: ops.supported_table() (what `buildtool ops` prints);
- kernels: the C functions the generated code calls for one-operator models of each type (the test
  suite's generators), looked up in the kernel folders (a set optimises an operator when it defines
  one of the functions the operator calls; otherwise the set uses the reference file);
- in place / alias: ops.ALIASING, executor.IN_PLACE_OPS and opdefs memory="concat";
- fusion: fusion/geometry.py's tables (inside a block) and its tail checks (last operator of a block);
- tests: `pytest --collect-only -q -m "slow or not slow"` test ids that name the operator (as
  written or lower-case; a model name stands for the operators of that model) and whose test function
  reaches TFLite Micro (tflm_* helpers, through helpers and fixtures of the test modules).

    python3 scripts/operators_table.py [-o docs/operators.md]
"""

from __future__ import annotations

import argparse
import ast
import datetime
import inspect
import re
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from buildtool.plan.arena import execute as executor
from buildtool.model import opdefs, ops, reader as tflite_reader
from buildtool import targets, zoo  # noqa: E402
from buildtool.plan.arena.planner import plan_arena  # noqa: E402
from buildtool.codegen.model_c import generate  # noqa: E402
from buildtool.plan.fusion import geometry  # noqa: E402
from test_int16 import GEN16  # noqa: E402  (the 16x8 one-operator generators)

KERNELS = ROOT / "buildtool" / "kernels"
SETS = sorted(p.name for p in KERNELS.iterdir() if p.is_dir() and p.name not in ("include", "reference", "tests"))
SAMPLES = 6  # one-operator models per operator and activation type
CALL = re.compile(r"\b(bt_\w+)\(")
DEFINITION = re.compile(r"^[A-Za-z_][\w \t\*]*?\b(bt_\w+)\s*\(")  # at column 0
ALIASES = {"UNIDIRECTIONAL_SEQUENCE_LSTM": ("lstm",)}


# -- kernels ---------------------------------------------------------------------------------
def defined_functions() -> dict:
    """Kernel function -> the kernel folders that define it."""
    where = {}
    for folder in ["reference"] + SETS:
        for c in sorted((KERNELS / folder).glob("*.c")):
            for line in c.read_text().splitlines():
                m = DEFINITION.match(line)
                if m and not line.rstrip().endswith(");"):  # a prototype ends so
                    where.setdefault(m.group(1), set()).add(folder)
    return where


def samples(opcode: str, dtype: str) -> list:
    """One-operator models from the test suite's generators (int16: the 16x8 generators)."""
    import numpy as np
    from test_executor import GENERATORS
    from test_int16 import INT64_BIAS_ONLY, model16

    rng = np.random.default_rng(sum(map(ord, opcode)))
    if dtype == "int8":
        return [GENERATORS[opcode](rng) for _ in range(SAMPLES)]
    return [model16(opcode, rng, bias64=opcode in INT64_BIAS_ONLY or k % 2 == 0) for k in range(SAMPLES)]


def called_functions(g, opcode: str) -> set:
    model_c, _ = generate(g, plan_arena(g), "host")
    body = model_c.split("int model_invoke(void) {")[1]
    return {f for f in CALL.findall(body) if not f.startswith("bt_profile")}


def kernel_column(opcode: str, types: list, where: dict) -> str:
    """'reference' or the sets that optimise it (per activation type when that differs)."""
    per = {}
    for dtype in types:
        funcs = set()
        for g in samples(opcode, dtype):
            funcs |= {f for f in called_functions(g, opcode) if f in where}
        opt = [s for s in SETS if any(s in where[f] for f in funcs)]
        per[dtype] = ", ".join(opt) if opt else "reference"
        if not funcs:
            per[dtype] = "none"
    if len(set(per.values())) == 1:
        return next(iter(per.values()))
    return "; ".join(f"{t}: {v}" for t, v in per.items())


# -- planner and fusion tables ---------------------------------------------------------------
def _opcodes_named(fn) -> set:
    return set(re.findall(r'opcode [!=]= "([A-Z0-9_]+)"', inspect.getsource(fn)))


def in_place_column(opcode: str) -> str:
    if opcode in ops.ALIASING:
        return "alias"
    if opdefs.BY_NAME[opcode].memory == "concat":
        return "inputs as views"
    if opcode in executor.IN_PLACE_OPS + executor.PAD_OPS:
        return "in place"
    return ""


def fusion_column(opcode: str) -> str:
    if opcode in geometry.WINDOWED + geometry.UNARY + geometry.POINTWISE + geometry.MINMAX:
        return "in block"
    if any(opcode in _opcodes_named(f) for f in (geometry.reduces_tiles, geometry.flattens,
                                                 geometry.dense_reads_whole)):
        return "block tail"
    return ""


# -- test counts -----------------------------------------------------------------------------
def collected_ids() -> list:
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "slow or not slow",
                        "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    ids = [line for line in r.stdout.splitlines() if "::" in line]
    if r.returncode != 0 or not ids:
        sys.exit(f"operators_table: pytest --collect-only failed: {r.stdout[-300:]}{r.stderr[-300:]}")
    return ids


def test_references() -> tuple:
    """(name -> names it uses, generator tables): module-level functions (their arguments too: the
    fixtures) and assignments of the test modules; generator tables are their dicts of one-operator
    model generators keyed by opcode."""
    import importlib

    refs, tables = {}, {}
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef):
                names = {a.arg for a in node.args.args}
            elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
                names = set()
            else:
                continue
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            for name in [node.name] if isinstance(node, ast.FunctionDef) else [t.id for t in node.targets]:
                refs.setdefault(name, set()).update(names - {name})
                if isinstance(node, ast.Assign):
                    v = getattr(importlib.import_module(path.stem), name, None)
                    if (isinstance(v, dict) and v and set(v) <= set(ops.SUPPORTED)
                            and all(callable(f) for f in v.values())):
                        tables[name] = set(v)
    return refs, tables


def reachable(refs: dict, name: str) -> set:
    seen, todo = set(), [name]
    while todo:
        for r in refs.get(todo.pop(), ()):
            if r not in seen:
                seen.add(r)
                todo.append(r)
    return seen


def model_operators() -> dict:
    """Model name (as test ids spell it) -> its operators: zoo, ../shared/models and its real/."""
    from conftest import SHARED_MODELS

    found = {name: {op.opcode for op in zoo.build(name).operators} for name in zoo.names()}
    for p in sorted(SHARED_MODELS.glob("*.tflite")) + sorted((SHARED_MODELS / "real").glob("*.tflite")):
        g, _ = tflite_reader.load_any(str(p))
        found[p.stem] = {op.opcode for op in g.operators}
    return found


def _token(word: str) -> re.Pattern:
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])")


def count_tests(ids: list, models: dict) -> dict:
    """opcode -> Counter of executor / host / qemu test ids. A test counts when what it uses reaches
    TFLite Micro (a name with "tflm" in it, or the TFLM-made reference_outputs); its operators are
    those its id names (or a model in its id holds), else those of the generator tables it uses."""
    refs, tables = test_references()
    uses = {f: reachable(refs, f) for f in {tid.split("::")[-1].split("[")[0] for tid in ids}}
    oracle = {f for f, r in uses.items() if any("tflm" in n.lower() or n == "reference_outputs" for n in r)}
    emulated = [b for b in targets.names() if targets.get(b).emulated]
    on_host = [b for b in targets.names() if not targets.get(b).emulated]
    words = {op: [_token(w) for w in (op, op.lower()) + ALIASES.get(op, ())] for op in ops.SUPPORTED}
    model_pats = {m: re.compile(rf"(?<=[\[-]){re.escape(m)}(?=[\]-])") for m in models}
    counts = {op: Counter() for op in ops.SUPPORTED}
    for tid in ids:
        func = tid.split("::")[-1].split("[")[0]
        if func not in oracle:
            continue
        named = {op for op, pats in words.items() if any(p.search(tid) for p in pats)}
        for m, pat in model_pats.items():
            if pat.search(tid):
                named |= models[m] & set(ops.SUPPORTED)
        if not named:
            named = set().union(*(tables[t] for t in tables if t in uses[func]))
        if any(_token(b).search(tid) for b in emulated):
            where = "qemu"
        elif any(_token(b).search(tid) for b in on_host) or "firmware" in func:
            where = "host"
        else:
            where = "executor"
        for op in named:
            counts[op][where] += 1
    return counts


# -- the page --------------------------------------------------------------------------------
def commit() -> str:
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def page() -> str:
    where = defined_functions()
    ids = collected_ids()
    counts = count_tests(ids, model_operators())
    day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    intro = [
        f"Generated by `python3 scripts/operators_table.py` on {day} from commit {commit()} ({len(ids)} test "
        "ids collected); do not edit by hand, rerun the script. Everything below is derived from the code and "
        "the test suite.",
        "- **types**: activation types of inputs -> outputs, from `ops.supported_table()` (what `buildtool ops` "
        "prints).",
        "- **int16**: whether the operator runs 16x8 (int16 activations, int8 weights) here, and where it does "
        "not, why (`ops.INT16_NOT_RUN`, as `buildtool ops` prints it): TFLite Micro refuses it in int16 too (a "
        "fair refusal), or TFLite Micro runs it and this tool does not yet (GREATER: TFLite Micro runs int16 but "
        "its output is not the comparison); `n/a` for operators of bool, float, index or signal values. tests/test_ops_int16.py runs each of those claims in TFLite Micro.",
        "- **kernels**: the target sets (`kernels/<set>/`) that optimise the operator: a set counts when it "
        "defines a C function that the generated code calls for the test suite's one-operator models of that "
        "type; `reference` means every board runs `kernels/reference/`; `none` means no kernel is called "
        "(the planner aliases the bytes, or a copy).",
        "- **memory**: `alias` (the output is its input's bytes: `ops.ALIASING`), `in place` (the output may "
        "overwrite a dying input of its size: `executor.IN_PLACE_OPS`; depthwise with depth multiplier 1 "
        "only; PAD's output holds its dying input, shifted: `executor.PAD_OPS`), `inputs as views` (the "
        "producers write straight into the output: `plan/arena/inplace.py`).",
        "- **fusion**: `in block` (tileable: may sit anywhere in a patch-fusion block, under the conditions "
        "of `fusion/geometry.tileable`), `block tail` (only as a block's last operators: MEAN over height "
        "and width, a flatten, the dense layer reading it whole). Fused and split code is int8 only.",
        "- **tests**: bit-exact test cases, i.e. collected test ids (`pytest --collect-only -q -m \"slow or "
        "not slow\"`) whose test reaches TFLite Micro (a `tflm_*` helper or the TFLM-made "
        "`reference_outputs.json`, through the helpers and fixtures of the test modules). A test id counts "
        "for the operators it names (as written or lower case), for those of a model it names, else for "
        "those of the generator tables its test uses (`GENERATORS`, `GEN16`, `EXTRA_GENERATORS`). Where it "
        "runs: QEMU when the id names an emulated board, host firmware when it names `host` or `xcore` or "
        "the test is a firmware test naming no board, else the numpy executor. One id is one case, though "
        "many loop over several random models; tests that build a network in their body count only for "
        "what their id names, so the counts are a lower bound.",
    ]
    lines = ["# Operators", ""]
    for k, para in enumerate(intro):
        lines += textwrap.wrap(para, 104, subsequent_indent="  " if para.startswith("- ") else "")
        if k == 0:
            lines.append("")
    lines += [
        "",
        "| operator | types | int16 | kernels | memory | fusion | executor | host firmware | QEMU |",
        "|---|---|---|---|---|---|---:|---:|---:|",
    ]
    for row in ops.supported_table():
        op = row["op"]
        types = f"{'/'.join(row['inputs'])} -> {'/'.join(row['outputs'])}"
        act = ["int8", "int16"] if op in GEN16 else ["int8"]
        c = counts[op]
        lines.append(f"| {op} | {types} | {row['int16']} | {kernel_column(op, act, where)} | {in_place_column(op)} | "
                     f"{fusion_column(op)} | {c['executor']} | {c['host']} | {c['qemu']} |")
    lines += ["", "Not built (`opdefs.NOT_BUILT`): TFLite Micro operators with no int8/int16 path there, or whose "
              "int8 path is not yet decided:", "", "| operator | why |", "|---|---|"]
    lines += [f"| {op} | {why} |" for op, why in sorted(opdefs.NOT_BUILT.items())]
    for note in NOTES:
        lines += [""] + textwrap.wrap(note, 116)
    return "\n".join(lines) + "\n"


# Behaviour notes under the table (kept here so that regenerating the page keeps them).
NOTES = (
    "CONV_2D grouped (Keras Conv2D(groups=g): a filter depth of input channels / g, TFLite Micro's reference conv "
    "with output channel o reading group o // (output channels / g)): checked (the filter depth must divide the "
    "input channels, the output channels a multiple of the groups), counted (MACs of the filter depth), run by "
    "the numpy executor per group, and generated as one call of the board's conv per group on channel views "
    "(each group's filter rows, biases and requantisation a slice of the layer's), so every kernel set runs each "
    "group on its own conv paths (int8: the variant its table picks for the group). Fused and split plans tile "
    "int8 grouped convs (each tile one call of the board's tiled conv per group on channel views; a conv with one "
    "output channel a group runs whole, between blocks). Tested on "
    "converter-made models (scripts/grouped_conv_model.py, int8 and 16x8) in tests/test_grouped_conv.py.",
    "Rank 5: ADD, SUB, MUL, MAXIMUM, MINIMUM and PRELU above 4-D run on the 4-D broadcast kernels when their "
    "broadcast folds to 4 axes (size-1 axes dropped, adjacent axes every operand walks as one merged: a "
    "[1, 2, 2, 16, 32] x [1, 1, 1, 1, 32] gate folds to 2), PAD and PADV2 when their unpadded axes fold; what "
    "does not fold is refused by the check, as are STRIDED_SLICE above 4-D (TFLite Micro refuses it) and a "
    "reduction over axes that are not adjacent once size-1 axes are set aside. tests/test_rank5.py lists every "
    "operator once: built at rank 5 and byte-identical to TFLite Micro on host, cortex-m4, cortex-m55, riscv32, "
    "xcore and cortex-m0plus (the reference set), or refused by its check in one line.",
    "SOFTMAX with int8 output over a row whose exponentials sum to 512 or more (512+ logits near the maximum, "
    "e.g. a flat 1000-class output) makes TFLite Micro abort (its rounding shift reaches 32, undefined in C); "
    "every path here (numpy executor, every kernel set) gives that shift's exactly rounded result instead: the "
    "output zero point, -128, for the whole row.",
    "DIV (int8): TFLite Micro's rounding shift is headroom + reciprocal shift - output shift, which passes 31 "
    "(undefined in C; TFLite Micro's x86 build gives saturated codes, and the zero point + 1 for a zero numerator) "
    "whenever the numerator is small next to the divisor. Every path here (numpy executor, every kernel set) gives "
    "that shift's exactly rounded result instead: a quotient of 0, so the output zero point (clamped to the fused "
    "activation's range). Where the shift stays <= 31 the bytes are TFLite Micro's, a divisor at its zero point "
    "included (the reciprocal's int32 arithmetic wrapped as TFLite Micro's does in practice). Models whose "
    "input scale / (divisor scale x output scale) is 2^21 or more are refused (the shift could turn left).",
    "GELU (int8, approximate false or true): the tflite-micro package's interpreter does not register GELU, so "
    "its oracle is TensorFlow Lite's reference kernel (tf.lite.Interpreter with OpResolverType.BUILTIN_REF), not "
    "TFLite Micro. TFLite's int8 GELU is a 256-entry table made in float32 from the dequantised input codes "
    "(0.5 * v * erfc(-v / sqrt(2)), or the tanh form) and requantised with rounding; here the table is made at code "
    "generation (erfc and tanh correctly rounded to float32) and the C is a lookup. TFLite calls its host's libm, "
    "which can differ in the last bit; 1,500 random tables matched TFLite's entry for entry.",
    "READ_VARIABLE / ASSIGN_VARIABLE (resource variables, int8/int16; `model/variables.py`): the reader binds "
    "each VAR_HANDLE (by shared_name) to one variable tensor in a persistent buffer of the plan (live at every "
    "step, never reused: `persistent` in plan.json and the report, like SVDF's state), and the two operators are "
    "byte copies as in TFLite Micro (the reference set's byte copy, `bt_concat_s8`), each variable's reads and "
    "assignments kept in the model's order by the order search and the plan checker. CALL_ONCE is not run but "
    "evaluated at build time, and only when it comes before every variable access and its init subgraph holds "
    "nothing but VAR_HANDLE and ASSIGN_VARIABLE of constants: those constants become the variables' start values "
    "(set in model_init() and when the numpy executor's session starts). Any other init subgraph (another "
    "operator, a computed value, inputs or outputs), a CALL_ONCE after a variable access or naming a missing "
    "subgraph, and a variable read but never assigned are refused in one line. Without an init subgraph a "
    "variable starts as in TFLite Micro: every byte the int8 zero point of its first ASSIGN_VARIABLE's value. "
    "Splitting and fusion refuse them, as they refuse SVDF's state. Tested over several invocations against "
    "TFLite Micro in tests/test_variables.py (models written by TensorFlow's converter: "
    "scripts/variable_models.py).",
    "IF and WHILE (control flow, `model/control.py`): the reader reads each subgraph they name (its tensors "
    "appended to the model's, one index space; nested control flow too, a subgraph running itself refused), and "
    "the checks want the subgraphs' inputs and outputs of the operator's types and shapes (IF: a one-bool "
    "condition first; WHILE: its cond gives one bool, its body's outputs are its inputs), since TFLite Micro "
    "copies the bytes. Each subgraph is planned as an arena of its own; the operator gets one scratch buffer in the "
    "model's arena the size of its largest subgraph's arena (they run one at a time), live at its step only, and "
    "the subgraphs' tensors lie at that buffer's offset plus their own (`subgraphs` in plan.json: each subgraph's "
    "plan). The independent checker verifies each subgraph's plan as a graph of its own and that it fits the "
    "scratch buffer. The numpy executor and the firmware copy values in and out as TFLite Micro does: IF runs the "
    "branch its condition picks; WHILE keeps the loop values in its own outputs, runs cond on them and, while it "
    "gives true, the body, whose outputs become the values. In C each subgraph is a static function "
    "(`bt_subgraph<k>`) the operator's step calls. TensorFlow's int8 models (tests/data/cf_if_int8.tflite and "
    "cf_while_int8.tflite: float32 across the operator, QUANTIZE ... DEQUANTIZE inside each subgraph; WHILE's "
    "counter int32 ADD and LESS, which TFLite Micro runs on the values and buildtool now too, "
    "`reference/int32_ops.c`) plan 128 B (branches 48 B inside) and 144 B (cond and body 64 B inside) and are "
    "byte-identical to TFLite Micro in the executor and in host, Cortex-M4, Cortex-M55 and riscv32 firmware, both "
    "branches taken (tests/test_control_flow.py), as are 20 random IF models (two inputs, random int8 branches) and 20 random "
    "counted loops (0 to 4 iterations, a random int8 body), 4 more in host firmware. Splitting and fusion "
    "refuse control flow in one line; the .tflite writer writes each subgraph with tensors of its own.",
)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--output", default=str(ROOT / "docs" / "operators.md"))
    a = p.parse_args(argv)
    text = page()
    Path(a.output).write_text(text)
    print(f"wrote {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
