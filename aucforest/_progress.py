"""A minimal, thread-safe progress bar on stderr (no dependency)."""
import sys
import threading
import time
from contextlib import contextmanager


class _Bar:
    def __init__(self, total, description, stream):
        self.total, self.description, self.stream = total, description, stream
        self.done = 0
        self.started = time.perf_counter()
        self._last_draw = -float("inf")
        self._lock = threading.Lock()

    def update(self, n=1):
        with self._lock:
            self.done += n
            now = time.perf_counter()
            # redraw at most ten times a second (and at the end): logs stay short
            if self.done >= self.total or now - self._last_draw >= 0.1:
                self._last_draw = now
                self._draw()

    def step(self, item):
        """Count one step and pass `item` through (for generators of results)."""
        self.update()
        return item

    def _draw(self):
        width = 30
        filled = int(width * self.done / max(self.total, 1))
        elapsed = time.perf_counter() - self.started
        self.stream.write(f"\r{self.description} [{'#' * filled}{'.' * (width - filled)}] "
                          f"{self.done}/{self.total} {elapsed:.1f}s")
        if self.done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


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
