"""Start-up cost of the command line, as ratios to ``python -c "import click"`` measured in one run.

Each command runs ``--repeats`` times as a fresh process, the commands interleaved round by round
(so that a busy machine slows them all alike); the table gives each command's median wall time
and its ratio to the median of the click import. The floors say what a model run cannot avoid:
importing torch, and torch + transformers' BERT for a Hugging Face model.

Run it with the Python of the environment infill is installed in (a fresh venv, as
``.ci/run`` makes, is what most users have). Python runs as on a user's machine: with its
bytecode caches (``PYTHONDONTWRITEBYTECODE`` is removed from the environment, and the warm-up
round writes the caches of a source checkout, as ``pip install`` does for an installed package).
Without them every infill module is compiled from source on every start, which measured
`infill run --help` at 2.4x instead of 1.4x.

    OMP_NUM_THREADS=1 python benchmarks/startup.py --repeats 7
    python benchmarks/startup.py --repeats 3 --quick      # help and option errors only

Writes ``benchmarks/results/startup.md`` (``--out``) and prints it.
"""
from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import ROOT, write_table

from infill_cli.main import COMMANDS

PY = sys.executable
_SCRIPT = Path(PY).with_name("infill")
INFILL = [str(_SCRIPT)] if _SCRIPT.is_file() else [PY, "-m", "infill_cli.main"]
"""The installed ``infill`` executable beside this Python (a venv's), else the module."""
HAMLET = "To be, or not to ___, that is the question."

BASELINE = ("python -c 'import click'", [PY, "-c", "import click"])
QUICK = [
    ("infill --help", [*INFILL, "--help"]),
    *[(f"infill {name} --help", [*INFILL, name, "--help"]) for name in sorted(COMMANDS)],
    ("infill run --beam 0 x (option error)", [*INFILL, "run", "--beam", "0", "x"]),
]
MODEL_RUNS = [
    ("floor: python -c 'import torch'", [PY, "-c", "import torch"]),
    ("floor: import torch + transformers' BERT",
     [PY, "-c", "import torch; from transformers import BertForMaskedLM"]),
    (f"infill run '{HAMLET}' (builtin:english)", [*INFILL, "run", HAMLET]),
    ("infill run --model builtin:greek 'μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ??ς'",
     [*INFILL, "run", "--model", "builtin:greek", "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ??ς"]),
]


def wall(cmd: list[str], env: dict) -> float:
    """Seconds of one run of ``cmd`` (output discarded; any exit code: errors are measured too)."""
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def measure(commands: list[tuple[str, list[str]]], repeats: int, env: dict) -> dict[str, float]:
    """Median wall time of each command; one warm-up round first (file caches)."""
    times: dict[str, list[float]] = {name: [] for name, _ in commands}
    for round_ in range(repeats + 1):
        for name, cmd in commands:
            t = wall(cmd, env)
            if round_:
                times[name].append(t)
    return {name: statistics.median(ts) for name, ts in times.items()}


def table(medians: dict[str, float], repeats: int) -> list[str]:
    base = medians[BASELINE[0]]
    lines = [f"Median wall time of {repeats} runs each (fresh processes, interleaved), "
             "and the ratio to the first row.", "",
             "| command | median s | × `import click` |", "|---|---:|---:|"]
    for name, t in medians.items():
        lines.append(f"| `{name}` | {t:.3f} | {t / base:.2f} |")
    return lines + [""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="help and option errors only")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "startup.md")
    a = ap.parse_args()
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    commands = [BASELINE, *QUICK, *([] if a.quick else MODEL_RUNS)]
    medians = measure(commands, a.repeats, env)
    cmd = ["python", "benchmarks/startup.py", "--repeats", str(a.repeats)] + (["--quick"] if a.quick else [])
    write_table(table(medians, a.repeats), [shlex.join(cmd)], a.out)


if __name__ == "__main__":
    main()
