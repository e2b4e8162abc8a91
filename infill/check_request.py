"""The request of a check (``infill check``, :func:`infill.check`, ``POST /api/check``): how
doubtful a written token must be to be flagged, and how the texts are read. Imports no torch.

    CheckRequest(threshold=4.0)      # flag where the best alternative is e^4 = 55x as probable
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from infill.errors import InputError
from infill.fields import Request, option

__all__ = ["CheckRequest", "DEFAULT_THRESHOLD", "MAX_THRESHOLD"]

DEFAULT_THRESHOLD = 3.0
"""The default of ``threshold`` (nats; e^3 = 20x): chosen on the IOSPE validation split with
builtin:greek (``benchmarks/check_iospe.py``: the largest recall - false-flag rate, the
positives being letters replaced at random and the editors' corrections of the stone;
docs/CHECK.md)."""
MAX_THRESHOLD = 50.0
"""The largest threshold accepted: e^50 is beyond any ratio of float32 probabilities."""


@dataclass(frozen=True)
class CheckRequest(Request):
    """Every option of a check: ``threshold`` (nats) -- a written token is flagged when the best
    alternative is at least e^threshold times as probable, log p(best) - log p(written) >=
    threshold; ``marker`` -- the gap marker (a gap is left masked, never checked); ``window`` --
    an input longer than the model is read in the longest context window centred on each
    checked token (False: the length error); ``max_rows`` -- masked rows per forward pass."""

    KIND: ClassVar[str] = "check"

    threshold: float = option(DEFAULT_THRESHOLD, float, "Flag a written token when the most "
                              "probable alternative is at least e^THRESHOLD times as probable "
                              "(log-ratio in nats; default chosen on IOSPE's validation split).",
                              low=0, high=MAX_THRESHOLD)
    marker: str = option("___", str, "The gap marker in TEXT.")
    window: bool = option(True, bool, "Read a text longer than the model in the longest context "
                          "window centred on each checked token (False: the length error).")
    max_rows: int = option(256, int, "Masked rows per forward pass (one row per checked token).",
                           low=1)

    def check(self) -> None:
        if not self.marker:       # '' would read nothing as a gap: its text checked as tokens
            raise InputError("'marker' (the gap marker) must not be empty", field="marker")
