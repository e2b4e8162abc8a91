"""EpiDoc round trips over whole corpora, without a model.

    python benchmarks/epidoc_roundtrip.py [--corpus NAME=FOLDER ...] [--out FILE]

By default every EpiDoc corpus under the data root that is there: IOSPE, IAph, Crete and EDH
(EDH unpacked: ``--corpus EDH=EDH_DIR``). For each file:

1. read, restore nothing, write: the output compared with the file byte for byte, as canonical XML
   (C14N), and the edition ``<div type="edition">`` alone;
2. read, write a reading into every lacuna, in the edition's own letters (the editors'
   supplements hidden, so they get ``<app>``/``<lem>``/``<rdg>``; the gaps get
   ``<supplied resp="#infill">``), read the output back: the same lacunae in the same order, every
   editor's reading unchanged, every gap now the supplement written.

A file the reader refuses with its one-line error (an edition with no text, say) is counted as
refused, with the first reasons listed; any other exception is a failure of the reader and is
listed in full. Writes the table to benchmarks/results/epidoc_roundtrip.md.
"""
from __future__ import annotations

import argparse
import traceback
from collections import Counter
from pathlib import Path

from lxml import etree

from infill.data.corpora import data_root
from infill.data.epidoc import read_edition
from infill.data.epidoc_write import Reading, add_header, apply_readings, serialize
from infill.data.files import read_text
from infill.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
CHECKS = ("read + write, byte-identical", "read + write, identical canonical XML (C14N)",
          "read + write, edition element identical",
          "a reading written into every lacuna, read back intact")


def _c14n(text: str) -> bytes:
    return etree.tostring(etree.fromstring(text.encode("utf-8")), method="c14n")


def check(path: Path) -> tuple[bool, bool, bool, bool]:
    """The four checks of one file (module docstring)."""
    original = read_text(path)
    e = read_edition(path, original, require_text=False)
    out = serialize(e)
    again = read_edition(path, out, require_text=False)
    same_edition = etree.tostring(e.div) == etree.tostring(again.div)
    letters = e.alphabet.letters
    readings = {lac.index: [Reading(letters[: max(1, min(3, lac.length))], 0.7),
                            Reading(letters[3], 0.3)] for lac in e.lacunae}
    apply_readings(e, readings)
    add_header(e, "round-trip check", "test")
    back = read_edition(path, serialize(e), require_text=False)
    ok = len(back.lacunae) == len(e.lacunae) and all(
        (b.editor == a.editor) if a.kind == "supplied" else
        (b.kind == "supplied" and b.editor == readings[a.index][0].text)
        for a, b in zip(e.lacunae, back.lacunae))
    return out == original, _c14n(out) == _c14n(original), same_edition, ok


def run_corpus(folder: Path) -> dict:
    """The counts of one folder's ``*.xml``, its refusals' reasons and its failures."""
    files = sorted(folder.glob("*.xml"))
    counts, refused, failed = [0, 0, 0, 0], Counter(), []
    for f in files:
        try:
            results = check(f)
        except InputError as err:
            refused[str(err).removeprefix(f"{f}: ").split(": ", 1)[-1][:90]] += 1
            continue
        except Exception:                                       # a reader's bug: keep it whole
            failed.append((f.name, traceback.format_exc(limit=3)))
            continue
        for k, v in enumerate(results):
            counts[k] += v
    return {"n": len(files), "counts": counts, "refused": refused, "failed": failed}


def report(results: dict[str, dict]) -> str:
    names = list(results)
    lines = ["EpiDoc round trips, whole corpora (`python benchmarks/epidoc_roundtrip.py"
             + "".join(f" --corpus {n}=..." for n in names) + "`):", "",
             "| check | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for k, label in enumerate(CHECKS):
        lines.append(f"| {label} | " + " | ".join(
            f"{r['counts'][k]:,} / {r['n']:,}" for r in results.values()) + " |")
    lines.append("| refused with a one-line error | " + " | ".join(
        f"{sum(r['refused'].values()):,}" for r in results.values()) + " |")
    lines.append("| failed (an exception) | " + " | ".join(
        f"{len(r['failed']):,}" for r in results.values()) + " |")
    lines += ["", "(A byte difference is an empty element written `<x></x>` or `<x />` in the "
              "file, which lxml writes `<x/>`, or an attribute's spacing inside a tag: the same "
              "XML.)"]
    for name, r in results.items():
        for reason, count in r["refused"].most_common(5):
            lines.append(f"- {name}, refused ({count:,}): {reason}")
        for fname, tb in r["failed"][:5]:
            lines += [f"- {name}, failed: {fname}", "", "```", tb.rstrip(), "```"]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", action="append", default=[], metavar="NAME=FOLDER")
    ap.add_argument("--out", type=Path,
                    default=ROOT / "benchmarks" / "results" / "epidoc_roundtrip.md")
    args = ap.parse_args()
    corpora = dict(c.split("=", 1) for c in args.corpus) or {
        name: str(data_root() / "greek" / sub) for name, sub in
        (("IOSPE", "iospe"), ("IAph", "iaph"), ("Crete", "cretan"))
        if (data_root() / "greek" / sub).is_dir()}
    results = {name: run_corpus(Path(folder)) for name, folder in corpora.items()}
    text = report(results)
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
