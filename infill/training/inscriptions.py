"""The word stream's vocabulary for the Greek model (Ithaca's word input): the most frequent
words of its training text (literary windows and training inscriptions, read by
:mod:`infill.data.inscriptions`)."""
from __future__ import annotations

import re

__all__ = ["word_list"]


def word_list(texts: list[str], n: int) -> list[str]:
    """The ``n`` most frequent words (``\\w+`` runs of at most WORD_MAX characters) of
    ``texts``; ties broken alphabetically."""
    from collections import Counter
    from infill.models.char import WORD_MAX

    counts = Counter(w for t in texts for w in re.findall(r"\w+", t) if len(w) <= WORD_MAX)
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]
