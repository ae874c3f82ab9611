"""The accuracy-guided split search (the method's algorithm), independent of how a network is
trained: `evaluate(spec, parent)` returns (accuracy in percent, handle), where parent is the
handle of the network the candidate is derived from (None for the baseline).

    train the baseline; for each block from the first to the last:
        for k in the candidates, in order:
            split the block by k (fusion block included) and evaluate
            drop < threshold: keep k and go on; else stop (a k that does not divide the block is skipped)
        the block keeps the last k that passed
"""

from __future__ import annotations

import dataclasses

from . import formulas
from . import spec as specs
from .spec import NetSpec


@dataclasses.dataclass
class Step:
    label: str  # "baseline", "block 2", "naive", "shared", "searched"
    spec: NetSpec
    accuracy: float | None  # percent; None: not evaluated (skipped)
    kept: bool = True
    note: str = ""
    handle: object = None  # what evaluate returned (a Keras model)
    ram: dict | None = None  # memory.peaks of its int8 model
    tflite: bytes | None = None  # its int8 model
    block: int | None = None  # the block this step split (from 0)
    k: int | None = None  # by this factor

    @property
    def params(self) -> int:
        return formulas.params(self.spec)

    @property
    def macs(self) -> int:
        return formulas.macs(self.spec)


def search(base: NetSpec, candidates, threshold: float, evaluate, on_step=None) -> tuple:
    """(the searched NetSpec, its handle, [Step]) for these candidate factors and accuracy threshold
    (percentage points); on_step(step) is called after each evaluation."""
    report = on_step or (lambda step: None)
    acc0, h0 = evaluate(base, None)
    steps = [Step("baseline", base, acc0, handle=h0)]
    report(steps[-1])
    current, handle = base, h0
    for i in range(len(base.blocks)):
        for k in candidates:
            if not specs.can_split(current, i, k):
                steps.append(Step(f"block {i + 1}", current, None, False,
                                  f"k={k} does not divide {current.blocks[i].filters}", block=i, k=k))
                continue
            cand = specs.split(current, i, k)
            acc, h = evaluate(cand, handle)
            ok = acc0 - acc < threshold
            steps.append(Step(f"block {i + 1}", cand, acc, ok, f"drop {acc0 - acc:.2f} {'<' if ok else '>='} "
                                                              f"{threshold:g}", handle=h, block=i, k=k))
            report(steps[-1])
            if not ok:
                break
            current, handle = cand, h
    return current, handle, steps
