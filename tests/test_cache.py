"""Canonical keys, the content-addressed store and the memo (no daemon process here)."""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
import time

import msgpack
import numpy as np
import pytest

from conftest import ROOT, wait_until

from buildtool import sources
from buildtool.imports import closure_files
from buildtool.plan import canonical
from buildtool.serve import service
from buildtool.zoo.builder import GraphBuilder
from buildtool.serve.cache import MAGIC, DiskStore, Memo, NullMemo, _MISSING, entry_digest
from buildtool.serve.daemon import protocol


def small_cnn(channels=(8, 16, 12), seed: int = 0, name: str = "small"):
    """conv3x3 -> depthwise -> conv1x1 -> conv3x3/2 -> conv1x1 -> mean: 6 ops, every channel count settable."""
    b = GraphBuilder(name, seed=seed)
    x = b.input((1, 16, 16, 3))
    x = b.conv2d(x, channels[0], 3)
    x = b.depthwise(x, 3)
    x = b.conv2d(x, channels[1], 1)
    x = b.conv2d(x, channels[2], 3, 2)
    x = b.conv2d(x, 8, 1)
    b.mean(x)
    return b.finish()


def reweighted(g, seed: int):
    """Same structure, every constant and every scale changed (a retrained model)."""
    rng = np.random.default_rng(seed)
    h = g.copy()
    for t in h.tensors:
        if t.data is not None and t.index not in canonical._structural_tensors(h, h.operators):
            t.data = rng.integers(-100, 100, size=t.data.shape).astype(t.data.dtype)
        if t.quant is not None:
            t.quant = type(t.quant)(t.quant.scale * np.float32(1.5), t.quant.zero_point + 1, t.quant.axis)
    return h


# -- canonical forms ---------------------------------------------------------------
def test_weights_and_scales_do_not_change_the_key():
    g = small_cnn()
    h = reweighted(g, 1)
    assert any(not np.array_equal(a.data, b.data) for a, b in zip(g.tensors, h.tensors) if a.data is not None)
    assert canonical.graph_digest(g) == canonical.graph_digest(h)
    ops = [1, 2, 3]
    assert canonical.subgraph_key("blk", g, ops) == canonical.subgraph_key("blk", h, ops)


def test_structure_options_and_kind_change_the_key():
    g = small_cnn()
    d = canonical.graph_digest(g)
    assert canonical.graph_digest(small_cnn((8, 20, 12))) != d
    h = g.copy()
    h.operators[3].options["padding"] = "VALID"
    assert canonical.graph_digest(h) != d
    assert canonical.plan_key("arena", d, {"align": 16}) != canonical.plan_key("arena", d, {"align": 8})
    assert canonical.plan_key("arena", d, {}) != canonical.plan_key("split", d, {})
    # per-channel vs per-tensor quantisation changes sizes of generated tables
    h = g.copy()
    w = h.operators[0].inputs[1]
    h.tensors[w].quant = type(h.tensors[w].quant)(h.tensors[w].quant.scale[:1], h.tensors[w].quant.zero_point[:1], 0)
    assert canonical.graph_digest(h) != d


def test_structural_constants_enter_the_key():
    b = GraphBuilder("p", seed=0)
    x = b.input((1, 8, 8, 4))
    b.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]])
    g = b.finish()
    h = g.copy()
    pt = g.operators[0].inputs[1]
    h.tensors[pt].data = np.array([[0, 0], [2, 0], [1, 1], [0, 0]], dtype=h.tensors[pt].data.dtype)
    assert canonical.graph_digest(g) != canonical.graph_digest(h)


