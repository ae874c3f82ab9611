"""Wire protocol and private paths of the planner daemon.

A message is a 4-byte big-endian length followed by that many bytes of msgpack
encoding one map with a string "type". Every message, both ways, is limited to
MAX_MESSAGE bytes: a longer one is refused before its body is read. Decoding is
plain msgpack (no pickle, no eval, no extension types turned into objects).

The first exchange is a handshake: the client sends {"type": "hello"} with its
versions() (buildtool release + fingerprint of the package code, planner included);
a daemon of another version answers ok=False and exits, so the client starts one
of its own. The daemon's reply also names its planner_version().

All files live in one private per-user directory: $BUILDTOOL_RUNTIME_DIR, else
$XDG_RUNTIME_DIR/buildtool-<uid>, else /tmp/buildtool-<uid>; it is created 0700 and
refused unless it is a real directory owned by us that nobody else can write.
"""

from __future__ import annotations

import os
import socket
import stat
import struct
import time

import msgpack

from ... import __version__
from ...errors import BuildtoolError
from ...fsutil import makedirs_private
from ...sources import PKG, code_version

MAX_MESSAGE = 64 << 20
# What a request to the daemon may hold besides bytes (a model's): its decoded objects stay a small
# multiple of its size (a 64 MiB message of empty arrays would otherwise be 64 million objects).
REQUEST_LIMITS = {"max_array_len": 4096, "max_map_len": 4096, "max_str_len": 1 << 20}
MAX_REQUEST_CONTAINERS = 4096
_LEN = struct.Struct(">I")


class ProtocolError(BuildtoolError):
    """A malformed, oversized or truncated message."""


class ConnectionLost(BuildtoolError):
    """The peer closed the connection (or died) before a whole message arrived."""


class DaemonUnavailable(BuildtoolError):
    """No daemon can be used (unusable runtime directory, a daemon that does not come up):
    service.plan_json then plans in its own process after one warning."""


def to_wire(text):
    """A str for msgpack; a path or message that is not valid UTF-8 (POSIX paths are bytes:
    Python holds the undecodable ones as surrogates) travels as its bytes instead. A list: each item; a flag (bool)
    as it is."""
    if isinstance(text, list):
        return [to_wire(t) for t in text]
    if isinstance(text, bool):
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return os.fsencode(text)


def from_wire(value):
    """Inverse of to_wire: bytes become the str (with surrogates) that Python uses for them."""
    if isinstance(value, list):
        return [from_wire(v) for v in value]
    return os.fsdecode(value) if isinstance(value, bytes) else value


def umask_now() -> int:
    """This process's umask, sent with requests that write files (the daemon writes them as this
    process would). Read by setting it back at once: the client is single-threaded."""
    u = os.umask(0o22)
    os.umask(u)
    return u


def package_now():
    """This process's buildtool folder, on the wire: a daemon serving another install of the same code
    names the client's files in the depfiles it writes."""
    return to_wire(PKG)


def package_of(msg: dict) -> str | None:
    """The client's buildtool folder a request names (None: not given or not an absolute path)."""
    p = from_wire(msg.get("package"))
    return p if isinstance(p, str) and os.path.isabs(p) else None


def umask_of(msg: dict) -> int | None:
    """A request's umask, or None when it has none (the daemon's own then applies)."""
    u = msg.get("umask")
    return u if isinstance(u, int) and not isinstance(u, bool) and 0 <= u <= 0o777 else None


def versions() -> dict:
    """What client and daemon must agree on: the release and the exact code (which covers the planner)."""
    return {"buildtool": __version__, "code": code_version()}


def plan_message(model, options: dict, source: str | None = None, zoo: bool | None = None) -> dict:
    """A plan request. model: a path (sent absolute, with the path as typed as "source" for messages),
    a zoo name, .tflite bytes or a Graph (sent as its .tflite bytes). zoo: whether a string is a zoo
    name, when the caller knows (None: a file of that name in this process's directory is a path)."""
    msg = {"type": "plan", "options": options}
    if isinstance(model, (bytes, bytearray)):
        msg["model_bytes"] = bytes(model)
    elif isinstance(model, str):
        if zoo is None:
            zoo = not (os.path.exists(model) or model.endswith(".tflite") or os.sep in model)
        if not zoo:
            msg["model"] = to_wire(os.path.abspath(model))
            msg["source"] = to_wire(model if source is None else source)
        else:
            msg["zoo"] = model
    else:
        from ...model.writer import serialize  # (a Graph only: the thin client never loads the writer)

        msg["model_bytes"] = serialize(model)
    return msg


