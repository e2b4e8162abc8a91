"""Doubtful readings on real inscriptions: are the letters editors corrected flagged?

IOSPE's editors mark where the stone is wrong: ``<choice><sic>stone</sic><corr>editor</corr>
</choice>``. Each edition of a split is read as the stone has it (the ``<sic>``,
:func:`infill.check_epidoc.sic_edition`) and ``infill check``'s scores are computed
(:mod:`infill.checking`: each letter masked alone, the best alternative's log-ratio):

- positives: every letter read from a ``<sic>`` that the editor changed (the sic and corr texts
  aligned, normalized; a sic letter the alignment keeps unchanged is left out), and, since the
  splits hold few such pairs, *synthetic* errors: letters replaced by a random other letter,
  each in its own copy of the edition;
- negatives: the other preserved letters (a seeded sample of them: each letter is one forward
  row as long as its edition, and one CPU thread reads about 15 rows of 500 letters a second).

The threshold is chosen on the validation split -- the one of largest recall - false-flag rate
(Youden's J; positives: its synthetic errors and corrected letters), or with ``--budget R`` the
smallest whose false-flag rate is at most R -- and recall and false flags are reported on the
test split at it, with Wilson 95% intervals.

    OMP_NUM_THREADS=1 python benchmarks/check_iospe.py [--negatives 800 --synthetic 300]

Writes benchmarks/results/check_iospe.md (``--out``) and prints it.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import time
from dataclasses import replace
from pathlib import Path

import torch

import infill
from infill.check_epidoc import read_edition_for_check
from infill.checking import check_readings
from infill.data.epidoc_corpus import iospe_files
from infill.data.greek import normalize
from infill.errors import InfillError

GRID = [x / 4 for x in range(0, 41)]
"""Thresholds (nats) tried on the validation split."""


def changed(sic: str, corr: str) -> list[int]:
    """Indices of the normalized ``sic`` letters an edit-distance alignment with ``corr``
    substitutes or deletes (all of them when the two share no letter at all)."""
    a, b = normalize(sic, symbols=False).replace(" ", ""), normalize(corr, symbols=False)
    b = b.replace(" ", "")
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
    out, i, j = [], len(a), len(b)
    while i > 0:
        if j > 0 and d[i][j] == d[i - 1][j - 1] + (a[i - 1] != b[j - 1]):
            if a[i - 1] != b[j - 1]:
                out.append(i - 1)
            i, j = i - 1, j - 1
        elif d[i][j] == d[i - 1][j] + 1:
            out.append(i - 1)
            i -= 1
        else:
            j -= 1
    return sorted(out)


def editions(model, split: str) -> list:
    """The split's editions read as the stone has them (files with nothing to check left out)."""
    out = []
    for f in iospe_files(split):
        try:
            out.append(read_edition_for_check(model, str(f), sic=True))
        except InfillError:
            continue
    return out


def positives(ers) -> tuple[list, int]:
    """(edition index, position) of every corrected sic letter, and the number of pairs."""
    found, pairs = [], 0
    for e, er in enumerate(ers):
        by_pair: dict[int, list[int]] = {}
        for t, k in sorted(er.sic.items()):
            by_pair.setdefault(k, []).append(t)
        for k, ts in by_pair.items():
            pairs += 1
            idx = changed(*er.pairs[k])
            found += [(e, ts[i]) for i in idx if i < len(ts)] or [(e, t) for t in ts]
    return found, pairs


def scored(model, ers, where: list[tuple[int, int]], swap: dict | None = None) -> list[float]:
    """best_logq - logq at each (edition, position); ``swap``: (e, t) -> a letter id written
    there instead (a synthetic error, in its own copy of the edition)."""
    readings = []
    for e, t in where:
        r = ers[e].reading
        ids = list(r.ids)
        if swap:
            ids[t] = swap[e, t]
        readings.append(replace(r, ids=ids, checked=[t]))
    return [-c.positions[0].log_ratio for c in check_readings(model, readings, 0.0)]


def sample_split(model, split: str, n_neg: int, n_syn: int, rng: random.Random) -> dict:
    """One split's scores: positives (editors' corrections), negatives, synthetic errors."""
    ers = editions(model, split)
    pos, pairs = positives(ers)
    others = [(e, t) for e, er in enumerate(ers) for t in er.reading.checked if t not in er.sic]
    neg = rng.sample(others, min(n_neg, len(others)))
    syn = rng.sample(others, min(n_syn, len(others)))
    letters = [i for i in range(model.vocab_size) if model.id_to_token(i).isalpha()]
    swap = {(e, t): rng.choice([i for i in letters if i != ers[e].reading.ids[t]]) for e, t in syn}
    return {"split": split, "editions": len(ers), "pairs": pairs, "letters": len(others),
            "pos": scored(model, ers, pos), "neg": scored(model, ers, neg),
            "syn": scored(model, ers, syn, swap)}


def rate(scores: list[float], threshold: float) -> tuple[int, int]:
    return sum(s >= threshold for s in scores), len(scores)


def wilson(k: int, n: int, z: float = 1.96) -> str:
    """k/n with its Wilson 95% interval, in percent."""
    if n == 0:
        return "–"
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return f"{100 * p:.1f}% ({k}/{n}; {100 * max(0, centre - half):.1f}–" \
           f"{100 * min(1, centre + half):.1f}%)"


