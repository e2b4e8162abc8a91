"""EpiDoc round trips over a whole corpus (IOSPE by default), without a model.

    python benchmarks/epidoc_roundtrip.py [FOLDER]

1. read, restore nothing, write: the output compared with the file byte for byte, as canonical XML
   (C14N), and the edition ``<div type="edition">`` alone;
2. read, write a reading into every lacuna (the editors' supplements hidden, so they get
   ``<app>``/``<lem>``/``<rdg>``; the gaps get ``<supplied resp="#infill">``), read the output back:
   the same lacunae in the same order, every editor's reading unchanged, every gap now the
   supplement written.
Prints the counts; writes benchmarks/results/epidoc_roundtrip.md.
"""
from __future__ import annotations

import sys
from pathlib import Path

from lxml import etree

from infill.data.corpora import data_root
from infill.data.epidoc import read_edition
from infill.data.epidoc_write import Reading, add_header, apply_readings, serialize
from infill.data.files import read_text

ROOT = Path(__file__).resolve().parents[1]


def _c14n(text: str) -> bytes:
    return etree.tostring(etree.fromstring(text.encode("utf-8")), method="c14n")


def check(path: Path) -> tuple[bool, bool, bool, bool]:
    original = read_text(path)
    e = read_edition(path, original, require_text=False)
    out = serialize(e)
    again = read_edition(path, out, require_text=False)
    same_edition = etree.tostring(e.div) == etree.tostring(again.div)
    # every lacuna read: a reading per lacuna, written and read back
    readings = {lac.index: [Reading("αβγ"[: max(1, min(3, lac.length))], 0.7),
                            Reading("δ", 0.3)] for lac in e.lacunae}
    apply_readings(e, readings)
    add_header(e, "round-trip check", "test")
    back = read_edition(path, serialize(e), require_text=False)
    ok = len(back.lacunae) == len(e.lacunae) and all(
        (b.editor == a.editor) if a.kind == "supplied" else
        (b.kind == "supplied" and b.editor == readings[a.index][0].text)
        for a, b in zip(e.lacunae, back.lacunae))
    return out == original, _c14n(out) == _c14n(original), same_edition, ok


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else data_root() / "greek" / "iospe"
    files = sorted(folder.glob("*.xml"))
    counts = [0, 0, 0, 0]
    for f in files:
        for k, v in enumerate(check(f)):
            counts[k] += v
    n = len(files)
    lines = [f"EpiDoc round trips over {n:,} files of {folder.name} "
             "(`python benchmarks/epidoc_roundtrip.py`):", "",
             "| check | files |", "|---|---:|",
             f"| read + write, byte-identical | {counts[0]:,} / {n:,} |",
             f"| read + write, identical canonical XML (C14N) | {counts[1]:,} / {n:,} |",
             f"| read + write, edition element identical | {counts[2]:,} / {n:,} |",
             f"| a reading written into every lacuna, read back intact | {counts[3]:,} / {n:,} |",
             "", "(A byte difference is an empty element written `<x></x>` in the file, which "
             "lxml writes `<x/>`: the same XML.)", ""]
    out = ROOT / "benchmarks" / "results" / "epidoc_roundtrip.md"
    out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
