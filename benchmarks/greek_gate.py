"""Fit builtin:greek's memory gate (issue 48): the sharpness κ and the prior ratio π_1/π_2 of
:mod:`infill.models.gate`, on the validation splits of IOSPE and IAph together.

Two measures, each averaged per corpus and the two corpora weighted alike, over a grid of κ and
log π_1 − log π_2:

* **identification** (what ``--write`` writes): each validation inscription's text, as the
  model reads it, gives the gate its evidence ℓ_s; the measure is the log-loss of the gate's
  weight on the inscription's own corpus. Seconds.
* **supplements** (``--supplements``): every editor's supplement of 1-10 letters read letter by
  letter, left to right (the shipped order), the letters before shown as restored and those
  after hidden; the measure is the gated mixture's log-likelihood of the editors' letters, beside
  each single source and the pooled memories of ``--pooled`` (the model before the gate). About
  20 minutes on two cores (``--cache`` keeps the letters' chances for another fit).

The two disagree on how far to trust a short text's evidence; the shipped κ, π were chosen
between them by decoding both validation samples (benchmarks/results/greek_field.md).

    OMP_NUM_THREADS=1 python benchmarks/greek_gate.py --model data/models/greek [--write] \\
        [--supplements --pooled PREV_MODEL --cache chances.npz] [--speed 48 --pooled PREV_MODEL]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from infill.bench.epidoc import _example, epidoc_folder, tasks_for
from infill.data.inscriptions import iospe_split, training_texts
from infill.models.char import load_char
from infill.models.gate import GATE_FILE

CORPORA = {"iospe": "../shared/data/greek/iospe", "iaph": "../shared/data/greek/iaph"}
SHARPNESS = (0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.5, 1.0)
"""The grid of κ; LOG_PRIOR, of log π_1 − log π_2."""
LOG_PRIOR = np.round(np.arange(-3.0, 8.001, 0.05), 2)


def rows_of(model, example) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The teacher-forced rows of one supplement: ids [L, T], positions [L, 1], gold [L]."""
    ids = np.array(example.ids)
    gold = ids[example.start:example.start + example.n].copy()
    rows = np.repeat(ids[None], example.n, 0)
    for j in range(example.n):
        rows[j, example.start + j:example.start + example.n] = model.mask_id
    return rows, np.arange(example.start, example.start + example.n)[:, None], gold


@torch.inference_mode()
def letter_chances(model, pooled, tasks) -> dict[str, np.ndarray]:
    """Per letter of every supplement: log q_s(gold) of each source [N, S], ℓ_s of its row
    [N, S], log q(gold) under the pooled model [N], and its supplement's number [N]."""
    out = {"source": [], "evidence": [], "pooled": [], "supplement": []}
    gate = model.gate
    for k, task in enumerate(tasks):
        example = _example(model, k, task)
        if example is None:
            continue
        rows, pos, gold = rows_of(model, example)
        x, p = torch.from_numpy(rows), torch.from_numpy(pos)
        base = torch.log_softmax(model._scores(x, torch.ones_like(x), p), -1)
        lq = base
        for name in model.mixed:
            part = getattr(model, name)
            if part is not None and name != "gate":
                lq = part.mix(lq, x, p)
        at = torch.arange(len(gold)), torch.zeros(len(gold), dtype=torch.long), torch.from_numpy(gold)
        out["source"].append(np.stack([s.mix(lq, x, p)[at].double().numpy()
                                       for s in gate.sources], 1))
        out["evidence"].append(np.stack([gate.log_likelihood(s.phrases, rows)
                                         for s in gate.sources], 1))
        out["pooled"].append(pooled.log_probs(x, torch.ones_like(x), p)[at].double().numpy())
        out["supplement"].append(np.full(len(gold), k))
    return {key: np.concatenate(v) for key, v in out.items()}


def gated(chances: dict, sharpness: float, log_prior: np.ndarray) -> np.ndarray:
    """log Σ_s g_s q_s(gold) of every letter [N]."""
    logits = log_prior[None] + sharpness * chances["evidence"]
    log_g = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
    return np.logaddexp.reduce(log_g + chances["source"], axis=1)


def per_supplement(chances: dict, letters: np.ndarray) -> float:
    """The mean log-likelihood of a supplement (its letters' log chances summed)."""
    ids = chances["supplement"]
    return float(np.bincount(ids, letters)[np.unique(ids)].mean())


