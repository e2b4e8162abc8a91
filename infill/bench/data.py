"""Benchmark data: read a corpus, pick one gap per example, truncate the context around it.

Corpora (``load_texts``):
  - ``english`` / ``greek`` / ``protein``: the project's corpora in ``../shared/data``;
  - a path: ``.fa``/``.fasta``/``.faa`` -> FASTA (one sequence per record), ``.jsonl`` -> one
    ``{"text": ...}`` object per line, anything else -> one example per non-empty line;
    ``fmt`` overrides the guess (``lines``, ``fasta``, ``jsonl``, ``greek`` = lines passed through
    :func:`infill.greek.normalize`);
  - ``hf:NAME[:split][:column]``: a Hugging Face dataset through the optional ``datasets`` package.

Gap selection (``select_examples``), as in the HCB beam-search paper: for every example and every
gap length n, a contiguous span of n model tokens chosen uniformly among the spans made only of
ordinary (non-special) tokens, with a random generator seeded by (seed, example index, n) -- so the
span of an example does not depend on how many examples or which other gap lengths are run, and
every method sees exactly the same inputs. Examples with fewer than n ordinary tokens are skipped
and counted.

Context truncation: an example longer than the model's ``max_length`` keeps its leading and
trailing special tokens (cls/bos, sep/eos) and a window of ordinary tokens of the largest length
that fits, centred on the gap and shifted inwards where it would cross the text's ends.
"""
from __future__ import annotations

import json
import random
import zlib
from dataclasses import dataclass
from pathlib import Path

from infill.errors import ConfigError, InputError
from infill.models.base import MaskedLM

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
CORPORA = {
    "english": ("english/tinyshakespeare.txt", "lines"),
    "greek": ("greek/perseus_grc.txt", "greek"),
    "protein": ("protein/hypf.fa", "fasta"),
}
FORMATS = ("lines", "fasta", "jsonl", "greek")


@dataclass(frozen=True)
class Example:
    """One benchmark input: ``ids`` (specials included) with the gold span at ``start:start+n``."""

    example_id: int   # index of the text in the loaded corpus
    n: int            # gap length in model tokens
    ids: tuple[int, ...]
    start: int

    @property
    def gold(self) -> tuple[int, ...]:
        return self.ids[self.start:self.start + self.n]

    def masked(self, mask_id: int) -> list[int]:
        ids = list(self.ids)
        ids[self.start:self.start + self.n] = [mask_id] * self.n
        return ids

    def filled(self, tokens) -> list[int]:
        ids = list(self.ids)
        ids[self.start:self.start + self.n] = list(tokens)
        return ids


# ---- reading corpora --------------------------------------------------------------------------
def resolve_corpus(spec: str) -> tuple[str, str | None]:
    """A corpus alias -> (path, format); other specs pass through (format guessed later)."""
    if spec in CORPORA:
        rel, fmt = CORPORA[spec]
        path = SHARED_DATA / rel
        if not path.exists():
            raise InputError(f"corpus {spec!r} expected at {path}, which does not exist")
        return str(path), fmt
    return spec, None


