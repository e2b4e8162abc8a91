"""A lacuna's edges in a text typed without word division, weighed by the model: measured.

The division (``infill.models.continua``) puts a word space beside a lacuna or not from the
lexicon's unigram weights alone, the lacuna's letters being wildcards; where it errs, the
supplement is restored far less often (``word_division.py --restorations``). Here each edge of
the hidden supplement that stands beside a visible letter is read both ways -- a word space
forced there, or none -- and every reading of the text is decoded (standard left-to-right,
beam 10); three rankings of the restorations of each supplement, typed undivided
(``--spelling continua``), against the editor's:

- ``division``: the division read, the beam's order (builtin:greek as it ships);
- ``division, pll-gap``: the same restorations ranked by their ``pll-gap`` (the length score
  the fill ranks lacunae of uncertain length by);
- ``edges``: the restorations of every reading pooled (a restoration's best), by ``pll-gap``;
- ``division, pll`` and ``edges, pll``: the same by ``pll`` (every token near the lacuna, the
  word spaces of its reading included).

    OMP_NUM_THREADS=1 python benchmarks/continua_edges.py --corpus iospe --out CACHE.jsonl
    # --shard 0/2 and --shard 1/2 in two processes, then --report with both caches
"""
from __future__ import annotations

import argparse
import json
import sys
from itertools import product
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import infill  # noqa: E402
from infill.bench.epidoc import cer  # noqa: E402
from infill.bench.stats import paired_bootstrap  # noqa: E402
from infill.data.greek import normalize  # noqa: E402
from infill.decoding.pll import length_scores  # noqa: E402
from common import spelled  # noqa: E402
from iospe_lengths_report import chosen_tasks, key, letters  # noqa: E402

RANKINGS = ("division", "division, pll-gap", "edges", "division, pll", "edges, pll")


class EdgeDivider:
    """The model's division with a word space forced (True) or refused (False) at the first
    ``?`` (``before``) and after the last (``after``); None: as the lexicon divides."""

    def __init__(self, base, before: bool | None, after: bool | None, mask_id: int):
        self.base, self.before, self.after, self.mask_id = base, before, after, mask_id
        self.letters = base.letters

    def edges(self, ids: list[int]) -> tuple[int, int]:
        lost = [k for k, t in enumerate(ids) if t == self.mask_id]
        return lost[0], lost[-1] + 1

    def spaces(self, ids, closed=frozenset(), forced=frozenset()) -> list[int]:
        closed, forced = set(closed), set(forced)
        for k, want in zip(self.edges(list(ids)), (self.before, self.after)):
            if want is True:
                forced.add(k)
            elif want is False:
                closed.add(k)
        return self.base.spaces(ids, closed, forced)

    def splits(self, ids, cuts) -> bool:
        return self.base.splits(ids, cuts)


def uncertain(model, text: str) -> tuple[bool, bool]:
    """Whether each edge of the text's one lacuna stands beside a visible letter."""
    a = model.alphabet
    ids = [t for t in a.encode(normalize(text, alphabet=a, unknown=True))
           if t != a.char_to_id(a.space)]
    s = ids.index(a.mask_id)
    e = len(ids) - ids[::-1].index(a.mask_id)
    return s > 0 and ids[s - 1] in a.letter_ids, e < len(ids) and ids[e] in a.letter_ids


def readings(model, text: str, base) -> list[dict]:
    """Every reading's restorations of ``text``: letters, beam score, pll-gap, and whether the
    reading is the division's own."""
    a, out, seen = model.alphabet, [], set()
    before, after = uncertain(model, text)
    for b, e in product([None, True, False] if before else [None],
                        [None, True, False] if after else [None]):
        if (b is None) != (e is None) and (before and after):
            continue                                   # only the division, or both set
        model._divider = EdgeDivider(base, b, e, a.mask_id)
        enc = model.encode(text, 1, "?")
        if tuple(enc.input_ids) in seen:
            continue
        seen.add(tuple(enc.input_ids))
        comps = infill.fill(model, text, gap=1, marker="?", beam_size=10, top_k=10)[0]
        filled = []
        for c in comps:
            ids = list(enc.input_ids)
            for p, t in zip(enc.positions, c.tokens):
                ids[p] = int(t)
            filled.append(ids)
        gaps, scores, chars = [list(enc.positions)] * len(comps), [c.score for c in comps], \
            [len(enc.positions)] * len(comps)
        gap = length_scores(model, "pll-gap", filled, gaps, scores, chars)
        whole = length_scores(model, "pll", filled, gaps, scores, chars)
        out += [{"fill": letters(c, a), "score": c.score, "pll_gap": g, "pll": w,
                 "division": b is None and e is None} for c, g, w in zip(comps, gap, whole)]
    model._divider = base
    return out


