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


def test_split_documents_is_disjoint_complete_and_order_free():
    from infill.data.splits import split_documents
    names = [f"{i}.{j}" for i in range(1, 12) for j in range(1, 10)]
    a = split_documents(names)
    b = split_documents(list(reversed(names)) + names[:5])  # order and repeats do not matter
    assert a == b
    assert sorted(a["train"] + a["validation"] + a["test"]) == sorted(names)
    assert not set(a["train"]) & set(a["validation"]) and not set(a["train"]) & set(a["test"])
    assert len(a["validation"]) == round(0.1 * len(names)) and len(a["test"]) == round(0.1 * len(names))
    assert split_documents(names, seed=1) != a
