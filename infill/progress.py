"""Progress of long jobs: one tqdm bar on stderr, shown when stderr is a terminal, never on a
pipe unless asked (``--progress``; ``--no-progress`` turns it off anywhere). Every job that can
run for more than a few seconds takes its bar from here, so front ends build none.

    with progress(total=len(records), desc="run", unit="input", enabled=None) as bar:
        for chunk in chunks:
            ...
            bar.update(len(chunk))
"""
from __future__ import annotations

import sys

__all__ = ["interactive", "progress", "show"]


def interactive() -> bool:
    """Whether stderr is a terminal a person reads (status lines and bars go there)."""
    stream = sys.stderr
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):      # replaced or closed stream
        return False


def show(enabled: bool | None) -> bool:
    """``enabled`` as asked (True/False), or None: on when stderr is a terminal."""
    return interactive() if enabled is None else bool(enabled)


def progress(iterable=None, total: int | None = None, desc: str = "", unit: str = "it",
             enabled: bool | None = None, initial: int = 0):
    """A tqdm bar (count, rate and ETA) on stderr, over ``iterable`` or updated by hand;
    ``enabled`` as in :func:`show`. Use it as a context manager or close it; when hidden it is
    still a bar whose ``update(n)`` does nothing, so jobs need no branch."""
    from tqdm import tqdm
    return tqdm(iterable, total=total, desc=desc, unit=unit, initial=initial,
                disable=not show(enabled), file=sys.stderr, dynamic_ncols=True, mininterval=0.5)
