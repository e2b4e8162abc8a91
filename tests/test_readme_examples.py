"""Every ``infill ...`` command of the README's and docs/*.md's ```bash blocks runs, and its top
answer is one a reader of that field calls sensible (what each example is meant to show is in
the comment of its check); the README's ``$ infill ...`` transcripts are what the command prints
now. The commands of ``--help`` are checked the same way in tests/cli/test_help_examples.py,
whose helpers run these.

A command that names the reader's own files is a placeholder and is skipped, by one rule
(:func:`placeholder`): an argument that is no path of the repository and is written in CAPS
(``MY_BERT_DIR``, ``DIR``, ``$INFILL_DATA/...``) or starts with ``~`` or ``MY_``."""
from __future__ import annotations

import importlib.util
import json
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_spec = importlib.util.spec_from_file_location(
    "help_examples", ROOT / "tests" / "cli" / "test_help_examples.py")
_help = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_help)
run_line, top_row, top_sample = _help.run_line, _help.top_row, _help.top_sample

FENCE = re.compile(r"^```(\w*)\s*$")


def _blocks(path: Path):
    """(language, first line number, lines) of every fenced block of ``path``."""
    lang, start, body = None, 0, []
    for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = FENCE.match(line)
        if m and lang is None:
            lang, start, body = m.group(1), k + 1, []
        elif line.startswith("```") and lang is not None:
            yield lang, start, body
            lang = None
        elif lang is not None:
            body.append(line)


def _command(line: str) -> str:
    """A shell line as written, without its comment."""
    words = shlex.split(line, comments=True)
    cut = line.find("#")
    while cut >= 0 and _split(line[:cut]) != words:      # a '#' inside quotes is no comment
        cut = line.find("#", cut + 1)
    return " ".join((line if cut < 0 else line[:cut]).split())


def _split(text: str) -> list[str] | None:
    """``text``'s shell words; None when it ends inside quotes."""
    try:
        return shlex.split(text)
    except ValueError:
        return None


def examples() -> list[tuple[str, str]]:
    """(where, command) of every ``infill`` line of a ```bash block (continuations joined)."""
    found = []
    for path in DOCS:
        for lang, start, body in _blocks(path):
            if lang != "bash":
                continue
            k = 0
            while k < len(body):
                first, line = k, body[k]
                while line.rstrip().endswith("\\") and k + 1 < len(body):
                    k += 1
                    line = line.rstrip()[:-1] + " " + body[k].strip()
                k += 1
                if line.strip().startswith("infill "):
                    found.append((f"{path.relative_to(ROOT)}:{start + first}",
                                  _command(line)))
    return found


def transcripts(path: Path = ROOT / "README.md") -> list[tuple[str, str, list[str]]]:
    """(where, command, printed lines) of every ``$ infill ...`` transcript of ``path``; a last
    line ``...`` means the output goes on."""
    found = []
    for _, start, body in _blocks(path):
        for k, line in enumerate(body):
            if line.startswith("$ infill "):
                rest = body[k + 1:]
                end = next((j for j, x in enumerate(rest) if x.startswith("$ ")), len(rest))
                found.append((f"{path.relative_to(ROOT)}:{start + k}",
                              _command(line[2:]), rest[:end]))
    return found


CAPS = re.compile(r"[A-Z][A-Z0-9_]+")


def placeholder(command: str) -> str | None:
    """The argument of ``command`` that stands for the reader's own file or folder, if any: no
    path of the repository, and written in CAPS or starting with ``~`` or ``MY_``."""
    for word in shlex.split(command)[1:]:
        if word.startswith("-") or (ROOT / word).exists():
            continue
        head = word.lstrip("$").split("/")[0].split(".")[0]
        if word.startswith(("~", "MY_")) or CAPS.fullmatch(head):
            return word
    return None


def fills(out: str) -> list[list[str]]:
    return [json.loads(x)["completions"][0]["fills"] for x in out.splitlines()]


WORLD = "To be, or not to be, that is the question."


