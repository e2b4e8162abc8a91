"""How good are the pairwise joints? U-PPL, P-PPL, A-KL, G-KL over a dataset of pairs (METHODS §2).

Per example (a sentence x, positions a, b with gold tokens (w_a, w_b), a joint J on the grid A x B,
the MLM's unary conditionals q_{a|b}, q_{b|a} renormalized over the grid):

* pair NLL   = -log J(w_a, w_b)
* unary NLL  = -[log J_{a|b}(w_a|w_b) + log J_{b|a}(w_b|w_a)]  (J's own conditionals; the MLM row
  uses the MLM's unary conditionals q_{a|b}, q_{b|a}, as METHODS §2 says)
* A-KL       = ½ [mean_{w'∈B} KL(q_{a|b}(.|w') || J_{a|b}(.|w'))
                   + mean_{w'∈A} KL(q_{b|a}(.|w') || J_{b|a}(.|w'))]
* G-KL       = the same two KLs at the gold conditioning tokens only, averaged.

Over N examples: P-PPL = exp((1/2N) Σ pair NLL), U-PPL = exp((1/2N) Σ unary NLL), A-KL and G-KL
are means. The grid is the top-K of each marginal plus the gold token (see
:func:`infill.joint.pair_tables`), so every number is computed on that restricted support.
"""
from __future__ import annotations

import json
import math
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from infill.data.corpora import CORPORA, load_texts
from infill.data.files import ensure_dir
from infill.data.files import read_lines as _read_lines
from infill.data.splits import heldout, training_record
from infill.data.units import infer_unit
from infill.errors import InputError
from infill.joint.constructions import JOINT_NAMES, AGInfo, kl_divergence, build_joints, conditionals
from infill.joint.conditional_tables import PairTables
from infill.joint.tables import pair_tables_batch
from infill.models.base import MaskedLM

METRICS = ("U-PPL", "P-PPL", "A-KL", "G-KL")
ROWS = JOINT_NAMES + ("AG*",)   # AG* (optional): AG run to convergence
DISTANCE_BUCKETS = ((1, 1), (2, 2), (3, 3), (4, 5), (6, 8), (9, 12), (13, 20), (21, 10**9))


# ------------------------------------------------------------------------------------------------
# per-example and aggregate metrics
# ------------------------------------------------------------------------------------------------
def example_metrics(t: PairTables, log_joint: torch.Tensor, mlm_row: bool = False) -> dict:
    """pair_nll, unary_nll, akl, gkl of one joint on one example (``t.gold`` must be set).

    ``mlm_row``: score U-PPL with the MLM's unary conditionals instead of the joint's own."""
    if t.gold is None:
        raise InputError("example metrics need the gold pair")
    gi, gj = t.gold
    ja_b, jb_a = conditionals(log_joint)
    if mlm_row:
        unary = -(float(t.log_qa_b[gi, gj]) + float(t.log_qb_a[gi, gj]))
    else:
        unary = -(float(ja_b[gi, gj]) + float(jb_a[gi, gj]))
    kl_a = kl_divergence(t.log_qa_b, ja_b, 0)                 # [|B|]: KL(q_{a|b}(.|B_j) || J_{a|b}(.|B_j))
    kl_b = kl_divergence(t.log_qb_a, jb_a, 1)                 # [|A|]
    return {
        "pair_nll": -float(log_joint[gi, gj]),
        "unary_nll": unary,
        "akl": 0.5 * (float(kl_a.mean()) + float(kl_b.mean())),
        "gkl": 0.5 * (float(kl_a[gj]) + float(kl_b[gi])),
    }


