"""builtin:greek by supplement length on IOSPE: a model against the shipped one, paired.

Each editor's supplement of 1-10 letters of an IOSPE part (validation for choices; the test split
once, at the end) is hidden in turn, every other lost stretch shown as missing (the bench's
tasks, :func:`infill.bench.epidoc.tasks_for`), and restored at its exact length (standard
left-to-right beam search, beam 10, the model's defaults). Rows: 1-3, 4-6 and 7-10 letters, the
supplements that are whole words, and all; columns: top-1 and top-10 exact and the CER of the
first restoration (Ithaca's: edit distance / the editor's length), each with a 95% bootstrap
interval, and the paired difference against the baseline on the same supplements (paired
bootstrap, 95%).

    OMP_NUM_THREADS=1 python benchmarks/iospe_lengths_report.py --model builtin:greek \\
        --name final --split test --per-class 60      # against builtin:greek --memory off

``--per-class N`` samples N supplements (seed 0) of each length class (0: all). Every model's
restorations are kept per supplement in ``--out`` (``<name>.<split>.jsonl``) and reused, so the
baseline is decoded once (a kept restoration whose input text the EpiDoc reader now reads
otherwise is decoded again); ``--memory off`` loads a model with its phrase memory, word pairs,
names and shape memory left out (the shipped model before issue 35); ``--phrases``,
``--pairs``, ``--names``, ``--shapes`` and ``--mixtures`` give it files or an order of mixing of
one's own (choices on the validation split; ``--names`` mixes the names where the model's
default order puts them unless ``--mixtures`` says otherwise); ``--order`` decodes in another
order than the model's default (``any-order``: ``results/iospe_orders.md``); ``--rerank``
reranks the beam's restorations (``pll``: ``results/iospe_rerank.md``; the model's
default: ``off``); the baseline is decoded without reranking, and
``--baseline-name`` names its cache (e.g. ``shapes``: the shipped model before the reranking).
``--corpus DIR --split all`` measures a folder of EpiDoc files the model never saw instead
(its caches: ``<name>.<folder name>.all.jsonl``), the clean confirmation issue 35 lacks:

    OMP_NUM_THREADS=1 python benchmarks/iospe_lengths_report.py --corpus NEW_EDITIONS \\
        --split all --name shipped          # against builtin:greek before issue 35

With
``--per-class``, a last line weights the classes by the split's own mix of lengths.
``--spelling capitals`` types each text in capitals with V for u and v, as read off the stone
(``--spelling u``: u for both in lowercase; ``interpuncts``: words divided by ``·``), to
measure a Latin model on texts typed so.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import random
import re
import sys
import time
from pathlib import Path

import numpy as np
import torch
from common import SPELLINGS, spelled

import infill
from infill.bench.epidoc import cer, epidoc_folder, tasks_for
from infill.bench.stats import paired_bootstrap
from infill.data.greek import normalize
from infill.errors import InputError, ModelLoadError
from infill.models.char import mixing_order
from infill.names import RERANKS

CLASSES = {"1-3": range(1, 4), "4-6": range(4, 7), "7-10": range(7, 11)}
BATCH = 8
"""Supplements decoded together (one beam search over them; each kept in the cache with the
scores of its ten restorations)."""


def letters(completion, alphabet=None) -> str:
    """A completion's restored letters, normalized as the editors' readings are (in the
    model's ``alphabet``: Greek, or Latin)."""
    return normalize("".join(completion.fills), symbols=False,
                     **({"alphabet": alphabet} if alphabet is not None else {}))


def fail(message: str) -> None:
    """Stop with one line on stderr and exit status 2 (a bad argument)."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def chosen_tasks(split: str, per_class: int, corpus: str = "iospe", files: int = 0,
                 classes: str = "") -> list:
    """The supplements of 1-10 letters of ``split`` of ``corpus`` (``iospe`` or a folder of
    EpiDoc files; ``files`` > 0: of a seeded sample of its files), ``per_class`` of each class
    (0: all); ``classes`` (``"7-10"``, ``"1-3,4-6"``): of those classes only (empty: all)."""
    keep = [c for c in classes.split(",") if c]
    unknown = [c for c in keep if c not in CLASSES]
    if unknown:
        fail(f"--classes: {unknown[0]!r} is not a length class ({', '.join(CLASSES)})")
    folder = epidoc_folder(corpus)
    if folder is None:
        fail(f"--corpus: {corpus!r} is neither 'iospe' nor a folder of *.xml files")
    try:
        tasks = tasks_for(folder, split, list(range(1, 11)), files)
    except InputError as e:               # a file that is not EpiDoc: one line, no traceback
        fail(f"--corpus: {e}")
    if keep:
        tasks = [t for t in tasks if any(len(t.gold) in CLASSES[c] for c in keep)]
    if not per_class:
        return tasks
    out = []
    for lengths in CLASSES.values():
        mine = [t for t in tasks if len(t.gold) in lengths]
        out += random.Random(0).sample(mine, min(per_class, len(mine)))
    return sorted(out, key=lambda t: (t.file, t.index))


def restore(model_name: str, memory: str, tasks: list, cache: Path, beam: int,
            phrases: Path | None = None, pairs: Path | None = None, mixtures: str = "",
            names: Path | None = None, order: str | None = None,
            shapes: Path | None = None, rerank: str | None = None, top_k: int = 10,
            scorer: str | None = None, own_text: str | None = None,
            own_words: str | None = None) -> dict:
    """{task key: [restorations, best first]} of a model, read from / added to ``cache``."""
    done, texts = cached(cache), cached(cache, "text")
    todo = [t for t in tasks if key(t) not in done or texts.get(key(t), text_id(t)) != text_id(t)]
    if todo:
        model = infill.load_model(model_name, device="cpu")
        if own_text is not None:
            give_own_text(model, own_text)
        if own_words is not None:
            give_own_words(model, own_words)
        if memory == "off":
            model.phrases = model.pairs = model.names = model.shapes = model.gate = None
            model.own_text = model.own_words = None
        elif phrases is not None:         # a phrase memory of one's own (choices on validation)
            from infill.models.phrases import load_phrases
            model.phrases = load_phrases(phrases, model.alphabet)
        if mixtures:
            try:
                model.mixed = mixing_order(mixtures.split(","), "--mixtures")
            except ModelLoadError as e:
                fail(str(e))
        if pairs is not None and memory != "off":
            from infill.models.phrases import load_pairs
            model.pairs = load_pairs(pairs, model.alphabet, model.lexicon)
        if names is not None and memory != "off":
            give_names(model, names)
        if shapes is not None and memory != "off":
            from infill.models.shapes import load_shapes
            model.shapes = load_shapes(shapes, model.alphabet)
        t0 = time.perf_counter()
        with cache.open("a", encoding="utf-8") as f:
            for k in range(0, len(todo), BATCH):
                chunk = todo[k:k + BATCH]
                results = infill.fill(model, [t.text for t in chunk], gap=1, marker="?",
                                      beam_size=beam, top_k=top_k, order=order, rerank=rerank,
                                      scorer=scorer)
                for t, comps in zip(chunk, results):
                    done[key(t)] = [letters(c, model.alphabet) for c in comps]
                    row = {"key": key(t), "text": text_id(t), "fills": done[key(t)],
                           "scores": [round(c.score, 5) for c in comps]}
                    if any(c.rank_score is not None for c in comps):   # reranked: what orders
                        row["rank_scores"] = [round(c.rank_score, 5) for c in comps]   # them
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
                f.flush()
                print(f"  {model_name}: {k + len(chunk)}/{len(todo)} "
                      f"({time.perf_counter() - t0:.0f} s)", flush=True)
    return done


def cached(cache: Path, field: str = "fills") -> dict:
    """{task key: restorations} that ``cache`` holds (empty where there is no cache yet); the
    last row of a key counts. ``field="text"``: {key: :func:`text_id` of the input it restored},
    of the rows that record it."""
    if not cache.is_file():
        return {}
    rows = (json.loads(line) for line in cache.read_text(encoding="utf-8").splitlines())
    return {row["key"]: row[field] for row in rows if field in row}


def give_names(model, path: Path) -> None:
    """Give ``model`` the names of ``path`` (a names.tsv), mixed where its order (its own, or
    ``--mixtures``) puts them, and its lexicon the names it lacks."""
    from infill.models.proper_names import load_names, with_names

    if "names" not in model.mixed:
        fail("--names: the model's mixing order has no names; give --mixtures with them")
    model.names = load_names(path, model.alphabet, model.pairs)
    model.lexicon = with_names(model.lexicon, model.names)


def give_own_text(model, given: str) -> None:
    """Give ``model`` a memory of each input's own text, ``BETA`` or ``BETA/l:r,...`` (its
    Witten–Bell beta, and levels other than the phrase memory's), mixed last (``off``: take
    its own away)."""
    from infill.models.own_text import OWN_TEXT_SIDES, OwnText
    from infill.models.phrases import _sides

    if given == "off":
        model.own_text = None
        return
    beta, _, sides = given.partition("/")
    try:
        model.own_text = OwnText(model.alphabet, _sides(sides) if sides else OWN_TEXT_SIDES,
                                 float(beta))
    except ValueError:
        fail(f"--own-text: {given!r} is neither 'off' nor BETA[/l:r,...]")
    if not model.own_text.beta > 0:
        fail(f"--own-text: beta must be above 0, not {beta}")
    model.mixed = tuple(m for m in model.mixed if m != "own_text") + ("own_text",)


def give_own_words(model, given: str) -> None:
    """Give ``model`` the lexicon of each input's own whole words, ``BETA[/SHORTEST[/BARE]]``,
    mixed last but before the memory of its own text (``off``: take its own away)."""
    from infill.models.own_words import OWN_WORDS_SHORTEST, OwnWords

    if given == "off":
        model.own_words = None
        return
    beta, _, rest = given.partition("/")
    shortest, _, bare = rest.partition("/")
    try:
        beta, shortest = float(beta), int(shortest or OWN_WORDS_SHORTEST)
        bare = float(bare) if bare else None
    except ValueError:
        fail(f"--own-words: {given!r} is neither 'off' nor BETA[/SHORTEST[/BARE]]")
    if not 0 < beta < float("inf") or shortest < 1 or not (bare is None or bare > 0):
        fail(f"--own-words: beta and BARE must be above 0 and SHORTEST 1 or more, not {given}")
    model.own_words = OwnWords(model.alphabet, beta, shortest, bare)
    rest = [m for m in model.mixed if m != "own_words"]
    at = rest.index("own_text") if "own_text" in rest else len(rest)
    model.mixed = tuple(rest[:at] + ["own_words"] + rest[at:])


def key(task) -> str:
    """A supplement's name in the caches: its file and lacuna."""
    return f"{Path(task.file).name}#{task.index}"