# A `buildtool gen` step sent to the daemon: {"type": "gen", "args": {GEN_ARGS key: value}, "umask": ...},
# its paths absolute (the daemon runs in another directory) and named back as the user typed them.
GEN_ARGS = ("step", "input", "plan", "output", "board", "name", "opt", "depfile", "depfile_target", "depfile_outputs",
            "split_header", "code_size")
GEN_STEPS = ("model", "skeleton", "plan", "code", "flash")  # not board: it needs the caller's toolchain set-up


def gen_path_args(step: str) -> tuple:
    """The arguments of a gen step that name files (gen model's input is a zoo name)."""
    return tuple(k for k in ("input", "plan", "output", "depfile", "depfile_target", "split_header", "code_size")
                 if not (k == "input" and step == "model"))


CODE_FILES = ("model.c", "model.h", "firmware.json")  # what gen code writes into its -o DIR


def gen_outputs(args: dict) -> list:
    """The files a gen step (args: GEN_ARGS -> value, paths absolute) writes: the daemon's reply names each
    one's SHA-256 and the client checks it sees those bytes (a daemon in another mount namespace writes
    where the client cannot see)."""
    out = args.get("output")
    files = [os.path.join(out, n) for n in CODE_FILES] if args.get("step") == "code" else [out]
    return [p for p in files + [args.get("split_header"), args.get("depfile")] if p]


def output_digests(paths: list) -> dict:
    """{path on the wire: SHA-256 of the regular file there, or None}: what a daemon's gen reply says it wrote."""
    return {to_wire(p): _digest(p) for p in paths}


def unseen_output(digests: dict, paths: list | None = None) -> str | None:
    """The first of paths (default: every path digests names) that this process does not see as a regular
    file holding the bytes digests says the daemon wrote (None: all of them are here). Never blocks (a FIFO
    is opened without waiting for a writer, and is not a regular file)."""
    digests = {from_wire(k): v for k, v in (digests or {}).items()}
    for p in digests if paths is None else paths:
        if digests.get(p) is None or _digest(p) != digests[p]:
            return p
    return None


def _digest(path: str) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        import hashlib  # (here only: the thin client's warm `plan` never checks outputs, nor pays for hashlib)

        h = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


def absolute_paths(args: dict, cwd: str) -> dict:
    """Make a step's path arguments (args: GEN_ARGS -> value, changed in place) absolute from cwd, for
    a process in another directory (the daemon); returns {absolute: as typed} for as_typed."""
    typed = {}
    for k in gen_path_args(args["step"]):
        if args.get(k):
            full = os.path.normpath(os.path.join(cwd, args[k]))
            typed[full] = args[k]
            args[k] = full
    return typed


def as_typed(msg: str, typed: dict) -> str:
    """msg with the absolute paths of absolute_paths named as the user typed them (their directories
    too: "directory D does not exist" names D as typed)."""
    names = dict(typed)
    for full, as_given in typed.items():
        if os.path.dirname(as_given):
            names.setdefault(os.path.dirname(full), os.path.dirname(as_given))
    for full in sorted(names, key=len, reverse=True):
        msg = msg.replace(full, names[full])
    return msg


