"""Model inputs and outputs as .npy/.npz files: one loader and one writer for `buildtool run` and `scons run`."""

from __future__ import annotations

import io
import os
import zipfile

import numpy as np

from ..errors import UsageError
from .reader import short


def load_inputs(g, paths: list, sequence: bool = False,
                how: str = "pass --input once per input in order") -> list:
    """One array per model input, in the model's order: one .npy per input (--input given once per
    input), or one .npz holding them all, keyed by input name or arr_0, arr_1, ... (np.savez).
    sequence: each array stacks N >= 1 invocations on a new first axis (the same N for every input).
    how: what the count-mismatch message tells a user to do (the CLI's flags or SCons' input=)."""

    specs = [g.tensors[i] for i in g.inputs]
    names = ", ".join(short(t.name, 32) for t in specs)
    npz = [p for p in paths if p.endswith(".npz")]
    if npz and len(paths) > 1:
        raise UsageError(f"give one .npz holding every input, or one .npy per input; not both ({', '.join(paths)})")
    arrays = []
    for path in paths:
        if os.path.exists(path) and not os.path.isfile(path):  # a FIFO or device would hang np.load
            raise UsageError(f"input {path} is not a regular file; give a .npy or .npz file")
        try:
            data = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            raise UsageError(f"input file not found: {path}") from None
        except (ValueError, OSError) as e:
            raise UsageError(f"cannot read input {path} as a .npy or .npz array: {e}") from None
        if isinstance(data, np.lib.npyio.NpzFile):
            with data:
                keys = list(data.keys())
                order = ([t.name for t in specs] if all(t.name in keys for t in specs)
                         else [f"arr_{k}" for k in range(len(keys))])
                if sorted(order) != sorted(keys):
                    raise UsageError(f"{path} holds {', '.join(keys) or 'no arrays'}; name its arrays after the "
                                     f"model's inputs ({names}) or arr_0, arr_1, ... in order")
                arrays += [(f"{path}[{k}]", data[k]) for k in order]
        else:
            arrays.append((path, data))
    if len(arrays) != len(specs):
        raise UsageError(f"the model has {len(specs)} input{'s' if len(specs) > 1 else ''}, {len(arrays)} given; "
                         f"{how} ({names}), or one .npz")
    n = arrays[0][1].shape[0] if sequence and arrays[0][1].ndim else 0
    for (src, x), t in zip(arrays, specs):
        want = (n,) + tuple(t.shape) if sequence else tuple(t.shape)
        if tuple(x.shape) != want or x.dtype != np.dtype(t.dtype) or (sequence and not n):
            wanted = f"[N, {', '.join(map(str, t.shape))}] with N >= 1" if sequence else str(list(t.shape))
            raise UsageError(f"input {src} is {x.dtype}{list(x.shape)}, the model wants {t.dtype}{wanted}"
                             + (f" for its input {short(t.name, 32)}" if len(specs) > 1 else ""))
    return [x for _, x in arrays]


def output_file_bytes(path: str, arrays: list, keys: list | None = None) -> bytes:
    """The bytes of an output file: one array as .npy, or every array as .npz keyed by `keys` (default
    arr_0, arr_1, ...; np.load(...).files lists them in order), byte-identical for the same arrays
    (np.savez would stamp the current time)."""

    buf = io.BytesIO()
    if not path.endswith(".npz"):
        np.save(buf, arrays[0])
        return buf.getvalue()
    keys = keys or [f"arr_{k}" for k in range(len(arrays))]
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for k, y in zip(keys, arrays):
            with z.open(zipfile.ZipInfo(f"{k}.npy", date_time=(1980, 1, 1, 0, 0, 0)), "w", force_zip64=True) as f:
                np.lib.format.write_array(f, np.ascontiguousarray(y), allow_pickle=False)
    return buf.getvalue()
