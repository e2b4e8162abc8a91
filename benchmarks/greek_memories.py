"""builtin:greek's memories fitted on the training split of chosen EpiDoc corpora (issue 48).

The phrase memory, shape memory, word pairs (``write_phrases``) and names (``write_names``) of
the training inscriptions (and, with ``--lexicon-corpus``, a lexicon of them and a literary text) of one or more folders -- each split by inscription on its own (seed 0,
80/10/10, :func:`infill.data.inscriptions.iospe_split`) -- written into ``--out``, so that
``benchmarks/iospe_lengths_report.py --phrases/--shapes/--pairs/--names`` measures them on the
validation split of either corpus (fit on IOSPE, validate on IAph, and the reverse):

    OMP_NUM_THREADS=1 python benchmarks/greek_memories.py --out /tmp/mem_both \\
        --inscriptions ../shared/data/greek/iospe --inscriptions ../shared/data/greek/iaph \\
        --corpus ../shared/data/greek/perseus_grc.txt

Never give it ``greek/cretan`` (evaluation only): it refuses a folder of that name.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from infill.data.inscriptions import iospe_split, training_texts
from infill.training.greek import write_names, write_phrases


def write_lexicon(out: Path, corpus: Path, texts: list[str], copies: int) -> None:
    """``out/lexicon.tsv`` of the literary ``corpus`` (normalized as the model reads it) and
    the inscriptions' ``texts`` counted ``copies`` times, at the shipped β."""
    from infill.data.files import read_lines
    from infill.data.greek import GREEK, normalize, word_weights
    from infill.models.lexicon import LEXICON_BETA, LEXICON_FILE, build_lexicon

    weights = word_weights((normalize(line, symbols=False) for line in
                            read_lines(str(corpus), "corpus")), GREEK)
    for word, n in word_weights(texts, GREEK).items():
        weights[word] += copies * n
    build_lexicon(dict(weights), GREEK, LEXICON_BETA).save(out / LEXICON_FILE, GREEK)


def main() -> None:
    """Build the four memories of the training inscriptions of ``--inscriptions``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inscriptions", action="append", required=True, type=Path,
                    help="an EpiDoc folder whose training split the memories hold (repeat)")
    ap.add_argument("--corpus", required=True, type=Path,
                    help="the literary corpus whose capitalised words join the names")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--lexicon-corpus", type=Path, default=None,
                    help="also write lexicon.tsv: the words of this literary text (once) and "
                    "of the training inscriptions (--copies times, as the network sees them)")
    ap.add_argument("--copies", type=int, default=24)
    args = ap.parse_args()
    if any(p.resolve().name == "cretan" for p in args.inscriptions):
        print("error: --inscriptions: greek/cretan is for evaluation only", file=sys.stderr)
        raise SystemExit(2)
    t0 = time.perf_counter()
    files = iospe_split(os.pathsep.join(map(str, args.inscriptions)))["train"]
    args.out.mkdir(parents=True, exist_ok=True)
    texts = training_texts(files)
    write_phrases(args.out, texts)
    write_names(args.out, files, str(args.corpus))
    if args.lexicon_corpus is not None:
        write_lexicon(args.out, args.lexicon_corpus, texts, args.copies)
    print(f"{len(files)} training inscriptions ({sum(map(len, texts))} characters) -> "
          f"{args.out} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
