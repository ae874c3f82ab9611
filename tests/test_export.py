"""`buildtool export`: the library folder builds in a project of its own (its own start-up code, linker
script, main and flags; no buildtool at build time) and runs bit-exact with `buildtool run`: Cortex-M4
with arm-none-eabi-gcc through model.mk in QEMU mps2-an386, the host with the system cc, and the
host through the folder's own CMakeLists.txt. Also: deterministic output, one-line errors (exit 2)
with nothing written, and a kernel selection that misses no kernel function."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from buildtool import cli, targets
from buildtool.firmware import library
from buildtool.firmware.toolchain import KERNELS, include_dirs, kernel_sources, library_code_bytes
from buildtool.options import PlanOptions
from buildtool.pipeline import export as export_mod
from buildtool.steps import flash as flash_step
from buildtool.steps.models import read_model
from buildtool.steps.plan import plan_memory


@pytest.fixture(autouse=True)
def no_daemon(monkeypatch):
    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "1")


def run_cli(args, capsys) -> tuple:
    capsys.readouterr()
    rc = cli.main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


# -- the user's project (not buildtool's): start-up code, linker script, output, main ------------
STARTUP_C = r"""/* Minimal Cortex-M start-up of the test project. */
#include <stdint.h>
extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
int main(void);
void sys_exit(int code);
void Reset_Handler(void) {
  uint32_t *src = &_sidata, *dst = &_sdata;
  while (dst < &_edata) *dst++ = *src++;
  for (dst = &_sbss; dst < &_ebss;) *dst++ = 0;
#if defined(__ARM_FP)
  *(volatile uint32_t *)0xE000ED88 |= 0xFu << 20;  /* CPACR: the FPU on */
#endif
  sys_exit(main());
}
static void Default_Handler(void) { sys_exit(99); }
__attribute__((section(".vectors"), used)) void (*const vectors[16])(void) = {
  (void (*)(void))&_estack, Reset_Handler, Default_Handler, Default_Handler, Default_Handler,
  Default_Handler, Default_Handler, 0, 0, 0, 0, Default_Handler, Default_Handler, 0, Default_Handler,
  Default_Handler};
"""

SEMIHOST_C = r"""/* The test project's output: Arm semihosting (SYS_WRITE0, SYS_EXIT), and the memcpy/memset a
   compiler may call (the project links no C library). */
#include <stddef.h>
#include <stdint.h>
static int semihost(int op, const void *arg) {
  register int r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}
