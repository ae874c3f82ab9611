"""The text of a drop-in library (`buildtool export`) besides model.c and the kernels: model.h with
its API block (input/output shapes, types, quantisation, alignments), the weights as a C array in
their own linker section, the weak platform hook, CMakeLists.txt, model.mk and README.md, all from
codegen/templates/library_*.in. Deterministic: the same arguments give the same bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

from .c_text import c_comment

TEMPLATES = Path(__file__).resolve().parent / "templates"
ARENA_SECTION = ".bss.bt_arena"  # matched by *(.bss*) (and *(.bss.*)) of any GNU ld script
WEIGHTS_SECTION = ".rodata.bt_weights"  # matched by *(.rodata*)
WEIGHTS_ALIGN = 64  # as firmware_src/common/weights.S places weights.bin in buildtool's own firmware


def _template(name: str, /, **fields) -> str:
    return Template((TEMPLATES / name).read_text(encoding="utf-8")).substitute(fields)


NO_FPU_FLAG = "-mgeneral-regs-only"  # gcc (Arm): no FPU or SIMD register, the float ABI kept; float code fails


def hard_float(cpu_flags) -> bool:
    """Whether flags build for an Arm FPU (-mfloat-abi=hard or softfp): gcc then may move data through FPU
    registers (vldr/vstr) in the integer kernels, which needs the FPU enabled."""
    return any(f in ("-mfloat-abi=hard", "-mfloat-abi=softfp") for f in cpu_flags)


def model_h(model_h_text: str, arena_align: int, weights_bytes: int, cpu_flags=()) -> str:
    """The generated model.h (its inputs' and outputs' macros included: model_c.io_macros) with the
    library's API block before its closing #endif."""
    P, p = "MODEL", "model"
    fpu = ("\n   FPU: the library does no floating-point arithmetic (but float model I/O), yet gcc compiling it\n"
           "   with a hard-float ABI may move data through FPU registers (vldr/vstr d7): enable the FPU (CPACR)\n"
           f"   in your start-up code before {p}_init(), or compile model.mk's BT_MODEL_NO_FPU_SRCS with\n"
           f"   {NO_FPU_FLAG} (gcc; the float ABI is kept; CMakeLists.txt does so). See README.md."
           if hard_float(cpu_flags) else "")
    block = _template("library_api.h.in", p=p, P=P, arena_align=arena_align, arena_section=ARENA_SECTION,
                      weights_bytes=weights_bytes, weights_align=WEIGHTS_ALIGN, weights_section=WEIGHTS_SECTION,
                      fpu=fpu)
    head, sep, tail = model_h_text.rpartition("#endif")
    if not sep or tail.strip():
        raise ValueError("model.h does not end in its include guard's #endif")
    return head + block + sep + tail


@dataclass(frozen=True)
class CodeFacts:
    """What the export measured of its code and stack (pipeline/export.py): code_bytes (MODEL_CODE_BYTES),
    the compiler flags it was compiled with, stack_bytes (MODEL_STACK_BYTES; None: not measured) and how
    the stack was measured (or why it was not)."""

    code_bytes: int
    flags: str
    stack_bytes: int | None
    stack_how: str


def _code_text(f: CodeFacts) -> str:
    return (f"the library's code, constants and initialised data (the weights with their requantisation tables, and the arena, apart), "
            f"{f.code_bytes} bytes: its sources but model_weights.c compiled with `{f.flags}` and linked alone "
            f"with --gc-sections, keeping what the model_* functions reach (libgcc's helpers in, the C "
            f"library's memcpy/memset not); other compilers and flags give other figures")


