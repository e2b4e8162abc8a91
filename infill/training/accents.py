"""Build the accent lexicon that ships with the package (``data/greek/accents.tsv.gz``, read by
:mod:`infill.data.accents`): every word of the literary Greek corpus (``greek/perseus_grc.txt``)
and of the IOSPE training split (editions with their supplements, never the validation or test
inscriptions), each normalized word with its most frequent written form.

    python -m infill.training.accents [--data-dir DIR] [--out data/greek/accents.tsv.gz]
"""
from __future__ import annotations

import argparse
from pathlib import Path

from infill.data.accents import Lexicon, lexicon_path
from infill.data.corpora import resolve_corpus
from infill.data.epidoc_corpus import iospe_training_text
from infill.data.files import read_lines


def build(root: str | None = None) -> Lexicon:
    """The lexicon of the literary corpus + the IOSPE training split."""
    path, _ = resolve_corpus("greek", root)
    texts = read_lines(path, "corpus") + iospe_training_text("train", root)
    return Lexicon.build(texts)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=None, help="data root (default: $INFILL_DATA or "
                                                     "../shared/data)")
    ap.add_argument("--out", type=Path, default=lexicon_path())
    a = ap.parse_args(argv)
    lex = build(a.data_dir)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    lex.save(a.out)
    print(f"{len(lex)} words -> {a.out} ({a.out.stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
