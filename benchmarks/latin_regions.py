"""Do builtin:latin's memories transfer across the Roman Empire? (issue 49, item 2: keep what
the cross-corpus measure keeps.) EDH is one database, but its inscriptions come from every
province, and their formulae differ (African epitaphs, the military dedications of the Rhine and
Britain, Dalmatia's families); a province is the closest thing to an unseen corpus inside it.

For each held-out region (one or more EDH provinces, ``--region NAME=PROV,PROV``), the phrase and
shape memories and the word pairs are rebuilt as ``infill train latin`` builds them
(:func:`infill.training.latin.write_context_memories` of the training split's inscriptions) but
**without the region's inscriptions**, and a seeded sample of the region's validation
supplements (1-10 letters, each hidden in turn, as ``iospe_lengths_report.py`` hides them) is
restored three ways:

- ``shipped``: builtin:latin as it ships (its memories hold the region's training inscriptions);
- ``elsewhere``: the same network and lexicon with the memories of the other regions only -- the
  memories facing a region they never saw;
- ``none``: the same network and lexicon, no phrase, shape or pair memory.

``elsewhere`` against ``none`` says whether the memories transfer (the rule: a memory that hurts a
region it never saw is gated or dropped); ``shipped`` against ``elsewhere`` is how much of their
gain is the region's own inscriptions recalled. The network and the lexicon saw every province in
all three (the question is the memories).

    OMP_NUM_THREADS=1 python benchmarks/latin_regions.py --inscriptions EDH_DIR \\
        --region "Africa=Africa Proconsularis,Numidia,Mauretania Caesariensis,Mauretania Tingitana" \\
        --region Britannia=Britannia --region Dalmatia=Dalmatia --per-region 120

The restorations are cached in ``--out`` (``<region>.<config>.jsonl``), the memories built in
``--memories``; a rerun decodes (and builds) only what is missing. Prints one table per region
and one over all of them.
"""
from __future__ import annotations

import argparse
import random
import re
import time
from pathlib import Path

import numpy as np
import torch

import iospe_lengths_report as report
from infill.bench.epidoc import tasks_for
from infill.data.epidoc_corpus import corpus_files, split_files
from infill.data.inscriptions import training_texts
from infill.data.latin import fold_uv
from infill.errors import InputError
from infill.models.phrases import PAIRS_FILE, PHRASES_FILE
from infill.models.shapes import SHAPES_FILE
from infill.training.latin import write_context_memories

PROVINCE = re.compile(r'<placeName type="province"[^>]*>([^<]*)<')


def province(path: Path) -> str | None:
    """The province an EDH file's header names (``None`` where it names none; a doubtful
    ``Numidia?`` counts as Numidia)."""
    m = PROVINCE.search(path.read_text(encoding="utf-8")[:30_000])
    return m.group(1).strip().rstrip("?").strip() if m else None


def parse_region(spec: str) -> tuple[str, frozenset[str]]:
    """``NAME=PROV,PROV`` -> (name, provinces)."""
    name, _, provs = spec.partition("=")
    if not name or not provs:
        report.fail(f"--region {spec!r}: write NAME=PROVINCE[,PROVINCE...]")
    return name.strip(), frozenset(p.strip() for p in provs.split(","))


def region_tasks(every: list, provinces: frozenset[str], per_region: int,
                 where: dict[str, str | None]) -> list:
    """A seeded sample of the supplement tasks ``every`` of the region's files."""
    tasks = [t for t in every if where[Path(t.file).name] in provinces]
    if 0 < per_region < len(tasks):
        tasks = random.Random(0).sample(tasks, per_region)
    return sorted(tasks, key=lambda t: (t.file, t.index))


def decode(name: str, tasks: list, out: Path, mem: Path, beam: int) -> dict[str, dict]:
    """The three configurations' restorations of ``tasks`` (cached under ``out``)."""
    run = lambda config, memory, **kw: report.restore(  # noqa: E731
        "builtin:latin", memory, tasks, out / f"{name}.{config}.jsonl", beam, top_k=20, **kw)
    return {"shipped": run("shipped", "on"),
            "elsewhere": run("elsewhere", "on", phrases=mem / PHRASES_FILE,
                             pairs=mem / PAIRS_FILE, shapes=mem / SHAPES_FILE),
            "none": run("none", "off")}


def tables(name: str, tasks: list, fills: dict[str, dict]) -> list[str]:
    """``elsewhere`` against ``none``, then ``shipped`` against ``elsewhere``."""
    lines = []
    for new, old in (("elsewhere", "none"), ("shipped", "elsewhere")):
        lines += ["", f"**{name}**: `{new}` against `{old}` (the baseline columns)", ""]
        lines += report.table(tasks, fills[new], fills[old])
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inscriptions", type=Path, required=True, help="the EDH folder")
    ap.add_argument("--region", action="append", required=True,
                    help="NAME=PROVINCE[,PROVINCE...] (EDH's province names), repeatable")
    ap.add_argument("--per-region", type=int, default=120)
    ap.add_argument("--beam", type=int, default=20)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/latin_regions"),
                    help="where the restorations are cached")
    ap.add_argument("--memories", type=Path, default=Path("runs/latin_regions"),
                    help="where the memories without each region are built (31 MiB a region)")
    args = ap.parse_args()
    report.FOLD, report.MEASURES = fold_uv, ("top1", "top10", "top20", "cer")
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    regions = [parse_region(spec) for spec in args.region]
    try:
        files = corpus_files(args.inscriptions)
    except InputError as e:
        report.fail(f"--inscriptions: {e}")
    where = {f.name: province(f) for f in files}
    train = split_files(files)["train"]
    validation = tasks_for(args.inscriptions, "validation", list(range(1, 11)))
    every, joined = [], {}
    for name, provinces in regions:
        missing = provinces - set(where.values())
        if missing:
            report.fail(f"--region {name}: EDH names no province {sorted(missing)}")
        tasks = region_tasks(validation, provinces, args.per_region, where)
        mem = args.memories / name
        done = report.cached(args.out / f"{name}.elsewhere.jsonl")
        if not (mem / PAIRS_FILE).is_file() and any(report.key(t) not in done for t in tasks):
            kept = [f for f in train if where[f.name] not in provinces]
            mem.mkdir(parents=True, exist_ok=True)
            write_context_memories(mem, training_texts(kept))
            print(f"{name}: memories of {len(kept):,} training files without it "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
        fills = decode(name, tasks, args.out, mem, args.beam)
        print("\n".join(tables(f"{name} ({', '.join(sorted(provinces))})", tasks, fills)))
        every += tasks
        for config, got in fills.items():
            joined.setdefault(config, {}).update(got)
    if len(regions) > 1:
        print("\n".join(tables("all regions", every, joined)))
    top1 = {c: np.mean(report.scores(every, f)["top1"]) for c, f in joined.items()}
    print("\ntop-1 over all: " + ", ".join(f"{c} {100 * v:.1f}%" for c, v in top1.items()))


if __name__ == "__main__":
    main()
