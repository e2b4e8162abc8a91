"""The famous Latin formulae typed with damage (issue 49): what a Latin model restores.

Each line is an inscription's formula as an epigraphist types it -- abbreviations with their
expansion in parentheses (the model reads the stone's letters, the output keeps the expansion),
``?`` per lost letter -- with the letters the formula demands. The table gives the first three
restorations and where the expected one ranks among the top 20 (standard beam search, beam 20,
the model's defaults otherwise). ``--spelling capitals`` types each line as read off the stone,
in capitals with V for both u and v (``IVLIA FELICVLA VIXIT``); ``--spelling u`` as editions
that write u for both in lowercase (``Iulia Felicula uixit annis XXV``).

    OMP_NUM_THREADS=1 python benchmarks/latin_openings.py --model builtin:latin \\
        > benchmarks/results/latin_openings.md
"""
from __future__ import annotations

import argparse

import torch
from common import SPELLINGS

import infill
from infill.data.greek import normalize
from infill.data.latin import fold_uv

FORMULAE = [
    ("Dis Manibus", "?(is) M(anibus) s(acrum) Iulia Felicula vixit annis XXV", "d"),
    ("Dis Manibus", "D(is) ?(anibus) s(acrum) Iulia Felicula vixit annis XXV", "m"),
    ("Dis Manibus, written out", "Dis ??????? sacrum Iulia Felicula vixit annis XXV", "manibus"),
    ("the issue's example", "d m ????? felici vixit annis xxv", None),
    ("pro salute imperatoris", "pro ?????? imp(eratoris) Caes(aris) M(arci) Aureli Antonini "
     "Aug(usti)", "salute"),
    ("pro salute imperatoris", "pro salute ???(eratoris) Caes(aris) M(arci) Aureli Antonini "
     "Aug(usti)", "imp"),
    ("votum solvit libens merito", "Iovi Optimo Maximo C(aius) Iulius Secundus v(otum) "
     "?(olvit) l(ibens) m(erito)", "s"),
    ("votum solvit libens merito, written out", "Iovi Optimo Maximo C(aius) Iulius Secundus "
     "votum solvit ?????? merito", "libens"),
    ("hic situs est", "C(aius) Iulius Secundus miles legionis annorum XXX h(ic) s(itus) ?(st)",
     "e"),
    ("hic situs est, sit tibi terra levis", "hic situs est sit tibi ????? levis", "terra"),
    ("cursus honorum", "C(aio) Iulio C(ai) f(ilio) quaestori tribuno plebis ???????? legato "
     "Augusti pro praetore provinciae", "praetori"),
    ("cursus honorum", "tribuno militum legionis III Augustae quaestori ??????? plebis "
     "praetori", "tribuno"),
    ("cursus honorum", "leg(ato) Aug(usti) pro ??(aetore) provinciae Africae co(n)s(uli)",
     "pr"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:latin")
    ap.add_argument("--beam", type=int, default=20)
    ap.add_argument("--spelling", choices=sorted(SPELLINGS), default="edition",
                    help="how each line is typed (default: as the edition writes it)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    model = infill.load_model(args.model, device="cpu")
    print(f"`{args.model}`, beam {args.beam}, top 20 kept, typed as {args.spelling}; u and v "
          "compared as one letter\n")
    print("| formula | typed | expected | restorations (first three) | rank of expected |")
    print("|---|---|---|---|---:|")
    for what, text, expected in FORMULAE:
        text = SPELLINGS[args.spelling](text)
        comps = infill.fill(model, text, gap=1, marker="?", beam_size=args.beam, top_k=20)[0]
        fills = [normalize("".join(c.fills), symbols=False, alphabet=model.alphabet)
                 for c in comps]
        rank = next((k + 1 for k, f in enumerate(fills)
                     if expected is not None and fold_uv(f) == fold_uv(expected)), None)
        shown = ", ".join(f"`{f}`" for f in fills[:3])
        where = "–" if expected is None else (str(rank) if rank else "> 20")
        print(f"| {what} | `{text}` | {f'`{expected}`' if expected else '(a name)'} | {shown} "
              f"| {where} |")


if __name__ == "__main__":
    main()
