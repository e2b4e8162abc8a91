"""Leiden sigla -> infill's ``?`` / ``-`` conventions (infill.data.leiden), exactly as documented."""
from __future__ import annotations

import pytest

from infill.data.leiden import MAX_COUNT, Converted, convert, has_sigla
from infill.errors import InputError


@pytest.mark.parametrize("leiden, infill", [
    # lacunae: one '?' per dot (spaced dots too, U+2024 one-dot leaders too), or a count
    ("Ἀχιλ[..]ος", "Ἀχιλ??ος"),
    ("[...]ος", "???ος"),
    ("[. . .]ος", "???ος"),
    ("[\u2024\u2024]ος", "??ος"),
    ("Ἀχιλ[.2]ος", "Ἀχιλ??ος"),
    ("[.12]", "?" * 12),
    ("[ . . ]αβ", "??αβ"),
    ("[.3 ]", "???"),
    # lacuna of unknown length: missing characters, not restored (one per hyphen)
    ("[- - -] καὶ", "--- καὶ"),
    ("[---]", "---"),
    # the editor's restorations are kept as text; lost letters beside them become '?'
    ("[τῶι δήμωι]", "τῶι δήμωι"),
    ("ἔδοξε[ν τῆι] βουλῆι", "ἔδοξεν τῆι βουλῆι"),
    ("[αὐτοῦ . .]", "αὐτοῦ ??"),
    ("[αβ.2]γ", "αβ??γ"),
    ("[? ?]", "??"),
    # other brackets: erasures, expansions, additions, partly preserved letters kept; the
    # engraver's superfluous letters dropped
    ("[[αβ]]γ", "αβγ"),
    ("⟦αβ⟧γ 〚δ〛", "αβγ δ"),
    ("⟦[..]α⟧", "??α"),
    ("[[αβ[.1]]]", "αβ?"),
    ("Ἀπολλ(ώνιος)", "Ἀπολλώνιος"),
    ("[αβ (γδ)]", "αβ γδ"),
    ("ἔδοξεν {ν} τῆι <β>ουλῆι", "ἔδοξεν τῆι βουλῆι"),
    ("⟨β⟩ουλή", "βουλή"),
    ("d m Iul<i=E>ae", "d m Iuliae"),          # the editor's letter for the stone's (EDH)
    ("δραχμὰς ((δραχμαί)) ἑκατόν", "δραχμὰς δραχμαί ἑκατόν"),    # a symbol resolved
    ("Felix ((centurio)) leg(ionis)", "Felix ((centurio)) leg(ionis)"),   # Latin: kept, as (..)
    ("<ae=E>dilis ⟨i=E⟩", "aedilis i"),
    ("⸢αβ⸣γ", "αβγ"),
    # line dividers dropped (a word may run on); vacat -> one space
    ("ἀνέ|θηκεν", "ἀνέθηκεν"),
    ("ἀνέ‖θηκεν", "ἀνέθηκεν"),
    ("δῆμος vac. ἀνέθηκεν", "δῆμος ἀνέθηκεν"),
    ("δῆμος (vacat) ἀνέθηκεν", "δῆμος ἀνέθηκεν"),
    ("δῆμος vac. 3 ἀνέθηκεν", "δῆμος ἀνέθηκεν"),
    # the gap marker is left alone, inside brackets too; infill's own symbols pass through
    ("[___] τε", "___ τε"),
    ("μῆ-ιν ἄ?ειδε", "μῆ-ιν ἄ?ειδε"),
    # dots outside brackets are punctuation: untouched
    ("ἔθηκε. [..]", "ἔθηκε. ??"),
    ("", ""),
])
def test_conversions(leiden, infill):
    assert convert(leiden).text == infill


def test_text_without_sigla_is_unchanged():
    text = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ?ος, -- ___ ."
    assert not has_sigla(text)
    assert convert(text) == Converted(text)


def test_notes_for_loose_readings():
    got = convert("Ἀπολλ[c.4] (?) [ca. 2]ος")
    assert got.text == "Ἀπολλ___ ___ος"
    assert got.gaps == ((3, 5), (1, 3))
    assert got.notes == ("the editor's doubt marks '(?)' were dropped",
                         "approximate lacuna 'c.4' decoded at every length from 3 to 5, all "
                         "completions ranked together",
                         "approximate lacuna 'ca. 2' decoded at every length from 1 to 3, all "
                         "completions ranked together")