def chances(model, pooled, cache: Path | None) -> dict[str, dict[str, np.ndarray]]:
    """{corpus: :func:`letter_chances`} of both validation splits, from ``cache`` if given and
    there (else computed, and written there)."""
    if cache is not None and cache.is_file():
        with np.load(cache, allow_pickle=False) as f:
            return {c: {k: f[f"{c}.{k}"] for k in ("source", "evidence", "pooled", "supplement")}
                    for c in CORPORA}
    t0, data = time.perf_counter(), {}
    for name, folder in CORPORA.items():
        tasks = tasks_for(epidoc_folder(folder), "validation", list(range(1, 11)))
        data[name] = letter_chances(model, pooled, tasks)
        print(f"{name}: {len(tasks)} supplements, {len(data[name]['pooled'])} letters "
              f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    if cache is not None:
        np.savez(cache, **{f"{c}.{k}": v for c, d in data.items() for k, v in d.items()})
    return data


def identification(model) -> dict[str, np.ndarray]:
    """{corpus: ℓ_s of each of its validation inscriptions [n, S]} (the text as the model
    reads it: normalized, its first window)."""
    a, out = model.alphabet, {}
    for name, folder in CORPORA.items():
        texts = training_texts(iospe_split(folder)["validation"])
        rows = [np.array([[a.start_id] + a.encode(t)[:model.max_length - 1]]) for t in texts]
        out[name] = np.array([[model.gate.log_likelihood(s.phrases, r)[0]
                               for s in model.gate.sources] for r in rows])
    return out


def identification_loss(evidence: dict, kappa: float, b: float) -> list[float]:
    """Per corpus, the mean −log g_own of its inscriptions (corpus k is source k)."""
    losses = []
    for k, e in enumerate(evidence.values()):
        logits = np.array([b, 0.0])[None] + kappa * e
        log_g = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
        losses.append(float(-log_g[:, k].mean()))
    return losses


def grid(measure) -> tuple[dict, tuple[float, float]]:
    """{(κ, b): per-corpus values} of ``measure`` (higher is better) and the best (κ, b)."""
    fits = {(k, b): measure(k, b) for k in SHARPNESS for b in LOG_PRIOR}
    return fits, max(fits, key=lambda kb: np.mean(fits[kb]))


def print_table(title: str, rows: dict[str, list[float]]) -> None:
    print(f"| {title} | " + " | ".join(f"{c} validation" for c in CORPORA) + " | mean |")
    print("|---|" + "---:|" * (len(CORPORA) + 1))
    for label, values in rows.items():
        print(f"| {label} | " + " | ".join(f"{v:.3f}" for v in values) +
              f" | {np.mean(values):.3f} |")
    print()


def best_per_sharpness(fits: dict, sign: float = 1.0) -> dict[str, list[float]]:
    rows = {}
    for kappa in SHARPNESS:
        b = max(LOG_PRIOR, key=lambda b: np.mean(fits[kappa, b]))
        rows[f"κ = {kappa:g}, log π_1/π_2 = {b:+.2f}"] = [sign * v for v in fits[kappa, b]]
    return rows


def speed(model, pooled, n: int) -> str:
    """Seconds to restore the first ``n`` IOSPE validation supplements (8 together, beam 10)
    with the gate and with the pooled memories, batch by batch in turn (one run: a ratio)."""
    from common import timed_in_turn

    tasks = tasks_for(epidoc_folder(CORPORA["iospe"]), "validation", list(range(1, 11)))[:n]
    took = timed_in_turn({"gate": model, "pooled": pooled}, [t.text for t in tasks])
    return (f"{len(tasks)} supplements: gate {took['gate']:.1f} s, pooled {took['pooled']:.1f} s, "
            f"ratio {took['gate'] / took['pooled']:.2f}")


def main() -> None:
    """Fit κ and the priors on both validation splits; print the tables (and write gate.json)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, type=Path, help="a model folder with a gate.json")
    ap.add_argument("--write", action="store_true",
                    help="write the identification fit into --model/gate.json")
    ap.add_argument("--supplements", action="store_true",
                    help="also the editors' letters' likelihood (slow; needs --pooled)")
    ap.add_argument("--pooled", type=Path, default=None,
                    help="a model folder with the memories pooled (the model before the gate)")
    ap.add_argument("--cache", type=Path, default=None,
                    help="an .npz of the letters' chances: read when it exists, else written")
    ap.add_argument("--speed", type=int, default=0, metavar="N",
                    help="also time N validation supplements with the gate and pooled (--pooled)")
    args = ap.parse_args()
    model = load_char(args.model, device="cpu")
    names = [s.name for s in model.gate.sources] if model.gate is not None else []
    if names != list(CORPORA):
        print(f"error: --model: {args.model} has no gate of sources {list(CORPORA)}",
              file=sys.stderr)
        raise SystemExit(2)
    if (args.supplements or args.speed) and args.pooled is None:
        print("error: --supplements and --speed need --pooled", file=sys.stderr)
        raise SystemExit(2)
    evidence = identification(model)
    fits, best = grid(lambda k, b: [-x for x in identification_loss(evidence, k, b)])
    print_table("identification log-loss (nats)", best_per_sharpness(fits, -1.0))
    print(f"identification: best κ = {best[0]:g}, log π_1/π_2 = {best[1]:+.2f}\n")
    if args.supplements:
        data = chances(model, load_char(args.pooled, device="cpu"), args.cache)
        lik, top = grid(lambda k, b: [per_supplement(d, gated(d, k, np.array([b, 0.0])))
                                      for d in data.values()])
        rows = {f"pooled ({args.pooled.name})": [per_supplement(d, d["pooled"])
                                                 for d in data.values()]}
        for i, s in enumerate(names):
            rows[f"{s} only"] = [per_supplement(d, d["source"][:, i]) for d in data.values()]
        print_table("log-likelihood of a supplement (nats)", {**rows, **best_per_sharpness(lik)})
        print(f"supplements: best κ = {top[0]:g}, log π_1/π_2 = {top[1]:+.2f}")
    if args.speed:
        print("speed: " + speed(model, load_char(args.pooled, device="cpu"), args.speed))
    if args.write:
        gate = json.loads((args.model / GATE_FILE).read_text())
        gate["sharpness"] = best[0]
        gate["sources"] = [{"name": names[0], "prior": round(float(np.exp(best[1])), 4)},
                           {"name": names[1], "prior": 1.0}]
        (args.model / GATE_FILE).write_text(json.dumps(gate, indent=1) + "\n")


if __name__ == "__main__":
    main()
