"""The request of a fill (``infill run``, :func:`infill.fill_each`, the workbench): the decoding
options (a :class:`~infill.config.DecodeConfig`) and what a fill adds around them, each field
with its rules. Options left out are None, filled in one place
(:func:`infill.filling.defaults.resolve_fill`). Imports no torch.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from infill.config import DecodeConfig
from infill.errors import ConfigError, InputError
from infill.fields import MAX_BATCH_SIZE, Request, option
from infill.data.letters import check_letters
from infill.lazy import LazyModule
from infill.names import LACUNA_EDGES, LENGTH_BEAMS, LENGTH_SCORES, REGIONS, RERANKS, UNCLEAR

lengths = LazyModule("infill.decoding.lengths")       # read when given: not for --help

__all__ = ["FillRequest", "MAX_GAP_DIGITS", "NOT_FOR", "UNSET", "check_applies",
           "check_gap_text", "check_ranking", "given_ranking", "unknown_span"]

UNSET: Any = type("Unset", (), {"__repr__": lambda self: "<not given>", "__slots__": ()})()
"""A keyword not given (None is a value: ``gap=None`` asks for the model's gap)."""


def _gap_checked_later(gap) -> bool:
    """A range ("4-6", (4, 6)), "word", a per-marker list, or what is no gap length at all
    (1.5): read against the model, whose reading words the error (an InputError)."""
    return not isinstance(gap, int) or isinstance(gap, bool)


_GAP_TEXT = re.compile(r"word|([0-9]+)(?:\s*(?:-|\.\.)\s*([0-9]+))?")
MAX_GAP_DIGITS = 9
"""A gap length written as text has at most this many digits (no model holds a longer gap;
``int()`` of thousands of digits is refused by Python itself)."""


def check_gap_text(gap) -> None:
    """InputError naming 'gap' unless a gap written as text (``5``, ``4-6``, ``word``; each
    string of a per-marker list) is that, in ASCII digits of a sane size (``str.isdigit``
    takes ``²``, which ``int`` does not)."""
    for g in gap if isinstance(gap, list) else [gap]:
        if not isinstance(g, str):
            continue
        m = _GAP_TEXT.fullmatch(g.strip().lower())
        shown = repr(g) if len(g) <= 40 else f"{g[:20]!r}... ({len(g):,} characters)"
        if m is None:
            raise InputError("a gap length is a number, a range lo-hi (e.g. 4-6) or 'word', "
                             f"got {shown}", field="gap")
        if any(n and len(n.lstrip("0")) > MAX_GAP_DIGITS for n in m.groups()):
            raise InputError(f"gap lengths have at most {MAX_GAP_DIGITS} digits, got {shown}",
                             field="gap")


@dataclass(frozen=True)
class FillRequest(Request):
    """Every option of a fill: the decoding options (``config``, a
    :class:`~infill.config.DecodeConfig`) and what a fill adds around them. Every entry point
    (:func:`infill.fill`, :func:`infill.readings`, :func:`infill.epigraphy.restore_files`, the
    jobs, the HTTP bodies) takes one and passes it on whole. (``decode``, the old name of
    ``config``, is read with a DeprecationWarning.)"""

    KIND: ClassVar[str] = "fill"
    RENAMED: ClassVar[dict[str, str]] = {"decode": "config"}

    config: DecodeConfig = dataclasses.field(default_factory=DecodeConfig)
    top_k: int = option(5, int, "Completions shown per input (raises --beam if larger).", low=1,
                        what="top-k")
    gap: Any = option(None, int, "Tokens (characters, residues) to fill at each gap marker: N, a "
                      "range LO-HI (every length is decoded and all ranked by --length-score), "
                      "or 'word' (one whole word of 1-3 word pieces). Default: the model's "
                      "(builtin:english: word), else 1.", low=1, optional=True,
                      skip=_gap_checked_later)
    marker: str = option("___", str, "The gap marker in TEXT.")
    length_score: str | None = option(None, str, "How completions of different gap lengths are "
                                      "ranked together: pll (pseudo-log-likelihood of the filled "
                                      "text), pll-gap (of the gap only), pll-word (of the gap, "
                                      "each piece scored with the rest of its word hidden), "
                                      "per-char (the decoder's score per character), per-char-0.7 "
                                      "(the score / characters^0.7). Default: the "
                                      "model's (builtin:english: pll-word), else pll.",
                                      choices=LENGTH_SCORES, optional=True)
    length_beam: str | None = option(None, str, "How the lengths of gaps of uncertain length "
                                     "are searched: shared (the length combinations of an input "
                                     "share one beam: at each step the --beam-size best "
                                     "hypotheses of any lengths live on) or each (every "
                                     "combination its own beam: combinations x the work). "
                                     "Default: the model's (builtin:greek: shared), else each.",
                                     choices=LENGTH_BEAMS, optional=True)
    rerank: str | None = option(None, str, "How the beam's completions of gaps of one length "
                                "are ranked: off (by their score) or by the mean of their score "
                                "and the pseudo-log-likelihood of the filled text (pll), of the "
                                "gap only (pll-gap) or of the gap with the rest of each word "
                                "hidden (pll-word). Default: the model's (defaults.json), else "
                                "off.",
                                choices=RERANKS, optional=True)
    region: str | None = option(None, str, "Antibody models: redesign this IMGT region of each "
                                "sequence (cdr1, cdr2, cdr3, fr1..fr4) instead of marking gaps.",
                                choices=REGIONS, optional=True, what="region")
    letters: Any = option(None, str, "Letters allowed at gap positions: one entry per gap, None "
                          "or a list with one entry per position (None: any; a string of "
                          "letters or residues, or a list of tokens). In a text: #[ηιν] is one "
                          "position to restore limited to those letters.", optional=True,
                          skip=lambda v: v is not None)      # its shape: check_letters
    unclear: str = option("keep", str, "Unclear letters (Leiden underdot, EpiDoc <unclear>): keep "
                          "(read as the editor reads them) or restore (restored among their "
                          "look-alikes in Greek capitals).", choices=UNCLEAR)
    lacuna_edges: str | None = option(None, str, "What the first and last characters of a "
                                      "lacuna (a run of adjacent gap positions) may be: letters "
                                      "(a sign of the writing -- letter, numeral, interpunct -- "
                                      "never a word space: a space beside a lost word lies "
                                      "outside the lacuna, as Leiden brackets it) or any. Default: "
                                      "the model's (builtin:latin: letters), else "
                                      "any.", choices=LACUNA_EDGES, optional=True)
    unknown_lengths: Any = option(None, str, "Restore each lacuna of unknown extent (Leiden "
                                  "[---], [- - -]; EpiDoc <gap reason=\"lost\" "
                                  "extent=\"unknown\">) as a gap of LO-HI characters, every "
                                  "length decoded and all ranked by --length-score, as --gap "
                                  "LO-HI. Default: left as a break, not restored. (Aeneas's own "
                                  "search sizes '#' lacunae itself: --unknown-max-length.)",
                                  optional=True, skip=lambda v: v is not None,
                                  what="unknown-extent lengths")
    window: bool = option(True, bool, "Decode an input longer than the model in context windows "
                          "(False: an error).")
    batch_size: int = option(32, int, "Inputs decoded together (one forward pass per step for "
                             "the whole batch).", low=1, high=MAX_BATCH_SIZE)

    def check(self) -> None:
        check_gap_text(self.gap)
        unknown_span(self.unknown_lengths)
        check_letters(self.letters)
        if not isinstance(self.config, DecodeConfig):
            raise ConfigError(f"config must be a DecodeConfig, got {type(self.config).__name__}",
                              field="config")

    def to_json(self) -> dict:
        return {**super().to_json(), "config": self.config.to_json()}

    @classmethod
    def of(cls, request: "FillRequest | None" = None, **options) -> "FillRequest":
        """``request`` (default: the defaults) with keyword ``options`` applied: a fill option (a
        field here; ``config=``: a whole :class:`DecodeConfig`) or a decoding option (a field of
        DecodeConfig: ``beam_size=``, ``scorer=``, ...), which goes into ``config``; a keyword
        :data:`UNSET` is not given. What the Python API's keywords become; unknown keywords
        raise :class:`ConfigError`."""
        mine = set(cls.fields()) | set(cls.RENAMED)
        options = {k: v for k, v in options.items() if v is not UNSET}
        fill = {k: v for k, v in options.items() if k in mine}
        decoding = {k: v for k, v in options.items() if k not in mine}
        request = cls.from_options(request, **fill)
        if decoding:
            request = request.replace(config=DecodeConfig.from_options(request.config,
                                                                       **decoding))
        return request


def unknown_span(value) -> tuple[int, int] | None:
    """The (fewest, most) characters of ``unknown_lengths`` (``"LO-HI"``, ``"N"``, ``(lo, hi)``
    or N); None when not given; InputError naming the field for anything else."""
    if value is None:
        return None

    bad = isinstance(value, bool) or not isinstance(value, (int, str, tuple, list))
    try:
        length = None if bad else lengths.one_length(tuple(value) if isinstance(value, list)
                                                     else value)
    except InputError as e:
        raise InputError(f"unknown_lengths: {e.message()}", field="unknown_lengths") from None
    if isinstance(length, int) and length >= 1:
        return length, length
    if length is None or isinstance(length, int) or length.word:
        raise InputError("unknown_lengths is a range of characters LO-HI (e.g. 2-12) or one "
                         f"length N, got {value!r}", field="unknown_lengths")
    return length.lo, length.hi


NOT_FOR: dict[str, dict[str, str]] = {
    "fill's texts": {      # infill.fill / fill_each: gap markers, no Leiden read
        "region": "fill fills the gap markers it is given; fill_inputs (infill run --region) "
                  "masks an antibody's IMGT region",
        "unclear": "fill reads no Leiden; fill_inputs (infill run) and restore_files restore "
                   "underdotted letters (letters= limits a gap position's letters)",
        "unknown_lengths": "fill reads no Leiden; fill_inputs (infill run) and restore_files "
                           "restore its [---] lacunae (a gap of several lengths: gap=(lo, hi))",
    },
    "EpiDoc files": {
        "gap": "an edition's lacunae carry their own lengths (<gap quantity>, atLeast/atMost)",
        "marker": "an edition marks its lacunae itself (<gap>, <supplied>)",
        "region": "IMGT regions are antibody sequences, not inscriptions",
        "letters": "an edition's letter sets are its <unclear> letters (unclear='restore')",
    },
    "readings": {
        "region": "readings are typed for a text's own lacunae, not an antibody region",
        "batch_size": "readings score the lacunae of one text",
        "seed": "readings are scored exactly (standard or hcb, no sampling): nothing is drawn",
        "unknown_lengths": "readings give each lacuna its length",
    },
    "an EpiDoc file's <app> readings": {
        "gap": "each <app>'s readings carry their own lengths",
        "marker": "an edition marks its lacunae itself (<supplied>, <app>)",
        "region": "IMGT regions are antibody sequences, not inscriptions",
        "letters": "the readings are the <lem> and <rdg> of each <app>",
        "unclear": "only the <app> lacunae are scored; other letters are read as written",
        "unknown_lengths": "only the <app> lacunae are scored; each reading gives its length",
    },
}
"""Per kind of input, the options (fields of :class:`FillRequest` or of its config) that do not
apply to it and why: given (not their default), :func:`check_applies` refuses them -- an option
is honoured or refused, never dropped."""


def check_applies(request: FillRequest, kind: str) -> None:
    """:class:`ConfigError` naming the first option of ``request`` (or of its config) that is set
    (differs from its default) although it does not apply to inputs of ``kind``
    (:data:`NOT_FOR`)."""
    for name, why in NOT_FOR[kind].items():
        owner = request if name in FillRequest.fields() else request.config
        if owner.changed([name]):
            raise ConfigError(f"'{name}' does not apply to {kind}: {why}", field=name)


def given_ranking(request: FillRequest) -> frozenset[str]:
    """The ranking options ``request`` sets (before defaults): ``length_score`` and
    ``length_beam`` when not None, ``rerank`` when not None or ``off``."""
    given = {n for n in ("length_score", "length_beam") if getattr(request, n) is not None}
    return frozenset(given | ({"rerank"} if request.rerank not in (None, "off") else set()))


def check_ranking(given: frozenset[str], some_compete: bool, all_compete: bool) -> None:
    """:class:`ConfigError` for a ranking option the user gave (``given``:
    :func:`given_ranking`) that would rank nothing: ``length_score`` or ``length_beam`` when no
    gap of the inputs has several lengths (``some_compete`` False), ``rerank`` when every
    input's lengths compete (``all_compete``: they are ranked by ``length_score`` instead)."""
    for name in ("length_score", "length_beam"):
        if name in given and not some_compete:
            raise ConfigError(f"'{name}' ranks fills of several lengths; every gap here has one "
                              "length (a range gap LO-HI, 'word', unknown_lengths or a Leiden "
                              "[c.N] has several)", field=name)
    if "rerank" in given and all_compete:
        raise ConfigError("'rerank' reranks the completions of one gap length; these gaps have "
                          "several lengths, ranked together by length_score", field="rerank")
