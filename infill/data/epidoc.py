"""EpiDoc TEI editions <-> infill's gapped text (reading; :mod:`infill.data.epidoc_write` writes).

:func:`read_edition` parses an EpiDoc file safely (no DTD, no entity expansion, no network, a size
bound) and reads its edition ``<div type="edition">`` into a stream of *atoms*: characters (each
with the XML node, slot -- its ``text`` or ``tail`` -- and offset it came from), soft word
boundaries, and *lost stretches* (:class:`Lacuna`). :meth:`Edition.render` turns the stream into
the text a Greek model reads, with each lost stretch shown in one of three ways:

- ``"text"``: the editor's supplement as text (a ``<supplied reason="lost">``);
- ``"restore"``: ``?`` per character to restore (a ``<gap reason="lost">`` of known quantity, or a
  supplement hidden with ``hide_supplied``);
- ``"missing"``: ``-`` per character, not restored (``---`` when the extent is unknown).

How elements read (everything else is read as plain text and listed in the notes):

======================================  ===============================================
element                                 read as
======================================  ===============================================
``<lb/>``                               a word boundary; ``break="no"``: none (the
                                        word runs on, whitespace around it ignored)
``<w>``, ``<unclear>``, ``<name>`` ...  their text (containers); ``<unclear>`` with
                                        ``unclear="restore"``: its letters restored among
                                        their look-alikes (a lacuna of kind ``unclear``)
``<expan>``, ``<abbr>``, ``<ex>``       the expanded word (abbreviation + expansion)
``<am>``                                dropped (an abbreviation mark, not a letter)
``<choice>``                            ``<corr>``, ``<reg>``, ``<expan>`` (the editor's
                                        reading); ``<sic>``, ``<orig>``, ``<abbr>`` dropped
``<app>``                               ``<lem>``; ``<rdg>`` dropped (without a
                                        ``<lem>``: the first ``<rdg>``)
``<g>``, ``<space>``, ``<milestone>``   a word boundary (a sign or a vacat); none
                                        inside a ``<w>``
``<num>``, ``<orig>``, ``<del>``        their text
``<surplus>``, ``<note>``,              dropped (superfluous letters; commentary)
``<certainty>``
``<gap reason="lost">``                 quantity q, unit character: q to restore;
                                        ``precision="low"`` or ``atLeast``/``atMost``: an
                                        uncertain length (:attr:`Lacuna.lengths`); unknown
                                        extent or lines: missing, not restored
``<gap>`` of another reason             missing, not restored
``<supplied reason="lost">``            the editor's supplement (a lost stretch)
``<supplied>`` of another reason        its text
======================================  ===============================================
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from infill.data.files import parse_count, read_text
from infill.data.greek import GREEK, normalize
from infill.data.latin import alphabet_for
from infill.data.letters import lookalike_table
from infill.errors import InputError
from infill.lazy import LazyModule

etree = LazyModule("lxml.etree")       # the XML parser, on first read

__all__ = ["MAX_BYTES", "MAX_EXTENT", "TEI", "Atom", "Edition", "Lacuna", "Rendered",
           "approximate_lengths", "extent_number", "is_epidoc", "parse_xml", "read_edition",
           "read_edition_text"]

TEI = "http://www.tei-c.org/ns/1.0"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
MAX_BYTES = 20 * 2 ** 20
"""The largest EpiDoc file read (an inscription's file is a few kB)."""
UNKNOWN_RUN = "---"
"""How a lost stretch of unknown extent is shown (missing, not restored), as Leiden ``[---]``."""

_CONTAINERS = {"w", "unclear", "name", "persName", "placeName", "roleName", "rs", "date", "seg",
               "hi", "ab", "div", "l", "lg", "expan", "abbr", "ex", "num", "orig", "del", "lem",
               "corr", "reg", "add", "p", "handShift", "foreign", "geogName", "orgName", "measure"}
_BLOCKS = {"ab", "div", "l", "lg", "p"}
_BOUNDARIES = {"g", "space", "milestone", "cb", "pb"}
_DROPPED = {"am", "surplus", "note", "certainty", "rdg", "sic", "join", "figure", "link"}
_CHOICE_KEEP = ("corr", "reg", "expan", "lem")
_RESERVED = "?-"
_ENTITY_DECL = re.compile(r"<!ENTITY", re.I)
_DECL_START = re.compile(r"\s*<\?xml(?=[\s?])")
_DECL = re.compile(r"""\s*<\?xml
    \s+version\s*=\s*(?:"1\.[0-9]+"|'1\.[0-9]+')
    (?:\s+encoding\s*=\s*(?:"[A-Za-z][A-Za-z0-9._-]*"|'[A-Za-z][A-Za-z0-9._-]*'))?
    (?:\s+standalone\s*=\s*(?:"(?:yes|no)"|'(?:yes|no)'))?
    \s*\?>\s*""", re.X)
"""The XML declaration as the XML grammar (production 23) allows it, and the space after it."""
MAX_EXTENT = 2000
"""The most characters (or lines) a ``quantity``/``extent``/``atLeast``/``atMost`` of an EpiDoc
element may give: a lost stretch longer than this is no lacuna to restore."""
_NUMBERS = ("quantity", "extent", "atLeast", "atMost")


@dataclass(frozen=True)
class Atom:
    """One item of an edition's text stream. ``kind``: ``char`` (``char`` from ``node``'s
    ``slot`` -- ``"text"`` or ``"tail"`` -- at ``offset``), ``space`` (a word boundary),
    ``glue`` (no word boundary here: ``<lb break="no"/>``), ``lost`` (lacuna ``lacuna``),
    ``missing`` (``count`` characters lost and not restored; 0 = unknown extent)."""

    kind: str
    char: str = ""
    node: object = None
    slot: str = ""
    offset: int = 0
    lacuna: int = -1
    count: int = 0


@dataclass
class Lacuna:
    """A lost stretch the model may restore: a ``<gap reason="lost">`` of known quantity
    (``kind="gap"``) or an editor's ``<supplied reason="lost">`` (``kind="supplied"``, its text in
    ``editor`` and its characters in ``atoms``); read with ``unclear="restore"``, an
    ``<unclear>`` of letters (``kind="unclear"``, the editor's reading in ``editor``).
    ``length``: characters to restore (a supplement's normalized length); ``lengths``: (fewest,
    most) when the length is uncertain, else None; ``line``: the source (XML) line of the
    element; ``lb``: the inscription's line (the ``n`` of the last ``<lb/>`` before it)."""

    index: int
    kind: str
    node: object
    length: int
    lengths: tuple[int, int] | None = None
    editor: str | None = None
    line: int | None = None
    atoms: list[Atom] = field(default_factory=list)
    lb: str | None = None
    unknown: bool = False
    """A ``<gap>`` of unknown extent read with ``unknown`` lengths: ``lengths`` is that range
    (always decoded over it), ``length`` its fewest."""


@dataclass
class Rendered:
    """An edition as text: ``text`` and, per character, where it came from (``sources[i]``: an
    :class:`Atom` of kind ``char``, the index of the lacuna it shows, or None for a word
    boundary or a missing stretch); ``restore``: the lacunae to restore, in text order, each
    with its [start, end) span; ``ranges``: those of uncertain length shown as the gap marker
    (``render(marker=...)``), with their (fewest, most) characters, in text order."""

    text: str
    sources: list
    restore: list[tuple[int, int, int]]
    ranges: list[tuple[int, tuple[int, int]]] = field(default_factory=list)


@dataclass
class Edition:
    """An EpiDoc file read: the parsed ``tree``, its edition ``div``, the ``atoms`` of its text,
    its ``lacunae``, the edition's language and ``notes`` on what was not understood."""

    path: str
    tree: object
    div: object
    atoms: list[Atom]
    lacunae: list[Lacuna]
    lang: str | None
    notes: list[str]
    declaration: str = ""           # the XML declaration as written, with the space after it
    trailer: str = ""               # whitespace after the root element
    # declaration and trailer: the whole text before and after the root element as written (its
    # processing instructions, comments, doctype and the space between them), for a byte-exact copy
    ends_as_written: bool = False
    alphabet: object = None         # the alphabet it is read in (infill.data.latin.alphabet_for)

    @property
    def supplements(self) -> list[Lacuna]:
        return [lac for lac in self.lacunae if lac.kind == "supplied"]

    def render(self, policy=None, hide_supplied: bool = False,
               marker: str | None = None, only_unknown: bool = False) -> Rendered:
        """The edition as text. ``policy(lacuna) -> "text" | "restore" | "missing"`` decides how
        each lost stretch shows; by default a gap is restored and a supplement kept as text (or
        restored, with ``hide_supplied``). With ``marker``, a lacuna of uncertain length to
        restore is shown as the marker (its range in :attr:`Rendered.ranges`), not as ``?``;
        ``only_unknown``: only the lacunae of unknown extent (the others at their stated
        length)."""
        if policy is None:
            def policy(lac: Lacuna) -> str:
                return "restore" if lac.kind in ("gap", "unclear") or hide_supplied else "text"
        return _render(self.atoms, self.lacunae, policy, marker, only_unknown)

    def text(self, hide_supplied: bool = False) -> str:
        """The gapped text ``infill run`` decodes (``?`` to restore, ``-`` missing)."""
        return self.render(hide_supplied=hide_supplied).text


def approximate_lengths(quantity: int) -> tuple[int, int]:
    """The range of lengths a lacuna of *about* ``quantity`` characters (``precision="low"``,
    Leiden ``[c.5]``) is decoded over: ± a fifth of it, at least ± 1."""
    d = max(1, round(quantity / 5))
    return max(1, quantity - d), quantity + d


# ---- reading the file ---------------------------------------------------------------------------
def _local(tag) -> str:
    return tag.split("}", 1)[1] if isinstance(tag, str) and "}" in tag else str(tag)


def parse_xml(path: str | Path, text: str | None = None):
    """(tree, declaration, trailing whitespace) of an XML file, parsed safely: no DTD loaded,
    no entity expanded, no network, no huge trees; entity declarations are refused. InputError
    names the file and line. :func:`text_around_root` gives the rest of the text around the
    root as written."""
    name = str(path)
    if text is None:           # the bounded reader (it names the file): never more than MAX_BYTES
        text = read_text(path, "EpiDoc file", limit=MAX_BYTES)
    elif len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise InputError(f"{name}: over the {MAX_BYTES // 2 ** 20} MB limit for an EpiDoc file",
                         path=name)
    m = _ENTITY_DECL.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        raise InputError(f"{name}: line {line}: entity declarations are refused (an EpiDoc file "
                         "needs none; nothing was expanded or fetched)", path=name, line=line)
    decl = _declaration(text, name)
    # the declaration's line ends kept, so that every element's sourceline is the file's line
    body = "\n" * decl.group(0).count("\n") + text[decl.end():] if decl else text
    parser = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True,
                             dtd_validation=False, huge_tree=False, remove_blank_text=False,
                             strip_cdata=False, remove_comments=False, remove_pis=False)
    try:
        root = etree.fromstring(body, parser)
    except ValueError as e:         # lxml refuses some text outright (a second declaration)
        raise InputError(f"{name}: not well-formed XML ({str(e).splitlines()[0][:120]})",
                         path=name) from None
    except etree.XMLSyntaxError as e:
        line = e.lineno or 1
        msg = str(e.msg or e).split(", line")[0].strip()
        raise InputError(f"{name}: line {line}: not well-formed XML ({msg})", path=name,
                         line=line) from None
    return root.getroottree(), (decl.group(0).lstrip() if decl else ""), \
        text[len(text.rstrip()):]


