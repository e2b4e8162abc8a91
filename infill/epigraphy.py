"""Restoring EpiDoc editions: read the files, decode their lacunae, read the completions back as
readings per lacuna, and write EpiDoc or Leiden.

    model = infill.load_model("builtin:greek")
    [r] = restore_files(model, ["1.10.xml"], top_k=5)    # or request=FillRequest(top_k=5)
    r.readings[0]          # [Reading(text='τεμισίωνος', prob=0.4, accented=True), ...]
    epidoc_output(r, model_name="builtin:greek")   # the file with <supplied>/<app>

One input per file: its edition as gapped text (:meth:`infill.data.epidoc.Edition.render`) goes
through :func:`infill.filling.planner.fill_resolved` like any typed input (context windows for long editions,
joint decoding of the lacunae that fit one window). A lacuna's readings are the distinct strings
the top-k completions put in it, each with its probability among those completions (the softmax
of their scores, summed over the completions that agree on this lacuna), in the user's script
(:mod:`infill.data.accents`). With ``hide_supplied`` the editors' supplements are restored afresh
and reported beside the editor's reading.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from infill._version import __version__
from infill.data.accents import default_lexicon, script_span
from infill.data.epidoc import Edition, Rendered, is_epidoc, read_edition
from infill.data.epidoc_write import Reading, add_header, apply_readings, leiden, serialize
from infill.data.files import input_limit, read_text
from infill.data.greek import normalize
from infill.data.latin import LATIN_LANGS, alphabet_for
from infill.data.letters import lookalikes
from infill.decoding.lengths import MAX_VARIANTS
from infill.errors import InfillError, InputError
from infill.filling.calibration import gap_calibrated, gaps_on_their_own, model_calibrated
from infill.filling.defaults import config_json, ranks_lengths, resolve_fill
from infill.filling.request import FillRequest, check_applies, check_ranking, unknown_span
from infill.lazy import LazyModule

planner = LazyModule("infill.filling.planner")
"""The decoder (torch): read as ``planner.module.fill_resolved`` at each call, uncached, so that
a replaced ``fill_resolved`` (a test's counter) is the one called."""

__all__ = ["EditionResult", "check_edition_ranking", "edition_letters", "epidoc_output", "epidoc_paths", "leiden_output",
           "read_for_restore", "readings_for", "restore_files"]

GREEK_LANGS = ("grc", "el", "gr")
MARKER = "\x00"
"""The gap marker of the text an edition is decoded as: its lacunae of uncertain length (the
others are ``?`` runs); a character no edition holds."""



@dataclass
class EditionResult:
    """One EpiDoc file restored: the ``edition``, its ``text`` (``?`` per character to restore;
    ``rendered``: the text decoded, lacunae of uncertain length as the gap marker, with its map
    back to the XML), the ranked ``completions``, ``readings`` per lacuna index (best
    first), ``notes``; or its ``error``. Nothing to restore is a note, not an error."""

    path: str
    edition: Edition | None = None
    text: str = ""
    completions: list = field(default_factory=list)
    readings: dict[int, list[Reading]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    windows: list = field(default_factory=list)
    hide_supplied: bool = False
    rendered: Rendered | None = None
    request: object = None
    """The fill request that ran (:class:`~infill.jobs.fill.FillRequest`, resolved): its
    ``decode`` config is what the restored file's provenance records."""
    defaults: object = None
    """Which options took the model's recommendation (:class:`~infill.filling.defaults.Defaults`)."""
    rerank: str | None = None
    """How its completions were reranked (:mod:`infill.filling.reranking`; None: not reranked)."""
    lacuna_edges: str | None = None
    """What its lacunae's first and last characters could be (None: the model writes no word
    space)."""
    accents: bool = False
    """Whether its readings are written in the user's script (a Greek model's accents)."""

    @property
    def config(self):
        """The decoding options that ran (None before decoding)."""
        return None if self.request is None else self.request.config

    def config_json(self) -> dict:
        """The options that ran as ``--json`` writes them: ``defaults`` when some took the
        model's recommendation, ``length_score`` when lacunae of uncertain length were ranked,
        ``rerank`` when completions of one length were reranked."""
        ranked = isinstance(self.request.gap, list)
        return config_json(self.config, self.defaults,
                           self.request.length_score if ranked else None,
                           self.request.length_beam if ranked else None, self.rerank,
                           self.lacuna_edges)

    def lacunae_json(self) -> list[dict]:
        """Per lacuna restored: where it is and the readings (and the editor's, if hidden)."""
        if self.edition is None:
            return []
        out = []
        for index, rs in self.readings.items():
            lac = self.edition.lacunae[index]
            item = {"lacuna": index, "kind": lac.kind, "lb": lac.lb, "source_line": lac.line,
                    "length": lac.length,
                    "lengths": list(lac.lengths) if lac.lengths else None,
                    "readings": [{"text": r.text, "prob": r.prob, "accented": r.accented}
                                 for r in rs]}
            if lac.kind in ("supplied", "unclear"):
                item["editor"] = lac.editor
            out.append(item)
        return out


# ---- inputs ----------------------------------------------------------------------------------
def epidoc_paths(args: list[str], input_file: str | None = None
                 ) -> list[tuple[str, str | None]] | None:
    """The EpiDoc inputs named by ``args`` (files and folders) or ``--input``: (path, its text
    when already read) each; None when they are not EpiDoc. An argument is EpiDoc when it is a
    folder (its ``*.xml`` files, sorted), a ``.xml`` file, or a file whose content is TEI."""
    if args and input_file is not None:
        raise InputError("give inputs either as arguments or with 'input_file', not both",
                         field="input_file")
    names = list(args) if args else ([input_file] if input_file not in (None, "-") else [])
    if not names or not all(os.path.exists(n) for n in names):
        return None
    found: list[tuple[str, str | None]] = []
    for n in names:
        p = Path(n)
        if p.is_dir():
            files = sorted(str(f) for f in p.glob("*.xml") if f.is_file())
            if not files:
                raise InputError(f"no EpiDoc (*.xml) file in folder {n!r}")
            found += [(f, None) for f in files]
        elif p.suffix.lower() == ".xml":
            found.append((n, None))
        elif not p.is_file():       # a pipe or device: read once, by the command, not twice
            return None
        else:
            text = read_text(p, "input file", input_limit())   # a command's input: its bound
            if not is_epidoc(text):
                return None
            found.append((n, text))
    return found


# ---- decoding --------------------------------------------------------------------------------
def _check_language(edition: Edition, model) -> None:
    """A character model reads editions in its own alphabet only (Greek or Latin: the edition's
    ``xml:lang``, else its script, :func:`infill.data.latin.alphabet_for`)."""
    alphabet = getattr(model, "alphabet", None)
    if model is None or alphabet is None or not hasattr(alphabet, "letters"):
        return
    base = edition.lang.lower().split("-")[0] if edition.lang else None
    known = base is None or base in GREEK_LANGS + LATIN_LANGS
    own = (edition.alphabet or alphabet_for(edition.lang)).name if known else None
    if own != alphabet.name:
        said = f"in {edition.lang!r} (xml:lang)" if edition.lang else "in Latin script"
        raise InputError(f"{edition.path}: line {edition.div.sourceline}: the edition is "
                         f"{said}, {'so ' + own if own else 'neither Greek nor Latin'}; "
                         f"{model.name} restores {alphabet.name}", path=edition.path,
                         line=edition.div.sourceline)


def read_for_restore(path: str, text: str | None, model, hide_supplied: bool,
                     edition: Edition | None = None, unclear: str = "keep",
                     unknown: tuple[int, int] | None = None) -> EditionResult:
    """An EpiDoc file read for restoring (its ``error`` when it cannot be): the edition rendered
    for decoding -- a lacuna of uncertain length as the gap marker, decoded over its whole range
    (unless the combinations exceed ``MAX_VARIANTS``: then at their stated lengths) -- with notes
    on how; ``model`` (None: not checked) must read the edition's language; ``edition``: the
    file already read; ``unclear="restore"``: its ``<unclear>`` letters are restored among
    their look-alikes (:func:`edition_letters`); ``unknown`` (fewest, most): its lacunae of
    unknown extent are restored at every length of that range (``unknown_lengths``)."""
    res = EditionResult(path, hide_supplied=hide_supplied)
    try:
        ed = edition if edition is not None else read_edition(path, text, unclear=unclear,
                                                              unknown=unknown)
        _check_language(ed, model)
    except InfillError as e:
        res.error = str(e).splitlines()[0]
        return res
    res.edition, res.notes = ed, list(ed.notes)
    # a Greek model's readings are written in the user's script (accents); a Latin one's as read
    res.accents = model is not None and getattr(getattr(model, "alphabet", None), "name",
                                                None) == "Greek"
    if ed.lang is None:
        res.notes.append("the edition has no xml:lang; read as "
                         f"{ed.alphabet.name if ed.alphabet is not None else 'Greek'} (its script)")

    rendered = res.rendered = ed.render(hide_supplied=hide_supplied, marker=MARKER)
    variants = math.prod(hi - lo + 1 for _, (lo, hi) in rendered.ranges)
    if variants > MAX_VARIANTS:       # too many combinations of lengths: their stated lengths
        rendered = res.rendered = ed.render(hide_supplied=hide_supplied, marker=MARKER,
                                            only_unknown=True)
        if rendered.ranges and (unknowns := _unknown_combinations(rendered)) > MAX_VARIANTS:
            res.error = (f"{path}: its {len(rendered.ranges)} lacunae of unknown extent at "
                         f"{rendered.ranges[0][1][0]}-{rendered.ranges[0][1][1]} characters give "
                         f"{unknowns:,} combinations of lengths, more than {MAX_VARIANTS}; "
                         "narrow unknown_lengths")
            return res
    res.text = ed.render(hide_supplied=hide_supplied).text    # shown: '?' per stated character
    res.notes += _restore_notes(ed, rendered, hide_supplied, unknown, variants)
    return res


def _restore_notes(ed: Edition, rendered: Rendered, hide_supplied: bool,
                   unknown: tuple[int, int] | None, variants: int) -> list[str]:
    """What :func:`read_for_restore` says of an edition's lacunae: that there is nothing to
    restore, and how each of uncertain or unknown extent is decoded."""
    notes: list[str] = []
    if not rendered.restore:           # written back unchanged
        breaks = unknown is None and any(a.kind == "missing" and not a.count for a in ed.atoms)
        notes.append("nothing to restore (no <gap reason=\"lost\"> of known extent"
                     + ("" if hide_supplied else "; --hide-supplied restores the editors' "
                        "supplements")
                     + ("; unknown_lengths (--unknown-lengths 1-12) restores its lacunae of "
                        "unknown extent" if breaks else "") + ")")
    ranged = {k for k, _ in rendered.ranges}
    if any(lac.unknown for lac in ed.lacunae):
        lo, hi = next(lac.lengths for lac in ed.lacunae if lac.unknown)
        notes.append(f"lacunae of unknown extent decoded at every length from {lo} to {hi}, "
                     "all completions ranked together")
    for lac in ed.lacunae:
        if lac.unknown:
            continue
        if lac.lengths is not None and any(k == lac.index for k, _, _ in rendered.restore):
            how = (f"decoded at every length from {lac.lengths[0]} to {lac.lengths[1]}"
                   if lac.index in ranged else f"decoded as exactly {lac.length} (the "
                   f"{variants} combinations of this edition's uncertain lengths exceed "
                   f"{MAX_VARIANTS})")
            notes.append(f"XML line {lac.line}: a lacuna of about {lac.length} characters "
                         f"({lac.lengths[0]}-{lac.lengths[1]}) {how}")
    return notes


def _unknown_combinations(rendered: Rendered) -> int:
    """The combinations of lengths of a rendering's ranged lacunae."""
    return math.prod(hi - lo + 1 for _, (lo, hi) in rendered.ranges)


def restore_request(model, request=None, **options):
    """The fill request an EpiDoc restoration runs -- ``request`` and/or keyword ``options`` (its
    fields and its config's, :meth:`~infill.filling.request.FillRequest.of`) -- with the options
    that do not apply to editions refused (:func:`~infill.filling.request.check_applies`) and the
    rest resolved once, as for any fill (:func:`~infill.filling.defaults.resolve_fill`). Returns
    ``(request, Defaults)``; each file then asks :func:`file_request`."""
    request = FillRequest.of(request, **options)
    check_applies(request, "EpiDoc files")
    return resolve_fill(model, request.replace(gap=1, marker=MARKER))


def file_request(result: EditionResult, request):
    """One file's fill request: the resolved ``request`` with the file's uncertain lengths as its
    gap and the file's letter sets (:func:`edition_letters`)."""
    spans = [span for _, span in result.rendered.ranges]
    return request.replace(gap=spans or 1, letters=edition_letters(result))


def take_fill(result: EditionResult, fill) -> None:
    """A file's :class:`~infill.filling.results.FillResult` read back into its result: notes,
    windows, completions and the readings per lacuna (in the user's script for a Greek model)."""
    result.notes += [n for n in fill.notes if n not in result.notes]
    result.windows = fill.windows
    if fill.error is not None:
        result.error = f"{result.path}: {fill.error}"
        return
    result.completions, result.rerank = fill.completions, fill.rerank
    result.lacuna_edges = fill.lacuna_edges
    result.readings = readings_for(result.rendered, fill.completions,
                                   default_lexicon() if result.accents else None,
                                   fill.defaults)


def restore_files(model, inputs, request=None, hide_supplied: bool = False,
                  **options) -> list[EditionResult]:
    """Read and restore EpiDoc files (paths, or (path, text) pairs); one result per file, an
    unreadable file or edition getting its ``error`` while the others are decoded together
    (``request.batch_size`` files at a time). ``request`` and/or keyword ``options`` as for
    :func:`infill.fill` (:func:`restore_request`: an option that does not apply to editions is a
    :class:`ConfigError`); options left out take the model's recommendation. Each result records
    the request that ran."""
    request, defaults = restore_request(model, request, **options)
    pairs = [(p, None) if isinstance(p, (str, Path)) else p for p in inputs]
    unknown = unknown_span(request.unknown_lengths)
    results = [read_for_restore(str(p), t, model, hide_supplied, unclear=request.unclear,
                                unknown=unknown) for p, t in pairs]
    for r in results:
        r.request, r.defaults = request, defaults
    groups: dict[str, list[EditionResult]] = {}     # files whose lengths and letters agree
    for r in results:
        if r.error is None and r.rendered.restore:
            r.request = file_request(r, request)
            groups.setdefault(repr((r.request.gap, r.request.letters)), []).append(r)
    check_edition_ranking([r.request.gap for rs in groups.values() for r in rs], defaults)
    n = request.batch_size
    for rs in groups.values():
        for part in (rs[i:i + n] for i in range(0, len(rs), n)):
            filled = planner.module.fill_resolved(model, [r.rendered.text for r in part],
                                                  part[0].request, defaults)
            for r, f in zip(part, filled):
                take_fill(r, f)
    return results


def check_edition_ranking(gaps: list, defaults) -> None:
    """:func:`~infill.filling.request.check_ranking` for the editions to restore, by their
    resolved gaps (:func:`file_request`): a ranking option the user gave is a ConfigError where
    it would rank nothing (``length_score`` where no lacuna has several lengths, ``rerank``
    where every edition's have)."""
    ranged = [ranks_lengths(g) for g in gaps]
    if ranged:
        check_ranking(defaults.given, any(ranged), all(ranged))


def edition_letters(result: EditionResult) -> list | None:
    """The letter sets of a rendered edition's gaps (``letters`` of :func:`infill.fill`): each
    letter of an ``<unclear>`` read with ``unclear="restore"`` among its look-alikes
    (:func:`infill.data.letters.lookalikes`); None when it has none."""
    ed, rendered = result.edition, result.rendered
    if ed is None or rendered is None or \
            not any(ed.lacunae[k].kind == "unclear" for k, _, _ in rendered.restore):
        return None
    alphabet = ed.alphabet or alphabet_for(ed.lang)
    out: list = []
    for run in runs(rendered):
        entry: list = []
        for k, n in run:
            lac = ed.lacunae[k]
            entry += ([lookalikes(c) for c in normalize(lac.editor, symbols=False,
                                                        alphabet=alphabet)]
                      if lac.kind == "unclear" else [None] * n)
        out.append(entry if any(e is not None for e in entry) else None)
    return out


def runs(rendered: Rendered) -> list[list[tuple[int, int]]]:
    """The gaps of a rendered text -- ``?`` runs and markers, one model gap each, in order -- as
    lists of (lacuna index, length): adjacent ``?`` lacunae share a run."""
    out: list[list[tuple[int, int]]] = []
    last_end, ranged = None, {k for k, _ in rendered.ranges}
    for k, start, end in rendered.restore:
        if start == last_end and k not in ranged and out[-1][-1][0] not in ranged:
            out[-1].append((k, end - start))
        else:
            out.append([(k, end - start)])
        last_end = end
    return out


def readings_for(rendered: Rendered, completions, lexicon=None, defaults=None
                 ) -> dict[int, list[Reading]]:
    """Readings per lacuna from ranked completions of ``rendered.text``: gap k of a completion
    (its ``spans[k]``) is the k-th ``?`` run, split among the run's lacunae by their lengths (a
    run of one lacuna takes the whole fill, whatever its length). A reading's probability is
    the calibrated share of the completions holding it (the calibration of ``defaults``, the
    model's :class:`~infill.filling.defaults.Defaults`: :mod:`infill.filling.calibration`).
    Where the calibration has an unlisted mass and the completions fill several gaps, each gap
    of one length is calibrated on its own (:func:`gap_shares`): the unlisted mass stands for
    one lacuna's unlisted restorations, and set against the joint score of a whole edition it
    left every reading a probability of 0. A gap of uncertain length keeps the shares of the
    completions' rank scores, the only values that compare its lengths."""
    if not completions:
        return {}
    # completions of several lengths are ranked by their rank_score (comparable across lengths)
    ranked = [getattr(c, "rank_score", None) for c in completions]
    by_length = any(r is not None for r in ranked)
    weights = model_calibrated([c.score if r is None else r for c, r in zip(completions, ranked)],
                               defaults, by_length)
    found: dict[int, dict[str, list]] = {k: {} for k, _, _ in rendered.restore}
    gaps = runs(rendered)
    own = gaps_on_their_own(defaults, len(gaps))
    uncertain = {k for k, _ in rendered.ranges}
    for g, run in enumerate(gaps):
        if own and not uncertain & {k for k, _ in run}:
            shares = gap_shares(completions, g, defaults)
        else:
            shares = list(zip(completions, weights))
        for c, w in shares:
            _credit(found, run, c, *c.spans[g], w, lexicon)
    return _ranked(found)


def gap_shares(completions, g: int, defaults) -> list[tuple[object, float]]:
    """(completion, probability) per distinct fill of gap ``g``: the first (best) completion
    holding it and the calibrated probability of its own log-score there -- the sum of the
    log-probabilities of the gap's letters, given the text and the gaps filled before them --
    among the distinct fills, beside the unlisted mass (as one supplement's restorations are
    calibrated)."""
    first: dict[str, object] = {}
    for c in completions:
        first.setdefault(c.text[slice(*c.spans[g])], c)
    best = list(first.values())
    return list(zip(best, gap_calibrated(best, g, defaults)))


def _credit(found: dict, run: list[tuple[int, int]], c, a: int, b: int, w: float,
            lexicon) -> None:
    """Add ``w`` to the reading completion ``c`` puts in each lacuna of ``run`` (its fill is
    ``c.text[a:b]``)."""
    cuts = [(run[0][0], a, b)] if len(run) == 1 else []
    if not cuts and b - a == sum(n for _, n in run):
        pos = a
        for k, n in run:
            cuts.append((k, pos, pos + n))
            pos += n
    for k, s, e in cuts:
        text, accented = _in_script(c.text, s, e, lexicon)
        slot = found[k].setdefault(text, [0.0, accented])
        slot[0] += w


def _ranked(found: dict) -> dict[int, list[Reading]]:
    return {k: sorted((Reading(t, p, a) for t, (p, a) in d.items()), key=lambda r: -r.prob)
            for k, d in found.items() if d}


def _in_script(text: str, start: int, end: int, lexicon) -> tuple[str, bool]:
    """``text[start:end]`` (restored letters) in the user's script (:mod:`infill.data.accents`)."""
    if lexicon is None:
        return text[start:end], False
    return script_span(text, start, end, lexicon)


# ---- outputs ---------------------------------------------------------------------------------
def describe(model_name: str, request, hide_supplied: bool) -> str:
    """What the header's <change> says: the model, the decoder and every option that ran
    (``request``: the resolved fill request), the number of readings kept."""
    opts = request.config.to_json()
    if ranks_lengths(request.gap):                  # lacunae of uncertain length: ranked by
        opts["length_score"] = request.length_score
        opts["length_beam"] = request.length_beam
    if request.rerank not in (None, "off") and not ranks_lengths(request.gap):
        opts["rerank"] = request.rerank                 # completions of one length: reranked
    shown = ", ".join(f"{k}={v}" for k, v in opts.items() if v is not None)
    return (f"Lost text restored by infill with model {model_name}, decoder "
            f"{opts.get('decoder', 'beam')} ({shown}); top {request.top_k} readings"
            + ("; the editors' supplements hidden and read afresh" if hide_supplied else "")
            + ("; unclear letters restored among their look-alikes"
               if getattr(request, "unclear", "keep") == "restore" else ""))


def epidoc_output(result: EditionResult, model_name: str) -> str:
    """The file with the restorations written in (see :mod:`infill.data.epidoc_write`), its
    header recording the options that ran; a file with nothing restored comes out unchanged."""
    if not result.readings:
        return serialize(result.edition)
    apply_readings(result.edition, result.readings)
    add_header(result.edition, describe(model_name, result.request, result.hide_supplied),
               __version__)
    return serialize(result.edition)


def leiden_output(result: EditionResult) -> str:
    """The edition as Leiden text with the first readings in ``[ ]``."""
    return leiden(result.edition, result.readings)
