"""The literary text builtin:greek trains on beside the inscriptions (issue 48), written once.

Perseus (``greek/perseus_grc.txt``, whole) followed by a fixed sample of Tesserae
(``greek/tesserae_grc.txt.xz``, read directly: every fifth block of 300 lines, about a fifth of
it, no randomness), with each iota subscript written as the inscriptions write it, adscript
(``τῷ δήμῳ`` -> ``τῶι δήμωι``): the editions spell the Attic dative ``δήμωι``, which the
normalizer keeps, while a subscript is a diacritic it strips, so literature read as printed would
teach the model ``δημω`` beside the inscriptions' ``δημωι`` and leave the Doric ``δάμωι`` of
IOSPE's decrees the only dative with its iota.

    python benchmarks/greek_literary.py --data ../shared/data --out /work/greekdata/literary.txt
"""
from __future__ import annotations

import argparse
import lzma
import unicodedata
from pathlib import Path

BLOCK, EVERY = 300, 5
"""Tesserae lines are kept in blocks of ``BLOCK`` lines, one block in ``EVERY``."""
YPOGEGRAMMENI = "\u0345"


def adscript(line: str) -> str:
    """``line`` with each iota subscript (ypogegrammeni, also of a capital's prosgegrammeni)
    written as a letter iota after its vowel."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", line)
                                 .replace(YPOGEGRAMMENI, "ι"))


def tesserae_sample(lines: list[str]) -> list[str]:
    """Every ``EVERY``-th block of ``BLOCK`` consecutive lines (passages stay whole)."""
    return [line for start in range(0, len(lines), BLOCK * EVERY)
            for line in lines[start:start + BLOCK]]


def main() -> None:
    """Write Perseus + the Tesserae sample, iota adscript, one line per citation unit."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="the data folder (greek/ inside)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    perseus = (args.data / "greek/perseus_grc.txt").read_text(encoding="utf-8").splitlines()
    with lzma.open(args.data / "greek/tesserae_grc.txt.xz", "rt", encoding="utf-8") as f:
        tesserae = tesserae_sample(f.read().splitlines())
    lines = [adscript(line) for line in perseus + tesserae]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(perseus)} Perseus + {len(tesserae)} Tesserae lines, "
          f"{sum(map(len, lines))} characters -> {args.out}")


if __name__ == "__main__":
    main()