def aggregate(records: list[dict]) -> dict[str, float]:
    """U-PPL, P-PPL, A-KL, G-KL from per-example metric dicts (one joint)."""
    if not records:
        raise InputError("no examples to aggregate")
    n = len(records)
    return {
        "U-PPL": math.exp(sum(r["unary_nll"] for r in records) / (2 * n)),
        "P-PPL": math.exp(sum(r["pair_nll"] for r in records) / (2 * n)),
        "A-KL": sum(r["akl"] for r in records) / n,
        "G-KL": sum(r["gkl"] for r in records) / n,
    }


# ------------------------------------------------------------------------------------------------
# datasets of pairs
# ------------------------------------------------------------------------------------------------
@dataclass
class PairExample:
    """One evaluation item: the tokenized sentence and two positions holding its gold tokens."""

    input_ids: list[int]
    a: int
    b: int
    line: int

    @property
    def gold(self) -> tuple[int, int]:
        return self.input_ids[self.a], self.input_ids[self.b]


def read_lines(path: str | Path) -> list[str]:
    """Non-empty stripped lines of a text file (InputError if missing or empty)."""
    lines = [ln.strip() for ln in _read_lines(path, "data file")]
    lines = [ln for ln in lines if ln]
    if not lines:
        raise InputError(f"data file {path} has no text")
    return lines


def make_pairs(model: MaskedLM, texts: list, n: int, scheme: str = "random", seed: int = 0,
               min_tokens: int = 4, per_text: int = 1, window: bool = True) -> list[PairExample]:
    """Up to ``n`` examples, up to ``per_text`` distinct pairs per text (default one), texts
    visited in a seeded random order.

    Each item of ``texts`` is a line (tokenized with ``model.tokenize``) or a list of input ids
    (specials included, used as is, e.g. a held-out training example). An item qualifies when it
    has at least ``min_tokens`` non-special tokens; in one longer than ``model.max_length`` the
    two positions are drawn within one context window (``window=False``: such an item does not
    qualify). ``random``: two
    distinct non-special positions drawn uniformly; ``contiguous``: a uniformly drawn adjacent
    pair (a, a+1) of non-special positions. Positions are returned with a < b; ``line`` is the
    index of the item in ``texts``.
    """
    if scheme not in ("random", "contiguous"):
        raise InputError(f"unknown pair scheme {scheme!r} (expected random or contiguous)")
    if n < 1 or per_text < 1:
        raise InputError(f"need at least one example and one pair per text, got n={n}, "
                         f"per_text={per_text}")
    rng = random.Random(seed)
    order = list(range(len(texts)))
    rng.shuffle(order)
    bad = set(model.special_ids) | {model.mask_id, model.pad_id}
    out: list[PairExample] = []
    for li in order:
        if len(out) >= n:
            break
        ids = _item_ids(model, texts[li], window)
        if ids is None:
            continue
        ok = [p for p, t in enumerate(ids) if t not in bad and t < model.vocab_size]
        if len(ok) < max(2, min_tokens):
            continue
        if scheme == "random":
            in_reach = _pairs_in_reach(ok, len(ids), model.max_length)
            chosen = _random_pairs(rng, ok, per_text, in_reach)
        else:
            chosen = _adjacent_pairs(rng, ok, per_text)
        for a, b in chosen[:n - len(out)]:
            out.append(PairExample(ids, a, b, li))
    if not out:
        raise InputError("no text of the data qualifies for pairs (too short or too long for the "
                         "model)")
    return out


def _item_ids(model: MaskedLM, item, window: bool) -> list[int] | None:
    """The input ids of one item of :func:`make_pairs` (a line is tokenized), or None when it
    cannot be tokenized or, with ``window=False``, is longer than the model's maximum length."""
    if isinstance(item, str):
        try:
            ids = list(model.tokenize(item))
        except InputError:
            return None
    else:
        ids = [int(t) for t in item]
    if not window and len(ids) > model.max_length:
        return None
    return ids