def text_id(task) -> str:
    """A short digest of the text a supplement is restored in, kept beside its restorations:
    where the reader reads the inscription otherwise, the cached ones are stale."""
    return hashlib.sha1(task.text.encode("utf-8")).hexdigest()[:12]


FOLD = None
"""How restorations and golds are compared: None (as written), or a function both pass through
first (``--fold-uv``: Latin ``u`` and ``v`` one letter, :func:`infill.data.latin.fold_uv`)."""
MEASURES = ("top1", "top10", "cer")
"""The table's measures (``--top-k 20`` adds top-20)."""


def scores(tasks: list, fills: dict) -> dict[str, np.ndarray]:
    """Per supplement: top-1, top-10, top-20 (0/1) and CER of the first restoration."""
    same = FOLD or (lambda x: x)
    got = [[same(x) for x in fills[key(t)]] for t in tasks]
    golds = [same(t.gold) for t in tasks]
    return {"top1": np.array([float(bool(f) and f[0] == g) for f, g in zip(got, golds)]),
            "top10": np.array([float(g in f[:10]) for f, g in zip(got, golds)]),
            "top20": np.array([float(g in f[:20]) for f, g in zip(got, golds)]),
            "cer": np.array([cer(f[0] if f else "", g) for f, g in zip(got, golds)])}


