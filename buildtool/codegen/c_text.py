"""C literals as generated code writes them: integer arrays, struct initialisers, exact floats,
comment-safe text and string literals; every emitter formats its constants through these.

Light on purpose (the standard library only, no numpy): firmware/toolchain.py and the CMake shell
name files with c_string without loading the code generator.
"""

from __future__ import annotations

import math
import numbers
import os
import struct

CTYPES = {"int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "float32": "float", "uint32": "uint32_t",
          "uint64": "uint64_t"}


def c_comment(text: str) -> str:
    """Text safe inside a C comment or string: printable ASCII, no comment end, no quotes."""
    return "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "?" for c in text).replace("*/", "*?")


def c_string(text: str) -> str:
    """text (a path) as a C string literal that the assembler's .incbin reads back byte for byte:
    \\ and \" escaped, every byte outside printable ASCII (and '?', against trigraphs) as a
    three-digit octal escape, which both the C preprocessor and the GNU assembler take."""
    out = []
    for b in os.fsencode(text):
        c = chr(b)
        if c in '"\\':
            out.append("\\" + c)
        elif 32 <= b < 127 and c != "?":
            out.append(c)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def c_ints(vals, per_line: int = 12) -> str:
    """An array initialiser of integers, per_line a line when longer than that."""
    vals = [str(int(v)) for v in vals]
    lines = [", ".join(vals[i:i + per_line]) for i in range(0, len(vals), per_line)]
    return "{\n  " + ",\n  ".join(lines) + "\n}" if len(vals) > per_line else "{" + ", ".join(vals) + "}"


def c_float(v: float) -> str:
    """Exact float32 literal (hex float): v rounded to float32 (to nearest, as numpy.float32)."""
    return f"{struct.unpack('<f', struct.pack('<f', float(v)))[0].hex()}f"


def c_struct(fields: dict, indent: str = "  ") -> str:
    """A designated struct initialiser: one line for a few integers, else a field a line (nested dicts
    as nested structs, lists as arrays, strings as C expressions)."""
    if all(isinstance(v, numbers.Integral) for v in fields.values()) and len(fields) <= 6:
        return "{" + ", ".join(f".{k} = {int(v)}" for k, v in fields.items()) + "}"
    parts = []
    for k, v in fields.items():
        if isinstance(v, dict):
            v = c_struct(v, indent + "  ")
        elif isinstance(v, (list, tuple)):
            v = "{" + ", ".join(str(int(x)) for x in v) + "}"
        parts.append(f"{indent}.{k} = {v}")
    return "{\n" + ",\n".join(parts) + "\n" + indent[:-2] + "}"


def c_local_array(decl: str, name: str, values: list, indent: str = "    ") -> str:
    """C statements declaring the local array `decl name[n]` and storing each value in it: an initialised
    local array (`T a[n] = {...}`) is filled by gcc with a memcpy from a constant template (or a memset),
    which the firmware (-nostdlib, start-up code only) and an exported library do not provide."""
    return f"{decl} {name}[{len(values)}];\n" + "".join(f"{indent}{name}[{k}] = {v};\n" for k, v in enumerate(values))


def prod(xs) -> int:
    """The product of integers (an element count from a shape)."""
    return int(math.prod(int(x) for x in xs))


__all__ = ["CTYPES", "c_comment", "c_string", "c_ints", "c_float", "c_struct", "prod"]
