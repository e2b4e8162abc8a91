"""The inputs of a job, and how a fill reads them before decoding: an antibody ``region`` masked
(IMGT numbering) and, for character models, an edition's Leiden sigla converted.

Whether Leiden sigla are read is the model's to say (:func:`reads_leiden`: a model that fills
characters), the same for ``infill run``, :func:`infill.jobs.fill_inputs` and the workbench.
A problem with one input (not an antibody domain, a malformed siglum) becomes that input's
``error``; the others go on.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from infill.errors import InfillError, InputError

__all__ = ["Input", "Outcome", "as_inputs", "reads_leiden", "read_leiden", "mask_regions", "chain_mismatch"]


@dataclass(frozen=True)
class Input:
    """One input of a job: its ``id`` (a FASTA header's first word, else its 1-based number),
    the ``text`` and, for FASTA, the whole ``header``; ``error`` when it cannot be used (then
    ``text`` may be None); ``notes`` on how it was read; ``gap``: its own per-marker gap
    lengths (an edition's approximate lacunae ``[c.3]``), None for the job's ``gap``."""

    id: str
    text: str | None
    header: str | None = None
    error: str | None = None
    notes: tuple[str, ...] = ()
    gap: list | None = None


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


def reads_leiden(model) -> bool:
    """Whether a fill with ``model`` (a loaded model, or its unit) reads Leiden sigla
    (``[...]``, ``[.3]``, ``[c.3]``, ``[αβ]``): models that fill characters (Greek editions)
    do."""
    unit = model if isinstance(model, str) else getattr(model, "unit", None)
    return unit == "characters"


def read_leiden(inputs: Sequence[Input], marker: str, gap=1) -> list[Input]:
    """Each input's Leiden sigla in infill's conventions (:mod:`infill.data.leiden`); an input
    with approximate lacunae gets its per-marker ``gap`` list; a malformed siglum is that
    input's error."""
    from infill.data.leiden import convert, has_sigla

    out = []
    for r in inputs:
        if r.text is None or not has_sigla(r.text):
            out.append(r)
            continue
        try:
            converted = convert(r.text, marker)
        except InfillError as e:
            out.append(replace(r, text=None, error=e.message()))
            continue
        out.append(replace(r, text=converted.text, notes=r.notes + tuple(converted.notes),
                           gap=converted.gap_list(gap) if converted.gaps else r.gap))
    return out


NOT_A_DOMAIN = "not an antibody V domain (IMGT numbering found no heavy or light chain)"


def mask_regions(model, inputs: Sequence[Input], region: str
                 ) -> tuple[list[Input], list[tuple[str, str]]]:
    """Each input with its IMGT ``region`` masked (antibody V domains, numbered in one batch),
    and warnings as ``(input id, message)``: numbering without a conserved anchor, a chain the
    model is not for. An input that is not a V domain keeps its error."""
    from infill.data.regions import mask_region, number_many

    domains = number_many([r.text for r in inputs], strict=False)
    out, warnings = [], []
    for r, dom in zip(inputs, domains):
        if dom is None:
            out.append(replace(r, text=None, error=NOT_A_DOMAIN))
            continue
        try:
            out.append(replace(r, text=mask_region(r.text, region, numbered=dom)))
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
    from infill.data.regions import CHAIN_NAMES

    wanted = getattr(model, "chain", None)
    if wanted is None or (chain == "H") == (wanted == "H"):
        return None
    other = "sapiens-vl" if wanted == "H" else "sapiens-vh"
    kind = "heavy" if wanted == "H" else "light"
    return (f"a {CHAIN_NAMES.get(chain, chain)} chain, but the model is for {kind} chains "
            f"(use {other}, or antiberty for both)")
