"""Reading the commands' inputs and writing their results (terminal, JSON Lines, FASTA)."""
from __future__ import annotations

import math
import os
import sys
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import click

from .status import say
from infill.data.files import check_length, check_text, read_input
from infill.errors import InputError


@dataclass(frozen=True)
class Record:
    """One input: an ``id`` (FASTA header's first word, else its line or argument number), the
    ``text`` and, for FASTA, the whole ``header``; ``error`` when it cannot be used (then
    ``text`` may be None); ``notes`` on how it was read (e.g. Leiden sigla read loosely)."""

    id: str
    text: str | None
    header: str | None = None
    error: str | None = None
    notes: tuple[str, ...] = ()


FILE_SUFFIXES = (".fa", ".fasta", ".faa", ".fas", ".txt", ".tsv")


def names_a_file(arg: str) -> bool:
    """Whether a lone argument is the name of an existing input file (FASTA or text suffix)."""
    if len(arg) > 4096 or "\n" in arg or not arg.lower().endswith(FILE_SUFFIXES):
        return False
    try:
        return os.path.isfile(arg)
    except (OSError, ValueError):
        return False


def looks_like_a_file(arg: str) -> bool:
    """An argument without whitespace ending in an input file's suffix (``x.fa``, ``in.txt``)."""
    return len(arg) <= 4096 and arg.lower().endswith(FILE_SUFFIXES) \
        and not any(c.isspace() for c in arg)


def read_records(texts: tuple[str, ...], input_file: str | None, what: str = "input") -> list[Record]:
    """Inputs from the arguments (a lone argument naming an existing .fa/.fasta/.txt file is
    read as that file), else from --input FILE ('-' = stdin) or piped stdin: FASTA records when
    the text is FASTA, else one input per non-empty line."""
    from infill.data.fasta import is_fasta, parse_fasta
    if len(texts) == 1 and input_file is None and names_a_file(texts[0]):
        texts, input_file = (), texts[0]
    if texts and input_file is not None:
        raise InputError(f"give {what}s either as arguments or with --input, not both")
    if texts:
        for i, t in enumerate(texts, 1):
            if looks_like_a_file(check_length(check_text(t, f"argument {i}"), f"argument {i}")) \
                    and not os.path.exists(t):
                raise InputError(f"argument {i} names a file that does not exist: {t!r} (files "
                                 f"are read with --input FILE; a text needs a space or no "
                                 f"file suffix)")
        return [Record(str(i), t) for i, t in enumerate(texts, 1)]
    if input_file is None or input_file == "-":
        if input_file is None and (sys.stdin is None or sys.stdin.isatty()):
            raise InputError(f"no {what}: give TEXT, --input FILE, or pipe lines on stdin")
    raw, name = read_input(input_file)       # bounded: an endless device or pipe is refused
    if is_fasta(raw):       # a record without sequence is that record's error, never dropped
        return [Record(r.id, check_length(r.sequence, f"{name} record {r.id!r}"), r.header)
                if r.sequence else Record(r.id, None, r.header, error=f"FASTA record {r.id!r} "
                                          f"(line {r.line}) has no sequence")
                for r in parse_fasta(raw, name, keep_empty=True)]
    records = [Record(str(n), check_length(line, f"{name} line {n}"))
               for n, line in enumerate(raw.splitlines(), 1) if line.strip()]
    if not records:
        raise InputError(f"empty input: nothing in {name}")
    return records


class LongInputs:
    """A command's handling of inputs longer than the model's maximum length (run, sample,
    rescore, joint: one behaviour).

    By default the library reads such an input in context windows and records them (``windows``
    in its results; a LongInputWarning for API users): :meth:`note` says so once on stderr,
    however many inputs (and torchrun shards) were windowed, and :meth:`quiet` silences the
    library's warning, which the note replaces. With ``--no-window`` the library raises the
    model's length error instead; :meth:`error` adds that --no-window is what turned the windows
    off."""

    def __init__(self, model, no_window: bool,
                 how: str = "decoded with the longest context window centred on the gaps"):
        self.max_length = model.max_length
        self.no_window = bool(no_window)
        self.how = how
        self.noted = False

    @property
    def window(self) -> bool:
        """The library's ``window`` option."""
        return not self.no_window

    def note(self, windowed, what: str = "input", refuse: str = "refuse") -> None:
        """The one ``note:`` line on stderr, the first time ``windowed`` is true."""
        if windowed and not self.noted:
            self.noted = True
            click.echo(f"note: {what} longer than the model's maximum length ({self.max_length} "
                       f"tokens): {self.how} (--no-window to {refuse})", err=True)

    def error(self, message: str | None, field=None) -> str | None:
        """An input's error ``message``; under --no-window, the model's length error (its
        ``field``: ``window``, the option that would read the input in windows) says what it
        turned off."""
        if message and self.no_window and field == "window":
            return (f"{message}, or drop --no-window to read it in context windows of the model's "
                    "maximum length")
        return message

    @staticmethod
    @contextmanager
    def quiet():
        """Within: the library's LongInputWarning is not printed (the command's note says it)."""
        from infill.api import LongInputWarning
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LongInputWarning)
            yield


def use_color() -> bool:
    """ANSI colours only where click would keep them (a terminal, or a test runner asking for
    colour), and never with NO_COLOR set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    from click.utils import should_strip_ansi
    return not should_strip_ansi(sys.stdout)


def confidence_style(prob: float) -> dict:
    """Colour of a filled character by the model's probability of its token when placed."""
    if prob >= 0.5:
        return {"fg": "green", "bold": True}
    if prob >= 0.1:
        return {"fg": "yellow", "bold": True}
    return {"fg": "red", "bold": True}


