"""What an example selector chose (:class:`Selection`) and what a selector is
(:class:`ExampleSelector`): the type the selectors (:mod:`infill.bench.selectors`, :mod:`infill.bench.epidoc`, one's own)
return and the runner (:mod:`infill.bench.runner`) decodes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

from infill.bench.gaps import Example
from infill.models.base import MaskedLM

__all__ = ["Selection", "ExampleSelector"]


@dataclass
class Selection:
    """What a selector chose. ``examples``: per gap length of the request (``request.gap_lengths``),
    the examples (each with its span); ``skipped``: per gap length, inputs without a usable
    span; ``n_texts``: inputs drawn; ``corpus_size`` / ``pool_size``: inputs in the corpus / in
    the part the draw was made from; ``report``: extra tables, ``report(out, rows) -> dict``;
    ``identity``: what fixes the selection beyond the request (stored, checked on resume)."""

    examples: dict[int, list[Example]]
    skipped: dict[int, int]
    n_texts: int
    corpus_size: int
    pool_size: int = 0
    report: Callable | None = None
    identity: dict | None = None


class ExampleSelector(Protocol):
    def __call__(self, model: MaskedLM, request) -> Selection: ...
