"""``infill run``: fill the gaps of one or more inputs and print ranked completions."""
from __future__ import annotations

import click

from .epidoc import FORMATS as EPIDOC_FORMATS
from .epidoc import run_epidoc
from .errors import CLIError, InfillCommand, clean_errors
from .status import chosen_options, progress_option, say
from .io import (LongInputs, json_line, read_records, use_color, write_aligned, write_fasta,
                 write_table)
from .options import (SafePath, decode_config, decode_options, device_options, fill_gap_options,
                      input_option, json_option, model_option, no_window_option, seed_option,
                      speed_options, top_k_option)
from infill.data.regions import REGIONS


@click.command(cls=InfillCommand)
@click.argument("texts", nargs=-1, metavar="[TEXT]...")
@model_option
@input_option()
@fill_gap_options
@decode_options
@top_k_option(5, "Completions shown per input (raises --beam if larger).")
@seed_option
@device_options
@speed_options
@click.option("--allow-nonstandard", is_flag=True,
              help="Protein models: allow non-standard residues (X, B, U, Z, O) as fills.")
@click.option("--region", default=None, type=click.Choice(REGIONS),
              help="Antibody models: redesign this IMGT region of each sequence "
                   "(cdr1, cdr2, cdr3, fr1..fr4) instead of marking gaps.")
@no_window_option
@click.option("--view", type=click.Choice(["table", "aligned"]), default="table",
              show_default=True, help="table: ranked texts; aligned: the gap region of each "
                                      "hypothesis stacked, with per-character confidence.")
@click.option("--output-format", "fmt",
              type=click.Choice(["text", "json", "fasta", "epidoc", "leiden"]),
              default="text", show_default=True,
              help="text (--view), JSON Lines (same as --json), FASTA (top-k designs); for "
                   "EpiDoc files also epidoc (the file with the restorations) or leiden.")
@click.option("--hide-supplied", is_flag=True,
              help="EpiDoc files: hide the editors' supplements and restore them afresh (the "
                   "editor's reading is reported beside the model's).")
@click.option("--out", "out", default=None, type=SafePath(file_okay=False),
              help="EpiDoc files: write each file's --output-format epidoc/leiden into this "
                   "folder (needed for several files).")
@json_option
@progress_option
@click.option("--batch-size", default=32, show_default=True, type=click.IntRange(min=1),
              help="Inputs decoded together (one forward pass per step for the whole batch).")
@clean_errors
def run(texts, model, input_file, gap, marker, top_k, seed, device, dtype, quantize,
        compile_model, allow_nonstandard, region, no_window, view, fmt, hide_supplied, out,
        as_json, progress, batch_size, **decode):
    """Fill each gap marker (default ___) in TEXT with --gap tokens and rank the completions.

    Inputs come from the arguments, --input FILE or stdin: one per line, or FASTA records (the
    header's first word is the input's id), or EpiDoc TEI files (and folders of them): their
    editions' lost text is restored. '?' marks one character/residue to restore for the
    Greek and protein models; the model's own mask token ([MASK], <mask>) works as a marker too.
    An input that cannot be filled is reported (stderr, and "error" in --json) and the others
    go on; the exit code is then 2.

    \b
    infill run --gap 2 "To be, or not to ___, that is the question."
    infill run --model builtin:greek --view aligned "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ??ς"
    infill run --model antiberty --region cdr3 --output-format fasta heavy_chains.fa
    """
    import infill
    from infill.api import FillResult, effective_config
    from infill.models.defaults import resolve_defaults
    from infill.progress import progress as progress_bar
    from infill.parallel import current

    shard = current()
    fmt = "json" if as_json else fmt
    length_score = decode.pop("length_score")
    cfg = decode_config(seed=seed, **decode)
    from infill.epigraphy import epidoc_paths
    epidoc = epidoc_paths(texts, input_file)
    if epidoc is None and (fmt in EPIDOC_FORMATS or hide_supplied or out):
        raise CLIError("--output-format epidoc/leiden, --hide-supplied and --out are for EpiDoc "
                       "files (TEI XML) only")
    if epidoc is not None:
        lm = infill.load_model(model, device=shard.device(device), dtype=dtype,
                               quantize=quantize, compile=compile_model)
        return run_epidoc(lm, model, epidoc, cfg, top_k, fmt, hide_supplied, not no_window, out)
    records = read_records(texts, input_file)
    options = {"allow_nonstandard": True} if allow_nonstandard else {}
    lm = infill.load_model(model, device=shard.device(device), dtype=dtype, quantize=quantize,
                           compile=compile_model, **options)
    cfg, used = resolve_defaults(lm, cfg, chosen_options())
    say(used.line())
    if region is not None:
        records = _regions(lm, records, region)
    gaps: dict[int, object] = {}         # id(record) -> its per-marker gap list ([c.3] lacunae)
    if lm.unit == "characters":          # Greek: Leiden sigla ([...], [.3], [αβ]) accepted
        records = _leiden(records, marker, gap, gaps)
    color = use_color()
    long_inputs = LongInputs(lm, no_window)
    failed = 0
    n = 0
    chunks = [records[i:i + batch_size] for i in range(0, len(records), batch_size)]
    bar = progress_bar(total=len(records), desc="run", unit="input",
                       enabled=progress if shard.main and len(chunks) > 1 else False)
    # under torchrun, rank r decodes chunks r, r + N, ...; rank 0 prints them in input order
    for first in range(0, len(chunks), shard.world):
        k = first + shard.rank
        mine = _decode_chunk(lm, chunks[k], gap, top_k, marker, cfg, long_inputs.window,
                             length_score, gaps) \
            if k < len(chunks) else None
        parts = shard.gather(mine)
        if not shard.main:
            continue
        bar.clear()                          # results print on a clean line, then the bar
        for chunk, results in zip(chunks[first:first + shard.world], parts):
            long_inputs.note(any(res is not None and res.windows for res in results))
            for rec, res in zip(chunk, results):
                n += 1
                error = long_inputs.error(rec.error if res is None else res.error)
                if res is not None and rec.notes:     # how the input was read comes first
                    res.notes = [*rec.notes, *res.notes]
                if error is not None:
                    failed += 1
                    click.echo(f"Error: input {rec.id}: {error}", err=True)
                for note in ([] if res is None else res.notes):
                    click.echo(f"note: input {rec.id}: {note}", err=True)
                if fmt == "json":
                    if res is None:
                        res = FillResult(rec.text, [], error)
                    res.error = error
                    res.defaults = used
                    json_line(res.to_json(model, effective_config(cfg, top_k),
                                          gaps.get(id(rec), gap), rec.id))
                elif error is not None:
                    continue
                elif fmt == "fasta":
                    write_fasta(rec, res.completions, model)
                elif view == "aligned":
                    write_aligned(n, rec, res.completions, color)
                else:
                    write_table(n, rec, res.completions, color)
            bar.update(len(chunk))
    bar.close()
    if shard.broadcast(failed):
        if not shard.main:
            raise SystemExit(2)
        raise CLIError(f"{failed} of {len(records)} input(s) could not be filled (see above)")


