"""The readings job (``infill run --readings``, ``infill.readings``, ``POST /api/readings``):
score the readings proposed for each lacuna of a text, typed or read from an EpiDoc edition's
``<app>`` entries (:mod:`infill.reading_scores` does the scoring).

    model = infill.load_model("builtin:greek")
    r = readings(model, "ἔδοξε τῆι βουλῆι καὶ τῶι [....]ι", ["δήμω|δήμο"])
    for c in r.combinations:
        print(c.prob, c.score, c.beam_rank, c.readings)

An EpiDoc edition's readings (:func:`epidoc_readings`): every editor's ``<supplied
reason="lost">`` holding an ``<app>`` (IOSPE's nesting, and what ``--output-format epidoc``
writes) is a lacuna whose readings are the ``<lem>`` and each ``<rdg>`` (its ``resp`` kept);
the edition's other lost stretches are read as missing (``-``), not restored.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from infill._version import __version__
from infill.data.epidoc import TEI
from infill.data.epidoc_write import _prob, add_header, serialize
from infill.epigraphy import describe, read_for_restore
from infill.errors import InfillError, InputError
from infill.filling.defaults import ranks_lengths, resolve_fill
from infill.filling.request import UNSET, FillRequest, check_applies, check_ranking
from infill.jobs.fill import prepare
from infill.jobs.inputs import as_inputs
from infill.reading_scores import (Candidate, ReadingsResult, as_candidates, check_config,
                                   readings_gap, score_readings)

__all__ = ["EditionReadings", "epidoc_readings", "epidoc_readings_output", "readings"]

APP_MARKER = "\x00"
"""The marker of an ``<app>`` lacuna in the edition's text (a character no edition holds)."""


def readings(model, text: str, readings, gap=UNSET, top_k: int = UNSET,
             request: FillRequest | None = None, name: str | None = None,
             **options) -> ReadingsResult:
    """Score the ``readings`` of each lacuna of ``text`` (per lacuna, in order: a ``'a|b'``
    string or a list of strings, ``(text, resp)`` pairs or :class:`~infill.reading_scores.Candidate`
    s) under the fill ``request`` and/or keyword options (as :func:`infill.fill`; left out: the
    model's recommendation), and run the beam search beside them. A model that fills characters
    reads Leiden sigla (``[....]``, ``[c.5]``; ``unclear="restore"``: underdotted letters among
    their look-alikes). ``gap`` left out: each marker takes its readings' lengths. An option that
    does not apply to readings is refused (:data:`~infill.filling.request.NOT_FOR`). Raises
    InputError / ConfigError (one line) for bad input."""
    request = FillRequest.of(request, gap=gap, top_k=top_k, **options)
    check_applies(request, "readings")
    cands = as_candidates(readings)
    if not isinstance(text, str) or not text.strip():
        raise InputError("readings: give the text (one string with its lacunae)", field="text")
    [read], _ = prepare(model, as_inputs([text]), request)
    if read.error is not None:
        raise InputError(read.error)
    if read.letters is not None:                    # the text's #[...] sets bind readings too
        request = request.replace(letters=read.letters)
    result = _score(model, read.text, cands, request,
                    read.gap if request.gap is None else request.gap)
    result.input, result.model = text, name
    result.notes = [*read.notes, *result.notes]
    return result


def _score(model, text: str, cands: list[list[Candidate]], request: FillRequest, gap
           ) -> ReadingsResult:
    """Score the readings of infill-syntax ``text`` (``gap``: the per-input gap, else None)."""
    gap, ids, notes = readings_gap(model, text, request.marker, gap, cands,
                                   request.config.allow_special)
    resolved, defaults = resolve_fill(model, request.replace(gap=gap))
    several = ranks_lengths(resolved.gap)
    check_ranking(defaults.given, several, several)
    check_config(resolved.config)
    result = score_readings(model, text, cands, ids, resolved, defaults)
    result.notes = [*notes, *result.notes]
    return result


# ---- EpiDoc --------------------------------------------------------------------------------
@dataclass
class EditionReadings:
    """An EpiDoc file's ``<app>`` readings scored: the ``edition``, which lacuna (``lacunae``:
    edition lacuna indices) each of ``result``'s lacunae is, and the ``<lem>``/``<rdg>``
    element of each reading (``elements``); or its ``error``."""

    path: str
    edition: Any = None
    result: ReadingsResult | None = None
    lacunae: list[int] = field(default_factory=list)
    elements: list[list[Any]] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """One line of ``--json``: the readings' JSON with the file and each lacuna's place in
        it (edition lacuna index, XML line, inscription line)."""
        out = self.result.to_json() if self.result is not None else {
            "input": None, "error": self.error, "lacunae": [], "combinations": []}
        out["id"] = out["file"] = self.path
        out["notes"] = [*self.notes, *out.get("notes", [])]
        out["error"] = self.error
        for item, k in zip(out["lacunae"], self.lacunae):
            lac = self.edition.lacunae[k]
            item.update({"lacuna": k, "source_line": lac.line, "lb": lac.lb,
                         "editor": lac.editor})
        return out


