"""A corpus -> the token-id examples a model family trains and is evaluated on.

One builder per family; ``infill train`` uses them to build its data and the benchmarks use the
same builders (with the trained model's recorded options,
:func:`infill.data.splits.build_examples`) to rebuild held-out splits, so "test" is always
exactly what the model never saw.

- **english**: non-empty lines, WordPiece-tokenized (a cased vocabulary trained on the corpus with
  ``tokenizers`` and saved as ``tokenizer/vocab.txt``, or the one already there). ``unit="lines"``
  (the default of new runs): one example per distinct line (:func:`distinct_lines`: speaker
  headings dropped, duplicates up to case and punctuation dropped, so a split by example is a
  split by line with no line on both sides), cut to ``max_length - 2`` tokens; ``unit="blocks"``
  (models trained before): lines packed greedily into blocks of at most ``max_length - 2``
  tokens (a line longer than a block is cut). Each example is ``[CLS] ... [SEP]``.
- **greek**: each line normalized (:func:`infill.data.greek.normalize` without the restoration
  symbols), lines joined with spaces, cut into consecutive windows of at most ``max_length - 1``
  characters at the last space that fits (:func:`windows`), each ``<`` + window.
- **protein**: FASTA records, upper-cased, a trailing ``*`` dropped, letters outside the residue
  codes replaced by ``X``, cropped to the first ``max_length - 2`` residues, each
  ``<cls> sequence <eos>`` in ESM-1b's alphabet.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from infill.data.files import path_label, read_lines, read_text
from infill.errors import ConfigError, InputError
from infill.lazy import LazyModule

# On first use: the command line's help imports this module, and none of these.
greek = LazyModule("infill.data.greek")
fasta = LazyModule("infill.data.fasta")
residue_codes = LazyModule("infill.data.residues")
esm = LazyModule("esm")
tokenizers = LazyModule("tokenizers")
transformers = LazyModule("transformers")

__all__ = ["ExampleSet", "WORDPIECE_SPECIALS", "distinct_lines", "english_examples",
           "greek_examples", "load_wordpiece", "protein_examples", "train_wordpiece", "windows"]

WORDPIECE_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


@dataclass
class ExampleSet:
    """Examples (token ids, specials included) and how to read one back as text."""

    examples: list[list[int]]
    decode: Callable[[list[int]], str]
    stats: dict = field(default_factory=dict)
    tokenizer: object = None


# ---- greek ------------------------------------------------------------------------------------
def windows(text: str, size: int) -> list[str]:
    """Cut ``text`` into consecutive pieces of <= ``size`` chars, at spaces where possible."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text[i] == " ":
            i += 1
            continue
        j = min(i + size, n)
        if j < n and text[j] != " ":
            cut = text.rfind(" ", i, j)
            if cut > i:
                j = cut
        out.append(text[i:j].strip())
        i = j
    return [w for w in out if w]


def greek_examples(corpus: str | Path, max_length: int, alphabet=None) -> ExampleSet:
    """The character windows of ``corpus`` in ``alphabet`` (Greek; or Latin,
    :data:`infill.data.latin.LATIN`)."""
    a = alphabet or greek.GREEK
    text = " ".join(greek.normalize(line, symbols=False, alphabet=a)
                    for line in read_lines(corpus, "corpus"))
    pieces = windows(text, max_length - 1)
    if not pieces:
        raise InputError(f"no {a.name} text in corpus {path_label(corpus)}")
    return ExampleSet([[a.start_id] + a.encode(w) for w in pieces], a.decode)


# ---- english ----------------------------------------------------------------------------------
def train_wordpiece(lines: list[str], vocab_size: int, path: Path):
    """Train a cased WordPiece vocabulary on ``lines``, write ``path``/vocab.txt, return a
    ``BertTokenizerFast`` over it."""
    wp = tokenizers.BertWordPieceTokenizer(lowercase=False, strip_accents=False, clean_text=True)
    wp.train_from_iterator(lines, vocab_size=vocab_size, min_frequency=2,
                           special_tokens=WORDPIECE_SPECIALS, show_progress=False)
    path.mkdir(parents=True, exist_ok=True)
    # the trainer numbers tokens of equal rank in hash order: specials first, then the rest
    # sorted, so the same corpus always gives the same vocabulary file
    vocab = set(wp.get_vocab()) - set(WORDPIECE_SPECIALS)
    ordered = WORDPIECE_SPECIALS + sorted(vocab)
    (path / "vocab.txt").write_text("\n".join(ordered) + "\n", encoding="utf-8")
    return load_wordpiece(path)


