"""builtin:greek with the lexicon of all of Tesserae, not the fifth its literary text holds
(issue 48; measured on validation, not shipped).

Copies the shipped model folder to ``--out`` and adds to its ``lexicon.tsv`` the words of the
Tesserae lines that ``benchmarks/greek_literary.py`` leaves out (four blocks of 300 lines in
five), read as the training text is (iota adscript, normalized), each occurrence weighing 1 as
a literary word of the shipped lexicon does:

    python benchmarks/greek_lexicon_full.py --data ../shared/data --out /tmp/greek_lexfull
    OMP_NUM_THREADS=1 python benchmarks/iospe_lengths_report.py --model /tmp/greek_lexfull \\
        --name lexfull --split validation --per-class 0 --baseline builtin:greek \\
        --baseline-memory on --baseline-name words
"""
from __future__ import annotations

import argparse
import lzma
import shutil
from pathlib import Path

from greek_literary import BLOCK, EVERY, adscript

from infill.data.builtins import builtin_path
from infill.data.greek import GREEK, normalize, word_weights
from infill.models.lexicon import LEXICON_FILE, build_lexicon, load_lexicon


def main() -> None:
    """Write the model with the whole of Tesserae in its lexicon."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="the data folder (greek/ inside)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    shutil.copytree(builtin_path("builtin:greek"), args.out)
    lexicon = load_lexicon(args.out / LEXICON_FILE, GREEK)
    weights = lexicon.word_weights(GREEK)
    with lzma.open(args.data / "greek/tesserae_grc.txt.xz", "rt", encoding="utf-8") as f:
        left_out = [line for i, line in enumerate(f.read().splitlines())
                    if (i // BLOCK) % EVERY]
    added = word_weights((normalize(adscript(line), symbols=False) for line in left_out), GREEK)
    new = sum(w not in weights for w in added)
    for word, n in added.items():
        weights[word] = weights.get(word, 0.0) + n
    build_lexicon(weights, GREEK, lexicon.beta).save(args.out / LEXICON_FILE, GREEK)
    print(f"{len(left_out)} Tesserae lines more: {len(weights)} words ({new} new) -> {args.out}")


if __name__ == "__main__":
    main()