def _first_reading(out: str) -> str:
    """The most probable row of ``infill run --readings``' table."""
    return next(line for line in out.splitlines()
                if line.split()[:1] and line.split()[0].replace(".", "", 1).isdigit())


GREEK_CHECKS = {
    # the Iliad's first line: Achilles' name, Homer's genitive Ἀχιλῆος or the nominative
    'infill run --model builtin:greek --view aligned "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ??ς"':
        lambda out: top_row(out).endswith(("Ἀχιλεὺς", "Ἀχιλῆος")),
    # Leiden sigla: [..] is two lost letters, the Odyssey's Muse
    'infill run --model builtin:greek "ἄνδρα μοι ἔννεπε, μ[..]σα, πολύτροπον"':
        lambda out: top_row(out).endswith("ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον"),
    # readings of a decree's formula: the model prefers the Doric δάμωι (its beam finds it too)
    """infill run --model builtin:greek "ἔδοξε τῆι βουλῆι καὶ τῶι [....]ι" --readings """
    """'δήμω|δάμω|δήμο'""": lambda out: _first_reading(out).endswith("δάμω"),
}
CHECKS = {
    # what loads by name: the three builtins first
    "infill models": lambda out: [x.split()[0] for x in out.splitlines()[1:]
                                  if x[:1].strip()][:3] ==
        ["builtin:english", "builtin:greek", "builtin:protein"],
    # Romeo and Juliet 2.2: Shakespeare's "thou"
    'infill run "O Romeo, Romeo! wherefore art ___ Romeo?"':
        lambda out: top_row(out).endswith("wherefore art thou Romeo?"),
    # each line of the demo file, one JSON line each, as data/demo/README.md lists them
    "infill run --input data/demo/english.txt --json": lambda out: fills(out) ==
        [["be"], ["thou"], ["stage"], ["ears"], ["Yorick"], ["discontent"]],
    # As You Like It 2.7 with the standard scorer, best-to-worst order and a wide beam
    "infill run --scorer standard --order best-to-worst --beam 20 -k 10 \"All the world's a "
    '___."': lambda out: top_row(out).endswith("All the world's a stage."),
    **GREEK_CHECKS,
    # a residue limited to I, L or V (a hydrophobic position kept so), and two free ones
    'infill run --model builtin:protein "MAKRVYFLAHGGQ#[ILV]QG??RYFTQKRASEYGLTGWCRNTDNNKVEGEAQ"':
        lambda out: top_row(out).split()[-1][13] in "ILV",
    # AntiBERTy redesigns 10E8's CDR-H3: a full FASTA record, framework kept, no gap left
    "infill run --model antiberty --region cdr3 -k 5 --output-format fasta "
    "data/demo/antibody.fa":
        lambda out: out.startswith(">") and "?" not in out and "WGRGTLVTVSS" in out,
    # the joints of a two-word gap: a pair Shakespeare would write
    'infill joint --model builtin:english "I ___ ___ thee"':
        lambda out: "I will tell thee" in out and "I humbly thank thee" in out,
    # MH over one word: Antony's "ears" has the lowest energy
    'infill sample --sweeps 5 "Friends, Romans, countrymen, lend me your ___"':
        lambda out: top_row(out).endswith("lend me your ears"),
    # the degenerate Gibbs chain over a two-token gap finds "your ears" in 5 sweeps
    'infill sample --gibbs --gap 2 --sweeps 5 "Friends, Romans, countrymen, lend me ___"':
        lambda out: top_row(out).endswith("lend me your ears"),
    # annealed MH restores Peleus' son in the Iliad's first line (unaccented)
    'infill sample --anneal 0.02 --sweeps 10 --model builtin:greek "μηνιν αειδε θεα πηλ??αδεω"':
        lambda out: top_row(out).endswith("πηληιαδεω"),
    # Richard III's discontent has the lower energy, typed or piped from run
    'infill rescore "Now is the winter of our discontent" "Now is the winter of our approach"':
        lambda out: top_row(out).endswith("of our discontent"),
    "infill run --json -k 5 \"Now is the winter of our ___\" | jq -r '.completions[].text' | "
    "infill rescore": lambda out: top_row(out).endswith("of our discontent"),
    # the workbench comes up with its model, on the default address
    "infill serve --model builtin:greek": lambda out: out == "127.0.0.1:8000",
    # infill check: the typo's three word pieces are flagged, nothing else
    'infill check "To be, or not to be, that is the questoin."':
        lambda out: _help.flagged_word(out) == "questoin",
    # a trace that allows η or ι, then a lost letter: Homer's genitive
    'infill run --model builtin:greek "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ#[ηι]?ς"':
        lambda out: top_row(out).endswith("Ἀχιλῆος"),
    # an underdotted δ restored among its look-alikes (α, δ, λ): the decree's δήμωι
    'infill run --model builtin:greek --unclear restore "ἔδοξε τῆι βουλῆι καὶ τῶι δ̣ήμωι"':
        lambda out: top_row(out).endswith("δήμωι"),
    # and the ι of Ἀχιλῖος, where Homer wrote η
    'infill check --model builtin:greek "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῖος"':
        lambda out: _help.flagged_word(out) == "ι",
}
"""Each example's check of its stdout (serve: the address it would listen on)."""