def code_facts_h(model_h_text: str, facts: CodeFacts) -> str:
    """model.h with MODEL_CODE_BYTES and MODEL_STACK_BYTES (when measured), and how each was measured,
    before its closing #endif."""
    stack = (f"MODEL_STACK_BYTES: {facts.stack_how}." if facts.stack_bytes is not None
             else f"MODEL_STACK_BYTES is not defined, the stack not measured: {facts.stack_how}.")
    block = ("\n/* Code and stack, as buildtool export measured them.\n"
             + _wrap(f"MODEL_CODE_BYTES: {_code_text(facts)}.") + "\n" + _wrap(stack) + " */\n"
             + f"#define MODEL_CODE_BYTES {facts.code_bytes}u\n"
             + (f"#define MODEL_STACK_BYTES {facts.stack_bytes}u\n" if facts.stack_bytes is not None else ""))
    head, sep, tail = model_h_text.rpartition("#endif")
    if not sep or tail.strip():
        raise ValueError("model.h does not end in its include guard's #endif")
    return head + block + sep + tail


def _wrap(text: str, width: int = 100) -> str:
    """text as comment lines of at most width characters, indented three spaces."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width - 3:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join("   " + x for x in lines + [line])


def weights_c(label: str, data: bytes) -> str:
    """model_weights.c: the weights image as a const array in WEIGHTS_SECTION."""
    per = 16
    rows = [", ".join(str(b) for b in data[i:i + per]) for i in range(0, len(data), per)]
    return _template("library_weights.c.in", label=c_comment(label), section=WEIGHTS_SECTION, weights="bt_weights",
                     size=len(data), align=WEIGHTS_ALIGN, data="{\n  " + ",\n  ".join(rows) + "\n}")


def platform_c() -> str:
    """model_platform.c: the weak bt_read_input_rows."""
    return _template("library_platform.c.in")


_SAFE = re.compile(r"^[A-Za-z0-9_./+-]+$")


def _check_paths(paths) -> None:
    for s in paths:
        if not _SAFE.match(s):
            raise ValueError(f"library path {s!r} needs quoting in a build file")


def _lines(head: str, indent: str, items, tail: str, sep: str = "\n") -> str:
    return head + sep.join(indent + s for s in items) + tail if items else ""


_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def no_fpu_sources(files: dict, sources: list, cpu_flags) -> list:
    """The sources an export compiles with NO_FPU_FLAG on a hard-float CPU: those that name no float
    or double outside comments (float model I/O does: quantize.c, cast.c, a model.c calling them)."""
    if not hard_float(cpu_flags):
        return []
    return [s for s in sources if not re.search(r"\b(float|double)\b", _COMMENT.sub("", files[s]))]


def build_files(label: str, board: str, kset: str, sources: list, includes: list, defines: list,
                cpu_flags: list, no_fpu: list = ()) -> dict:
    """CMakeLists.txt and model.mk: sources and include folders relative to the library folder; no_fpu:
    the sources compiled with NO_FPU_FLAG (no_fpu_sources)."""
    _check_paths(list(sources) + list(includes))
    label = c_comment(label)
    cmake = _template("library_cmake.in", label=label, board=board, kset=kset,
                      sources="".join(f"  {s}\n" for s in sources).rstrip("\n"),
                      includes="".join(f"  {d}\n" for d in includes if d != ".").rstrip("\n"),
                      defines=(f"target_compile_definitions(bt_model PRIVATE {' '.join(defines)})\n"
                               if defines else ""),
                      nofpu=_lines(f"# no FPU register where no floating-point arithmetic is (README.md, FPU)\n"
                                   f'if(CMAKE_C_COMPILER_ID STREQUAL "GNU")\n  set_source_files_properties(\n',
                                   "    ", no_fpu, f"\n    PROPERTIES COMPILE_OPTIONS {NO_FPU_FLAG})\nendif()\n"))
    make = _template("library_make.in", label=label, board=board, kset=kset,
                     sources=" \\\n".join(f"  $(BT_MODEL_DIR)/{s}" for s in sources),
                     includes=" \\\n".join("  $(BT_MODEL_DIR)" + (f"/{d}" if d != "." else "") for d in includes),
                     defines="".join(f" {d}" for d in defines), cpu_flags="".join(f" {f}" for f in cpu_flags),
                     nofpu=_lines("# The sources that do no floating-point arithmetic: compiled with BT_MODEL_NO_FPU_FLAGS\n"
                                  "# (only these), they use no FPU register (README.md, FPU).\nBT_MODEL_NO_FPU_SRCS := \\\n",
                                  "  $(BT_MODEL_DIR)/", no_fpu, f"\nBT_MODEL_NO_FPU_FLAGS := {NO_FPU_FLAG}\n", " \\\n"))
    return {"CMakeLists.txt": cmake, "model.mk": make}


_FPU_README = """
FPU: the library does no floating-point arithmetic (but a float model input or output's conversion),
yet gcc compiling it with a hard-float ABI (`-mfloat-abi=hard` or `softfp`) may still move data through
FPU registers (`vldr`/`vstr`), and a Cortex-M whose FPU is off then faults. Either enable the FPU in your
start-up code before `model_init()` (CMSIS `SystemInit` does when `__FPU_USED`; by hand:
`SCB->CPACR |= 0xF << 20`), or compile the sources `BT_MODEL_NO_FPU_SRCS` in `model.mk` lists ({count} of
the {total}: those with no floating-point code) with `{flag}` (gcc): they then use no FPU register,
keep the float ABI (and so link with your hard-float code), and floating-point code in them would not
compile. `CMakeLists.txt` does so for gcc. `-mfloat-abi=soft` avoids the FPU too, but cannot link with
hard-float objects.
"""


def readme(label: str, board: str, cpu: str, kset: str, arena_bytes: int, arena_align: int, weights_bytes: int,
           cpu_flags: list, streamed: bool, system_headers: list, no_fpu: list = (), sources: int = 0,
           facts: CodeFacts | None = None) -> str:
    """README.md; system_headers: the <...> headers the library's files include; facts: the measured code and
    stack."""
    names = [f"`<{h}>`" for h in system_headers]
    listed = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names) or "none"
    return _template("library_readme.md.in", label=label, board=board, cpu=cpu, kset=kset, arena_bytes=arena_bytes,
                     system_headers=listed,
                     arena_align=arena_align, weights_bytes=weights_bytes, weights_align=WEIGHTS_ALIGN,
                     arena_section=ARENA_SECTION, weights_section=WEIGHTS_SECTION,
                     code=_code_readme(facts),
                     cpu_flags=" ".join(cpu_flags) or "(none: the host compiler's defaults)",
                     fpu=(_FPU_README.format(flag=NO_FPU_FLAG, count=len(no_fpu), total=sources)
                          if hard_float(cpu_flags) else ""),
                     streamed=("\nThis plan streams the input: define `bt_read_input_rows` (declared in "
                               "`kernels/include/bt_fused.h`) in your application to hand the kernels rows of "
                               "the input; `model_input(0)` is not used.\n") if streamed else "")


def _code_readme(facts: CodeFacts | None) -> str:
    """README.md's rows and paragraph on the code and the stack."""
    if facts is None:
        return ""
    stack = (f"| stack (high-water mark) | | {facts.stack_bytes} | | |\n" if facts.stack_bytes is not None
             else "")
    return (f"| code, constants, initialised data | | {facts.code_bytes} | | `.text`, `.rodata`, `.data` |\n{stack}"
            f"\nCode (`MODEL_CODE_BYTES` in `model.h`): {_code_text(facts)}.\n"
            + (f"Stack (`MODEL_STACK_BYTES`): {facts.stack_how}.\n" if facts.stack_bytes is not None
               else f"Stack: not measured: {facts.stack_how}.\n"))


__all__ = ["CodeFacts", "code_facts_h", "NO_FPU_FLAG", "hard_float", "no_fpu_sources", "ARENA_SECTION", "WEIGHTS_SECTION", "WEIGHTS_ALIGN", "model_h", "weights_c", "platform_c",
           "build_files", "readme"]
