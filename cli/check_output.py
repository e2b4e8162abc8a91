"""What ``infill check`` prints and writes: the aligned view (the text as the model reads it,
flagged positions marked, wrapped to fit 100 columns), the table of positions, an edition's
notes per line, the substitution table (TSV/CSV) and its heat map (PNG, matplotlib)."""
from __future__ import annotations

import csv
import math
import os
import textwrap
from pathlib import Path

import click

from .errors import CLIError
from infill.jobs.check import edition_with_notes, line_notes
from infill.lazy import LazyModule

np = LazyModule("numpy")

WIDTH = 96
"""Characters of the text per line of the aligned view (with its 2-space indent: < 100)."""


def _p(logq: float) -> str:
    p = math.exp(logq)
    return f"{p:.3f}" if p >= 0.001 else f"{p:.0e}"


def wrap_spans(text: str, width: int = WIDTH) -> list[tuple[int, int]]:
    """[start, end) of each line of ``text`` broken at spaces (a word longer than ``width``
    is cut) so that no line is longer than ``width``."""
    out, start = [], 0
    while len(text) - start > width:
        cut = text.rfind(" ", start, start + width + 1)
        end = cut if cut > start else start + width
        out.append((start, end))
        start = end + (1 if cut > start else 0)
    out.append((start, len(text)))
    return out


def write_aligned(check, color: bool) -> None:
    """The text as the model reads it, each flagged position marked ``^`` on the line below
    (and in red with colour)."""
    shown = check.reading.shown
    marked = set()
    for p in check.flagged:
        marked.update(range(*p.span))
    for start, end in wrap_spans(shown):
        line = "".join(click.style(shown[i], fg="red", bold=True) if color and i in marked
                       else shown[i] for i in range(start, end))
        click.echo(f"  {line}", color=color)
        marks = "".join("^" if i in marked else " " for i in range(start, end)).rstrip()
        if marks:
            click.echo(f"  {marks}")


def write_table(check, flagged_only: bool = False) -> None:
    """One row per checked position: position, written token and its probability, the best
    alternative and its probability, their log-ratio, and FLAG where flagged."""
    rows = check.flagged if flagged_only else check.positions
    if not rows:
        return
    click.echo(f"  {'pos':>5}  {'written':<12} {'p':>7}  {'best':<12} {'p':>7}  "
               f"{'log-ratio':>9}  flag")
    for p in rows:
        click.echo(f"  {p.position:>5}  {p.written:<12.12} {_p(p.logq):>7}  {p.best:<12.12} "
                   f"{_p(p.best_logq):>7}  {p.log_ratio:>9.2f}  {'FLAG' if p.flagged else ''}"
                   .rstrip())


def write_check(n: int, c, view: str, color: bool) -> None:
    """One input's check: a header line, then the aligned view and/or the table; an EpiDoc
    edition's notes per line."""
    res = c.result
    head = f" {c.input.header}:" if c.input.header else f" {c.id}:" if c.lines is not None else ""
    click.echo(f"[{n}]{head} {len(res.positions)} checked, {len(res.flagged)} flagged "
               f"(log-ratio <= -{res.threshold:g})")
    if view in ("aligned", "both"):
        write_aligned(res, color)
    if c.lines is not None:
        for note in line_notes(c):
            click.echo(textwrap.fill(note["note"], WIDTH + 2, initial_indent="  ",
                                     subsequent_indent="      "))
    if view in ("table", "both"):
        write_table(res, flagged_only=c.lines is not None and view == "both")
    click.echo()


def check_writable(path: str | None, flag: str) -> None:
    """A one-line error unless ``path`` can be written (its folder exists and is writable)."""
    if path is None:
        return
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise CLIError(f"{flag}: {path!r} is a folder; give a file name")
    if not folder.is_dir():
        raise CLIError(f"{flag}: cannot write {path!r}: no folder {str(folder)!r}")
    if not os.access(folder, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise CLIError(f"{flag}: cannot write {path!r}: permission denied")


def per_input(path: str, input_id: str, several: bool) -> str:
    """``path`` for one input: as given for a lone input, else ``STEM-ID.SUFFIX``."""
    if not several:
        return path
    p = Path(path)
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in input_id)[:60]
    return str(p.with_name(f"{p.stem}-{safe}{p.suffix}"))


def write_scores(path: str, checks) -> None:
    """Every input's substitution table as one TSV (CSV when ``path`` ends in .csv): a row per
    checked position (id, position, written), a column per letter of the alphabet."""
    delimiter = "," if path.lower().endswith(".csv") else "\t"
    try:
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, delimiter=delimiter, lineterminator="\n")
            first = next(c.result for c in checks)
            w.writerow(["id", "position", "written", *first.alphabet])
            for c in checks:
                for p, row in zip(c.result.positions, c.result.substitutions):
                    w.writerow([c.id, p.position, p.written, *(f"{v:.4f}" for v in row)])
    except OSError as e:
        raise CLIError(f"--scores: cannot write {path!r}: {e.strerror or e}") from None


def write_plot(path: str, c) -> None:
    """The substitution table of one input as a heat map: positions across, the alphabet down,
    log p(mut) - log p(wt) coloured (blue: better than written, red: worse), the written letter
    dotted and flagged positions marked above."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = c.result
    scores = np.array(res.substitutions).T                    # [alphabet, positions]
    n = scores.shape[1]
    fig, ax = plt.subplots(figsize=(min(40, 2 + 0.18 * n), 1.5 + 0.22 * len(res.alphabet)))
    lim = max(1.0, float(np.nanmax(np.abs(np.clip(scores, -10, 10)))))
    im = ax.imshow(np.clip(scores, -lim, lim), cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto",
                   interpolation="nearest")
    rows = {a: k for k, a in enumerate(res.alphabet)}
    wt = [(k, rows[p.written]) for k, p in enumerate(res.positions) if p.written in rows]
    ax.scatter([x for x, _ in wt], [y for _, y in wt], s=6, c="black", marker="o")
    flagged = [k for k, p in enumerate(res.positions) if p.flagged]
    ax.scatter(flagged, [-0.9] * len(flagged), marker="v", c="red", s=25, clip_on=False)
    ax.set_yticks(range(len(res.alphabet)), res.alphabet)
    step = max(1, n // 60)
    ax.set_xticks(range(0, n, step), [f"{res.positions[k].written}{res.positions[k].position}"
                                      for k in range(0, n, step)], rotation=90, fontsize=7)
    shown = Path(c.id).name if c.edition is not None else c.id      # an edition: its file
    ax.set_title(f"{shown}: masked-marginal log p(mut) - log p(wt) ({c.model}); "
                 f"▼ flagged", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.02, pad=0.01)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=120)
    except OSError as e:
        raise CLIError(f"--plot: cannot write {path!r}: {e.strerror or e}") from None
    finally:
        plt.close(fig)


def write_edition(folder: str, c) -> None:
    """An EpiDoc input written into ``folder`` (same file name) with its notes per line."""
    target = Path(folder) / Path(c.id).name
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        if target.resolve() == Path(c.id).resolve():
            raise CLIError(f"--out: {str(target)!r} is the input file itself; choose another "
                           "folder")
        target.write_text(edition_with_notes(c), encoding="utf-8")
    except OSError as e:
        raise CLIError(f"--out: cannot write {str(target)!r}: {e.strerror or e}") from None
    click.echo(f"wrote {target}", err=True)
