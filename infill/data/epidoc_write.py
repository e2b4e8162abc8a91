"""Writing an edition read by :mod:`infill.data.epidoc` back out: as EpiDoc with the model's
restorations, or as Leiden text.

EpiDoc encoding of a restoration (the IOSPE files themselves nest ``<app>`` in ``<supplied>``
for an editor's alternative supplements, so the same shape is used):

- a ``<gap reason="lost">`` restored becomes ``<supplied reason="lost" cert="low" resp="#infill">``
  holding the model's first reading; with several readings, an
  ``<app type="alternative">`` inside it holds the first as ``<lem>`` and the others as ``<rdg>``,
  each with ``cert`` = its probability among the readings shown (TEI's ``cert`` takes a
  probability as well as high/medium/low) and ``resp="#infill"``;
- an editor's ``<supplied reason="lost">`` that was hidden and restored afresh keeps the editor's
  text as ``<lem>`` and gets the model's readings as ``<rdg resp="#infill" cert="p">``, so the
  edition's own reading is never lost.

``#infill`` points at an ``<application xml:id="infill">`` added to the header's
``<encodingDesc><appInfo>``, and a ``<change>`` in ``<revisionDesc>`` records the model, the
decoder and its options. A file read and written without readings comes out as it came in.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

from infill.data.epidoc import TEI, Edition, Lacuna, _local, extent_number
from infill.lazy import LazyModule

etree = LazyModule("lxml.etree")

__all__ = ["Reading", "add_header", "apply_readings", "leiden", "serialize"]

RESP = "infill"
_T = f"{{{TEI}}}"


@dataclass(frozen=True)
class Reading:
    """One model reading of a lacuna: its ``text`` (in the user's script), ``prob`` among the
    readings shown, and whether ``text`` took the accents of a known word (``accented``)."""

    text: str
    prob: float
    accented: bool = False


def serialize(edition: Edition) -> str:
    """The whole document as text: what stood around the root element as written (the XML
    declaration at least), and the root element."""
    node = edition.tree.getroot() if edition.ends_as_written else edition.tree
    return edition.declaration + etree.tostring(node, encoding="unicode") + edition.trailer


def _el(tag: str, text: str | None = None, **attrs):
    el = etree.Element(_T + tag)
    for k, v in attrs.items():
        el.set(k, v)
    el.text = text
    return el


def _app(first, rest: list[Reading], first_attrs: dict):
    """``<app type="alternative">`` with ``first`` (an element to fill ``<lem>``, or a Reading)
    and ``rest`` as ``<rdg>``."""
    app = _el("app", type="alternative")
    if isinstance(first, Reading):
        app.append(_el("lem", first.text, cert=_prob(first.prob), **first_attrs))
    else:
        app.append(first)
    for r in rest:
        app.append(_el("rdg", r.text, cert=_prob(r.prob), resp="#" + RESP))
    return app


def _prob(p: float) -> str:
    return f"{min(max(p, 0.0), 1.0):.4f}"


def apply_readings(edition: Edition, readings: dict[int, list[Reading]]) -> None:
    """Write the model's ``readings`` (lacuna index -> readings, best first) into the edition's
    tree, in place (see the module docstring for the encoding)."""
    for index, rs in readings.items():
        if not rs:
            continue
        lac = edition.lacunae[index]
        if lac.kind == "gap":
            _restore_gap(lac, rs)
        else:
            _beside_editor(lac, rs)


def _restore_gap(lac: Lacuna, rs: list[Reading]) -> None:
    gap = lac.node
    sup = _el("supplied", reason="lost", cert="low", resp="#" + RESP)
    if len(rs) == 1:
        sup.text = rs[0].text
    else:
        sup.append(_app(rs[0], rs[1:], {"resp": "#" + RESP}))
    sup.tail = gap.tail
    gap.getparent().replace(gap, sup)


def _beside_editor(lac: Lacuna, rs: list[Reading]) -> None:
    sup = lac.node
    lem = _el("lem")
    lem.text, sup.text = sup.text, None
    for child in list(sup):
        lem.append(child)          # moves it, with its tail
    sup.append(_app(lem, rs, {}))


def add_header(edition: Edition, description: str, version: str) -> None:
    """Record infill in the header: ``<application xml:id="infill">`` in ``encodingDesc/appInfo``
    and a ``<change>`` in ``revisionDesc`` with ``description`` (model, decoder, options)."""
    root = edition.tree.getroot()
    header = root.find(_T + "teiHeader")
    if header is None:
        header = _el("teiHeader")
        root.insert(0, header)
    enc = header.find(_T + "encodingDesc")
    if enc is None:
        enc = _el("encodingDesc")
        profile = header.find(_T + "profileDesc")
        idx = list(header).index(profile) if profile is not None else \
            (1 if header.find(_T + "fileDesc") is not None else 0)
        header.insert(idx, enc)
    info = enc.find(_T + "appInfo")
    if info is None:
        info = _el("appInfo")
        enc.append(info)
    app = next((a for a in info.findall(_T + "application")
                if a.get("{http://www.w3.org/XML/1998/namespace}id") == RESP), None)
    if app is None:
        app = _el("application", ident="infill", version=version)
        app.set("{http://www.w3.org/XML/1998/namespace}id", RESP)
        app.append(_el("label", "infill"))
        app.append(_el("desc", "restorations of lost text by a masked language model"))
        info.append(app)
    rev = header.find(_T + "revisionDesc")
    if rev is None:
        rev = _el("revisionDesc")
        header.append(rev)
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d")
    rev.insert(0, _el("change", description, when=when, who="#" + RESP))


# ---- Leiden -----------------------------------------------------------------------------------
def leiden(edition: Edition, readings: dict[int, list[Reading]] | None = None) -> str:
    """The edition as Leiden text, one line per ``<lb/>``: the editor's supplements and the
    model's first readings in ``[ ]``, lacunae left open as ``[.n]`` / ``[c.n]`` / ``[---]``,
    expansions in ``( )``, uncertain letters with an underdot. The lacunae that the model read
    (``readings``) show its first reading; where that replaced an editor's supplement, a short
    apparatus after the text gives both (``line 2: τεμισίωνος ed.; ἀλλὰ τοῦ infill``)."""
    readings = readings or {}
    out: list[str] = []
    _leiden_content(edition.div, edition, readings, out)
    lines = re.sub(r"\s*\x00", "", "".join(out)).split("\n")
    text = "\n".join(" ".join(line.split()) for line in lines if line.strip())
    app = [f"line {lac.lb or '?'}: {lac.editor} ed.; {readings[lac.index][0].text.strip()} infill"
           for lac in edition.supplements if readings.get(lac.index)]
    return text + ("\n\n" + "\n".join(app) if app else "")


def _leiden_content(el, edition, readings, out: list[str]) -> None:
    out.append(el.text or "")
    for child in el:
        _leiden_element(child, edition, readings, out)
        out.append(child.tail or "")


def _lacuna_of(edition: Edition, el) -> Lacuna | None:
    return next((lac for lac in edition.lacunae if lac.node is el), None)


def _leiden_element(el, edition, readings, out: list[str]) -> None:
    if not isinstance(el.tag, str):
        return
    tag = _local(el.tag)
    lac = _lacuna_of(edition, el)
    if lac is not None and readings.get(lac.index):
        first = readings[lac.index][0].text
        out.append("".join(c + "\u0323" for c in first) if lac.kind == "unclear"
                   else f"[{first}]")           # an unclear letter restored: underdotted
        return
    if tag == "lb":
        out.append("\n" if el.get("break") != "no" else "\x00-\n")
    elif tag == "gap":
        out.append(_leiden_gap(el, lac))
    elif tag == "supplied" and el.get("reason") == "lost":
        out.append("[")
        _leiden_content(el, edition, readings, out)
        out.append("]")
    elif tag == "supplied" and el.get("reason") == "omitted":
        out.append("⟨")
        _leiden_content(el, edition, readings, out)
        out.append("⟩")
    elif tag == "ex":
        out.append("(")
        _leiden_content(el, edition, readings, out)
        out.append(")")
    elif tag == "unclear":
        inner: list[str] = []
        _leiden_content(el, edition, readings, inner)
        out.append("".join(c + "\u0323" if c.isalpha() else c for c in "".join(inner)))
    elif tag in ("surplus",):
        out.append("{")
        _leiden_content(el, edition, readings, out)
        out.append("}")
    elif tag in ("note", "certainty", "rdg", "sic", "orig", "abbr", "am") and \
            _local(el.getparent().tag) == "choice" or tag in ("note", "certainty", "rdg", "am"):
        return
    elif tag in ("g", "space"):
        out.append(" vac. " if tag == "space" else " ")
    else:
        _leiden_content(el, edition, readings, out)


def _leiden_gap(el, lac: Lacuna | None) -> str:
    if lac is None:
        q = extent_number(el, "quantity")      # bounded: never a billion dots
        if el.get("reason") == "illegible" and q and el.get("unit", "character") == "character":
            return "." * q                 # illegible letters: dots outside brackets
        return "[---]" if el.get("unit") != "line" else "\n[---]\n"
    if lac.unknown:                    # restored when asked (unknown_lengths); not read here
        return "[---]"
    if lac.lengths is not None:
        return f"[c.{lac.length}]"
    return "[" + "." * lac.length + "]" if lac.length <= 4 else f"[.{lac.length}]"