def load_wordpiece(path: Path):
    return transformers.BertTokenizerFast(vocab=str(path / "vocab.txt"), do_lower_case=False,
                                          strip_accents=False, tokenize_chinese_chars=True)


_SPEAKER = re.compile(r"^[A-Z][\w'-]*( [A-Z][\w'-]*){0,3}:$|^[A-Z][A-Z' -]+[.:]?$")


def line_key(line: str) -> str:
    """What two lines must share to count as the same line: their words, lower-cased."""
    return " ".join(re.findall(r"[^\W\d_]+", line.lower()))


def distinct_lines(lines: list[str]) -> list[str]:
    """Stripped non-empty lines in corpus order, without speaker headings (``First Citizen:``,
    ``RICHARD``: up to four capitalized words and a colon, or a line in capitals) and without
    repeats: a line whose :func:`line_key` came before is dropped (the same verse in two
    editions, or a corpus concatenated with a subset of itself, is one example)."""
    out, seen = [], set()
    for line in lines:
        line = line.strip()
        if not line or _SPEAKER.match(line):
            continue
        key = line_key(line)
        if key in seen:
            continue
        seen.add(key)
        out.append(line)
    return out


def english_examples(corpus: str | Path, max_length: int, vocab_size: int,
                     tokenizer_dir: Path, unit: str = "lines") -> ExampleSet:
    """``tokenizer_dir``/vocab.txt is reused when it exists, else trained and written there;
    ``unit``: ``lines`` (one example per distinct line) or ``blocks`` (lines packed)."""
    if unit not in ("lines", "blocks"):
        raise ConfigError(f"english examples are 'lines' or 'blocks', not {unit!r}")
    lines = [line.strip() for line in read_lines(corpus, "corpus") if line.strip()]
    if unit == "lines":
        lines = distinct_lines(lines)
    if not lines:
        raise InputError(f"corpus {path_label(corpus)} has no text")
    tokenizer_dir = Path(tokenizer_dir)
    t = load_wordpiece(tokenizer_dir) if (tokenizer_dir / "vocab.txt").exists() else \
        train_wordpiece(lines, vocab_size, tokenizer_dir)
    block = max_length - 2
    if unit == "lines":
        examples = [ids[:block] for ids in t(lines, add_special_tokens=False)["input_ids"]]
        return ExampleSet([[t.cls_token_id] + ids + [t.sep_token_id] for ids in examples],
                          lambda ids: t.decode(ids, skip_special_tokens=True), tokenizer=t,
                          stats={"lines": len(lines)})
    examples, current = [], []
    for ids in t(lines, add_special_tokens=False)["input_ids"]:
        while len(ids) > block:               # a line longer than a block is cut
            if current:
                examples.append(current)
                current = []
            examples.append(ids[:block])
            ids = ids[block:]
        if len(current) + len(ids) > block:
            examples.append(current)
            current = []
        current = current + ids
    if current:
        examples.append(current)
    return ExampleSet([[t.cls_token_id] + ids + [t.sep_token_id] for ids in examples if ids],
                      lambda ids: t.decode(ids, skip_special_tokens=True), tokenizer=t)


# ---- protein ----------------------------------------------------------------------------------
def protein_examples(corpus: str | Path, max_length: int) -> ExampleSet:
    alphabet = esm.data.Alphabet.from_architecture("ESM-1b")
    tok = alphabet.tok_to_idx
    residues = set(residue_codes.STANDARD_AA + residue_codes.NONSTANDARD_AA)
    examples, cropped, replaced = [], 0, 0
    keep = max_length - 2
    for rec in fasta.parse_fasta(read_text(corpus, "FASTA file"), str(corpus)):
        seq = rec.sequence.upper().rstrip("*")
        if len(seq) > keep:
            seq, cropped = seq[:keep], cropped + 1
        ids = []
        for ch in seq:
            if ch not in residues:
                ch, replaced = "X", replaced + 1
            ids.append(tok[ch])
        examples.append([alphabet.cls_idx] + ids + [alphabet.eos_idx])
    drop = {alphabet.cls_idx, alphabet.eos_idx, alphabet.padding_idx}
    return ExampleSet(examples, lambda ids: "".join(alphabet.get_tok(int(i)) for i in ids
                                                    if int(i) not in drop),
                      stats={"sequences": len(examples), "cropped": cropped, "replaced": replaced})