def _pairs_in_reach(ok: list[int], length: int, max_length: int) -> list[tuple[int, int]] | None:
    """The pairs of positions ``ok`` that fit one context window of a text of ``length`` ids
    longer than the model's maximum (infill.joint.tables reads it in a window centred on the
    pair); None when the text fits, so that every pair does."""
    if length <= max_length:
        return None
    reach = max_length - (length - len(ok))
    return [(x, y) for i, x in enumerate(ok) for y in ok[i + 1:] if y - x < reach]


def _random_pairs(rng: random.Random, ok: list[int], per_text: int,
                  in_reach: list[tuple[int, int]] | None) -> list[tuple[int, int]]:
    """Up to ``per_text`` distinct pairs a < b drawn uniformly from ``ok`` (from ``in_reach``
    when given)."""
    total = len(ok) * (len(ok) - 1) // 2 if in_reach is None else len(in_reach)
    chosen: list[tuple[int, int]] = []
    while len(chosen) < min(per_text, total):
        pair = tuple(sorted(rng.sample(ok, 2))) if in_reach is None else rng.choice(in_reach)
        if pair not in chosen:
            chosen.append(pair)
    return chosen


def _adjacent_pairs(rng: random.Random, ok: list[int], per_text: int) -> list[tuple[int, int]]:
    """Up to ``per_text`` distinct adjacent pairs (a, a+1) of positions in ``ok``, drawn
    uniformly."""
    okset = set(ok)
    adj = [p for p in ok if p + 1 in okset]
    return [(p, p + 1) for p in rng.sample(adj, min(per_text, len(adj)))]


def held_out(model_name: str, model: MaskedLM, corpus: str, split: str = "test",
             data: str | Path | None = None) -> list:
    """Texts or id sequences to draw pairs from.

    ``corpus`` is a file of lines or a corpus name (english, greek, protein); with ``split``
    other than ``all``, the training family's own examples of that split of a model trained by
    ``infill train`` (token ids, :func:`infill.data.splits.heldout`), so "test" is text the model
    never saw. Otherwise the non-empty lines of the file.
    """
    if split != "all":
        if not training_record(model_name).get("split"):
            raise InputError(f"model {model_name!r} has no recorded training split; use "
                             f"'split' all to evaluate on every line of {corpus!r}", field="split")
        h = heldout(model_name, corpus=corpus, max_length=model.max_length, data=data)
        return [h.examples[i] for i in h.part(split)]
    texts = load_texts(corpus, None if corpus in CORPORA else "lines", data, what="data file")
    if not texts:
        raise InputError(f"data file {corpus} has no text")
    return texts


# ------------------------------------------------------------------------------------------------
# evaluation
# ------------------------------------------------------------------------------------------------
@dataclass
class JointEval:
    """Result of :func:`evaluate_joints`: the table, per-example records and AG convergence."""

    table: dict[str, dict[str, float]]
    records: list[dict] = field(default_factory=list)
    ag_iterations: float = 0.0
    ag_final_change: float = 0.0
    ag_monotone: bool = True
    settings: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


