"""Antibody variable-domain regions (IMGT): which residues of a sequence are FR1 ... FR4.

Numbering comes from ``anarcism`` (an ANARCI-compatible IMGT numbering engine; ``pip install
"infill-mlm[antibody]"``). Regions are then read off the IMGT position of every residue with the fixed
IMGT boundaries below, so they do not depend on CDR definitions of the numbering tool:

    FR1 1-26, CDR1 27-38, FR2 39-55, CDR2 56-65, FR3 66-104, CDR3 105-117, FR4 118-128

(IMGT's conserved anchors: Cys 23 and Trp 41 frame CDR1/FR2, Cys 104 ends FR3, Trp/Phe 118 starts
FR4.) Spans are 0-based half-open ``[start, end)`` indices into the string that was given, so
``seq[start:end]`` is the region; a region the domain does not cover (a read that starts inside
FR1, a V gene without FR4) has an empty span at the place it would be.

    dom = number("EVQLVESGGGLVQPGGSLRLSCAASGFTFSSYAMSWVRQAPGKGLEWVSAISGSGGSTYYADSVKG"
                 "RFTISRDNSKNTLYLQMNSLRAEDTAVYYCAKDRGYSSGWYFDYWGQGTLVTVSS")
    dom.chain, dom.region("cdr3"), dom.spans["cdr3"]   # ('H', 'AKDRGYSSGWYFDY', (96, 110))
    mask_region(seq, "cdr3")          # the region's residues -> '?', one per residue
    number_many(seqs, strict=False)   # many at once; None for non-antibody sequences
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from infill.errors import InputError, ModelLoadError
from infill.names import REGIONS


IMGT_BOUNDARIES: dict[str, tuple[int, int]] = {
    "fr1": (1, 26), "cdr1": (27, 38), "fr2": (39, 55), "cdr2": (56, 65),
    "fr3": (66, 104), "cdr3": (105, 117), "fr4": (118, 128),
}
"""Inclusive IMGT position ranges of each region (insertion codes belong to their position)."""

ANTIBODY_CHAINS = ("H", "K", "L")
"""Heavy, kappa and lambda chains; T-cell receptor chains (A, B, G, D) only when asked for."""

CHAIN_NAMES = {"H": "heavy", "K": "kappa light", "L": "lambda light", "A": "TCR alpha",
               "B": "TCR beta", "G": "TCR gamma", "D": "TCR delta"}


@dataclass(frozen=True)
class Residue:
    """One numbered residue: its index in the input string, amino acid, IMGT position."""

    index: int
    amino_acid: str
    position: int
    insertion: str = ""

    @property
    def imgt(self) -> str:
        """The IMGT label, e.g. ``"111"`` or ``"112A"``."""
        return f"{self.position}{self.insertion}"


@dataclass(frozen=True)
class VDomain:
    """An IMGT-numbered variable domain found in ``sequence`` (the string as given)."""

    sequence: str
    chain: str
    """``H``, ``K`` or ``L`` (``A``, ``B``, ``G``, ``D`` for TCR chains)."""
    species: str
    """The best-matching germline species of the numbering profiles (a hint, not an assignment)."""
    start: int
    end: int
    """The domain's span ``[start, end)`` in ``sequence``."""
    spans: dict[str, tuple[int, int]]
    """Region name (see :data:`REGIONS`) -> ``[start, end)`` in ``sequence``."""
    residues: tuple[Residue, ...] = field(repr=False)

    def region(self, name: str) -> str:
        """The residues of one region, as written in the input."""
        start, end = self.spans[_region_name(name)]
        return "".join(ch for ch in self.sequence[start:end] if not ch.isspace())

    def span(self, name: str) -> tuple[int, int]:
        return self.spans[_region_name(name)]

    @property
    def missing_anchors(self) -> list[str]:
        """IMGT's conserved residues (Cys 23, Trp 41, Cys 104, Trp 118 in heavy chains, Phe 118 in
        light chains) that the numbered range covers but that are not where they should be, e.g.
        ``["C23", "C104"]``. Non-empty means the numbering, hence the regions, are doubtful:
        anarcism can shift a truncated domain (a V gene without FR4) by a residue."""
        if not self.residues:
            return []
        first, last = self.residues[0].position, self.residues[-1].position
        at = {r.position: r.amino_acid.upper() for r in self.residues if not r.insertion}
        w118 = "W" if self.chain == "H" else "F"
        anchors = {23: "C", 41: "W", 104: "C", 118: w118}
        return [f"{aa}{p}" for p, aa in anchors.items() if first <= p <= last and at.get(p) != aa]

    @property
    def domain(self) -> str:
        """The whole numbered domain (input outside it, e.g. a leader or constant region, dropped)."""
        return "".join(ch for ch in self.sequence[self.start:self.end] if not ch.isspace())


