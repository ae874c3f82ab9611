"""The kernel files a generated model.c needs, for a library that builds without buildtool
(`buildtool export`): the board's kernel sources (toolchain.kernel_sources) that define a function
model.c calls, directly or through another kernel, and every file those include.

`model_sources` is the set the build systems compile (SCons, CMake, `buildtool build`'s cached
library and the export alike): the kernel files each of the model's operators calls (OP_KERNELS: one
row per operator of model/opdefs.py, tests/test_kernel_sources.py checks each against the model.c
its emitter writes), fused.c when the plan may be fused, and what those files call in turn.

Read from the C text, not from a compiler: a source is needed when it defines (not `static`) a name
model.c, a header it includes or an already needed source refers to (scan): a call or an address taken in
code, a function body or an initialiser, not a declaration (a prototype, `extern`, `fn_t name;`), and a
macro's body only where the macro is used. A name pasted by a macro (`fx_accumulate##bits`) counts as its
prefix followed by digits. Choosing too much costs only size; tests/test_export.py checks that every function
the kernel headers declare is defined by one source of every kernel set, so no call is missed.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from .. import targets
from ..errors import InternalError
from .toolchain import C_COMMENT as _COMMENT, C_INCLUDE as _INCLUDE, KERNELS, include_closure, include_dirs, kept, kernel_parts, kernel_sources, resolve
from .toolchain import c_text as _text
# a function definition at the start of a line: return type, name (a macro may paste a suffix), the
# parameters (a macro's may continue over backslash-newlines), then its body
_DEFINITION = re.compile(r"^(?!static\b|BT_INLINE\b|typedef\b|extern\b|return\b|else\b)[A-Za-z_][\w \t*]*?\b"
                         r"([A-Za-z_]\w*?)(##\w+)?\s*\(([^;{}]*)\)[\s\\]*\{", re.M)
# a variable defined at file level with external linkage (`uint32_t bt_vpu_ops, bt_vpu_align_faults;`: the xcore
# VPU model's counters, defined in xcore/conv.c and counted by every xcore kernel file)
_VARIABLE = re.compile(r"^(?!static\b|typedef\b|extern\b|return\b)[A-Za-z_]\w*[ \t]+(\w+(?:[ \t]*,[ \t]*\w+)*)[ \t]*;", re.M)
# what scan() tells apart: a preprocessor line (with its backslash continuations), a string or character literal,
# C++'s `extern "C" {` (no scope of its own), a newline at column 0, and the brackets and semicolons of statements
_TOKEN = re.compile(r'(?P<pp>^[ \t]*#(?:[^\n]*\\\n)*[^\n]*)|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|'
                    r'(?P<ec>\bextern\s*"C"\s*\{)|(?P<nl>\n(?=[A-Za-z_]))|[{}();]', re.M)
_IDENT = re.compile(r"[A-Za-z_]\w*")
# `#define NAME body` or `#define NAME(params) body`
_MACRO = re.compile(r"[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([^)]*\))?(.*)", re.S)


# a macro that defines the function its one parameter names (`#define BT_DW_PATH(name) void name(...)`), and a
# definition by it at the start of a line (`BT_DW_PATH(bt_dw_box) {`, `BT_DW_PATH(bt_dw_planes_##rl) {` in a macro)
_DEFINER = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\((\w+)\)[ \t\\\n]*[A-Za-z_][\w \t*]*?\b\2\s*\(", re.M)

_RENAME = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([A-Za-z_]\w*)[ \t]*$", re.M)


def definitions(text: str) -> tuple:
    """(names, pasted prefixes) of the functions text defines with external linkage (not BT_INLINE's, static inline:
    mul_ref.h's `mul` is no definition another file's `mul` instruction in an asm string refers to)."""
    names, prefixes = set(), set()
    for m in _DEFINITION.finditer(text):
        (prefixes if m.group(2) else names).add(m.group(1))
    for m in _VARIABLE.finditer(text):
        names.update(v.strip() for v in m.group(1).split(","))
    # a definition under another name (`#define bt_depthwise_s8 bt_ref_depthwise_generic_s8` before the include of
    # depthwise_ref.h, which defines bt_depthwise_s8): the other name is defined too
    for m in _RENAME.finditer(text):
        if m.group(1) in names:
            names.add(m.group(2))
    for d in sorted({m.group(1) for m in _DEFINER.finditer(text)}):
        for m in re.finditer(rf"^[ \t]*(?:#[ \t]*define[ \t]+\w+\([^)]*\)[ \t]*)?{d}\(([A-Za-z_]\w*?)(##\w+)?\)[\s\\]*\{{", text, re.M):
            (prefixes if m.group(2) else names).add(m.group(1))
    return names, prefixes


def scan(text: str) -> tuple:
    """(references, macros) of a C text without comments. references: the identifiers of its code, that is
    function bodies, initialisers and whatever else is not a declaration; a file-level statement with no
    initialiser and no body (a prototype, `extern` or a typedef's `fn_t a, b;`: a declaration, no call) refers
    to nothing, but a file-level macro call not ended by `;` (`FX_MEAN(16, uint16_t)` on its own line) does.
    macros: {NAME: the identifiers of its bodies} of every `#define NAME ...` (its parameters not): a
    reference to NAME is one to them (_with_aliases), an unused macro refers to nothing. Other directives'
    identifiers are references."""
    refs, macros, piece = set(), {}, []
    depth, parens, pos = 0, 0, 0

    def end(declaration: bool) -> None:
        s = "".join(piece)
        piece.clear()
        if not (declaration and "=" not in s):
            refs.update(_IDENT.findall(s))

    for m in _TOKEN.finditer(text):
        piece.append(text[pos:m.start()])
        pos, tok = m.end(), m.group(0)
        if m.group("pp") is not None:
            d = _MACRO.fullmatch(tok)
            if d:
                params = set(_IDENT.findall(d.group(2) or ""))
                macros.setdefault(d.group(1), set()).update(set(_IDENT.findall(d.group(3))) - params)
            else:
                refs.update(_IDENT.findall(tok))
            if depth == 0 and parens == 0:
                end(False)  # a file-level piece cut by a directive counts
            continue
        if m.group("ec") is not None:
            continue
        if m.group("nl") is not None:
            if depth == 0 and parens == 0 and "".join(piece).rstrip().endswith(")"):
                end(False)  # `MACRO(args)` alone on a line: a file-level macro call
            piece.append(tok)
            continue
        if tok == "}" and depth == 0:
            continue  # extern "C"'s closing brace
        piece.append(tok)
        if tok == "(":
            parens += 1
        elif tok == ")":
            parens = max(parens - 1, 0)
        elif tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
            if depth == 0:
                end(False)  # a body or an initialiser's braces: code
        elif tok == ";" and depth == 0 and parens == 0:
            end(True)
    piece.append(text[pos:])
    end(False)
    return frozenset(refs), {k: frozenset(v) for k, v in macros.items()}


# scan of a kernel file's text (needed_files reads a header once for each source that includes it)
_kernel_scan = functools.lru_cache(maxsize=512)(scan)


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
# whatever its types: its int16 and int32 paths included. Files these call are added by scan's references.
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


def model_sources(t: targets.Target, opcodes, fused: bool, kernel_root=KERNELS, model_c: str | None = None,
                  gen_files: tuple = ()) -> list:
    """The board's kernel sources a model of operators `opcodes` compiles (fused: its plan may be a
    fused one), in kernel_sources' order: those kernel_names names and every source they call. With
    model_c (its text; gen_files as needed_files'), a kernel the set splits into files by path (issue 50
    item 3: cortex-m's depthwise.c, its run-time dispatcher, and depthwise_PART.c) is no seed: model.c's
    calls choose its files (seeds)."""
    names = kernel_names(opcodes, fused)
    return needed_files(t, model_c or "", gen_files, kernel_root, seeds(t, names, kernel_root, model_c is not None))[0]


def split_kernels(t: targets.Target, sources, kernel_root=KERNELS) -> dict:
    """{kernel name: its files among sources, in their order} for each kernel the board's set splits into NAME.c and
    NAME_PART.c files (toolchain.kernel_sources): a build that knows the list before model.c exists (SCons) compiles
    them as one unit of the files model.c's calls need (model_sources with model_c)."""
    ref = {f.stem for f in (Path(kernel_root) / "reference").glob("*.c")}
    out = {}
    for own in kernel_sources(t, kernel_root):
        parts = kernel_parts(own, ref) if own.stem in ref else []
        files = [s for s in sources if s in {own, *parts}]
        if parts and files:
            out[own.stem] = files
    return out


def with_units(sources, split: dict) -> list:
    """sources as a build compiles them, in their order (split: split_kernels' of them): a source no split kernel holds
    as it is; in the place of a split kernel's first file, the kernel's name (a str, a key of split), which stands for
    its one unit NAME.c (split_unit: the files model.c's calls need); its other files left out."""
    unit_of = {f: n for n, fs in split.items() for f in fs}
    out = []
    for s in sources:
        n = unit_of.get(s)
        if n is None:
            out.append(s)
        elif n not in out:
            out.append(n)
    return out


# an object-like macro defined with no value (`#define DW_EMIT_Q4`): a split kernel's file says so, before its first
# #include, which code the header its files share emits
_FLAG_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+[A-Za-z_]\w*[ \t]*$", re.M)


def split_unit(files, need, name=lambda f: Path(f).as_posix()) -> str:
    """The text of a split kernel's unit (split_kernels): one #include of each of its files in need (model_sources'
    with model.c), in their order, named by name(file); none needed, a comment (the unit still compiles). The flags
    those files define before their first #include (cortex-m's depthwise_*.c: which asm of depthwise_core.h each
    emits) come first, all files' together: the header they share is read once a unit, by the first file."""
    chosen = [f for f in files if f in set(need)]
    flags = []
    for f in chosen:
        for m in _FLAG_DEFINE.finditer(_text(Path(f)).split("#include", 1)[0]):
            if m.group(0).strip() not in flags:
                flags.append(m.group(0).strip())
    text = "".join(f"{d}\n" for d in flags) + "".join(f'#include "{name(f)}"\n' for f in chosen)
    return text or "/* model.c calls none of this kernel's files */\n"


def seeds(t: targets.Target, names, kernel_root=KERNELS, known: bool = False) -> list:
    """The kernel stems of names needed_files starts from: all of them, or where model.c is known (known) those
    the board's set does not split into NAME_PART.c files (toolchain.kernel_sources' rule): model.c's calls, and
    the calls of the files they choose, decide which of a split kernel's files it needs."""
    if not known:
        return list(names)
    split = split_kernels(t, kernel_sources(t, kernel_root), kernel_root)
    return [n for n in names if n not in split]


def _code_file(f: Path) -> bool:
    """A file whose functions a source that includes it defines: a .c file, or a reference kernel's code
    that other sets include (NAME_ref.h: reference/NAME.c compiles it on its own)."""
    return f.suffix == ".c" or f.name.endswith("_ref.h")


# model.c's names for another kernel set (`#ifndef BT_VARIANTS_CORTEX_M ... #define bt_dw_rows_q4e_32 bt_depthwise_s8`)
_FALLBACK = re.compile(r"^[ \t]*#[ \t]*ifndef[ \t]+(BT_VARIANTS_\w+)\b.*?^[ \t]*#[ \t]*endif\b", re.M | re.S)


def _fallbacks(model_c: str, dirs, kernel_root) -> str:
    """model_c without its block for other kernel sets where the board's bt_variants.h defines the block's guard
    (a split kernel's dispatcher is no call of its model.c)."""
    found = resolve("bt_variants.h", Path(kernel_root) / "include", dirs)
    text = _text(found) if found is not None else ""
    return _FALLBACK.sub(lambda m: " " if re.search(rf"^[ \t]*#[ \t]*define[ \t]+{m.group(1)}\b", text, re.M)
                         else m.group(0), model_c)


_DEFS: dict = {}  # (kernel source, its closure) -> _definitions_of's, kept while the code files read are unchanged


def _definitions_of(src: Path, closure: list) -> tuple:
    """definitions() of kernel source src and the code files it includes (closure: its include_closure, which
    decides which files those are: a header edited to include another, or another board's include folders)."""
    code = [f for f in closure if _code_file(f)]
    return kept(_DEFS, (src, tuple(closure)), lambda: (definitions("\n".join(_text(f) for f in code)), code))


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
    defs = {s: _definitions_of(s, closure[s]) for s in srcs}
    model_c = _fallbacks(_COMMENT.sub(" ", model_c), dirs, kernel_root)
    refs, aliases = set(), {}
    files = set()
    for name in sorted(set(_INCLUDE.findall(model_c))):
        found = resolve(name, kernel_root / "include", dirs)
        if found is not None:
            files.update(include_closure(found, dirs))
    def read(text: str, kernel: bool = True) -> None:
        r, macros = (_kernel_scan if kernel else scan)(text)
        refs.update(r)
        for a, b in macros.items():
            aliases.setdefault(a, set()).update(b)
        _with_aliases(refs, aliases)

    read(model_c, False)
    for f in sorted(files):
        read(_text(f))
    for g in gen_files:
        read(_text(Path(g)), False)
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


__all__ = ["OP_KERNELS", "model_opcodes", "kernel_names", "model_sources", "seeds", "split_kernels", "with_units", "split_unit", "needed_files", "include_closure", "definitions", "scan", "resolve"]
