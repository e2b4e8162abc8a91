"""Which part of builtin:greek chooses δάμωι over δήμωι in an Attic decree (issue 48).

The readings δήμω and δάμω of "ἔδοξε τῆι βουλῆι καὶ τῶι [....]ι" (Attic-Ionic: τῆι βουλῆι) and of
"ἔδοξε τᾶι βουλᾶι καὶ τῶι [....]ι" (Doric), scored exactly (standard, left-to-right) by the model
as shipped (``full``), without its memories of the inscriptions (phrases, shapes, pairs, names:
``lexicon``) and by the network alone (``network``); the probability is the softmax of the two
scores at temperature 1.

    OMP_NUM_THREADS=1 python benchmarks/greek_dialect_probe.py --model builtin:greek
"""
from __future__ import annotations

import argparse

import infill

TEXTS = {"Attic-Ionic": "ἔδοξε τῆι βουλῆι καὶ τῶι [....]ι",
         "Doric": "ἔδοξε τᾶι βουλᾶι καὶ τῶι [....]ι"}


def main() -> None:
    """Print one markdown row per (part of the model, context)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:greek")
    args = ap.parse_args()
    print("| model part | context | score δήμω | score δάμω | P(δήμω) |\n|---|---|---:|---:|---:|")
    for part in ("full", "lexicon", "network"):
        model = infill.load_model(args.model, device="cpu")
        if part != "full":
            model.phrases = model.shapes = model.pairs = model.names = model.gate = None
            model.own_text = None
        if part == "network":
            model.lexicon = None
        for dialect, text in TEXTS.items():
            r = infill.readings(model, text, [["δήμω", "δάμω"]], scorer="standard",
                                order="left-to-right", beam_size=5, top_k=5)
            got = {c.readings[0]: c for c in r.combinations}
            print(f"| {part} | {dialect} | {got['δήμω'].score:.3f} | {got['δάμω'].score:.3f} | "
                  f"{got['δήμω'].prob:.4f} |", flush=True)


if __name__ == "__main__":
    main()
