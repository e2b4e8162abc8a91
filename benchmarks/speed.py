"""Decoder speed: completions/second and the share of wall time spent inside the model's forward.

A base-sized BERT (12 layers, hidden 768, vocab 30522, random weights: speed does not depend on the
weights) on CPU by default; gap 4; beam 5 and 20; batch 1 and 16. "Inside forward" is the time spent
in the adapter's ``log_probs`` (encoder + MLM head at the requested positions + log-softmax); the
rest is the search engine (candidate selection, bookkeeping).

    python benchmarks/speed.py [--device cpu] [--repeats 3] [--threads N]
"""
from __future__ import annotations

import argparse
import time

import torch

SENTENCES = [
    "the quick brown fox jumps over the ___ dog near the river bank .",
    "she opened the door and ___ into the cold morning air .",
    "after the long meeting the committee finally ___ the new budget .",
    "the old castle on the hill was ___ by a terrible storm .",
]


def build_model(device: str):
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast
    from infill.models.hf import HFMaskedLM

    words = sorted({w for s in SENTENCES for w in s.split() if w != "___"})
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {t: i for i, t in enumerate(specials + words)}
    for i in range(len(vocab), 30522):          # pad the vocabulary to bert-base's size
        vocab[f"[unused{i}]"] = i
    tok = BertTokenizerFast(vocab=vocab)
    torch.manual_seed(0)
    model = BertForMaskedLM(BertConfig(vocab_size=30522)).to(device).eval()
    lm = HFMaskedLM(model, tok, name="bert-base (random)")
    lm.special_ids = frozenset(lm.special_ids - {i for i in range(len(specials), 30522)})
    return lm


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--gap", type=int, default=4)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    import infill

    lm = build_model(args.device)
    timer = ForwardTimer(lm)
    infill.fill(lm, SENTENCES[0], gap=args.gap, beam_size=5, top_k=1)   # warm-up
    print(f"device={args.device} threads={torch.get_num_threads()} gap={args.gap} "
          f"model=bert-base config (12x768, vocab 30522)")
    print("| beam | batch | completions/s | s/batch | forward calls/batch | time in forward |")
    print("|---:|---:|---:|---:|---:|---:|")
    for beam in (5, 20):
        for batch in (1, 16):
            texts = [SENTENCES[i % len(SENTENCES)] for i in range(batch)]
            timer.seconds, timer.calls = 0.0, 0
            t0 = time.perf_counter()
            for _ in range(args.repeats):
                infill.fill(lm, texts, gap=args.gap, beam_size=beam, top_k=1)
            wall = time.perf_counter() - t0
            print(f"| {beam} | {batch} | {batch * args.repeats / wall:.2f} | {wall / args.repeats:.3f} "
                  f"| {timer.calls / args.repeats:.0f} | {100 * timer.seconds / wall:.1f}% |", flush=True)


if __name__ == "__main__":
    main()