def test_subgraph_key_is_position_independent():
    """The same block keys the same wherever it sits: tensors are renumbered inside the region."""
    b = GraphBuilder("rep", seed=0)
    x = b.conv2d(b.input((1, 8, 8, 3)), 8, 3)
    for _ in range(3):
        x = b.conv2d(x, 8, 1)
    g = b.finish()
    forms = [canonical.subgraph_form(g, [i]) for i in (1, 2)]
    assert forms[0] == forms[1]
    assert canonical.subgraph_key("blk", g, [1]) == canonical.subgraph_key("blk", g, [2])
    assert canonical.subgraph_key("blk", g, [1]) != canonical.subgraph_key("blk", g, [0])
    assert canonical.subgraph_key("blk", g, [1, 2]) == canonical.subgraph_key("blk", g, [2, 3])
    assert forms[0][2][0][-2:] == [True, False]  # input comes from outside, nothing outside reads it


def test_subgraph_forms_of_one_graph_mark_what_outside_reads():
    """A residual block: x feeds a conv chain and the ADD after it. Inside [1, 2] x is read outside
    (by the ADD), inside [1, 2, 3] it is not; the graph's output is always read outside. Forms made
    with one SubgraphForms for the whole graph equal forms made each on their own."""
    b = GraphBuilder("res", seed=0)
    x = b.conv2d(b.input((1, 8, 8, 4)), 8, 3)
    y = b.conv2d(b.conv2d(x, 8, 1), 8, 1)
    g = b.finish(b.add(x, y))
    shared = canonical.SubgraphForms(g)

    def flags(ops):  # {original tensor: (from outside, read outside)}
        form = canonical.subgraph_form(g, ops, shared)
        assert form == canonical.subgraph_form(g, ops)
        seen = list(dict.fromkeys(i for k in ops for i in [*g.operators[k].inputs, *g.operators[k].outputs] if i >= 0))
        return {t: tuple(form[2][n][-2:]) for n, t in enumerate(seen)}

    assert flags([1, 2])[x] == (True, True) and flags([1, 2, 3])[x] == (True, False)
    assert flags([3])[g.outputs[0]] == (False, True) and flags([0])[x] == (False, True)
    assert canonical.subgraph_key("blk", g, [1, 2], None, shared) == canonical.subgraph_key("blk", g, [1, 2])


def test_planner_version_tracks_planner_source():
    v = canonical.planner_version()
    assert v.startswith(__import__("buildtool").__version__ + "+")
    assert canonical._source_digest(sources.files(["plan/arena"])) != canonical._source_digest(sources.files(["plan/fusion"]))
    assert str(ROOT / "buildtool" / "plan" / "fusion" / "search.py") in closure_files(canonical._PLANNER_ROOTS)


# -- incremental: a toy region planner with per-subgraph entries ----------------------
def _window_planner(g, memo, width=2):
    """Solve one problem per window of consecutive operators, as the fusion planner will."""
    out = []
    for s in range(len(g.operators) - width + 1):
        ops = list(range(s, s + width))
        key = canonical.subgraph_key("window", g, ops, {"width": width})
        out.append(memo.get_or_compute("window", key, lambda ops=ops: sum(
            g.tensors[o].nbytes for i in ops for o in g.operators[i].outputs)))
    return out


def test_changing_one_layer_misses_only_the_regions_touching_it(tmp_path):
    memo = Memo(DiskStore(str(tmp_path)))
    g = small_cnn((8, 16, 12))
    first = memo.session()
    _window_planner(g, first)
    n = len(g.operators) - 1
    assert first.stats.as_dict() == {"hits": 0, "misses": n}
    again = memo.session()
    _window_planner(reweighted(g, 3), again)
    assert again.stats.as_dict() == {"hits": n, "misses": 0}
    # op 2 gets 20 output channels: its output feeds op 3, so windows containing op 2 or 3 change
    changed = memo.session()
    h = small_cnn((8, 20, 12))
    vals = _window_planner(h, changed)
    touching = [s for s in range(n) if {s, s + 1} & {2, 3}]
    assert changed.stats.as_dict() == {"hits": n - len(touching), "misses": len(touching)}
    assert vals == _window_planner(h, NullMemo())


