"""Hostile cases of the reliability round (issue 22), beside the hypothesis-driven suite
(tests/cli/test_hostile_input.py, whose ``check`` they share): deeply nested JSON in every JSON
file infill reads, endless and oversized inputs, absurd Leiden counts and very long Leiden
texts, API inputs that are not text, and answers that used to be silently wrong.

Each case asserts what the user gets: one ``Error:`` line and exit 2 (CLI), an infill exception
(API), or the right answer with its note."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infill.data.leiden import MAX_COUNT, convert
from infill.errors import InfillError, InputError
from infill_cli.main import main

from .test_hostile_input import LIGHT, check

DEEP = "[" * 100_000 + "]" * 100_000
"""JSON nested 100,000 levels deep: Python's json parser overflows its recursion limit."""


# ---- Leiden: counts of thousands of digits, long texts (linear conversion) ---------------------
@LIGHT
@given(digits=st.integers(4, 6000), approx=st.booleans(), zeros=st.integers(0, 5000))
def test_leiden_counts_of_any_number_of_digits(digits, approx, zeros):
    """A count with thousands of digits is refused in one line (int() of more than 4,300 digits
    used to raise ValueError); leading zeros never count."""
    text = f"αβ [{'c.' if approx else '.'}{'0' * zeros}{'9' * digits}] γδ"
    with pytest.raises(InputError, match=f"between 1 and {MAX_COUNT}"):
        convert(text)
    assert convert(f"[.{'0' * zeros}3]").text == "???"


def test_leiden_count_of_5000_digits_on_the_command_line(runner, greek_char_dir):
    r = runner.invoke(main, ["run", "-m", greek_char_dir, "--json", "μῆνιν [." + "9" * 5000 + "]"])
    check(r, json_out=True)
    assert r.exit_code == 2 and "lacuna count" in r.stderr


@pytest.mark.parametrize("n", [1, 7, 20_000])
def test_leiden_conversion_of_long_texts_is_exact(n):
    """Long inputs convert exactly as their pieces do (the conversion was quadratic in the
    spaces of a lacuna; its speed is measured in benchmarks/leiden_speed.py)."""
    assert convert("[" + ". " * n + ".]").text == "?" * (n + 1)
    assert convert("[" + "- " * n + "-]").text == "-" * (n + 1)
    unit = "μῆνιν [.3] ἄειδε [αβ . .] θεὰ ⟦γ⟧ (δε) {ζ} ἔ[- -]ι | "
    one = convert(unit)
    assert one.text == "μῆνιν ??? ἄειδε αβ ?? θεὰ γ δε ἔ--ι "
    assert convert(unit * n).text == one.text * n
    words = "ἄειδε " * n
    assert convert(words + "[...]").text == words + "???"


@pytest.fixture(scope="module")
def runner():
    from click.testing import CliRunner
    return CliRunner()
