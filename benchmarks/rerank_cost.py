"""What reranking by score and PLL costs (``rerank="pll"``, infill/filling/reranking.py): seconds
to restore the first N editors' supplements of a corpus's validation split with it and without,
batch by batch in turn (one run: a ratio).

    OMP_NUM_THREADS=1 python benchmarks/rerank_cost.py --model builtin:latin --corpus EDH_DIR \\
        --files 600 --n 24 --beam 20        # and --beam 5, infill run's default

(EDH_DIR: ``latin/edh_epidoc.tar.xz`` unpacked; results: benchmarks/results/latin_lengths.md.)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import timed_in_turn  # noqa: E402

import infill  # noqa: E402
from infill.bench.epidoc import epidoc_folder, tasks_for  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:latin")
    ap.add_argument("--corpus", required=True, help="'iospe' or a folder of EpiDoc files")
    ap.add_argument("--files", type=int, default=0, help="a seeded sample of the split's files")
    ap.add_argument("--n", type=int, default=24)
    ap.add_argument("--beam", type=int, default=20)
    args = ap.parse_args()
    folder = epidoc_folder(args.corpus)
    if folder is None:
        ap.error(f"--corpus: {args.corpus!r} is neither 'iospe' nor a folder of *.xml")
    torch.set_num_threads(1)
    model = infill.load_model(args.model, device="cpu")
    tasks = tasks_for(folder, "validation", list(range(1, 11)), args.files)[:args.n]
    took = timed_in_turn({"pll": model, "off": model}, [t.text for t in tasks], beam=args.beam,
                         options={"pll": {"rerank": "pll"}, "off": {"rerank": "off"}})
    print(f"{args.model}, {len(tasks)} supplements, beam {args.beam}: reranked "
          f"{took['pll']:.1f} s, not {took['off']:.1f} s, ratio {took['pll'] / took['off']:.2f}")


if __name__ == "__main__":
    main()
