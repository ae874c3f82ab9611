"""What a model argument names, read and checked: the one resolver of a path or a zoo name.

    src = locate("mbv2-w0.35")      # read, not parsed (the daemon's warm path stops here)
    model = read_model("m.tflite")  # Model(name, shown, graph)
    check(model)                    # every operator supported, every shape sound
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re

from .. import zoo
from ..errors import UsageError
from ..model.fold_pad import fold_pads
from ..model.ir import Graph
from ..model.ops import check_graph
from ..model.files import read_model_file


def is_model_file(spec: str, cwd: str = "") -> bool:
    """A model argument names a .tflite file (else it must be a zoo name); cwd: the directory a relative
    path is taken from (the daemon, for a client's command line), else this process's."""
    return os.path.exists(os.path.join(cwd, spec)) or spec.endswith(".tflite") or os.sep in spec


def model_name(spec: str) -> str:
    """How outputs name a model: a file's name without its extension, a zoo name whole (mbv2-w0.35)."""
    return os.path.splitext(os.path.basename(spec))[0] if is_model_file(spec) else spec


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")


def build_dir_name(name: str) -> str:
    """The build folder named after a model: a name of letters, digits and . _ - (e.g. mbv2-w0.35,
    tiny_cnn_32) is kept as it is; any other is mapped onto those characters plus a short hash
    of the original, so it reaches a shell or a build tool only as a plain word and two
    different names never share a folder."""
    if _PLAIN_NAME.fullmatch(name):
        return name
    plain = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._-")[:64] or "model"
    return f"{plain}-{hashlib.sha256(name.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}"


@dataclasses.dataclass(frozen=True)
class Source:
    """What a model argument names, read but not parsed (the daemon's warm path stops here)."""

    name: str  # a zoo name whole (mbv2-w0.35); a file's name without .tflite
    shown: str  # how messages name it: the path as the user typed it, or the zoo name
    data: bytes | None = None  # the file's bytes (None for a zoo name)
    zoo: str | None = None

    def digest_key(self) -> tuple:
        """(cache kind, key parts) that identify the model without parsing it."""
        if self.zoo is not None:
            return "zoo", self.zoo
        return "model", hashlib.sha256(self.data).hexdigest()


def locate(spec: str, shown: str | None = None) -> Source:
    """Resolve a path or zoo name: a file is read (bounded, regular files only); a name must be a zoo model."""
    if is_model_file(spec):
        shown = shown or spec
        return Source(model_name(shown), shown, read_model_file(spec, shown))
    if spec not in zoo.names(large=True):
        raise UsageError(f"'{spec}' is neither a model file nor a zoo name (zoo: {', '.join(zoo.names(True))})")
    return Source(spec, spec, zoo=spec)


@dataclasses.dataclass(frozen=True)
class Model:
    name: str
    shown: str
    graph: Graph


def parse(src: Source) -> Graph:
    """The Graph of a located model (a file or a zoo name), every foldable PAD folded into its convolutions
    (model/fold_pad.py)."""
    if src.zoo is not None:
        return fold_pads(zoo.build(src.zoo))
    from ..model.reader import parse as parse_tflite  # (a file only: the tflite package costs a zoo model 70 ms)

    return fold_pads(parse_tflite(src.data, name=src.name, source=src.shown))


def read_model(spec, shown: str | None = None) -> Model:
    """A .tflite path, a zoo name or a ready Graph -> Model (named as the user named it)."""
    if isinstance(spec, Model):
        return spec
    if isinstance(spec, Graph):  # taken as given (a caller's plan may be of this very graph): no folding
        return Model(spec.name, spec.name, spec)
    src = locate(str(spec), shown)
    return Model(src.name, src.shown, parse(src))


def check(model: Model) -> None:
    """Every operator supported and sound (one ModelError naming the first problem)."""
    check_graph(model.graph)