def youden(val: dict, th: float) -> float:
    """Recall - false-flag rate at ``th``, the positives being the validation split's
    synthetic errors and the editors' corrections together."""
    k, n = rate(val["syn"] + val["pos"], th)
    f, m = rate(val["neg"], th)
    return k / max(1, n) - f / max(1, m)


def choose(val: dict, budget: float | None) -> float:
    """The threshold of :data:`GRID` of largest Youden's J on validation (:func:`youden`; ties:
    the larger threshold), or with ``budget`` the smallest whose false-flag rate on validation
    is at most ``budget``."""
    if budget is None:
        return max(GRID, key=lambda th: (round(youden(val, th), 9), th))
    for th in GRID:
        k, n = rate(val["neg"], th)
        if k <= budget * n:
            return th
    return GRID[-1]


def report(val: dict, test: dict, th: float, budget: float, seconds: float, args) -> str:
    rows, grid = [], []
    for t in (1, 2, 3, 4, 5, 6, 8, 10):
        grid.append(f"| {t:g} | " + " | ".join(
            f"{100 * rate(d[k], t)[0] / max(1, len(d[k])):.1f}%" for d in (val, test)
            for k in ("pos", "syn", "neg")) + " |")
    for d in (val, test):
        rows.append(f"| {d['split']} | {d['editions']} | {d['pairs']} | "
                    f"{wilson(*rate(d['pos'], th))} | {wilson(*rate(d['syn'], th))} | "
                    f"{wilson(*rate(d['neg'], th))} |")
    both = {k: val[k] + test[k] for k in ("pos",)}
    pos = ", ".join(f"{s:.1f}" for s in sorted(val["pos"] + test["pos"]))
    return "\n".join([
        "# Doubtful readings on IOSPE: the editors' corrections of the stone "
        "(benchmarks/check_iospe.py)", "",
        f"    OMP_NUM_THREADS=1 python benchmarks/check_iospe.py --negatives {args.negatives} "
        f"--synthetic {args.synthetic} --seed {args.seed}"
        + (f" --budget {budget:g}" if budget is not None else ""), "",
        f"{args.model}; threshold **{th:g} nats** (e^{th:g} = {math.exp(th):.0f}x), " + (
            "the largest recall - false-flag rate (Youden's J) on the validation split "
            "(positives: its synthetic errors and corrected letters)" if budget is None else
            f"the smallest whose false-flag rate on the validation sample is at most "
            f"{budget:.0%}") + f"; {seconds:.0f} s on one CPU thread.", "",
        "| split | editions | sic/corr pairs | recall: corrected letters | recall: synthetic "
        "errors | false flags (other letters) |", "|---|---:|---:|---:|---:|---:|", *rows, "",
        f"Both splits' corrected letters together: {wilson(*rate(both['pos'], th))}.", "",
        "A sample, to stay within minutes on one thread (each letter is one forward row as long "
        f"as its edition): of the validation / test split's {val['letters']:,} / "
        f"{test['letters']:,} preserved letters outside the editors' corrections, "
        f"{len(test['neg'])} drawn at random (seeded) are the negatives and "
        f"{len(test['syn'])}, drawn again, are replaced by a random other letter, each in its "
        "own copy of the edition (the synthetic errors); every corrected letter is scored. "
        "An edition counts when it preserves a Greek letter (Latin editions and those with nothing preserved are left "
        "out). Corrected letters: the sic letters an alignment with the corr text substitutes "
        "or deletes (sic ΘΟ, corr ο: Θ), the corr's letters never seen.", "",
        "By threshold (nats): the share flagged of each kind of letter.", "",
        "| threshold | val: corrected | val: synthetic | val: other | test: corrected | "
        "test: synthetic | test: other |", "|---:|---:|---:|---:|---:|---:|---:|", *grid, "",
        f"The corrected letters' scores (log p(best) - log p(written), both splits): {pos}.",
        ""])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:greek")
    ap.add_argument("--negatives", type=int, default=800, help="other letters sampled per split")
    ap.add_argument("--synthetic", type=int, default=300, help="synthetic errors per split")
    ap.add_argument("--budget", type=float, default=None,
                    help="choose the threshold by a false-flag rate allowed on validation "
                         "(e.g. 0.01) instead of by Youden's J")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "check_iospe.md"))
    ap.add_argument("--reuse", action="store_true",
                    help="report the scores saved beside --out (.json) instead of computing")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    start, saved = time.time(), Path(args.out).with_suffix(".json")
    if args.reuse:
        val, test, seconds = json.loads(saved.read_text(encoding="utf-8"))
    else:
        model = infill.load_model(args.model, device="cpu")
        val = sample_split(model, "validation", args.negatives, args.synthetic,
                           random.Random(args.seed))
        test = sample_split(model, "test", args.negatives, args.synthetic,
                            random.Random(args.seed + 1))
        seconds = time.time() - start
        saved.write_text(json.dumps([val, test, seconds]), encoding="utf-8")
    th = choose(val, args.budget)
    text = report(val, test, th, args.budget, seconds, args)
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