def app_readings(edition, model=None, notes: list[str] | None = None
                 ) -> dict[int, list[tuple[Candidate, Any]]]:
    """Per editor's lost supplement holding an ``<app>``: its readings (``<lem>`` first, then
    each ``<rdg>`` in order) with their elements. What is not scored is said in ``notes`` (a
    list, when given), never dropped silently: an empty ``<lem>``/``<rdg>``; an ``<app>`` with
    an ``<app>`` nested in a reading (its readings cannot be told apart), with a reading
    ``model`` cannot write (a numeral's sampi: that ``<app>`` alone), or in a supplement with no
    letter of the edition's alphabet (an empty or Latin ``<lem>``: no lacuna)."""
    say = notes.append if notes is not None else (lambda _note: None)
    readings_of = (f"{{{TEI}}}lem", f"{{{TEI}}}rdg")
    out: dict[int, list[tuple[Candidate, Any]]] = {}
    scored = set()
    for lac in edition.lacunae:
        app = lac.node.find(f".//{{{TEI}}}app") if lac.kind == "supplied" else None
        if app is None:
            continue
        scored.add(app)
        if any(el.find(f".//{{{TEI}}}app") is not None for el in app if el.tag in readings_of):
            say(f"XML line {app.sourceline}: an <app> nested inside a <lem> or <rdg> is not "
                "scored (its readings cannot be told apart); the editor's text is read")
            continue
        found = []
        for el in (el for el in app if el.tag in readings_of):
            cand = Candidate(" ".join("".join(el.itertext()).split()), el.get("resp"),
                             el.tag.endswith("}lem"))
            if not cand.text:
                say(f"XML line {el.sourceline}: an empty <{el.tag.split('}')[1]}> was left out")
            else:
                found.append((cand, el))
        unwritable = [c for c, _ in found if model is not None and model.input_notes(c.text)]
        if unwritable:
            say(f"XML line {app.sourceline}: <app> not scored: reading {unwritable[0].text!r}: "
                f"{model.input_notes(unwritable[0].text)[0]}")
        elif found:
            out[lac.index] = found
    _unread_apps(edition, scored, say)
    return out


def _unread_apps(edition, scored: set, say) -> None:
    """A note for each ``<app>`` in a lost supplement that is no lacuna (its supplement holds no
    letter of the edition's alphabet: an empty ``<lem>``, a Latin one in a Greek edition)."""
    for app in edition.tree.iter(f"{{{TEI}}}app"):
        inside = [a for a in app.iterancestors() if a.tag in (f"{{{TEI}}}app", f"{{{TEI}}}lem",
                                                            f"{{{TEI}}}rdg")]
        lost = any(a.get("reason") == "lost" for a in app.iterancestors(f"{{{TEI}}}supplied"))
        if app in scored or inside or not lost:
            continue
        lem = app.find(f"{{{TEI}}}lem")
        text = " ".join("".join(lem.itertext()).split()) if lem is not None else ""
        say(f"XML line {app.sourceline}: an <app> whose <lem> holds no letter of the edition's "
            f"alphabet ({text!r}) is no lacuna; not scored")


def _edition_text(edition, apps: dict) -> str:
    """The edition as text: each ``<app>`` lacuna as the marker, other supplements as the
    editors' text, other lost stretches missing (``-``)."""
    def policy(lac) -> str:
        if lac.index in apps:
            return "restore"
        return "text" if lac.kind == "supplied" else "missing"

    rendered = edition.render(policy)
    text = rendered.text
    last = None
    for k, start, end in sorted(rendered.restore, key=lambda r: -r[1]):
        if last is not None and end == last:
            raise InputError(f"{edition.path}: two lacunae with readings touch (XML line "
                             f"{edition.lacunae[k].line}); score them as one", path=edition.path)
        text, last = text[:start] + APP_MARKER + text[end:], start
    return text


def epidoc_readings(model, inputs, request: FillRequest | None = None,
                    name: str | None = None, **options) -> list[EditionReadings]:
    """Score the ``<app>`` readings of EpiDoc files (paths, or (path, text) pairs) under the fill
    ``request`` and/or keyword options (an option that does not apply to them is refused,
    :data:`~infill.filling.request.NOT_FOR`), one result per file; a file that cannot be read,
    or has no ``<app>`` in a lost supplement, gets its ``error``."""
    request = FillRequest.of(request, **options)
    check_applies(request, "an EpiDoc file's <app> readings")
    out = []
    for item in inputs:
        path, text = (item, None) if isinstance(item, str) else item
        read = read_for_restore(str(path), text, model, hide_supplied=False)
        res = EditionReadings(str(path), read.edition, error=read.error)
        out.append(res)
        if read.error is not None:
            continue
        try:
            _edition_scores(model, res, request, name)
        except InfillError as e:
            res.error = f"{res.path}: {e.message()}"
    return out


def _edition_scores(model, res: EditionReadings, request: FillRequest, name) -> None:
    notes: list[str] = []
    apps = app_readings(res.edition, model, notes)
    res.notes += notes
    if not apps:
        why = f" ({len(notes)} not scored: see the notes)" if notes else ""
        raise InputError("no <app> with readings inside a lost supplement (<supplied "
                         f"reason=\"lost\">) to score{why}")
    res.lacunae = sorted(apps)
    cands = [[c for c, _ in apps[k]] for k in res.lacunae]
    element = {id(c): el for k in res.lacunae for c, el in apps[k]}
    text = _edition_text(res.edition, apps)
    res.result = _score(model, text, cands, request.replace(marker=APP_MARKER), None)
    res.elements = [[element[id(c)] for c in rs] for rs in cands]     # the readings kept
    res.result.input, res.result.model = text.replace(APP_MARKER, "[…]"), name


def epidoc_readings_output(res: EditionReadings, model_name: str) -> str:
    """The file with each scored ``<lem>``/``<rdg>`` given ``cert`` = its probability among the
    lacuna's readings (TEI's ``teidata.probCert``); ``resp`` kept; the header records infill."""
    for rs, els in zip(res.result.lacunae, res.elements):
        for r, el in zip(rs, els):
            el.set("cert", _prob(r.prob))
    add_header(res.edition, describe(model_name, res.result.request, False).replace(
        "Lost text restored", "Readings of the apparatus scored"), __version__)
    return serialize(res.edition)
