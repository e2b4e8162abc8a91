"""FASTA in and out: one reader for training, benchmarks and ``infill run``."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from infill.data.files import read_text
from infill.errors import InputError

__all__ = ["FastaRecord", "is_fasta", "parse_fasta", "read_fasta", "format_fasta"]


@dataclass(frozen=True)
class FastaRecord:
    """One record: ``header`` (the text after ``>``; its first word is the ``id``) and
    ``sequence`` (lines joined, whitespace dropped); ``line`` = line number of the header."""

    header: str
    sequence: str
    line: int = 0

    @property
    def id(self) -> str:
        return self.header.split()[0] if self.header.split() else f"record{self.line}"


def is_fasta(text: str) -> bool:
    """Whether text is FASTA (its first non-blank, non-comment line starts with ``>``)."""
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith(";"):
            return s.startswith(">")
    return False


def parse_fasta(text: str, name: str = "FASTA input", keep_empty: bool = False) -> list[FastaRecord]:
    """Records of FASTA text. ``;`` lines are comments. InputError for text before the first
    header or no record at all; records without sequence are dropped unless ``keep_empty``."""
    records: list[tuple[str, int, list[str]]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith(";"):
            continue
        if s.startswith(">"):
            records.append((s[1:].strip(), lineno, []))
        elif not records:
            raise InputError(f"{name}:{lineno}: sequence text before the first '>' header; "
                             "is this a FASTA file?")
        else:
            records[-1][2].append("".join(s.split()))
    out = [FastaRecord(h, "".join(parts), ln) for h, ln, parts in records]
    if not keep_empty:
        out = [r for r in out if r.sequence]
    if not out:
        raise InputError(f"no sequences in {name}")
    return out


def read_fasta(path: str | Path) -> list[FastaRecord]:
    """Records of a FASTA file (see :func:`parse_fasta`)."""
    return parse_fasta(read_text(path, "FASTA file"), str(path))


def format_fasta(header: str, sequence: str, width: int = 60) -> str:
    """One FASTA record, sequence wrapped at ``width``."""
    lines = [sequence[i:i + width] for i in range(0, len(sequence), width)] or [""]
    return ">" + header + "\n" + "\n".join(lines) + "\n"
