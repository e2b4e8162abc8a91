"""Context decides the form (issue 48): a dozen formulae of Greek epigraphy in Attic-Ionic, Doric
and koine forms, typed with damage, restored by builtin:greek -- what ranks first, at what
probability, and where the form the dialect asks for ranks.

Each formula's lost letters are ``?`` (one per letter); the model fills them with its defaults
(standard left-to-right beam 10); the probability is the first completion's share of the ten at
the model's calibration (:mod:`infill.filling.calibration`: its temperature and unlisted mass),
the number a reader sees beside a reading.

    OMP_NUM_THREADS=1 python benchmarks/greek_formulae.py --model builtin:greek \\
        --name after > /tmp/after.md
"""
from __future__ import annotations

import argparse
import time

import infill
from infill.data.greek import normalize
from infill.filling.calibration import calibrated
from infill.filling.defaults import recommendation

FORMULAE = [
    # (dialect, the formula typed with damage, the form its context asks for)
    ("Attic-Ionic", "ἔδοξε τῆι βουλῆι καὶ τῶι δ???ι", "δήμωι"),
    ("Attic-Ionic", "ἔδοξεν τῆι β????ι καὶ τῶι δήμωι", "βουλῆι"),
    ("Attic-Ionic", "ἀγαθῆι τ???ι· δεδόχθαι τῆι βουλῆι", "τύχηι"),
    ("Attic-Ionic", "ἐπαινέσαι αὐτὸν καὶ στεφανῶσαι χρυσῶι σ???άνωι", "στεφάνωι"),
    ("Doric", "ἔδοξε τᾶι βουλᾶι καὶ τῶι δ???ι", "δάμωι"),
    ("Doric", "ἔδοξε τᾶι β????ι καὶ τῶι δάμωι", "βουλᾶι"),
    ("Doric", "ἀγαθᾶι τ???ι· ἔδοξε τᾶι βουλᾶι", "τύχαι"),
    ("Doric", "ἀρετᾶς ἕνεκα καὶ εὐνοίας τᾶς ἐς τὰν π????", "πόλιν"),
    ("koine", "ἡ βουλὴ καὶ ὁ δ???ς ἐτίμησαν", "δῆμος"),
    ("koine", "Αὐτοκράτορα Καίσαρα θεοῦ υἱὸν Σ?????ὸν", "Σεβαστόν"),
    ("koine", "ὑπὲρ τῆς τῶν Σεβαστῶν σ?????ας", "σωτηρίας"),
    ("koine", "ὁ δεῖνα τῇ γυναικὶ μνήμης χ????", "χάριν"),
]


def restore(model, text: str, want: str, rec) -> dict:
    """The first completion, its probability (at the calibration of ``rec``, the model's
    recommendation), and the wanted form's rank and probability."""
    comps = infill.fill(model, text, beam_size=10, top_k=10)[0]
    probs = calibrated([c.score for c in comps], rec.temperature, rec.unlisted)
    lost = [i for i, ch in enumerate(text) if ch == "?"]
    gold = normalize(want, symbols=False)
    words = [_word_of(c.text, lost) for c in comps]
    rank = next((r for r, w in enumerate(words, 1) if w == gold), None)
    return {"first": words[0] if words else "", "prob": probs[0] if probs else 0.0,
            "rank": rank, "want_prob": probs[rank - 1] if rank else 0.0}


def _word_of(text: str, lost: list[int]) -> str:
    """The normalized word of ``text`` holding the first lost position."""
    start = text.rfind(" ", 0, lost[0]) + 1
    end = text.find(" ", lost[-1])
    return normalize(text[start:end if end >= 0 else len(text)].strip("·,."), symbols=False)


def main() -> None:
    """Print the markdown table of the formulae under one model."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:greek")
    ap.add_argument("--name", default=None, help="the model's name in the table")
    args = ap.parse_args()
    model = infill.load_model(args.model, device="cpu")
    rec = recommendation(model)
    t0 = time.perf_counter()
    print(f"`{args.name or args.model}` (calibration: temperature {rec.temperature or 1:g}, "
          f"unlisted {rec.unlisted if rec.unlisted is not None else 'none'})\n")
    print("| dialect | typed | wanted | first | prob | wanted's rank | wanted's prob |")
    print("|---|---|---|---|---:|---:|---:|")
    for dialect, text, want in FORMULAE:
        r = restore(model, text, want, rec)
        print(f"| {dialect} | {text} | {want} | {r['first']} | {r['prob']:.3f} | "
              f"{r['rank'] or '>10'} | {r['want_prob']:.3f} |", flush=True)
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
