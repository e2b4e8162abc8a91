"""AG as a decoder (``decoder="ag"``, ``--decoder ag``): fill a two-token gap with the
Arnold-Gokhale pairwise joint instead of beam search (METHODS §2)."""
from __future__ import annotations

from collections.abc import Sequence

import torch

from infill.config import DecodeConfig
from infill.decoding.engine import Hypothesis
from infill.errors import ConfigError, InputError
from infill.joint.constructions import ag
from infill.joint.tables import pair_tables_batch
from infill.models.base import MaskedLM


def decode_ag(model: MaskedLM, inputs: Sequence[Sequence[int]], config: DecodeConfig | None = None,
              positions: Sequence[Sequence[int]] | None = None, tol: float | None = None,
              batch_size: int = 128, allowed: Sequence | None = None
              ) -> list[list[Hypothesis]]:
    """For each input with exactly two gap positions (``positions[i]``, or its two ``mask_id``
    positions), rank the pairs of the top-``config.joint_size`` grid by the AG joint after
    ``config.ag_iterations`` iterations (or until the change is <= ``tol``). Returns up to
    ``config.beam_size`` hypotheses per input: tokens at the two positions (position order),
    score = log AG joint, logq = log of the joint's marginal of each token. ``allowed``: per
    input None or the [2, V] tokens each position may take (letter sets): the grid's candidates
    come from them, so the joint is the pairwise joint on the sets."""
    config = config if config is not None else DecodeConfig(decoder="ag")
    if not inputs:
        raise InputError("no input to decode")
    items = []
    for i, ids in enumerate(inputs):
        seq = ids.tolist() if isinstance(ids, torch.Tensor) else [int(t) for t in ids]
        pos = sorted(positions[i]) if positions is not None else \
            [p for p, t in enumerate(seq) if t == model.mask_id]
        if len(pos) != 2:
            raise ConfigError(f"the AG decoder fills exactly two gap tokens, input {i} has {len(pos)}")
        for p in pos:
            seq[p] = model.mask_id
        items.append((seq, pos[0], pos[1]))
    tables = pair_tables_batch(model, items, config.joint_size, allow_special=config.allow_special,
                               batch_size=batch_size, logits=False,
                               restrict=None if allowed is None else list(allowed))
    results = []
    for t in tables:
        log_j, _ = ag(t.log_qa_b, t.log_qb_a, iterations=config.ag_iterations, tol=tol)
        flat = log_j.reshape(-1)
        top = torch.topk(flat, min(config.beam_size, flat.numel()))
        nb = log_j.shape[1]
        marg_a, marg_b = torch.logsumexp(log_j, 1), torch.logsumexp(log_j, 0)
        results.append([
            Hypothesis(tokens=(int(t.cand_a[i // nb]), int(t.cand_b[i % nb])), score=float(s),
                       logq=(float(marg_a[i // nb]), float(marg_b[i % nb])), steps=(0, 0))
            for s, i in zip(top.values.tolist(), top.indices.tolist())])
    return results