def ranked(rows: list[dict], how: str) -> list[str]:
    """A supplement's restorations, best first, as ``how`` ranks them."""
    if not how.startswith("edges"):
        rows = [r for r in rows if r["division"]]
    field = "score" if how == "division" else "pll" if how.endswith(", pll") else "pll_gap"
    best: dict[str, float] = {}
    for r in rows:
        best[r["fill"]] = max(best.get(r["fill"], -np.inf), r[field])
    return sorted(best, key=lambda f: -best[f])


def report(caches: list[Path]) -> None:
    rows = {}
    for cache in caches:
        for line in cache.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            rows[row["key"]] = row
    golds = {k: r["gold"].replace(" ", "") for k, r in rows.items()}
    keys = sorted(rows)
    fields = set.intersection(*(set(r) for k in keys for r in rows[k]["rows"]))
    hows = [h for h in RANKINGS if not h.endswith(", pll") or "pll" in fields]
    got = {how: [ranked(rows[k]["rows"], how) for k in keys] for how in hows}
    top1 = {h: np.array([float(bool(g) and g[0].replace(" ", "") == golds[k])
                         for g, k in zip(got[h], keys)]) for h in hows}
    top10 = {h: np.array([float(golds[k] in [x.replace(" ", "") for x in g[:10]])
                          for g, k in zip(got[h], keys)]) for h in hows}
    cers = {h: np.array([cer(g[0].replace(" ", "") if g else "", golds[k])
                         for g, k in zip(got[h], keys)]) for h in hows}
    print(f"{len(keys)} supplements\n\n| ranking | top-1 % | top-10 % | CER | Δ top-1 against "
          "the division | Δ CER |\n|---|---:|---:|---:|---:|---:|")
    for h in hows:
        d, lo, hi = _diff(top1[h], top1["division"])
        c, clo, chi = _diff(cers[h], cers["division"])
        print(f"| {h} | {100 * top1[h].mean():.1f} | {100 * top10[h].mean():.1f} | "
              f"{cers[h].mean():.3f} | {100 * d:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}] | "
              f"{c:+.3f} [{clo:+.3f}, {chi:+.3f}] |")


def _diff(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    r = paired_bootstrap(a, b)
    return r["mean_diff"], r["lo"], r["hi"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="iospe")
    ap.add_argument("--per-class", type=int, default=0)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--shard", default="0/1", help="K/N: every Nth supplement from the Kth")
    ap.add_argument("--limit", type=int, default=0, help="the shard's first N supplements only")
    ap.add_argument("--report", nargs="+", type=Path, help="only the table, from these caches")
    args = ap.parse_args()
    if args.report:
        return report(args.report)
    torch.set_num_threads(1)
    k, n = map(int, args.shard.split("/"))
    model = infill.load_model("builtin:greek", device="cpu")
    model.encode("ηβουληκαιοδημοσετιμησεν?", 1, "?")             # builds the division
    base = model._divider
    done = set()
    if args.out.is_file():
        done = {json.loads(x)["key"] for x in args.out.read_text(encoding="utf-8").splitlines()}
    tasks = chosen_tasks("validation", args.per_class, args.corpus, 0)[k::n]
    tasks = tasks[:args.limit] if args.limit else tasks
    with args.out.open("a", encoding="utf-8") as f:
        for i, t in enumerate(tasks):
            if key(t) in done:
                continue
            text = spelled(t.text, t.gold, "continua")
            f.write(json.dumps({"key": key(t), "gold": t.gold,
                                "rows": readings(model, text, base)}, ensure_ascii=False) + "\n")
            f.flush()
            print(f"{i + 1}/{len(tasks)}", flush=True)


if __name__ == "__main__":
    main()
