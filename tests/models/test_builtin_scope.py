"""Each builtin says what it knows wherever models are listed (issue 21): `infill models`, its
JSON, and the workbench's catalog; the demo inputs are texts of each builtin's own corpus kind."""
import json
from pathlib import Path

from click.testing import CliRunner

import infill
from infill.serve.catalog import ModelCatalog
from infill_cli.main import main

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


def test_protein_builtin_says_it_knows_one_family_everywhere_models_are_listed():
    r = CliRunner().invoke(main, ["models"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()        # the row, then its description wrapped under it
    start = next(i for i, x in enumerate(lines) if x.startswith("builtin:protein"))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")),
               len(lines))
    line = " ".join(x.strip() for x in lines[start:end])
    assert "ONE protein family only, HypF/AcyP" in line and "ESM2" in line
    rows = {x["name"]: x for x in map(json.loads, CliRunner().invoke(
        main, ["models", "--json"]).output.splitlines())}
    assert rows["builtin:protein"]["knows"] == "one protein family only: HypF/AcyP"
    served = {x["name"]: x for x in ModelCatalog().rows()}
    assert served["builtin:protein"]["knows"] == rows["builtin:protein"]["knows"]
    assert "HypF/AcyP" in served["builtin:protein"]["description"]


def test_protein_demo_inputs_are_hypf_acyp_sequences_the_model_restores():
    lines = [x for x in (DEMO / "protein.txt").read_text().splitlines() if x]
    assert len(lines) == 3 and all(x.startswith("MA") for x in lines)
    lm = infill.load_model("builtin:protein", device="cpu")
    out = infill.fill(lm, lines[0], top_k=1)[0][0]
    assert "?" not in out.text and len(out.text) == len(lines[0])


#: 60 lines of builtin:english's test split (never trained on), as drawn by its benchmark
HELD_OUT = [
    "And what wit could wit have to excuse that?",
    "But, for the seventh cause; how did you find the",
    "Let me have audience for a word or two:",
    "the tired horse his rider. But, damosella virgin,",
    "And here's another",
    "Master, there is a bark of Epidamnum",
    "we'll unkennel the fox. Let me stop this way first.",
    "What, Curio?",
    "tell you, that, though she harbours you as her",
    "I think the boy hath grace in him; he blushes.",
    "I pray thee, lend me thine.",
    "Our grandam earth, having this distemperature,",
    "I know it will well please them. Hie thee, captain.",
    "in Europe: my womb, my womb, my womb, undoes me.",
    "voice, the tongue, which is the birth, becomes",
    "Whose music, to my thinking, pleased the king.",
    "not the man. My tongue is weary; when my legs are",
    "Jesus preserve your royal majesty!",
    "And bid me be advised how I tread.",
    "And you that love the commons, follow me.",
    "And pray that I may repossess the crown.",
    "Death.",
    "My loving lord, I take my leave of you;",
    "In the base court? Come down? Down, court!",
    "He is frank'd up to fatting for his pains",
    "Ere from this war thou turn a conqueror,",
    "God and good angel fight on Richmond's side;",
    "One that goes with him: I love him for his sake;",
    "your old virginity, is like one of our French",
    "If it Please your honour, I am the poor duke's",
    "To weed my vice and let his grow!",
    "Is fit for treasons, stratagems and spoils;",
    "'D sol re,' one clef, two notes have I:",
    "Of your entire affection to Bianca;",
    "In resolution as I swore before.",
    "you think is his name?",
    "and he's a man good enough, he's one o' the soundest",
    "Thou shouldest strike him.",
    "That hath a stomach; and such a one that dare",
    "The buckles on his breast, reneges all temper,",
    "Attend upon Cominius to these wars.",
    "Not now, not now.",
    "Be gone;",
    "Marcus.' 'He killed my father.'",
    "Between the acting of a dreadful thing",
    "But all be buried in his gravity.",
    "It shall advantage more than do us wrong.",
    "Else shall you not have any hand at all",
    "That is another's lawful promised love.",
    "Stood on her cheeks, as doth the honey-dew",
    "That's not my meaning: but breathe his faults so quaintly",
    "Yet what can it when one can not repent?",
    "'High and mighty, You shall know I am set naked on",
    "It must be 'se offendendo;' it cannot be else. For",
    "Here's France and Burgundy, my noble lord.",
    "Have so incensed that I am reckless what",
    "To what they were before. My pretty cousin,",
    "lord, fie! a soldier, and afeard? What need we",
    "Would to the bleeding and the grim alarm",
    "And portance in my travels' history:",
]


def test_builtin_english_restores_held_out_words():
    """Regression check of the shipped model on one-word gaps (infill.bench.words) of 60 of its
    test lines. Measured when it was shipped: top-1 21.7%, top-5 41.7% (the previous model,
    2 x 256 on Tiny Shakespeare: 18.3% / 31.7%; a unigram guess gets a few percent)."""
    from infill.bench.words import score_word_gaps, word_gaps
    lm = infill.load_model("builtin:english", device="cpu")
    res = score_word_gaps(lm, word_gaps(HELD_OUT, None, seed=0), "hcb")
    assert res["n"] == 60 and res["one_piece"] >= 85
    assert res["top1"] >= 15 and res["top5"] >= 35, (res["top1"], res["top5"])
    for row in res["rows"]:                      # fills are words: no stray spaces or pieces
        assert all(f == f.strip() and "##" not in f for f in row["fills"])