_MISC = r"(?:\s|<\?(?:(?!\?>).)*\?>|<!--(?:(?!--).)*-->"
_PROLOG = re.compile(_MISC + r"|<!DOCTYPE\b[^\[>]*(?:\[[^\]]*\])?\s*>)*", re.S)
_EPILOGUE = re.compile(_MISC + r")*", re.S)
"""What may stand around the root element: space, processing instructions, comments, and before
it a doctype."""


def text_around_root(text: str, root) -> tuple[str, str] | None:
    """(the text before the root's start tag, after its end tag) exactly as written, found by the
    XML grammar of what may stand there; None where the text does not show them plainly (a
    self-closing root, a comment after the root holding its end tag, a ``]`` inside a doctype's
    internal subset): lxml then writes the root's siblings."""
    decl = _DECL.match(text)
    start = _PROLOG.match(text, decl.end() if decl else 0).end()
    qname = (f"{root.prefix}:" if root.prefix else "") + _local(root.tag)
    if not re.match(rf"<{re.escape(qname)}[\s>]", text[start:start + len(qname) + 2]):
        return None
    end_tag = re.compile(rf"</{re.escape(qname)}\s*>")
    close = text.rfind(f"</{qname}")
    m = end_tag.match(text, close) if close > start else None
    if m is None or _EPILOGUE.fullmatch(text, m.end()) is None:
        return None
    return text[:start].lstrip(), text[m.end():]


