"""Beam search (HCB, standard) vs annealed Metropolis–Hastings mode seeking (METHODS §3), by top-1
exact match and E_local of the returned fill, at matched wall time.

    OMP_NUM_THREADS=1 python benchmarks/mcmc.py [--models english,greek] [--examples 40]
        [--gap-lengths 2,4] [--window 32] [--beam 5] [--chains 4] [--budgets 1,4,16] [--seed 0]

Data: the held-out test split each builtin model was trained with (``infill.bench.data``), one
random contiguous span of n model tokens per example (seeded as in ``infill bench``), the
context cut to a window of ``--window`` tokens centred on the gap (specials kept), the same
inputs for every method.

Methods, per example:
  - ``hcb`` / ``standard``: left-to-right beam search, beam ``--beam``; top-1.
  - ``hcb+rescore``: the HCB beam's completions re-ranked by E_local (lowest first).
  - ``mh@kx``: ``--chains`` MH chains, warm start = the greedy fill, single-site proposals from
    the masked conditionals, E_local target, temperature annealed linearly from 1 to 0.05 over
    the run; the result is the lowest-energy state visited. Its sweeps are chosen so that its
    wall time is about k times the HCB beam's wall time on the same example (calibrated by a
    one-sweep run, not counted); k = 1 is "the same wall time". The table reports the wall time
    actually used.
  - ``mh-Eep`` (``--fixed-sweeps E``; ``--fixed-epochs``, its old name, still read): the same
    sampler run for E sweeps whatever the time.
E_local of each method's top-1 is computed afterwards (not timed); ``gold`` is E_local of the
true span, for reference (a result below it is a model error, not a search error).

Outputs under ``--out`` (default benchmarks/results/mcmc/): ``<model>.jsonl`` (one row per
example and method) and ``summary.md`` / ``summary.json``.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import infill  # noqa: E402
from infill import mcmc  # noqa: E402
from infill.bench.gaps import body_bounds, select_examples  # noqa: E402
from infill.data.splits import heldout  # noqa: E402
from infill.decoding.windows import truncate  # noqa: E402

MIN_T = 0.05


def examples_for(name: str, model, n_examples: int, gaps: list[int], window: int, seed: int):
    h = heldout(f"builtin:{name}")
    test = h.part("test")
    chosen = {i: h.examples[i] for i in test[:n_examples]}
    exs, skipped = select_examples(model, chosen, gaps, seed)
    out = []
    for ex in exs:
        ids = list(ex.ids)
        lo, hi = body_bounds(model, ids)
        ids, start = truncate(ids, ex.start, ex.n, lo, hi, window)
        out.append((ex.example_id, ex.n, ids, start))
    return out, skipped


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def run_example(model, ids, start, n, beam, chains, budgets, fixed, seed):
    gold = tuple(ids[start:start + n])
    masked = list(ids)
    masked[start:start + n] = [model.mask_id] * n
    positions = list(range(start, start + n))
    results = {}
    hcb, t_hcb = timed(lambda: infill.decode(model, masked, scorer="hcb", beam_size=beam))
    results["hcb"] = (tuple(hcb[0].tokens), t_hcb, {})
    std, t_std = timed(lambda: infill.decode(model, masked, scorer="standard", beam_size=beam))
    results["standard"] = (tuple(std[0].tokens), t_std, {})

    def filled(tokens):
        x = list(ids)
        x[start:start + n] = list(tokens)
        return x

    es, t_rs = timed(lambda: mcmc.energy(model, [filled(h.tokens) for h in hcb]))
    results["hcb+rescore"] = (tuple(hcb[int(es.argmin())].tokens), t_hcb + t_rs, {})

    _, t_sweep = timed(lambda: mcmc.mh(model, masked, positions, sweeps=1, chains=chains,
                                       seed=seed))

    def annealed(sweeps: int) -> tuple:
        """MH annealed from 1 to MIN_T over ``sweeps``: (best tokens, seconds, statistics)."""
        anneal = (1.0 - MIN_T) / (sweeps - 1) if sweeps > 1 else 0.0
        res, t = timed(lambda: mcmc.mh(model, masked, positions, sweeps=sweeps, chains=chains,
                                       anneal=anneal, min_temperature=MIN_T, seed=seed))
        return res.best.tokens, t, {"sweeps": sweeps, "acceptance": res.acceptance_rate,
                                    "novel": res.novel_rate}

    for k in budgets:
        results[f"mh@{k}x"] = annealed(max(1, round(k * t_hcb / t_sweep)))
    for sweeps in fixed:
        results[f"mh-{sweeps}ep"] = annealed(sweeps)
    # energies of every returned fill and of the gold, in one batched call (not timed)
    names = list(results)
    energies = mcmc.energy(model, [filled(results[m][0]) for m in names] + [filled(gold)])
    rows = [{"method": m, "tokens": list(results[m][0]), "exact": results[m][0] == gold,
             "energy": float(energies[i]), "seconds": results[m][1], **results[m][2]}
            for i, m in enumerate(names)]
    rows.append({"method": "gold", "tokens": list(gold), "exact": True,
                 "energy": float(energies[-1]), "seconds": 0.0})
    return rows


def summarize(rows: list[dict]) -> dict:
    table: dict[tuple[str, int], dict] = {}
    by_key: dict[tuple[int, int], dict[str, dict]] = {}
    for r in rows:
        by_key.setdefault((r["example"], r["n"]), {})[r["method"]] = r
    for r in rows:
        cell = table.setdefault((r["method"], r["n"]), {"count": 0, "exact": 0, "energy": 0.0,
                                                        "seconds": 0.0, "lt_hcb": 0})
        cell["count"] += 1
        cell["exact"] += r["exact"]
        cell["energy"] += r["energy"]
        cell["seconds"] += r["seconds"]
        cell["lt_hcb"] += r["energy"] < by_key[(r["example"], r["n"])]["hcb"]["energy"] - 1e-6
    return {f"{m}|{n}": {"method": m, "n": n, "examples": c["count"],
                         "top1": 100 * c["exact"] / c["count"],
                         "energy": c["energy"] / c["count"],
                         "seconds": c["seconds"] / c["count"],
                         "energy_below_hcb": 100 * c["lt_hcb"] / c["count"]}
            for (m, n), c in table.items()}


def markdown(name: str, summary: dict, gaps: list[int], methods: list[str]) -> list[str]:
    lines = [f"### builtin:{name}", "",
             "| method | " + " | ".join(f"n={n}: top-1 % / mean E_local / s" for n in gaps)
             + " | E < E(hcb), % of examples |", "|---|" + "---:|" * (len(gaps) + 1)]
    for m in methods:
        cells = [summary.get(f"{m}|{n}") for n in gaps]
        le = [c["energy_below_hcb"] for c in cells if c]
        lines.append(f"| {m} | " + " | ".join(
            "–" if c is None else (f"– / {c['energy']:.2f} / –" if m == "gold" else
                                   f"{c['top1']:.1f} / {c['energy']:.2f} / {c['seconds']:.3f}")
            for c in cells) + f" | {sum(le) / len(le):.0f} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="english,greek")
    ap.add_argument("--examples", type=int, default=40, help="test texts per model")
    ap.add_argument("--gap-lengths", "--gaps", dest="gaps", default="2,4")
    ap.add_argument("--window", type=int, default=32, help="context window in tokens")
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--budgets", default="1,4,16", help="MH wall time in multiples of HCB's")
    ap.add_argument("--fixed-sweeps", "--fixed-epochs", dest="fixed_sweeps", default="",
                    help="also run MH for these numbers of sweeps regardless of time, e.g. 16")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "mcmc")
    ap.add_argument("--report-only", action="store_true",
                    help="rebuild summary.md/json from the existing <model>.jsonl files")
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    gaps = [int(g) for g in a.gaps.split(",")]
    budgets = [int(b) for b in a.budgets.split(",")]
    fixed = [int(e) for e in a.fixed_sweeps.split(",") if e]
    a.out.mkdir(parents=True, exist_ok=True)
    methods = ["hcb", "standard", "hcb+rescore"] + [f"mh@{k}x" for k in budgets] \
        + [f"mh-{e}ep" for e in fixed] + ["gold"]
    command = "OMP_NUM_THREADS=1 python benchmarks/mcmc.py " + shlex.join(sys.argv[1:])
    if a.report_only:
        command = json.loads((a.out / "summary.json").read_text())["command"]
    md = ["## Beam search vs annealed MH mode seeking (E_local)", "",
          f"`{command}` — {a.examples} test texts per model, context window {a.window} tokens, "
          f"beam {a.beam}, MH {a.chains} chains annealed 1 → {MIN_T}; top-1 exact match (%), "
          "mean E_local of the top-1 (lower = better under the model's energy), mean wall "
          f"seconds per example ({torch.get_num_threads()} CPU thread(s)).", ""]
    summaries = {}
    for name in a.models.split(","):
        if a.report_only:
            rows = [json.loads(x) for x in open(a.out / f"{name}.jsonl", encoding="utf-8")]
            skipped = json.loads((a.out / "summary.json").read_text())["models"][name]["skipped"]
            summaries[name] = {"summary": summarize(rows), "skipped": skipped}
            md += markdown(name, summaries[name]["summary"], gaps, methods)
            md += ["", f"skipped (too short): {skipped}", ""]
            continue
        model = infill.load_model(f"builtin:{name}", device="cpu")
        exs, skipped = examples_for(name, model, a.examples, gaps, a.window, a.seed)
        rows = []
        with open(a.out / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for i, (idx, n, ids, start) in enumerate(exs):
                for r in run_example(model, ids, start, n, a.beam, a.chains, budgets, fixed,
                                     a.seed):
                    r.update(example=idx, n=n)
                    rows.append(r)
                    f.write(json.dumps(r) + "\n")
                print(f"{name}: {i + 1}/{len(exs)}", file=sys.stderr, flush=True)
        summaries[name] = {"summary": summarize(rows), "skipped": skipped}
        md += markdown(name, summaries[name]["summary"], gaps, methods)
        md += ["", f"skipped (too short): {skipped}", ""]
    (a.out / "summary.json").write_text(json.dumps({"command": command, "models": summaries},
                                                   indent=1))
    (a.out / "summary.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
