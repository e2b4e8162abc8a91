"""Protein sequences as model input: the text conventions every protein adapter shares.

Input is a protein sequence in one-letter code. Gaps are ``___`` markers (each becomes ``gap``
residues) or runs of ``?`` (one residue per ``?``); whitespace is ignored and lowercase letters
are read as uppercase. Fills are restricted to the 20 standard amino acids unless the adapter
allows the non-standard residue codes (X, B, U, Z, O) too; every other token (cls, pad, eos,
unk, mask, alignment symbols, null slots) is a special id (METHODS §1 "Candidates").

The network call is the subclass's (:mod:`infill.models.esm` for ESM2, :mod:`infill.models.antibody`
for antibody language models): :meth:`ProteinMLM.log_probs` runs the body once and applies the LM
head only at the requested positions.
"""
from __future__ import annotations

import copy
import re

import torch

from infill.data.residues import NONSTANDARD_AA, STANDARD_AA
from infill.errors import InputError, ModelLoadError
from infill.models.familiarity import note
from infill.models.base import Encoding, MaskedLM, Rendered, render_chars, row_chunked

ESM_SPECIALS = {"cls": "<cls>", "pad": "<pad>", "eos": "<eos>", "mask": "<mask>"}
"""ESM's special tokens; other vocabularies pass their own names (e.g. ``[CLS]`` ... ``[MASK]``)."""


