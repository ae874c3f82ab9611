"""The compile cache (`$BUILDTOOL_CACHE`, else `$XDG_CACHE_HOME/buildtool` or `~/.cache/buildtool`): the
kernel libraries (`kernels/`), model objects (`models/`) and the objects of kernel files and exports (`objects/`)
toolchain.py keeps by content, and the cap that keeps them from filling the disk.

Every entry is whole or absent (written under a temporary name and renamed). A hit touches its entry; after
an entry is added, a process that has not pruned in the last PRUNE_EVERY_S (a stamp file shared by every
process) removes the least recently used entries until the cache is at most 3/4 of its cap
(`$BUILDTOOL_BUILD_CACHE_CAP_MB`, default DEFAULT_CAP_MB). An entry used in the last MIN_AGE_S is never
removed: a build that found it may still be linking it. A removed entry is renamed aside first, so no reader
sees half of one; the next build that needs it compiles it again.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

DEFAULT_CAP_MB = 2048  # kernel objects and libraries ~1 MB a board, model objects ~0.3 MB: thousands of builds' worth
MIN_AGE_S = 600        # entries used this recently stay (longer than any one build takes to link)
PRUNE_EVERY_S = 300    # processes prune at most this often between them
KINDS = ("kernels", "models", "objects")
_STAMP = ".pruned"


def root() -> Path:
    """The cache folder (kernels/, models/ and objects/ live in it)."""
    base = os.environ.get("BUILDTOOL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "buildtool")
    return Path(base)


def cap_bytes() -> int:
    """The cap: $BUILDTOOL_BUILD_CACHE_CAP_MB (a number of MiB), else DEFAULT_CAP_MB."""
    v = os.environ.get("BUILDTOOL_BUILD_CACHE_CAP_MB", "")
    try:
        mb = float(v) if v else DEFAULT_CAP_MB
    except ValueError:
        mb = DEFAULT_CAP_MB
    return int(max(mb, 0) * (1 << 20))


def used(entry: Path) -> None:
    """Mark a cache entry (a file or an entry's folder) as just used; best effort (a read-only cache stays usable)."""
    try:
        os.utime(entry)
    except OSError:
        pass


def _size(p: Path) -> int:
    if p.is_file():
        return p.stat().st_size
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())


def entries(base: Path | None = None) -> list:
    """[(last used, bytes, path)] of every entry, least recently used first."""
    base = root() if base is None else base
    out = []
    for kind in KINDS:
        d = base / kind
        if not d.is_dir():
            continue
        for e in d.iterdir():
            if e.name.startswith(".") or e.name.endswith(".tmp"):
                continue
            try:
                out.append((e.stat().st_mtime, _size(e), e))
            except OSError:  # removed by another process meanwhile
                continue
    return sorted(out, key=lambda r: (r[0], str(r[2])))


def prune(cap: int, base: Path | None = None, now: float | None = None) -> tuple:
    """Remove the least recently used entries not used in the last MIN_AGE_S until the cache holds at most
    3/4 of cap (nothing when it holds at most cap). (entries removed, bytes freed)."""
    base = root() if base is None else base
    now = time.time() if now is None else now
    rows = entries(base)
    total = sum(r[1] for r in rows)
    if total <= cap:
        return 0, 0
    removed = freed = 0
    for mtime, size, path in rows:
        if total - freed <= cap * 3 // 4:
            break
        if now - mtime < MIN_AGE_S:
            continue
        aside = path.with_name(f".{path.name}.{os.getpid()}.gone")
        try:
            path.rename(aside)
        except OSError:  # another process removed or renamed it first
            continue
        if aside.is_dir():
            shutil.rmtree(aside, ignore_errors=True)
        else:
            aside.unlink(missing_ok=True)
        removed, freed = removed + 1, freed + size
    return removed, freed


def added() -> None:
    """After an entry is added: prune, unless a process pruned in the last PRUNE_EVERY_S. Never fails a build."""
    base = root()
    stamp = base / _STAMP
    try:
        if time.time() - stamp.stat().st_mtime < PRUNE_EVERY_S:
            return
    except OSError:
        pass
    try:
        stamp.touch()
        prune(cap_bytes(), base)
    except OSError:
        pass
