"""``infill bench``: the HCB beam-search paper's infilling experiments as a reproducible benchmark.

- :mod:`infill.bench.data`    corpora, held-out splits, seeded gap selection, context truncation
- :mod:`infill.bench.methods` the methods grid (scorer x order, sampling baselines, ablations)
- :mod:`infill.bench.metrics` top-k exact match, BLEU (sacrebleu), BERTScore (bert-score)
- :mod:`infill.bench.runner`  resumable run writing ``results.jsonl``
- :mod:`infill.bench.report`  ``summary.json``, ``summary.md`` and plots
"""

from infill.lazy import lazy_exports

_EXPORTS = {
    "BenchConfig": "infill.bench.runner",
    "run_bench": "infill.bench.runner",
}

__all__ = ["BenchConfig", "run_bench"]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
