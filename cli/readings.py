"""``infill run --readings``: score the readings proposed for each lacuna of a text (typed, one
``--readings 'a|b'`` per lacuna) or of EpiDoc editions (their ``<app>`` entries,
``--app-readings``); the library (:mod:`infill.jobs.readings`) scores, this module prints."""
from __future__ import annotations

import click

from .errors import CLIError
from .ranks import closing
from infill.lazy import LazyModule

# On first use: `infill run --help` reads only the help texts below.
json = LazyModule("json")
epidoc_cli = LazyModule(f"{__package__}.epidoc")
readings_job = LazyModule("infill.jobs.readings")

READINGS_HELP = ("Score these readings of a lacuna instead of only searching: 'a|b|c' (one "
                 "--readings per lacuna of TEXT, in order); each reading's exact score under "
                 "the scorer and order, its probability among the readings and its place in "
                 "the beam's top-k.")
APP_READINGS_HELP = ("EpiDoc files: score the readings of each <app> (<lem>, <rdg>) inside an "
                     "editor's lost supplement (--output-format epidoc writes their cert).")


def run_readings(lm, model_name: str, records, readings: tuple[str, ...], request, fmt: str
                 ) -> None:
    """Score ``readings`` (one ``'a|b'`` per lacuna) in the one text of ``records``."""
    if fmt not in ("text", "json"):
        raise CLIError("--readings prints a table or --json (EpiDoc files: --app-readings "
                       "with --output-format epidoc)")
    texts = [r for r in records]
    if len(texts) != 1:
        raise CLIError(f"--readings scores the lacunae of one text; got {len(texts)} inputs")
    rec = texts[0]
    if rec.error is not None or rec.text is None:
        raise CLIError(f"input {rec.id}: {rec.error}")
    r = readings_job.readings(lm, rec.text, list(readings), request=request, name=model_name)
    r.id = rec.id
    for note in r.notes:
        click.echo(f"note: input {rec.id}: {note}", err=True)
    if fmt == "json":
        _json_line(r.to_json())
    else:
        write_readings(1, rec.text, r)


def write_readings(n: int, title: str, r) -> None:
    """The table: each combination of readings (prob, exact score, length score, place in the
    beam), the per-lacuna probabilities when there are several lacunae, the beam's top-k."""
    cfg = r.config
    click.echo(f"[{n}] {title}")
    click.echo(f"    readings scored with {cfg.scorer_name}, {cfg.order_name}; beam {cfg.beam_size}"
               + (f"; lengths ranked by {r.length_score}" if r.length_score else "")
               + (f" ({r.length_beam} beam)" if r.length_beam else "")
               + (f"; reranked by score with {r.rerank}" if r.rerank else ""))
    ranked = r.length_score is not None or r.rerank is not None
    head = "      prob      score" + ("  rank_score" if ranked else "") + "   beam  "
    click.echo(head + "readings")
    for c in r.combinations:
        rank = "-" if c.beam_rank is None else str(c.beam_rank)
        extra = f"  {_num(c.rank_score, 10)}" if ranked else ""
        mark = "" if c.exact else "  (any-order: a lower bound)"
        click.echo(f"    {c.prob:6.3f}  {_num(c.score, 9)}{extra}  {rank:>5}  "
                   f"{' | '.join(c.readings)}{mark}")
    if len(r.lacunae) > 1:
        for k, rs in enumerate(r.lacunae, 1):
            shown = ", ".join(f"{x.text} {x.prob:.3f}" for x in rs)
            click.echo(f"    lacuna {k}: {shown}")
    k = len(r.completions)
    click.echo(f"    beam's top-{k}: " + "; ".join(
        f"{i} {' | '.join(c.fills)} ({c.score:.3f})" for i, c in enumerate(r.completions, 1)))
    click.echo()


def _json_line(obj: dict) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False, allow_nan=False))


def _num(v: float | None, width: int) -> str:
    """A score in ``width`` columns (-inf: a filling of probability 0)."""
    return f"{'-inf':>{width}}" if v is None or v == float("-inf") else f"{v:{width}.3f}"


def run_app_readings(lm, model_name: str, inputs, request, fmt: str, out: str | None) -> None:
    """Score the ``<app>`` readings of every EpiDoc input and print each (table, ``--json``,
    or the file with ``cert`` written: ``--output-format epidoc``)."""
    if fmt == "leiden":
        raise CLIError("--app-readings writes a table, --json or --output-format epidoc")
    if fmt == "epidoc" and len(inputs) > 1 and out is None:
        raise CLIError(f"--output-format epidoc with {len(inputs)} files needs --out FOLDER "
                       "(one output file each)")
    results = readings_job.epidoc_readings(lm, inputs, request=request, name=model_name)
    failed = 0
    for n, r in enumerate(results, 1):
        for note in [*r.notes, *(r.result.notes if r.result else [])]:
            click.echo(f"note: {r.path}: {note}", err=True)
        if r.error is not None:
            failed += 1
            click.echo(f"Error: {r.error}", err=True)
        if fmt == "json":
            _json_line(r.to_json())
        elif r.error is not None:
            continue
        elif fmt == "epidoc":
            epidoc_cli._emit(readings_job.epidoc_readings_output(r, model_name), r.path, fmt, out)
        else:
            write_readings(n, f"{r.path}: {r.result.input}", r.result)
    if failed:
        closing(failed, len(results), "EpiDoc file", "scored")
