"""Hostile numbers and declarations in EpiDoc files: every extent (``quantity``, ``extent``,
``atLeast``, ``atMost``) is parsed strictly and bounded (:data:`infill.data.epidoc.MAX_EXTENT`),
and the XML declaration is read by the XML grammar: one InputError naming the file and line,
never a hang, a MemoryError or a ValueError traceback -- through the library and ``infill run``."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from infill.data.epidoc import MAX_EXTENT, read_edition
from infill.data.epidoc_corpus import corpus_files, training_text
from infill.data.epidoc_write import leiden
from infill.errors import InputError
from infill_cli.main import main

DECL = '<?xml version="1.0" encoding="UTF-8"?>'


def edition(element: str, decl: str = DECL) -> str:
    """A small Greek edition holding ``element`` on XML line 3."""
    return (f'{decl}\n<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body>\n'
            f'<div type="edition" xml:lang="grc"><ab><lb n="1"/>καὶ {element} τὸν δῆμον</ab>'
            '</div></body></text></TEI>\n')


def gap(**attrs) -> str:
    return "<gap " + " ".join(f'{k}="{v}"' for k, v in attrs.items()) + "/>"


HUGE = {"1e9": "1000000000", "2e32": "2" + "0" * 32, "5000 digits": "9" * 5000}
ODD = {"superscript two": "²", "arabic-indic": "٣", "exponent": "1e9", "decimal": "2.5"}
ELEMENTS = {
    "gap quantity": lambda v: gap(reason="lost", quantity=v, unit="character"),
    "gap extent": lambda v: gap(reason="lost", extent=v, unit="character"),
    "gap atMost": lambda v: gap(reason="lost", atLeast="1", atMost=v, unit="character"),
    "gap atLeast": lambda v: gap(reason="lost", atLeast=v, atMost="3", unit="character"),
    "illegible gap": lambda v: gap(reason="illegible", quantity=v, unit="character"),
    "space": lambda v: f'<space quantity="{v}" unit="character"/>',
    "supplied": lambda v: f'<supplied reason="lost" extent="{v}">αβ</supplied>',
    "gap in surplus": lambda v: f'<surplus>{gap(reason="illegible", quantity=v)}</surplus>',
}


@pytest.mark.parametrize("value", HUGE.values(), ids=HUGE.keys())
@pytest.mark.parametrize("make", ELEMENTS.values(), ids=ELEMENTS.keys())
def test_huge_extent_is_one_line_naming_file_and_line(tmp_path, make, value):
    p = tmp_path / "x.xml"
    p.write_text(edition(make(value)), encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_edition(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}: line 3: <") and "over the limit of 2,000" in msg
    assert "\n" not in msg and len(msg) < 200 and e.value.line == 3


@pytest.mark.parametrize("value", ODD.values(), ids=ODD.keys())
@pytest.mark.parametrize("make", ELEMENTS.values(), ids=ELEMENTS.keys())
def test_number_not_in_ascii_digits_is_one_line(make, value):
    with pytest.raises(InputError, match=r"^a\.xml: line 3: .*not a whole number in ASCII"):
        read_edition("a.xml", edition(make(value)))


def test_extent_at_the_limit_and_words_still_read():
    e = read_edition("a.xml", edition(gap(reason="lost", quantity=f" {MAX_EXTENT} ",
                                          unit="character")))
    assert e.lacunae[0].length == MAX_EXTENT
    e = read_edition("a.xml", edition(gap(reason="lost", extent="unknown", unit="character")))
    assert e.text() == "καὶ --- τὸν δῆμον" and not e.lacunae
    e = read_edition("a.xml", edition(gap(reason="lost", atLeast="2", atMost="4",
                                          unit="character")))
    assert (e.lacunae[0].length, e.lacunae[0].lengths) == (3, (2, 4))
    # IAph writes a range as the extent: read as atLeast/atMost
    e = read_edition("a.xml", edition(gap(reason="lost", extent="10-15", unit="character")))
    assert (e.lacunae[0].length, e.lacunae[0].lengths) == (13, (10, 15))
    with pytest.raises(InputError, match="not a whole number"):
        read_edition("a.xml", edition(gap(reason="lost", extent="15-10", unit="character")))
    illegible = read_edition("a.xml", edition(gap(reason="illegible", quantity="2")))
    assert ".." in leiden(illegible, {})


def test_corpus_reading_refuses_a_huge_extent(tmp_path):
    (tmp_path / "a.xml").write_text(edition(gap(reason="lost", quantity="1000000000")),
                                    encoding="utf-8")
    [f] = corpus_files(tmp_path)
    with pytest.raises(InputError, match="line 3: <gap quantity='1000000000'>: over the limit"):
        training_text(read_edition(f, require_text=False))


BAD_DECLS = {
    "gt in attribute": '<?xml version="1.0" encoding="UTF-8" standalone="yes" foo=">"?>',
    "unknown attribute": '<?xml version="1.0" foo="bar"?>',
    "end inside attribute": '<?xml version="1.0" encoding="UTF-8" foo="?>"?>',
    "unclosed": '<?xml version="1.0" encoding="UTF-8"',
    "no version": "<?xml?>",
}


@pytest.mark.parametrize("decl", BAD_DECLS.values(), ids=BAD_DECLS.keys())
def test_malformed_declaration_is_one_line(decl):
    with pytest.raises(InputError, match=r"^a\.xml: line 1: malformed XML declaration"):
        read_edition("a.xml", edition(gap(reason="lost", quantity="3"), decl))


GOOD_DECLS = ['<?xml version="1.0"?>', "<?xml version='1.0' encoding='utf-8' standalone='no'?>",
              '<?xml version="1.0"?><?pi a>b?>', '<?xml-stylesheet href="a>b.xsl"?>', ""]


@pytest.mark.parametrize("decl", GOOD_DECLS)
def test_declarations_and_processing_instructions_with_gt_are_read(decl):
    e = read_edition("a.xml", edition(gap(reason="lost", quantity="3"), decl))
    assert e.text() == "καὶ ??? τὸν δῆμον"


@pytest.mark.parametrize("element, message", [
    (gap(reason="lost", quantity="1000000000"), "line 3: <gap quantity='1000000000'>: over"),
    (gap(reason="lost", atLeast="1", atMost="²"), "line 3: <gap atMost='²'>: not a whole"),
    (gap(reason="lost", quantity="9" * 5000), "line 3: <gap quantity='99999999999999999999"),
])
def test_cli_one_line_exit_2(greek_char_dir, tmp_path, element, message):
    p = tmp_path / "x.xml"
    p.write_text(edition(element), encoding="utf-8")
    r = CliRunner().invoke(main, ["run", "--model", greek_char_dir, str(p)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("Error:")]
    assert errors[0].startswith(f"Error: {p}: {message}") and len(errors[0]) < 300
    assert errors[1:] == []                 # one file: its line alone, no closing count


def test_cli_malformed_declaration_exit_2(greek_char_dir, tmp_path):
    p = tmp_path / "x.xml"
    p.write_text(edition(gap(reason="lost", quantity="3"), BAD_DECLS["gt in attribute"]),
                 encoding="utf-8")
    r = CliRunner().invoke(main, ["run", "--model", greek_char_dir, str(p)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert [ln for ln in r.stderr.splitlines() if ln.startswith("Error:")][0] == \
        (f"Error: {p}: line 1: malformed XML declaration (expected <?xml version=\"1.0\" "
         "encoding=\"...\" standalone=\"yes|no\"?>, only those attributes)")


# ---- <app> readings (--app-readings): what is not scored is said, never dropped (issue 46) ------
def app(inner: str) -> str:
    return f'<supplied reason="lost"><app>{inner}</app></supplied>ι'


SECOND = '<w>τ<supplied reason="lost"><app><lem>ὸν</lem><rdg>ῶν</rdg></app></supplied></w>'


@pytest.mark.parametrize("inner, note", [
    ("<lem><app><lem>δήμω</lem><rdg>δάμω</rdg></app></lem><rdg>πλήθε</rdg>",
     "XML line 3: an <app> nested inside a <lem> or <rdg> is not scored"),
    ("<lem></lem><rdg>δάμω</rdg>",
     "XML line 3: an <app> whose <lem> holds no letter of the edition's alphabet ('') is no "
     "lacuna"),
    ("<lem>dimo</lem><rdg>δάμω</rdg>", "alphabet ('dimo') is no lacuna; not scored"),
    ("<lem>ςϠ</lem><rdg>ρ</rdg>", "XML line 3: <app> not scored: reading 'ςϠ': characters "
                                  "outside the Greek alphabet read as unknown (^): Ϡ"),
])
def test_an_app_that_cannot_be_scored_is_named_and_the_others_scored(greek_char_dir, tmp_path,
                                                                      inner, note):
    p = tmp_path / "x.xml"
    p.write_text(edition(app(inner)), encoding="utf-8")
    r = CliRunner().invoke(main, ["run", "--model", greek_char_dir, "--app-readings", str(p)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    lines = r.stderr.strip().splitlines()
    assert lines[0].startswith(f"note: {p}: ") and note in lines[0], lines
    assert lines[-1] == (f"Error: {p}: no <app> with readings inside a lost supplement "
                         '(<supplied reason="lost">) to score (1 not scored: see the notes)')
    # with a second <app> that can be scored, only the first is left out
    p.write_text(edition(app(inner)).replace("τὸν", SECOND), encoding="utf-8")
    r = CliRunner().invoke(main, ["run", "--model", greek_char_dir, "--app-readings", "--json",
                                  str(p)])
    assert r.exit_code == 0, r.output
    import json
    out = json.loads(r.stdout)
    assert [x["text"] for x in out["lacunae"][0]["readings"]] == ["ὸν", "ῶν"]
    assert any(note in n for n in out["notes"]), out["notes"]


def test_an_empty_rdg_is_left_out_with_a_note(greek_char_dir, tmp_path):
    p = tmp_path / "x.xml"
    p.write_text(edition(app("<lem>δήμω</lem><rdg>  </rdg><rdg>δάμω</rdg>")), encoding="utf-8")
    r = CliRunner().invoke(main, ["run", "--model", greek_char_dir, "--app-readings", "--json",
                                  str(p)])
    assert r.exit_code == 0, r.output
    import json
    out = json.loads(r.stdout)
    assert [x["text"] for x in out["lacunae"][0]["readings"]] == ["δήμω", "δάμω"]
    assert "XML line 3: an empty <rdg> was left out" in out["notes"]


@pytest.mark.parametrize("around", [
    "\n<!-- </TEI>" + " " * 400 + "x -->\n",            # where the root ends is not plain
    "\n" + "<!-- c -->  " * 2000 + " " * 5000,          # a long plain epilogue
])
def test_text_after_the_root_is_read_in_linear_time(around):
    # the grammar of what may follow the root is matched without nested repetition: a space
    # run that fails to end the text is not tried in its 2^n splits (this hung at 30 spaces)
    body = ('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" '
            'xml:lang="grc"><ab>τοῦ <gap reason="lost" unit="character" quantity="2"/>ος</ab>'
            '</div></body></text></TEI>')
    e = read_edition("x.xml", body + around)
    assert e.text() == "τοῦ ??ος"
    assert e.ends_as_written == ("x -->" not in around)
