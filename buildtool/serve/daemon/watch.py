"""Watch model files the daemon has planned; re-plan a changed one so the next build finds it ready.

Editors and build tools replace files in several ways (write in place, write a
temp file and rename it over); all of them end in an event naming the model's
path. Events are debounced per path, then on_change(path, [options, ...]) runs
on one worker thread, so a burst of saves costs one re-plan and re-plans never
compete with each other for the CPU. At most MAX_WATCHED paths are watched, each with
its MAX_OPTIONS most recent option sets: past that, the least recently planned path
(and its folder's watch, once no path in it is left) is dropped, so a daemon that plans
many models (a fuzzer, a CI machine) keeps a bounded list.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import OrderedDict

from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer

log = logging.getLogger("buildtool.serve.daemon")
MAX_WATCHED = 256
MAX_OPTIONS = 8


class ModelWatcher:
    def __init__(self, on_change, debounce_s: float = 0.3):
        self._on_change = on_change
        self._debounce = debounce_s
        self._lock = threading.Lock()
        self._options: OrderedDict = OrderedDict()  # path -> {options json: None}, least recently planned first
        self._dirs: dict = {}  # folder -> its watch (ObservedWatch, None while being scheduled)
        self._timers: dict = {}
        self._queue: list = []
        self._wake = threading.Condition(self._lock)
        self._stopped = False
        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event):
                if event.event_type in ("opened", "closed_no_write", "deleted"):
                    return
                for p in (getattr(event, "dest_path", ""), event.src_path):
                    if p:
                        watcher._touched(os.fsdecode(p))

        self._handler = Handler()
        self._observer = Observer()
        self._observer.daemon = True
        self._observer.start()
        self._worker = threading.Thread(target=self._work, name="replan", daemon=True)
        self._worker.start()

    def watch(self, path: str, options: dict) -> None:
        path = os.path.abspath(path)
        d = os.path.dirname(path)
        dropped = []
        with self._lock:
            opts = self._options.pop(path, None) or OrderedDict()
            key = json.dumps(options, sort_keys=True)
            opts.pop(key, None)
            opts[key] = None
            while len(opts) > MAX_OPTIONS:
                opts.popitem(last=False)
            self._options[path] = opts
            while len(self._options) > MAX_WATCHED:
                old, _ = self._options.popitem(last=False)
                self._queue[:] = [q for q in self._queue if q != old]
                od = os.path.dirname(old)
                if not any(os.path.dirname(p) == od for p in self._options):
                    dropped.append(self._dirs.pop(od, None))
            new_dir = d not in self._dirs
            if new_dir:
                self._dirs[d] = None
        for w in dropped:
            if w is not None:
                try:
                    self._observer.unschedule(w)
                except (KeyError, OSError):
                    pass
        if new_dir:
            try:
                w = self._observer.schedule(self._handler, d, recursive=False)
            except OSError as e:  # too many watches, vanished directory: only the speed-up is lost
                log.warning("cannot watch %s: %s", d, e)
                return
            with self._lock:
                if d in self._dirs:
                    self._dirs[d] = w
                    return
            self._observer.unschedule(w)  # dropped again meanwhile

    @property
    def folders(self) -> int:
        with self._lock:
            return len(self._dirs)

    @property
    def watched(self) -> int:
        with self._lock:
            return len(self._options)

    def _touched(self, path: str) -> None:
        with self._lock:
            if path not in self._options or self._stopped:
                return
            old = self._timers.pop(path, None)
            if old:
                old.cancel()
            t = threading.Timer(self._debounce, self._due, args=(path,))
            t.daemon = True
            self._timers[path] = t
        t.start()

    def _due(self, path: str) -> None:
        with self._lock:
            self._timers.pop(path, None)
            if path not in self._queue:
                self._queue.append(path)
            self._wake.notify()

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._stopped:
                    self._wake.wait()
                if self._stopped:
                    return
                path = self._queue.pop(0)
                opts = [json.loads(o) for o in sorted(self._options.get(path, ()))]
            try:
                self._on_change(path, opts)
            except Exception as e:  # a model saved half-way or broken: the next build reports it
                log.info("re-plan of %s failed: %s", path, e)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            for t in self._timers.values():
                t.cancel()
            self._wake.notify_all()
        self._observer.stop()
