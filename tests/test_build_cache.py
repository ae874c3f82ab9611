"""The compile cache's cap (firmware/build_cache.py): least recently used entries go first, entries used in
the last MIN_AGE_S never, a hit marks its entry used, and a build through the cache prunes it."""

import os
import time

from buildtool import targets
from buildtool.firmware import build_cache, toolchain


def _entry(base, kind, name, size, age, now):
    p = base / kind / name
    if kind == "objects":
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"o" * size)
    else:
        p.mkdir(parents=True)
        (p / "lib.a").write_bytes(b"k" * size)
    os.utime(p, (now - age, now - age))
    return p


def test_prune_removes_least_recently_used_down_to_three_quarters(tmp_path):
    now = time.time()
    old = _entry(tmp_path, "kernels", "a", 400, 5000, now)
    mid = _entry(tmp_path, "models", "b", 300, 4000, now)
    new = _entry(tmp_path, "objects", "c.o", 300, 3000, now)
    fresh = _entry(tmp_path, "kernels", "d", 500, 10, now)  # used within MIN_AGE_S: a build may be linking it
    # 1500 bytes against a cap of 1000: down to <= 750, oldest first, the fresh one never
    assert build_cache.prune(1000, tmp_path, now) == (3, 1000)
    assert [p.exists() for p in (old, mid, new, fresh)] == [False, False, False, True]
    assert sorted(p.name for p in tmp_path.rglob("*") if p.name.endswith(".gone")) == []


def test_prune_leaves_a_cache_under_its_cap_alone(tmp_path):
    now = time.time()
    kept = [_entry(tmp_path, "kernels", n, 100, 9000, now) for n in "abc"]
    assert build_cache.prune(300, tmp_path, now) == (0, 0)
    assert all(p.exists() for p in kept)


def test_a_hit_marks_its_entry_used(tmp_path):
    now = time.time()
    a = _entry(tmp_path, "kernels", "a", 400, 5000, now)
    b = _entry(tmp_path, "kernels", "b", 400, 4000, now)
    build_cache.used(a)  # a is now the most recently used: b goes
    assert build_cache.prune(700, tmp_path, time.time() + build_cache.MIN_AGE_S + 1) == (1, 400)
    assert a.exists() and not b.exists()


def test_a_build_prunes_the_cache_it_adds_to(tmp_path, monkeypatch):
    """kernel_library adds a library to a cache over its cap: the stale entry goes, the new library stays."""
    monkeypatch.setenv("BUILDTOOL_CACHE", str(tmp_path))
    monkeypatch.setenv("BUILDTOOL_BUILD_CACHE_CAP_MB", "0.001")
    now = time.time()
    stale = _entry(tmp_path, "models", "stale", 4000, 90000, now)
    t = targets.get("host")
    lib = toolchain.kernel_library(t, srcs=toolchain.kernel_sources(t)[:1])
    assert lib.exists() and lib.is_relative_to(tmp_path / "kernels")
    assert not stale.exists()
    # the stamp keeps the next addition within PRUNE_EVERY_S from walking the cache again
    assert now - (tmp_path / ".pruned").stat().st_mtime < build_cache.PRUNE_EVERY_S
