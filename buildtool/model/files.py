"""Reading a model file, bounded: the one way the CLI, the daemon and the build rules read one.
Light on purpose (os and stat): a zoo model, or a step that only locates its input, never loads the
tflite package the reader parses with."""

from __future__ import annotations

import os
import stat

from ..errors import ModelError, UsageError

MAX_FILE = (1 << 31) - 1  # a flatbuffer cannot address more
DEFAULT_MAX_MODEL_BYTES = 256 << 20
MAX_MODEL_BYTES_ENV = "BUILDTOOL_MAX_MODEL_BYTES"


def max_model_bytes() -> int:
    """The largest model file read: 256 MiB, or BUILDTOOL_MAX_MODEL_BYTES (at most 2 GiB - 1)."""
    v = os.environ.get(MAX_MODEL_BYTES_ENV, "").strip()
    if not v:
        return DEFAULT_MAX_MODEL_BYTES
    try:
        n = int(v)
    except ValueError:
        n = -1
    if n < 1:
        raise UsageError(f"{MAX_MODEL_BYTES_ENV}={v[:40]!r} is not a positive number of bytes")
    return min(n, MAX_FILE)


def read_model_file(path: str, shown: str | None = None) -> bytes:
    """The bytes of a model file; the one way the CLI, the daemon and the build rules read a model.

    Refuses, in one line, what is not a regular file (a FIFO, a device, a directory) and files over
    max_model_bytes(); opens with O_NONBLOCK so a FIFO cannot hang, and never reads past the limit.
    Messages name the file as `shown` (the path as the user typed it; the daemon gets absolute paths).
    """
    shown = shown or path
    limit = max_model_bytes()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ModelError(f"{shown}: model file not found; check the path") from None
    except IsADirectoryError:
        raise ModelError(f"{shown}: is a directory, not a .tflite model file") from None
    except OSError as e:
        raise ModelError(f"{shown}: cannot read the model file ({e.strerror})") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise ModelError(f"{shown}: is a directory, not a .tflite model file")
        if not stat.S_ISREG(st.st_mode):
            kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode)
                    or stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "a special file")
            raise ModelError(f"{shown}: is {kind}, not a regular file; save the model to a .tflite file first")
        too_big = (f"{shown}: file is larger than the {limit} byte model size limit; "
                   f"set {MAX_MODEL_BYTES_ENV} to raise it")
        if st.st_size > limit:
            raise ModelError(too_big)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # the file grew while we read it
                raise ModelError(too_big)
        return b"".join(chunks)
    except OSError as e:
        raise ModelError(f"{shown}: cannot read the model file ({e.strerror})") from None
    finally:
        os.close(fd)