void put(const char *s) { semihost(0x04, s); }
void sys_exit(int code) {
  uint32_t block[2] = {0x20026u, (uint32_t)code};  /* ADP_Stopped_ApplicationExit */
  semihost(0x20, block);
  for (;;) {}
}
/* (volatile: gcc -O2 would turn these loops into calls of themselves) */
void *memcpy(void *d, const void *s, size_t n) {
  volatile unsigned char *a = d; const unsigned char *b = s;
  while (n--) *a++ = *b++;
  return d;
}
void *memset(void *d, int c, size_t n) {
  volatile unsigned char *a = d;
  while (n--) *a++ = (unsigned char)c;
  return d;
}
"""

HOST_IO_C = r"""#include <stdio.h>
void put(const char *s) { fputs(s, stdout); }
"""

MAIN_C = r"""/* The test project's application: feed the input, run the model, print the output values. */
#include <stdint.h>
#include "model.h"
#include "input.h"
void put(const char *s);
static void put_int(int v) {
  char b[16];
  int i = 15, neg = v < 0;
  unsigned u = neg ? -(unsigned)v : (unsigned)v;
  b[i] = 0;
  do { b[--i] = (char)('0' + u % 10); u /= 10; } while (u);
  if (neg) b[--i] = '-';
  put(&b[i]);
}
int main(void) {
  int rc = model_init();
  if (rc != 0) { put("init failed\n"); return 10 + rc; }
  if (model_input_bytes(0) != sizeof input_bytes) return 30;
  volatile int8_t *in = (int8_t *)model_input(0);
  for (uint32_t i = 0; i < sizeof input_bytes; i++) in[i] = input_bytes[i];
  if (model_invoke() != 0) return 20;
  const MODEL_OUTPUT0_TYPE *out = (const MODEL_OUTPUT0_TYPE *)model_output(0);
  put("out:");
  for (uint32_t i = 0; i < MODEL_OUTPUT0_BYTES / sizeof *out; i++) { put(" "); put_int(out[i]); }
  put("\n");
  return 0;
}
"""

# mps2-an386: code at 0x0, block RAM at 0x01000000, RAM at 0x20000000, PSRAM at 0x21000000
LINK_LD = """MEMORY {
  FLASH (rx) : ORIGIN = 0x00000000, LENGTH = 4M
  BLOCKRAM (rx) : ORIGIN = 0x01000000, LENGTH = 16K
  RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 4M
  PSRAM (rwx) : ORIGIN = 0x21000000, LENGTH = 16M
}
ENTRY(Reset_Handler)
SECTIONS {
@MOVED@  .text : { KEEP(*(.vectors)) *(.text*) *(.rodata*) } > FLASH
  _sidata = LOADADDR(.data);
  .data : { _sdata = .; *(.data*) . = ALIGN(4); _edata = .; } > RAM AT > FLASH
  .bss (NOLOAD) : { _sbss = .; *(.bss*) *(COMMON) . = ALIGN(4); _ebss = .; } > RAM
  _estack = ORIGIN(RAM) + LENGTH(RAM);
}
"""
# the README's one line per section, moving the weights to block RAM (QEMU loads them there) and the
# arena to PSRAM
MOVED = ("  .bt_weights : { . = ALIGN(64); KEEP(*(.rodata.bt_weights)) } > BLOCKRAM\n"
         "  .bt_arena (NOLOAD) : { . = ALIGN(16); *(.bss.bt_arena) } > PSRAM\n")

# The same project for a model built in place (CMake LIBRARY, SCons library=True, Bazel library = True): its
# model.h has the same per-input and per-output macros (MODEL_OUTPUT0_BYTES, MODEL_OUTPUT0_TYPE) as export's
OWN_LIBRARY_FILES = {"startup.c": STARTUP_C, "semihost.c": SEMIHOST_C, "link.ld": LINK_LD.replace("@MOVED@", ""),
                     "main.c": MAIN_C}

M4_MAKEFILE = """CC = arm-none-eabi-gcc
CFLAGS = -mcpu=cortex-m4 -mthumb -mfloat-abi=soft @OPT@ -Wall -Werror
include $(LIB)/model.mk
CFLAGS += $(BT_MODEL_CFLAGS)
SRCS = startup.c semihost.c main.c $(BT_MODEL_SRCS)
app.elf: $(SRCS) link.ld
\t$(CC) $(CFLAGS) -nostdlib -nostartfiles @GC@ -T link.ld $(SRCS) -lgcc -o $@
"""

HOST_MAKEFILE = """CC = cc
CFLAGS = -O1 -Wall -Werror
include $(LIB)/model.mk
CFLAGS += $(BT_MODEL_CFLAGS)
app: host_io.c main.c $(BT_MODEL_SRCS)
\t$(CC) $(CFLAGS) $^ -o $@
"""

HOST_CMAKE = """cmake_minimum_required(VERSION 3.13)
project(user_app C)
add_subdirectory(${LIB} bt_model)
add_executable(app main.c host_io.c)
target_link_libraries(app PRIVATE bt_model)
"""


def _tool(name: str) -> None:
    if shutil.which(name) is None:
        pytest.skip(f"{name} not on PATH")


def _project(tmp, files: dict, x: np.ndarray):
    tmp.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (tmp / name).write_text(text)
    (tmp / "input.h").write_text("static const int8_t input_bytes[] = {"
                                 + ", ".join(map(str, x.reshape(-1).tolist())) + "};\n")
    return tmp


def _values(text: str) -> list:
    m = re.search(r"out:([- 0-9]*)\n", text)
    assert m, text
    return [int(v) for v in m.group(1).split()]


def _export_and_reference(tmp, capsys, cpu: str, opts: list) -> tuple:
    """(library folder, the input, `buildtool run`'s output values) for zoo model tiny."""
    x = np.random.default_rng(7).integers(-128, 128, size=(1, 32, 32, 3), dtype=np.int8)
    np.save(tmp / "x.npy", x)
    rc, _, err = run_cli(["run", "tiny", "--input", str(tmp / "x.npy"), "--output", str(tmp / "y.npy")] + opts,
                         capsys)
    assert rc == 0, err
    lib = tmp / "lib"
    rc, out, err = run_cli(["export", "tiny", "--cpu", cpu, "-o", str(lib)] + opts, capsys)
    assert rc == 0 and out.strip() == str(lib), err
    return lib, x, np.load(tmp / "y.npy").reshape(-1).tolist()


def _symbol(elf, name: str) -> int:
    out = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    return next(int(line.split()[0], 16) for line in out.splitlines() if line.split()[-1] == name)


@pytest.mark.parametrize("opts, moved", [([], False), (["--optimize", "ram"], True)], ids=["arena", "fused"])
def test_cortex_m4_library_in_own_project_is_bit_exact(tmp_path, capsys, opts, moved):
    """Built through model.mk with the project's own flags (soft-float ABI, -Os / -O2, no C library),
    start-up code and linker script; run in QEMU; the fused export also moves both sections with the
    README's lines and links without --gc-sections."""
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm", "make"):
        _tool(tool)
    lib, x, ref = _export_and_reference(tmp_path, capsys, "cortex-m4", opts)
    make = M4_MAKEFILE.replace("@OPT@", "-O2" if moved else "-Os -ffunction-sections -fdata-sections")
    make = make.replace("@GC@", "" if moved else "-Wl,--gc-sections")
    proj = _project(tmp_path / "proj", {"startup.c": STARTUP_C, "semihost.c": SEMIHOST_C, "main.c": MAIN_C,
                                        "link.ld": LINK_LD.replace("@MOVED@", MOVED if moved else ""),
                                        "Makefile": make}, x)
    r = subprocess.run(["make", "-s", f"LIB={lib}"], cwd=proj, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    run = subprocess.run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-semihosting-config",
                          "enable=on,target=native", "-kernel", "app.elf"], cwd=proj, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert _values(run.stdout + run.stderr) == ref  # (QEMU writes the semihosting console to stderr)
    arena, weights = _symbol(proj / "app.elf", "bt_arena"), _symbol(proj / "app.elf", "bt_weights")
    assert arena % 16 == 0 and weights % 64 == 0
    assert (0x21000000 if moved else 0x20000000) <= arena < (0x22000000 if moved else 0x20400000)
    assert (0x01000000 if moved else 0) <= weights < (0x01004000 if moved else 0x400000)


MAIN_CPP = r"""// The test project's application in C++ (arm-none-eabi-g++): model.h's C API from C++ code.
#include <stdint.h>  // (no libstdc++ here: arm-none-eabi-g++ without its C++ library)
#include "model.h"
#include "input.h"
extern "C" void put(const char *s);
namespace {
class Printer {
 public:
  void text(const char *s) const { put(s); }
  void number(int v) const {
    char b[16];
    int i = 15;
    bool neg = v < 0;
    unsigned u = neg ? 0u - static_cast<unsigned>(v) : static_cast<unsigned>(v);
    b[i] = 0;
    do { b[--i] = static_cast<char>('0' + u % 10); u /= 10; } while (u);
    if (neg) b[--i] = '-';
    put(&b[i]);
  }
};
}  // namespace
int main() {
  const Printer out;
  if (int rc = model_init()) { out.text("init failed\n"); return 10 + rc; }
  if (model_input_bytes(0) != sizeof input_bytes) return 30;
  auto *in = static_cast<volatile int8_t *>(model_input(0));
  for (uint32_t i = 0; i < sizeof input_bytes; i++) in[i] = input_bytes[i];
  if (model_invoke() != 0) return 20;
  const auto *y = static_cast<const MODEL_OUTPUT0_TYPE *>(model_output(0));
  out.text("out:");
  for (uint32_t i = 0; i < MODEL_OUTPUT0_BYTES / sizeof *y; i++) { out.text(" "); out.number(y[i]); }
  out.text("\n");
  return 0;
}
"""

CPP_CMAKE = """cmake_minimum_required(VERSION 3.13)
project(cpp_app C CXX)
add_subdirectory(@LIB@ bt_model)
add_executable(app main.cpp startup.c semihost.c)
target_compile_options(app PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti>)
target_link_options(app PRIVATE -nostdlib -nostartfiles -T${CMAKE_CURRENT_SOURCE_DIR}/link.ld)
target_link_libraries(app PRIVATE bt_model gcc)
set_target_properties(app PROPERTIES SUFFIX ".elf")
"""
HARD_FLOAT = "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -O2"


@pytest.mark.slow
def test_cortex_m4_library_in_a_cpp_project_with_the_fpu_off_is_bit_exact(tmp_path, capsys):
    """Issue 53: a C++ application (arm-none-eabi-g++, -fno-exceptions -fno-rtti) calls model.h's API
    (extern "C") through the export's own CMakeLists.txt, every file built hard-float (-mfloat-abi=hard
    -mfpu=fpv4-sp-d16) with a start-up that never turns the FPU on: bit-exact in QEMU mps2-an386, and the
    library objects hold no FPU instruction (bt_model's sources build with -mgeneral-regs-only). The same
    project with that block of CMakeLists.txt off builds kernels that use the FPU's registers (vldr/vstr/vmov,
    which fault with the FPU off wherever a model's path reaches them: fx_pw_add's, which the fused tiny's ADD ran
    until FX_ADD_HS), so the block is what keeps the library off the FPU."""
    for tool in ("arm-none-eabi-gcc", "arm-none-eabi-g++", "qemu-system-arm", "cmake", "ninja"):
        _tool(tool)
    lib, x, ref = _export_and_reference(tmp_path, capsys, "cortex-m4", ["--optimize", "ram"])
    cmakelists = (lib / "CMakeLists.txt").read_text()
    assert "-mgeneral-regs-only" in cmakelists and "FPU:" in (lib / "model.h").read_text()
    startup = STARTUP_C.replace("*(volatile uint32_t *)0xE000ED88 |= 0xFu << 20;", "")
    assert startup != STARTUP_C
    files = {"startup.c": startup, "semihost.c": SEMIHOST_C, "main.cpp": MAIN_CPP,
             "link.ld": LINK_LD.replace("@MOVED@", ""), "CMakeLists.txt": CPP_CMAKE.replace("@LIB@", lib.as_posix())}
    proj = _project(tmp_path / "proj", files, x)

    def build_and_run(name):
        build = proj / name
        r = subprocess.run(["cmake", "-G", "Ninja", "-S", str(proj), "-B", str(build), "-DCMAKE_SYSTEM_NAME=Generic",
                            "-DCMAKE_C_COMPILER=arm-none-eabi-gcc", "-DCMAKE_CXX_COMPILER=arm-none-eabi-g++",
                            "-DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY", f"-DCMAKE_C_FLAGS={HARD_FLOAT}",
                            f"-DCMAKE_CXX_FLAGS={HARD_FLOAT}"], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and "CMake Warning" not in r.stderr, r.stdout[-3000:] + r.stderr[-3000:]
        r = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        run = subprocess.run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-semihosting-config",
                              "enable=on,target=native", "-kernel", str(build / "app.elf")], capture_output=True,
                             text=True, timeout=60)
        return build, run

    build, run = build_and_run("build")
    assert run.returncode == 0, run.stdout + run.stderr
    assert _values(run.stdout + run.stderr) == ref
    assert "Tag_ABI_VFP_args: VFP registers" in subprocess.run(
        ["arm-none-eabi-readelf", "-A", str(build / "app.elf")], capture_output=True, text=True).stdout
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", str(build / "bt_model" / "libbt_model.a")],
                         capture_output=True, text=True, check=True).stdout
    assert "bt_conv_s8" in dis and not re.search(r"\tv(ldr|str|mov|ldm|stm|push|pop)", dis)
    (lib / "CMakeLists.txt").write_text(cmakelists.replace('if(CMAKE_C_COMPILER_ID STREQUAL "GNU")', "if(FALSE)"))
    build, _ = build_and_run("build-fpu")
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", str(build / "bt_model" / "libbt_model.a")],
                         capture_output=True, text=True, check=True).stdout
    assert re.search(r"\tv(ldr|str|mov|ldm|stm|push|pop)", dis)  # the kernels' own, which fault with the FPU off


