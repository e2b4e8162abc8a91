"""Calibration of builtin:greek's (and builtin:latin's) probabilities (issue 48): a temperature and an unlisted mass
fitted on validation, the expected calibration error and reliability diagram before and after.

A restoration's stated probability is the first completion's share of the beam's ten at
temperature T, beside an unlisted log-score u that stands for the restorations not among them
(:func:`infill.filling.calibration.calibrated`, what the readings report); it is
right when that completion is the editor's supplement. The restorations and their scores come
from ``benchmarks/iospe_lengths_report.py``'s caches (``--out``: one row per supplement with its
ten ``fills`` and ``scores``; a reranked one's ``rank_scores``, what its probabilities are of) or ``benchmarks/iospe_mbr.py``'s (``scored.validation.jsonl``). Each ``--set`` is ``LABEL=CORPUS:SPLIT:CACHE`` (CORPUS ``iospe``
or an EpiDoc folder); ``--fit`` names the sets T is fitted on (the T in [0.25, 8] of least
negative log-likelihood of top-1 correctness, averaged over the sets so that each corpus weighs
the same, on a grid of 0.01; with ``--unlisted``, T on a grid of 0.05 and u in [-8, 2] on a
grid of 0.1 together), the others are only measured:

    OMP_NUM_THREADS=1 python benchmarks/greek_calibration.py \\
        --set IOSPE=iospe:validation:lengths/new.validation.jsonl \\
        --set IAph=../shared/data/greek/iaph:validation:lengths/new.iaph.validation.jsonl \\
        --fit IOSPE --fit IAph --png benchmarks/results/greek_calibration.png

builtin:latin's: the same with ``--fold-uv`` (``u`` and ``v`` one letter) on the caches of
``benchmarks/results/latin/`` (top-20 lists, of which ``--listed 10`` share the probability, as
the beam's ten do for Greek); see benchmarks/results/latin_lengths.md.

ECE: 10 equal-width bins of stated probability, Σ_bins (n_b / n) |accuracy_b − mean p_b|. Its
"floor" is the ECE a perfectly calibrated model would show on as many supplements at the same
stated probabilities (outcomes drawn as Bernoulli(p)): an ECE at its floor is no evidence of
miscalibration.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from infill.bench.epidoc import epidoc_folder, tasks_for
from infill.data.latin import fold_uv
from infill.filling.calibration import calibrated

BINS = 10
GRID = np.round(np.arange(0.25, 8.0001, 0.01), 2)
PAIRS = [(t, u) for t in np.round(np.arange(0.5, 3.0001, 0.05), 2)
         for u in np.round(np.arange(-8.0, 2.0001, 0.1), 1)]


def load_set(spec: str, listed: int = 10, same=lambda s: s
             ) -> tuple[str, list[list[float]], np.ndarray]:
    """(label, each supplement's first ``listed`` scores, top-1 correctness) of
    ``LABEL=CORPUS:SPLIT:CACHE``; ``same`` maps a restoration and the editor's supplement to
    what is compared (Latin: :func:`~infill.data.latin.fold_uv`)."""
    label, rest = spec.split("=", 1)
    corpus, split, cache = rest.split(":", 2)
    gold = {f"{Path(t.file).name}#{t.index}": t.gold
            for t in tasks_for(epidoc_folder(corpus), split, list(range(1, 11)))}
    rows = {}
    for line in Path(cache).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "score" in row and "scores" not in row:     # iospe_mbr.py's cache: beam order
            order = sorted(range(len(row["score"])), key=lambda i: -row["score"][i])
            row = {"key": row["key"], "fills": [row["fills"][i] for i in order],
                   "scores": [row["score"][i] for i in order]}
        if "rank_scores" in row:        # reranked: the values a reading's probability is of
            row["scores"] = row["rank_scores"]
        if "scores" in row and row["key"] in gold and row["fills"]:
            rows[row["key"]] = row
    scores = [rows[k]["scores"][:listed] for k in sorted(rows)]
    right = np.array([float(same(rows[k]["fills"][0]) == same(gold[k])) for k in sorted(rows)])
    return label, scores, right


def stated(scores: list[list[float]], t: float, u: float | None = None) -> np.ndarray:
    """The first completion's calibrated probability, per supplement."""
    return np.array([calibrated(s, t, u)[0] for s in scores])


def ece(p: np.ndarray, y: np.ndarray) -> float:
    """Expected calibration error over :data:`BINS` equal-width bins."""
    b = np.minimum((p * BINS).astype(int), BINS - 1)
    return float(sum((b == k).mean() * abs(p[b == k].mean() - y[b == k].mean())
                     for k in range(BINS) if (b == k).any()))


def ece_floor(p: np.ndarray, draws: int = 2000, seed: int = 0) -> float:
    """The ECE a perfectly calibrated model would show at these stated probabilities: the mean
    ECE of outcomes drawn as Bernoulli(p) (at a few hundred supplements it is not small)."""
    rng = np.random.default_rng(seed)
    return float(np.mean([ece(p, rng.random(len(p)) < p) for _ in range(draws)]))


def nll(p: np.ndarray, y: np.ndarray) -> float:
    """Mean negative log-likelihood of correctness under the stated probabilities."""
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def fit(sets: list[tuple[str, list, np.ndarray]], unlisted: bool = False
        ) -> tuple[float, float | None]:
    """The grid temperature (and, with ``unlisted``, the unlisted log-score) of least NLL
    averaged over the sets, each weighing the same (a corpus with more validation supplements
    does not outvote the other)."""
    cost = lambda t, u: np.mean([nll(stated(ss, t, u), y) for _, ss, y in sets])  # noqa: E731
    if unlisted:
        return tuple(float(x) for x in min(PAIRS, key=lambda p: cost(*p)))
    return float(min(GRID, key=lambda t: cost(t, None))), None


def fit_per_count(sets: list[tuple[str, list, np.ndarray]], t: float, most: int
                  ) -> tuple[float, ...]:
    """u_k for k = 1 .. ``most`` listed restorations at temperature ``t``: for each k, the u of
    least NLL (the sets weighing the same) when only the first k of each supplement's
    restorations are listed -- as an edition lacuna's few distinct readings are."""
    out = []
    for k in range(1, most + 1):
        cost = lambda u: np.mean([nll(stated([x[:k] for x in ss], t, u), y)  # noqa: E731
                                  for _, ss, y in sets])
        out.append(float(min(np.round(np.arange(-8.0, 2.0001, 0.1), 1), key=cost)))
    return tuple(out)


def by_count(sets, t: float, us: dict[str, object], most: int) -> list[str]:
    """Markdown: ECE per set when the first k restorations are listed, under each u of ``us``."""
    ks = [k for k in (1, 2, 3, 5, 10) if k <= most]
    lines = ["| set | u | " + " | ".join(f"ECE, {k} listed" for k in ks) + " |",
             "|---|---|" + "---:|" * len(ks)]
    for label, scores, y in sets:
        for name, u in us.items():
            cells = [f"{ece(stated([x[:k] for x in scores], t, u), y):.3f}" for k in ks]
            lines.append(f"| {label} | {name} | " + " | ".join(cells) + " |")
    return lines


def _u(u) -> str:
    return f"{u:g}" if isinstance(u, float) else "u_k"


def diagram(sets, t: float, u: float | None, path: Path) -> None:
    """Reliability diagrams (accuracy per bin against stated probability), T = 1 and fitted."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(sets), figsize=(4 * len(sets), 4), squeeze=False)
    for ax, (label, scores, y) in zip(axes[0], sets):
        for (temp, mass), style in (((1.0, None), "o--"), ((t, u), "s-")):
            p = stated(scores, temp, mass)
            b = np.minimum((p * BINS).astype(int), BINS - 1)
            ks = [k for k in range(BINS) if (b == k).any()]
            ax.plot([p[b == k].mean() for k in ks], [y[b == k].mean() for k in ks], style,
                    label=f"T = {temp:g}" + ("" if mass is None else f", u = {_u(mass)}")
                    + f": ECE {ece(p, y):.3f}")
        ax.plot([0, 1], [0, 1], ":", color="grey")
        ax.set(title=f"{label} (n = {len(y)})", xlabel="stated probability of the first "
               "restoration", ylabel="share right", xlim=(0, 1), ylim=(0, 1))
        ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


def main() -> None:
    """Fit T (and u), print the table, draw the diagram."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", action="append", required=True, dest="sets")
    ap.add_argument("--fit", action="append", default=[])
    ap.add_argument("--unlisted", action="store_true",
                    help="fit the unlisted log-score u with the temperature")
    ap.add_argument("--temperature", type=float, default=None,
                    help="measure at this temperature instead of fitting (with --given-unlisted)")
    ap.add_argument("--given-unlisted", type=lambda v: tuple(map(float, v.split(","))),
                    default=None, help="u, or u_1,u_2,... (one per number of restorations "
                    "listed, as a defaults.json's list)")
    ap.add_argument("--per-count", action="store_true",
                    help="also fit u_k for k = 1 .. --listed restorations listed (at the "
                    "temperature) and print ECE by the number listed")
    ap.add_argument("--png", type=Path, default=None)
    ap.add_argument("--listed", type=int, default=10,
                    help="restorations a stated probability is shared among (a cache's first N)")
    ap.add_argument("--fold-uv", action="store_true",
                    help="compare u and v as one letter (Latin: the stone has V for both)")
    args = ap.parse_args()
    same = fold_uv if args.fold_uv else (lambda s: s)
    sets = [load_set(s, args.listed, same) for s in args.sets]
    if args.temperature:
        given = args.given_unlisted
        (t, u), how = (args.temperature, given[0] if given and len(given) == 1 else given), \
            "given"
    else:
        (t, u), how = fit([s for s in sets if s[0] in args.fit], args.unlisted), \
            "fitted on " + ", ".join(args.fit)
    print(f"temperature {t:g}, unlisted {'none' if u is None else u} ({how})"
          "\n\n| set | n | top-1 | mean p (T = 1) | ECE (T = 1) | floor (T = 1) | mean p (fitted) "
          "| ECE (fitted) | floor (fitted) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, scores, y in sets:
        p1, pt = stated(scores, 1.0), stated(scores, t, u)
        print(f"| {label} | {len(y)} | {y.mean():.3f} | {p1.mean():.3f} | {ece(p1, y):.3f} | "
              f"{ece_floor(p1):.3f} | {pt.mean():.3f} | {ece(pt, y):.3f} | {ece_floor(pt):.3f} |")
    if args.per_count:
        fitted = fit_per_count([s for s in sets if s[0] in args.fit], t, args.listed)
        print(f"\nu_k fitted on {', '.join(args.fit)} at T = {t:g}: {json.dumps(list(fitted))}"
              "\n")
        print("\n".join(by_count(sets, t, {str(u): u, "u_k": fitted}, args.listed)))
    if args.png:
        diagram(sets, t, u, args.png)


if __name__ == "__main__":
    main()