# -- disk store -----------------------------------------------------------------------
def test_store_roundtrip_and_survives_a_new_instance(tmp_path):
    s = DiskStore(str(tmp_path))
    d = entry_digest("arena", "k1")
    assert s.get("arena", d) is _MISSING
    s.put("arena", d, {"a": [1, 2, 3], "b": "x"})
    assert DiskStore(str(tmp_path)).get("arena", d) == {"a": [1, 2, 3], "b": "x"}
    assert not [f for _r, _d, fs in os.walk(tmp_path) for f in fs if f.startswith(".tmp")]


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "other-key"])
def test_damaged_entry_is_dropped(tmp_path, damage):
    s = DiskStore(str(tmp_path))
    d = entry_digest("arena", "k")
    s.put("arena", d, list(range(100)))
    path = s._path("arena", d)
    data = open(path, "rb").read()
    if damage == "flip":
        data = data[:-5] + bytes([data[-5] ^ 1]) + data[-4:]
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "empty":
        data = b""
    else:  # a valid entry stored under the wrong name
        payload = msgpack.packb(["arena", entry_digest("arena", "other"), [1]])
        import hashlib

        data = MAGIC + hashlib.sha256(payload).digest() + payload
    open(path, "wb").write(data)
    assert s.get("arena", d) is _MISSING
    assert not os.path.exists(path) and s.corrupt == 1


def test_lru_eviction_keeps_recently_used(tmp_path):
    s = DiskStore(str(tmp_path), cap_bytes=10_000)
    blob = b"x" * 1000
    digests = [entry_digest("arena", str(i)) for i in range(12)]
    for i, d in enumerate(digests[:8]):
        s.put("arena", d, blob)
        os.utime(s._path("arena", d), ns=(10**18 + i, 10**18 + i))  # a clear age order
    entry = os.path.getsize(s._path("arena", digests[0]))
    assert s.get("arena", digests[0]) == blob  # used now: youngest
    for d in digests[8:]:
        s.put("arena", d, blob)
    left = {d for d in digests if os.path.exists(s._path("arena", d))}
    st = s.stats()
    assert st["bytes"] <= 10_000 and st["bytes"] == st["entries"] * entry
    assert digests[0] in left and digests[-1] in left
    # evicted oldest first: entries 1, 2, ... went before anything newer
    gone = [i for i, d in enumerate(digests) if d not in left]
    assert gone == list(range(1, 1 + len(gone)))


# -- memo ------------------------------------------------------------------------------
def test_in_flight_requests_for_one_key_compute_once(tmp_path):
    memo = Memo(DiskStore(str(tmp_path)))
    calls = []

    def slow():
        calls.append(1)
        time.sleep(0.3)
        return {"v": 42}

    sessions = [memo.session() for _ in range(8)]
    barrier = threading.Barrier(8)
    results = [None] * 8

    def run(k):
        barrier.wait()
        results[k] = sessions[k].get_or_compute("arena", "same", slow)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and results == [{"v": 42}] * 8
    assert sum(s.stats.misses for s in sessions) == 1 and sum(s.stats.hits for s in sessions) == 7
    assert memo.stats.as_dict() == {"hits": 7, "misses": 1}


def test_failed_compute_is_not_cached(tmp_path):
    memo = Memo(DiskStore(str(tmp_path)))

    def boom():
        raise ValueError("no")

    with pytest.raises(ValueError):
        memo.get_or_compute("arena", "k", boom)
    assert memo.get_or_compute("arena", "k", lambda: 7) == 7
    assert memo.stats.as_dict() == {"hits": 0, "misses": 1}


def test_null_memo_always_computes_and_values_roundtrip():
    m = NullMemo()
    n = []
    for _ in range(3):
        assert m.get_or_compute("arena", "k", lambda: n.append(1) or (1, 2)) == [1, 2]
    assert len(n) == 3 and m.stats.as_dict() == {"hits": 0, "misses": 3}
    from buildtool.errors import InternalError

    with pytest.raises(InternalError):
        m.get_or_compute("Bad Kind", "k", lambda: 1)


