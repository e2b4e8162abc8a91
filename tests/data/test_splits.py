"""Deterministic train/validation/test splits and the Greek training windows (infill.data)."""
import pytest

from infill.data.examples import windows
from infill.data.splits import split_indices
from infill.errors import InputError


# ---- data, split, masking ------------------------------------------------------------------
def test_split_is_deterministic_disjoint_and_complete():
    a = split_indices(1000, seed=0)
    assert a == split_indices(1000, seed=0)
    assert a != split_indices(1000, seed=1)
    assert (len(a["validation"]), len(a["test"]), len(a["train"])) == (50, 50, 900)
    allidx = a["train"] + a["validation"] + a["test"]
    assert sorted(allidx) == list(range(1000))
    with pytest.raises(InputError, match="too small"):
        split_indices(1, seed=0)


def test_windows_cut_at_spaces():
    text = "αβγ δεζ ηθι κλμνξοπρστ υφ"
    pieces = windows(text, 8)
    assert pieces == ["αβγ δεζ", "ηθι", "κλμνξοπρ", "στ υφ"]
    assert all(len(p) <= 8 for p in pieces)