def _declaration(text: str, name: str):
    """The match of the XML declaration opening ``text`` (None when there is none); a malformed
    one (an attribute it may not have, a ``>`` inside it, no ``?>``) is an InputError."""
    if not _DECL_START.match(text):
        return None
    decl = _DECL.match(text)
    if decl is None:
        line = text.count("\n", 0, _DECL_START.match(text).end()) + 1
        raise InputError(f"{name}: line {line}: malformed XML declaration (expected <?xml "
                         "version=\"1.0\" encoding=\"...\" standalone=\"yes|no\"?>, only those "
                         "attributes)", path=name, line=line)
    return decl


def is_epidoc(text: str) -> bool:
    """Whether ``text`` looks like a TEI document (its root in the TEI namespace)."""
    head = text[:4000]
    decl = _DECL.match(head)
    head = head[decl.end():].lstrip() if decl else head.lstrip()
    return head.startswith("<") and TEI in head and bool(re.search(r"<(\w+:)?TEI\b", head))


def read_edition(path: str | Path, text: str | None = None, require_text: bool = True,
                 unclear: str = "keep", unknown: tuple[int, int] | None = None) -> Edition:
    """Read the edition of an EpiDoc file (``text``: its content, when already read). An edition
    without text is an error unless ``require_text`` is False. ``unclear="restore"``: each
    ``<unclear>`` of letters is a lacuna of kind ``unclear`` (its letters restored among their
    look-alikes, :mod:`infill.data.letters`); ``keep``: its text, as the editor reads it.
    ``unknown`` (fewest, most): each ``<gap reason="lost">`` of characters of unknown extent
    is a lacuna of that range (:attr:`Lacuna.unknown`) instead of a break."""
    text = read_text(path, "EpiDoc file", limit=MAX_BYTES) if text is None else text
    tree, decl, trailer = parse_xml(path, text)
    name = str(path)
    root = tree.getroot()
    around = text_around_root(text, root)
    if around is not None:
        decl, trailer = around
    if root.tag != f"{{{TEI}}}TEI":
        raise InputError(f"{name}: line {root.sourceline}: not a TEI document (root element "
                         f"<{_local(root.tag)}>, expected <TEI> in the TEI namespace {TEI})",
                         path=name, line=root.sourceline)
    divs = root.findall(f".//{{{TEI}}}div[@type='edition']")
    if not divs:
        raise InputError(f"{name}: no edition (<div type=\"edition\">) in this TEI file",
                         path=name)
    notes: list[str] = []
    if len(divs) > 1:
        notes.append(f"{len(divs)} editions; the first (line {divs[0].sourceline}) was read")
    div = divs[0]
    _check_numbers(div, name)
    alphabet = alphabet_for(_lang(div), "".join(div.itertext()))
    reader = _Reader(notes, name, unclear, alphabet)
    reader.unknown_lengths = unknown
    reader.element_content(div)
    reader.end_block()
    if alphabet.name == "Latin":
        reader.atoms = _raw_edits_across(reader.atoms, reader.note)
    if require_text and not any(a.kind in ("char", "lost") for a in reader.atoms):
        raise InputError(f"{name}: line {div.sourceline}: the edition holds no text", path=name,
                         line=div.sourceline)
    return Edition(name, tree, div, reader.atoms, reader.lacunae, _lang(div), reader.report(),
                   decl, trailer, around is not None, alphabet)


