"""The word stream's vocabulary for the Greek model (Ithaca's word input): the most frequent
words of its training text (literary windows and training inscriptions, read by
:mod:`infill.data.inscriptions`)."""
from __future__ import annotations

import re
from collections import Counter

from infill.lazy import LazyModule

char_model = LazyModule("infill.models.char")       # WORD_MAX; torch, so on first use

__all__ = ["word_list"]


def word_list(texts: list[str], n: int) -> list[str]:
    """The ``n`` most frequent words (``\\w+`` runs of at most WORD_MAX characters) of
    ``texts``; ties broken alphabetically."""
    most = char_model.WORD_MAX
    counts = Counter(w for t in texts for w in re.findall(r"\w+", t) if len(w) <= most)
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]
