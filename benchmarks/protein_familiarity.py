"""Calibrate builtin:protein's familiarity threshold (``data/models/protein/familiarity.json``):
the per-residue log-likelihood that 99% of its validation sequences reach
(:mod:`infill.models.familiarity`).

    python benchmarks/protein_familiarity.py builtin:protein ../shared/data/protein/hypf.fa --write
"""
from __future__ import annotations

import json

from infill.models.familiarity import FILE, MIN_KNOWN, calibrate


def main(argv: list[str] | None = None) -> int:
    import argparse

    from infill.data.builtins import builtin_path
    from infill.data.corpora import load_texts
    from infill.models import load_model

    p = argparse.ArgumentParser(prog="benchmarks/protein_familiarity.py")
    p.add_argument("model", help="builtin:protein")
    p.add_argument("corpus", help="its training corpus (hypf.fa)")
    p.add_argument("--write", action="store_true", help=f"write {FILE} beside the checkpoint")
    a = p.parse_args(argv)
    path = builtin_path(a.model)
    info = json.loads((path.parent / "split.json").read_text())
    texts = load_texts(a.corpus)
    if len(texts) != info["n_examples"]:
        raise SystemExit(f"{a.corpus} has {len(texts)} sequences, the model's split "
                         f"{info['n_examples']}: not its training corpus")
    val = [texts[i] for i in info["validation"]]
    model = load_model(a.model)
    out = calibrate(model, val)
    out.pop("_scores")
    fam = {"model": a.model, "knows": "HypF/AcyP (acylphosphatase)", "checkpoint": path.name,
           **out, "min_known": MIN_KNOWN}
    print(json.dumps(fam, indent=1))
    if a.write:
        (path.parent / FILE).write_text(json.dumps(fam, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