def test_approximate_lacunae_are_ranges_beside_the_users_markers():
    got = convert("αβ[c.10] ___ γ[...] δ[c.3]")
    assert got.text == "αβ___ ___ γ??? δ___"
    assert got.gaps == ((8, 12), None, (2, 4))      # n ± max(1, n/5), as EpiDoc precision="low"
    assert got.gap_list(2) == [(8, 12), 2, (2, 4)]
    assert got.gap_list("4-6") == [(8, 12), "4-6", (2, 4)]
    exact = convert("αβ[...] ___ [.3]γ")            # no approximate lacuna: the option as is
    assert (exact.text, exact.gaps, exact.gap_list(2)) == ("αβ??? ___ ???γ", (), 2)
    assert convert("α{[c.3]}β") == Converted("αβ")  # a deleted lacuna is no gap


def test_too_many_length_combinations_fall_back_to_exact_lengths():
    got = convert("[c.5] α [c.5] β [c.5] γ [c.5]")   # 3**4 = 81 > MAX_VARIANTS (64)
    assert got.text == "????? α ????? β ????? γ ?????" and got.gaps == ()
    assert got.notes[0] == ("the 81 combinations of this text's approximate lacuna lengths "
                            "exceed 64: each decoded as exactly its stated length")
    assert got.notes[1:] == ("approximate lacuna 'c.5' read as exactly 5 characters",) * 4
    three = convert("[c.5] α [c.5] β [c.5]")          # 27 combinations: ranges
    assert three.gaps == ((4, 6),) * 3


def test_without_a_marker_approximate_lacunae_are_exact():
    got = convert("α[c.3]β", marker="")
    assert (got.text, got.gaps) == ("α???β", ())
    assert got.notes == ("approximate lacuna 'c.3' read as exactly 3 characters",)


@pytest.mark.parametrize("text, message", [
    ("α[c.40]", "column 3: an approximate lacuna 'c.40' ranges over 32-48 characters, more than "
                "the limit of 16 lengths; give its exact length as [.40]"),
    ("α[c.800]", "column 3: a lacuna count must be between 1 and 500, got 800"),
    ("α[c.1000]", "column 3: a lacuna count must be between 1 and 500, got a number of 4 digits"),
])
def test_huge_approximate_lacunae_are_refused(text, message):
    with pytest.raises(InputError) as e:
        convert(text)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_custom_marker_is_kept():
    assert convert("αβ [gap] γ[..]", marker="[gap]").text == "αβ [gap] γ??"
    assert convert("[αβ <gap>]", marker="<gap>").text == "αβ <gap>"


@pytest.mark.parametrize("text, message", [
    ("ἄνδρα [.3", "column 7: '[' (lacuna) is never closed"),
    ("ἄνδρα]", "column 6: ']' closes nothing"),
    ("[αβ)", "column 4: ')' closes '[' opened at column 1"),
    ("[[αβ]", "column 5: ']' closes '[[' opened at column 1"),
    ("[α[β]]", "column 3: '[' inside another lacuna"),
    ("(α(β))", "column 3: '(' inside another expansion"),
    ("[]", "column 1: empty []"),
    ("{}", "column 1: empty {}"),
    ("d <=E>ae", "column 3: no letters before '=' in a correction"),
    ("a((b)", "column 5: ')' closes '((' opened at column 2"),
    ("[3]", "column 2: digits in a lacuna must be a count, as in [.3] or [c.3]"),
    ("[.?]", "column 2: a lacuna of unknown length ('.?') cannot be restored"),
    ("[.0]", "column 2: a lacuna count must be between 1 and 500, got 0"),
    (f"[.{MAX_COUNT + 1}]", f"a lacuna count must be between 1 and {MAX_COUNT}"),
    ("⟦αβ", "'⟦' (erasure) is never closed"),
])
def test_malformed_sigla_are_one_line_input_errors(text, message):
    with pytest.raises(InputError) as e:
        convert(text)
    assert str(e.value).startswith("malformed Leiden sigla at ")
    assert message in str(e.value) and "\n" not in str(e.value)


def test_converted_text_reads_as_the_model_expects():
    """The converted line encodes to the same gaps as the hand-written infill line."""
    import infill
    model = infill.load_model("builtin:greek", device="cpu")
    a = model.encode(convert("ἄνδρα μοι ἔννεπε, μ[..]σα, πολύ[---]ον").text)
    b = model.encode("ἄνδρα μοι ἔννεπε, μ??σα, πολύ---ον")
    assert a.input_ids == b.input_ids and a.gaps == b.gaps
