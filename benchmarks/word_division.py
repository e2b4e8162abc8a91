"""How well a character model's lexicon divides a text typed without word division
(``infill.models.continua``): each validation edition's text with its spaces taken out, divided
again, against the editor's spaces. Counted only between two visible letters (a space beside a
lost or hidden letter cannot be seen); precision, recall, F1. ``--grid`` tries the rule's
constants (α, ρ) the module ships and their neighbours, on the same texts. Then the edges of
each hidden supplement (its ``?``) in the same texts: whether the division puts a word space
where the editor has one, beside a visible letter and beside lost text (``-``) or the text's
end, with and without the rule that a word begins where lost text meets a lacuna.

    OMP_NUM_THREADS=1 python benchmarks/word_division.py --model builtin:greek \
        --corpus iospe --corpus ../shared/data/greek/iaph --texts 150 --grid
    OMP_NUM_THREADS=1 python benchmarks/word_division.py --model builtin:latin \
        --corpus EDH_DIR --files 600 --texts 150 --grid
    OMP_NUM_THREADS=1 python benchmarks/word_division.py --model builtin:greek \
        --corpus iospe --corpus ../shared/data/greek/iaph --texts 150 --adscript
    OMP_NUM_THREADS=1 python benchmarks/word_division.py --model builtin:greek --corpus iospe \
        --restorations benchmarks/results/continua/cont3.validation.jsonl \
        benchmarks/results/lengths/own.validation.jsonl
"""
from __future__ import annotations

import argparse
import sys
import time
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import infill  # noqa: E402
from infill.data.greek import normalize  # noqa: E402
from infill.models import continua  # noqa: E402
from common import spelled  # noqa: E402
from iospe_lengths_report import cached, chosen_tasks, key  # noqa: E402

GRID = [(0.1, 0.9), (0.02, 0.9), (0.5, 0.9), (0.1, 0.8)]
"""(α, ρ) tried with ``--grid``; the first is the shipped rule."""


def texts_of(corpora: list[str], files: int, n: int) -> list[str]:
    """The first ``n`` validation texts of each corpus, every lost or hidden letter a ``-``."""
    out = []
    for corpus in corpora:
        seen: dict[str, str] = {}
        for t in chosen_tasks("validation", 0, corpus, files):
            seen.setdefault(t.file, t.text.replace("?", "-"))
        out += list(seen.values())[:n]
    return out