def read_edition_text(text: str, name: str = "<input>") -> Edition:
    """:func:`read_edition` of a document given as text."""
    return read_edition(name, text)


def _check_numbers(div, name: str) -> None:
    """Every extent the edition's elements give (dropped ones too: the Leiden writer reads
    them) parsed strictly, so that a hostile number is one error here, not a hang later."""
    for el in div.iter("*"):
        if _local(el.tag) == "num":      # a numeral's value (atLeast="6001"), not an extent
            continue
        for attr in _NUMBERS:
            extent_number(el, attr, name)


def _lang(div) -> str | None:
    node = div
    while node is not None:
        lang = node.get(XML_LANG)
        if lang:
            return lang
        node = node.getparent()
    return None


# ---- the edition's text stream -------------------------------------------------------------------
class _Reader:
    """One recursive walk over the edition, appending atoms (and lacunae)."""

    def __init__(self, notes: list[str], path: str = "<input>", unclear: str = "keep",
                 alphabet=None):
        self.path, self.unclear = path, unclear
        self.alphabet = alphabet or GREEK
        self.paren = 0              # open raw parentheses of a Latin edition (latin_leftover)
        self.bracket: int | None = None     # where a raw '[' of a Latin edition opened (atoms)
        self.floor = 0              # the first atom of the element being read apart (inside)
        self.lost = False           # reading a lost supplement's letters (inside)
        self.atoms: list[Atom] = []
        self.lacunae: list[Lacuna] = []
        self.notes = notes
        self.unknown: dict[str, int] = {}
        self.loose: dict[str, int] = {}
        self.lb: str | None = None
        self.unknown_lengths: tuple[int, int] | None = None     # read_edition's ``unknown``

    def report(self) -> list[str]:
        out = list(self.notes)
        for tag, n in self.unknown.items():
            out.append(f"<{tag}> not understood ({n}x): its text was read as plain text")
        for what, n in self.loose.items():
            out.append(f"{what} ({n}x)")
        return out

    def note(self, what: str) -> None:
        self.loose[what] = self.loose.get(what, 0) + 1

    def chars(self, node, slot: str) -> None:
        s = getattr(node, slot) or ""
        latin = self.alphabet.name == "Latin"
        marks = _raw_edit_marks(s, self.note) if latin and ("<" in s or "&lt;" in s) else ()
        for k, c in enumerate(s):
            if latin and (k in marks or self.latin_leftover(s, k) or self.raw_bracket(s, k)):
                continue
            if c.isspace() or c == "\u2028":
                self.atoms.append(Atom("space"))
            elif c in _RESERVED:          # infill's own '?' (restore) and '-' (missing)
                self.note(f"the edition's own {c!r} dropped (infill reads it as "
                          f"{'a letter to restore' if c == '?' else 'a missing letter'})")
            else:
                self.atoms.append(Atom("char", c, node, slot, k))

    def latin_leftover(self, s: str, k: int) -> bool:
        """Whether character ``k`` of ``s`` is raw Leiden left in a Latin edition's text (EDH's
        conversions, ``../shared/data/README.md``), consumed here: an expansion in parentheses
        (``min(iensium)``, ``|(mulieris)``: letters the stone never had, dropped like ``<ex>``,
        even across elements until the block ends), or a run of ``-`` (``------``: lost text of
        unknown extent, shown as missing)."""
        c = s[k]
        if c == "(":
            self.paren += 1
            return True
        if c == ")" and self.paren:
            self.paren -= 1
            return True
        if self.paren:
            return True
        if c == "-" and (s[k + 1: k + 2] == "-" or s[k - 1: k] == "-" and k):
            if not (k and s[k - 1] == "-"):
                self.note("a run of '-' in the text (raw Leiden) read as lost text")
                self.atoms.append(Atom("missing", count=0))
            return True
        return False

    def raw_bracket(self, s: str, k: int) -> bool:
        """Whether character ``k`` of ``s`` is a square bracket of raw Leiden in a Latin edition
        (EDH's stretches never C-tagged), consumed here. ``[`` ... ``]`` is lost text the editor
        restored, as ``<supplied reason="lost">``: read as lost and not restored (the letters
        are no more the stone's than a supplement's; the stretch is not one of the edition's
        supplements, since infill cannot write a reading into raw text). ``[[`` ... ``]]``
        marks an erasure: the brackets are dropped, the letters inside read; so is a bracket
        inside a lost supplement, whose letters are lost already."""
        c = s[k]
        if c not in "[]":
            return False
        if (k and s[k - 1] == c) or s[k + 1: k + 2] == c:
            self.note("EDH's raw [[ ]] (an erasure) dropped, the letters inside read")
        elif self.lost:
            self.note("a raw [ or ] inside a lost supplement dropped (its letters are lost)")
        elif c == "[" and self.bracket is None:
            self.bracket = len(self.atoms)
        elif c == "]" and (self.bracket is not None or self.bracket_after_lost()):
            self.close_bracket()
        else:
            self.note(f"a raw {c!r} without its pair dropped")
        return True

    def bracket_after_lost(self) -> bool:
        """Whether a ``]`` without its ``[`` follows lost text of the same stretch: EDH's
        ``------ Cae]cilia`` (Leiden ``[--- Cae]cilia``, the ``[`` gone with the run of ``-``).
        If so, the raw ``[`` is placed after that lost text (its word space kept)."""
        j = len(self.atoms)
        while j > max(self.floor, len(self.atoms) - 40) and \
                self.atoms[j - 1].kind in ("char", "space", "glue"):
            j -= 1
        if j == self.floor or self.atoms[j - 1].kind != "missing":
            return False
        while j < len(self.atoms) and self.atoms[j].kind in ("space", "glue"):
            j += 1
        self.bracket = j
        return True

    def close_bracket(self) -> None:
        """Read the atoms since the open raw ``[`` as one lost stretch, shown missing: as many
        characters as its letters and spaces, or of unknown extent where it holds a run of
        ``-`` (a lacuna or line inside is left as it was read)."""
        start, self.bracket = self.bracket, None
        inner = self.atoms[start:]
        if not inner or any(a.kind in ("lost", "block") for a in inner):
            return
        unknown = any(a.kind == "missing" and not a.count for a in inner)
        count = len(normalize(_join(inner), alphabet=self.alphabet))
        del self.atoms[start:]
        if unknown or count:
            self.atoms.append(Atom("missing", count=0 if unknown else count))
        self.note("EDH's raw [ ] (lost text an editor restored) read as missing text")

    def element_content(self, el) -> None:
        self.chars(el, "text")
        for child in el:
            self.element(child)
            self.chars(child, "tail")

    def element(self, el) -> None:
        if not isinstance(el.tag, str):         # comments, processing instructions
            return
        tag = _local(el.tag)
        if not el.tag.startswith(f"{{{TEI}}}"):
            self.unknown[el.tag] = self.unknown.get(el.tag, 0) + 1
            self.element_content(el)
            return
        handler = getattr(self, f"on_{tag}", None)
        if handler is not None:
            handler(el)
        elif tag in _DROPPED:
            return
        elif tag in _BOUNDARIES:
            if not _inside_word(el):      # a sign or vacat inside a <w> does not split the word
                self.atoms.append(Atom("space"))
        elif tag in _CONTAINERS:
            block = tag in _BLOCKS
            if block:
                self.end_block()
                self.atoms.append(Atom("block"))
                self.paren = 0
            self.element_content(el)
            if block:
                self.end_block()
                self.atoms.append(Atom("block"))
        else:
            self.unknown[tag] = self.unknown.get(tag, 0) + 1
            self.element_content(el)

    def end_block(self) -> None:
        """At a block's edge a raw ``[`` left open is closed."""
        if self.bracket is not None:
            self.close_bracket()

    def inside(self, el, lost: bool = False) -> None:
        """The content of an element whose atoms are taken apart after (a supplement, an
        unclear): a raw ``[`` opened inside closes inside, one opened before stays open;
        ``lost`` (a lost supplement): its raw brackets say nothing more, and are dropped."""
        outer, self.bracket = self.bracket, None
        floor, self.floor = self.floor, len(self.atoms)
        was, self.lost = self.lost, lost
        self.element_content(el)
        self.end_block()
        self.bracket, self.floor, self.lost = outer, floor, was

    def on_lb(self, el) -> None:
        self.lb = el.get("n", self.lb)
        # a line break inside a <w> never splits the word, break="no" or not
        self.atoms.append(Atom("glue" if el.get("break") == "no" or _inside_word(el) else "space"))

    def on_choice(self, el) -> None:
        kids = [c for c in el if isinstance(c.tag, str)]
        keep = next((c for name in _CHOICE_KEEP for c in kids if _local(c.tag) == name), None)
        if keep is None:
            keep = kids[0] if kids else None
            self.note("<choice> without <corr>, <reg> or <expan>: its first reading was read")
        if keep is not None:
            self.element(keep)

    def on_app(self, el) -> None:
        lem = el.find(f"{{{TEI}}}lem")
        if lem is None:                   # alternatives of equal standing: the first is read
            lem = el.find(f"{{{TEI}}}rdg")
            if lem is not None:
                self.note("<app> without <lem>: its first <rdg> was read")
        if lem is not None:
            self.element_content(lem)

    def on_gap(self, el) -> None:
        count, lengths = _extent(el, self.path)
        if self.paren:              # in a raw expansion, ``f(ili<gap/>)``: no letter of the stone
            self.note("a <gap> inside an expansion in parentheses (raw Leiden) dropped, like "
                      "the expansion")
            return
        lost = el.get("reason") == "lost" and el.get("unit", "character") == "character"
        if lost and not count and self.unknown_lengths is not None:   # unknown extent, restored
            lo, hi = self.unknown_lengths
            lac = Lacuna(len(self.lacunae), "gap", el, lo, (lo, hi), line=el.sourceline,
                         lb=self.lb, unknown=True)
            self.lacunae.append(lac)
            self.atoms.append(Atom("lost", node=el, lacuna=lac.index))
            return
        if not lost or not count:
            self.atoms.append(Atom("missing", node=el, count=count if el.get("unit", "character")
                                   == "character" else 0))
            return
        lac = Lacuna(len(self.lacunae), "gap", el, count, lengths, line=el.sourceline, lb=self.lb)
        self.lacunae.append(lac)
        self.atoms.append(Atom("lost", node=el, lacuna=lac.index))

    def on_ex(self, el) -> None:
        """``<ex>``: an editor's expansion of an abbreviation. A Latin edition's is dropped --
        the stone never had its letters (``co(n)s(ulibus)`` was cut ``cos``); a Greek edition's
        is read, as builtin:greek was trained."""
        if self.alphabet.name != "Latin":
            self.element_content(el)

    def on_am(self, el) -> None:
        """``<am>``: an abbreviation mark. In a Latin edition its letters are the stone's (EDH's
        ``n<am>n</am>`` for ``nn``, numerorum) and are read; in a Greek one it is dropped."""
        if self.alphabet.name == "Latin":
            self.element_content(el)

    def on_unclear(self, el) -> None:
        """``<unclear>``: its text; with ``unclear="restore"`` a lacuna of kind ``unclear`` whose
        letters are restored among their look-alikes (not inside a lost supplement, and only
        when it holds letters alone)."""
        lost = any(a.get("reason") == "lost" for a in el.iterancestors(f"{{{TEI}}}supplied"))
        start = len(self.atoms)
        self.inside(el)
        if self.unclear != "restore" or lost:
            return
        inner = self.atoms[start:]
        editor = _join(inner)
        letters = normalize(editor, symbols=False, alphabet=self.alphabet)
        table = lookalike_table("latin" if self.alphabet.name == "Latin" else "greek")
        if any(a.kind != "char" for a in inner) or not letters or \
                not all(c in table["letters"] for c in letters):
            self.note("an <unclear> that is not letters alone was kept as the editor reads it")
            return
        del self.atoms[start:]
        lac = Lacuna(len(self.lacunae), "unclear", el, len(letters), None, editor, el.sourceline,
                     inner, self.lb)
        self.lacunae.append(lac)
        self.atoms.append(Atom("lost", node=el, lacuna=lac.index))

    def on_supplied(self, el) -> None:
        if el.get("reason") != "lost":
            self.element_content(el)
            return
        if any(a.get("reason") == "lost" for a in el.iterancestors(f"{{{TEI}}}supplied")):
            self.element_content(el)       # inside an outer supplement: part of its text
            return
        start, first_lacuna = len(self.atoms), len(self.lacunae)
        self.inside(el, lost=True)
        inner = self.atoms[start:]
        del self.atoms[start:]
        if self.alphabet.name == "Latin":
            inner = _raw_edits_across(inner, self.note)
        if any(a.kind in ("lost", "missing") for a in inner):
            self.note("a lost supplement holding a <gap> was read as missing text")
            del self.lacunae[first_lacuna:]          # the gaps inside are that text, not lacunae
            self.atoms.append(Atom("missing", node=el, count=0))
            return
        editor = _join(inner)
        length = len(normalize(editor, symbols=False, alphabet=self.alphabet))
        if not length:
            self.atoms.extend(inner)
            return
        lac = Lacuna(len(self.lacunae), "supplied", el, length, None, editor, el.sourceline, inner,
                     self.lb)
        self.lacunae.append(lac)
        self.atoms.append(Atom("lost", node=el, lacuna=lac.index))


