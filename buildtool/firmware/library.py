"""The kernel files a generated model.c needs, for a library that builds without buildtool
(`buildtool export`): the board's kernel sources (toolchain.kernel_sources) that define a function
model.c calls, directly or through another kernel, and every file those include.

`model_sources` is the set the build systems compile (SCons, CMake, `buildtool build`'s cached
library and the export alike): the kernel files each of the model's operators calls (OP_KERNELS: one
row per operator of model/opdefs.py, tests/test_kernel_sources.py checks each against the model.c
its emitter writes), fused.c when the plan may be fused, and what those files call in turn.

Read from the C text, not from a compiler: a source is needed when it defines (not `static`) a name
model.c, a header it includes or an already needed source refers to; a prototype is not a reference.
A name pasted by a macro (`fx_accumulate##bits`) counts as its prefix followed by digits. Choosing
too much costs only size; tests/test_export.py checks that every function the kernel headers
declare is defined by one source of every kernel set, so no call is missed.
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import targets
from ..errors import InternalError
from .toolchain import C_COMMENT as _COMMENT, C_INCLUDE as _INCLUDE, KERNELS, include_closure, include_dirs, kernel_sources, resolve
from .toolchain import c_text as _text
# a function definition at the start of a line: return type, name (a macro may paste a suffix), the
# parameters (a macro's may continue over backslash-newlines), then its body
_DEFINITION = re.compile(r"^(?!static\b|BT_INLINE\b|typedef\b|extern\b|return\b|else\b)[A-Za-z_][\w \t*]*?\b"
                         r"([A-Za-z_]\w*?)(##\w+)?\s*\(([^;{}]*)\)[\s\\]*\{", re.M)
# a variable defined at file level with external linkage (`uint32_t bt_vpu_ops, bt_vpu_align_faults;`: the xcore
# VPU model's counters, defined in xcore/conv.c and counted by every xcore kernel file)
_VARIABLE = re.compile(r"^(?!static\b|typedef\b|extern\b|return\b)[A-Za-z_]\w*[ \t]+(\w+(?:[ \t]*,[ \t]*\w+)*)[ \t]*;", re.M)
# a prototype at file level (a declaration is no reference to what it declares)
_PROTOTYPE = re.compile(r"^[A-Za-z_][^;{}#\n]*(?:\n[^;{}#\n]*)*?\)\s*;", re.M)
_IDENT = re.compile(r"[A-Za-z_]\w*")
# `#define A B`: a reference to A is one to B (and the line alone refers to nothing)
_ALIAS = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+(\w+)[ \t]*$", re.M)


def definitions(text: str) -> tuple:
    """(names, pasted prefixes) of the functions text defines with external linkage (not BT_INLINE's, static inline:
    mul_ref.h's `mul` is no definition another file's `mul` instruction in an asm string refers to)."""
    names, prefixes = set(), set()
    for m in _DEFINITION.finditer(text):
        (prefixes if m.group(2) else names).add(m.group(1))
    for m in _VARIABLE.finditer(text):
        names.update(v.strip() for v in m.group(1).split(","))
    return names, prefixes


def references(text: str) -> set:
    """Every identifier of text outside file-level prototypes and `#define A B` lines."""
    return set(_IDENT.findall(_PROTOTYPE.sub(" ", _ALIAS.sub(" ", text))))


def _with_aliases(refs: set, aliases: dict) -> set:
    todo = [r for r in refs if r in aliases]
    while todo:
        for b in aliases[todo.pop()]:
            if b not in refs:
                refs.add(b)
                if b in aliases:
                    todo.append(b)
    return refs


def _defines(names: set, prefixes: set, refs: set) -> bool:
    if names & refs:
        return True
    return any(r.startswith(p) and r[len(p):].isdigit() for p in prefixes for r in refs)


# The reference kernel files (kernels/reference/NAME.c, or the set's own NAME.c) an operator's code calls,
# whatever its types: its int16 and int32 paths included. Files these call are added by references.
_S16 = ("conv_s16",)  # the 16x8 convolutions, depthwise and fully connected
OP_KERNELS = {
    "CONV_2D": ("conv",) + _S16, "DEPTHWISE_CONV_2D": ("depthwise",) + _S16,
    "FULLY_CONNECTED": ("fully_connected",) + _S16, "TRANSPOSE_CONV": ("transpose_conv",) + _S16,
    "ADD": ("add", "int32_ops"), "SUB": ("add", "int32_ops"), "MUL": ("mul", "int32_ops"), "DIV": ("div",),
    "ADD_N": ("add_n",), "ZEROS_LIKE": ("add_n",), "SQUARED_DIFFERENCE": ("squared_difference",),
    "CONCATENATION": ("concat", "pad"), "PACK": ("concat",), "READ_VARIABLE": ("concat",), "ASSIGN_VARIABLE": ("concat",),
    "AVERAGE_POOL_2D": ("pooling",), "MAX_POOL_2D": ("pooling",), "MEAN": ("mean",), "SUM": ("mean",),
    "REDUCE_MAX": ("reduce",), "REDUCE_MIN": ("reduce",), "PAD": ("pad",), "PADV2": ("pad",),
    "MIRROR_PAD": ("index_ops",), "RESHAPE": ("concat",), "SQUEEZE": ("concat",), "EXPAND_DIMS": ("concat",),
    "SOFTMAX": ("softmax",), "LOG_SOFTMAX": ("log_softmax",), "LOGISTIC": ("logistic",),
    "HARD_SWISH": ("hard_swish",), "LEAKY_RELU": ("leaky_relu",), "L2_NORMALIZATION": ("norm",),
    "RELU": ("activation",), "RELU6": ("activation",), "TANH": ("activation", "logistic"), "PRELU": ("activation",),
    "MAXIMUM": ("activation",), "MINIMUM": ("activation",),
    "ABS": ("elementwise",), "RSQRT": ("elementwise",), "ELU": ("elementwise",), "GELU": ("elementwise",),
    "NEG": ("neg",), "QUANTIZE": ("quantize",), "DEQUANTIZE": ("quantize",), "CAST": ("cast",),
    "EQUAL": ("compare",), "NOT_EQUAL": ("compare",), "GREATER": ("compare",), "GREATER_EQUAL": ("compare",),
    "LESS": ("compare",), "LESS_EQUAL": ("compare",),
    "LOGICAL_AND": ("logical",), "LOGICAL_OR": ("logical",), "LOGICAL_NOT": ("logical",), "SELECT_V2": ("logical",),
    "ARG_MAX": ("index_ops",), "ARG_MIN": ("index_ops",), "GATHER": ("index_ops",), "GATHER_ND": ("index_ops",),
    "EMBEDDING_LOOKUP": ("index_ops",), "FILL": ("index_ops",), "SPACE_TO_BATCH_ND": ("index_ops",),
    "BATCH_TO_SPACE_ND": ("index_ops",), "BATCH_MATMUL": ("batch_matmul",), "CUMSUM": ("cumsum",),
    "TRANSPOSE": ("transpose",), "DEPTH_TO_SPACE": ("transpose",), "SPACE_TO_DEPTH": ("transpose",),
    "REVERSE_V2": ("transpose",), "BROADCAST_TO": ("transpose",), "SHAPE": ("transpose",),
    "SLICE": ("strided_slice",), "STRIDED_SLICE": ("strided_slice",),
    "SPLIT": ("split",), "SPLIT_V": ("split",), "UNPACK": ("split",),
    "RESIZE_BILINEAR": ("resize",), "RESIZE_NEAREST_NEIGHBOR": ("resize",),
    "SVDF": ("svdf",), "UNIDIRECTIONAL_SEQUENCE_LSTM": ("lstm",),
    "IF": (), "WHILE": (),  # their subgraphs' operators count (model_opcodes)
}
FUSED = ("fused",)  # a fused plan's tile loops (kernels/*/fused.c)


def model_opcodes(g) -> list:
    """The operator codes of graph g and of every subgraph its IF and WHILE operators run, sorted."""
    ops = {o.opcode for o in g.operators}
    for s in getattr(g, "subgraphs", {}).values():
        ops |= {o.opcode for o in s.operators}
    return sorted(ops)


def kernel_names(opcodes, fused: bool) -> list:
    """The reference kernel file stems operators `opcodes` call (plus fused.c's when fused), sorted;
    an operator missing from OP_KERNELS is an internal error (its row belongs beside its opdefs row)."""
    names = set(FUSED if fused else ())
    for op in opcodes:
        k = ("signal",) if op.startswith("SIGNAL_") else OP_KERNELS.get(op)  # TFLite Micro's signal library
        if k is None:
            raise InternalError(f"operator {op} has no row in firmware/library.py OP_KERNELS")
        names.update(k)
    return sorted(names)


def model_sources(t: targets.Target, opcodes, fused: bool, kernel_root=KERNELS) -> list:
    """The board's kernel sources a model of operators `opcodes` compiles (fused: its plan may be a
    fused one), in kernel_sources' order: those kernel_names names and every source they call."""
    return needed_files(t, "", kernel_root=kernel_root, seed=kernel_names(opcodes, fused))[0]


