"""Greek character models side by side on the same held-out windows: 3-character gaps (by
default), HCB and standard beam search, left-to-right, beam 10, top-1 / top-5 / top-10.

    OMP_NUM_THREADS=1 python benchmarks/greek_models.py --models builtin:greek,/tmp/greek-v1 \
        [--split-of builtin:greek] [--examples 300] [--gap-lengths 3] [--beam 10]

The windows are the test part of ``--split-of``'s recorded split (the first model's by default),
written to a temporary file and given to ``infill bench`` for every model, so every model fills
the very same spans. A model whose context is shorter than a window reads the longest window
centred on the gap (as ``infill run`` does), so a short-context model is scored on the same
restorations with less context. Writes one bench run per model under
benchmarks/results/bench/greek_models/<k>/ and the table to benchmarks/results/bench/greek_models.md.

The previous builtin model (4 x 128, 127 characters) is in the project's history:
``git archive bdae545 data/models/greek | tar -x -C /tmp/v1`` gives /tmp/v1/data/models/greek.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from pathlib import Path

from common import RESULTS, cells, fmt, infill_bench, rel, write_table

from infill.bench.stats import paired_bootstrap
from infill.data.splits import heldout_texts

METHODS = ["hcb-l2r", "standard-l2r"]


def _args() -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="comma-separated models (builtin names or "
                                                    "directories)")
    ap.add_argument("--split-of", help="model whose test split gives the windows "
                                       "(default: the first of --models)")
    ap.add_argument("--examples", type=int, default=300)
    ap.add_argument("--gap-lengths", "--gaps", dest="gaps", default="3")
    ap.add_argument("--beam", type=int, default=10)
    ap.add_argument("--out", type=Path, default=RESULTS / "greek_models")
    ap.add_argument("--table", type=Path, default=RESULTS / "greek_models.md")
    ap.add_argument("--overwrite", action="store_true", help="start the runs afresh")
    return ap.parse_args()


def main() -> None:
    a = _args()
    models = a.models.split(",")
    owner = a.split_of or models[0]
    texts = [t.removeprefix("<") for t in heldout_texts(owner, "test")]
    gaps = [int(g) for g in a.gaps.split(",")]
    lines = [f"Greek models on the same {a.examples} of the {len(texts)} test windows of "
             f"`{owner}` (at most {max(map(len, texts))} characters; one gap of each length per "
             f"window, seed 0; beam {a.beam}, left-to-right); exact match of the whole gap (%).", "",
             "| model | context | method | " + " | ".join(
                 f"n={n} top-1 / top-5 / top-10" for n in gaps) + " |",
             "|---|---:|---|" + "---:|" * len(gaps)]
    cmds = []
    # a stable name (content hash) so that an interrupted or finished run resumes against it
    body = "\n".join(texts) + "\n"
    windows = Path(tempfile.gettempdir()) / (
        f"infill-greek-windows-{hashlib.sha256(body.encode()).hexdigest()[:16]}.txt")
    windows.write_text(body, encoding="utf-8")
    for k, model in enumerate(models):
        out = a.out / f"model{k}"
        args = [str(windows), "--format", "lines", "--model", model, "--examples",
                str(a.examples), "--gap-lengths", a.gaps, "--methods", ",".join(METHODS),
                "--beam-size", str(a.beam), "--top-k", "1,5,10", "--device", "cpu",
                "--out", rel(out), "--no-progress"]
        s = infill_bench(args + (["--overwrite"] if a.overwrite else []))
        (a.out / f"model{k}" / "model.txt").write_text(model + "\n")
        cmds.append("infill bench TEST_WINDOWS " + " ".join(args[1:]))
        c = cells(s)
        context = _context(model)
        for m in METHODS:
            key = f"{m}/b{a.beam}"
            row = [" / ".join(fmt(c[(key, n)].get(t)) for t in ("top1", "top5", "top10"))
                   for n in gaps]
            lines.append(f"| `{model}` | {context} | {m} | " + " | ".join(row) + " |")
    lines += ["", f"Paired differences against `{models[0]}` on the same spans (percentage points, "
              "95% paired-bootstrap interval over windows, 10,000 replicates):", "",
              "| model | method | n | Δ top-1 (first − this) | Δ top-10 |", "|---|---|---:|---:|---:|"]
    hits = [_hits(a.out / f"model{k}") for k in range(len(models))]
    for k in range(1, len(models)):
        for m in METHODS:
            for n in gaps:
                key = (f"{m}/b{a.beam}", n)
                common = sorted(set(hits[0][key]) & set(hits[k][key]))
                cols = []
                for t in ("1", "10"):
                    x = [float(hits[0][key][e][t]) for e in common]
                    y = [float(hits[k][key][e][t]) for e in common]
                    d = paired_bootstrap(x, y)
                    cols.append(f"{100 * d['mean_diff']:+.1f} [{100 * d['lo']:+.1f}, "
                                f"{100 * d['hi']:+.1f}]")
                lines.append(f"| `{models[k]}` | {m} | {n} | " + " | ".join(cols) + " |")
    lines.append("")
    write_table(lines, cmds, a.table)


def _hits(run: Path) -> dict:
    """{(method key, n): {example id: {"1": hit, "10": hit}}} from a bench run's rows."""
    out: dict = {}
    for line in (run / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        out.setdefault((r["method"], r["n"]), {})[r["example_id"]] = r["hits"]
    return out


def _context(model: str) -> str:
    import infill
    lm = infill.load_model(model, device="cpu")
    return f"{lm.max_length - 1} characters"


if __name__ == "__main__":
    main()
