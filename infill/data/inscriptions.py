"""Epigraphic training and evaluation text from EpiDoc editions (IOSPE), for the Greek model.

A minimal reader of an edition (``<div type="edition">``) into normalized *segments*, each
``(kind, text)`` with ``kind`` one of:

- ``"text"``: what the stone shows (``<unclear>`` letters included; ``<expan>`` with its
  ``<ex>`` resolved; ``<choice>`` read as ``<corr>``/``<reg>``; ``<app>`` as ``<lem>``);
- ``"supplied"``: one editor's ``<supplied reason="lost">`` restoration (other supplied reasons
  read as text);
- ``"gap"``: ``<gap reason="lost">``, as ``-`` (missing) characters: ``quantity`` of them when the
  extent is known in characters, else :data:`UNKNOWN_GAP`.

``<lb/>`` is a word boundary (a space) unless ``break="no"``, when the word runs on and the
layout whitespace around it is dropped; ``<note>``, ``<rdg>``, ``<sic>``/``<orig>`` beside a
correction, ``<am>`` and ``<surplus>`` are not text. Text is normalized with
:func:`infill.data.greek.normalize` (training text: other scripts dropped).

Training text (:func:`training_texts`): supplements as text, gaps as ``-`` runs. Evaluation
examples (:func:`restoration_examples`): each supplement of 1-10 normalized characters hidden in
turn as ``?``, every other supplement and gap shown as ``-``. The parser is hardened: no
entities, no DTD, no network.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from infill.data.greek import normalize
from infill.errors import InputError

__all__ = ["UNKNOWN_GAP", "Example", "edition_segments", "iospe_split", "training_texts",
           "restoration_examples", "MixedExamples", "pack", "mixed_examples"]

UNKNOWN_GAP = 3                       # '-' for a lost stretch of unknown extent
_OPEN, _CLOSE, _GAP, _JOIN = "\ue000", "\ue001", "\ue002", "\ue003"
_SKIP = {"note", "rdg", "am", "surplus", "certainty", "desc", "bibl"}
_MARKS = re.compile(f"({_OPEN}|{_CLOSE}|{_GAP}+)")


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _skip(el) -> bool:
    name = _local(el.tag)
    if name in _SKIP:
        return True
    parent = el.getparent()
    if parent is not None and _local(parent.tag) == "choice":
        siblings = {_local(s.tag) for s in parent}
        return (name == "sic" and "corr" in siblings) or (name == "orig" and "reg" in siblings) \
            or (name == "abbr" and "expan" in siblings)
    return False


def _gap_length(el) -> int:
    q = el.get("quantity") or el.get("extent") or ""
    return int(q) if el.get("unit", "character") == "character" and q.isdigit() and 0 < int(q) < 100 \
        else UNKNOWN_GAP


def _walk(el, out: list[str]) -> None:
    name = _local(el.tag)
    if name == "lb" or name == "cb":
        out.append(_JOIN if el.get("break") == "no" else " ")
    elif name == "space":
        out.append(" ")
    elif name == "gap":
        if el.get("reason", "lost") == "lost":
            out.append(_GAP * _gap_length(el))
    elif not _skip(el) and isinstance(el.tag, str):
        lost = name == "supplied" and el.get("reason") == "lost"
        out.append(_OPEN if lost else "")
        out.append(el.text or "")
        for child in el:
            _walk(child, out)
            out.append(child.tail or "")
        out.append(_CLOSE if lost else "")
        return
    # elements whose content is skipped still keep their tail (appended by the caller)


def _parse(path: Path):
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             huge_tree=False)
    try:
        return etree.parse(str(path), parser)
    except (OSError, etree.XMLSyntaxError) as e:
        raise InputError(f"{path}: not readable XML ({str(e).splitlines()[0][:120]})") from None


def edition_segments(path: str | Path) -> list[tuple[str, str]]:
    """The edition of one EpiDoc file as normalized ``(kind, text)`` segments (module doc).
    Nested supplements count as one (the outermost)."""
    root = _parse(Path(path)).getroot()
    raw: list[str] = []
    for div in root.iter("{*}div"):
        if div.get("type") == "edition":
            _walk(div, raw)
            raw.append(" ")
    s = re.sub(rf"\s*{_JOIN}\s*", "", "".join(raw))
    segments: list[tuple[str, str]] = []
    depth = 0
    for piece in _MARKS.split(s):
        if piece == _OPEN:
            depth += 1
            segments.append(("supplied", "")) if depth == 1 else None
        elif piece == _CLOSE:
            depth -= 1
            segments.append(("text", ""))
        elif piece.startswith(_GAP):
            segments.append(("gap", "-" * len(piece)))
        elif piece:
            text = normalize(piece, symbols=False, strip=False)
            kind = "supplied" if depth else "text"
            if segments and segments[-1][0] == kind:
                segments[-1] = (kind, segments[-1][1] + text)
            else:
                segments.append((kind, text))
    return _tidy(segments)


def _tidy(segments: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Collapse spaces across segment boundaries, trim the ends, drop empty segments."""
    out: list[tuple[str, str]] = []
    prev_space = True
    for kind, text in segments:
        if kind != "gap":
            text = re.sub(r" +", " ", text)
            if prev_space:
                text = text.lstrip(" ")
        if text:
            out.append((kind, text))
            prev_space = text.endswith(" ")
    while out and out[-1][0] != "gap" and not out[-1][1].strip():
        out.pop()
    if out and out[-1][0] != "gap":
        out[-1] = (out[-1][0], out[-1][1].rstrip(" "))
    return out


