"""``--region`` on a sequence that already has residues to restore (``?``): they are numbered as
unknown residues, so the IMGT regions stay where they are."""
from __future__ import annotations

from pathlib import Path

import pytest

from infill.data.fasta import parse_fasta
from infill.data.files import read_text
from infill.data.regions import mask_region, number
from infill.errors import InputError

pytest.importorskip("anarcism")


@pytest.fixture(scope="module")
def heavy() -> str:
    return parse_fasta(read_text(Path(__file__).resolve().parents[2] / "data" / "antibody" / "hiv_bnab_heavy.fa"))[0].sequence


@pytest.mark.parametrize("holes", [[(5, 8)], [(26, 30), (55, 57)], [(100, 118)]])
def test_numbering_ignores_the_residues_to_restore(heavy, holes):
    gapped = list(heavy)
    for a, b in holes:
        gapped[a:b] = "?" * (b - a)
    gapped = "".join(gapped)
    assert number(gapped).spans == number(heavy).spans
    start, end = number(heavy).spans["cdr3"]
    masked = mask_region(gapped, "cdr3")
    assert masked == gapped[:start] + "?" * (end - start) + gapped[end:]


def test_other_symbols_are_still_refused(heavy):
    with pytest.raises(InputError, match="invalid residue '_' at position 6"):
        number(heavy[:5] + "_" + heavy[6:])
