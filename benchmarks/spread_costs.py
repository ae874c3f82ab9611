"""Measure what a rows-live layer's spread costs as straight code and from its table, for the code budget
(buildtool/codegen/code_budget.py: spread_candidates), and write buildtool/codegen/spread_costs.json.

    python3 benchmarks/spread_costs.py            # cortex-m (on cortex-m4) and riscv (on riscv32)
    python3 benchmarks/spread_costs.py --print    # the figures only, nothing written

MLPerf Tiny's vww (its rows-live layers: ops 10-26, 9 to 144 pixels, 19 to 115 steps a pixel) built twice per kernel
set with the board's toolchain at its flags, every spread straight (model_c.SPREAD_FORCED "straight") and every one
from its table ("table"), and run in QEMU on one input (the outputs of the two compared byte for byte):
  loop_bytes      the shared loop's code (nm -S of bt_spread_rows in the table build)
  straight_bytes  the straight code's bytes a step: the two builds' code (flash less the weights) apart, plus the
                  loop and the tables, over the layers' steps (a step: a word or byte moved or stored a pixel)
  pixel_step, step  the cycles a layer's table adds over its straight code, pixel_step x pixels x steps + step x
                  steps, the least-squares fit through the layers' figures (pixel_step alone where the step would
                  come out below 0: riscv32's executed instructions), of the run report's cycle estimate
                  (firmware/cycles.py, the midpoint of its low-high) of each layer's region, which holds its
                  spread, on a CPU with a timing table, else executed instructions
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from buildtool import pipeline, targets  # noqa: E402
from buildtool.codegen import code_budget, model_c  # noqa: E402
from buildtool.firmware import runner, toolchain  # noqa: E402
from buildtool.firmware.library import model_opcodes, model_sources  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from variant_costs import measure_sets  # noqa: E402

SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared"))
MODEL = SHARED / "models" / "mlperf-tiny" / "vww_96_int8.tflite"


def build(board: str, form: str, out: Path):
    """vww built and run with every spread `form`: (model.c, {op: cycles}, output bytes, code bytes, nm sizes)."""
    t = targets.get(board)
    m = pipeline.read_model(str(MODEL))
    model_c.SPREAD_FORCED = form
    try:
        pipeline.build(m.graph, board, out)
    finally:
        model_c.SPREAD_FORCED = None
    x = np.random.default_rng(0).integers(-128, 128, size=tuple(m.graph.tensors[m.graph.inputs[0]].shape), dtype=np.int8)
    y, prof, _ = runner.run(board, out, x)
    cyc = {o["op"]: (sum(o["cycles_estimate"]) / 2 if "cycles_estimate" in o else o["count"]) for o in prof["ops"]}
    src = model_sources(t, model_opcodes(m.graph), False)
    code = toolchain.code_bytes(t, (out / "model.c").read_text(), (out / "model.h").read_text(), src)
    r = subprocess.run([t.binutil("nm"), "-S", "--defined-only", str(out / "firmware.elf")], capture_output=True,
                       text=True, check=True)
    sizes = {f[3].split(".")[0]: int(f[1], 16) for f in (ln.split() for ln in r.stdout.splitlines()) if len(f) == 4}
    return (out / "model.c").read_text(), cyc, np.asarray(y).tobytes(), code, sizes


def layers(straight: str, table: str) -> dict:
    """op -> (pixels, steps a pixel, table bytes) of the rows-live layers: the straight build's opN_spread functions
    (a statement a step) and the table build's opN_spread tables."""
    out = {}
    for m in re.finditer(r"static void op(\d+)_spread\(int8_t \*o\) \{\n  for \(int32_t i = 0; i < (\d+);.*?\n(.*?)\n  \}\n\}",
                         straight, re.S):
        t = re.search(rf"static const uint8_t op{m.group(1)}_spread\[(\d+)\]", table)
        out[int(m.group(1))] = (int(m.group(2)), m.group(3).count(";"), int(t.group(1)) if t else 0)
    return out


def measure(board: str, work: Path) -> dict:
    s_src, s_cyc, s_y, s_code, _ = build(board, "straight", work / board / "straight")
    t_src, t_cyc, t_y, t_code, t_sizes = build(board, "table", work / board / "table")
    if s_y != t_y:
        raise SystemExit(f"{board}: vww's outputs differ between straight and table spreads")
    rows = layers(s_src, t_src)
    steps = sum(s for _, s, _ in rows.values())
    loop = t_sizes[code_budget.SPREAD_LOOP]
    a = np.array([[p * s, s] for p, s, _ in rows.values()], float)
    d = np.array([t_cyc[i] - s_cyc[i] for i in rows], float)
    (pixel_step, step), *_ = np.linalg.lstsq(a, d, rcond=None)
    if step < 0:  # no step costs less than nothing: the fit through the pixel-steps alone
        (pixel_step,), *_ = np.linalg.lstsq(a[:, :1], d, rcond=None)
        step = 0.0
    for (i, (p, s, tb)), extra in zip(rows.items(), d):
        print(f"{board} op {i:3d} {p:4d} pixels {s:4d} steps, table {tb:4d} B: +{extra:9,.0f} cycles "
              f"(fit {p * s * pixel_step + s * step:9,.0f})", flush=True)
    straight_bytes = (s_code - t_code + loop + sum(tb for _, _, tb in rows.values())) / steps
    found = {"board": board, "loop_bytes": loop, "straight_bytes": round(straight_bytes, 2),
             "pixel_step": round(float(pixel_step), 3), "step": round(float(step), 2)}
    print(f"{board}: {found}", flush=True)
    return found


def main() -> None:
    measure_sets(code_budget.SPREAD_COSTS, __doc__, measure)


if __name__ == "__main__":
    main()
