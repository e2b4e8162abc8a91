"""The inputs of a job, and how a fill reads them before decoding: an antibody ``region`` masked
(IMGT numbering) and, for character models, an edition's Leiden sigla converted.

Whether Leiden sigla are read is the model's to say (:func:`reads_leiden`: a model that fills
characters), the same for ``infill run``, :func:`infill.jobs.fill_inputs` and the workbench.
A problem with one input (not an antibody domain, a malformed siglum) becomes that input's
``error``; the others go on.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from infill.data.files import check_length, check_text, read_input
from infill.data.letters import PLACE, has_sets, mark_sets, place_sets
from infill.errors import InfillError, InputError
from infill.lazy import LazyModule

# On first use: the command line's help imports this module, and none of these readers.
fasta = LazyModule("infill.data.fasta")
leiden_sigla = LazyModule("infill.data.leiden")
regions = LazyModule("infill.data.regions")

__all__ = ["Input", "Outcome", "as_inputs", "chain_mismatch", "mask_regions", "read_inputs",
           "read_leiden", "read_letters", "reads_leiden", "reads_letters", "text_inputs"]


@dataclass(frozen=True)
class Input:
    """One input of a job: its ``id`` (a FASTA header's first word, else its 1-based number),
    the ``text`` and, for FASTA, the whole ``header``; ``error`` when it cannot be used (then
    ``text`` may be None); ``notes`` on how it was read; ``gap``: its own per-marker gap
    lengths (an edition's approximate lacunae ``[c.3]``), None for the job's ``gap``;
    ``letters``: its own letter sets per gap (``#[ηιν]`` in its text), None for the job's."""

    id: str
    text: str | None
    header: str | None = None
    error: str | None = None
    notes: tuple[str, ...] = ()
    gap: list | None = None
    letters: list | None = None


class Outcome:
    """What a job made of one :class:`Input`: a result type with ``input``, ``error`` and
    ``error_field`` gets the input's ``id`` and its error as an exception naming the input."""

    input: Input
    error: str | None
    error_field: str | tuple[str, ...] | None

    @property
    def id(self) -> str:
        return self.input.id

    def failure(self) -> InputError | None:
        """The error as an exception naming this input (``input``) and the field at fault."""
        if self.error is None:
            return None
        return InputError(self.error, field=self.error_field, input=self.id)


def as_inputs(items: Iterable) -> list[Input]:
    """Strings (numbered from 1) or records with ``id``, ``text`` and optionally ``header``,
    ``error``, ``notes`` (the CLI's) as :class:`Input` s."""
    out = []
    for i, item in enumerate(items, 1):
        if isinstance(item, Input):
            out.append(item)
        elif isinstance(item, str):
            out.append(Input(str(i), item))
        else:
            out.append(Input(item.id, item.text, getattr(item, "header", None),
                             getattr(item, "error", None), tuple(getattr(item, "notes", ()))))
    return out


FILE_SUFFIXES = (".fa", ".fasta", ".faa", ".fas", ".txt", ".tsv")
"""A lone argument with one of these suffixes that names an existing file is read as it."""


def names_a_file(arg: str) -> bool:
    """Whether a lone argument is the name of an existing input file (FASTA or text suffix)."""
    if len(arg) > 4096 or "\n" in arg or not arg.lower().endswith(FILE_SUFFIXES):
        return False
    try:
        return os.path.isfile(arg)
    except (OSError, ValueError):
        return False


def looks_like_a_file(arg: str) -> bool:
    """An argument without whitespace ending in an input file's suffix (``x.fa``, ``in.txt``)."""
    return len(arg) <= 4096 and arg.lower().endswith(FILE_SUFFIXES) \
        and not any(c.isspace() for c in arg)


def read_inputs(texts: Sequence[str], input_file: str | None, what: str = "input",
                stdin_is_terminal: bool = False) -> list[Input]:
    """A job's inputs, read one way for every front end: the ``texts`` given (a lone one naming
    an existing .fa/.fasta/.txt file is read as that file), else ``input_file`` (``-``: stdin):
    FASTA records when the text is FASTA (:func:`text_inputs`), else one input per non-empty
    line. ``stdin_is_terminal``: nothing is piped, so no input was given."""
    texts = tuple(texts)
    if len(texts) == 1 and input_file is None and names_a_file(texts[0]):
        texts, input_file = (), texts[0]
    if texts and input_file is not None:
        raise InputError(f"give {what}s either as arguments or with 'input_file', not both",
                         field="input_file")
    if texts:
        for i, t in enumerate(texts, 1):
            if looks_like_a_file(check_length(check_text(t, f"argument {i}"), f"argument {i}")) \
                    and not os.path.exists(t):
                raise InputError(f"argument {i} names a file that does not exist: {t!r} (a "
                                 f"file is read with 'input_file'; a text needs a space or no "
                                 f"file suffix)", field="input_file")
        return [Input(str(i), t) for i, t in enumerate(texts, 1)]
    if input_file is None and stdin_is_terminal:
        raise InputError(f"no {what}: give it as an argument, with 'input_file', or pipe lines "
                         "on stdin", field="input_file")
    raw, name = read_input(input_file)       # bounded: an endless device or pipe is refused
    return text_inputs(raw, name, lines=True)


def text_inputs(raw: str, name: str, lines: bool = False) -> list[Input]:
    """The inputs a text holds: its FASTA records (a record without sequence keeps its error,
    never dropped), else one input per non-empty line (``lines``) or the whole text as one."""
    if fasta.is_fasta(raw):
        return [Input(r.id, check_length(r.sequence, f"{name} record {r.id!r}"), r.header)
                if r.sequence else Input(r.id, None, r.header, error=f"FASTA record {r.id!r} "
                                         f"(line {r.line}) has no sequence")
                for r in fasta.parse_fasta(raw, name, keep_empty=True)]
    if not lines:
        return [Input("1", raw)]
    found = [Input(str(n), check_length(line, f"{name} line {n}"))
             for n, line in enumerate(raw.splitlines(), 1) if line.strip()]
    if not found:
        raise InputError(f"empty input: nothing in {name}")
    return found


def reads_letters(model) -> bool:
    """Whether a job with ``model`` reads letter sets ``#[...]`` and unclear letters in its
    texts (:mod:`infill.data.letters`): models that fill characters or residues do."""
    unit = model if isinstance(model, str) else getattr(model, "unit", None)
    return unit in ("characters", "residues")


def read_letters(model, inputs: Sequence[Input], marker: str, unclear: str = "keep",
                 leiden: bool = False, gap=1, job_letters: list | None = None,
                 unknown: tuple[int, int] | None = None) -> list[Input]:
    """Each input's letter sets (``#[ηιν]``; with ``unclear="restore"`` its underdotted
    letters) as its ``letters``, the sets read before the Leiden sigla (``leiden``: converted
    here, :func:`read_leiden`). A malformed set, or sets in a text of a job that gives
    ``letters`` itself, is that input's error."""
    mask_tokens = tuple(t for t in [_mask_token(model)] if t)
    out = []
    for r in inputs:
        if r.text is None or not has_sets(r.text):
            out.append(read_leiden([r], marker, gap, unknown)[0] if leiden else r)
            continue
        try:
            marked = mark_sets(r.text, unclear)
            if marked.sets and job_letters is not None:
                raise InputError("give letter sets in the text (#[...]) or as 'letters', not "
                                 "both", field="letters")
            r = replace(r, text=marked.text)
            if leiden:
                r = read_leiden([r], marker, gap, unknown)[0]
            if r.text is not None:
                text, letters = place_sets(r.text, marked.sets, marker, mask_tokens)
                r = replace(r, text=text, letters=letters)
        except InfillError as e:
            r = replace(r, text=None, error=e.message())
        out.append(r)
    return out


def _mask_token(model) -> str | None:
    """The model's own mask token as typed in a text (``<mask>``), which is a gap too."""
    try:
        return None if getattr(model, "alphabet", None) is not None \
            else model.id_to_token(model.mask_id)
    except Exception:
        return None


def reads_leiden(model) -> bool:
    """Whether a fill with ``model`` (a loaded model, or its unit) reads Leiden sigla
    (``[...]``, ``[.3]``, ``[c.3]``, ``[αβ]``): models that fill characters (Greek editions)
    do."""
    unit = model if isinstance(model, str) else getattr(model, "unit", None)
    return unit == "characters"


def read_leiden(inputs: Sequence[Input], marker: str, gap=1,
                unknown: tuple[int, int] | None = None) -> list[Input]:
    """Each input's Leiden sigla in infill's conventions (:mod:`infill.data.leiden`); an input
    with approximate lacunae (or, with ``unknown`` lengths, lacunae of unknown length) gets its
    per-marker ``gap`` list; a malformed siglum is that input's error."""
    out = []
    for r in inputs:
        if r.text is None or not leiden_sigla.has_sigla(r.text):
            out.append(r)
            continue
        try:
            converted = leiden_sigla.convert(r.text, marker, unknown)
        except InfillError as e:
            out.append(replace(r, text=None, error=e.message()))
            continue
        if converted.breaks and not any(s in converted.text for s in (marker, "?", "#", PLACE)):
            out.append(replace(r, text=converted.text, error=UNKNOWN_ONLY))    # shown as read
            continue
        out.append(replace(r, text=converted.text, notes=r.notes + tuple(converted.notes),
                           gap=converted.gap_list(gap) if converted.gaps else r.gap))
    return out


UNKNOWN_ONLY = ("nothing to restore: a lacuna of unknown extent ([---]) is a break unless "
                "unknown_lengths restores it (--unknown-lengths 1-12), and no letter is marked "
                "with '?' or [...]")


NOT_A_DOMAIN = "not an antibody V domain (IMGT numbering found no heavy or light chain)"


def mask_regions(model, inputs: Sequence[Input], region: str
                 ) -> tuple[list[Input], list[tuple[str, str]]]:
    """Each input with its IMGT ``region`` masked (antibody V domains, numbered in one batch),
    and warnings as ``(input id, message)``: numbering without a conserved anchor, a chain the
    model is not for. An input that is not a V domain keeps its error."""
    domains = regions.number_many([r.text for r in inputs], strict=False)
    out, warnings = [], []
    for r, dom in zip(inputs, domains):
        if dom is None:
            out.append(replace(r, text=None, error=NOT_A_DOMAIN))
            continue
        try:
            out.append(replace(r, text=regions.mask_region(r.text, region, numbered=dom)))
        except InfillError as e:
            out.append(replace(r, text=None, error=e.message()))
            continue
        if dom.missing_anchors:
            warnings.append((r.id, f"IMGT numbering lacks the conserved "
                                   f"{', '.join(dom.missing_anchors)}; region boundaries may be off"))
        mismatch = chain_mismatch(model, dom.chain)
        if mismatch:
            warnings.append((r.id, mismatch))
    return out, warnings


def chain_mismatch(model, chain: str) -> str | None:
    """Why a chain-specific model (Sapiens-VH / -VL) does not fit a numbered chain, or None."""
    wanted = getattr(model, "chain", None)
    if wanted is None or (chain == "H") == (wanted == "H"):
        return None
    other = "sapiens-vl" if wanted == "H" else "sapiens-vh"
    kind = "heavy" if wanted == "H" else "light"
    return (f"a {regions.CHAIN_NAMES.get(chain, chain)} chain, but the model is for {kind} chains "
            f"(use {other}, or antiberty for both)")
