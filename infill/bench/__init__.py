"""``infill bench``: the HCB beam-search paper's infilling experiments as a reproducible benchmark.

- :mod:`infill.bench.request`   :class:`BenchRequest`, the options of a run (``infill bench``'s flags)
- :mod:`infill.bench.selection` what a selector chose (:class:`Selection`) and the selector type
- :mod:`infill.bench.selectors` which examples and spans (random spans, EpiDoc supplements, yours)
- :mod:`infill.bench.gaps`    seeded gap selection, context truncation
- :mod:`infill.bench.methods` the methods grid (scorer x order, sampling baselines, ablations)
- :mod:`infill.bench.metrics` top-k exact match, BLEU (sacrebleu), BERTScore (bert-score)
- :mod:`infill.bench.runner`  resumable run writing ``results.jsonl``
- :mod:`infill.bench.report`  ``summary.json``, ``summary.md`` and plots
"""

from infill.lazy import lazy_exports

_EXPORTS = {
    "BenchRequest": "infill.bench.request",
    "BenchConfig": "infill.bench.request",
    "Selection": "infill.bench.selection",
    "random_spans": "infill.bench.selectors",
    "run_bench": "infill.bench.runner",
}

__all__ = ["BenchRequest", "BenchConfig", "Selection", "random_spans", "run_bench"]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