# -- service ---------------------------------------------------------------------------
def test_plan_request_same_bytes_cold_warm_and_uncached(tmp_path):
    from buildtool.plan.arena.planner import plan_arena
    from buildtool.model.writer import serialize

    g = small_cnn()
    data = serialize(g)
    opts = {"time_budget": 0}
    direct = json.dumps(plan_arena(g, time_budget=0).to_json())
    memo = Memo(DiskStore(str(tmp_path)))
    cold = service.plan_request(data, opts, memo.session())
    warm = service.plan_request(data, opts, memo.session())
    fresh = service.plan_request(data, opts, Memo(DiskStore(str(tmp_path))).session())  # from disk only
    assert cold["cache"] == {"hits": 0, "misses": 1}
    assert warm["cache"] == fresh["cache"] == {"hits": 1, "misses": 0}
    for r in (cold, warm, fresh, service.plan_request(data, opts), service.plan_request(g, opts)):
        assert json.dumps(r["plan"]) == direct
    # a retrained model: new bytes, same structure -> the arena entry hits
    assert service.plan_request(serialize(reweighted(g, 9)), opts, memo.session())["cache"] == {"hits": 1,
                                                                                                "misses": 0}


def test_plan_request_refuses_bad_options():
    from buildtool.errors import UsageError

    with pytest.raises(UsageError, match="unknown planning option 'speed'"):
        service.plan_request(small_cnn(), {"speed": 1})
    with pytest.raises(UsageError, match="power of two"):
        service.plan_request(small_cnn(), {"align": 12})


# -- protocol ----------------------------------------------------------------------------
def test_protocol_roundtrip_and_limits():
    a, b = socket.socketpair()
    with a, b:
        protocol.send(a, {"type": "x", "data": b"\0" * 10, "n": [1, 2]})
        assert protocol.recv(b) == {"type": "x", "data": b"\0" * 10, "n": [1, 2]}
        a.sendall(struct.pack(">I", protocol.MAX_MESSAGE + 1))  # body never sent: refused on the header
        with pytest.raises(protocol.ProtocolError, match="exceeds the 64 MiB limit"):
            protocol.recv(b)
        body = b"\xc1garbage"
        a.sendall(struct.pack(">I", len(body)) + body)
        with pytest.raises(protocol.ProtocolError, match="malformed"):
            protocol.recv(b)
        body = msgpack.packb([1, 2])
        a.sendall(struct.pack(">I", len(body)) + body)
        with pytest.raises(protocol.ProtocolError, match="not a map"):
            protocol.recv(b)
        a.sendall(struct.pack(">I", 10) + b"abc")
        a.close()
        with pytest.raises(protocol.ConnectionLost):
            protocol.recv(b)
    with pytest.raises(protocol.ProtocolError):
        protocol.encode({"type": "x", "data": b"\0" * (protocol.MAX_MESSAGE + 1)})


def test_runtime_dir_must_be_private(tmp_path, monkeypatch):
    from buildtool.errors import BuildtoolError

    d = tmp_path / "rt"
    monkeypatch.setenv("BUILDTOOL_RUNTIME_DIR", str(d))
    assert protocol.runtime_dir() == str(d) and (os.stat(d).st_mode & 0o777) == 0o700
    os.chmod(d, 0o755)
    with pytest.raises(BuildtoolError, match="not a private directory"):
        protocol.runtime_dir()
    link = tmp_path / "link"
    os.chmod(d, 0o700)
    link.symlink_to(d)
    monkeypatch.setenv("BUILDTOOL_RUNTIME_DIR", str(link))
    with pytest.raises(BuildtoolError, match="not a private directory"):
        protocol.runtime_dir()


