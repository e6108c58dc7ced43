"""A minimal, thread-safe progress bar on stderr (no dependency).

On a terminal the bar redraws in place (carriage returns, at most ten times a
second). Anywhere else (a log file, a pipe, CI) it writes one plain line at
each quarter of the work, so logs stay readable.
"""
import sys
import threading
import time
from contextlib import contextmanager

MILESTONES = 4  # lines written when the stream is not a terminal


class _Bar:
    def __init__(self, total, description, stream):
        self.total, self.description, self.stream = total, description, stream
        self.done = 0
        self.started = time.perf_counter()
        self.terminal = _is_terminal(stream)
        self._last_draw = -float("inf")
        self._milestone = 1  # next quarter to report when not on a terminal
        self._lock = threading.Lock()

    def update(self, n=1):
        with self._lock:
            self.done += n
            if self.terminal:
                self._redraw()
            else:
                self._log_milestones()

    def step(self, item):
        """Count one step and pass `item` through (for generators of results)."""
        self.update()
        return item

    def _redraw(self):
        now = time.perf_counter()
        if self.done >= self.total or now - self._last_draw >= 0.1:
            self._last_draw = now
            self.stream.write("\r" + self._text())
            if self.done >= self.total:
                self.stream.write("\n")
            self.stream.flush()

    def _log_milestones(self):
        reached = False
        while (self._milestone <= MILESTONES
               and self.done * MILESTONES >= self._milestone * self.total):
            self._milestone += 1
            reached = True
        if reached:
            self.stream.write(self._text() + "\n")
            self.stream.flush()

    def _text(self):
        width = 30
        filled = int(width * min(self.done, self.total) / max(self.total, 1))
        elapsed = time.perf_counter() - self.started
        return (f"{self.description} [{'#' * filled}{'.' * (width - filled)}] "
                f"{self.done}/{self.total} {elapsed:.1f}s")


def _is_terminal(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class _NoBar:
    def update(self, n=1):
        pass

    def step(self, item):
        return item


@contextmanager
def progress(total, enabled=True, description="", stream=None):
    """Context manager yielding a bar with `update()` and `step(item)`;
    a no-op bar when not enabled."""
    yield _Bar(total, description, stream or sys.stderr) if enabled else _NoBar()
