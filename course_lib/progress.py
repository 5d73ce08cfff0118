"""Progress bars for the course's long loops (seeded trials, trade-off sweeps).

One place that builds them, because the browser copy of the course (Pyodide) has no threads:
tqdm starts a monitor thread for every bar and, when that fails, warns ``TqdmMonitorWarning:
tqdm:disabling monitor support (monitor_interval = 0) due to: can't start new thread`` under the
learner's cell. There the monitor is switched off before the first bar.
"""

from __future__ import annotations

import sys


def progress(items, desc: str):
    """``tqdm(items)`` with a description, removed when done (a notebook widget in Jupyter)."""
    from tqdm.auto import tqdm
    from tqdm.std import tqdm as std_tqdm

    if sys.platform == "emscripten":
        std_tqdm.monitor_interval = 0  # every tqdm class reads it from here
    return tqdm(items, desc=desc, leave=False)