def runtime_dir() -> str:
    """The private directory, created if needed and checked to be ours (see module doc)."""
    d = os.environ.get("BUILDTOOL_RUNTIME_DIR")
    if not d:
        base = os.environ.get("XDG_RUNTIME_DIR")
        if not base or not os.path.isdir(base):
            base = "/tmp"
        d = os.path.join(base, f"buildtool-{os.getuid()}")
    try:
        if os.environ.get("BUILDTOOL_RUNTIME_DIR"):
            makedirs_private(os.path.dirname(os.path.abspath(d)))  # every parent it creates 0700 too
        os.mkdir(d, 0o700)
    except FileExistsError:
        pass
    except OSError as e:
        raise DaemonUnavailable(f"cannot create the daemon directory {d}: {e.strerror}; "
                                f"set BUILDTOOL_RUNTIME_DIR") from None
    st = os.lstat(d)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise DaemonUnavailable(f"{d} is not a private directory owned by you (mode 0700); "
                                f"remove it or set BUILDTOOL_RUNTIME_DIR")
    return d


def paths() -> dict:
    d = runtime_dir()
    p = {"dir": d, "socket": os.path.join(d, "daemon.sock"), "lock": os.path.join(d, "daemon.lock"),
         "log": os.path.join(d, "daemon.log")}
    if len(os.fsencode(p["socket"])) > 100:
        raise DaemonUnavailable(f"daemon socket path {p['socket']} is too long for a Unix socket; "
                                f"set BUILDTOOL_RUNTIME_DIR to a shorter directory")
    return p


def encode(obj: dict) -> bytes:
    body = msgpack.packb(obj, use_bin_type=True)
    if len(body) > MAX_MESSAGE:
        raise ProtocolError(f"message of {len(body)} bytes exceeds the {MAX_MESSAGE >> 20} MiB limit")
    return _LEN.pack(len(body)) + body


def send(sock: socket.socket, obj: dict) -> None:
    sock.sendall(encode(obj))


def _recv_exact(sock: socket.socket, n: int, deadline: float | None = None, buf: bytearray | None = None) -> bytearray:
    """n bytes (appended to buf), read as they come: memory grows with what arrived, never with what a
    length claims. deadline (time.monotonic()): socket.timeout past it."""
    buf = bytearray() if buf is None else buf
    end = len(buf) + n
    while len(buf) < end:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("a message arrived too slowly")
            sock.settimeout(min(left, sock.gettimeout() or left))
        chunk = sock.recv(min(end - len(buf), 1 << 20))
        if not chunk:
            raise ConnectionLost("connection closed in the middle of a message")
        buf += chunk
    return buf


def _counted(limit: int):
    """A msgpack hook that counts the containers decoded and refuses past limit."""
    seen = [0]

    def hook(obj):
        seen[0] += 1
        if seen[0] > limit:
            raise ValueError(f"more than {limit} arrays and maps")
        return obj

    return hook


def recv(sock: socket.socket, within: float | None = None, started=None, request: bool = False) -> dict | None:
    """The next message, or None when the peer closed the connection cleanly between messages.
    within: seconds its bytes may take from the first (socket.timeout past it); started(): called
    once its first bytes are here; request: a request to the daemon, held to REQUEST_LIMITS."""
    head = sock.recv(_LEN.size)
    if not head:
        return None
    if started is not None:
        started()
    deadline = None if within is None else time.monotonic() + within
    if len(head) < _LEN.size:
        head = bytes(_recv_exact(sock, _LEN.size - len(head), deadline, bytearray(head)))
    (n,) = _LEN.unpack(head)
    if n > MAX_MESSAGE:
        raise ProtocolError(f"message of {n} bytes exceeds the {MAX_MESSAGE >> 20} MiB limit")
    body = _recv_exact(sock, n, deadline)
    limits = {}
    if request:
        hook = _counted(MAX_REQUEST_CONTAINERS)
        limits = dict(REQUEST_LIMITS, list_hook=hook, object_hook=hook)
    try:
        obj = msgpack.unpackb(body, raw=False, strict_map_key=True, **limits)  # (a bytearray: no copy of the body)
    except ValueError as e:
        if request and ("exceeds max" in str(e) or "arrays and maps" in str(e)):
            raise ProtocolError(f"a request too large in structure ({e})") from None
        raise ProtocolError(f"malformed message ({type(e).__name__})") from None
    except Exception as e:  # msgpack raises several unrelated types on garbage
        raise ProtocolError(f"malformed message ({type(e).__name__})") from None
    del body
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise ProtocolError("malformed message (not a map with a 'type')")
    return obj