def test_fusion_blocks_cached_per_subgraph(tmp_path, monkeypatch):
    """plan_request with fusion options: the fused plan is one entry, every block's costs another.

    After one layer's channel count changes, exactly the blocks touching that layer
    (op 2, or op 3 that reads its output) are solved again; every other block hits.
    """
    from buildtool.model.writer import serialize

    evaluated = []
    real = canonical.subgraph_key

    def recording(kind, g, ops, options=None, forms=None):
        key = real(kind, g, ops, options, forms)
        evaluated.append((set(ops), key))
        return key

    monkeypatch.setattr(canonical, "subgraph_key", recording)
    memo = Memo(DiskStore(str(tmp_path)))
    opts = {"optimize": "ram", "time_budget": 0}
    g = small_cnn((8, 16, 12))
    first = service.plan_request(serialize(g), opts, memo.session())
    keys1 = {k for _, k in evaluated}
    assert first["cache"]["misses"] == 1 + len(keys1) and first["cache"]["hits"] == len(evaluated) - len(keys1)
    assert first["plan"]["fusion_blocks"] or first["plan"]["arena_bytes"] > 0
    evaluated.clear()
    assert service.plan_request(serialize(reweighted(g, 2)), opts, memo.session())["cache"] == {"hits": 1,
                                                                                                "misses": 0}
    h = small_cnn((8, 20, 12))
    second = service.plan_request(serialize(h), opts, memo.session())
    touching = {k for ops, k in evaluated if ops & {2, 3}}
    assert touching and not touching & keys1  # every block touching the change is a new problem
    assert all(k in keys1 for ops, k in evaluated if not ops & {2, 3})  # every other block is known
    assert second["cache"] == {"misses": 1 + len(touching), "hits": len(evaluated) - len(touching)}
    assert json.dumps(second["plan"]) == json.dumps(service.plan_request(h, opts)["plan"])


# -- faults: the cache is an accelerator, never a reason for a plan to fail ------------------
def _devfull_mkstemp(real):
    """mkstemp whose file descriptor is /dev/full: every write fails with ENOSPC, as on a full disk."""
    def mkstemp(*a, **kw):
        fd, path = real(*a, **kw)
        os.close(fd)
        return os.open("/dev/full", os.O_WRONLY), path
    return mkstemp


def _raising(err):
    def f(*a, **kw):
        raise OSError(err, os.strerror(err))
    return f


@pytest.mark.parametrize("fault", ["full-disk", "read-only", "permission", "home-not-a-directory"])
def test_unwritable_cache_never_fails_a_plan(tmp_path, monkeypatch, caplog, fault):
    import errno
    import logging
    import tempfile

    from buildtool.serve import cache

    root = tmp_path / "cache"
    if fault == "full-disk":
        monkeypatch.setattr(cache.tempfile, "mkstemp", _devfull_mkstemp(tempfile.mkstemp))
    elif fault == "read-only":
        monkeypatch.setattr(cache.tempfile, "mkstemp", _raising(errno.EROFS))
    elif fault == "permission":
        monkeypatch.setattr(cache.tempfile, "mkstemp", _raising(errno.EACCES))
    else:  # HOME (and so ~/.cache) below a regular file: a real failure even for root
        (tmp_path / "home").write_text("")
        monkeypatch.delenv("BUILDTOOL_CACHE_DIR", raising=False)
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        root = None
    g = small_cnn()
    opts = {"optimize": "ram", "time_budget": 0}  # the fused plan and its per-block entries: many writes
    want = json.dumps(service.plan_request(g, opts)["plan"])
    memo = Memo(DiskStore(None if root is None else str(root)))
    with caplog.at_level(logging.WARNING, logger="buildtool.serve.cache"):
        for _ in range(2):
            assert json.dumps(service.plan_request(g, opts, memo.session())["plan"]) == want
    warnings = [r for r in caplog.records if r.name == "buildtool.serve.cache"]
    assert len(warnings) == 1 and "cannot be written" in warnings[0].getMessage()
    assert memo.store.write_errors > 1 and memo.store.stats()["entries"] == 0
    if root is not None and root.exists():
        assert not [f for _r, _d, fs in os.walk(root) for f in fs]  # no temp file left behind