SLOW = {
    "infill run --input data/demo/english.txt --json",
    "infill run --scorer standard --order best-to-worst --beam 20 -k 10 \"All the world's a "
    '___."',
    'infill joint --model builtin:english "I ___ ___ thee"',
    'infill sample --sweeps 5 "Friends, Romans, countrymen, lend me your ___"',
    'infill sample --gibbs --gap 2 --sweeps 5 "Friends, Romans, countrymen, lend me ___"',
    'infill sample --anneal 0.02 --sweeps 10 --model builtin:greek "μηνιν αειδε θεα πηλ??αδεω"',
    "infill run --model antiberty --region cdr3 -k 5 --output-format fasta "
    "data/demo/antibody.fa",
}
"""Examples of more than a few seconds on two CPU cores."""


def _runnable():
    seen = {}
    for where, command in examples():
        if placeholder(command) is None:
            seen.setdefault(command, where)
    return seen


def test_placeholders_are_the_readers_own_files_only():
    assert placeholder("infill run --model MY_BERT_DIR --gap 2 x") == "MY_BERT_DIR"
    assert placeholder("infill run --model ~/models/esm2_t6_8M_UR50D.pt x") == \
        "~/models/esm2_t6_8M_UR50D.pt"
    assert placeholder("infill bench DATA --out DIR") == "DATA"
    assert placeholder("infill train protein $INFILL_DATA/protein/hypf.fa") is not None
    assert placeholder('infill run --input data/demo/english.txt "I ___ ___ thee"') is None
    assert placeholder('infill run --model builtin:protein "MKV??LLA"') is None


def test_every_example_has_its_check():
    runnable = _runnable()
    assert sorted(runnable) == sorted(CHECKS), "an example without its check, or a stale check"


@pytest.mark.parametrize("command", [
    pytest.param(c, marks=pytest.mark.slow) if c in SLOW else c for c in CHECKS])
def test_example_gives_a_sensible_answer(command, monkeypatch):
    out = run_line(command, monkeypatch)
    assert CHECKS[command](out), out


@pytest.mark.parametrize("where, command, printed", [
    pytest.param(*t, marks=pytest.mark.slow) if "antiberty" in t[1] else t
    for t in transcripts()], ids=lambda x: x if isinstance(x, str) and ":" in x else "")
def test_readme_transcript_is_what_the_command_prints(where, command, printed, monkeypatch):
    out = run_line(command, monkeypatch).rstrip("\n").splitlines()
    if printed and printed[-1] == "...":
        printed = printed[:-1]
        out = out[:len(printed)]
    assert [_rounded(x) for x in out] == [_rounded(x) for x in printed], where


_NUMBER = re.compile(r"-?\d+\.\d{4}")


def _rounded(line: str) -> str:
    """A transcript line with its scores to three decimals: a batch's padding moves a float
    score in its last digit (a README transcript is not a bit-for-bit check)."""
    return _NUMBER.sub(lambda m: f"{float(m[0]):.3f}", line.rstrip())
