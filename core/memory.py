"""Pausing Python's cycle collector while a read builds many small objects that hold no cycles.

A scorecard builds tens of thousands of sums (`reviews.figures.stats`: dataclasses of dataclasses), and each
few hundred new objects trigger a collection; every so often one of them walks every object of the process,
Django's included. That cost 0.15–0.2 CPU-seconds of a scorecard page of about 0.7 at a million scores
(bench/scorecards/README.md). Reference counting frees these objects as before; the collector runs again as
soon as the pause ends, and only cycles made during the pause wait for it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cycle collection inside; nested pauses and a collector already off are left as they are."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
