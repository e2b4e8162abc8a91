"""The memory of an input's own text (infill.models.own_text): how often an editor's supplement
stands elsewhere in its own inscription, and what the memory costs in decoding time.

    python benchmarks/own_text.py --corpus ../shared/data/greek/iaph --split validation
    OMP_NUM_THREADS=1 python benchmarks/own_text.py --speed 48      # IOSPE validation
    OMP_NUM_THREADS=1 python benchmarks/own_text.py --speed 48 --part own_words

Without ``--speed``: per length class, the supplements whose letters the visible text holds
elsewhere (accents, case and iota subscripts aside; u = v), and those a copy rule restores --
the longest left context (3-12 letters, all visible) that recurs in the text, followed there by
as many visible letters as are hidden, is the editor's. With ``--speed N``: seconds to restore
the first N supplements (8 together, beam 10) with builtin:greek as it ships and without its
own-text memory (``--part own_words``: the lexicon of its own whole words,
infill.models.own_words), batch by batch in turn (one run: a ratio).
"""
from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from collections import Counter

from infill.bench.epidoc import epidoc_folder, tasks_for

CLASSES = {"1-3": range(1, 4), "4-6": range(4, 7), "7-10": range(7, 11)}


def plain(text: str) -> str:
    """Letters without accents or case, final sigma and u/v folded, iota adscript as written."""
    bare = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
    return bare.lower().replace("ς", "σ").replace("v", "u").replace("j", "i")


def copied(left: str, other: str, n: int) -> str | None:
    """What the copy rule restores: after the longest recurring left context, n letters."""
    for k in range(12, 2, -1):
        ctx = left[-k:]
        if len(ctx) < k or "-" in ctx:
            continue
        seen = Counter(other[m.end():m.end() + n] for m in re.finditer(re.escape(ctx), other)
                       if m.end() != len(left))
        seen = Counter({x: c for x, c in seen.items() if len(x) == n and not set(x) & set("-?\0")})
        if seen:
            return seen.most_common(1)[0][0]
    return None


def parallels(corpus: str, split: str) -> str:
    """The table of supplements found in their own text, by length class."""
    tasks = tasks_for(epidoc_folder(corpus), split, list(range(1, 11)))
    rows = {c: Counter() for c in CLASSES}
    for t in tasks:
        n, gold, text = len(t.gold), plain(t.gold), plain(t.text)
        i = text.index("?" * n)
        left, other = text[:i], text[:i] + "\0" + text[i + n:]
        row = rows[next(c for c, r in CLASSES.items() if n in r)]
        row["n"] += 1
        row["in the text"] += gold in other
        row["copy rule right"] += copied(left, other, n) == gold
    lines = ["| supplements | n | in the text elsewhere | a copy rule restores |",
             "|---|---:|---:|---:|"]
    for c, r in rows.items():
        lines.append(f"| {c} letters | {r['n']} | {r['in the text']} "
                     f"({100 * r['in the text'] / max(r['n'], 1):.1f}%) | {r['copy rule right']} "
                     f"({100 * r['copy rule right'] / max(r['n'], 1):.1f}%) |")
    return "\n".join(lines)


def speed(n: int, part: str = "own_text") -> str:
    """Seconds with and without the model's ``part``, batch by batch in turn."""
    import infill
    from common import timed_in_turn

    model, bare = (infill.load_model("builtin:greek", device="cpu") for _ in range(2))
    if getattr(model, part) is None:
        sys.exit(f"builtin:greek has no {part} to time")
    setattr(bare, part, None)
    tasks = tasks_for(epidoc_folder("iospe"), "validation", list(range(1, 11)))[:n]
    took = timed_in_turn({"with": model, "without": bare}, [t.text for t in tasks])
    return (f"{len(tasks)} supplements: with {took['with']:.1f} s, without "
            f"{took['without']:.1f} s, ratio {took['with'] / took['without']:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="iospe", help="'iospe' or a folder of EpiDoc files")
    ap.add_argument("--split", default="validation", choices=("validation", "test", "all"))
    ap.add_argument("--speed", type=int, default=0, metavar="N",
                    help="time N IOSPE validation supplements with and without the memory")
    ap.add_argument("--part", default="own_text", choices=("own_text", "own_words"),
                    help="what --speed times: the own-text memory or the own whole words")
    args = ap.parse_args()
    if args.speed:
        print(speed(args.speed, args.part))
        return
    if epidoc_folder(args.corpus) is None:
        sys.exit(f"error: --corpus: {args.corpus!r} is neither 'iospe' nor a folder of *.xml")
    print(parallels(args.corpus, args.split))


if __name__ == "__main__":
    main()