_RAW_EDIT = re.compile(r"(?:&lt;|<)([^<>&=]{0,40})(?:=([^<>&]{0,40}))?(?:&gt;|>)(?:gt;)?")
"""EDH's raw Leiden for an editor's letters, left as text (escaped or not): ``<h=T>eres`` (the
stone has T, the editor reads h: as EpiDoc's ``<corr>``) and ``ann<i>s`` (letters the carver
left out, added: as ``<supplied reason="omitted">``); a doubled ``gt;`` after it (a
conversion's slip, ``pos&lt;v=I&gt;gt;it``) goes with it."""
_RAW_LEFT = re.compile(r"&lt;|&gt;")
"""A raw mark without its pair (``censor &lt;------``)."""


def _raw_edit_marks(s: str, note, unpaired: bool = False) -> set[int]:
    """The positions of ``s`` that are the marks of :data:`_RAW_EDIT` around the editor's
    letters, and the stone's letters after ``=``: the editor's letters are read, as EpiDoc's
    ``<corr>`` and omitted supplements are. ``unpaired``: a mark left without its pair too
    (a whole block's letters, where no other text can hold the pair)."""
    marks: set[int] = set()
    for m in _RAW_EDIT.finditer(s):
        marks.update(range(m.start(), m.start(1)))
        marks.update(range(m.end(1), m.end()))
        note("EDH's raw <letters=stone> or <letters> read as the editor's letters")
    for m in _RAW_LEFT.finditer(s) if unpaired else ():
        if m.start() not in marks:
            marks.update(range(m.start(), m.end()))
            note("EDH's raw '<' or '>' without its pair dropped")
    return marks