@pytest.mark.parametrize("damage", ["directory", "fifo", "symlink", "file-for-directory"])
def test_anything_at_an_entry_path_is_a_miss_and_repaired(tmp_path, damage):
    s = DiskStore(str(tmp_path))
    d = entry_digest("arena", "k")
    path = s._path("arena", d)
    s.put("arena", d, [1, 2])
    os.unlink(path)
    if damage == "directory":
        os.makedirs(os.path.join(path, "sub"))
    elif damage == "fifo":
        os.mkfifo(path)  # opening it for reading would block forever
    elif damage == "symlink":
        os.symlink("/etc/passwd", path)
    else:  # a file where the <2 hex> directory belongs
        os.rmdir(os.path.dirname(path))
        open(os.path.dirname(path), "wb").close()
    assert s.get("arena", d) is _MISSING
    memo = Memo(s)
    assert memo.get_or_compute("arena", "k", lambda: [3, 4]) == [3, 4]
    assert os.path.isfile(path) and not os.path.islink(path)
    assert DiskStore(str(tmp_path)).get("arena", d) == [3, 4]  # repaired on disk


def test_clear_removes_damaged_entries(tmp_path):
    s = DiskStore(str(tmp_path))
    for k in ("a", "b", "c"):
        s.put("arena", entry_digest("arena", k), k)
    os.unlink(s._path("arena", entry_digest("arena", "a")))
    os.makedirs(s._path("arena", entry_digest("arena", "a")))  # a directory at an entry's path
    os.unlink(s._path("arena", entry_digest("arena", "b")))
    os.symlink("/nowhere", s._path("arena", entry_digest("arena", "b")))
    assert s.clear() == 3
    assert not [f for _r, _d, fs in os.walk(s.objects) for f in fs]
    assert not os.path.lexists(s._path("arena", entry_digest("arena", "a")))
    assert s.get("arena", entry_digest("arena", "a")) is _MISSING


def test_store_directories_are_private(tmp_path):
    old = tmp_path / "c" / "objects" / "fused"
    old.mkdir(parents=True, mode=0o755)
    os.chmod(old.parent, 0o755)
    s = DiskStore(str(tmp_path / "c"))
    for kind in ("arena", "fused"):
        d = entry_digest(kind, "k")
        s.put(kind, d, 1)
        for p in (s.objects, os.path.join(s.objects, kind), os.path.dirname(s._path(kind, d))):
            assert os.stat(p).st_mode & 0o777 == 0o700, p
    new = DiskStore(str(tmp_path / "new" / "cache"))
    new.put("arena", entry_digest("arena", "k"), 1)
    assert os.stat(new.root).st_mode & 0o777 == 0o700


