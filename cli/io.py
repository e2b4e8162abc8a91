"""Reading the commands' inputs and writing their results (terminal, JSON Lines, FASTA)."""
from __future__ import annotations

import json
import math
import os
import sys
import warnings
from contextlib import contextmanager

import click

from . import status
from infill.data.fasta import format_fasta
from infill.errors import LongInputWarning
from infill.jobs.inputs import Input, read_inputs
from infill.lazy import LazyModule

antibody = LazyModule("infill.models.antibody")   # its cache folder; torch, so on first use


Record = Input
"""One input as the commands print it (the jobs layer's :class:`~infill.jobs.inputs.Input`)."""


def read_records(texts: tuple[str, ...], input_file: str | None, what: str = "input") -> list[Input]:
    """The command's inputs (:func:`infill.jobs.inputs.read_inputs`; stdin counts as given
    only when it is not a terminal)."""
    terminal = input_file is None and (sys.stdin is None or sys.stdin.isatty())
    return read_inputs(texts, input_file, what, stdin_is_terminal=terminal)


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
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LongInputWarning)
            yield


def use_color() -> bool:
    """ANSI colours only where click would keep them (a terminal, or a test runner asking for
    colour), and never with NO_COLOR set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    # read off click.utils at each call: click's test runner replaces it (color=True)
    return not click.utils.should_strip_ansi(sys.stdout)


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
"""The table view's columns, explained on a terminal's stderr the first time (see
:func:`write_legend`)."""

LEGEND_AGAIN = "(shown once; --legend shows it again)"


def legend_marker():
    """The file whose presence says the legend was shown: in infill's cache folder
    (``$INFILL_CACHE``, else ``$XDG_CACHE_HOME/infill``, else ``~/.cache/infill``)."""
    return antibody.cache_dir() / "legend-shown"


def write_legend(asked: bool) -> None:
    """:data:`TABLE_LEGEND` on stderr, wrapped: when ``asked`` (--legend), else on a terminal
    the first time ever (a marker file remembers it; unwritable: shown again next time)."""
    if not asked:
        marker = legend_marker()
        if not status.interactive() or marker.exists():
            return
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
        except OSError:
            pass
    click.echo("\n".join(status.wrap(f"{TABLE_LEGEND} {'' if asked else LEGEND_AGAIN}".strip())),
               err=True)


def write_table(n: int, rec: Record, comps, color: bool, legend: bool = False) -> None:
    """Ranked completions; filled characters coloured by confidence (without colour: a ``conf``
    column of confidence digits, one per filled character). The first table of a run is preceded
    by the legend (:func:`write_legend`; ``legend``: --legend)."""
    if n == 1:
        write_legend(legend)
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
    for r, c in enumerate(comps, 1):
        click.echo(format_fasta(f"{rec.id}|rank={r}|score={c.score:.4f}|model={model}", c.text),
                   nl=False)


def json_line(obj: dict) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False, allow_nan=False))
