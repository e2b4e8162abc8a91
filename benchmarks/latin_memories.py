"""Write builtin:latin's lexicon and memories into a model folder from the EDH training split
(:func:`infill.training.latin.write_memories`) -- for a snapshot of a run, or to try another
size.

    OMP_NUM_THREADS=1 python benchmarks/latin_memories.py --inscriptions EDH_DIR \\
        --out data/models/latin [--chars 1500000 --min-count 3 --pairs-min 2]

The inscriptions' texts are the training split (seed 0, 80/10/10 by inscription) read by the
EpiDoc reader, as ``infill train latin --inscriptions`` reads them (``--texts FILE``: a JSON list
of them already read, written by ``--save-texts FILE``). The lexicon holds their words (each
inscription once) at :data:`~infill.training.latin.LEXICON_SCALE` times the weight of a word of
the Latin literature (``--literature``, default the named corpus ``latin`` under the data root,
read in the training windows ``infill train latin`` reads), as the end of ``infill train latin``
writes it; ``--literature none`` leaves the literature out (the lexicon shipped before). Prints
each file's size.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from infill.data.corpora import resolve_corpus
from infill.data.examples import greek_examples
from infill.data.inscriptions import iospe_split, training_texts
from infill.data.latin import LATIN
from infill.errors import InputError
from infill.models.phrases import PHRASE_REST
from infill.training import latin


def levels(spec: str) -> tuple[tuple[int, int], ...]:
    """``L:R,L:R,...`` -> ((L, R), ...) (an argparse type: a malformed one is one line, exit 2)."""
    try:
        out = tuple((int(left), int(right)) for left, right in
                    (side.split(":") for side in spec.split(",")))
    except ValueError:
        out = ()
    if not out or any(n < 0 for side in out for n in side):
        raise argparse.ArgumentTypeError(f"{spec!r}: write L:R,L:R,... (whole numbers)")
    return out


def least_rest(spec: str) -> tuple[int, ...]:
    """``M,M,...`` -> (M, ...), each 0..PHRASE_REST + 1 (an argparse type: a malformed one is
    one line, exit 2)."""
    try:
        out = tuple(int(m) for m in spec.split(","))
    except ValueError:
        out = ()
    if not out or any(not 0 <= m <= PHRASE_REST + 1 for m in out):
        raise argparse.ArgumentTypeError(
            f"{spec!r}: write M,M,... (whole numbers from 0 to {PHRASE_REST + 1})")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inscriptions", type=Path, required=True, help="the EDH folder")
    ap.add_argument("--out", type=Path, required=True, help="the model folder to write into")
    ap.add_argument("--texts", type=Path, default=None)
    ap.add_argument("--save-texts", type=Path, default=None)
    ap.add_argument("--chars", type=int, default=latin.MEMORY_CHARS)
    ap.add_argument("--min-count", type=int, default=latin.MIN_COUNT,
                    help="phrase and shape entries counted fewer times are left out")
    ap.add_argument("--pairs-min", type=int, default=latin.PAIRS_MIN,
                    help="word pairs seen fewer times are left out")
    ap.add_argument("--literature", default="latin",
                    help="the literary corpus whose words the lexicon adds (a file, a corpus "
                    "name, or 'none')")
    ap.add_argument("--lexicon-scale", type=float, default=latin.LEXICON_SCALE,
                    help="an inscription's word against one occurrence in the literature")
    ap.add_argument("--phrase-levels", type=levels, default=None,
                    help="the phrase memory's levels, L:R,... in mixing order (default "
                    "latin.PHRASE_LEVELS)")
    ap.add_argument("--phrase-least", type=least_rest, default=None,
                    help="per phrase level, the fewest characters still hidden right of a "
                    "position for it to speak there, M,M,... (default latin.PHRASE_LEAST; with "
                    "--phrase-levels, 0 for each)")
    ap.add_argument("--phrase-beta", type=float, default=latin.PHRASE_WITTEN_BELL,
                    help="the phrase memory's Witten-Bell beta")
    ap.add_argument("--ends", action=argparse.BooleanOptionalAction, default=latin.MEMORY_ENDS,
                    help="the memories' right contexts may reach past an inscription's end")
    args = ap.parse_args()
    t0 = time.perf_counter()
    literature = []
    if args.literature != "none":              # read first: a bad path is one line, exit 2
        try:
            path, _ = resolve_corpus(args.literature)
            literature = [LATIN.decode(w) for w in greek_examples(path, 512, LATIN).examples]
        except InputError as e:
            ap.error(f"--literature: {e}")
    texts = json.loads(args.texts.read_text(encoding="utf-8")) if args.texts else \
        training_texts(iospe_split(args.inscriptions)["train"])
    if args.save_texts:
        args.save_texts.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    print(f"{len(texts):,} training inscriptions ({sum(map(len, texts)):,} characters); "
          f"{time.perf_counter() - t0:.0f} s", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    latin.LEXICON_SCALE, latin.PHRASE_WITTEN_BELL = args.lexicon_scale, args.phrase_beta
    if args.phrase_levels:                     # other levels: each speaks everywhere unless
        latin.PHRASE_LEVELS, latin.PHRASE_LEAST = args.phrase_levels, ()   # --phrase-least
    if args.phrase_least is not None:
        latin.PHRASE_LEAST = args.phrase_least
    if latin.PHRASE_LEAST and len(latin.PHRASE_LEAST) != len(latin.PHRASE_LEVELS):
        ap.error(f"--phrase-least: one number per phrase level ({len(latin.PHRASE_LEVELS)})")
    latin.write_memories(args.out, texts, literature, LATIN, args.chars, args.min_count,
                         args.pairs_min, ends=args.ends)
    for f in ("lexicon.tsv", "phrases.safetensors", "shapes.safetensors", "pairs.tsv"):
        print(f"{f}: {(args.out / f).stat().st_size / 2 ** 20:.1f} MiB")
    print(f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