class ProteinMLM(MaskedLM):
    """Text handling shared by the protein adapters; subclasses supply the network call.

    ``vocab`` lists the token string of every id (ESM's 33-token alphabet, AntiBERTy's 25, ...);
    ``specials`` names its cls, pad, eos and mask tokens (ESM's by default).
    """

    def __init__(self, vocab: list[str], name: str, device: torch.device,
                 max_length: int = 1024, allow_nonstandard: bool = False,
                 specials: dict[str, str] | None = None):
        self.vocab = list(vocab)
        self._tok2id = {t: i for i, t in enumerate(self.vocab)}
        specials = {**ESM_SPECIALS, **(specials or {})}
        for tok in specials.values():
            if tok not in self._tok2id:
                raise ModelLoadError(f"model {name!r} has no {tok} token in its vocabulary")
        missing = [a for a in STANDARD_AA if a not in self._tok2id]
        if missing:
            raise ModelLoadError(f"model {name!r} lacks amino acids {''.join(missing)} in its vocabulary")
        self.name = name
        self.vocab_size = len(self.vocab)
        self.mask_id = self._tok2id[specials["mask"]]
        self.pad_id = self._tok2id[specials["pad"]]
        self.cls_id = self._tok2id[specials["cls"]]
        self.eos_id = self._tok2id[specials["eos"]]
        self.max_length = max_length
        self.default_pivot = self.mask_id
        self.device = device
        self.residues = frozenset(a for a in STANDARD_AA + NONSTANDARD_AA if a in self._tok2id)
        self.allow_nonstandard = allow_nonstandard
        self.special_ids = self._special_ids(allow_nonstandard)

    def _special_ids(self, allow_nonstandard: bool) -> frozenset[int]:
        fillable = set(STANDARD_AA) | (set(NONSTANDARD_AA) if allow_nonstandard else set())
        return frozenset(i for i, t in enumerate(self.vocab) if t not in fillable)

    def with_nonstandard(self, allow: bool = True) -> "ProteinMLM":
        """A copy (sharing the network) whose fills may (or may not) use X, B, U, Z, O."""
        other = copy.copy(self)
        other.allow_nonstandard = allow
        other.special_ids = self._special_ids(allow)
        return other

    # ---- the model call --------------------------------------------------------------------
    def _hidden(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """[R, T, E] final hidden states (after the last layer norm)."""
        raise NotImplementedError

    def _head(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logits [..., vocab_size] from hidden states [..., E]."""
        raise NotImplementedError

    supports_logits = True
    unit = "residues"

    @row_chunked
    def logits(self, input_ids, attention_mask, positions):
        ids = torch.as_tensor(input_ids, dtype=torch.long, device=self.device)
        attn = torch.as_tensor(attention_mask, dtype=torch.bool, device=self.device)
        pos = torch.as_tensor(positions, dtype=torch.long, device=self.device)
        ids = ids.masked_fill(~attn, self.pad_id)
        with torch.inference_mode():
            hidden = self._hidden(ids, attn)
            rows = torch.arange(ids.shape[0], device=self.device)[:, None]
            return self._head(hidden[rows, pos]).float()

    def log_probs(self, input_ids, attention_mask, positions):
        return torch.log_softmax(self.logits(input_ids, attention_mask, positions), dim=-1)

    # ---- text <-> ids ------------------------------------------------------------------------
    def _residue_ids(self, text: str, offset: int = 0) -> list[int]:
        """Ids of the residues in ``text``; whitespace skipped; ``offset`` = index of text[0] in
        the user's input (for error messages)."""
        out = []
        for k, ch in enumerate(text):
            if ch.isspace():
                continue
            up = ch.upper() if ch.isascii() else ch   # 'ı'.upper() is 'I', 'ﬁ' is 'FI': refused
            if up not in self.residues:
                extra = "".join(a for a in NONSTANDARD_AA if a in self.residues)
                also = f" (or {', '.join(extra)})" if extra else ""
                raise InputError(
                    f"invalid residue {ch!r} at position {offset + k + 1} of the sequence: expected "
                    f"one of the 20 amino-acid letters {STANDARD_AA}{also}, ___ or ? for gaps")
            out.append(self._tok2id[up])
        return out

    def tokenize(self, text: str) -> list[int]:
        return [self.cls_id] + self._residue_ids(text) + [self.eos_id]

    def detokenize(self, ids) -> str:
        drop = {self.cls_id, self.eos_id, self.pad_id}
        return "".join(self.vocab[int(i)] for i in ids if int(i) not in drop)

    def encode(self, text: str, gap: int = 1, marker: str = "___") -> Encoding:
        """``marker`` -> ``gap`` residues to fill; each run of ``?`` -> one residue per ``?``."""
        if not text or not text.strip():
            raise InputError("empty input: nothing to fill")
        gap = self.check_gap(gap)
        mask_token = self.vocab[self.mask_id]
        alternatives = [r"\?+", re.escape(mask_token)]
        if marker and set(marker) != {"?"} and marker != mask_token:
            alternatives.insert(0, re.escape(marker))
        ids, gaps, segments = [self.cls_id], [], []
        start = 0
        for m in re.finditer("|".join(alternatives), text):
            segments.append(text[start:m.start()])
            ids += self._residue_ids(text[start:m.start()], start)
            n = len(m.group()) if m.group().startswith("?") else 1 if m.group() == mask_token \
                else int(gap)
            gaps.append(list(range(len(ids), len(ids) + n)))
            ids += [self.mask_id] * n
            start = m.end()
        if not gaps:
            raise InputError(f"no gap in input: mark residues to fill with {marker or '___'} "
                             f"or ? (one per residue): {text[:60]!r}")
        segments.append(text[start:])
        ids += self._residue_ids(text[start:], start) + [self.eos_id]
        return Encoding(ids, gaps, segments, self.familiarity_notes(ids))

    familiarity = None
    """The recorded threshold of how far an input may lie from the training family
    (:mod:`infill.models.familiarity`; builtin:protein's ``familiarity.json``), or None."""

    def familiarity_notes(self, input_ids: list[int]) -> list[str]:
        """One note when the input lies far outside what the model knows (only for a model with
        a recorded threshold)."""
        if self.familiarity is None:
            return []
        found = note(self, self.familiarity, input_ids)
        return [found] if found else []

    def render(self, encoding: Encoding, gap_tokens: list[list[int]]) -> Rendered:
        fills = ["".join(self.vocab[int(t)] for t in toks) for toks in gap_tokens]
        return render_chars(encoding.segments, fills)

    def token_to_id(self, token: str) -> int:
        if token in self._tok2id:
            return self._tok2id[token]
        if len(token) == 1 and token.isascii() and token.upper() in self._tok2id:
            return self._tok2id[token.upper()]
        specials = ", ".join(t for t in self.vocab if t[:1] in "<[" and not t.startswith("<null"))
        raise InputError(f"unknown token {token!r} for {self.name}: use an amino-acid letter or one "
                         f"of {specials}")

    def id_to_token(self, token_id: int) -> str:
        return self.vocab[int(token_id)]
