"""The kernel files a generated model.c needs, for a library that builds without buildtool
(`buildtool export`): the board's kernel sources (toolchain.kernel_sources) that define a function
model.c calls, directly or through another kernel, and every file those include.

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
from .toolchain import KERNELS, include_dirs, kernel_sources

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# a function definition at the start of a line: return type, name (a macro may paste a suffix), the
# parameters (a macro's may continue over backslash-newlines), then its body
_DEFINITION = re.compile(r"^(?!static\b|typedef\b|extern\b|return\b|else\b)[A-Za-z_][\w \t*]*?\b"
                         r"([A-Za-z_]\w*?)(##\w+)?\s*\(([^;{}]*)\)[\s\\]*\{", re.M)
# a prototype at file level (a declaration is no reference to what it declares)
_PROTOTYPE = re.compile(r"^[A-Za-z_][^;{}#\n]*(?:\n[^;{}#\n]*)*?\)\s*;", re.M)
_IDENT = re.compile(r"[A-Za-z_]\w*")
# `#define A B`: a reference to A is one to B (and the line alone refers to nothing)
_ALIAS = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+(\w+)[ \t]*$", re.M)


def _text(path: Path) -> str:
    return _COMMENT.sub(" ", path.read_text(encoding="utf-8"))


def resolve(name: str, including: Path, dirs: list) -> Path | None:
    """Where `#include "name"` in file `including` leads: its own folder first, then the include
    folders in order (the compiler's search for quoted includes); None when in none of them."""
    for d in [including.parent] + list(dirs):
        cand = Path(d) / name
        if cand.is_file():
            return cand.resolve()
    return None


def include_closure(path: Path, dirs: list) -> list:
    """path and every file it includes (quoted, found in its folder or dirs), transitively; sorted."""
    seen, todo = set(), [Path(path).resolve()]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        todo += [r for r in (resolve(n, f, dirs) for n in _INCLUDE.findall(_text(f))) if r is not None]
    return sorted(seen)


def definitions(text: str) -> tuple:
    """(names, pasted prefixes) of the functions text defines with external linkage."""
    names, prefixes = set(), set()
    for m in _DEFINITION.finditer(text):
        (prefixes if m.group(2) else names).add(m.group(1))
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


def needed_files(t: targets.Target, model_c: str, gen_files: tuple = (), kernel_root=KERNELS) -> tuple:
    """(sources, files): the board's kernel sources model.c (its text) needs, in kernel_sources' order,
    and every kernel file they and model.c include (sources included; the headers and the .c files a
    set's source includes from another set), sorted; gen_files: the generated headers model.c includes
    besides the kernels' (model.h), read for references too."""
    kernel_root = Path(kernel_root).resolve()
    dirs = include_dirs(t, None, kernel_root)
    srcs = kernel_sources(t, kernel_root)
    closure = {s: include_closure(s, dirs) for s in srcs}
    defs = {s: definitions("\n".join(_text(f) for f in closure[s] if f.suffix == ".c")) for s in srcs}
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


__all__ = ["needed_files", "include_closure", "definitions", "references", "resolve"]
