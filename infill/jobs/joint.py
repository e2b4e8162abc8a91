"""The joint job (``infill joint``): the pairwise joints of a masked LM (MLM, MRF-L, MRF, HCB,
AG) for the two gap tokens of one text (:func:`pair_joints`), or their metrics over held-out
(sentence, pair) examples (:func:`joint_metrics`).

    request = JointRequest(joint_size=20, ag_iterations=10)
    pair_joints(model, "The ___ ___ on the mat.", request, name="builtin:english").to_json()
"""
from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import AbstractContextManager as ContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from infill.data.files import check_text
from infill.data.splits import SPLITS, training_record
from infill.errors import ConfigError, InputError
from infill.fields import AG_MAX_ITERATIONS, MAX_BATCH_SIZE, Request, option, seed_option
from infill.lazy import LazyModule

if TYPE_CHECKING:
    from infill.parallel import Shard

# What runs the joints, on first use (`infill joint --help` needs only the request type).
corpora = LazyModule("infill.data.corpora")
constructions = LazyModule("infill.joint.constructions")
tables = LazyModule("infill.joint.tables")
letters = LazyModule("infill.decoding.letters")
results = LazyModule("infill.filling.results")
metrics = LazyModule("infill.joint.metrics")

__all__ = ["JointRequest", "PairJoints", "JointMetrics", "check_mode", "pair_joints", "joint_corpus",
           "joint_metrics"]

SCHEMES = ("random", "contiguous")
"""Which position pairs of a sentence are evaluated."""


CORPUS_ONLY = ("split", "pair_scheme", "examples", "converged_tol", "seed", "pairs_per_text",
               "min_tokens")
"""The options of the metrics over a corpus (``data``) alone, refused with a TEXT."""
TEXT_ONLY = ("top_k", "gap", "marker")
"""The options of one TEXT's pairs alone, refused over a corpus."""


@dataclass(frozen=True)
class JointRequest(Request):
    """Every option of ``infill joint``: the joints' grid and AG iterations; for one text (TEXT
    mode) its gaps and the pairs shown; over a corpus (``data``) which examples."""

    KIND: ClassVar[str] = "joint"
    RENAMED: ClassVar[dict[str, str]] = {"iterations": "ag_iterations", "scheme": "pair_scheme"}

    text: str | None = option(None, str, "One text holding two gap tokens: the top pairs of "
                              "each joint (TEXT mode).", optional=True)
    data: str | None = option(None, str, "Text file (one sentence per line) or corpus name "
                              "english|greek|protein (the default for the builtin models).",
                              optional=True)
    split: str | None = option(None, str, "With a corpus the model was trained on: which split "
                               "of the training family's examples to use (default: test for a "
                               "corpus name, all for a file).", choices=SPLITS, optional=True)
    pair_scheme: str = option("random", str, "Which position pairs to evaluate.",
                              choices=SCHEMES, what="pair scheme")
    examples: int | None = option(200, int, "Examples drawn at random (seeded).",
                                  low=1, optional=True, what="the number of examples")
    joint_size: int = option(50, int, "K: candidates per position (top-K of its marginal; the "
                             "whole vocabulary when it is at most K).", low=1, what="joint size")
    ag_iterations: int = option(50, int, "AG: iterations.", low=1, high=AG_MAX_ITERATIONS,
                                what="AG iterations")
    converged_tol: float | None = option(
        None, float, "Also report AG*: AG run until its total-variation change is <= this "
        f"(at most {AG_MAX_ITERATIONS:,} iterations).", low=0, low_open=True, optional=True)
    seed: int = seed_option()
    pairs_per_text: int = option(1, int, "Distinct position pairs drawn from each sentence.",
                                 low=1)
    min_tokens: int = option(4, int, "Skip lines with fewer (non-special) tokens.", low=2)
    top_k: int = option(5, int, "Pairs shown per joint (TEXT mode).", low=1, what="top-k")
    gap: int = option(1, int, "Tokens per gap marker (TEXT mode): '___ ___' with 1, or '___' "
                      "with 2.", low=1)
    marker: str = option("___", str, "Gap marker (TEXT mode).")
    batch_size: int = option(128, int, "Rows per forward pass.", low=1, high=MAX_BATCH_SIZE)
    allow_special: bool = option(False, bool, "Let special tokens be candidates.")
    window: bool = option(True, bool, "Read a text longer than the model in the longest context "
                          "window centred on the pair (False: refuse TEXT, skip such texts).")

    def check(self) -> None:
        if self.text is not None and self.data is not None:
            raise ConfigError("give either a text (TEXT) or 'data', not both",
                              field=("text", "data"))
        if self.text is not None:
            check_text(self.text, "TEXT")
            check_mode(self, text=True)


