"""stdout and stderr under Unix conventions, driven as a user does (a subprocess of
``python -m infill``): a full or closed stdout is one ``Error: cannot write output: ...`` line
and exit code 2; a reader that goes away (``| head``) ends quietly; an output encoding that
cannot show Greek gets backslash escapes and one note, never a UnicodeEncodeError."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

TEXT = "α?β γδ"


def infill(args, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", **kw.pop("env", {})}
    return subprocess.run([sys.executable, "-m", "infill", *args], env=env, timeout=60, **kw)


def one_error(stderr: bytes, words: str) -> None:
    lines = stderr.decode().strip().splitlines()
    assert lines == [f"Error: {words}"], stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_full_stdout_is_one_error_line(greek_char_dir):
    with open("/dev/full", "w") as full:
        r = infill(["run", "-m", greek_char_dir, TEXT], stdout=full, stderr=subprocess.PIPE)
    assert r.returncode == 2
    one_error(r.stderr, "cannot write output: No space left on device")


def test_closed_stdout_is_one_error_line(greek_char_dir):
    r = infill(["run", "-m", greek_char_dir, TEXT], stdout=subprocess.DEVNULL,
               stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1))
    assert r.returncode == 2
    one_error(r.stderr, "cannot write output: standard output is closed")


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_a_reader_that_goes_away_ends_quietly(greek_char_dir, extra):
    args = ["run", "-m", greek_char_dir, *extra, *[TEXT] * 40]
    p = subprocess.Popen([sys.executable, "-m", "infill", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    p.stdout.read(1)
    p.stdout.close()                       # `| head -c 1`
    err = p.stderr.read()
    assert p.wait(timeout=60) == 0 and err == b"", err


@pytest.mark.parametrize("encoding", ["latin-1", "ascii:strict"])
def test_an_encoding_without_greek_gets_escapes_and_one_note(greek_char_dir, encoding):
    r = infill(["run", "-m", greek_char_dir, "--json", TEXT], capture_output=True,
               env={"PYTHONIOENCODING": encoding})
    assert r.returncode == 0, r.stderr
    assert b"Traceback" not in r.stderr
    out = r.stdout.decode("latin-1")
    assert "\\u03b1" in out or "α" in r.stdout.decode("utf-8", "replace")
    notes = [line for line in r.stderr.decode().splitlines() if "PYTHONIOENCODING" in line]
    assert len(notes) <= 1


def test_latin1_table_is_escaped_with_a_note(greek_char_dir):
    r = infill(["run", "-m", greek_char_dir, TEXT], capture_output=True,
               env={"PYTHONIOENCODING": "latin-1"})
    assert r.returncode == 0 and b"Traceback" not in r.stderr
    assert "\\u03b1" in r.stdout.decode("latin-1")
    assert r.stderr.decode().strip().splitlines()[-1] == (
        "Warning: the output encoding (latin-1) cannot show some characters; they are written "
        "as backslash escapes (set PYTHONIOENCODING=utf-8 to see them)")
