"""Write builtin:latin's lexicon and memories into a model folder, as ``infill train latin``
writes them at the end of a run (:func:`infill.training.latin.write_memories`), from the run's
own training split -- for a snapshot, or to try another size.

    OMP_NUM_THREADS=1 python benchmarks/latin_memories.py --run runs/latin \\
        --out data/models/latin [--chars 600000 --min-count 2]

The training examples are rebuilt exactly as the run made them (its recorded options and
``split.json``; a run stopped before its record: ``--corpus``, ``--inscriptions``,
``--max-length``, ``--copies``); the inscriptions' texts are the training split of ``--inscriptions`` (the run's
folder by default) read by the EpiDoc reader. Prints each file's size.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from infill.data.inscriptions import iospe_split, training_texts
from infill.data.latin import LATIN
from infill.data.splits import build_examples
from infill.training.latin import MEMORY_CHARS, MIN_COUNT, write_memories


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", type=Path, required=True, help="the training run's folder")
    ap.add_argument("--out", type=Path, required=True, help="the model folder to write into")
    ap.add_argument("--inscriptions", default=None)
    ap.add_argument("--corpus", default=None, help="the run's corpus (default: its record)")
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--chars", type=int, default=MEMORY_CHARS)
    ap.add_argument("--min-count", type=int, default=MIN_COUNT)
    args = ap.parse_args()
    t0 = time.perf_counter()
    record = args.run / "train_info.json"     # written when the run ended normally
    info = json.loads(record.read_text()) if record.is_file() else \
        {"model": {"max_length": args.max_length, "inscription_copies": args.copies}}
    options = info["model"]
    corpus = args.corpus or info.get("corpus")
    folder = args.inscriptions or options.get("inscriptions")
    if corpus is None or folder is None:
        raise SystemExit("error: the run has no train_info.json: give --corpus and "
                         "--inscriptions (and --max-length, --copies as it was trained)")
    split = json.loads((args.run / "split.json").read_text())
    examples = build_examples("latin", corpus, {**options, "inscriptions": folder},
                              args.run).examples
    train = [examples[i] for i in split["train"]]
    texts = training_texts(iospe_split(folder)["train"])
    print(f"{len(train):,} training examples, {len(texts):,} training inscriptions "
          f"({sum(map(len, texts)):,} characters); {time.perf_counter() - t0:.0f} s", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    write_memories(args.out, train, texts, LATIN, args.chars, args.min_count)
    for f in ("lexicon.tsv", "phrases.safetensors", "shapes.safetensors", "pairs.tsv"):
        print(f"{f}: {(args.out / f).stat().st_size / 2 ** 20:.1f} MiB")
    print(f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