def interval(x: np.ndarray, n_boot: int = 10_000) -> tuple[float, float]:
    """95% bootstrap interval of a mean (seed 0)."""
    if len(x) < 2:
        return float("nan"), float("nan")
    idx = np.random.default_rng(0).integers(0, len(x), size=(n_boot, len(x)))
    means = x[idx].mean(1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def row(name: str, a: dict, b: dict) -> str:
    """One markdown row: the model's measures with intervals, then the paired differences."""
    cells = []
    each = [(m, 1 if m == "cer" else 100) for m in MEASURES]
    for m, scale in each:
        lo, hi = interval(a[m])
        d = fmt_num(a[m].mean() * scale, scale)
        cells.append(f"{d} [{fmt_num(lo * scale, scale)}, {fmt_num(hi * scale, scale)}]")
    for m, scale in each:
        if len(a[m]) < 2:
            cells.append("–")
            continue
        p = paired_bootstrap(a[m], b[m])
        cells.append(f"{p['mean_diff'] * scale:+.{1 if scale == 100 else 3}f} "
                     f"[{p['lo'] * scale:+.{1 if scale == 100 else 3}f}, "
                     f"{p['hi'] * scale:+.{1 if scale == 100 else 3}f}]")
    base = " / ".join(fmt_num(b[m].mean() * scale, scale) for m, scale in each)
    k = len(each)
    return f"| {name} | {len(a['top1'])} | " + " | ".join(cells[:k]) + f" | {base} | " + \
        " | ".join(cells[k:]) + " |"


def fmt_num(x: float, scale: int) -> str:
    """A percentage with one decimal, a CER with three."""
    return f"{x:.1f}" if scale == 100 else f"{x:.3f}"


def weighted(tasks: list, fills: dict, mix: dict[str, int]) -> dict[str, float]:
    """Each measure over the length classes weighted by ``mix`` (how many supplements of each
    class the whole split holds): what a sample of ``--per-class`` estimates for the split."""
    s = scores(tasks, fills)
    total = sum(mix.values())
    out = {}
    for m in s:
        out[m] = sum(mix[c] / total * s[m][[k for k, t in enumerate(tasks) if len(t.gold) in r]]
                     .mean() for c, r in CLASSES.items())
    return out


def table(tasks: list, new: dict, old: dict) -> list[str]:
    """The markdown table by length class (and whole words, and all)."""
    groups = {f"{c} letters": [k for k, t in enumerate(tasks) if len(t.gold) in r]
              for c, r in CLASSES.items()}
    groups["whole words"] = [k for k, t in enumerate(tasks) if t.whole_word]
    groups["all"] = list(range(len(tasks)))
    a, b = scores(tasks, new), scores(tasks, old)
    heads = [("top-" + m[3:] + " %") if m != "cer" else "CER" for m in MEASURES]
    lines = ["| supplements | n | " + " | ".join(heads) + " | baseline " + " / ".join(
        h.rstrip(" %") for h in heads) + " | " + " | ".join(f"Δ {h.rstrip(' %')}" for h in heads)
        + " |", "|---|---:|" + "---:|" * (2 * len(heads) + 1)]
    for name, idx in groups.items():
        if not idx:                         # a class --classes left out
            continue
        pick = lambda s: {m: v[idx] for m, v in s.items()}  # noqa: E731
        lines.append(row(name, pick(a), pick(b)))
    return lines


def arguments() -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="builtin:greek")
    ap.add_argument("--memory", default="on", choices=("on", "off"))
    ap.add_argument("--baseline", default="builtin:greek")
    ap.add_argument("--baseline-memory", default="off", choices=("on", "off"))
    ap.add_argument("--corpus", default="iospe",
                    help="'iospe' or a folder of EpiDoc files (e.g. a corpus the model never saw)")
    ap.add_argument("--split", default="validation", choices=("validation", "test", "all"),
                    help="the part of the corpus (80/10/10 by inscription, seed 0; 'all': every "
                    "file, for a corpus the model never saw)")
    ap.add_argument("--per-class", type=int, default=0)
    ap.add_argument("--classes", default="",
                    help="length classes to keep, comma-separated (1-3, 4-6, 7-10; default all)")
    ap.add_argument("--files", type=int, default=0,
                    help="read a seeded sample (seed 0) of this many of the part's files only "
                    "(0: all; a large corpus such as EDH)")
    ap.add_argument("--sample", type=int, default=0,
                    help="of the supplements chosen, this many drawn with seed 0 (0: all): a "
                    "smaller fixed sample whose restorations a larger one's cache holds")
    ap.add_argument("--beam", type=int, default=10)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/lengths"))
    ap.add_argument("--name", default=None, help="the new model's cache name")
    ap.add_argument("--phrases", type=Path, default=None,
                    help="a phrases.safetensors to give the model instead of its own")
    ap.add_argument("--order", default=None, help="the decoding order (default the model's)")
    ap.add_argument("--mixtures", default="", help="the order of the mixtures (default the "
                    "model's: lexicon,pairs,names,phrases)")
    ap.add_argument("--pairs", type=Path, default=None,
                    help="a pairs.tsv to give the model instead of its own")
    ap.add_argument("--names", type=Path, default=None,
                    help="a names.tsv to give the model (mixed after the word pairs unless "
                    "--mixtures says otherwise)")
    ap.add_argument("--shapes", type=Path, default=None,
                    help="a shapes.safetensors to give the model instead of its own")
    ap.add_argument("--rerank", default=None, choices=RERANKS,
                    help="how the beam's completions are reranked (default: the model's, off)")
    ap.add_argument("--top-k", type=int, default=10, choices=(10, 20),
                    help="restorations kept per supplement (20: a top-20 column; give --beam 20)")
    ap.add_argument("--scorer", default=None, help="the new model's beam scorer (hcb, standard; "
                    "default the model's); --baseline-scorer the baseline's")
    ap.add_argument("--baseline-scorer", default=None)
    ap.add_argument("--spelling", default="edition", choices=sorted(SPELLINGS),
                    help="each text as its edition writes it (default), in capitals with V "
                    "for u and v as read off the stone (capitals), with u for both in "
                    "lowercase (u), or its words divided by interpuncts (interpuncts)")
    ap.add_argument("--fold-uv", action="store_true",
                    help="compare u and v as one letter (Latin: the stone has V for both)")
    ap.add_argument("--baseline-name", default=None,
                    help="the baseline's cache name (default: from --baseline and "
                    "--baseline-memory; decoded without reranking)")
    ap.add_argument("--own-text", default=None, metavar="BETA[/l:r,...]|off",
                    help="the new model's memory of each input's own text: 'off' (none), or "
                    "its Witten-Bell beta and levels (mixed last; levels by default "
                    "own_text.OWN_TEXT_SIDES)")
    ap.add_argument("--own-words", default=None, metavar="BETA[/SHORTEST[/BARE]]|off",
                    help="the new model's own-words lexicon: 'off', or its beta, shortest "
                    "word and lost word's beta (none by default; mixed before its own text)")
    return ap.parse_args()