def check_mode(request: JointRequest, text: bool) -> None:
    """ConfigError for an option of the other mode (honoured or refused, never dropped): with
    one text, the corpus options (:data:`CORPUS_ONLY`); over a corpus, :data:`TEXT_ONLY`."""
    owner, running = ("the metrics over a corpus (data)", "one TEXT") if text else \
        ("one TEXT's pairs", "over data")
    other = request.changed(CORPUS_ONLY if text else TEXT_ONLY)
    if other:
        raise ConfigError(f"'{other[0]}' is an option of {owner}; this run is {running}",
                          field=other[0])


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


@dataclass
class PairJoints:
    """The joints of one text's two gap tokens: for each joint its ``top`` pairs (rank, text,
    fills, tokens, prob, logp), the candidate ``grid``, AG's convergence (``ag``) and the
    context ``windows`` used (empty when the text fit)."""

    input: str
    model: str | None
    gap: int
    positions: tuple[int, int]
    grid: tuple[int, int]
    joint_size: int
    ag: dict
    joints: dict[str, list[dict]]
    windows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """The line of ``infill joint --json TEXT``."""
        return {"input": self.input, "model": self.model, "gap": self.gap,
                "positions": list(self.positions), "grid": list(self.grid),
                "joint_size": self.joint_size,
                "ag": {"iterations": self.ag["iterations"], "change": _finite(self.ag["change"]),
                       "objective": [_finite(x) for x in self.ag["objective"]]},
                "joints": {name: self.joints.get(name) for name in constructions.JOINT_NAMES},
                "windows": self.windows, "error": None}


