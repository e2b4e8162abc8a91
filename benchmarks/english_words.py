"""English models on one-word gaps of the same held-out lines: HCB and standard beam search,
top-1 / top-5, plus a handful of famous lines as a user would type them (each model's default
gap: builtin:english's is one whole word, a model recording none fills one token), and how well
each recites its own training lines: as written, typed without punctuation, and typed only up to
the gap (a quotation's beginning).

    OMP_NUM_THREADS=1 python benchmarks/english_words.py --models builtin:english,OLD_DIR \\
        --corpus CORPUS [--split-of builtin:english] [--examples 1000] [--seed 0] [--beam 5] \\
        [--recite 1000]

CORPUS is the file the --split-of model was trained on (for builtin:english: the two Shakespeare
corpora concatenated, see data/README.md). Its test lines are the test part of that model's
recorded split.json over :func:`infill.data.examples.distinct_lines` of the corpus; what a
one-word gap is, exactly: :mod:`infill.bench.words`. Recitation: ``--recite`` one-word gaps of
the training part (seed + 1), HCB, each line as written, with the punctuation around every other
word removed (``lend me your ___`` for ``lend me your ears;``), and cut after the gap. Every
model fills the very same gaps.
Writes benchmarks/results/bench/english_words.md and the per-gap rows under
benchmarks/results/bench/english_words/.
"""
from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path

from common import RESULTS, fmt, rel, write_table

import infill
from infill.bench.words import WordGap, score_word_gaps, word_gaps, word_pieces
from infill.data.examples import distinct_lines
from infill.data.files import read_lines
from infill.data.splits import training_record

SCORERS = ("hcb", "standard")

#: Lines a user would try first (answers hidden by the model's default gap); a check, not a
#: training or tuning set.
FAMOUS = [
    ("To be, or not to ___, that is the question.", "be"),
    ("O Romeo, Romeo! wherefore art ___ Romeo?", "thou"),
    ("All the world's a ___.", "stage"),
    ("Friends, Romans, countrymen, lend me your ___", "ears"),
    ("A horse! a horse! my kingdom for a ___!", "horse"),
    ("If music be the food of ___, play on.", "love"),
    ("The course of true love never did run ___.", "smooth"),
    ("Good night, good night! parting is such sweet ___", "sorrow"),
    ("What's in a ___? that which we call a rose", "name"),
    ("Something is rotten in the state of ___.", "Denmark"),
    ("The lady doth protest too ___, methinks.", "much"),
    ("Out, damned ___! out, I say!", "spot"),
    ("Brevity is the soul of ___.", "wit"),
    ("Uneasy lies the head that wears a ___.", "crown"),
    ("Now is the winter of our ___", "discontent"),
    ("Shall I compare thee to a summer's ___?", "day"),
]


def test_lines(corpus: str, split_of: str, part: str = "test") -> list[str]:
    """The ``part`` ("test", "validation" to choose a default, "train") of ``split_of``'s split."""
    lines = distinct_lines(read_lines(corpus, "corpus"))
    split = training_record(split_of).get("split") or {}
    if split.get("n_examples") != len(lines):
        sys.exit(f"{corpus} gives {len(lines)} distinct lines; {split_of}'s split has "
                 f"{split.get('n_examples')}: not its training corpus")
    return [lines[i] for i in split[part]]


def unpunctuated(gap: WordGap, marker: str = "___") -> WordGap:
    """``gap`` typed without the punctuation around its other words."""
    words = [w if marker in w else w.strip(",.;:!?\"()-") for w in gap.text.split(" ")]
    return WordGap(gap.line, " ".join(w for w in words if w), gap.word)


def beginning(gap: WordGap, marker: str = "___") -> WordGap:
    """``gap`` typed up to its marker and no further."""
    return WordGap(gap.line, gap.text[:gap.text.index(marker) + len(marker)], gap.word)


def recitation(model, lines: list[str], n: int, seed: int, beam: int) -> list[str]:
    """Top-1 / top-5 cells on ``n`` training-line gaps: as written, without punctuation, up
    to the gap."""
    gaps = word_gaps(lines, n, seed + 1)
    cells = []
    for variant in (gaps, [unpunctuated(g) for g in gaps], [beginning(g) for g in gaps]):
        r = score_word_gaps(model, variant, "hcb", beam=beam)
        cells.append(f"{fmt(r['top1'])} / {fmt(r['top5'])}")
    return cells