def confidence_digit(prob: float) -> str:
    """0-9: the tenth of probability a filled character's token had (9 = at least 0.9)."""
    return str(min(9, int(math.floor(max(prob, 0.0) * 10))))


def char_probs(c) -> dict[int, float]:
    """{character offset in c.text: probability} for every filled character of a completion."""
    out: dict[int, float] = {}
    starts = sorted((p.index, p.prob) for p in c.positions)
    for (start, end) in c.spans:
        inside = [(i, pr) for i, pr in starts if start <= i < end] or [(start, float("nan"))]
        for off in range(start, end):
            out[off] = next((pr for i, pr in reversed(inside) if i <= off), inside[0][1])
    return out


def styled_text(c, color: bool) -> str:
    """The completion's text, each filled character coloured by its confidence."""
    if not color:
        return c.text
    probs = char_probs(c)
    return "".join(click.style(ch, **confidence_style(probs[i])) if i in probs else ch
                   for i, ch in enumerate(c.text))


def fill_digits(c) -> str:
    """Confidence digits of a completion's filled characters, gap by gap ('/' between gaps)."""
    probs = char_probs(c)
    return "/".join("".join(confidence_digit(probs.get(off, 0.0)) for off in range(s, e))
                    for s, e in c.spans)


TABLE_LEGEND = ("score: the decoder's sum of update terms (standard: log-probabilities; HCB: "
                "log-ratios against the pivot, so it can be positive; only differences between "
                "ranks matter); rank score: the --length-score of completions of different "
                "lengths; conf: one digit per filled character, the tenth of probability its "
                "token had when placed (9 = at least 0.9; in colour: the character's colour)")
"""The table view's columns, explained once per run (on a terminal's stderr)."""


def write_table(n: int, rec: Record, comps, color: bool) -> None:
    """Ranked completions; filled characters coloured by confidence (without colour: a ``conf``
    column of confidence digits, one per filled character). The first table of a run is preceded
    by :data:`TABLE_LEGEND` on a terminal."""
    if n == 1:
        say(TABLE_LEGEND)
    click.echo(f"[{n}] {rec.header}" if rec.header else f"[{n}] {rec.text}")
    if rec.header:
        click.echo(f"    {rec.text}")
    # gaps of several lengths are ranked by the length score (rank_score), not the beam score
    by_length = bool(comps) and comps[0].rank_score is not None
    click.echo(f"  {'rank':>4}  {'rank score' if by_length else 'score':>10}  " +
               ("completion" if color else f"{'conf':<8}  completion"))
    for r, c in enumerate(comps, 1):
        value = c.rank_score if by_length else c.score
        if color:
            click.echo(f"  {r:>4}  {value:>10.4f}  {styled_text(c, color)}", color=color)
        else:
            click.echo(f"  {r:>4}  {value:>10.4f}  {fill_digits(c):<8}  {c.text}")
    click.echo()


def write_aligned(n: int, rec: Record, comps, color: bool, context: int = 12) -> None:
    """The gap region of each hypothesis stacked under the input; differing characters (vs the
    top-ranked completion) highlighted; a row of confidence digits (0-9) under each fill."""
    click.echo(f"[{n}] {rec.header or rec.text}")
    if not comps:
        click.echo("  (no completion)\n")
        return
    top = comps[0]
    for k, (s0, e0) in enumerate(top.spans):
        click.echo(f"  gap {k + 1}:" if len(top.spans) > 1 else "", nl=len(top.spans) > 1)
        left0 = max(0, s0 - context)
        ref_fill = top.text[s0:e0]
        masked = top.text[left0:s0] + "?" * (e0 - s0) + top.text[e0:e0 + context]
        click.echo(f"  {'':>4}  {'input':>10}  {'…' if left0 else ' '}{masked}")
        for r, c in enumerate(comps, 1):
            s, e = c.spans[k]
            left = max(0, s - context)
            probs = char_probs(c)
            fill = ""
            digits = ""
            marks = ""
            for off in range(s, e):
                ch = c.text[off]
                differs = off - s >= len(ref_fill) or ref_fill[off - s] != ch
                if color:
                    style = confidence_style(probs.get(off, 0.0))
                    fill += click.style(ch, underline=differs and r > 1, **style)
                else:
                    fill += ch
                digits += confidence_digit(probs.get(off, 0.0))
                marks += "^" if differs and r > 1 else " "
            row = c.text[left:s] + fill + c.text[e:e + context]
            click.echo(f"  {r:>4}  {c.score:>10.4f}  {'…' if left else ' '}{row}", color=color)
            if not color:
                pad = " " * (len(c.text[left:s]) + 1)
                click.echo(f"  {'':>4}  {'conf':>10}  {pad}{digits}")
                if marks.strip():      # without colour, the characters that differ from rank 1
                    click.echo(f"  {'':>4}  {'differs':>10}  {pad}{marks}")
    click.echo()


def write_fasta(rec: Record, comps, model: str) -> None:
    from infill.data.fasta import format_fasta
    for r, c in enumerate(comps, 1):
        click.echo(format_fasta(f"{rec.id}|rank={r}|score={c.score:.4f}|model={model}", c.text),
                   nl=False)


def json_line(obj: dict) -> None:
    import json

    click.echo(json.dumps(obj, ensure_ascii=False, allow_nan=False))
