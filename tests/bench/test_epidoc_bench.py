"""``infill bench`` on a folder of EpiDoc files (infill.bench.epidoc): the editors' supplements
as examples, Ithaca's character error rate, the epidoc report, resuming."""
from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from infill.bench.epidoc import cer, edit_distance
from infill_cli.main import main

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "epidoc"


def _brute_distance(a: str, b: str) -> int:
    """Edit distance by breadth-first search over single edits (tiny strings only)."""
    alphabet = set(a) | set(b)
    frontier, seen, d = {a}, {a}, 0
    while b not in frontier:
        nxt = set()
        for s in frontier:
            for i in range(len(s) + 1):
                nxt |= {s[:i] + c + s[i:] for c in alphabet}
                if i < len(s):
                    nxt.add(s[:i] + s[i + 1:])
                    nxt |= {s[:i] + c + s[i + 1:] for c in alphabet}
        frontier = nxt - seen
        seen |= nxt
        d += 1
    return d


@pytest.mark.parametrize("a, b", list(itertools.product(["", "α", "αβ", "βα", "αγβ"], repeat=2)))
def test_edit_distance_equals_brute_force(a, b):
    assert edit_distance(a, b) == _brute_distance(a, b)


def test_cer_is_distance_over_gold_length():
    assert cer("τεμ", "τομ") == pytest.approx(1 / 3)
    assert cer("", "αβ") == 1.0 and cer("αβ", "αβ") == 0.0


def test_bench_on_epidoc_folder(tmp_path, greek_char_dir):
    data = tmp_path / "eds"
    data.mkdir()
    for k in range(3):
        shutil.copy(FIX / "handmade.xml", data / f"{k}.xml")
    out = tmp_path / "out"
    args = ["bench", str(data), "--model", greek_char_dir, "--gap-lengths", "5,9", "--methods",
            "hcb-l2r,standard-l2r", "--beam-size", "2", "-k", "1,2", "--out", str(out),
            "--no-progress", "-n", "0"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    # 3 files x 2 supplements (5 and 9 characters) x 2 methods
    assert len(rows) == 12
    assert sorted({(r["n"], r["gold_fill"]) for r in rows}) == [(5, "ωνιον"), (9, "του δημου")]
    rep = json.loads((out / "epidoc.json").read_text())
    for method, cell in rep["methods"].items():
        mine = [r for r in rows if r["method"] == method]
        assert cell["all"]["n"] == 6
        assert cell["all"]["cer"] == pytest.approx(
            sum(cer(r["fill"], r["gold_fill"]) for r in mine) / 6)
        assert cell["all"]["top1"] == pytest.approx(
            100 * sum(r["fill"] == r["gold_fill"] for r in mine) / 6)
        assert cell["whole_words"]["n"] == 3           # "τοῦ δήμου" is two whole words
        assert set(cell["by_length"]) == {"5", "9"}
    assert rep["paired"][0]["n"] == 6
    assert "| hcb-l2r/b2 |" in (out / "epidoc.md").read_text()
    # resuming the finished run adds nothing
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert len((out / "results.jsonl").read_text().splitlines()) == 12


def test_bench_split_of_a_small_folder_is_refused_cleanly(tmp_path, greek_char_dir):
    data = tmp_path / "eds"
    data.mkdir()
    shutil.copy(FIX / "handmade.xml", data / "a.xml")
    r = CliRunner().invoke(main, ["bench", str(data), "--model", greek_char_dir, "--split",
                                  "test", "--out", str(tmp_path / "o"), "--no-progress"])
    assert r.exit_code == 2 and r.output.startswith("Error: ")