def pair_joints(model, text: str, request: JointRequest | None = None, *,
                name: str | None = None, **options) -> PairJoints:
    """The ``top_k`` pairs of every joint for ``text``, which must hold exactly two gap tokens
    (``gap`` tokens at each ``marker``). InputError otherwise; a text longer than the model
    is read in the context window centred on the pair (``window=False``: the length error)."""
    request = JointRequest.from_options(request, **options)
    check_mode(request, text=True)
    enc = model.encode(text, gap=request.gap, marker=request.marker)
    if len(enc.positions) != 2:
        raise InputError(f"the joint needs exactly two gap tokens (e.g. two single-token gaps "
                         f"'{request.marker} {request.marker}'), this input has "
                         f"{len(enc.positions)}")
    a, b = enc.positions
    allowed = letters.undivided_mask(model, enc, request.allow_special)
    t = tables.pair_tables(model, enc.input_ids, a, b, joint_size=request.joint_size,
                           allow_special=request.allow_special, window=request.window,
                           batch_size=request.batch_size,
                           restrict=None if allowed is None else allowed.expand(2, -1))
    windows = [] if t.window is None else \
        [{"start": t.window[0], "end": t.window[1], "gaps": list(range(len(enc.gaps)))}]
    joints, info = constructions.build_joints(t, iterations=request.ag_iterations)
    tops = {}
    for joint_name, lj in joints.items():
        flat = lj.reshape(-1)
        best = flat.topk(min(request.top_k, flat.numel()))
        nb = lj.shape[1]
        rows = []
        for rank, (lp, idx) in enumerate(zip(best.values.tolist(), best.indices.tolist()), 1):
            wa, wb = int(t.cand_a[idx // nb]), int(t.cand_b[idx % nb])
            filled, fills, _ = results.shown(model, model.render(enc, enc.split([wa, wb])))
            rows.append({"rank": rank, "text": filled, "fills": fills,
                         "tokens": [wa, wb],
                         "token_strings": [model.id_to_token(wa), model.id_to_token(wb)],
                         "prob": math.exp(lp), "logp": _finite(lp)})
        tops[joint_name] = rows
    ag = {"iterations": info.iterations, "change": info.change,
          "objective": [info.objective[0], info.objective[-1]]}
    return PairJoints(text, name, request.gap, (a, b), (len(t.cand_a), len(t.cand_b)),
                      request.joint_size, ag, tops, windows, list(enc.notes))


def joint_corpus(model_name: str, data: str | None) -> str:
    """``data`` as given, else the named corpus of the family the model was trained on (its
    ``infill train`` record: every builtin model, any ``train --out`` folder)."""
    if data:
        return data
    family = training_record(model_name).get("family")
    if family in corpora.CORPORA:
        return family
    raise InputError("give 'data' FILE (one sentence per line) or a text with two ___ gaps",
                     field="data")


@dataclass
class JointMetrics:
    """U-PPL, P-PPL, A-KL, G-KL of every joint over the examples (``result``, a
    :class:`~infill.joint.metrics.JointEval`), the ``title`` of its table, the examples drawn
    (``examples``) from ``texts`` texts, and the examples read in a context ``window``."""

    result: object
    title: str
    examples: int
    texts: int
    windows: list[dict]

    def to_json(self) -> dict:
        """The line of ``infill joint --json --data``."""
        data = self.result.to_json()
        data.pop("records")
        return {"title": self.title, **data, "windows": self.windows}

    def write(self, out_dir: str | Path) -> dict[str, Path]:
        """joint.json, joint.md and distance.png in ``out_dir``."""
        return metrics.write_outputs(self.result, out_dir, self.title)


def joint_metrics(model, request: JointRequest, *, name: str, corpus: str,
                  data_root: str | None = None, shard: Shard | None = None,
                  begin: Callable[[int, int], ContextManager] | None = None
                  ) -> JointMetrics | None:
    """The joints' metrics over ``request.examples`` seeded (sentence, pair) examples of
    ``corpus`` (:func:`joint_corpus`); examples are sharded over the torchrun ranks (rank 0
    gets the result, the others None). ``begin(examples, texts)`` is called once the examples
    are drawn, before their evaluation; it returns a progress bar (``update`` once per example
    done here) as a context manager."""
    check_mode(request, text=False)
    split = request.split or ("test" if corpus in corpora.CORPORA else "all")
    texts = metrics.held_out(name, model, corpus, split, data_root)
    wanted = request.examples if request.examples is not None else \
        max(1, len(texts) * request.pairs_per_text)                        # None: all
    examples = metrics.make_pairs(model, texts, wanted, scheme=request.pair_scheme,
                                  seed=request.seed, min_tokens=request.min_tokens,
                                  per_text=request.pairs_per_text, window=request.window)
    with (begin(len(examples), len(texts)) if begin is not None else nullcontext()) as bar:
        result = metrics.evaluate_joints(model, examples, joint_size=request.joint_size,
                                         iterations=request.ag_iterations,
                                         batch_size=request.batch_size,
                                         allow_special=request.allow_special,
                                         progress=None if bar is None else bar.update,
                                         converged_tol=request.converged_tol, shard=shard,
                                         window=request.window)
    if result is None:
        return None
    windows = [{"line": rec["line"], "a": rec["a"], "b": rec["b"], "start": rec["window"][0],
                "end": rec["window"][1]} for rec in result.records if rec["window"] is not None]
    result.settings.update({"model": name, "data": corpus, "split": split,
                            "pair_scheme": request.pair_scheme, "seed": request.seed,
                            "min_tokens": request.min_tokens,
                            "pairs_per_text": request.pairs_per_text,
                            "converged_tol": request.converged_tol})
    title = f"{name}, {request.pair_scheme} pairs ({corpus}, {split})"
    return JointMetrics(result, title, len(examples), len(texts), windows)
