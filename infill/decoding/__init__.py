"""Decoding a gap with a masked LM (METHODS §1).

- :mod:`infill.decoding.engine`    the beam-search loop over a [inputs x beam] grid
- :mod:`infill.decoding.orders`    which positions a hypothesis fills next (one entry per order)
- :mod:`infill.decoding.scorers`   one update rule per class (standard, HCB, ablations)
- :mod:`infill.decoding.selectors` which candidates survive a step (top-B, Gumbel sampling)
- :mod:`infill.decoding.proposals` tempered / nucleus distributions and seeded draws (shared with MCMC)
- :mod:`infill.decoding.windows`   context windows for inputs longer than the model's maximum
- :mod:`infill.decoding.lengths`   gaps of uncertain length and whole-word gaps, ranked together
- :mod:`infill.decoding.aeneas`    Aeneas's own search: ``?`` gaps and ``#`` lacunae of unknown length

Kept free of imports (the registries are read without torch). No module here imports
:mod:`infill.config`: the engine takes its parts (:class:`~infill.decoding.engine.Search`), which
``DecodeConfig.search()`` makes from the options.
"""
