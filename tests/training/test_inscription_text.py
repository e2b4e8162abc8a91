"""The Greek model's training text of an inscription is exactly what ``infill bench`` shows around
a hidden editor's supplement, with that supplement filled back in: both come from the one EpiDoc
reader (infill.data.epidoc) and the one normalizer."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

import infill
from infill.bench.epidoc import editors_supplements, tasks_for
from infill.bench.request import BenchRequest
from infill.data.epidoc import read_edition
from infill.data.greek import GREEK
from infill.data.inscriptions import inscription_text, training_texts
from infill.models.char import CharConfig, CharTransformer, save_char

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "epidoc"
ONE = FIX / "training" / "one_supplement.xml"
ONE_TEXT = ("αγαθη τυχη ο δημοσ ετειμησεν αυρ μαρκον στρατηγον -- και ιερεα ετουσ ε ---τον βωμον "
            "ανεθηκεν θεοισ. ανθ ---- ^^^ --- χαιρε")
"""one_supplement.xml read by hand: <g> between words and the textparts' edges are word
boundaries; <lb> inside a <w> (break="no" or not) and a <space> inside a <w> are not; the
illegible <gap> and the lost ones are missing ('-' per character, '---' for an unknown extent or
lines, the quantity of a precision="low" one); <am>, <sic>, <orig> beside <reg>, <rdg> beside a
<lem>, <surplus>, <note> are not text; an <app> without <lem> reads its first <rdg>; Latin
letters are the unknown symbol; the one supplement (κεν) is text."""
HAND_TEXT = ("ο δημοσ ετιμησεν απολλωνιον αρ---οσ αυρηλιον στρατηγον και ---- ετουσ ε ---τον βωμον "
             "---ανεθηκεν --θεοισ --- ξενον του δημου")
REAL_TEXT = "--- ---νρα--- ---μηνοσ αρτεμισιωνοσ---"


@pytest.fixture(scope="module")
def char_model(tmp_path_factory):
    """A tiny random character model whose context holds every fixture edition whole."""
    torch.manual_seed(0)
    net = CharTransformer(CharConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_length=256))
    path = save_char(net.eval(), tmp_path_factory.mktemp("char") / "m", dtype=torch.float32)
    return infill.load_model(str(path), device="cpu")


def bench_windows(model, folder: Path) -> list[tuple[str, str]]:
    """(the bench's window with the gold filled in, as text; the gold) of every supplement of
    1-10 characters in ``folder``, in task order."""
    request = BenchRequest(model="m", data=str(folder), gap_lengths=tuple(range(1, 11)),
                           examples=None)
    selection = editors_supplements(model, request, folder)
    tasks = tasks_for(folder, "all", list(range(1, 11)))
    examples = sorted((e for es in selection.examples.values() for e in es),
                      key=lambda e: e.example_id)
    assert [e.example_id for e in examples] == list(range(len(tasks)))
    return [(GREEK.decode(e.ids), GREEK.decode(e.gold)) for e in examples]


def test_the_training_text_of_each_fixture_edition():
    assert training_texts([ONE, FIX / "handmade.xml", FIX / "iospe_1.10.xml"]) == [
        ONE_TEXT, HAND_TEXT, REAL_TEXT]


def test_one_supplement_the_bench_shows_the_training_text(tmp_path, char_model):
    shutil.copy(ONE, tmp_path / "one.xml")
    assert bench_windows(char_model, tmp_path) == [(ONE_TEXT, "κεν")]
    edition = read_edition(ONE)
    assert inscription_text(edition) == ONE_TEXT
    assert edition.notes == ["<app> without <lem>: its first <rdg> was read (1x)"]


def test_several_supplements_the_others_show_as_missing(char_model):
    """handmade.xml holds two supplements: the bench shows the training text with the hidden
    one filled back in and the other one as '-' per character; IOSPE 1.10 holds one."""
    assert bench_windows(char_model, FIX) == [
        (HAND_TEXT.replace("του δημου", "---------"), "ωνιον"),
        (HAND_TEXT.replace("απολλωνιον", "απολλ-----"), "του δημου"),
        (REAL_TEXT, "τεμισιωνοσ")]
