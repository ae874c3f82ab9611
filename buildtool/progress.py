"""One line of progress on a terminal while work takes seconds (planning a big model, building and
running firmware): `buildtool: planning mobilenetv2 (4 s): packing 3/10`, redrawn in place on stderr
and erased when the work ends, so the output that follows is exactly what it is without a terminal.
Work that knows how far it is (stage(text, done=, total=)) also gets an estimate of the time left:
`buildtool: planning m (3 s, about 9 s left): fusion blocks ending at operator 120/571`.

Nothing is shown unless stderr is a terminal (builds, pipes, CI and tests see no change), under
TERM=dumb or BUILDTOOL_QUIET=1, or before `delay` seconds have passed. Code that runs long calls
stage("what now") wherever it is (the planner stays a pure function: with no display, stage is a
no-op costing one global read)."""

from __future__ import annotations

import os
import sys
import threading
import time

_active = None  # the display shown now (at most one per process)


def stage(text: str, done: float | None = None, total: float | None = None) -> None:
    """Name what the work is doing now (shown at the next redraw); done of total: how far one measured
    piece of work is (its units: any that grow with the time it takes), for the estimate of the time left.
    A piece starts when done is first given, or goes back."""
    p = _active
    if p is not None:
        if done is None or not total:
            p.stage, p.part = text, None
        else:
            if p.part is None or done < p.part[1]:
                p.part = (time.monotonic(), done)  # when this piece started, and its first count
            p.stage, p.fraction = text, (done, total)


def counting() -> bool:
    """Whether a progress line is drawn in this process: work that counts itself only for the estimate of
    the time left (stage's done/total) need not count otherwise."""
    return _active is not None


def wanted(stream) -> bool:
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and os.environ.get("TERM") != "dumb" and os.environ.get("BUILDTOOL_QUIET", "") in ("", "0")


class Progress:
    def __init__(self, label: str, stream=None, delay: float = 1.0, interval: float = 0.25):
        self.label, self.stream, self.delay, self.interval = label, stream or sys.stderr, delay, interval
        self.stage, self.shown, self._thread = "", False, None
        self.part, self.fraction = None, None  # (start time, first count) of the measured piece; (done, total)

    def __enter__(self) -> "Progress":
        global _active
        if _active is None and wanted(self.stream):
            self._t0, self._stop = time.monotonic(), threading.Event()
            self._thread = threading.Thread(target=self._draw, name="progress", daemon=True)
            _active = self
            self._thread.start()
        return self

    def _draw(self) -> None:
        if self._stop.wait(self.delay):
            return
        width = _columns(self.stream) - 1
        while True:
            # the times first: a narrow terminal cuts the stage's tail, not them
            line = (f"buildtool: {self.label} ({time.monotonic() - self._t0:.0f} s{self._left()})"
                    + (f": {self.stage}" if self.stage else ""))
            if not self._write("\r" + line[:width] + "\x1b[K"):
                return
            self.shown = True
            if self._stop.wait(self.interval):
                return

    def _left(self) -> str:
        """', about N s left' from the measured piece's rate so far (nothing before it is 2 % done and 1 s old)."""
        part, frac = self.part, self.fraction
        if part is None or frac is None:
            return ""
        (t0, first), (done, total) = part, frac
        spent, did = time.monotonic() - t0, done - first
        if spent < 1 or did <= 0 or did < 0.02 * (total - first):
            return ""
        return f", about {max(0, (total - done) * spent / did):.0f} s left"

    def _write(self, text: str) -> bool:
        try:
            self.stream.write(text)
            self.stream.flush()
            return True
        except (OSError, ValueError):
            return False

    def __exit__(self, *exc) -> None:
        global _active
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        _active = None
        if self.shown:
            self._write("\r\x1b[K")


def _columns(stream) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80  # (0: a terminal that never said)
    except (AttributeError, OSError, ValueError):
        return 80


__all__ = ["Progress", "stage", "wanted"]