def guess_format(path: str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in (".fa", ".fasta", ".faa"):
        return "fasta"
    if suffix == ".jsonl":
        return "jsonl"
    return "lines"


def read_fasta(text: str) -> list[str]:
    """Sequences of a FASTA file (records joined across lines; headers dropped)."""
    seqs, cur = [], []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(">"):
            if cur:
                seqs.append("".join(cur))
            cur = []
        elif line:
            cur.append(line)
    if cur:
        seqs.append("".join(cur))
    return seqs


def read_jsonl(text: str, path: str, column: str = "text") -> list[str]:
    out = []
    for k, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{k}: not valid JSON ({e.msg})") from None
        if not isinstance(obj, dict) or not isinstance(obj.get(column), str):
            raise InputError(f"{path}:{k}: expected an object with a string field {column!r}")
        out.append(obj[column])
    return out


def load_hf_dataset(spec: str) -> list[str]:
    """``hf:NAME[:split][:column]`` through the optional ``datasets`` package."""
    parts = spec[3:].split(":")
    name = parts[0]
    split = parts[1] if len(parts) > 1 and parts[1] else "test"
    column = parts[2] if len(parts) > 2 and parts[2] else "text"
    if not name:
        raise InputError("hf: dataset spec needs a name: hf:NAME[:split][:column]")
    try:
        import datasets  # noqa: F401
    except ImportError:
        raise ConfigError("hf: datasets need the optional 'datasets' package "
                          "(pip install 'infill[hub]')") from None
    try:
        ds = datasets.load_dataset(name, split=split)
    except Exception as e:  # offline, unknown name, ...: one clear line
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise InputError(f"could not load Hugging Face dataset {name!r} (split {split!r}); "
                         f"is the hub reachable? ({msg})") from None
    if column not in ds.column_names:
        raise InputError(f"dataset {name!r} has no column {column!r} (has {ds.column_names})")
    return [t for t in ds[column] if isinstance(t, str)]


def load_texts(spec: str, fmt: str | None = None) -> list[str]:
    """All examples of a corpus spec (see module docstring), stripped, empty ones dropped."""
    if spec.startswith("hf:"):
        texts = load_hf_dataset(spec)
    else:
        path, alias_fmt = resolve_corpus(spec)
        fmt = fmt or alias_fmt or guess_format(path)
        if fmt not in FORMATS:
            raise ConfigError(f"unknown dataset format {fmt!r}; choose from {', '.join(FORMATS)}")
        p = Path(path)
        if not p.is_file():
            raise InputError(f"dataset {spec!r} not found (no file {path})")
        raw = p.read_text(encoding="utf-8")
        if fmt == "fasta":
            texts = read_fasta(raw)
        elif fmt == "jsonl":
            texts = read_jsonl(raw, path)
        else:
            texts = raw.splitlines()
        if fmt == "greek":
            from infill.greek import normalize
            texts = [normalize(t) for t in texts]
    texts = [t.strip() for t in texts]
    return [t for t in texts if t]


# ---- which examples -----------------------------------------------------------------------------
def pick_indices(candidates: list[int], limit: int | None, seed: int) -> list[int]:
    """A seeded random subset of ``limit`` indices (all when limit is None), in corpus order."""
    if limit is None or limit >= len(candidates):
        return list(candidates)
    rng = random.Random(_derive(seed, "examples"))
    return sorted(rng.sample(list(candidates), limit))


def tokenize_texts(model: MaskedLM, texts: list[str], indices: list[int]
                   ) -> dict[int, list[int] | None]:
    """{index: model ids with specials}; None where the model rejects the text."""
    out: dict[int, list[int] | None] = {}
    for i in indices:
        try:
            out[i] = list(model.tokenize(texts[i]))
        except InputError:
            out[i] = None
    return out


def training_info(model_path: str) -> dict:
    """``train_info.json`` of a model trained with ``infill train`` (empty dict if absent), with
    its ``split.json`` under the key ``"split"`` when the model directory has one."""
    name = model_path
    if name.startswith("builtin:"):
        from infill.models.builtin import builtin_path
        name = str(builtin_path(name))
    p = Path(name)
    d = p if p.is_dir() else p.parent
    info = json.loads((d / "train_info.json").read_text()) if (d / "train_info.json").exists() \
        else {}
    if (d / "split.json").exists():
        info["split"] = json.loads((d / "split.json").read_text())
    info["dir"] = str(d)
    return info


def family_split(family: str, corpus: str, split: str, model: MaskedLM, info: dict
                 ) -> tuple[list[list[int]], list[int]]:
    """The training family's own examples of ``corpus`` and the indices of one split.

    Uses the family's ``load_examples`` and :func:`infill.training.common.split_indices` with the
    split seed and fractions the model was trained with (``train_info.json``; the training
    defaults otherwise), so "test" is exactly the data the model never saw.
    """
    import importlib
    import inspect
    import shutil
    import tempfile

    from infill.training.common import split_indices

    if family not in CORPORA:
        raise ConfigError(f"unknown family {family!r}; choose from {', '.join(CORPORA)}")
    cfg = info.get("config", {})
    options = dict(info.get("model") or {})
    mod = importlib.import_module(f"infill.training.{family}")
    fam_cls = next(v for k, v in vars(mod).items()
                   if isinstance(v, type) and k.lower() == f"{family}family")
    params = inspect.signature(fam_cls.__init__).parameters
    kwargs = {k: v for k, v in options.items() if k in params}
    if "max_length" in params and "max_length" not in kwargs:
        kwargs["max_length"] = model.max_length
    fam = fam_cls(**kwargs)
    path, _ = resolve_corpus(corpus)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(info.get("dir", "."))
        vocab = next((v for v in (d / "tokenizer" / "vocab.txt", d / "vocab.txt") if v.exists()),
                     None)
        if vocab is not None:
            # the english family reuses out/tokenizer/vocab.txt instead of training a new one
            (Path(tmp) / "tokenizer").mkdir()
            shutil.copy(vocab, Path(tmp) / "tokenizer" / "vocab.txt")
        examples = fam.load_examples(path, Path(tmp))
    recorded = info.get("split")
    if recorded and recorded.get("n_examples") == len(examples):
        parts = {k: recorded[k] for k in ("train", "validation", "test") if k in recorded}
    else:
        parts = split_indices(len(examples), cfg.get("split_seed", 0),
                              cfg.get("val_fraction", 0.05), cfg.get("test_fraction", 0.05))
    if split not in parts:
        raise ConfigError(f"unknown split {split!r}; choose from all, {', '.join(parts)}")
    return examples, list(parts[split])


# ---- gap selection ----------------------------------------------------------------------------
def _derive(*parts) -> int:
    return zlib.crc32("|".join(map(str, parts)).encode())


def ordinary_positions(model: MaskedLM, ids: list[int]) -> list[bool]:
    """True where a gap may go: not a special token, not mask/pad."""
    bad = set(model.special_ids) | {model.mask_id, model.pad_id}
    return [i not in bad for i in ids]


def body_bounds(model: MaskedLM, ids: list[int]) -> tuple[int, int]:
    """(lo, hi): ids[:lo] and ids[hi:] are the leading / trailing special tokens."""
    ok = ordinary_positions(model, ids)
    lo = 0
    while lo < len(ids) and not ok[lo]:
        lo += 1
    hi = len(ids)
    while hi > lo and not ok[hi - 1]:
        hi -= 1
    return lo, hi


def choose_span(ok: list[bool], n: int, rng: random.Random) -> int | None:
    """Start of a uniformly chosen run of n positions that are all ``ok``; None if there is none."""
    starts, run = [], 0
    for i, good in enumerate(ok):
        run = run + 1 if good else 0
        if run >= n:
            starts.append(i - n + 1)
    return rng.choice(starts) if starts else None


def truncate(ids: list[int], start: int, n: int, lo: int, hi: int,
             max_length: int) -> tuple[list[int], int]:
    """Keep ids[:lo] + a window of ids[lo:hi] centred on the gap + ids[hi:] within max_length."""
    if len(ids) <= max_length:
        return ids, start
    width = max_length - lo - (len(ids) - hi)
    if width < n:
        raise InputError(f"max_length {max_length} leaves no room for a gap of {n}")
    left = start + n // 2 - width // 2
    left = max(lo, min(left, hi - width))
    window = ids[:lo] + ids[left:left + width] + ids[hi:]
    return window, start - left + lo


def select_examples(model: MaskedLM, token_lists: dict[int, list[int] | None], gaps: list[int],
                    seed: int) -> tuple[list[Example], dict[int, int]]:
    """One gap of each length in ``gaps`` per example; returns (examples, skipped count per n).

    ``token_lists`` maps a corpus index to its model ids (specials included), or None for a text
    the model rejected (skipped for every n, and counted). Output order: gap length, then index.
    """
    examples: dict[int, list[Example]] = {n: [] for n in gaps}
    skipped = {n: 0 for n in gaps}
    for idx in sorted(token_lists):
        ids = token_lists[idx]
        if ids is None:
            for n in gaps:
                skipped[n] += 1
            continue
        ok = ordinary_positions(model, ids)
        lo, hi = body_bounds(model, ids)
        for n in gaps:
            rng = random.Random(_derive(seed, idx, n))
            start = choose_span(ok, n, rng)
            if start is None:
                skipped[n] += 1
                continue
            window, wstart = truncate(ids, start, n, lo, hi, model.max_length)
            examples[n].append(Example(idx, n, tuple(window), wstart))
    return [e for n in gaps for e in examples[n]], skipped
