"""Example selectors: which inputs a benchmark decodes and which span of each it hides.

A selector is any callable ``selector(model, request) -> Selection``
(:class:`ExampleSelector`). The runner (:func:`infill.bench.runner.run_bench`) decodes exactly the selection's examples with
every method of the grid; resuming, sharding, rows and tables are the runner's. Built in:

- :func:`random_spans` (the default): one seeded random span of every gap length per example
  (:mod:`infill.bench.gaps`);
- :func:`infill.bench.epidoc.editors_supplements`: the EpiDoc editors' supplements, chosen
  when DATA is an EpiDoc folder or ``iospe`` (:func:`default_selector`).

A selector of one's own (e.g. benchmarks/antibody.py: spans inside CDR-H3 or the frameworks)
returns :class:`~infill.bench.selection.Selection` with ``identity`` set: it is stored in
``config.json`` beside the request, so a run is never resumed with another selection.
"""
from __future__ import annotations

from infill.bench.epidoc import editors_supplements, epidoc_folder
from infill.bench.gaps import Example, pick_indices, select_examples, tokenize_texts
from infill.bench.selection import Selection, ExampleSelector
from infill.data.corpora import load_texts
from infill.data.splits import heldout
from infill.errors import InputError
from infill.models.base import MaskedLM

__all__ = ["Selection", "ExampleSelector", "random_spans", "default_selector"]


def by_gap_length(examples: list[Example], gaps) -> dict[int, list[Example]]:
    """``examples`` grouped by gap length, in the order of ``gaps`` (each in its given order)."""
    return {n: [e for e in examples if e.n == n] for n in gaps}


def random_spans(model: MaskedLM, request) -> Selection:
    """``request.examples`` inputs drawn at random (seeded) from DATA, or from one part of the
    training split (``request.split``), each with one random span of every gap length."""
    if request.split == "all":
        texts = load_texts(request.data, request.format, request.data_root)
        if not texts:
            raise InputError(f"dataset {request.data!r} holds no text", field="data")
        indices = pick_indices(list(range(len(texts))), request.examples, request.seed)
        lists = tokenize_texts(model, texts, indices)
        corpus_size = pool = len(texts)
    else:
        h = heldout(request.model, corpus=request.data, family=request.family,
                    max_length=model.max_length, data=request.data_root)
        part = h.part(request.split)
        indices = pick_indices(part, request.examples, request.seed)
        lists = {i: list(h.examples[i]) for i in indices}
        corpus_size, pool = len(h.examples), len(part)
    exs, skipped = select_examples(model, lists, list(request.gap_lengths), request.seed)
    if not exs:
        raise InputError(f"no usable example: all {len(indices)} examples drawn are shorter than "
                         f"every gap length ({', '.join(map(str, request.gap_lengths))} tokens) or "
                         "rejected by the model", field="gap_lengths")
    return Selection(by_gap_length(exs, request.gap_lengths), skipped, len(indices), corpus_size,
                     pool)


def default_selector(request) -> ExampleSelector:
    """The editors' supplements for an EpiDoc DATA (a folder of EpiDoc files, ``iospe``), else
    random spans."""
    folder = epidoc_folder(request.data, request.data_root)
    if folder is not None:
        return lambda model, req: editors_supplements(model, req, folder)
    return random_spans