def _raw_edits_across(atoms: list[Atom], note) -> list[Atom]:
    """``atoms`` without the marks of EDH's raw corrections that an element splits
    (``si&lt;bi<certainty/>=TT&gt;``, ``&lt;<expan>coh</expan>&gt;``), nor the stone's letters
    after ``=``: the letters of each block read as :func:`_raw_edit_marks` reads one text."""
    keep = [True] * len(atoms)

    def scan(chars: list[int]) -> None:
        s = "".join(atoms[i].char for i in chars)
        if "&lt;" in s or "<" in s or "&gt;" in s:
            for k in _raw_edit_marks(s, note, unpaired=True):
                keep[chars[k]] = False

    chars: list[int] = []
    for i, a in enumerate(atoms):
        if a.kind == "block":
            scan(chars)
            chars = []
        elif a.kind == "char":
            chars.append(i)
    scan(chars)
    return [a for a, k in zip(atoms, keep) if k]


def _inside_word(el) -> bool:
    """Whether ``el`` lies inside a ``<w>`` (one word, whatever breaks or signs it holds)."""
    return any(True for _ in el.iterancestors(f"{{{TEI}}}w"))


def extent_number(el, attr: str, path: str = "<input>") -> int | None:
    """The number an element's ``attr`` gives: None when absent or a word (``extent="unknown"``);
    InputError naming the file and line for anything else that is not a whole number of ASCII
    digits up to :data:`MAX_EXTENT`."""
    raw = el.get(attr)
    if raw is None or not any(c.isnumeric() for c in raw) or _extent_range(el) is not None:
        return None
    try:
        return parse_count(raw, MAX_EXTENT)
    except ValueError as e:
        shown = raw if len(raw) <= 20 else raw[:20] + "..."
        why = f"{e} characters (MAX_EXTENT)" if "limit" in str(e) else str(e)
        raise InputError(f"{path}: line {el.sourceline}: <{_local(el.tag)} {attr}={shown!r}>: "
                         f"{why}", path=path, line=el.sourceline) from None


