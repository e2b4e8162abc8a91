"""An EpiDoc edition read for a check (``infill check FILE.xml``): the letters the stone
preserves are checked; the editors' supplements are read as context but never checked; a lost
stretch to restore (``<gap reason="lost">`` of known extent) is left masked; each checked
letter knows its inscription line (the ``n`` of the ``<lb/>`` before it), so that flagged
letters become one note per line.

With ``sic``, an editor's correction ``<choice><sic>A</sic><corr>B</corr></choice>`` is read as
the stone has it (A), and the letters read from the ``<sic>`` are marked with the pair's index
(``benchmarks/check_iospe.py`` measures whether they are flagged).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from infill._version import __version__
from infill.checking import Reading, bounded, layout
from infill.data.epidoc import TEI, Atom, Edition, read_edition
from infill.data.epidoc_write import add_header, serialize
from infill.data.greek import normalize
from infill.errors import InputError
from infill.lazy import LazyModule

etree = LazyModule("lxml.etree")

__all__ = ["EditionReading", "SIC_MARK", "read_edition_for_check", "sic_edition"]

SIC_MARK = "infill-sic-"
"""The ``ana`` value (+ the pair's index) :func:`sic_edition` gives each ``<sic>`` it keeps."""


@dataclass
class EditionReading:
    """An edition read for a check: the :class:`~infill.checking.Reading`, and per model
    position its inscription ``lines`` (None where unknown), its ``sic`` pair (index, or None),
    and each sic pair's (sic, corr) text (``pairs``)."""

    reading: Reading
    lines: dict[int, str | None] = field(default_factory=dict)
    sic: dict[int, int] = field(default_factory=dict)
    pairs: list[tuple[str, str]] = field(default_factory=list)
    edition: Edition | None = None
    lbs: dict[int, object] = field(default_factory=dict)
    """Per checked position, the ``<lb/>`` element its line starts at (None: before any)."""


def sic_edition(path: str, text: str | None = None) -> tuple[Edition, list[tuple[str, str]]]:
    """The edition with each ``<choice>`` holding a ``<sic>`` and a ``<corr>`` read as the stone
    has it: the ``<corr>`` dropped and the ``<sic>`` kept as a ``<seg ana="infill-sic-K">``;
    and each pair's (sic, corr) text, K its index."""
    ed = read_edition(path, text, require_text=False)
    tree = copy.deepcopy(ed.tree)
    pairs = []
    for choice in tree.iter(f"{{{TEI}}}choice"):
        sic, corr = choice.find(f"{{{TEI}}}sic"), choice.find(f"{{{TEI}}}corr")
        if sic is None or corr is None:
            continue
        pairs.append(("".join(sic.itertext()), "".join(corr.itertext())))
        tail = corr.tail
        choice.remove(corr)
        if tail and tail.strip():
            sic.tail = (sic.tail or "") + tail
        sic.tag = f"{{{TEI}}}seg"
        sic.set("ana", f"{SIC_MARK}{len(pairs) - 1}")
    xml = etree.tostring(tree, encoding="unicode")
    return read_edition(path, xml, require_text=False), pairs


def _holder(atom: Atom):
    """The element whose content a character atom is part of."""
    return atom.node if atom.slot == "text" else atom.node.getparent()


def _sic_of(atom: Atom) -> int | None:
    el = _holder(atom)
    while el is not None:
        ana = el.get("ana") or ""
        if ana.startswith(SIC_MARK):
            return int(ana[len(SIC_MARK):])
        el = el.getparent()
    return None


def _lb_of(atom: Atom, cache: dict):
    """The last ``<lb/>`` before a character atom in document order (None: there is none)."""
    key = (id(atom.node), atom.slot)
    if key not in cache:
        ns = {"t": TEI}
        path = "(preceding::t:lb)[last()]" if atom.slot == "text" else \
            "(preceding::t:lb | descendant-or-self::t:lb)[last()]"
        found = atom.node.xpath(path, namespaces=ns)
        cache[key] = found[0] if found else None
    return cache[key]


def _normalized(model, ed: Edition) -> tuple[str, list]:
    """The edition's text (gaps to restore as ``?``, supplements as text, other losses ``-``)
    normalized as the model reads it, and each normalized character's source atom (None for a
    space, a lost or missing character)."""
    rendered = ed.render()
    chars, sources = [], []
    for c, src in zip(rendered.text, rendered.sources):
        n = normalize(c, symbols=True, strip=False, alphabet=model.alphabet, unknown=True)
        for d in n:
            if d == " " and (not chars or chars[-1] == " "):
                continue
            chars.append(d)
            sources.append(src if isinstance(src, Atom) else None)
    while chars and chars[-1] == " ":
        chars.pop()
        sources.pop()
    return "".join(chars), sources


def read_edition_for_check(model, path: str, text: str | None = None,
                           sic: bool = False) -> EditionReading:
    """An EpiDoc file read for a check by a character model (``sic``: the stone's text where
    an editor corrected it, :func:`sic_edition`)."""
    if getattr(model, "alphabet", None) is None or model.unit != "characters":
        raise InputError("EpiDoc files are checked by a character model (builtin:greek); "
                         f"{model.name} reads {model.unit}")
    ed, pairs = sic_edition(path, text) if sic else (read_edition(path, text, require_text=False),
                                                     [])
    normal, sources = _normalized(model, ed)
    ids = model.tokenize(normal)
    if len(ids) != len(normal) + 1:
        raise InputError(f"{path}: the edition's text could not be read letter by letter")
    supplied = {id(a) for lac in ed.lacunae for a in lac.atoms}
    out, cache = EditionReading(None, pairs=pairs, edition=ed), {}
    checked, gaps = [], [t for t, i in enumerate(ids) if i == model.mask_id]
    for k, src in enumerate(sources):
        t = k + 1
        if src is None or id(src) in supplied or ids[t] >= model.vocab_size or \
                ids[t] in model.special_ids or normal[k] == " ":
            continue
        checked.append(t)
        out.lbs[t] = _lb_of(src, cache)
        out.lines[t] = out.lbs[t].get("n") if out.lbs[t] is not None else None
        mark = _sic_of(src) if sic else None
        if mark is not None:
            out.sic[t] = mark
    if not checked:
        raise InputError(f"{path}: nothing to check: the edition preserves no letter")
    shown, spans = layout(model, ids)
    out.reading = bounded(model, Reading(ids, checked, shown, spans, gaps, list(ed.notes)))
    return out


NOTE_TYPE = "doubtful"
"""The ``type`` of the ``<note>`` :func:`with_notes` writes (``resp="#infill"``)."""


def with_notes(er: EditionReading, notes: dict[int, str], description: str) -> str:
    """The edition as EpiDoc with a ``<note type="doubtful" resp="#infill">`` right after the
    ``<lb/>`` of each line that has one (``notes``: checked position -> the note of its line;
    one note per line), infill recorded in the header (``description``). The reader drops
    ``<note>``, so the text read back is the text checked."""
    done = set()
    for t, text in notes.items():
        lb = er.lbs.get(t)
        key = id(lb)
        if key in done:
            continue
        done.add(key)
        note = _note_element(text)
        if lb is None:
            er.edition.div.insert(0, note)
            continue
        note.tail, lb.tail = lb.tail, None
        lb.addnext(note)
    add_header(er.edition, description, __version__)
    return serialize(er.edition)


def _note_element(text: str):
    note = etree.Element(f"{{{TEI}}}note", type=NOTE_TYPE, resp="#infill")
    note.text = text
    return note