def _decode_chunk(lm, chunk, gap, top_k, marker, cfg, window, length_score="pll", gaps=None):
    """One batch of records -> a FillResult (its ``windows`` when windowed) or None per record.
    Records whose per-marker gap lists (``gaps``, by id) agree are decoded together."""
    import infill

    groups: dict[str, tuple[object, list]] = {}
    for r in chunk:
        if r.text is not None:
            g = (gaps or {}).get(id(r), gap)
            groups.setdefault(repr(g), (g, []))[1].append(r)
    by_id = {}
    for g, ok in groups.values():
        with LongInputs.quiet():
            results = infill.fill_each(lm, [r.text for r in ok], gap=g, top_k=top_k,
                                       marker=marker, config=cfg, window=window,
                                       length_score=length_score)
        by_id.update({id(r): res for r, res in zip(ok, results)})
    return [by_id.get(id(r)) for r in chunk]


def _leiden(records, marker, gap=1, gaps=None):
    """Leiden-convention sigla of an edition -> infill's conventions (infill.data.leiden); a
    malformed siglum is that input's error. The per-marker gap list of a record with approximate
    lacunae ([c.3]: a range of lengths) goes into ``gaps`` by the new record's id."""
    from dataclasses import replace

    from infill.data.leiden import convert, has_sigla
    from infill.errors import InfillError

    out = []
    for r in records:
        if r.text is None or not has_sigla(r.text):
            out.append(r)
            continue
        try:
            converted = convert(r.text, marker)
            out.append(replace(r, text=converted.text, notes=r.notes + converted.notes))
            if converted.gaps and gaps is not None:
                gaps[id(out[-1])] = converted.gap_list(gap)
        except InfillError as e:
            out.append(replace(r, text=None, error=str(e).splitlines()[0]))
    return out


def _regions(lm, records, region):
    """Mask the IMGT ``region`` of each record (antibody V domains, numbered in one batch); a
    record that is not one keeps its error for the report."""
    from dataclasses import replace

    from infill.data.regions import mask_region, number_many
    from infill.errors import InfillError

    domains = number_many([r.text for r in records], strict=False)
    out = []
    for r, dom in zip(records, domains):
        if dom is None:
            out.append(replace(r, text=None, error="not an antibody V domain (IMGT numbering "
                                                   "found no heavy or light chain)"))
            continue
        try:
            out.append(replace(r, text=mask_region(r.text, region, numbered=dom)))
        except InfillError as e:
            out.append(replace(r, text=None, error=str(e).splitlines()[0]))
            continue
        if dom.missing_anchors:
            click.echo(f"Warning: input {r.id}: IMGT numbering lacks the conserved "
                       f"{', '.join(dom.missing_anchors)}; region boundaries may be off", err=True)
        mismatch = chain_mismatch(lm, dom.chain)
        if mismatch:
            click.echo(f"Warning: input {r.id}: {mismatch}", err=True)
    return out


CHAIN_NAMES = {"H": "heavy", "K": "kappa light", "L": "lambda light"}


def chain_mismatch(lm, chain: str) -> str | None:
    """Why a chain-specific model (Sapiens-VH / -VL) does not fit a numbered chain, or None."""
    wanted = getattr(lm, "chain", None)
    if wanted is None or (chain == "H") == (wanted == "H"):
        return None
    other = "sapiens-vl" if wanted == "H" else "sapiens-vh"
    kind = "heavy" if wanted == "H" else "light"
    return (f"a {CHAIN_NAMES.get(chain, chain)} chain, but the model is for {kind} chains "
            f"(use {other}, or antiberty for both)")