def _code_file(f: Path) -> bool:
    """A file whose functions a source that includes it defines: a .c file, or a reference kernel's code
    that other sets include (NAME_ref.h: reference/NAME.c compiles it on its own)."""
    return f.suffix == ".c" or f.name.endswith("_ref.h")


def needed_files(t: targets.Target, model_c: str, gen_files: tuple = (), kernel_root=KERNELS,
                 seed=()) -> tuple:
    """(sources, files): the board's kernel sources model.c (its text) needs, in kernel_sources' order,
    and every kernel file they and model.c include (sources included; the headers and the .c files a
    set's source includes from another set), sorted; gen_files: the generated headers model.c includes
    besides the kernels' (model.h), read for references too; seed: kernel file stems chosen to begin
    with (model_sources')."""
    kernel_root = Path(kernel_root).resolve()
    dirs = include_dirs(t, None, kernel_root)
    srcs = kernel_sources(t, kernel_root)
    closure = {s: include_closure(s, dirs) for s in srcs}
    defs = {s: definitions("\n".join(_text(f) for f in closure[s] if _code_file(f))) for s in srcs}
    model_c = _COMMENT.sub(" ", model_c)
    refs, aliases = references(model_c), {}
    files = set()
    for name in sorted(set(_INCLUDE.findall(model_c))):
        found = resolve(name, kernel_root / "include", dirs)
        if found is not None:
            files.update(include_closure(found, dirs))
    def read(text: str) -> None:
        refs.update(references(text))
        for a, b in _ALIAS.findall(text):
            aliases.setdefault(a, set()).add(b)
        _with_aliases(refs, aliases)

    read(model_c)
    for f in sorted(files) + [Path(g) for g in gen_files]:
        read(_text(f))
    chosen, grew = set(), True
    for s in srcs:
        if s.stem in seed:
            chosen.add(s)
            files.update(closure[s])
            for f in closure[s]:
                read(_text(f))
    while grew:
        grew = False
        for s in srcs:
            if s not in chosen and _defines(*defs[s], refs):
                chosen.add(s)
                files.update(closure[s])
                for f in closure[s]:
                    read(_text(f))
                grew = True
    return [s for s in srcs if s in chosen], sorted(f for f in files if kernel_root in f.parents)


__all__ = ["OP_KERNELS", "model_opcodes", "kernel_names", "model_sources", "needed_files", "include_closure", "definitions", "references", "resolve"]
