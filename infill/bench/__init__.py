"""``infill bench``: the HCB beam-search paper's infilling experiments as a reproducible benchmark.

- :mod:`infill.bench.data`    corpora, held-out splits, seeded gap selection, context truncation
- :mod:`infill.bench.methods` the methods grid (scorer x order, sampling baselines, ablations)
- :mod:`infill.bench.metrics` top-k exact match, BLEU (sacrebleu), BERTScore (bert-score)
- :mod:`infill.bench.runner`  resumable run writing ``results.jsonl``
- :mod:`infill.bench.report`  ``summary.json``, ``summary.md`` and plots
"""
from infill.bench.runner import BenchConfig, run_bench

__all__ = ["BenchConfig", "run_bench"]