def test_cache_root_may_be_a_symlink(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    s = DiskStore(str(tmp_path / "link"))
    d = entry_digest("arena", "k")
    assert s.put("arena", d, 5) and DiskStore(str(tmp_path / "real")).get("arena", d) == 5


def test_stale_temp_files_are_cleaned(tmp_path):
    s = DiskStore(str(tmp_path))
    d = entry_digest("arena", "k")
    s.put("arena", d, 1)
    ab = os.path.dirname(s._path("arena", d))
    dead, live, old = (os.path.join(ab, n) for n in (".tmp999999999-x", f".tmp{os.getpid()}-y", ".tmpz"))
    for p in (dead, live, old):
        open(p, "wb").write(b"half an entry")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    assert s.clean_temps() == 2
    assert os.path.exists(live) and not os.path.exists(dead) and not os.path.exists(old)
    assert s.stats()["entries"] == 1
    assert s.clear() == 1 and os.path.exists(live)  # a live writer's temp file is left to finish


@pytest.mark.parametrize("options, needle", [
    ({"align": 2 ** 64}, "align=18446744073709551616 is invalid: it must be a power of two from 1 to 4096"),
    ({"align": 2 ** 40}, "align=1099511627776 is invalid: it must be a power of two from 1 to 4096"),
    ({"align": "16"}, "align='16' is invalid"),
    ({"align": True}, "align=True is invalid"),
    ({"align": 16.0}, "align=16.0 is invalid"),
    ({"time_budget": float("nan")}, "time_budget=nan is invalid: it must be a number from 0 to 3600"),
    ({"time_budget": float("inf")}, "time_budget=inf is invalid"),
    ({"time_budget": "2"}, "time_budget='2' is invalid"),
    ({"time_budget": -1}, "time_budget=-1 is invalid"),
    ({"max_mac_overhead": float("nan")}, "max_mac_overhead=nan is invalid: it must be a number from 1 to 1000"),
    ({"max_mac_overhead": 0.5}, "max_mac_overhead=0.5 is invalid"),
    ({"ram_limit": 2 ** 64}, "ram_limit=18446744073709551616 is invalid: it must be a byte count from 1 to"),
    ({"ram_limit": 0}, "ram_limit=0 is invalid"),
    ({"ram_limit": 65536.5}, "ram_limit=65536.5 is invalid"),
    ({"order_search": "false"}, "order_search='false' is invalid: it must be true or false"),
    ({"inplace": 0}, "inplace=0 is invalid"),
    ({"input_streamed": None}, "input_streamed=None is invalid"),
    ({"optimize": "speed"}, "optimize='speed' is invalid: it must be 'ram', 'macs' or none"),
    ({"splits": [[0, 2, 2 ** 70]]}, "splits=[[0, 2, 1180591620717411303424]] is invalid"),
    ({"splits": [[3, 1, 2]]}, "splits=[[3, 1, 2]] is invalid"),
    ({"splits": [["0", 1, 2]]}, "splits=[['0', 1, 2]] is invalid"),
    ({"splits": "all"}, "splits='all' is invalid"),
])
def test_every_option_is_checked_for_type_and_range(options, needle):
    from buildtool.errors import UsageError

    with pytest.raises(UsageError) as e:
        service.plan_request(small_cnn(), options)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_options_in_range_are_accepted_and_normalised():
    o = service.normalize_options({"align": np.int64(4096), "time_budget": 3600, "ram_limit": 65536,
                                   "max_mac_overhead": 1, "splits": [(0, 2, 3)]})
    assert o["align"] == 4096 and type(o["align"]) is int and o["time_budget"] == 3600.0
    assert o["splits"] == [[0, 2, 3]] and o["max_mac_overhead"] == 1.0
    assert service.normalize_options(o) == o


def test_cancelled_request_stops_at_a_check_point_and_waiters_solve_it_themselves(tmp_path):
    from buildtool.serve.cache import Cancelled

    memo = Memo(DiskStore(str(tmp_path)))
    gone = threading.Event()
    started = threading.Event()

    def check():
        if gone.is_set():
            raise Cancelled("the client hung up")

    def abandoned():  # a fused plan whose blocks go through the same session: each look-up is a check point
        started.set()
        for k in range(1000):
            leaver.get_or_compute("fusion-block", f"b{k}", lambda: time.sleep(0.01) or k)
        return "never"

    leaver, stayer = memo.session(check), memo.session()
    out = {}
    t = threading.Thread(target=lambda: out.update(a=_catch(lambda: leaver.get_or_compute("fused", "k", abandoned))))
    t.start()
    started.wait(5)
    w = threading.Thread(target=lambda: out.update(b=stayer.get_or_compute("fused", "k", lambda: "solved")))
    w.start()  # waits for the first request's answer to the same key
    time.sleep(0.1)
    gone.set()
    t.join(10)
    w.join(10)
    assert isinstance(out["a"], Cancelled) and out["b"] == "solved"
    assert memo.get_or_compute("fused", "k", lambda: "again") == "solved"
    assert memo.store.stats()["entries"] < 1000


def _catch(f):
    try:
        return f()
    except Exception as e:
        return e


def test_hot_layer_is_bounded_in_bytes(tmp_path):
    memo = Memo(DiskStore(str(tmp_path)), hot_bytes=10_000)
    for k in range(50):
        memo.get_or_compute("arena", str(k), lambda: b"x" * 1000)
    assert memo._hot_bytes <= 10_000 and len(memo._hot) < 10
    assert memo.get_or_compute("arena", "0", lambda: b"recomputed") == b"x" * 1000  # from disk


def test_write_behind_queues_reads_back_and_flushes_same_bytes(tmp_path):
    """write_behind: put() only queues; queued entries read back; flush() writes the bytes a direct
    put writes (the value is not packed twice, the entry is the same)."""
    wb, direct = DiskStore(str(tmp_path / "wb"), write_behind=True), DiskStore(str(tmp_path / "direct"))
    wb_memo, direct_memo = Memo(wb, hot_entries=1), Memo(direct, hot_entries=1)
    values = {f"k{i}": {"ram": [i, 2 * i], "scheme": "hcache", "t": (i, 3)} for i in range(20)}
    for k, v in values.items():
        assert wb_memo.get_or_compute("fusion-block", k, lambda v=v: v) == direct_memo.get_or_compute(
            "fusion-block", k, lambda v=v: v)
    for k, v in values.items():  # from the queue (the hot layer holds one entry) or the disk
        assert wb_memo.get_or_compute("fusion-block", k, lambda: 1 / 0) == json.loads(json.dumps(v))
    wb.flush()
    assert not wb._pending and wb.write_errors == 0
    for k in values:
        d = entry_digest("fusion-block", k)
        assert open(wb._path("fusion-block", d), "rb").read() == open(direct._path("fusion-block", d), "rb").read()
    assert DiskStore(str(tmp_path / "wb")).stats()["entries"] == 20


def test_write_behind_writer_thread_flushes_when_puts_pause(tmp_path):
    s = DiskStore(str(tmp_path), write_behind=True)
    d = entry_digest("arena", "k")
    s.put("arena", d, [1, 2, 3])
    assert wait_until(lambda: os.path.exists(s._path("arena", d)))
    assert DiskStore(str(tmp_path)).get("arena", d) == [1, 2, 3]


_CRASH = """
import os, sys
from buildtool.serve import cache
s = cache.DiskStore(sys.argv[1], write_behind=True)
for i in range(4):
    s.put("arena", cache.entry_digest("arena", f"k{i}"), list(range(1000 * (i + 1))))
n = [0]
real = cache._write_file
def dying(f, data):
    n[0] += 1
    if n[0] == 3:  # the third entry: half its bytes reach the temp file, then the process dies
        f.write(data[: len(data) // 2])
        f.flush()
        os._exit(9)
    real(f, data)
cache._write_file = dying
s.flush()
"""


def test_crash_mid_flush_leaves_no_corrupt_entry(tmp_path):
    """A daemon killed while its writer flushes: entries written before are whole, the rest are
    misses (never damaged ones); the dead writer's temp file is removed."""
    import subprocess
    import sys

    root = str(tmp_path / "c")
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(service.__file__)))
    r = subprocess.run([sys.executable, "-c", _CRASH, root], env=dict(os.environ, PYTHONPATH=pkg), timeout=60)
    assert r.returncode == 9
    temps = [f for _r, _d, fs in os.walk(root) for f in fs if f.startswith(".tmp")]
    assert len(temps) == 1  # the interrupted write
    s = DiskStore(root)
    got = [s.get("arena", entry_digest("arena", f"k{i}")) for i in range(4)]
    assert [g is _MISSING for g in got] == [False, False, True, True]
    assert got[:2] == [list(range(1000)), list(range(2000))]
    assert s.corrupt == 0 and s.stats()["entries"] == 2
    assert s.clean_temps() == 1


def test_write_behind_waits_while_a_request_is_solved(tmp_path):
    s = DiskStore(str(tmp_path), write_behind=True)
    d = entry_digest("arena", "k")
    s.busy(+1)
    s.put("arena", d, [1])
    time.sleep(0.5)  # well past the quiet period: still queued while busy
    assert not os.path.exists(s._path("arena", d)) and s.get("arena", d) == [1]
    s.busy(-1)
    assert wait_until(lambda: os.path.exists(s._path("arena", d)))
