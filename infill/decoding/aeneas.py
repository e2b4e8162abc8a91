"""Aeneas's own restoration search: a non-sequential beam search that also sizes lacunae of unknown
length (``#``) with the model's unknown-length head (docs/METHODS.md, "Aeneas's search").

A hypothesis is a text (ids, start symbol first), its open positions (the ``?`` and ``#`` of the
input, shifted as lacunae grow), how many characters it has placed (``pred_len``) and how many
length decisions it has made (``unk_len``), and its log-probability, summed in float32 as Aeneas's
code sums it. Each step runs the model once over every live hypothesis and expands every open
position of each:

- ``-`` at p: one child per candidate (space, the letters, ``0``), a space only when neither
  neighbour is a space; log q from the restoration head (logits / temperature);
- ``_`` at p (a ``#``): *extend* (a new ``-`` after p, the lacuna one longer; only while the text
  stays within ``max_len``) scored log p_unk(p, 1), and *close* (the ``_`` becomes ``-``) scored
  log p_unk(p, 0).

A child with nothing open left is finished: the result table keeps, per text, the higher
log-probability. The others are candidates; equal texts merge keeping the *lower*
log-probability (Aeneas's choice; ``keep="higher"`` keeps the higher, as infill's own search
does). Candidates are ranked by log-prob / (1 + pred_len + unk_len) ** ``length_penalty``
(stable, in generation order) and the best ``beam_width`` go on; the search ends when none is
left, and returns the finished table ranked the same way, ``beam_width`` at most.

Generation order (what decides exact ties only): hypotheses in beam order, open positions in
increasing order (Aeneas iterates a Python set), then extend before close or characters by id.

The work is vectorized per step: children are scored, hashed (two polynomial hashes of the text)
and merged with numpy, equal hashes confirmed on the texts themselves, and only the children
that survive a step are built.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from infill.errors import ConfigError
from infill.lazy import LazyModule

# The model's side (torch), on first use.
base = LazyModule("infill.models.base")
aeneas_model = LazyModule("infill.models.aeneas")

__all__ = ["RestoreOptions", "Restoration", "restore", "UNKNOWN_MAX"]

UNKNOWN_MAX = 20
"""The most characters all unknown-length lacunae of a text may restore together (Aeneas's
bound)."""
_P = np.array([2147483647, 2147483629], dtype=np.int64)      # two primes below 2^31
_BASE = np.array([131, 137], dtype=np.int64)


@dataclass(frozen=True)
class RestoreOptions:
    """The options of Aeneas's ``restore()``: ``beam_width``, ``temperature`` (of the character
    distribution), ``unknown_max`` (``unk_restoration_max_len``), ``length_penalty``
    (``a_penalty``) and which log-probability merged candidates keep (``keep``: ``lower``,
    Aeneas's, or ``higher``)."""

    beam_width: int = 200
    temperature: float = 1.0
    unknown_max: int = UNKNOWN_MAX
    length_penalty: float = 1.0
    keep: str = "lower"

    def __post_init__(self):
        if not 1 <= self.unknown_max <= UNKNOWN_MAX:
            raise ConfigError(f"the unknown-length maximum must be 1 to {UNKNOWN_MAX} characters "
                              f"(Aeneas's bound), got {self.unknown_max}",
                              field="unknown_max_length")
        if self.keep not in ("lower", "higher"):
            raise ConfigError(f"keep must be lower or higher, got {self.keep!r}",
                              field="dedup_keep")


@dataclass(frozen=True)
class Restoration:
    """One finished hypothesis: ``ids`` (start symbol first), its ``open`` positions (sorted),
    the input gap each belongs to (``gap``), log q of each position's character and the
    ``step`` it was placed, the float32 ``log_prob``, ``pred_len``, ``unk_len`` and the
    ``rank_key`` it was ranked by."""

    ids: tuple[int, ...]
    open: tuple[int, ...]
    gap: tuple[int, ...]
    logq: tuple[float, ...]
    step: tuple[int, ...]
    log_prob: float
    pred_len: int
    unk_len: int
    rank_key: float


@dataclass(frozen=True)
class _Hyp:
    ids: np.ndarray
    open: np.ndarray
    gap: np.ndarray
    logq: np.ndarray
    step: np.ndarray
    pred_len: int
    unk_len: int
    lp: np.float32


def _powers(n: int) -> np.ndarray:
    """[n, 2] base^i mod each prime."""
    out = np.ones((n, 2), dtype=np.int64)
    for i in range(1, n):
        out[i] = out[i - 1] * _BASE % _P
    return out


def _hash(ids: np.ndarray, pw: np.ndarray) -> np.ndarray:
    """[2] polynomial hashes of a text (its length mixed in)."""
    h = (ids[:, None] * pw[:len(ids)] % _P).sum(0) % _P
    return (h + len(ids) * pw[len(ids)]) % _P


def _key(h: np.ndarray) -> np.ndarray:
    return (h[..., 0] << 31) | h[..., 1]


@dataclass
class _Children:
    """A step's children as parallel arrays, in generation order: parent, open slot j, kind
    (0 character, 1 extend, 2 close), token, float32 log-prob, hash key, whether finished, log q
    of the character and the position p it changes; ``parents`` [H, T] the parents' ids
    (zero-padded) and ``lengths`` theirs."""

    parent: np.ndarray
    slot: np.ndarray
    kind: np.ndarray
    token: np.ndarray
    lp: np.ndarray
    key: np.ndarray
    done: np.ndarray
    logq: np.ndarray
    pos: np.ndarray
    parents: np.ndarray | None = None
    lengths: np.ndarray | None = None


def _expand(beam: list[_Hyp], lm: np.ndarray, lu: np.ndarray, cands: np.ndarray, codes: dict,
            max_len: int, pw: np.ndarray) -> _Children:
    """Every child of every hypothesis of ``beam`` (``lm`` [H, P, V], ``lu`` [H, P, 2]: the
    model's log-probabilities at each one's open positions), in generation order."""
    space, missing, lacuna = codes["space"], codes["missing"], codes["lacuna"]
    lens = np.array([len(h.ids) for h in beam])
    ids = np.zeros((len(beam), lens.max() + 1), dtype=np.int64)
    opened = np.zeros((len(beam), lm.shape[1]), dtype=np.int64)
    valid = np.zeros(opened.shape, dtype=bool)
    for r, h in enumerate(beam):
        ids[r, :len(h.ids)], opened[r, :len(h.open)], valid[r, :len(h.open)] = h.ids, h.open, True
    base = ((ids[:, :, None] * pw[:ids.shape[1]]) % _P).sum(1) % _P
    base = (base + lens[:, None] * pw[lens]) % _P                            # [H, 2]
    cur = np.take_along_axis(ids, opened, 1)
    todo = (valid & ((cur == missing) | (cur == lacuna))).sum(1)
    lps = np.array([h.lp for h in beam], dtype=np.float32)
    hh, jj = np.nonzero(valid & (cur == missing))
    pp = opened[hh, jj]
    bad = (ids[hh, pp - 1] == space) | ((pp + 1 < lens[hh]) & (ids[hh, pp + 1] == space))
    ok = ~(bad[:, None] & (cands == space)[None, :])                          # [M, C]
    lq = lm[hh, jj][:, cands]
    lp = (lps[hh][:, None] + lq).astype(np.float32)
    step = ((cands - missing)[:, None] % _P)[None] * pw[pp][:, None, :] % _P
    keys = _key((base[hh][:, None, :] + step) % _P)
    m, c = np.nonzero(ok)
    cols = [hh[m], jj[m], np.zeros(len(m), dtype=np.int64), cands[c], lp[m, c], keys[m, c],
            todo[hh[m]] == 1, lq[m, c].astype(np.float64), pp[m]]
    extra = []
    for h, j in zip(*np.nonzero(valid & (cur == lacuna))):
        hyp, p = beam[h], int(opened[h, j])
        for kind in ([1, 2] if lens[h] + 1 <= max_len else [2]):
            child = _child_ids(hyp.ids, p, kind, missing)
            extra.append([h, j, kind, missing, np.float32(hyp.lp + lu[h, j, 1 if kind == 1 else 0]),
                          _key(_hash(child, pw)), False, np.nan, p])
    if extra:
        cols = [np.concatenate([col, np.array(new, dtype=col.dtype)])
                for col, new in zip(cols, zip(*extra))]
    order = np.lexsort((cols[2], cols[3], cols[1], cols[0]))   # parent, slot, token, kind
    return _Children(*(col[order] for col in cols), parents=ids, lengths=lens)


def _child_ids(ids: np.ndarray, p: int, kind: int, missing: int, token: int | None = None
               ) -> np.ndarray:
    if kind == 1:
        return np.insert(ids, p + 1, missing)
    out = ids.copy()
    out[p] = missing if kind == 2 else token
    return out


def _build(beam: list[_Hyp], ch: _Children, i: int, step: int, missing: int) -> _Hyp:
    """Child ``i`` of the step as a hypothesis."""
    hyp = beam[int(ch.parent[i])]
    j, kind = int(ch.slot[i]), int(ch.kind[i])
    p = int(hyp.open[j])
    ids = _child_ids(hyp.ids, p, kind, missing, int(ch.token[i]))
    if kind == 1:
        opened = np.insert(np.where(hyp.open > p, hyp.open + 1, hyp.open), j + 1, p + 1)
        return _Hyp(ids, opened, np.insert(hyp.gap, j + 1, hyp.gap[j]),
                    np.insert(hyp.logq, j + 1, np.nan), np.insert(hyp.step, j + 1, -1),
                    hyp.pred_len, hyp.unk_len + 1, ch.lp[i])
    if kind == 2:
        return replace(hyp, ids=ids, unk_len=hyp.unk_len + 1, lp=ch.lp[i])
    logq, steps = hyp.logq.copy(), hyp.step.copy()
    logq[j], steps[j] = ch.logq[i], step
    return replace(hyp, ids=ids, logq=logq, step=steps, pred_len=hyp.pred_len + 1, lp=ch.lp[i])


def _groups(beam: list[_Hyp], ch: _Children, idx: np.ndarray, missing: int) -> np.ndarray:
    """A group id per child of ``idx``: equal texts share one (equal hashes confirmed on the
    texts, so a hash collision never merges two texts)."""
    _, inverse, counts = np.unique(ch.key[idx], return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    members = np.nonzero(counts[inverse] > 1)[0]
    if not len(members):
        return inverse
    sel = idx[members]
    rows = ch.parents[ch.parent[sel]]
    same = ch.kind[sel] != 1                              # texts of the parents' length
    r = np.nonzero(same)[0]
    rows[r, ch.pos[sel][r]] = np.where(ch.kind[sel][r] == 2, missing, ch.token[sel][r])
    grp = inverse[members]
    _, first = np.unique(grp, return_index=True)
    lead = first[np.searchsorted(np.unique(grp), grp)]
    equal = same & same[lead] & (ch.lengths[ch.parent[sel]] == ch.lengths[ch.parent[sel[lead]]]) \
        & (rows == rows[lead]).all(1)
    doubt = np.unique(grp[~equal])
    return _split(beam, ch, idx, inverse, members[np.isin(grp, doubt)], missing) \
        if len(doubt) else inverse


def _split(beam, ch: _Children, idx, inverse, members, missing: int) -> np.ndarray:
    """Regroup ``members`` (children whose equal hashes were not confirmed at once: a lacuna
    grown, or a collision) by their texts, built one by one."""
    nxt = inverse.max() + 1
    seen: dict[tuple[int, bytes], int] = {}
    for m in members:
        i = idx[m]
        hyp = beam[int(ch.parent[i])]
        text = _child_ids(hyp.ids, int(ch.pos[i]), int(ch.kind[i]), missing,
                          int(ch.token[i])).tobytes()
        g = int(inverse[m])
        if (g, text) not in seen:
            seen[g, text] = g if all(k[0] != g for k in seen) else nxt
            nxt += seen[g, text] == nxt
        inverse[m] = seen[g, text]
    return inverse


def _merged(lp: np.ndarray, group: np.ndarray, higher: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per group (in order of first appearance): the member kept -- the one with the lower (or
    ``higher``) log-prob, the first of equals -- as indices into the children."""
    first = np.full(group.max() + 1, len(group), dtype=np.int64)
    np.minimum.at(first, group, np.arange(len(group)))
    sign = -1.0 if higher else 1.0
    order = np.lexsort((np.arange(len(group)), sign * lp.astype(np.float64), group))
    starts = np.r_[0, np.nonzero(np.diff(group[order]))[0] + 1]
    kept = np.empty(group.max() + 1, dtype=np.int64)
    kept[group[order[starts]]] = order[starts]
    appear = np.argsort(first, kind="stable")
    return kept[appear], first[appear]


def _rank_keys(lp: np.ndarray, decisions: np.ndarray, penalty: float) -> np.ndarray:
    """Aeneas's ranking key in float32: log-prob / (1 + decisions) ** penalty."""
    return (lp.astype(np.float32) / ((1.0 + decisions) ** penalty).astype(np.float32)
            ).astype(np.float32)


def _best(keys: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` largest keys, best first, ties in index order (a stable sort)."""
    return np.argsort(-keys, kind="stable")[:n]


def _step_log_probs(model, beam: list[_Hyp], temperature: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """One forward pass over the beam (right-padded): ([H, P, V], [H, P, 2]) float32 numpy
    log-probabilities at each hypothesis' open positions."""
    ids, keep = base.pad_batch([h.ids.tolist() for h in beam], model.pad_id)
    pos, _ = base.pad_batch([h.open.tolist() for h in beam], 0)
    lm, lu = model.restoration_log_probs(ids, keep, pos, temperature)
    return lm.cpu().numpy(), lu.cpu().numpy()


def _finished(table: list, beam, ch: _Children, idx, step, o: RestoreOptions, codes) -> list:
    """The result table with this step's finished children (equal texts keeping the higher
    log-prob), cut to the ``beam_width`` best in their order of arrival (no later step can
    reach the same text: a text's length fixes its number of decisions)."""
    if len(idx):
        group = _groups(beam, ch, idx, codes["missing"])
        kept, _ = _merged(ch.lp[idx], group, higher=True)
        for i in idx[kept]:
            h = _build(beam, ch, int(i), step, codes["missing"])
            table.append((h, _rank_keys(np.array([h.lp]), np.array([h.pred_len + h.unk_len]),
                                        o.length_penalty)[0]))
    best = np.sort(_best(np.array([k for _, k in table], dtype=np.float32), o.beam_width))
    return [table[i] for i in best]


def restore(model, ids: list[int], positions: list[int], gaps: list[int],
            options: RestoreOptions) -> tuple[list[Restoration], int]:
    """Aeneas's search over one text: ``ids`` (start symbol first; ``-`` at each ``?``, ``_``
    at each ``#``), the restore ``positions`` and the input gap each belongs to. Returns the
    restorations ranked best first (at most ``beam_width``) and the number of steps.

    ``model`` gives :meth:`restoration_log_probs` (an Aeneas adapter), ``pad_id``,
    ``max_length`` and its ids of space, ``-`` and ``_`` (``SPACE``, ``MISSING``,
    ``UNKNOWN_LENGTH`` of :mod:`infill.models.aeneas`)."""
    codes = {"space": aeneas_model.SPACE, "missing": aeneas_model.MISSING,
             "lacuna": aeneas_model.UNKNOWN_LENGTH}
    arr = np.asarray(ids, dtype=np.int64)
    order = np.argsort(positions, kind="stable")
    opened = np.asarray(positions, dtype=np.int64)[order]
    lacunae = int((arr[opened] == aeneas_model.UNKNOWN_LENGTH).sum())
    max_len = min(len(arr) - lacunae + options.unknown_max, model.max_length)
    pw = _powers(max(max_len, len(arr)) + 2)
    cands = np.asarray(model.letters.candidates, dtype=np.int64)
    beam = [_Hyp(arr, opened, np.asarray(gaps, dtype=np.int64)[order],
                 np.full(len(opened), np.nan), np.full(len(opened), -1, dtype=np.int64), 0, 0,
                 np.float32(0.0))]
    table: list = []
    step = 0
    while beam:
        lm, lu = _step_log_probs(model, beam, options.temperature)
        ch = _expand(beam, lm, lu, cands, codes, max_len, pw)
        table = _finished(table, beam, ch, np.nonzero(ch.done)[0], step, options, codes)
        beam = _next_beam(beam, ch, step, options, codes)
        step += 1
    return [_restoration(h, key) for h, key in _ranked(table)], step


def _next_beam(beam, ch: _Children, step: int, o: RestoreOptions, codes) -> list[_Hyp]:
    """The ``beam_width`` best candidates (equal texts merged by ``o.keep``), ranked by
    their key, ties in generation order."""
    idx = np.nonzero(~ch.done)[0]
    if not len(idx):
        return []
    group = _groups(beam, ch, idx, codes["missing"])
    kept, _ = _merged(ch.lp[idx], group, higher=o.keep == "higher")
    chosen = idx[kept]
    made = np.array([h.pred_len + h.unk_len for h in beam])[ch.parent[chosen]] + 1
    keys = _rank_keys(ch.lp[chosen], made, o.length_penalty)
    return [_build(beam, ch, int(chosen[i]), step, codes["missing"])
            for i in _best(keys, o.beam_width)]


def _ranked(table: list) -> list:
    keys = np.array([k for _, k in table], dtype=np.float32)
    return [table[i] for i in _best(keys, len(table))]


def _restoration(h: _Hyp, key) -> Restoration:
    return Restoration(tuple(int(i) for i in h.ids), tuple(int(p) for p in h.open),
                       tuple(int(g) for g in h.gap), tuple(float(q) for q in h.logq),
                       tuple(int(s) for s in h.step), float(h.lp), h.pred_len, h.unk_len,
                       float(key))