def _anarcism():
    try:
        import anarcism
    except ImportError:
        raise ModelLoadError('antibody regions need the anarcism package: '
                             'pip install "infill-mlm[antibody]"') from None
    return anarcism


def _region_name(name: str) -> str:
    key = str(name).strip().lower().replace("-", "").replace("_", "")
    if key not in IMGT_BOUNDARIES:
        raise InputError(f"unknown antibody region {name!r}: choose from {', '.join(REGIONS)}")
    return key


RESTORE = "?"
"""A residue to restore: numbered as an unknown residue (``X``), so a sequence with gaps in it
keeps its IMGT positions and ``--region`` works on it."""


def _letters(sequence: str, label: str) -> tuple[str, list[int]]:
    """(the sequence without whitespace, ``?`` read as the unknown residue ``X``; the input index
    of each of its characters)."""
    if not isinstance(sequence, str):
        raise InputError(f"{label}: expected a residue string, got {type(sequence).__name__}")
    kept, index = [], []
    for i, ch in enumerate(sequence):
        if ch.isspace():
            continue
        if ch == RESTORE:
            kept.append("X")
            index.append(i)
            continue
        if not (ch.isascii() and "A" <= ch.upper() <= "Z"):     # never 'ı' -> I, 'ß' -> SS
            raise InputError(f"invalid residue {ch!r} at position {i + 1} of {label}: an antibody "
                             "sequence is written with amino-acid letters only")
        kept.append(ch)
        index.append(i)
    if not kept:
        raise InputError(f"{label} is empty: nothing to number")
    return "".join(kept), index


def _chains(chains: str | Iterable[str] | None) -> list[str]:
    if chains is None:
        return list(ANTIBODY_CHAINS)
    wanted = [c.strip().upper() for c in ([chains] if isinstance(chains, str) else chains)]
    wanted = [c for w in wanted for c in (("K", "L") if w in ("LIGHT", "KL") else
                                           ("H",) if w == "HEAVY" else (w,))]
    unknown = [c for c in wanted if c not in CHAIN_NAMES]
    if unknown or not wanted:
        raise InputError(f"unknown chain type(s) {', '.join(unknown) or '(none)'}: choose from "
                         f"{', '.join(CHAIN_NAMES)} (or 'heavy', 'light')")
    return wanted


def _spans(residues: list[Residue], start: int, end: int) -> dict[str, tuple[int, int]]:
    spans: dict[str, tuple[int, int]] = {}
    cursor = start
    for name in REGIONS:
        lo, hi = IMGT_BOUNDARIES[name]
        idx = [r.index for r in residues if lo <= r.position <= hi]
        if idx:
            spans[name] = (min(idx), max(idx) + 1)
            cursor = spans[name][1]
        else:
            spans[name] = (cursor, cursor)
    return spans


def _domain(sequence: str, index: list[int], result, chains: list[str], label: str,
            domain: int) -> VDomain:
    found = [d for d in result.domains if d.chain_type in chains]
    if not found:
        kinds = "/".join(chains)
        shown = sequence if len(sequence) <= 40 else sequence[:37] + "..."
        raise InputError(f"{label} is not an antibody variable domain: no {kinds} domain could be "
                         f"IMGT-numbered in {shown!r}")
    if not -len(found) <= domain < len(found):
        raise InputError(f"{label} has {len(found)} variable domain(s); domain {domain} asked for")
    d = found[domain]
    residues = tuple(Residue(index[n.sequence_index], n.amino_acid, int(n.position),
                             n.insertion_code or "") for n in d.numbering)
    start = index[d.start]
    end = index[d.end - 1] + 1
    return VDomain(sequence=sequence, chain=d.chain_type, species=d.species, start=start, end=end,
                   spans=_spans(list(residues), start, end), residues=residues)


def _number_one(anarcism, key: str, seq: str, allowed: list[str]):
    try:
        return anarcism.number_sequences([(key, seq)], workers=1, allowed_chains=allowed)[0]
    except anarcism.AnarcismError:
        return None


