"""Token-level decoding (:func:`infill.decode`): id sequences holding the mask at their gap
positions, checked, given their letter sets, and decoded by the configured decoder."""
from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import torch

from infill.config import DecodeConfig
from infill.decoding.letters import position_masks
from infill.errors import ConfigError, InputError
from infill.filling.decoders import run_decoder
from infill.models.base import MaskedLM

__all__ = ["decode"]


def _is_single(input_ids) -> bool:
    if isinstance(input_ids, torch.Tensor):
        return input_ids.dim() == 1
    first = input_ids[0] if len(input_ids) else None
    return first is not None and (isinstance(first, (str, bytes))     # text: refused as one row
                                  or not isinstance(first, (Sequence, torch.Tensor, np.ndarray)))


def _id_rows(model: MaskedLM, batch: list) -> list[list[int]]:
    """The inputs of :func:`decode` as lists of ints; InputError for a row that is not token
    ids of this model (text, floats, ids out of range)."""
    rows = []
    for k, x in enumerate(batch, 1):
        if isinstance(x, (torch.Tensor, np.ndarray)):
            x = x.tolist()
        if isinstance(x, (str, bytes)) or not isinstance(x, Sequence):
            raise InputError(f"decode takes token ids: input {k} is {type(x).__name__}, not a "
                             "sequence of ints (use fill for text)")
        for v in x:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                raise InputError(f"decode takes token ids: input {k} holds {v!r} "
                                 f"({type(v).__name__}), not an int (use fill for text)")
            if not 0 <= v < model.n_input_ids:
                raise InputError(f"decode: input {k} holds token id {v}, outside the model's "
                                 f"{model.n_input_ids} ids")
        rows.append([int(v) for v in x])
    return rows


def decode(model: MaskedLM, input_ids, config: DecodeConfig | None = None, positions=None,
           gaps=None, letters=None, **options):
    """Token-level decoding. ``input_ids``: a 1-D sequence (or a list of them) holding
    ``model.mask_id`` at every gap position. Returns ranked :class:`Hypothesis` objects (a list per
    input when given a list): ``.tokens`` at the gap positions in position order, ``.score`` the
    summed update of the scorer, ``.logq`` each token's log q when placed.

    ``positions``: the positions to fill (a list of ints, or one such list per input; the name
    :func:`infill.mcmc.mh` uses too); default: every position holding ``model.mask_id``. Needed
    when the mask is also a text symbol the input holds as context (``model.mask_in_text``:
    Ithaca's missing character ``-``). ``gaps``: its old name (deprecated). ``letters``: the
    tokens allowed at some gap positions, {position: a string of letters or a list of tokens /
    ids} (one such dict per input when decoding several; :mod:`infill.decoding.letters`).

    ``config`` and/or keyword ``options`` (fields of :class:`DecodeConfig`: ``scorer``,
    ``order``, ``beam_size``, ``pivot``, ``sampling``, ``seed``, ...).
    """
    config = DecodeConfig.from_options(config, **options)
    positions = _renamed_positions(positions, gaps)
    if not isinstance(input_ids, (Sequence, torch.Tensor, np.ndarray)) \
            or isinstance(input_ids, (str, bytes)):
        raise InputError("decode takes token ids (a sequence of ints, a list of them, or a "
                         f"tensor); use fill for text, got {type(input_ids).__name__}")
    single = _is_single(input_ids)
    batch = [input_ids] if single else list(input_ids)
    if not batch:
        raise InputError("no input to decode")
    if positions is not None:
        positions = [positions] if single else list(positions)
        if not all(isinstance(g, (Sequence, np.ndarray, torch.Tensor)) and
                   all(not isinstance(p, (bool, np.bool_)) and isinstance(p, (int, np.integer))
                       for p in (g.tolist() if hasattr(g, "tolist") else g)) for g in positions):
            raise InputError("positions must be a list of positions (ints), one per input when "
                             "decoding several", field="positions")
    rows = _id_rows(model, batch)
    allowed = _decode_letters(model, rows, positions, letters, single, config.allow_special)
    out = run_decoder(model, rows, positions, config, allowed=allowed)
    return out[0] if single else out


def _decode_letters(model: MaskedLM, rows: list[list[int]], positions, letters, single: bool,
                    allow_special: bool) -> list | None:
    """Per input the [n, V] masks of ``letters`` at its gap positions (None: no letters)."""
    if letters is None:
        return None
    per = [letters] if single else list(letters) if isinstance(letters, Sequence) else None
    if per is None or len(per) != len(rows):
        raise InputError("letters: one {position: letters} dict per input when decoding several",
                         field="letters")
    return [position_masks(model, lt, sorted(positions[i]) if positions is not None else
                           [t for t, w in enumerate(x) if w == model.mask_id], allow_special)
            for i, (x, lt) in enumerate(zip(rows, per))]


def _renamed_positions(positions, gaps):
    """``positions``, or the deprecated ``gaps=`` read as it (with a DeprecationWarning)."""
    if gaps is None:
        return positions
    if positions is not None:
        raise ConfigError("give 'positions' only (not also the deprecated 'gaps')",
                          field="positions")
    warnings.warn("decode(gaps=) is now decode(positions=); 'gaps' will be removed in 0.3.0",
                  DeprecationWarning, stacklevel=3)
    return gaps

