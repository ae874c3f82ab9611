"""What each module of the package imports, read from its text, and the import closure of a module:
what a step's output or the planner's answer is a function of (steps.sources, canonical.planner_version).

Read with a regular expression, not imported and not parsed (a depfile costs milliseconds): imports
inside functions count, docstrings do not, and a module that resolves an OpDef column
(`opdefs.table("emit")`) imports the modules that column names.
"""

from __future__ import annotations

import functools
import os
import re

from .sources import PKG, _py_entries, files

_STRINGS = re.compile(r'("""|\'\'\')[\s\S]*?\1')
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)"
                     r"|import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*))", re.M)
_TABLE = re.compile(r"\btable\(\s*[\"'](\w+)[\"']\s*\)")


def module_file(name: str) -> str | None:
    """The file of a dotted module under buildtool ("" the package itself), or None."""
    base = os.path.join(PKG, *name.split(".")) if name else PKG
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return path
    return None


def _resolve(name: str) -> str:
    """The module a dotted name under buildtool lands in (a name imported from a module: that module)."""
    while name and module_file(name) is None:
        name = name.rpartition(".")[0]
    return name


def _with_parents(name: str) -> list:
    """Importing a.b.c runs buildtool/__init__, a/__init__ and a/b/__init__ first."""
    parts = name.split(".") if name else []
    return [".".join(parts[:k]) for k in range(len(parts) + 1) if module_file(".".join(parts[:k]))]


@functools.lru_cache(maxsize=None)
def _opdef_columns() -> dict:
    """{column: modules} of the 'module:function' references in model/opdefs.py, column by column
    (check, kernel, emit, macs): a module that calls table(column) imports those modules on first use."""
    out = {}
    text = open(os.path.join(PKG, "model", "opdefs.py"), encoding="utf-8").read()
    start = text.index("OPDEFS = (")
    for row in re.split(r"\n    OpDef\(", text[start:])[1:]:
        # rows written in a loop name their modules in f-strings (f"refops.signal:{name.lower()}")
        positional = re.match(r'f?"[\w{}().]+",\s*(?P<check>None|f?"[^"]*"),\s*f?"(?P<kernel>[^"]*)"'
                              r'(?:,\s*(?P<emit>None|f?"[^"]*"))?', row)
        for col in ("check", "kernel", "emit"):
            v = positional and positional.group(col)
            if v and v != "None":
                out.setdefault(col, set()).add(v.lstrip("f").strip('"').split(":")[0])
        m = re.search(r'macs="([^"]*)"', row)
        if m:
            out.setdefault("macs", set()).add(m.group(1).split(":")[0])
    return {k: tuple(sorted(v)) for k, v in out.items()}


@functools.lru_cache(maxsize=None)
def imports_of(name: str) -> tuple:
    """The buildtool modules a module's source imports (imports inside functions too, and the modules an
    OpDef column names when the module resolves that column), each with its parent packages."""
    path = module_file(name)
    text = _STRINGS.sub("", open(path, encoding="utf-8").read())
    pkg = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    found = set()
    for dots, mod, names, plain in _IMPORT.findall(text):
        if plain:
            targets = [m.strip()[len("buildtool"):].lstrip(".") for m in plain.split(",")
                       if m.strip() == "buildtool" or m.strip().startswith("buildtool.")]
        else:
            if dots:
                base = pkg.split(".") if pkg else []
                base = base[: len(base) - (len(dots) - 1)]
                absmod = ".".join(base + ([mod] if mod else []))
            elif mod == "buildtool" or mod.startswith("buildtool."):
                absmod = mod[len("buildtool"):].lstrip(".")
            else:
                continue
            subs = [n.split(" as ")[0].strip() for n in names.strip("()").replace("\n", " ").split(",")]
            targets = [absmod] + [f"{absmod}.{n}".lstrip(".") for n in subs
                                  if n and module_file(f"{absmod}.{n}".lstrip("."))]
        for t in targets:
            found.update(_with_parents(_resolve(t)))
    for col in _TABLE.findall(text):
        for m in _opdef_columns().get(col, ()):
            found.update(_with_parents(m))
    found.discard(name)
    return tuple(sorted(found))


def closure(roots) -> list:
    """Every buildtool module that importing the roots (dotted names; a package: all its modules) runs."""
    todo, seen = [], set()
    for r in roots:
        todo += _with_parents(r)
        if module_file(r).endswith("__init__.py"):  # a package: every module in it
            todo += [n[:-3].replace("/", ".").removesuffix(".__init__") for n, _ in
                     _py_entries(os.path.dirname(module_file(r)), r.replace(".", "/") + "/")]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo += imports_of(m)
    return sorted(seen)


def closure_files(roots) -> list:
    """The files of closure(roots), and the data files of every package in it (files in a folder of the
    package that holds no Python module, e.g. codegen/templates), sorted."""
    mods = closure(roots)
    out = [module_file(m) for m in mods]
    for m in mods:
        if m and out[mods.index(m)].endswith("__init__.py"):
            with os.scandir(os.path.dirname(module_file(m))) as it:
                for d in sorted(it, key=lambda e: e.name):
                    if d.is_dir() and d.name != "__pycache__" and not files([os.path.relpath(d.path, PKG)]):
                        out += sorted(os.path.join(d.path, f) for f in os.listdir(d.path)
                                      if os.path.isfile(os.path.join(d.path, f)))
    return sorted(out)
