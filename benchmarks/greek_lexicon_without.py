"""builtin:greek with its lexicon fitted without one corpus (issue 48's cross-corpus check).

The shipped lexicon counts the words of the training windows: the literary text once and each
training inscription of IOSPE and IAph in ``--copies`` packed copies (``infill train greek
--inscription-copies 16``). Taking ``copies`` x the words of one corpus's training inscriptions
back out of it leaves the lexicon that training without that corpus would have written (every
word of it weighs at least that much in the shipped file: checked, an error otherwise). The
model folder is copied to ``--out`` with that lexicon, for ``iospe_lengths_report.py --model``:

    python benchmarks/greek_lexicon_without.py --without ../shared/data/greek/iaph --out /tmp/noiaph
    OMP_NUM_THREADS=1 python benchmarks/iospe_lengths_report.py --model /tmp/noiaph \\
        --name lexnoiaph --split validation --per-class 0 --baseline-name bare10

Results: ``benchmarks/results/greek_field.md`` ("Cross-corpus check of the lexicon").
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from infill.data.builtins import builtin_path
from infill.data.greek import GREEK
from infill.data.inscriptions import iospe_split, training_texts
from infill.models.lexicon import LEXICON_BETA, LEXICON_FILE, build_lexicon, load_lexicon
from infill.models.lexicon import word_weights



def without(lexicon: dict[str, float], folder: Path, copies: int) -> dict[str, float]:
    """``lexicon`` (word -> weight) less ``copies`` x the words of ``folder``'s training split."""
    out = dict(lexicon)
    for word, n in word_weights(training_texts(iospe_split(folder)["train"]), GREEK).items():
        if out.get(word, 0.0) < copies * n - 1e-9:
            sys.exit(f"error: {word!r} weighs {out.get(word, 0.0):g} in the lexicon, less than "
                     f"{copies} x {n:g}: not the lexicon of these copies")
        out[word] -= copies * n
    return {w: c for w, c in out.items() if c > 1e-9}


def main() -> None:
    """Copy the model with its lexicon less one corpus's training words."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--without", required=True, type=Path, help="the EpiDoc corpus left out")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--model", type=Path, default=Path(builtin_path("builtin:greek")))
    ap.add_argument("--copies", type=int, default=16)
    args = ap.parse_args()
    weights = load_lexicon(args.model / LEXICON_FILE, GREEK).word_weights(GREEK)
    kept = without(weights, args.without, args.copies)
    shutil.copytree(args.model, args.out, dirs_exist_ok=True)
    build_lexicon(kept, GREEK, LEXICON_BETA).save(args.out / LEXICON_FILE, GREEK)
    print(f"{len(weights)} words -> {len(kept)} in {args.out / LEXICON_FILE}")


if __name__ == "__main__":
    main()
