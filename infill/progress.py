"""Progress of long jobs: one tqdm bar on stderr, shown when stderr is a terminal, never on a
pipe unless asked (``--progress``; ``--no-progress`` turns it off anywhere). Every job that can
run for more than a few seconds takes its bar from here, so front ends build none.

    with progress(total=len(records), desc="run", unit="input", enabled=None) as bar:
        for chunk in chunks:
            ...
            bar.update(len(chunk))

A library loop reports its steps through a ``progress(done, total)`` callable (None: nothing)
and prints nothing; :func:`follow` turns a bar into such a callable.
"""
from __future__ import annotations

import sys
from contextvars import ContextVar

from infill.lazy import LazyModule

tqdm = LazyModule("tqdm")                  # the bar, when one is made: not for --help

__all__ = ["choose", "follow", "interactive", "progress", "show"]

_CHOSEN: ContextVar[bool | None] = ContextVar("infill_progress", default=None)
"""What the front end asked for (``--progress/--no-progress``); None: not asked."""


def choose(enabled: bool | None) -> None:
    """Record the front end's choice (True/False; None: follow the terminal) for the bars a
    library call opens with ``enabled=None`` (e.g. ranking gap lengths inside a fill)."""
    _CHOSEN.set(None if enabled is None else bool(enabled))


def interactive() -> bool:
    """Whether stderr is a terminal a person reads (status lines and bars go there)."""
    stream = sys.stderr
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):      # replaced or closed stream
        return False


def show(enabled: bool | None) -> bool:
    """``enabled`` as asked (True/False), or None: the front end's choice (:func:`choose`),
    else on when stderr is a terminal."""
    if enabled is None:
        enabled = _CHOSEN.get()
    return interactive() if enabled is None else bool(enabled)


def progress(iterable=None, total: int | None = None, desc: str = "", unit: str = "it",
             enabled: bool | None = None, initial: int = 0, leave: bool = True):
    """A tqdm bar (count, rate and ETA) on stderr, over ``iterable`` or updated by hand;
    ``enabled`` as in :func:`show`. Use it as a context manager or close it; when hidden it is
    still a bar whose ``update(n)`` does nothing, so jobs need no branch. ``leave=False``: the
    bar is wiped when done (a step inside a job)."""
    return tqdm.tqdm(iterable, total=total, desc=desc, unit=unit, initial=initial,
                     disable=not show(enabled), file=sys.stderr, leave=leave,
                     dynamic_ncols=True, mininterval=0.5)


def follow(bar):
    """A ``progress(done, total)`` callable that moves ``bar`` to ``done`` of ``total``; a count
    that starts again (``done`` at or below the bar's) restarts the bar, e.g. the sweeps of the
    next input's chains."""
    def moved(done: int, total: int) -> None:
        if done <= bar.n or bar.total != total:
            bar.reset(total=total)
        bar.update(done - bar.n)
    return moved