def _extent_range(el) -> tuple[int, int] | None:
    """``extent="10-15"`` (IAph writes a range so): (10, 15); None for anything else."""
    m = re.fullmatch(r"\s*([0-9]{1,6})\s*[-\u2013]\s*([0-9]{1,6})\s*", el.get("extent") or "")
    if m is None or not 0 < int(m[1]) <= int(m[2]) <= MAX_EXTENT:
        return None
    return int(m[1]), int(m[2])


def _extent(el, path: str = "<input>") -> tuple[int, tuple[int, int] | None]:
    """(characters, uncertain range or None) of a ``<gap>``; 0 = unknown extent; a range
    (``atLeast``/``atMost``, or ``extent="10-15"``) counts its middle."""
    lo, hi = extent_number(el, "atLeast", path), extent_number(el, "atMost", path)
    if lo is None and hi is None and _extent_range(el) is not None:
        lo, hi = _extent_range(el)
    q = extent_number(el, "quantity", path)
    if lo is not None and hi is not None and 0 < lo <= hi:
        mid = q if q is not None and lo <= q <= hi else (lo + hi + 1) // 2
        return mid, ((lo, hi) if lo < hi else None)
    n = q if q is not None else extent_number(el, "extent", path)
    if not n:
        return 0, None
    return n, (approximate_lengths(n) if el.get("precision") == "low" else None)


