"""Forward-pass speed-ups against exact fp32: bf16, dynamic int8, torch.compile, eager vs SDPA
attention; and bucketing mixed-length inputs by length.

For each model, the same held-out examples (one 3-token gap each) are decoded with HCB beam
search (left-to-right, beam 5, batches of 16) under each option; the table gives the wall time
relative to fp32 (lower is faster) and how often the top-1 completion differs from fp32's.

    OMP_NUM_THREADS=1 python benchmarks/forward.py [--models english,greek,protein,antiberty]
        [--examples 48] [--threads 1]

Writes benchmarks/results/forward.md (and .json).
"""
from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import infill  # noqa: E402
from infill.api import length_buckets, run_decoder  # noqa: E402
from infill.bench.gaps import select_examples  # noqa: E402
from infill.config import DecodeConfig  # noqa: E402
from infill.data.fasta import read_fasta  # noqa: E402
from infill.data.splits import heldout  # noqa: E402
from infill.errors import InfillError  # noqa: E402

OUT = ROOT / "benchmarks" / "results"
CONFIG = DecodeConfig(scorer="hcb", order="left-to-right", beam_size=5)
BATCH = 16


def examples(name: str, model, n: int, seed: int = 0) -> list:
    """(masked ids, gold) of n held-out examples with one 3-token gap."""
    if name == "antiberty":
        seqs = [r.sequence for r in read_fasta(ROOT / "data/antibody/hiv_bnab_heavy.fa")]
        lists = {i: model.tokenize(s) for i, s in enumerate(seqs)}
    else:
        h = heldout(f"builtin:{name}")
        lists = {i: h.examples[i] for i in h.part("test")}
    keys = sorted(lists)
    random.Random(seed).shuffle(keys)
    exs, _ = select_examples(model, {k: lists[k] for k in keys[: n]}, [3], seed)
    return [(e.masked(model.mask_id), tuple(e.gold)) for e in exs]


def decode(model, batch_inputs: list[list[int]], bucket: bool = False) -> tuple[list, float]:
    """Top-1 tokens of every input and the wall time (batches of 16, optionally bucketed)."""
    top, t0 = [], time.perf_counter()
    for s in range(0, len(batch_inputs), BATCH):
        chunk = batch_inputs[s:s + BATCH]
        groups = length_buckets([len(x) for x in chunk]) if bucket else [list(range(len(chunk)))]
        res: list = [None] * len(chunk)
        for g in groups:
            for j, hs in zip(g, run_decoder(model, [chunk[j] for j in g], None, CONFIG)):
                res[j] = hs[0].tokens
        top += res
    return top, time.perf_counter() - t0


def timed(model, inputs, repeats: int) -> tuple[list, float]:
    best, top = float("inf"), None
    for _ in range(repeats):
        top, secs = decode(model, inputs)
        best = min(best, secs)
    return top, best


def variants(name: str):
    """(label, loader) pairs: fp32 first; the others as they apply to this model."""
    model_name = "antiberty" if name == "antiberty" else f"builtin:{name}"
    out = [("fp32", lambda: infill.load_model(model_name, device="cpu")),
           ("bf16", lambda: infill.load_model(model_name, device="cpu", dtype="bf16"))]
    out.append(("int8", lambda: infill.load_model(model_name, device="cpu", quantize="int8")))
    out.append(("compile", lambda: infill.load_model(model_name, device="cpu", compile=True)))
    if name in ("english", "antiberty"):
        def eager():
            lm = infill.load_model(model_name, device="cpu")
            lm.model.set_attn_implementation("eager")
            return lm
        out.append(("eager attention (vs default SDPA)", eager))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="english,greek,protein,antiberty")
    ap.add_argument("--examples", type=int, default=48)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    rows, bucket_rows = [], []
    for name in a.models.split(","):
        base = None
        for label, load in variants(name):
            try:
                model = load()
            except InfillError as e:
                rows.append({"model": name, "variant": label, "error": str(e)})
                continue
            if base is None:
                inputs = [x for x, _ in examples(name, model, a.examples)]
            if label == "compile":
                decode(model, inputs[:BATCH])            # compilation, not timed
            top, secs = timed(model, inputs, a.repeats)
            if base is None:
                base = (top, secs)
            changed = sum(t != b for t, b in zip(top, base[0])) / len(top)
            rows.append({"model": name, "variant": label, "seconds": secs,
                         "ratio": secs / base[1], "top1_changed": changed, "n": len(top)})
            print(rows[-1], flush=True)
        # bucketing: the same inputs, cut to mixed lengths, decoded with and without buckets
        model = infill.load_model("antiberty" if name == "antiberty" else f"builtin:{name}",
                                  device="cpu")
        rng = random.Random(1)
        mixed = []
        for x in inputs:
            gap = [i for i, t in enumerate(x) if t == model.mask_id]
            keep = rng.randint(gap[-1] + 2, len(x))        # a random tail cut (gap kept)
            mixed.append(x[:keep - 1] + [x[-1]])            # keep the closing special token
        rng.shuffle(mixed)
        plain, t_plain = decode(model, mixed)
        bucketed, t_bucket = decode(model, mixed, bucket=True)
        bucket_rows.append({"model": name, "padded_s": t_plain, "bucketed_s": t_bucket,
                            "saving": 1 - t_bucket / t_plain,
                            "same_top1": sum(p == b for p, b in zip(plain, bucketed)) / len(plain),
                            "lengths": [min(map(len, mixed)), max(map(len, mixed))]})
        print(bucket_rows[-1], flush=True)
    write(rows, bucket_rows, a)


def write(rows, bucket_rows, a) -> None:
    cpu = platform.processor() or platform.machine()
    lines = ["# Forward-pass options against exact fp32", "",
             f"CPU ({cpu}, torch {torch.__version__}, {a.threads} thread(s)); {a.examples} held-out "
             "examples per model, one 3-token gap each, HCB left-to-right beam 5, batches of 16; "
             f"best of {a.repeats} runs. `time` = wall time relative to fp32 (lower is faster); "
             "`top-1 changed` = share of examples whose best completion differs from fp32's.", "",
             "| model | option | time vs fp32 | top-1 changed |", "|---|---|---:|---:|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['variant']} | n/a: {r['error']} | |")
        else:
            lines.append(f"| {r['model']} | {r['variant']} | {r['ratio']:.2f}x "
                         f"({r['seconds']:.1f} s) | {100 * r['top1_changed']:.1f}% |")
    lines += ["", "Bucketing by length (the same examples cut to random lengths, shuffled, decoded "
              "in batches of 16 padded to the longest, or split into length buckets):", "",
              "| model | lengths | padded | bucketed | saving | same top-1 |",
              "|---|---|---:|---:|---:|---:|"]
    for r in bucket_rows:
        lines.append(f"| {r['model']} | {r['lengths'][0]}-{r['lengths'][1]} | {r['padded_s']:.1f} s | "
                     f"{r['bucketed_s']:.1f} s | {100 * r['saving']:.0f}% | {100 * r['same_top1']:.0f}% |")
    lines += ["", "Command: `OMP_NUM_THREADS=1 python benchmarks/forward.py " + " ".join(sys.argv[1:]) + "`", ""]
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "forward.md").write_text("\n".join(lines))
    (OUT / "forward.json").write_text(json.dumps({"rows": rows, "buckets": bucket_rows}, indent=1))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