def evaluate_joints(model: MaskedLM, examples: list[PairExample], joint_size: int = 50,
                    iterations: int = 50, chunk: int = 8, batch_size: int = 128,
                    allow_special: bool = False, progress=None, tol: float | None = None,
                    converged_tol: float | None = None, shard=None,
                    window: bool = True) -> JointEval:
    """Build every joint for every example and score it.

    ``chunk`` examples share batched forward passes; ``progress(k)`` (e.g. a tqdm's ``update``)
    is called with the number of examples done after each chunk; ``tol`` stops AG early;
    ``converged_tol`` adds the row AG* (AG run to that tolerance, see :func:`build_joints`).
    ``shard`` (:class:`infill.parallel.Shard`, under torchrun): each rank takes every N-th chunk
    and rank 0 gets the whole result (the others get None). An example longer than the model's
    maximum length is read in the context window centred on its pair (its record's ``window``:
    [start, end) model-token positions, else None); ``window=False`` makes it an error."""
    done: list[tuple[int, dict, AGInfo]] = []
    for c, s in enumerate(range(0, len(examples), chunk)):
        if shard is not None and not shard.owns(c):
            continue
        part = examples[s:s + chunk]
        tables = pair_tables_batch(model, [(e.input_ids, e.a, e.b) for e in part], joint_size,
                                   gold=[e.gold for e in part], allow_special=allow_special,
                                   batch_size=batch_size, window=window)
        for k, (e, t) in enumerate(zip(part, tables)):
            joints, info = build_joints(t, iterations=iterations, tol=tol,
                                        converged_tol=converged_tol)
            rec = {"line": e.line, "a": e.a, "b": e.b, "distance": abs(e.b - e.a),
                   "grid": [len(t.cand_a), len(t.cand_b)],
                   "window": None if t.window is None else list(t.window),
                   "metrics": {name: example_metrics(t, lj, mlm_row=(name == "MLM"))
                               for name, lj in joints.items()}}
            done.append((s + k, rec, info))
        if progress is not None:
            progress(len(part))
    if shard is not None and shard.active:
        parts = shard.gather(done)
        if not shard.main:
            return None
        done = sorted((x for part in parts for x in part), key=lambda x: x[0])
    records = [rec for _, rec, _ in done]
    infos = [info for _, _, info in done]
    per_joint: dict[str, list[dict]] = {}
    for rec in records:
        for name, m in rec["metrics"].items():
            per_joint.setdefault(name, []).append(m)
    table = {name: aggregate(per_joint[name]) for name in ROWS if name in per_joint}
    mono = all(all(y <= x + 1e-9 for x, y in zip(i.objective, i.objective[1:])) for i in infos)
    return JointEval(table, records,
                     ag_iterations=sum(i.iterations for i in infos) / len(infos),
                     ag_final_change=max(i.change for i in infos), ag_monotone=mono,
                     settings={"joint_size": joint_size, "iterations": iterations,
                               "n": len(examples)})


def distance_breakdown(records: list[dict],
                       buckets=DISTANCE_BUCKETS) -> dict[str, list[dict]]:
    """Mean pairwise NLL (nats per pair) by token distance |a - b|, per joint."""
    out: dict[str, list[dict]] = {}
    names = [n for n in ROWS if records and n in records[0]["metrics"]]
    for name in names:
        rows = []
        for lo, hi in buckets:
            vals = [r["metrics"][name]["pair_nll"] for r in records if lo <= r["distance"] <= hi]
            if vals:
                label = str(lo) if lo == hi else (f"{lo}+" if hi >= 10**9 else f"{lo}-{hi}")
                rows.append({"distance": label, "lo": lo, "count": len(vals),
                             "pair_nll": sum(vals) / len(vals)})
        out[name] = rows
    return out


