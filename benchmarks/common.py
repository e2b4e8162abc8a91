"""Helpers shared by the benchmark scripts: run ``infill bench`` and read its summaries."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench"
BUILTINS = ("english", "greek", "protein")

SPELLINGS = {
    "edition": lambda text: text,
    "capitals": lambda text: text.upper().replace("U", "V"),
    "u": lambda text: text.replace("v", "u"),
    "interpuncts": lambda text: text.replace(" ", "\u00b7"),
    "continua": lambda text: re.sub(r"\s+", "", text),
    "majuscule": lambda text: re.sub(r"\s+", "", unicodedata.normalize(
        "NFC", re.sub(r"[\u0300-\u036f]", "", unicodedata.normalize("NFD", text))).upper()
        .replace("\u03a3", "\u03f9")),
    "adscript": lambda text: unicodedata.normalize(
        "NFC", unicodedata.normalize("NFD", text).replace("\u0345", "\u03b9")),
}
"""How a Latin text is typed: as its edition writes it, in capitals with V for u and v (read off
the stone), with u for both in lowercase and V for both as a capital (as many editions of
literature write it: ``Valeria uixit annis XXV``), or with its words divided by interpuncts
(``D·M·Iulia·Felix``). A Greek text as a diplomatic transcript gives the stone: with no word
division (``continua``), and in capitals without accents or breathings, with the lunate sigma
Ϲ (``majuscule``: ``ΗΒΟΥΛΗΚΑΙΟΔΗΜΟϹ``); or with each iota subscript written beside its vowel,
as the stone writes it (``adscript``: ``τῆι``, not ``τῇ``; the ``?`` unchanged). Without word
division a hidden supplement's ``?`` are its letters alone (:func:`spelled`)."""


def spelled(text: str, gold: str, spelling: str) -> str:
    """``text`` (with one run of ``?`` for ``gold``) typed as ``spelling``; where the spelling
    drops word spaces, the run loses the ``?`` of the gold's spaces."""
    out = SPELLINGS[spelling](text)
    if spelling in ("continua", "majuscule") and " " in gold:
        i = out.index("?")
        out = out[:i] + "?" * len(gold.replace(" ", "")) + out[i + len(gold):]
    return out


def infill_bench(args: list[str]) -> dict:
    """Run ``infill bench ARGS`` (echoing the exact command) and return its summary.json."""
    cmd = ["infill", "bench", *args]
    print("$ " + shlex.join(cmd), flush=True)
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    subprocess.run([sys.executable, "-m", "infill_cli.main", "bench", *args], cwd=ROOT, env=env,
                   check=True, stdout=subprocess.DEVNULL)
    out = Path(args[args.index("--out") + 1])
    out = out if out.is_absolute() else ROOT / out
    return json.loads((out / "summary.json").read_text())


def cells(summary: dict) -> dict[tuple[str, object], dict]:
    """{(method key, n): cell} of a summary."""
    return {(c["method"], c["n"]): c for c in summary["cells"]}


def fmt(x, digits: int = 1) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def write_table(lines: list[str], cmds: list[str], table: Path) -> None:
    """Append the exact commands to a markdown table, write it to ``table`` and print it."""
    lines = lines + ["Commands:", "", "```"] + cmds + ["```", ""]
    table.parent.mkdir(parents=True, exist_ok=True)
    table.write_text("\n".join(lines))
    print("\n".join(lines))


def timed_in_turn(models: dict, texts: list[str], batch: int = 8, beam: int = 10,
                  options: dict[str, dict] | None = None) -> dict[str, float]:
    """Seconds each of ``models`` (name -> model) takes to restore ``texts`` (``?`` per lost
    letter), ``batch`` together, the models batch by batch in turn (one run: their ratio);
    ``options``: name -> more keywords of :func:`infill.fill` for that name."""
    import time

    import infill

    took = dict.fromkeys(models, 0.0)
    for k in range(0, len(texts), batch):
        for name, model in models.items():
            t0 = time.perf_counter()
            infill.fill(model, texts[k:k + batch], gap=1, marker="?", beam_size=beam, top_k=beam,
                        **(options or {}).get(name, {}))
            took[name] += time.perf_counter() - t0
    return took