def main() -> None:
    """Decode what is not cached, print the table."""
    args = arguments()
    global FOLD, MEASURES
    if args.fold_uv:
        from infill.data.latin import fold_uv
        FOLD = fold_uv
    if args.spelling in ("continua", "majuscule"):     # no word division: letters compared
        first = FOLD or (lambda x: x)
        FOLD = lambda x: first(x).replace(" ", "")     # noqa: E731
    if args.top_k == 20:
        MEASURES = ("top1", "top10", "top20", "cer")
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    tasks = chosen_tasks(args.split, args.per_class, args.corpus, args.files, args.classes)
    if args.sample and args.sample < len(tasks):      # a smaller fixed sample of those
        tasks = sorted(random.Random(0).sample(tasks, args.sample),
                       key=lambda t: (t.file, t.index))
    tasks = [dataclasses.replace(t, text=spelled(t.text, t.gold, args.spelling)) for t in tasks]
    part = args.split if args.corpus == "iospe" else f"{Path(args.corpus).name}.{args.split}"
    tag = lambda m, mem: re.sub(r"[^\w.-]+", "_", m) + f".{mem}"  # noqa: E731
    name = args.name or tag(args.model, args.memory)
    new = restore(args.model, args.memory, tasks, args.out / f"{name}.{part}.jsonl",
                  args.beam, args.phrases, args.pairs, args.mixtures, args.names, args.order,
                  args.shapes, args.rerank, args.top_k, args.scorer, args.own_text,
                  args.own_words)
    old_name = args.baseline_name or tag(args.baseline, args.baseline_memory)
    old = restore(args.baseline, args.baseline_memory, tasks,
                  args.out / f"{old_name}.{part}.jsonl", args.beam, rerank="off",
                  top_k=args.top_k, scorer=args.baseline_scorer)
    against = f"`{args.baseline}` (memory {args.baseline_memory})" if args.baseline_name is None \
        else f"the cached `{args.baseline_name}`"
    rerank = args.rerank or "the model's"
    scorers = f"scorer {args.scorer or 'the default'} against " \
        f"{args.baseline_scorer or 'the default'}"
    corpus = "IOSPE" if args.corpus == "iospe" else args.corpus
    print(f"`{args.model}` (memory {args.memory}, rerank {rerank}) "
          f"against {against}, not reranked: {len(tasks)} editors' supplements of 1-10 letters, "
          f"{corpus} {args.split} split, beam {args.beam}, {scorers}, "
          "left-to-right; 95% bootstrap "
          "intervals, Δ = paired bootstrap (new − baseline)\n")
    print("\n".join(table(tasks, new, old)))
    if args.per_class and not args.classes:
        every = chosen_tasks(args.split, 0, args.corpus, args.files)
        mix = {c: sum(len(t.gold) in r for t in every) for c, r in CLASSES.items()}
        a, b = weighted(tasks, new, mix), weighted(tasks, old, mix)
        print(f"\nweighted by the split's own mix of lengths ({mix}): top-1 / top-10 / CER "
              f"{100 * a['top1']:.1f} / {100 * a['top10']:.1f} / {a['cer']:.3f} against "
              f"{100 * b['top1']:.1f} / {100 * b['top10']:.1f} / {b['cer']:.3f}")


if __name__ == "__main__":
    main()