def adscript(text: str) -> str:
    """``text`` with each iota subscript written beside its vowel, as the stone writes it
    (τῆι, not τῇ)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).replace("\u0345", "ι"))


def score(model, texts: list[str], adscripts: bool = True) -> tuple[float, float, float]:
    """Precision, recall and F1 of the division's spaces between two visible letters
    (``adscripts``: the division's reading of the iota beside a vowel)."""
    a = model.alphabet
    divider = continua.Divider(model.lexicon, a, adscripts)
    space = a.char_to_id(a.space)
    tp = fp = fn = 0
    for text in texts:
        gold, flat = set(), []
        for t in a.encode(normalize(text, symbols=True, alphabet=a, unknown=True)):
            if t == space:
                gold.add(len(flat))
            else:
                flat.append(t)

        def seen(k: int) -> bool:
            return 0 < k < len(flat) and flat[k - 1] in divider.letters \
                and flat[k] in divider.letters
        gold = {k for k in gold if seen(k)}
        got = {k for k in divider.spaces(flat) if seen(k)}
        tp, fp, fn = tp + len(gold & got), fp + len(got - gold), fn + len(gold - got)
    p, r = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    return p, r, 2 * p * r / max(p + r, 1e-12)


def edge_table(model, corpora: list[str], files: int) -> list[str]:
    """Rows: per corpus and side of the lacuna, the share of its edges divided as the editor
    divides them, without and with the rule for lost text meeting a lacuna."""
    a = model.alphabet
    divider = continua.Divider(model.lexicon, a)
    space = a.char_to_id(a.space)
    rows = []
    for corpus in corpora:
        right = {}
        for t in chosen_tasks("validation", 0, corpus, files):
            ids = a.encode(normalize(t.text, symbols=True, alphabet=a, unknown=True))
            gold, flat = set(), []
            for x in ids:
                if x == space:
                    gold.add(len(flat))
                else:
                    flat.append(x)
            lost = [k for k, x in enumerate(flat) if x == a.mask_id]
            if not lost:
                continue
            s, e = lost[0], lost[-1] + 1
            meet = {k for k in range(1, len(flat)) if {flat[k - 1], flat[k]} ==
                    {a.missing_id, a.mask_id}}
            closed = set(range(s + 1, e))
            for rule, forced in (("without", set()), ("with", meet)):
                cuts = set(divider.spaces(flat, closed, forced))
                for side, k, near in (("before", s, s - 1), ("after", e, e)):
                    beside = "a letter" if 0 <= near < len(flat) and \
                        flat[near] in divider.letters else "lost text or the end"
                    ok = (k in cuts) == (k in gold)
                    n = right.setdefault((side, beside, rule), [0, 0])
                    n[0], n[1] = n[0] + ok, n[1] + 1
        for (side, beside, rule), (ok, n) in sorted(right.items()):
            rows.append(f"| {Path(corpus).name} | {side} | {beside} | {rule} | {n} | "
                        f"{100 * ok / n:.1f}% |")
    return rows


def edges_and_restorations(model, corpus: str, per_class: int, undivided: Path,
                           edition: Path) -> list[str]:
    """Rows: the validation supplements counted by whether the model restores them at rank 1
    typed undivided (cache ``undivided``) and as the edition writes them (cache ``edition``),
    and whether the division read puts the lacuna's two edges where the editor does."""
    a, counts = model.alphabet, {}
    typed, written = cached(undivided), cached(edition)
    for t in chosen_tasks("validation", per_class, corpus, 0):
        gold = t.gold.replace(" ", "")
        ed = normalize(t.text, symbols=True, alphabet=a, unknown=True)
        read = a.decode(model.encode(spelled(t.text, t.gold, "continua"), 1, "?").input_ids[1:])
        row = (bool(written[key(t)]) and written[key(t)][0] == t.gold,
               bool(typed[key(t)]) and typed[key(t)][0].replace(" ", "") == gold,
               _edges(ed) == _edges(read))
        counts[row] = counts.get(row, 0) + 1
    yes = {True: "yes", False: "no"}
    return [f"| {Path(corpus).name} | {yes[w]} | {yes[u]} | {yes[e]} | {n} |"
            for (w, u, e), n in sorted(counts.items(), reverse=True)]


def _edges(text: str) -> tuple[bool, bool]:
    """Whether a word space (or the text's end) is beside the first and the last ``?``."""
    i, j = text.index("?"), text.rindex("?") + 1
    return i == 0 or text[i - 1] == " ", j == len(text) or text[j] == " "


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:greek")
    ap.add_argument("--corpus", action="append", required=True,
                    help="'iospe' or a folder of EpiDoc files (repeat for several)")
    ap.add_argument("--files", type=int, default=0, help="a seeded sample of the files (EDH)")
    ap.add_argument("--texts", type=int, default=150, help="validation texts per corpus")
    ap.add_argument("--grid", action="store_true", help="also the neighbouring constants")
    ap.add_argument("--restorations", nargs=2, metavar=("UNDIVIDED", "EDITION"), type=Path,
                    help="only the supplements' restorations: the caches of iospe_lengths_report "
                         "typed undivided and as the edition writes them (one --corpus), by "
                         "whether the division puts the lacuna's edges where the editor does")
    ap.add_argument("--per-class", type=int, default=0, help="with --restorations: the caches' "
                    "sample (0: every supplement)")
    ap.add_argument("--adscript", action="store_true",
                    help="only F1, the texts' iota subscripts written beside the vowel, with and "
                         "without the division's reading of them")
    args = ap.parse_args()
    if (continua.OOV, continua.RHO) != GRID[0]:
        raise SystemExit("error: GRID's first row is not the module's rule")
    model = infill.load_model(args.model, device="cpu")
    if args.restorations:
        print("| corpus | restored, edition | restored, undivided | edges as the editor's | n |\n"
              "|---|---|---|---|---:|")
        print("\n".join(edges_and_restorations(model, args.corpus[0], args.per_class,
                                               *args.restorations)))
        return
    texts = texts_of(args.corpus, args.files, args.texts)
    print(f"{args.model}: {len(texts)} validation texts of {', '.join(args.corpus)}")
    if args.adscript:
        written = [adscript(t) for t in texts]
        print(f"{sum(a != b for a, b in zip(written, texts))} texts write an iota subscript\n"
              "| iota beside the vowel read as the lexicon's word | precision | recall | F1 |\n"
              "|---|---:|---:|---:|")
        for on in (False, True):
            p, r, f = score(model, written, on)
            print(f"| {'yes' if on else 'no'} | {p:.3f} | {r:.3f} | {f:.3f} |", flush=True)
        return
    print("| α | ρ | precision | recall | F1 | seconds |\n|---:|---:|---:|---:|---:|---:|")
    for alpha, rho in GRID if args.grid else GRID[:1]:
        continua.OOV, continua.RHO = alpha, rho
        t0 = time.perf_counter()
        p, r, f = score(model, texts)
        print(f"| {alpha} | {rho} | {p:.3f} | {r:.3f} | {f:.3f} | "
              f"{time.perf_counter() - t0:.1f} |", flush=True)
    continua.OOV, continua.RHO = GRID[0]
    print("\n| corpus | lacuna edge | beside | the meeting rule | n | divided as the editor |\n"
          "|---|---|---|---|---:|---:|")
    print("\n".join(edge_table(model, args.corpus, args.files)))


if __name__ == "__main__":
    main()
