"""Aeneas's port against Aeneas's own outputs (the parity fixture made by running its code on
random-weight models): the largest difference of every forward output, a 767-character input
against a plain float64 computation, and its restore() results -- texts, restored positions,
steps, scores -- for every case and run. Writes ``benchmarks/results/aeneas_parity.md``.

    python benchmarks/aeneas_parity.py ../shared/fixtures/aeneas            # every run (~10 min)
    python benchmarks/aeneas_parity.py tests/fixtures/aeneas --runs small_beam
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch

import infill
from infill.decoding.aeneas import RestoreOptions, restore

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = {"mask_logits": ("mask", True), "unk_logits": ("unk", True), "nsp_logits": ("nsp", True),
           "torso": ("torso", True), "date_logits": ("date", False),
           "region_logits": ("region", False)}


def forward_diffs(fix: Path, expected: dict) -> list[str]:
    npz = np.load(fix / "expected.npz")
    rows = ["| language | pickle | " + " | ".join(OUTPUTS) + " | unpadded mask, unk |",
            "|---" * (len(OUTPUTS) + 3) + "|"]
    for lang, table in expected["languages"].items():
        for variant in ("numpy", "jax"):
            lm = infill.load_model(str(fix / f"aeneas_tiny_{lang}_{variant}.pkl"), device="cpu")
            worst = dict.fromkeys(list(OUTPUTS) + ["unpadded"], 0.0)
            for i, case in enumerate(table["cases"]):
                L = case["text_len_with_sos"]
                ids = torch.from_numpy(npz[f"{lang}_{i}_char_ids"].astype(np.int64))[None]
                with torch.inference_mode():
                    full, short = lm.model(ids, ids > 0), lm.model(ids[:, :L], ids[:, :L] > 0)
                for key, (name, per_pos) in OUTPUTS.items():
                    got = full[name][0, :L] if per_pos else full[name][0]
                    worst[key] = max(worst[key], _diff(got, npz[f"{lang}_{i}_{key}"]))
                for key, name in (("mask_logits_unpadded", "mask"), ("unk_logits_unpadded", "unk")):
                    worst["unpadded"] = max(worst["unpadded"],
                                            _diff(short[name][0], npz[f"{lang}_{i}_{key}"]))
            rows.append(f"| {lang} | {variant} | " + " | ".join(f"{v:.1e}" for v in worst.values())
                        + " |")
    return rows


def _diff(got: torch.Tensor, want: np.ndarray) -> float:
    return float(np.abs(got.float().numpy() - want).max())


def search_rows(fix: Path, expected: dict, runs: list[str]) -> list[str]:
    rows = ["| language | case | run | beam | steps (Aeneas) | predictions | same texts in order | "
            "same restored | largest rel. score diff | seconds |", "|---" * 10 + "|"]
    for lang, table in expected["languages"].items():
        lm = infill.load_model(str(fix / f"aeneas_tiny_{lang}_numpy.pkl"), device="cpu")
        for i, case in enumerate(table["cases"]):
            for name in runs:
                run = case["runs"].get(name)
                if run is None or "predictions" not in run:
                    continue
                rows.append(_search_row(lm, lang, i, case, name, run))
                print(rows[-1], flush=True)
    return rows


def _search_row(lm, lang: str, i: int, case: dict, name: str, run: dict) -> str:
    ids, positions, gaps = lm.restore_input(case["input"])
    options = RestoreOptions(beam_width=run["beam_width"], temperature=run["temperature"],
                             unknown_max=run["unk_restoration_max_len"],
                             length_penalty=run["a_penalty"],
                             keep="higher" if "higher" in name else "lower")
    start = time.perf_counter()
    found, steps = restore(lm, ids, positions, gaps, options)
    seconds = time.perf_counter() - start
    want = run["predictions"]
    texts = [lm.detokenize(r.ids) for r in found] == [w["text"] for w in want]
    same = [[p - 1 for p in r.open] for r in found] == [w["restored"] for w in want]
    by_text = {lm.detokenize(r.ids): r for r in found}
    rel = max(abs(math.exp(by_text[w["text"]].log_prob) / w["score"] - 1)
              for w in want if w["text"] in by_text)
    return (f"| {lang} | {i} | {name} | {run['beam_width']} | {steps} ({run['search_iterations']})"
            f" | {len(found)} / {len(want)} | {'yes' if texts else 'no'} | "
            f"{'yes' if same else 'no'} | {rel:.1e} | {seconds:.1f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fixture", type=Path)
    ap.add_argument("--runs", default="small_beam,small_beam_keep_higher,small_beam_unk_max_4,"
                                      "default,default_keep_higher")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/aeneas_parity.md")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    expected = json.loads((args.fixture / "expected.json").read_text(encoding="utf-8"))
    lines = ["# Aeneas's port against Aeneas's own code (random-weight parity fixture)", "",
             f"`python benchmarks/aeneas_parity.py {args.fixture} --runs {args.runs}` "
             "(one CPU thread). The fixture was made by running google-deepmind/predictingthepast "
             "at commit a19c66ae on tiny random-weight models; the real checkpoints were not "
             "available here.", "", "## Forward outputs: largest absolute difference over every "
             "position of every case", ""]
    lines += forward_diffs(args.fixture, expected)
    lines += ["", "## restore(): the search", ""]
    lines += search_rows(args.fixture, expected, args.runs.split(","))
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
