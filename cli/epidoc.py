"""``infill run`` on EpiDoc files: print what :mod:`infill.epigraphy` restored (the library reads,
decodes and writes; this module only prints)."""
from __future__ import annotations

import json
from pathlib import Path

import click

from .errors import CLIError
from .ranks import closing
from infill.data.files import ensure_dir
from infill.epigraphy import epidoc_output, leiden_output, restore_files

FORMATS = ("epidoc", "leiden")
"""Output formats that only EpiDoc inputs have."""


def run_epidoc(lm, model_name: str, inputs, request, fmt: str, hide_supplied: bool,
               out: str | None) -> None:
    """Restore every EpiDoc input with the fill ``request`` (its options left out take the
    model's recommendation, as for any fill) and print (or write into ``out``) each in ``fmt``."""
    if out is not None and fmt not in FORMATS:
        raise CLIError("--out writes each file's --output-format epidoc / leiden into a folder; "
                       f"--output-format {fmt} prints")
    if fmt in FORMATS and len(inputs) > 1 and out is None:
        raise CLIError(f"--output-format {fmt} with {len(inputs)} files needs --out FOLDER "
                       "(one output file each)")
    results = restore_files(lm, inputs, request, hide_supplied=hide_supplied)
    failed = 0
    for n, r in enumerate(results, 1):
        if r.error is not None:
            failed += 1
            click.echo(f"Error: {r.error}", err=True)
        for note in r.notes:
            click.echo(f"note: {r.path}: {note}", err=True)
        if fmt == "json":
            click.echo(json.dumps(_json(r, model_name), ensure_ascii=False, allow_nan=False))
        elif r.error is not None:
            continue
        elif fmt in FORMATS:
            text = epidoc_output(r, model_name) if fmt == "epidoc" else leiden_output(r) + "\n"
            _emit(text, r.path, fmt, out)
        else:
            _table(n, r)
    if failed:
        closing(failed, len(results), "EpiDoc file", "restored")


def _json(r, model_name: str) -> dict:
    """One line of ``--json``: the config that ran (and which options were the model's)."""
    return {"id": r.path, "file": r.path, "input": r.text, "model": model_name,
            "config": r.config_json(), "windows": r.windows, "notes": r.notes, "error": r.error,
            "lacunae": r.lacunae_json(),
            "completions": [c.to_json(k) for k, c in enumerate(r.completions, 1)]}


def _emit(text: str, path: str, fmt: str, out: str | None) -> None:
    if out is None:
        click.echo(text, nl=False)
        return
    folder = ensure_dir(out, "--out folder")
    name = Path(path).stem + (".xml" if fmt == "epidoc" else ".txt")
    target = folder / name
    if target.resolve() == Path(path).resolve():
        raise CLIError(f"--out would overwrite the input {path!r}; choose another folder")
    target.write_text(text, encoding="utf-8")
    click.echo(f"wrote {target}", err=True)


def _table(n: int, r) -> None:
    """The edition's text, then each lacuna's readings (the editor's beside them if hidden)."""
    click.echo(f"[{n}] {r.path}")
    click.echo(f"    {r.text}")
    if not r.readings:
        click.echo("  (nothing to restore)")
    for item in r.lacunae_json():
        where = (f"line {item['lb']}" if item["lb"] else f"lacuna {item['lacuna'] + 1}") + \
            f" (XML line {item['source_line']})"
        editor = f"   (editor: {item['editor']})" if item.get("editor") else ""
        size = (f"about {item['length']} characters ({item['lengths'][0]}-{item['lengths'][1]})"
                if item["lengths"] else
                f"{item['length']} character{'s' if item['length'] != 1 else ''}")
        click.echo(f"  {where}, {size}{editor}")
        for k, rd in enumerate(item["readings"], 1):
            mark = "" if rd["accented"] or not r.accents else \
                "  (not a known word: unaccented)"
            click.echo(f"    {k:>2}  {rd['prob']:.3f}  {rd['text']}{mark}")
    click.echo()