LIB_SIZE_MAKEFILE = """include $(LIB)/model.mk
SRCS = $(filter-out %/model_weights.c,$(BT_MODEL_SRCS))
OBJS = $(patsubst $(LIB)/%.c,obj/%.o,$(SRCS))
obj/%.o: $(LIB)/%.c
\tmkdir -p $(dir $@) && $(CC) $(FLAGS) $(BT_MODEL_CFLAGS) -c $< -o $@
lib.elf: $(OBJS)
\t$(CC) $(LDFLAGS) $(OBJS) -lgcc -o $@
"""


def test_model_h_states_the_code_and_stack_an_independent_build_measures(tmp_path, capsys):
    """Issue 50 item 4: model.h's MODEL_CODE_BYTES is what arm-none-eabi-size says of the folder's own
    sources (model.mk's list but the weights array) compiled with the flags model.h names and linked alone
    with --gc-sections from the API (make, not buildtool's compile); MODEL_STACK_BYTES is the stack
    high-water mark `buildtool run --board cortex-m4` reports for the model; README.md states both."""
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm", "make"):
        _tool(tool)
    lib, _, _ = _export_and_reference(tmp_path, capsys, "cortex-m4", [])
    h = (lib / "model.h").read_text()
    code = int(re.search(r"#define MODEL_CODE_BYTES (\d+)u", h).group(1))
    stack = int(re.search(r"#define MODEL_STACK_BYTES (\d+)u", h).group(1))
    flags = re.search(r"compiled with `([^`]*)`", " ".join(h.split())).group(1)
    t = targets.get("cortex-m4")
    assert flags == " ".join(t.cflags)
    roots = ["model_init", "model_invoke", "model_input", "model_output", "model_input_bytes", "model_output_bytes"]
    ld = (["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-nostdlib", "-Wl,--gc-sections",
           "-Wl,--unresolved-symbols=ignore-all", "-Wl,-e,model_invoke"] + [f"-Wl,-u,{r}" for r in roots])
    (tmp_path / "Makefile").write_text(LIB_SIZE_MAKEFILE)
    r = subprocess.run(["make", "-s", f"LIB={lib}", "CC=arm-none-eabi-gcc", f"FLAGS={flags}", f"LDFLAGS={' '.join(ld)}"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    text, data = subprocess.run(["arm-none-eabi-size", "lib.elf"], cwd=tmp_path, capture_output=True, text=True,
                                check=True).stdout.splitlines()[1].split()[:2]
    assert code == int(text) + int(data) > 8_192  # real kernels linked, not an empty library
    np.save(tmp_path / "zeros.npy", np.zeros((1, 32, 32, 3), np.int8))
    rc, _, err = run_cli(["run", "tiny", "--board", "cortex-m4", "--input", str(tmp_path / "zeros.npy"),
                          "--output", str(tmp_path / "y.npy")], capsys)
    assert rc == 0, err
    assert int(re.search(r"\+ stack ([\d,]+) B", err).group(1).replace(",", "")) == stack > 0
    readme = (lib / "README.md").read_text()
    assert f"| code, constants, initialised data | | {code} |" in readme and f"| stack (high-water mark) | | {stack} |" in readme


def test_a_board_that_does_not_run_here_says_its_stack_is_not_measured(tmp_path, capsys):
    """Where the board has no emulator (nrf52840dk) the export still measures its code, and says the stack
    is not measured instead of stating a figure."""
    lib = tmp_path / "lib"
    rc, _, err = run_cli(["export", "tiny", "--cpu", "nrf52840dk", "-o", str(lib)], capsys)
    assert rc == 0, err
    h = (lib / "model.h").read_text()
    assert re.search(r"#define MODEL_CODE_BYTES \d+u", h) and "MODEL_STACK_BYTES " not in h.replace(
        "MODEL_STACK_BYTES is not defined", "")
    assert "does not run here" in " ".join(h.split()) and "Stack: not measured" in (lib / "README.md").read_text()


def test_weights_bytes_agree_everywhere(tmp_path, capsys):
    """MODEL_WEIGHTS_BYTES (model.h) is the length of bt_weights[] (model_weights.c), of weights.bin and
    the figure README.md states, for a layer plan and a fused plan on boards of different weight alignment;
    model.h names no file the folder does not hold."""
    for opts, cpu in (([], "cortex-m4"), (["--optimize", "ram"], "riscv32"), ([], "cortex-m0plus")):
        lib = tmp_path / f"lib-{cpu}"
        rc, _, err = run_cli(["export", "tiny", "--cpu", cpu, "-o", str(lib)] + opts, capsys)
        assert rc == 0, err
        h = (lib / "model.h").read_text()
        n = int(re.search(r"#define MODEL_WEIGHTS_BYTES (\d+)u", h).group(1))
        m = re.search(r"const uint8_t bt_weights\[(\d+)\][^=]*= \{(.*?)\};", (lib / "model_weights.c").read_text(), re.S)
        assert int(m.group(1)) == n == len(m.group(2).split(","))
        assert f"| `bt_weights` | {n} |" in (lib / "README.md").read_text()
        assert f"model_weights.c) are {n} bytes aligned" in h
        model = read_model("tiny")
        plan = plan_memory(model.graph, PlanOptions.from_map({"optimize": "ram"} if opts else {}))
        assert len(flash_step.image(model, export_mod.board_for(cpu), plan)) == n
        for name in re.findall(r"\b[\w/]+\.(?:py|c|h|bin|json|md)\b", re.sub(r"<[^>]*>", "", h)):
            assert (lib / name).exists(), name


def test_cortex_m0plus_library_runs_on_an_armv6m_core(tmp_path, capsys):
    """export --cpu cortex-m0plus (no DSP instructions, no unaligned loads: the reference kernels) in the
    same own project, its linker script for QEMU's micro:bit (a Cortex-M0, the same ARMv6-M instruction
    set: 256 KiB flash, 16 KiB RAM), bit-exact."""
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm", "make"):
        _tool(tool)
    lib, x, ref = _export_and_reference(tmp_path, capsys, "cortex-m0plus", [])
    assert not list((lib / "kernels").glob("cortex-m/*"))  # the DSP set is not the M0+'s
    make = M4_MAKEFILE.replace("-mcpu=cortex-m4", "-mcpu=cortex-m0plus").replace("@OPT@", "-Os")
    ld = LINK_LD.replace("@MOVED@", "").replace("LENGTH = 4M\n  BLOCKRAM", "LENGTH = 256K\n  BLOCKRAM")
    ld = ld.replace("RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 4M", "RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 16K")
    proj = _project(tmp_path / "proj", {"startup.c": STARTUP_C, "semihost.c": SEMIHOST_C, "main.c": MAIN_C,
                                        "link.ld": ld, "Makefile": make.replace("@GC@", "-Wl,--gc-sections")}, x)
    r = subprocess.run(["make", "-s", f"LIB={lib}"], cwd=proj, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    def run():
        return subprocess.run(["qemu-system-arm", "-M", "microbit", "-nographic", "-semihosting-config",
                               "enable=on,target=native", "-kernel", "app.elf"], cwd=proj, capture_output=True,
                              text=True, timeout=60)

    r = run()
    assert r.returncode == 0, r.stdout + r.stderr
    assert _values(r.stdout + r.stderr) == ref
    # the weights' section moved where nothing loads it (NOLOAD RAM, as a memory the start-up code has
    # not set up): model_init says so (1), the application stops before invoking
    (proj / "link.ld").write_text(ld.replace("  .text :", "  .bt_weights (NOLOAD) : { KEEP(*(.rodata.bt_weights)) } > RAM\n"
                                                          "  .text :"))
    (proj / "app.elf").unlink()
    assert subprocess.run(["make", "-s", f"LIB={lib}"], cwd=proj, capture_output=True, timeout=300).returncode == 0
    r = run()
    assert r.returncode == 11 and "init failed" in r.stdout + r.stderr, r.stdout + r.stderr


def test_host_library_builds_with_cc_and_own_cmake(tmp_path, capsys):
    """The host export: with the system cc through model.mk, and through its own CMakeLists.txt (a
    static library target linked into the project's executable) with cmake and ninja."""
    for tool in ("cc", "make"):
        _tool(tool)
    lib, x, ref = _export_and_reference(tmp_path, capsys, "host", [])
    proj = _project(tmp_path / "proj", {"host_io.c": HOST_IO_C, "main.c": MAIN_C, "Makefile": HOST_MAKEFILE}, x)
    r = subprocess.run(["make", "-s", f"LIB={lib}"], cwd=proj, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    run = subprocess.run([str(proj / "app")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and _values(run.stdout) == ref, run.stdout + run.stderr
    if shutil.which("cmake") is None or shutil.which("ninja") is None:
        pytest.skip("cmake or ninja not on PATH")
    cm = _project(tmp_path / "cmake", {"host_io.c": HOST_IO_C, "main.c": MAIN_C,
                                       "CMakeLists.txt": HOST_CMAKE.replace("${LIB}", lib.as_posix())}, x)
    for cmd in (["cmake", "-G", "Ninja", "-S", str(cm), "-B", str(cm / "build")],
                ["cmake", "--build", str(cm / "build")]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert (cm / "build" / "bt_model" / "libbt_model.a").is_file()
    run = subprocess.run([str(cm / "build" / "app")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and _values(run.stdout) == ref, run.stdout + run.stderr


def _tree(d) -> dict:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_export_is_deterministic_and_self_contained(tmp_path, capsys):
    runs = []
    for k in range(2):
        out = tmp_path / f"e{k}"
        rc, _, err = run_cli(["export", "tiny", "--cpu", "cortex-m4", "--optimize", "ram", "-o", str(out)], capsys)
        assert rc == 0, err
        runs.append(_tree(out))
    assert runs[0] == runs[1]
    files = runs[0]
    assert {"model.c", "model.h", "model_weights.c", "model_platform.c", "CMakeLists.txt", "model.mk",
            "README.md"} <= set(files)
    # nothing of buildtool's harness: no platform header, I/O, semihosting, start-up or main
    for name, data in files.items():
        text = data.decode()
        assert '#include "bt_platform.h"' not in text and "bkpt" not in text and "bt_puts" not in text, name
        assert not re.search(r"\bint\s+main\s*\(", text), name
        for header in re.findall(r"#\s*include\s*<([^>]+)>", text) if name.endswith((".c", ".h")) else ():
            assert header in ("stdint.h", "stddef.h", "arm_acle.h"), (name, header)
    # the arena and weights in their sections; model.h states the API
    assert 'section(".bss.bt_arena")' in files["model.c"].decode()
    assert 'section(".rodata.bt_weights")' in files["model_weights.c"].decode()
    h = files["model.h"].decode()
    for needle in ("int model_init(void);", "int model_invoke(void);", "void *model_input(int i);",
                   "#define MODEL_ARENA_BYTES", "#define MODEL_INPUT0_SHAPE {1, 32, 32, 3}",
                   "#define MODEL_OUTPUT0_SHAPE {1, 10}"):
        assert needle in h
    # an earlier export is replaced whole, with the same bytes
    rc, _, err = run_cli(["export", "tiny", "--cpu", "cortex-m4", "--optimize", "ram", "-o", str(tmp_path / "e0")],
                         capsys)
    assert rc == 0 and _tree(tmp_path / "e0") == files, err


@pytest.mark.parametrize("args, needle", [
    (["--cpu", "cortex-m99"], "unknown CPU or board 'cortex-m99'"),
    (["--cpu", "host", "--bogus"], "unrecognized arguments: --bogus"),
    ([], "required: --cpu"),
    (["--cpu", "host", "--align", "3"], "power of two"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, args, needle):
    out = tmp_path / "lib"
    r = subprocess.run([sys.executable, "-m", "buildtool.cli", "export", "tiny", "-o", str(out)] + args,
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith("buildtool: error:") and needle in lines[0], r.stderr
    assert os.listdir(tmp_path) == []


def test_a_folder_of_other_files_is_refused_untouched(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    rc, _, err = run_cli(["export", "tiny", "--cpu", "host", "-o", str(out)], capsys)
    assert rc == 2 and "not empty" in err and len(err.strip().splitlines()) == 1
    assert os.listdir(out) == ["notes.txt"] and sorted(os.listdir(tmp_path)) == ["mine"]


@pytest.mark.parametrize("board", sorted({b for b in targets.names()
                                          if targets.get(b).kernel_search()[0] != "reference"}))
def test_kernel_selection_knows_every_kernel_function(board):
    """Every function the kernel headers declare (but the platform's bt_read_input_rows) is defined,
    as library.definitions reads the sources, by a source of the board's kernel set: a model.c
    calling it gets that source in its export."""
    t = targets.get(board)
    declared = set()
    for h in ("bt_kernels.h", "bt_fused.h"):
        text = library._text(KERNELS / "include" / h)
        declared |= {m.group(1) for m in re.finditer(r"^(?!typedef\b)[A-Za-z_][\w \t*]*?\b([a-z]\w*)\s*\([^;{}]*\)\s*;", text, re.M)}
    assert len(declared) > 50
    names, prefixes = set(), set()
    dirs = include_dirs(t, None)
    for s in kernel_sources(t):
        n, p = library.definitions("\n".join(library._text(f) for f in library.include_closure(s, dirs)
                                             if library._code_file(f)))
        names |= n
        prefixes |= p
    missing = {d for d in declared - names - {"bt_read_input_rows"}
               if not any(d.startswith(p) and d[len(p):].isdigit() for p in prefixes)}
    # the riscv set's fused entries (riscv/fused.c), which model.c calls on that set alone: on another it defines
    # them as that set's fx_chw / fx_win_conv_all (fused_c's used_variants fallback)
    if "riscv" not in t.kernel_search():
        missing -= {"fx_chw_rv", "fx_rv_pw1"}
    assert not missing


def test_library_of_a_layer_plan_takes_only_its_kernels():
    m = read_model("tiny")
    files = export_mod.library(m, plan_memory(m.graph), "cortex-m4")
    kernels = sorted(n for n in files if n.startswith("kernels/") and n.endswith(".c"))
    assert "kernels/cortex-m/conv.c" in kernels and "kernels/reference/softmax.c" not in kernels
    assert "model_platform.c" not in files  # no fused kernels: no platform hook


def test_code_bytes_objects_are_cached_by_what_they_include(tmp_path, monkeypatch):
    """MODEL_CODE_BYTES' objects come from a cache keyed by the source and every file it includes: the same
    folder again links the cached objects (same bytes), an edited header recompiles (the new bytes), and a
    second folder with the same files elsewhere hits the cache."""
    monkeypatch.setenv("BUILDTOOL_CACHE", str(tmp_path / "cache"))
    t = targets.get("host")
    body = "int model_invoke(void) { volatile int a[N] = {0}; int s = 0; for (int i = 0; i < N; i++) s += a[i] * i; return s; }\n"

    def folder(name, n):
        d = tmp_path / name
        (d / "inc").mkdir(parents=True, exist_ok=True)
        (d / "inc" / "n.h").write_text(f"#define N {n}\n")
        (d / "model.c").write_text('#include "n.h"\n' + body)
        return d

    small = library_code_bytes(t, folder("a", 4), ["model.c"], ["inc"])
    objects = sorted((tmp_path / "cache" / "objects").glob("*.o"))
    assert len(objects) == 1
    assert library_code_bytes(t, folder("b", 4), ["model.c"], ["inc"]) == small  # elsewhere: the cached object
    assert sorted((tmp_path / "cache" / "objects").glob("*.o")) == objects
    big = library_code_bytes(t, folder("a", 4000), ["model.c"], ["inc"])  # the header edited: compiled again
    assert len(list((tmp_path / "cache" / "objects").glob("*.o"))) == 2
    assert big != small
