"""The package's shape: layers import downward only, no import cycle between modules, few imports
inside functions (docs/ARCHITECTURE.md, "Layers"). Read from the source with ast, imports inside
functions counted like the others."""

import ast
import os

from conftest import ROOT

from buildtool.sources import LAYERS, layer_of

PKG = ROOT / "buildtool"
MAX_LOCAL_IMPORTS = 40


def _modules() -> dict:
    """dotted name under buildtool ("" for the package itself) -> path."""
    out = {}
    for d, dirs, files in os.walk(PKG):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(d, f), PKG)[:-3].replace(os.sep, ".")
                out[rel[: -len("__init__")].rstrip(".") if rel.endswith("__init__") else rel] = os.path.join(d, f)
    return out


MODULES = _modules()


def _resolve(name: str):
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(mod: str, path: str) -> list:
    """(imported module, line, inside a function) for every import of a buildtool module."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    pkg = mod if path.endswith("__init__.py") else mod.rpartition(".")[0]
    local = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
             for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            names = [a.name for a in n.names if a.name == "buildtool" or a.name.startswith("buildtool.")]
            targets = [x[len("buildtool"):].lstrip(".") for x in names]
        elif isinstance(n, ast.ImportFrom):
            if n.level:
                base = pkg.split(".") if pkg else []
                base = base[: len(base) - (n.level - 1)]
                absmod = ".".join(base + ([n.module] if n.module else []))
            elif n.module and (n.module == "buildtool" or n.module.startswith("buildtool.")):
                absmod = n.module[len("buildtool"):].lstrip(".")
            else:
                continue
            # `from pkg import sub` imports the submodule; `from mod import name` the module
            targets = [f"{absmod}.{a.name}".lstrip(".") if f"{absmod}.{a.name}".lstrip(".") in MODULES else absmod
                       for a in n.names]
        else:
            continue
        for t in targets:
            r = _resolve(t) if t else ""
            if r != mod:
                out.append((r, n.lineno, id(n) in local))
    return out


EDGES = {m: _imports(m, p) for m, p in MODULES.items()}


def test_every_module_has_a_layer():
    assert [m for m in MODULES if m and layer_of(m) is None] == []


def test_imports_go_downward_only():
    rank = {name: k for k, (name, _) in enumerate(LAYERS)}
    up = []
    for m, edges in EDGES.items():
        if not m:
            continue
        for t, line, _ in edges:
            if t and rank[layer_of(t)] > rank[layer_of(m)]:
                up.append(f"buildtool/{m.replace('.', '/')}:{line} ({layer_of(m)}) imports {t} ({layer_of(t)})")
    assert up == []


def test_no_import_cycles():
    """Strongly connected components of the module graph (a package's __init__ importing its own
    children aside: that is re-exporting, not a cycle of design)."""
    g = {m: {t for t, _, _ in e if not (m == "" or t.startswith(m + "."))} for m, e in EDGES.items()}
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    assert cycles == []


def test_imports_inside_functions_are_few_and_say_why():
    """At most MAX_LOCAL_IMPORTS import statements inside functions in the whole package, each with a
    comment on its line or the line above saying why it is not at the top (an optional heavy
    dependency, the thin daemon client's start-up)."""
    found, silent = [], []
    for m, path in MODULES.items():
        lines = open(path, encoding="utf-8").read().splitlines()
        tree = ast.parse("\n".join(lines))
        local = {n.lineno: n for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
        for line in sorted(local):
            found.append(f"{path}:{line}")
            here, above = lines[line - 1], lines[line - 2].strip()
            if "#" not in here and not above.startswith("#"):
                silent.append(f"{path}:{line}")
    assert len(found) <= MAX_LOCAL_IMPORTS and silent == [], (len(found), silent)


def test_layer_table_names_only_what_exists():
    for _, names in LAYERS:
        for n in names:
            assert (PKG / n).is_dir() or (PKG / f"{n}.py").is_file(), n