def plot_distance(breakdown: dict[str, list[dict]], path: str | Path, title: str = "",
                  unit: str = "tokens") -> Path | None:
    """PNG like Fig. 1 of the paper: pairwise NLL against the distance |a - b| (in ``unit``),
    one line per joint (distinct colour, marker and dash; each series nudged sideways and
    alternately hollow, so that coinciding joints all stay visible); None when fewer than two
    distance buckets have data."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    first = next((rows for rows in breakdown.values() if rows), [])
    if len(first) < 2:
        return None
    labels = [r["distance"] for r in first]
    markers, dashes = "osD^vP*X", ["-", "--", "-.", ":"]
    colours = matplotlib.colormaps["tab10"]
    k = len(breakdown)
    step = min(0.07, 0.5 / max(k, 1))                    # sideways nudge between series
    fig, ax = plt.subplots(figsize=(7.2, 4.2))
    for i, (name, rows) in enumerate(breakdown.items()):
        at = {r["distance"]: r["pair_nll"] for r in rows}
        ys = [at.get(lab, float("nan")) for lab in labels]        # a missing bucket is a gap
        xs = [x + (i - (k - 1) / 2) * step for x in range(len(labels))]
        hollow = i % 2 == 1
        ax.plot(xs, ys, marker=markers[i % len(markers)], color=colours(i % 10),
                linestyle=dashes[i % len(dashes)], linewidth=1.3, markersize=6 if hollow else 5,
                markerfacecolor="none" if hollow else colours(i % 10), markeredgewidth=1.3,
                zorder=3 + (k + i if hollow else i), label=name)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels([f"{lab}\n(n={r['count']})" for lab, r in zip(labels, first)], fontsize=8)
    ax.set_xlabel(f"distance |a - b| ({unit}); pairs per bucket below")
    ax.set_ylabel("pairwise NLL (nats, lower is better)")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


# ------------------------------------------------------------------------------------------------
# formatting
# ------------------------------------------------------------------------------------------------
def format_table(table: dict[str, dict[str, float]], markdown: bool = True) -> str:
    """The paper's layout: rows MLM, MRF-L, MRF, HCB, AG (then AG* when present); columns
    U-PPL, P-PPL, A-KL, G-KL. A joint missing from ``table`` (MRF-L without logits) is n/a."""
    rows = JOINT_NAMES + tuple(n for n in ROWS if n not in JOINT_NAMES and n in table)

    def cell(name, m):
        if name not in table:
            return "n/a"
        return f"{table[name][m]:.3f}" if m.endswith("PPL") else f"{table[name][m]:.4f}"

    if markdown:
        lines = ["| joint | " + " | ".join(METRICS) + " |", "|---|" + "---:|" * len(METRICS)]
        for name in rows:
            lines.append(f"| {name} | " + " | ".join(cell(name, m) for m in METRICS) + " |")
        return "\n".join(lines)
    lines = [f"{'joint':<7}" + "".join(f"{m:>10}" for m in METRICS)]
    for name in rows:
        lines.append(f"{name:<7}" + "".join(f"{cell(name, m):>10}" for m in METRICS))
    return "\n".join(lines)


def write_outputs(result: JointEval, out_dir: str | Path, title: str = "") -> dict[str, Path]:
    """Write ``joint.json`` (table, settings, AG convergence, distance breakdown, per-example
    records), ``joint.md`` (table + breakdown) and ``distance.png`` into ``out_dir``."""
    out = ensure_dir(out_dir, "'out' folder", field="out")
    breakdown = distance_breakdown(result.records)
    data = result.to_json()
    data["distance_breakdown"] = breakdown
    data["title"] = title
    (out / "joint.json").write_text(json.dumps(data, indent=1))
    md = [f"## {title}" if title else "## Pairwise joints", "",
          f"{result.settings.get('n')} examples, joint size {result.settings.get('joint_size')}, "
          f"AG {result.settings.get('iterations')} iterations (mean run "
          f"{result.ag_iterations:.1f}, max final TV change {result.ag_final_change:.2e}, "
          f"objective monotone: {result.ag_monotone})", "", format_table(result.table), "",
          "Pairwise NLL (nats) by token distance:", "",
          "| distance | n | " + " | ".join(breakdown) + " |",
          "|---|---:|" + "---:|" * len(breakdown)]
    first = next(iter(breakdown.values()), [])
    for k, row in enumerate(first):
        md.append(f"| {row['distance']} | {row['count']} | "
                  + " | ".join(f"{breakdown[n][k]['pair_nll']:.3f}" for n in breakdown) + " |")
    (out / "joint.md").write_text("\n".join(md) + "\n")
    png = plot_distance(breakdown, out / "distance.png", f"{title}: {result.settings.get('n')} "
                        "pairs" if title else "",
                        unit=result.settings.get("unit") or infer_unit(result.settings))
    paths = {"json": out / "joint.json", "md": out / "joint.md"}
    if png is not None:
        paths["png"] = png
    return paths