def iospe_split(folder: str | Path) -> dict[str, list[Path]]:
    """The committed by-inscription split of an EpiDoc folder (seed 0, 80/10/10):
    :func:`infill.data.epidoc_corpus.split_files`, the one definition of that split."""
    from infill.data.epidoc_corpus import corpus_files, split_files

    return split_files(corpus_files(folder))


def training_texts(files: list[Path]) -> list[str]:
    """One normalized training text per file: supplements as text, lost stretches as ``-``."""
    texts = []
    for f in files:
        t = "".join(text for _, text in edition_segments(f)).strip()
        if any(c.isalpha() for c in t):
            texts.append(t)
    return texts


@dataclass(frozen=True)
class Example:
    """One hidden supplement: ``text`` with ``?`` * len(``target``) in its place."""

    name: str
    text: str
    target: str
    start: int            # index of the first '?' in text


def restoration_examples(files: list[Path], min_len: int = 1, max_len: int = 10) -> list[Example]:
    """Each ``<supplied reason="lost">`` of ``min_len``-``max_len`` normalized characters (after
    trimming spaces, with at least one letter) hidden in turn; the other supplements and gaps as
    ``-`` (one per character)."""
    out = []
    for f in files:
        segs = edition_segments(f)
        for i, (kind, text) in enumerate(segs):
            target = text.strip(" ")
            if kind != "supplied" or not (min_len <= len(target) <= max_len) \
                    or not any(c.isalpha() for c in target):
                continue
            lead = text[: len(text) - len(text.lstrip(" "))]
            trail = text[len(text.rstrip(" ")):]
            before = "".join(_shown(k, t) for k, t in segs[:i]) + lead
            after = trail + "".join(_shown(k, t) for k, t in segs[i + 1:])
            out.append(Example(f.stem, before + "?" * len(target) + after, target, len(before)))
    return out


def _shown(kind: str, text: str) -> str:
    """A segment as the evaluation shows it: a supplement becomes missing characters, its inner
    spaces too (word division in a lacuna is the editor's guess); spaces around it stay."""
    if kind != "supplied":
        return text
    core = text.strip(" ")
    return text[: len(text) - len(text.lstrip(" "))] + "-" * len(core) + text[len(text.rstrip(" ")):] \
        if core else text


# ---- training examples: literary windows + packed inscriptions ---------------------------------
@dataclass
class MixedExamples:
    """Token-id examples of the literary corpus followed by the inscriptions': ``literary``
    windows, then ``copies`` packings of the training inscriptions (``train``), then one of the
    validation inscriptions (``validation``)."""

    examples: list[list[int]]
    literary: int
    train: int
    validation: int
    texts: list[str]                  # literary text + training inscriptions (for a word list)


def pack(texts: list[str], size: int, seed: int) -> list[str]:
    """``texts`` in a seeded random order, cut into pieces of <= ``size`` characters, packed
    into windows of <= ``size`` characters joined by spaces (no padding wasted on short
    inscriptions)."""
    from infill.data.examples import windows
    import numpy as np

    order = np.random.default_rng([seed, 31]).permutation(len(texts))
    pieces = [p for i in order for p in windows(texts[i], size)]
    out, cur = [], ""
    for p in pieces:
        if cur and len(cur) + 1 + len(p) > size:
            out.append(cur)
            cur = ""
        cur = f"{cur} {p}" if cur else p
    return out + ([cur] if cur else [])


def mixed_examples(corpus: str | Path, max_length: int, folder: str | Path, copies: int
                   ) -> MixedExamples:
    """Literary windows (:func:`infill.data.examples.greek_examples`) + ``copies`` differently
    packed copies of the IOSPE training inscriptions + the validation inscriptions once."""
    from infill.data.examples import greek_examples
    from infill.data.greek import GREEK

    lit = greek_examples(corpus, max_length).examples
    split = iospe_split(folder)
    train, val = training_texts(split["train"]), training_texts(split["validation"])
    ins = [w for k in range(copies) for w in pack(train, max_length - 1, k)]
    ins_val = pack(val, max_length - 1, 0)
    encode = lambda ws: [[GREEK.start_id] + GREEK.encode(w) for w in ws]  # noqa: E731
    texts = [GREEK.decode(e) for e in lit] + train
    return MixedExamples(lit + encode(ins) + encode(ins_val), len(lit), len(ins), len(ins_val),
                         texts)