def _rethrow(e: Exception, label: str) -> InputError:
    msg = str(e).splitlines()[0] if str(e) else type(e).__name__
    return InputError(f"cannot number {label}: {msg}")


def number(sequence: str, chains: str | Iterable[str] | None = None, domain: int = 0,
           label: str = "the sequence") -> VDomain:
    """IMGT-number the first antibody variable domain of ``sequence`` (a residue string).

    ``chains`` limits the chain types searched (default H, K, L; ``"heavy"`` / ``"light"`` work);
    ``domain`` picks another domain of a multi-domain input (an scFv has two). Whitespace in the
    input is skipped (spans still index the input string); ``?`` (a residue to restore) is
    numbered as an unknown residue. Raises :class:`InputError` for another non-letter character
    or a sequence with no such domain.
    """
    return number_many([sequence], chains=chains, domain=domain, labels=[label])[0]


def number_many(sequences: Sequence[str], chains: str | Iterable[str] | None = None,
                domain: int = 0, workers: int | None = 1, strict: bool = True,
                labels: Sequence[str] | None = None) -> list[VDomain | None]:
    """:func:`number` for many sequences in one call (anarcism numbers them in native threads).

    ``strict=False`` returns ``None`` for a sequence that is not an antibody domain instead of
    raising; ``workers`` is anarcism's thread count (1 keeps to one core).
    """
    anarcism = _anarcism()
    allowed = _chains(chains)
    labels = list(labels) if labels is not None else [f"sequence {k + 1}" for k in range(len(sequences))]
    out: list[VDomain | None] = []
    prepared = []
    for k, seq in enumerate(sequences):
        try:
            prepared.append(_letters(seq, labels[k]))
        except InputError:
            if strict:
                raise
            prepared.append(None)
    todo = [(str(k), p[0].upper()) for k, p in enumerate(prepared) if p is not None]
    try:
        results = anarcism.number_sequences(todo, workers=workers, allowed_chains=allowed) if todo else []
    except anarcism.AnarcismError as e:
        if strict:
            k = int(e.input_id) if (e.input_id or "").isdigit() else int(todo[0][0])
            raise _rethrow(e, labels[k]) from None
        results = [_number_one(anarcism, key, seq, allowed) for key, seq in todo]
    by_key = dict(zip((key for key, _ in todo), results))
    for k, p in enumerate(prepared):
        res = by_key.get(str(k))
        if p is None or res is None:
            out.append(None)
            continue
        try:
            out.append(_domain(sequences[k], p[1], res, allowed, labels[k], domain))
        except InputError:
            if strict:
                raise
            out.append(None)
    return out


def region_spans(sequence: str, chains: str | Iterable[str] | None = None,
                 domain: int = 0) -> tuple[str, dict[str, tuple[int, int]]]:
    """(chain type, region -> 0-based ``[start, end)`` span in ``sequence``) of its V domain."""
    dom = number(sequence, chains=chains, domain=domain)
    return dom.chain, dict(dom.spans)


def mask_region(sequence: str, region: str | Iterable[str], chains: str | Iterable[str] | None = None,
                domain: int = 0, mask: str = "?", numbered: VDomain | None = None) -> str:
    """``sequence`` with the residues of ``region`` (one name or several) replaced by ``mask``,
    one per residue: the gapped input for filling a CDR (``infill run --region cdr3``).

    Pass ``numbered`` (from :func:`number` / :func:`number_many`) to skip renumbering. Raises
    :class:`InputError` when the region is absent from this sequence (e.g. FR1 of a read that
    starts in CDR1).
    """
    dom = numbered if numbered is not None else number(sequence, chains=chains, domain=domain)
    if dom.sequence != sequence:
        raise InputError("the numbered domain given belongs to another sequence")
    names = [region] if isinstance(region, str) else list(region)
    if not names:
        raise InputError("no region to mask")
    chars = list(sequence)
    for name in names:
        key = _region_name(name)
        start, end = dom.spans[key]
        if start == end:
            raise InputError(f"region {key} is absent from this {CHAIN_NAMES.get(dom.chain, dom.chain)} "
                             f"chain sequence (its numbering covers "
                             f"{dom.residues[0].imgt}-{dom.residues[-1].imgt} only)")
        for i in range(start, end):
            if not chars[i].isspace():
                chars[i] = mask
    return "".join(chars)
