"""An exact "MLM" built from an explicit joint distribution over short sequences.

Its conditionals are exact: q_t(w | x) = p(w_t = w | the unmasked positions of x), with masked
positions marginalized out ("mask conditionals = exact marginals") and any non-mask token taken as
observed. It is the reference against which the decoders' probabilistic claims are tested
(Theorem 1 of the HCB beam-search paper; MH convergence).

Ids 0..V-1 are the tokens of the joint; id V is the mask input symbol (not an output).
"""
from __future__ import annotations

import torch

from infill.errors import InputError
from infill.models.base import Encoding, MaskedLM, Rendered


class OracleMLM(MaskedLM):
    def __init__(self, log_joint: torch.Tensor, default_pivot: int = 0,
                 tokens: list[str] | None = None):
        """``log_joint``: tensor of shape [V] * L holding log p(w_1..w_L) (normalized)."""
        self.log_joint = log_joint.double()
        self.length = log_joint.dim()
        V = log_joint.shape[0]
        if any(s != V for s in log_joint.shape):
            raise ValueError("every axis of the joint must have the same size V")
        self.name = "oracle"
        self.vocab_size = V
        self.mask_id = V
        self.pad_id = V + 1
        self.max_length = self.length
        self.special_ids = frozenset()
        self.default_pivot = default_pivot
        self.device = torch.device("cpu")
        self.tokens = tokens or [chr(ord("a") + i) if i < 26 else f"t{i}" for i in range(V)]
        self.calls = 0

    @property
    def n_input_ids(self) -> int:
        return self.vocab_size + 2    # + mask and pad
    # -- exact conditionals ------------------------------------------------------------------
    def conditional(self, seq: list[int], t: int) -> torch.Tensor:
        """log p(w_t = . | observed positions of seq), masked positions marginalized. [V]"""
        lp = self.log_joint
        # Reduce axes from last to first so indices stay valid.
        for j in reversed(range(self.length)):
            if j == t:
                continue
            if seq[j] == self.mask_id:
                lp = torch.logsumexp(lp, dim=j)
            else:
                lp = lp.select(j, seq[j])
        return lp - torch.logsumexp(lp, dim=0)

    def log_probs(self, input_ids, attention_mask, positions):
        self.calls += 1
        ids = input_ids.tolist()
        pos = positions.tolist()
        out = torch.empty(len(ids), len(pos[0]) if pos else 0, self.vocab_size, dtype=torch.float64)
        for r, (seq, ps) in enumerate(zip(ids, pos)):
            for k, t in enumerate(ps):
                out[r, k] = self.conditional(seq[: self.length], t)
        return out

    # -- text ----------------------------------------------------------------------------------
    def token_to_id(self, token: str) -> int:
        if token not in self.tokens:
            raise InputError(f"unknown token {token!r}")
        return self.tokens.index(token)

    def id_to_token(self, token_id: int) -> str:
        return "?" if token_id == self.mask_id else self.tokens[token_id]

    def tokenize(self, text: str) -> list[int]:
        return [self.token_to_id(c) for c in text]

    def detokenize(self, ids) -> str:
        return "".join(self.id_to_token(i) for i in ids)

    def encode(self, text: str, gap: int = 1, marker: str = "?") -> Encoding:
        """Text is one character per position; ``?`` marks a gap position."""
        if len(text) != self.length:
            raise InputError(f"oracle inputs have exactly {self.length} symbols")
        ids = [self.mask_id if c == marker else self.token_to_id(c) for c in text]
        gaps = [[i] for i, c in enumerate(text) if c == marker]
        if not gaps:
            raise InputError("no gap in input")
        return Encoding(ids, gaps, [""] * (len(gaps) + 1))

    def render(self, encoding, gap_tokens):
        ids = list(encoding.input_ids)
        for g, toks in zip(encoding.gaps, gap_tokens):
            for p, t in zip(g, toks):
                ids[p] = t
        fills = ["".join(self.tokens[t] for t in toks) for toks in gap_tokens]
        offsets = [[sum(len(self.tokens[i]) for i in ids[:p]) for p in g] for g in encoding.gaps]
        spans = [(o[0], o[0] + len(f)) for o, f in zip(offsets, fills)]
        return Rendered("".join(self.tokens[i] for i in ids), fills, spans, offsets)
