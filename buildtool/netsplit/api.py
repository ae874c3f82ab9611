"""`buildtool netsplit` as a Python call: search, baselines, int8 model, peak RAM, table.

    r = run("vgg-small", "digits", candidates=(2, 4), threshold=0.5, epochs=2)
    r.model, r.tflite, r.steps, r.table

Imports TensorFlow (through transform/train/convert); buildtool.netsplit checks it is there first.
"""

from __future__ import annotations

import dataclasses
import os
import sys

from ..errors import UsageError
from . import convert, memory, report, search, train, transform
from . import data as datasets
from . import spec as specs


@dataclasses.dataclass
class Result:
    spec: specs.NetSpec  # the searched network
    model: object  # its Keras model, fine-tuned
    tflite: bytes  # its int8 .tflite
    steps: list  # search.Step: the baseline, every search step, then the baselines asked for
    table: str


def _base_model(model, data):
    """(NetSpec, Keras model or None) of a .keras file, a Keras model or an architecture name."""
    import keras  # (TensorFlow's Keras: the optional netsplit extra)

    if isinstance(model, keras.Model):
        return transform.spec_of(model), transform.with_spec(model, transform.spec_of(model))
    name = str(model)
    if name.endswith(".keras") or os.path.exists(name):
        try:
            m = keras.saving.load_model(name)
        except (OSError, ValueError) as e:
            raise UsageError(f"{name}: not a Keras model ({str(e).splitlines()[0] if str(e) else e})") from None
        return transform.spec_of(m), transform.with_spec(m, transform.spec_of(m))
    return specs.architecture(name, data.input_shape, data.classes), None


class _Evaluator:
    """evaluate(spec, parent) for the search: build, inherit the parent's weights, fine-tune."""

    def __init__(self, data, epochs: int, baseline_epochs: int, seed: int, given, progress):
        self.data, self.epochs, self.base_epochs, self.seed = data, epochs, baseline_epochs, seed
        self.given, self.progress = given, progress

    def __call__(self, spec, parent, label: str | None = None):
        model = self.given if parent is None and self.given is not None else transform.build(spec, self.seed)
        if parent is not None:
            transform.inherit(model, parent)
        epochs = self.base_epochs if parent is None else self.epochs
        label = label or ("baseline" if parent is None else f"factors {','.join(map(str, spec.factors))}")
        train.fit(model, self.data, epochs, label, self.seed, self.progress)
        return train.accuracy(model, self.data), model


def _measure(step, data, done: dict) -> None:
    """step's int8 model and its arenas (once per trained network: the searched one is also a step)."""
    if id(step.handle) not in done:
        tflite = convert.to_int8_tflite(step.handle, data.calibration)
        done[id(step.handle)] = tflite, memory.peaks_isolated(tflite)
    step.tflite, step.ram = done[id(step.handle)]


def run(model, dataset, candidates=(2, 4, 6, 8), threshold: float = 0.5, epochs: int = 2,
        baseline_epochs: int | None = None, naive: int | None = None, shared: int | None = None,
        shared_blocks: int = 1, measure: str = "all", seed: int = 0, progress=sys.stderr) -> Result:
    """The split search on model (a .keras path, a Keras model or an architecture name) with dataset
    (a data.load spec or a data.Data); naive / shared: also train those baselines with this k
    (shared keeps the first shared_blocks blocks whole). measure: "all" steps' peak RAM or "final"."""
    if measure not in ("all", "final"):
        raise UsageError(f"measure must be 'all' or 'final', not {measure!r}")
    if not candidates or any(not isinstance(k, int) or k < 2 for k in candidates):
        raise UsageError(f"candidate split factors must be integers >= 2, not {list(candidates)}")
    data = datasets.load(dataset) if isinstance(dataset, str) else dataset
    base, given = _base_model(model, data)
    if baseline_epochs is None:
        baseline_epochs = 0 if given is not None else max(1, 2 * epochs)
    ev = _Evaluator(data, epochs, baseline_epochs, seed, given, progress)
    say = (lambda s: print(f"netsplit: {s.label} k={s.k}: accuracy {s.accuracy:.2f} %"
                           f" ({'kept' if s.kept else 'stop'})", file=progress, flush=True)) if progress else None
    final, handle, steps = search.search(base, tuple(candidates), threshold, ev, say)
    steps.append(search.Step("searched", final, steps[0].accuracy if final == base else train.accuracy(handle, data),
                             handle=handle))
    for label, k, make in (("naive", naive, lambda k: specs.naive(base, k)),
                           ("shared", shared, lambda k: specs.shared(base, shared_blocks, k))):
        if k:
            s = make(k)
            acc, h = ev(s, steps[0].handle, label)
            steps.append(search.Step(label, s, acc, handle=h, k=k))
    done = {}
    for s in sorted(steps, key=lambda s: s.label != "searched"):
        if s.handle is not None and (measure == "all" or s.label == "searched"):
            _measure(s, data, done)
    searched = next(s for s in steps if s.label == "searched")
    return Result(final, handle, searched.tflite, steps, report.table(steps))
