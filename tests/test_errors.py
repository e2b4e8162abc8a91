"""Errors carry the request fields they name; each front end words them (the CLI as its flags).

The library's messages speak the API's field names (quoted: ``'data_root'``) and say which
fields they name (``field=``); no library message names a command-line flag.
"""
from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import click
from click.testing import CliRunner

from infill.config import DecodeConfig
from infill.errors import ConfigError, InputError
from infill_cli.errors import clean_errors

ROOT = Path(__file__).resolve().parents[1]

FLAG = re.compile(r"(?<![\w`-])--[a-z][a-z-]*")
OTHER_TOOLS = re.compile(r"`[^`]*`")
"""A shell command of another tool (``hf download X --local-dir DIR``) may name its own flags."""
PENDING: tuple[str, ...] = ()
"""Files whose messages still name flags: new modules of a change in progress (issue 18 items 1
and 2: the training request, the jobs layer)."""


def test_an_error_words_only_the_fields_it_names():
    e = ConfigError("no 'model' entry; pass 'data_root' DIR or 'out'", field=("data_root", "out"))
    assert e.fields() == ("data_root", "out")
    assert e.worded(lambda f: f"<{f}>") == "no 'model' entry; pass <data_root> DIR or <out>"
    assert InputError("first\nsecond").message() == "first"
    assert InputError().message() == "InputError"


def test_fields_survive_pickling():
    e = pickle.loads(pickle.dumps(ConfigError("bad 'out'", field=("out", "overwrite"), line=3)))
    assert (type(e), str(e), e.fields(), e.line) == (ConfigError, "bad 'out'",
                                                      ("out", "overwrite"), 3)


def _command(error):
    @click.command()
    @click.option("--data-dir", "data_root", default=None)
    @clean_errors
    def cmd(data_root):
        raise error

    return cmd


def test_the_cli_words_fields_as_its_flags():
    runner = CliRunner()
    r = runner.invoke(_command(InputError("corpus 'x' not found; pass 'data_root' DIR",
                                          field="data_root")), [])
    assert r.exit_code == 2 and r.output == "Error: corpus 'x' not found; pass --data-dir DIR\n"
    r = runner.invoke(_command(ConfigError("use another 'out', or 'overwrite'",
                                           field=("beam_size", "out", "overwrite"))), [])
    assert r.output == "Error: use another --out, or --overwrite\n"     # no option: dashes


def test_the_swap_ablation_names_the_pivot_field():
    try:
        DecodeConfig(scorer="swap", pivot="the")
    except ConfigError as e:
        assert e.fields() == ("pivot",) and "'pivot' does not apply" in str(e)
    else:
        raise AssertionError("swap with a pivot was accepted")


def _flag_messages(path: Path, source: str | None = None) -> list[str]:
    """``line: text`` of every raise or warning in ``path`` whose message names a flag."""
    out = []
    source = path.read_text(encoding="utf-8") if source is None else source
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "warn" or \
                isinstance(node, ast.Raise):
            text = "".join(n.value for n in ast.walk(node)
                           if isinstance(n, ast.Constant) and isinstance(n.value, str))
            if FLAG.search(OTHER_TOOLS.sub("", text)):
                out.append(f"{path}:{node.lineno}: {text[:80]}")
    return out


def test_no_library_error_names_a_flag():
    found = [m for p in sorted((ROOT / "infill").rglob("*.py"))
             if not str(p.relative_to(ROOT)).startswith(PENDING) for m in _flag_messages(p)]
    assert found == []
    sample = ('raise ConfigError(f"use --beam-size {b}")\n'
              'raise ModelLoadError("offline: `hf download x --local-dir DIR`, then \'model\' DIR")\n'
              'warnings.warn("pass --no-window to refuse")\n')
    assert _flag_messages(Path("m.py"), sample) == ["m.py:1: use --beam-size ",
                                                    "m.py:3: pass --no-window to refuse"]
