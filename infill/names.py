"""The names a front end offers as choices, each spelled once here and importing nothing.

The modules that implement a choice read its names from here (``infill.decoding.lengths`` its
``LENGTH_SCORES``, ``infill.data.regions`` its ``REGIONS``, ...), so that the command line's
options and help, which need only the names, import none of the machinery behind them. The
registries keyed by a class's own ``name`` (scorers, orders, decoders) are held equal to these
tuples by ``tests/test_config.py``. In each tuple the first name is the default.
"""
from __future__ import annotations

__all__ = ["SCORERS", "ORDERS", "ORDER_CODES", "DECODERS", "SAMPLERS", "DEDUP_KEEPS", "PIVOT_CONTEXTS",
           "LENGTH_SCORES", "LENGTH_BEAMS", "RERANKS", "LACUNA_EDGES", "UNCLEAR", "REGIONS", "DTYPES", "DTYPE_SPELLINGS", "FAMILIES"]

SCORERS = ("hcb", "standard", "scramble", "swap")
"""Update rules of beam search (METHODS §1.1; :data:`infill.decoding.scorers.SCORER_CLASSES`)."""
ORDERS = ("left-to-right", "best-to-worst", "any-order")
"""Which gap position(s) a hypothesis fills next (METHODS §1 "Order";
:mod:`infill.decoding.orders`)."""
ORDER_CODES = {"left-to-right": "l2r", "best-to-worst": "b2w", "any-order": "any"}
"""Each order's short code in method names (``hcb-l2r``); each order class's ``code``."""
DECODERS = ("beam", "ag")
"""beam: the beam-search engine (any scorer, or a sampling baseline); ag: Arnold-Gokhale pairwise
joint, for gaps of exactly two tokens (METHODS §2); :mod:`infill.filling.decoders`."""
SAMPLERS = ("pure", "temperature", "nucleus")
"""The matched-budget sampling baselines (:mod:`infill.decoding.proposals`)."""
DEDUP_KEEPS = ("higher", "lower")
"""Which score a fill reached by several paths keeps (``dedup_keep``): the higher (METHODS §1), or
the lower (what Ithaca's published code does; for parity)."""
PIVOT_CONTEXTS = ("inject", "mask")
"""How HCB's pivots are context: as the pivot tokens (METHODS §1), or as [MASK] (the paper's code)."""
LENGTH_SCORES = ("pll", "pll-gap", "pll-word", "per-char", "per-char-0.7")
"""How completions of different lengths are ranked together (``length_score``;
:mod:`infill.decoding.lengths`)."""
LENGTH_BEAMS = ("shared", "each")
"""How the length combinations of gaps of uncertain length are searched (``length_beam``;
:func:`infill.decoding.engine.beam_search`'s ``groups``): one shared beam, or a beam each."""
RERANKS = ("off", "pll", "pll-gap", "pll-word")
"""How the beam's completions of gaps of one length are reranked (``rerank``;
:mod:`infill.filling.reranking`): not at all, or by the mean of their score and the
pseudo-log-likelihood of that name (:data:`LENGTH_SCORES`)."""
LACUNA_EDGES = ("any", "letters")
"""What a lacuna's first and last characters may be (``lacuna_edges``;
:func:`infill.decoding.letters.apply_edges`): any character, or a sign of the writing (letter,
numeral, interpunct), never a word space."""
UNCLEAR = ("keep", "restore")
"""How an unclear letter (Leiden underdot, EpiDoc ``<unclear>``) is read: as the editor reads it,
or restored among its look-alikes (:mod:`infill.data.letters`)."""
REGIONS = ("fr1", "cdr1", "fr2", "cdr2", "fr3", "cdr3", "fr4")
"""The seven regions of an antibody V domain, N- to C-terminal (:mod:`infill.data.regions`)."""
DTYPES = ("float32", "bf16", "fp16")
DTYPE_SPELLINGS = ("float32", "fp32", "bf16", "bfloat16", "fp16", "float16")
"""Every spelling a ``dtype`` field takes (:data:`DTYPES` and their aliases)."""
"""Names of ``--dtype`` (aliases: fp32, bfloat16, float16; :mod:`infill.models.device`)."""
FAMILIES = ("english", "greek", "protein", "latin")
"""The trainable families, one per named corpus (:data:`infill.data.corpora.CORPORA`)."""
