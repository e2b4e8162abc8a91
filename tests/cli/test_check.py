"""``infill check`` through click's runner: the aligned view and table, --json equal to the
library's check, FASTA with --scores (TSV/CSV) and --plot (PNG), EpiDoc notes per line, and
bad input as one line with exit code 2."""
from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

import infill
from infill_cli.main import main


def run(*args: str):
    return CliRunner().invoke(main, ["check", *args])


def test_table_and_aligned_view_mark_the_flagged_positions(bert_dir):
    r = run("--model", bert_dir, "--threshold", "0", "the cats sat on the mat")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("[1] 7 checked, ")
    assert lines[1] == "  the cats sat on the mat"
    want = infill.check(infill.load_model(bert_dir, device="cpu"), ["the cats sat on the mat"],
                        threshold=0.0)[0].result
    marks = "".join("^" if any(s <= i < e for s, e in (p.span for p in want.flagged)) else " "
                    for i in range(len(want.reading.shown))).rstrip()
    assert lines[2] == f"  {marks}"
    rows = [ln for ln in lines if ln.strip() and ln.split()[0].isdigit()]
    assert len(rows) == 7 and [row.split()[1] for row in rows] == [p.written for p in
                                                                   want.positions]
    assert all(row.endswith("FLAG") == p.flagged for row, p in zip(rows, want.positions))
    assert max(map(len, lines)) <= 100


def test_json_is_the_library_check(bert_dir):
    r = run("--model", bert_dir, "--json", "the cat sat", "the dog sat on the mat")
    assert r.exit_code == 0, r.output
    got = [json.loads(line) for line in r.stdout.splitlines()]
    model = infill.load_model(bert_dir, device="cpu")
    want = [c.to_json() for c in infill.check(model, ["the cat sat", "the dog sat on the mat"],
                                              name=bert_dir)]
    assert got == want and [g["id"] for g in got] == ["1", "2"]


def test_a_long_text_is_wrapped_to_100_columns(greek_char_dir):
    text = " ".join(["λογοσ"] * 40)
    r = run("--model", greek_char_dir, "--view", "aligned", "--threshold", "0", text)
    assert r.exit_code == 0, r.output
    assert max(map(len, r.stdout.splitlines())) <= 100
    assert "note: input longer than the model's maximum length" in r.stderr


def test_fasta_scores_tsv_csv_and_plot(esm2_tiny_path, tmp_path):
    fasta = tmp_path / "p.fasta"
    fasta.write_text(">a first\nMKTAYIAKQR\n>b second\nGSHMLE\n", encoding="utf-8")
    tsv, png = tmp_path / "s.tsv", tmp_path / "h.png"
    r = run("--model", esm2_tiny_path, "--json", "--scores", str(tsv), "--plot", str(png),
            str(fasta))
    assert r.exit_code == 0, r.output
    got = [json.loads(line) for line in r.stdout.splitlines()]
    with open(tsv, encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    assert rows[0] == ["id", "position", "written", *"ACDEFGHIKLMNPQRSTVWY"]
    assert len(rows) == 1 + 10 + 6 and rows[1][:3] == ["a", "1", "M"]
    assert [float(v) for v in rows[1][3:]] == pytest.approx(
        got[0]["substitutions"]["scores"][0], abs=1e-4)
    for name in ("h-a.png", "h-b.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    csv_path = tmp_path / "s.csv"
    r = run("--model", esm2_tiny_path, "--scores", str(csv_path), "MKTAYIAKQR")
    assert r.exit_code == 0 and csv_path.read_text().startswith("id,position,written,A,C")


def test_an_edition_gets_a_note_per_line(greek_char_dir, tmp_path):
    from tests.test_check import EDITION
    f = tmp_path / "e.xml"
    f.write_text(EDITION, encoding="utf-8")
    r = run("--model", greek_char_dir, "--threshold", "0", str(f))
    assert r.exit_code == 0, r.output
    assert "  line 1: doubtful α (" in r.stdout and "  line 2: doubtful δ (" in r.stdout
    r = run("--model", greek_char_dir, "--json", str(f))
    assert json.loads(r.stdout)["shown"] == "ανεθηκεν τωι δαμωι ??"
    r = run("--model", greek_char_dir, "--threshold", "0", "--out", str(tmp_path / "o"), str(f))
    assert r.exit_code == 0, r.output
    written = (tmp_path / "o" / "e.xml").read_text(encoding="utf-8")
    assert written.count('<note type="doubtful" resp="#infill">line ') == 2
    assert f"wrote {tmp_path / 'o' / 'e.xml'}" in r.stderr
    r = run("--model", greek_char_dir, "--out", str(tmp_path), str(f))
    assert r.exit_code == 2 and "is the input file itself" in r.stderr


def test_out_is_for_editions_only(greek_char_dir, tmp_path):
    r = run("--model", greek_char_dir, "--out", str(tmp_path), "λογοσ")
    assert r.exit_code == 2 and r.stderr.strip() == \
        "Error: --out is for EpiDoc files (TEI XML) only"


@pytest.mark.parametrize("args, message", [
    (["", ], "Error: input 1: empty input: nothing to check"),
    (["--threshold", "-1", "x"], "'--threshold'"),
    (["--threshold", "nan", "x"], "'--threshold'"),
    (["--plot", "/no/such/folder/x.png", "the cat"], "--plot: cannot write"),
    (["--scores", "/no/such/folder/x.tsv", "the cat"], "--scores: cannot write"),
])
def test_bad_input_is_one_line_and_exit_2(bert_dir, args, message):
    r = run("--model", bert_dir, *args)
    assert r.exit_code == 2 and message in r.stderr
    assert "Traceback" not in r.output and r.stdout == ""


def test_plot_needs_a_substitution_table(bert_dir, tmp_path):
    r = run("--model", bert_dir, "--plot", str(tmp_path / "x.png"), "the cat")
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines() == [
        f"Error: --scores and --plot need a model of residues or characters (a substitution "
        f"table per position); {bert_dir} reads tokens"]


def test_a_text_of_only_gaps_is_refused(greek_char_dir):
    r = run("--model", greek_char_dir, "??? ___")
    assert r.exit_code == 2 and "only gaps" in r.stderr and "Traceback" not in r.output