def famous(model, scorer: str) -> list[tuple[str, str, str]]:
    """(line, answer, rank-1 text) for every famous line, the model's default gap."""
    out = infill.fill(model, [t for t, _ in FAMOUS], top_k=5, scorer=scorer,
                      order="left-to-right", beam_size=5)
    return [(t, a, c[0].fills[0] if c else "") for (t, a), c in zip(FAMOUS, out)]


def _args() -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="comma-separated models")
    ap.add_argument("--corpus", required=True, help="the --split-of model's training corpus")
    ap.add_argument("--split-of", help="model whose test split gives the lines (default: first)")
    ap.add_argument("--examples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--recite", type=int, default=0, help="training-line gaps to recite (0: none)")
    ap.add_argument("--out", default=str(RESULTS / "english_words.md"))
    return ap.parse_args()


def main() -> None:
    args = _args()
    models = args.models.split(",")
    lines = test_lines(args.corpus, args.split_of or models[0])
    gaps = word_gaps(lines, args.examples, args.seed)
    out = Path(args.out)
    rows_dir = out.with_suffix("")
    rows_dir.mkdir(parents=True, exist_ok=True)
    table = [f"# One-word gaps on held-out Shakespeare lines", "",
             f"{len(gaps)} of the {len(lines):,} test lines of `{args.split_of or models[0]}` "
             f"(seed {args.seed}), one whole word hidden per line, gap length = the word's pieces "
             f"in each model's tokenizer, beam {args.beam}, left-to-right "
             "(definition: `infill/bench/words.py`).", "",
             "| model | words that are one piece | HCB top-1 / top-5 | standard top-1 / top-5 |",
             "|---|---:|---:|---:|"]
    fam_lines = []
    train = test_lines(args.corpus, args.split_of or models[0], "train") if args.recite else []
    recite = [f"Recitation: {args.recite} one-word gaps of `{args.split_of or models[0]}`'s "
              f"training lines (seed {args.seed + 1}), HCB, beam {args.beam}, each line as "
              "written, typed without the punctuation around its other words, and typed only "
              "up to the gap.",
              "", "| model | as written top-1 / top-5 | without punctuation | up to the gap |",
              "|---|---:|---:|---:|"] if args.recite else []
    for name in models:
        model = infill.load_model(name)
        cells, one = [], None
        for scorer in SCORERS:
            r = score_word_gaps(model, gaps, scorer, beam=args.beam)
            one = r["one_piece"]
            cells.append(f"{fmt(r['top1'])} / {fmt(r['top5'])}")
            slug = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")
            (rows_dir / f"{slug}_{scorer}.json").write_text(json.dumps(
                {k: v for k, v in r.items()}, indent=0))
            print(f"{name} {scorer}: top-1 {r['top1']:.1f} top-5 {r['top5']:.1f} "
                  f"(n={r['n']}, one piece {one:.1f}%)", flush=True)
        table.append(f"| `{name}` | {fmt(one)}% | {cells[0]} | {cells[1]} |")
        if args.recite:
            written, bare, start = recitation(model, train, args.recite, args.seed, args.beam)
            recite.append(f"| `{name}` | {written} | {bare} | {start} |")
            print(f"{name} recitation: {written}; without punctuation {bare}; up to the gap "
                  f"{start}", flush=True)
        fam = {s: famous(model, s) for s in SCORERS}
        right = {s: sum(a == f for _, a, f in fam[s]) for s in SCORERS}
        fam_lines += ["", f"Famous lines, `{name}` (the model's default gap; rank 1, HCB / "
                      f"standard; right: {right['hcb']} / {right['standard']} of {len(FAMOUS)}):",
                      "", "| line | answer (pieces) | HCB | standard |", "|---|---|---|---|"]
        for (t, a, h), (_, _, s) in zip(fam["hcb"], fam["standard"]):
            fam_lines.append(f"| {t} | {a} ({word_pieces(model, a)}) | {h} | {s} |")
    cmd = "OMP_NUM_THREADS=1 python benchmarks/english_words.py " + shlex.join(sys.argv[1:])
    write_table(table + [""] + recite + fam_lines + [""], [cmd], out)
    print(f"rows: {rel(rows_dir)}")


if __name__ == "__main__":
    main()
