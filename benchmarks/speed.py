"""Decoder speed: completions/second and the share of wall time spent inside the model's forward,
for a base-sized BERT and for a real pretrained model (AntiBERTy), plus scaling curves.

- ``bert-base``: 12 layers, hidden 768, vocabulary 30,522, random weights (speed does not depend
  on the weights); gap 4; beam 5 and 20; batch 1 and 16.
- ``antiberty``: the real 26M-parameter antibody BERT (8 layers x 512) on heavy chains from
  ``data/antibody`` with a 4-residue gap in CDR-H3's neighbourhood; same grid.
- ``--curves``: wall time per batch against the beam size, the gap length, the sequence length and
  the batch size (one varies, the others at beam 5, gap 4, batch 8, the model's sentences).
- ``--reference``: the engine against a plain per-hypothesis implementation of METHODS §1 (HCB,
  left-to-right, ``[MASK]`` pivot: one forward pass per hypothesis and step, Python loops over
  hypotheses and inputs), on the same inputs: the same completions and scores, and the ratio of
  wall times. (The HCB paper's own code is not available offline, so it is not what is compared;
  the reference is written here from METHODS §1, the way such decoders are commonly written.)

"Inside forward" is the time spent in the adapter's ``log_probs`` (encoder + MLM head at the
requested positions + log-softmax); the rest is the search engine (candidate selection,
bookkeeping).

    python benchmarks/speed.py [--models bert-base,antiberty] [--device cpu] [--dtype bf16]
        [--repeats 3]
        [--threads N] [--curves]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SENTENCES = [
    "the quick brown fox jumps over the ___ dog near the river bank .",
    "she opened the door and ___ into the cold morning air .",
    "after the long meeting the committee finally ___ the new budget .",
    "the old castle on the hill was ___ by a terrible storm .",
]


def bert_base(device: str, dtype: str | None = None):
    import tempfile

    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast
    from transformers.utils import logging as hf_logging

    import infill

    words = sorted({w for s in SENTENCES for w in s.split() if w != "___"})
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {t: i for i, t in enumerate(specials + words)}
    for i in range(len(vocab), 30522):          # pad the vocabulary to bert-base's size
        vocab[f"[unused{i}]"] = i
    tok = BertTokenizerFast(vocab=vocab)
    torch.manual_seed(0)
    model = BertForMaskedLM(BertConfig(vocab_size=30522)).eval()
    with tempfile.TemporaryDirectory() as folder:     # through the real loader, as a user's is
        hf_logging.disable_progress_bar()
        model.save_pretrained(folder)
        tok.save_pretrained(folder)
        lm = infill.load_model(folder, device=device, dtype=dtype)
    lm.name = "bert-base (random)"
    lm.special_ids = frozenset(lm.special_ids - {i for i in range(len(specials), 30522)})
    return lm, SENTENCES


def antiberty(device: str, dtype: str | None = None):
    import infill
    from infill.data.fasta import read_fasta

    lm = infill.load_model("antiberty", device=device, dtype=dtype)
    seqs = [r.sequence for r in read_fasta(ROOT / "data/antibody/hiv_bnab_heavy.fa")][:32]
    # a 4-residue gap (one ___ of --gap residues) 12 residues before the end: the CDR-H3 / FR4 area
    return lm, [s[:-16] + "___" + s[-12:] for s in seqs]


MODELS = {"bert-base": bert_base, "antiberty": antiberty}


class ForwardTimer:
    def __init__(self, lm):
        self.lm, self.inner, self.seconds, self.calls = lm, lm.log_probs, 0.0, 0
        lm.log_probs = self

    def __call__(self, *a, **k):
        sync = torch.cuda.synchronize if self.lm.device.type == "cuda" else (lambda: None)
        sync()
        t = time.perf_counter()
        out = self.inner(*a, **k)
        sync()
        self.seconds += time.perf_counter() - t
        self.calls += 1
        return out


def grid(lm, texts, timer, gap: int, repeats: int) -> list[str]:
    import infill

    rows = []
    for beam in (5, 20):
        for batch in (1, 16):
            batch_texts = [texts[i % len(texts)] for i in range(batch)]
            if lm.device.type != "cpu":  # a GPU's first call at a new shape picks its kernels
                infill.fill(lm, batch_texts, gap=gap, beam_size=beam, top_k=1)
            timer.seconds, timer.calls = 0.0, 0
            t0 = time.perf_counter()
            for _ in range(repeats):
                infill.fill(lm, batch_texts, gap=gap, beam_size=beam, top_k=1)
            wall = time.perf_counter() - t0
            rows.append(f"| {lm.name} | {beam} | {batch} | {batch * repeats / wall:.2f} | "
                        f"{wall / repeats:.3f} | {timer.calls / repeats:.0f} | "
                        f"{100 * timer.seconds / wall:.1f}% |")
            print(rows[-1], flush=True)
    return rows


def curves(lm, texts, repeats: int) -> list[str]:
    """Seconds per batch as one of beam, gap, sequence length, batch varies."""
    import infill

    def run(beam=5, gap=4, batch=8, pad_words=0):
        batch_texts = [texts[i % len(texts)] for i in range(batch)]
        if pad_words:                    # a longer sequence: more context after the gap
            filler = " and the river ran on" * pad_words if lm.unit == "tokens" else "GS" * pad_words
            batch_texts = [t + filler for t in batch_texts]
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            infill.fill(lm, batch_texts, gap=gap, beam_size=beam, top_k=1)
            best = min(best, time.perf_counter() - t0)
        return best

    lines = [f"**{lm.name}** (seconds per batch; defaults beam 5, gap 4, batch 8):", "",
             "| varies | values | seconds per batch |", "|---|---|---|"]
    series = {"beam": [1, 5, 10, 20], "gap length": [1, 2, 4, 8], "batch": [1, 4, 16, 32],
              "sequence length (+filler)": [0, 4, 16, 48]}
    for what, values in series.items():
        key = {"beam": "beam", "gap length": "gap", "batch": "batch",
               "sequence length (+filler)": "pad_words"}[what]
        secs = [run(**{key: v}) for v in values]
        lines.append(f"| {what} | {', '.join(map(str, values))} | "
                     f"{', '.join(f'{s:.3f}' for s in secs)} |")
        print(lines[-1], flush=True)
    return lines + [""]


def reference_hcb(lm, ids: list[int], gap: list[int], beam: int) -> list[tuple[tuple, float]]:
    """METHODS §1 HCB beam search, left-to-right, ``[MASK]`` pivot, one hypothesis at a time."""
    allowed = lm.allowed_mask(False)
    hyps = [((), 0.0)]
    for g in gap:
        cands = []
        for fill, score in hyps:
            x = list(ids)
            for p, t in zip(gap, fill):
                x[p] = t
            lq = lm.log_probs(torch.tensor([x]), torch.ones(1, len(x), dtype=torch.bool),
                              torch.tensor([[g]]))[0, 0].double().cpu()
            upd = (lq - lq[lm.mask_id]).masked_fill(~allowed, float("-inf"))
            top = upd.topk(min(beam, int(allowed.sum())))
            cands += [(fill + (int(t),), score + float(v)) for v, t in zip(top.values, top.indices)]
        hyps = sorted(cands, key=lambda c: -c[1])[:beam]
    return hyps


def versus_reference(lm, texts, gap: int, repeats: int) -> list[str]:
    """Engine vs :func:`reference_hcb` on the same inputs: equal outputs, wall-time ratio."""
    import infill

    rows = []
    for beam in (5, 20):
        for batch in (1, 16):
            encs = [lm.encode(texts[i % len(texts)], gap=gap) for i in range(batch)]
            cfg = infill.DecodeConfig(scorer="hcb", order="left-to-right", beam_size=beam)
            t_eng = t_ref = float("inf")
            for _ in range(repeats):
                t0 = time.perf_counter()
                eng = infill.decode(lm, [e.input_ids for e in encs], cfg)
                t_eng = min(t_eng, time.perf_counter() - t0)
                t0 = time.perf_counter()
                ref = [reference_hcb(lm, e.input_ids, e.positions, beam) for e in encs]
                t_ref = min(t_ref, time.perf_counter() - t0)
            same = all([h.tokens for h in e] == [f for f, _ in r] and
                       max(abs(h.score - s) for h, (_, s) in zip(e, r)) < 1e-3
                       for e, r in zip(eng, ref))
            rows.append(f"| {lm.name} | {beam} | {batch} | {t_ref:.3f} | {t_eng:.3f} | "
                        f"{t_ref / t_eng:.1f}x | {'yes' if same else 'NO'} |")
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="bert-base,antiberty")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default=None, help="the weights' precision (float32, bf16, fp16)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--gap", type=int, default=4)
    ap.add_argument("--curves", action="store_true")
    ap.add_argument("--reference", action="store_true",
                    help="also time a per-hypothesis reference implementation (same outputs)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    import infill

    print(f"device={args.device} dtype={args.dtype or 'float32'} threads={torch.get_num_threads()} "
          f"gap={args.gap}")
    print("| model | beam | batch | completions/s | s/batch | forward calls/batch | time in forward |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    loaded = []
    for name in args.models.split(","):
        lm, texts = MODELS[name](args.device, args.dtype)
        timer = ForwardTimer(lm)
        infill.fill(lm, texts[0], gap=args.gap, beam_size=5, top_k=1)   # warm-up
        grid(lm, texts, timer, args.gap, args.repeats)
        loaded.append((lm, texts))
    if args.reference:
        print("\n| model | beam | batch | reference s | engine s | speed-up | same output |")
        print("|---|---:|---:|---:|---:|---:|---|")
        for lm, texts in loaded:
            versus_reference(lm, texts, args.gap, args.repeats)
    if args.curves:
        for lm, texts in loaded:
            print("\n".join(curves(lm, texts, args.repeats)))


if __name__ == "__main__":
    main()
