"""The fill pipeline: a fill request (:mod:`~infill.filling.request`), resolved once against the
model's recommendations (:mod:`~infill.filling.defaults`), planned into decoder jobs -- length
variants, context windows, letter sets -- decoded by a registered decoder
(:mod:`~infill.filling.decoders`) and ranked (:mod:`~infill.filling.length_ranking`,
:mod:`~infill.filling.reranking`) into completions (:mod:`~infill.filling.results`).
:mod:`infill.api` is its public face.
"""