def _join(atoms: list[Atom]) -> str:
    """The text of char/space/glue atoms: spaces collapsed, glue removing them."""
    return _render(atoms, [], lambda lac: "text").text


def _render(atoms: list[Atom], lacunae: list[Lacuna], policy, marker: str | None = None,
            only_unknown: bool = False) -> Rendered:
    text: list[str] = []
    sources: list = []
    restore: list[tuple[int, int, int]] = []
    ranges: list[tuple[int, tuple[int, int]]] = []
    state = {"space": False, "glue": False, "hard": False}

    def put(c: str, src) -> None:
        if (state["space"] or state["hard"]) and text and text[-1] != " ":
            text.append(" ")
            sources.append(None)
        state["space"] = state["glue"] = state["hard"] = False
        text.append(c)
        sources.append(src)

    def walk(items) -> None:
        for a in items:
            if a.kind == "block":             # edges of <ab>, <l>, <div>: always a boundary
                state["hard"] = True
            elif a.kind == "space":
                state["space"] = state["space"] or not state["glue"]
            elif a.kind == "glue":
                state["space"], state["glue"] = False, True
            elif a.kind == "char":
                put(a.char, a)
            elif a.kind == "missing":
                for c in ("-" * a.count if a.count else UNKNOWN_RUN):
                    put(c, None)
            elif a.kind == "lost":
                lac = lacunae[a.lacuna]
                how = policy(lac)
                if how == "text" and lac.kind == "supplied":
                    walk(lac.atoms)
                elif how in ("restore", "text"):      # a gap has no text: restore it
                    start = len(text) + (1 if (state["space"] or state["hard"]) and text
                                         and text[-1] != " " else 0)
                    ranged = marker is not None and lac.lengths is not None and (
                        lac.unknown or not only_unknown)
                    for c in (marker if ranged else "?" * lac.length):
                        put(c, lac.index)
                    restore.append((lac.index, start, len(text)))
                    if ranged:
                        ranges.append((lac.index, lac.lengths))
                else:
                    for c in (UNKNOWN_RUN if lac.unknown else "-" * lac.length):
                        put(c, lac.index)
    walk(atoms)
    return Rendered("".join(text), sources, restore, ranges)    # never a space at either end
