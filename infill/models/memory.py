"""A corpus memory: what a model's training lines put at a position, mixed into its conditional.

A small network trained on a small corpus does not recite it: builtin:english saw "To be, or not
to be: that is the question" some forty times and still fills "say". The memory makes a model know
its own training text, the way an n-gram or ∞-gram model does (Liu et al. 2024, "Infini-gram"),
without changing what it predicts where its training text is silent.

**What is stored.** For every position t of every training example and every level k in
``levels``: a 48-bit hash (64-bit in files written before) of the k neighbours on each side of
t -- token *classes*: case folded, specials as themselves, and one class for whatever lies
outside the example (so a line's last word has a context too) -- with the token at t and how
often that pair occurred. A *words* memory (``context="words"``, what training writes) skips
punctuation: t's neighbours are the nearest tokens that are not punctuation, so a line typed
without its commas or its full stop still meets the line it was trained on. A *tokens* memory
(files written before the choice existed) counts every token, each punctuation token one class.
Hashes, not text: the file cannot be read back into the corpus.

**End levels.** A quotation is often typed only up to the gap ("Get thee to a ___") while the
line it comes from goes on: no two-sided context of the typed text meets it. An *end level* k
(``end_levels``) stores the k neighbours left of t only, and is used where the text ends right
after t -- where the two-sided levels see the text's end, which need not be the line's. It
counts only the tokens that end a word (a word's first piece is not offered as the whole word).
``edges`` are the ids that frame a text ([CLS], [SEP]); past them is the outside class.

**The rest of a word.** A word of several pieces hidden in a gap ("nun##ner##y") is filled piece
by piece, and at its first piece the right neighbours are the word's own hidden pieces: no
context above holds them. So a memory with ``rest`` > 0 also stores, for every piece t followed
by r = 1..``rest`` more pieces of its word, a key of its neighbours left of t and right of the
word's *end*, with r in the key; it is used where exactly r ``[MASK]`` s follow t (for an end
level: and then the text ends). At r = 0 every key is as before.

**The mixture** (at one position t followed by r hidden pieces, context x):

    n_k(w)  counts of w with rest r under the level-k context of t
    n_k     the total under that context with any rest 0..``rest`` (every word seen there,
            whatever its length); u_k the number of distinct (token, rest) among them
    m_k(w)  = n_k(w) / n_k          the memory's chance that w is at t *and* r pieces follow
    λ_k     = n_k / (n_k + β u_k)   Witten–Bell (0 when the context was never seen)
    M(w)    = Σ_k w_k m_k(w),       w_k = λ_k Π_{j>k} (1 − λ_j)
    q'(w)   = S · M(w) + (1 − Σ_v M(v)) q(w)     for every non-special w
    q'(s)   = q(s)                               for every special s ([MASK], [SEP], ...)

(Witten–Bell's weight: a context seen often with one continuation is trusted, one that many
tokens have followed less), with the levels applied in the order of :meth:`CorpusMemory.sides`
-- the end levels, then the two-sided ones, each from the shortest to the longest context (a
longer context has the last word) -- and S = Σ_{w non-special} q(w). So q' sums to 1. Where
every word seen in a context has the gap's length, Σ_v M(v) = 1 − Π_k (1 − λ_k); where words of
other lengths were seen there, their share is left to the network: a rare three-piece word
seen once after "the state of" does not outweigh the many one-piece words seen there when a
gap's lengths are compared. q'([MASK]) = q([MASK]) (the HCB correction with the default pivot
is the network's own), and a context holding a ``[MASK]`` is never matched: the memory speaks
only where all its neighbours are known (a pivot other than ``[MASK]`` is read as the token
it is).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save_file

from infill.errors import ModelLoadError

__all__ = ["CorpusMemory", "build_memory", "token_classes", "load_memory", "mix_rows",
           "MEMORY_FILE"]

MEMORY_FILE = "memory.safetensors"
MAX_LEVEL = 64
"""The longest context (neighbours on a side) a memory file may declare; training writes 2-6."""
MAX_LEVELS = 16
"""The most levels (two-sided and end levels together) a memory file may declare."""
_MIX = np.uint64(0x9E3779B97F4A7C15)


@dataclass
class CorpusMemory:
    """Sorted context hashes ``keys`` [E] with the token ``tokens`` [E] seen there ``counts``
    [E] times; ``classes`` [n_input_ids] maps an input id to the class its contexts hash."""

    keys: np.ndarray
    tokens: np.ndarray
    counts: np.ndarray
    classes: np.ndarray
    levels: tuple[int, ...]
    beta: float
    vocab_size: int
    context: str = "tokens"
    end_levels: tuple[int, ...] = ()
    edges: tuple[int, ...] = ()
    key_bits: int = 64
    rest: int = 0
    mask_id: int = -1

    def sides(self) -> list[tuple[int, int]]:
        """(left, right) neighbours of each level in the order they are mixed: the end levels
        (left only), then the two-sided levels, each shorter to longer."""
        return [(k, 0) for k in sorted(self.end_levels)] + [(k, k) for k in sorted(self.levels)]

    def mix(self, logq: torch.Tensor, input_ids: torch.Tensor, positions: torch.Tensor,
            special_ids: frozenset[int]) -> torch.Tensor:
        """log q' (the module doc) from the network's log q [R, P, V] at ``positions`` [R, P]
        of ``input_ids`` [R, T]. Only the positions whose context was seen are touched."""
        ids = input_ids.detach().cpu().numpy()
        pos = positions.detach().cpu().numpy()
        found = self._found(ids, pos)              # [(lo, width, total, types) [R*P]] by level
        seen = np.nonzero(np.any([f[1] > 0 for f in found], axis=0))[0]
        if not len(seen):
            return logq
        mixture = np.zeros((len(seen), self.vocab_size))        # Σ_k w_k m_k, longest last
        for lo, width, total, types in found:
            counts = self._counts(lo[seen], width[seen])
            n, u = total[seen].astype(np.float64), types[seen]
            lam = np.divide(n, n + self.beta * u, out=np.zeros_like(n), where=n > 0)
            share = np.divide(counts, n[:, None], out=np.zeros_like(counts), where=n[:, None] > 0)
            mixture = lam[:, None] * share + (1 - lam)[:, None] * mixture
        keep = np.clip(1 - mixture.sum(1), 0, 1)     # Π_k (1 − λ_k) when every length is r
        special = np.zeros(logq.shape[-1], dtype=bool)
        special[[i for i in special_ids if i < logq.shape[-1]]] = True
        return mix_rows(logq, seen, mixture, keep, special)

    def _found(self, ids: np.ndarray, pos: np.ndarray) -> list[tuple[np.ndarray, ...]]:
        """Per level (:meth:`sides`), at every position: the entries under its key (first,
        how many), and the total count and number of entries under the same context with
        any rest 0..:attr:`rest` (n_k and u_k of the module doc). An end level finds nothing
        unless the text ends right after the position's hidden rest."""
        most = max(left for left, _ in self.sides())
        ctx = self._neighbours(ids, pos, most, most + self.rest)   # every level's, sliced below
        rest = self._rest(ctx[:, most:])
        after = ctx[np.arange(len(ctx))[:, None], most + rest[:, None] + np.arange(most)]
        ctx = np.concatenate([ctx[:, :most], after], axis=1)     # right of the hidden rest
        edge = np.r_[self.classes[list(self.edges)], outside_class(len(self.classes))]
        ends = np.isin(ctx[:, most], edge)
        found = []
        for left, right in self.sides():
            side = ctx[:, most - left:most + right]
            lo, width = self._search(context_keys(side, left, right, self.key_bits, rest))
            total, types = np.zeros(len(lo), dtype=np.int64), np.zeros(len(lo), dtype=np.int64)
            for r in range(self.rest + 1):
                a, w = (lo, width) if self.rest == 0 else self._search(context_keys(
                    side, left, right, self.key_bits, np.full(len(lo), r)))
                total += self._cumulative[a + w] - self._cumulative[a]
                types += w
            speaks = (ends | (right > 0)).astype(np.int64)
            found.append((lo, width * speaks, total * speaks, types * speaks))
        return found

    @functools.cached_property
    def _cumulative(self) -> np.ndarray:
        """[E + 1] counts summed over the entries before each entry."""
        return np.r_[0, np.cumsum(self.counts, dtype=np.int64)]

    def _rest(self, right: np.ndarray) -> np.ndarray:
        """[N] how many ``[MASK]`` s lie right of each position (``right``: its right
        neighbours), 0 where none or more than :attr:`rest` do (a context holding a ``[MASK]``
        then never matches)."""
        if not self.rest:
            return np.zeros(len(right), dtype=np.int64)
        hidden = right[:, :self.rest + 1] == self.classes[self.mask_id]
        run = np.argmin(np.c_[hidden, np.zeros(len(right), dtype=bool)], axis=1)
        return np.where(run <= self.rest, run, 0)

    def _neighbours(self, ids: np.ndarray, pos: np.ndarray, left: int, right: int) -> np.ndarray:
        """[R*P, left + right] classes of the neighbours of every position."""
        R, T = ids.shape
        start = np.repeat(np.arange(R) * T, T)
        t = (np.arange(R)[:, None] * T + pos).reshape(-1)
        return _context(self.classes, ids.reshape(-1), start, start + T, t, left, right,
                        self.context == "words")

    def _lookup(self, ids: np.ndarray, pos: np.ndarray, left: int, right: int
                ) -> tuple[np.ndarray, np.ndarray]:
        """(first entry, number of entries) [R*P] under the (left, right) context of every
        position."""
        return self._search(context_keys(self._neighbours(ids, pos, left, right), left, right,
                                         self.key_bits))

    def _search(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(first entry, number of entries) of each of ``keys``."""
        lo = np.searchsorted(self.keys, keys, "left")
        return lo, np.searchsorted(self.keys, keys, "right") - lo

    def _counts(self, lo: np.ndarray, width: np.ndarray) -> np.ndarray:
        """[N, V] counts of each token in the entries ``lo[i] : lo[i] + width[i]``."""
        out = np.zeros((len(lo), self.vocab_size))
        query = np.repeat(np.arange(len(lo)), width)
        entry = np.repeat(lo - np.cumsum(width) + width, width) + np.arange(width.sum())
        np.add.at(out, (query, self.tokens[entry].astype(np.int64)), self.counts[entry])
        return out

    def save(self, path: Path) -> None:
        if self.key_bits == 48:             # 6 bytes a key on disk
            keys = {"keys_hi": (self.keys >> np.uint64(16)).astype(np.uint32),
                    "keys_lo": (self.keys & np.uint64(0xFFFF)).astype(np.uint16)}
        else:
            keys = {"keys": self.keys}
        save_file({**keys, "tokens": self.tokens, "counts": self.counts, "classes": self.classes},
                  str(path), metadata={"levels": ",".join(map(str, self.levels)),
                                       "key_bits": str(self.key_bits),
                                       "beta": repr(self.beta), "vocab_size": str(self.vocab_size),
                                       "context": self.context,
                                       "end_levels": ",".join(map(str, self.end_levels)),
                                       "edges": ",".join(map(str, self.edges)),
                                       "rest": str(self.rest), "mask_id": str(self.mask_id)})


def mix_rows(logq: torch.Tensor, rows: np.ndarray, mixture: np.ndarray, keep: np.ndarray,
             special: np.ndarray) -> torch.Tensor:
    """log q' = log(S · mixture + keep · q) off ``special`` (log q on it), at the flattened
    ``rows`` of ``logq`` [..., V]; S is q's mass off ``special``. ``mixture`` [N, V] is a
    distribution scaled by 1 − keep [N]: q' sums to 1."""
    flat = logq.reshape(-1, logq.shape[-1])
    at = torch.from_numpy(rows).to(flat.device)
    lq = flat[at].detach().to("cpu", torch.float64)
    off = torch.from_numpy(special)
    log_s = torch.logsumexp(lq.masked_fill(off, -torch.inf), dim=1, keepdim=True)
    mixed = torch.logaddexp(lq + torch.from_numpy(keep).log()[:, None],
                            torch.from_numpy(mixture).log() + log_s)
    out = flat.clone()
    out[at] = torch.where(off, lq, mixed).to(flat.dtype).to(flat.device)
    return out.reshape(logq.shape)


def context_keys(ctx: np.ndarray, left: int, right: int, bits: int = 64,
                 rest: np.ndarray | None = None) -> np.ndarray:
    """[N] ``bits``-bit hash (in uint64) of each row of ``ctx`` [N, left + right] (classes left
    of t, then right), seeded by the level and by ``rest`` [N] (the hidden pieces of t's word
    between t and its right neighbours; none by default) so that no two share a key."""
    if left == right:
        seed = (left * int(_MIX)) % 2**64
    else:
        seed = int(_splitmix(np.array([left << 32 | right], dtype=np.uint64))[0])
    h = np.full(ctx.shape[0], seed, dtype=np.uint64)
    if rest is not None and np.any(rest):
        r = np.asarray(rest, dtype=np.uint64)
        h = np.where(r > 0, _splitmix(r << np.uint64(48) | np.uint64(left << 32 | right)), h)
    for j in range(ctx.shape[1]):
        h = _splitmix(h ^ ctx[:, j].astype(np.uint64))
    return h >> np.uint64(64 - bits)


def _splitmix(x: np.ndarray) -> np.ndarray:
    x = x + _MIX
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _context(classes: np.ndarray, flat: np.ndarray, start: np.ndarray, end: np.ndarray,
             t: np.ndarray, left: int, right: int, words: bool) -> np.ndarray:
    """[N, left + right] classes of the ``left`` neighbours left of the positions ``t`` of
    ``flat`` (ids of examples laid end to end; ``start``/``end`` [len(flat)]: the span of each
    position's example), then the ``right`` ones right of them, the outside class past the
    example's ends. With ``words``, punctuation tokens are not neighbours: a position's
    neighbours are the nearest tokens that are not punctuation."""
    cls = classes[flat]
    punct = len(classes)
    keep = cls != punct if words else np.ones(len(flat), dtype=bool)
    kept = np.nonzero(keep)[0]
    before = np.cumsum(keep) - keep                       # kept positions left of each position
    rank = np.concatenate([before[t, None] - np.arange(left, 0, -1),      # nearest last
                           before[t, None] + keep[t, None] + np.arange(right)], axis=1)
    where = kept[np.clip(rank, 0, max(len(kept) - 1, 0))] if len(kept) else np.zeros_like(rank)
    outside = (rank < 0) | (rank >= len(kept)) | (where < start[t, None]) | (where >= end[t, None])
    return np.where(outside, outside_class(len(classes)), cls[np.clip(where, 0, len(flat) - 1)])


def outside_class(n_input_ids: int) -> int:
    """The class of a context position outside the example (before its start, past its end,
    padding)."""
    return n_input_ids + 1


def token_classes(tokens: list[str], special_ids: frozenset[int], n_input_ids: int,
                  pad_id: int) -> np.ndarray:
    """[n_input_ids] class of each id: its lower-case form's id when the vocabulary has it, one
    class (``n_input_ids``) for every token without a letter or digit, padding the class of
    what lies outside an example, other specials themselves."""
    ids = {t: i for i, t in enumerate(tokens)}
    out = np.arange(n_input_ids, dtype=np.int64)
    out[pad_id] = outside_class(n_input_ids)
    for i, t in enumerate(tokens):
        if i in special_ids:
            continue
        if not re.search(r"\w", t):
            out[i] = n_input_ids
        elif t.lower() in ids:
            out[i] = ids[t.lower()]
    return out


def build_memory(examples: list[list[int]], classes: np.ndarray, special_ids: frozenset[int],
                 vocab_size: int, levels: tuple[int, ...] = (2, 4), beta: float = 2.0,
                 context: str = "words", end_levels: tuple[int, ...] = (),
                 edges: tuple[int, ...] = (), continues: np.ndarray | None = None,
                 key_bits: int = 48, rest: int = 0, mask_id: int = -1) -> CorpusMemory:
    """The memory of ``examples`` (token ids, specials included) at the given context levels;
    ``context``: "words" (punctuation is no neighbour) or "tokens" (every token is);
    ``end_levels``: left-only levels, used where the text ends right after a position, which
    ``edges`` (the ids framing a text, e.g. [CLS] and [SEP]) or its end mark; ``continues``
    [n_input_ids]: the ids that continue a word (WordPiece ``##`` pieces), never after the
    token an end level counts; ``key_bits``: 48 (6 bytes a key on disk; a false match needs
    one of 2^48 keys) or 64; ``rest``: the most pieces of a word still hidden right of a
    position that a key may skip (the module doc; needs ``continues`` and ``mask_id``)."""
    if context not in ("words", "tokens"):
        raise ValueError(f"context is 'words' or 'tokens', not {context!r}")
    if end_levels and not edges:
        raise ValueError("end levels need the ids that frame a text ('edges')")
    if rest and (continues is None or mask_id < 0):
        raise ValueError("keys past the rest of a word need 'continues' and 'mask_id'")
    memory = CorpusMemory(np.zeros(0, np.uint64), np.zeros(0, np.int64), np.zeros(0, np.int64),
                          classes.astype(np.int64), tuple(levels), float(beta), int(vocab_size),
                          context, tuple(end_levels), tuple(int(i) for i in edges), key_bits,
                          int(rest), int(mask_id))
    flat = np.fromiter((i for ex in examples for i in ex), dtype=np.int64)
    lengths = np.array([len(ex) for ex in examples], dtype=np.int64)
    start = np.repeat(np.cumsum(lengths) - lengths, lengths)
    end = start + np.repeat(lengths, lengths)                  # one past the example's last id
    t = np.nonzero(~np.isin(flat, np.array(sorted(special_ids), dtype=np.int64)))[0]
    word_end, rest_of = _word_ends(flat, end, classes, continues, context == "words")
    most = max(left for left, _ in memory.sides())
    words = context == "words"
    ctx = _context(classes, flat, start, end, t, most, most, words)
    hidden = (rest_of[t] > 0) & (rest_of[t] <= rest)          # pieces with keys past their word
    past = _context(classes, flat, start, end, word_end[t[hidden]], 0, most, words)
    keys, tokens = [], []
    for left, right in memory.sides():
        rows = slice(None) if right else word_end[t] == t       # an end level: word ends
        keys.append(context_keys(ctx[rows, most - left:most + right], left, right, key_bits))
        tokens.append(flat[t[rows]])
        if hidden.any():                                          # keys past the word's rest
            side = np.concatenate([ctx[hidden, most - left:most], past[:, :right]], axis=1)
            keys.append(context_keys(side, left, right, key_bits, rest_of[t[hidden]]))
            tokens.append(flat[t[hidden]])
    return _counted(memory, np.concatenate(keys), np.concatenate(tokens))


def _word_ends(flat: np.ndarray, end: np.ndarray, classes: np.ndarray,
               continues: np.ndarray | None, words: bool) -> tuple[np.ndarray, np.ndarray]:
    """For every position of ``flat``: the last position of its word, and how many pieces of
    the word follow it (neighbours only: punctuation pieces of a words context do not count).
    Without ``continues`` every token is a word."""
    idx = np.arange(len(flat))
    if continues is None:
        return idx, np.zeros(len(flat), dtype=np.int64)
    nxt = np.minimum(idx + 1, len(flat) - 1)
    last = (idx + 1 >= end) | ~continues[flat[nxt]]
    word_end = np.minimum.accumulate(np.where(last, idx, len(flat))[::-1])[::-1]
    kept = np.cumsum(classes[flat] != len(classes)) if words else idx + 1
    return word_end, kept[word_end] - kept


def _counted(memory: CorpusMemory, keys: np.ndarray, tokens: np.ndarray) -> CorpusMemory:
    """``memory`` holding the distinct (key, token) pairs with how often each occurs."""
    order = np.lexsort((tokens, keys))
    keys, tokens = keys[order], tokens[order]
    new = np.r_[True, (keys[1:] != keys[:-1]) | (tokens[1:] != tokens[:-1])]
    first = np.nonzero(new)[0]
    counts = np.diff(np.r_[first, len(keys)])
    memory.keys = keys[first]
    memory.tokens = tokens[first].astype(np.uint16 if memory.vocab_size <= 65536 else np.int32)
    memory.counts = counts.astype(np.uint16 if counts.max(initial=0) < 65536 else np.int32)
    return memory


def load_memory(path: Path, vocab_size: int, n_input_ids: int) -> CorpusMemory:
    """Read ``memory.safetensors`` (no pickle), checked against the model it sits beside."""
    try:
        with safe_open(str(path), framework="np") as f:
            meta = f.metadata() or {}
            levels, end_levels = _ints(meta["levels"]), _ints(meta.get("end_levels", ""))
            if len(levels) + len(end_levels) > MAX_LEVELS:
                raise ValueError(f"{len(levels) + len(end_levels)} levels, more than "
                                 f"{MAX_LEVELS}")
            arrays = {k: f.get_tensor(k) for k in ("tokens", "counts", "classes")}
            bits = _int(meta.get("key_bits", "64"))
            arrays["keys"] = f.get_tensor("keys") if bits == 64 else \
                f.get_tensor("keys_hi").astype(np.uint64) << np.uint64(16) | \
                f.get_tensor("keys_lo").astype(np.uint64)
        memory = CorpusMemory(**arrays, levels=levels, beta=float(meta["beta"]),
                              vocab_size=_int(meta["vocab_size"]),
                              context=meta.get("context", "tokens"), end_levels=end_levels,
                              edges=_ints(meta.get("edges", "")), key_bits=bits,
                              rest=_int(meta.get("rest", "0")),
                              mask_id=_int(meta.get("mask_id", "-1")))
    except (SafetensorError, OSError, KeyError, ValueError, TypeError) as e:
        reason = str(e).splitlines()[0][:160] if str(e).strip() else ""
        raise ModelLoadError(f"{path}: not a corpus memory ({type(e).__name__}: {reason})") \
            from None
    _check_values(memory, path, n_input_ids)
    _check(memory, path, vocab_size, n_input_ids)
    return memory


_INT = re.compile(r"-?[0-9]{1,18}")


def _int(text: str) -> int:
    """A whole number of the file's metadata: ASCII digits, at most 18 of them (ValueError)."""
    if not isinstance(text, str) or not _INT.fullmatch(text.strip()):
        raise ValueError(f"{str(text)[:20]!r} is not a whole number (ASCII digits)")
    return int(text)


def _ints(text: str) -> tuple[int, ...]:
    """A comma-separated list of at most :data:`MAX_LEVELS` whole numbers (ValueError)."""
    parts = [k for k in text.split(",") if k]
    if len(parts) > MAX_LEVELS:
        raise ValueError(f"{len(parts):,} numbers in a list, more than {MAX_LEVELS}")
    return tuple(_int(k) for k in parts)


def _check_values(m: CorpusMemory, path: Path, n_input_ids: int) -> None:
    """The values the arrays and numbers hold: ModelLoadError naming the file when a token id,
    count, class, level or beta is one no memory written by :func:`build_memory` has."""
    problem = None
    kinds = {name: getattr(m, name).dtype.kind for name in ("tokens", "counts", "classes")}
    if any(k not in "iu" for k in kinds.values()) or any(
            getattr(m, name).ndim != 1 for name in ("keys", "tokens", "counts", "classes")):
        problem = f"its token, count and class arrays must be 1-D whole numbers, not {kinds}"
    elif len(m.tokens) and int(m.tokens.min()) < 0:
        problem = f"a token id is negative ({int(m.tokens.min())})"
    elif len(m.counts) and not 1 <= int(m.counts.min()) <= int(m.counts.max()) < 2 ** 31:
        problem = f"its counts run from {int(m.counts.min())} to {int(m.counts.max())}, " \
                  f"not 1..{2 ** 31 - 1}"
    elif len(m.classes) and not 0 <= int(m.classes.min()) <= int(m.classes.max()) \
            <= outside_class(n_input_ids):
        problem = (f"its token classes run from {int(m.classes.min())} to "
                   f"{int(m.classes.max())}, outside 0..{outside_class(n_input_ids)}")
    elif max(m.levels + m.end_levels + (m.rest,)) > MAX_LEVEL:
        problem = (f"levels {m.levels} {m.end_levels} / rest {m.rest}: more than {MAX_LEVEL} "
                   "neighbours")
    elif not np.isfinite(m.beta):
        problem = f"beta {m.beta} is not a finite number"
    if problem:
        raise ModelLoadError(f"{path}: corpus memory does not fit this model: {problem}")


def _check(m: CorpusMemory, path: Path, vocab_size: int, n_input_ids: int) -> None:
    problem = None
    if m.vocab_size != vocab_size or len(m.classes) != n_input_ids:
        problem = (f"it was built for {m.vocab_size} output / {len(m.classes)} input ids, the model "
                   f"has {vocab_size} / {n_input_ids}")
    elif not (len(m.keys) == len(m.tokens) == len(m.counts)) or m.keys.dtype != np.uint64:
        problem = "its arrays do not match"
    elif len(m.keys) and (np.any(m.keys[1:] < m.keys[:-1]) or int(m.tokens.max()) >= vocab_size):
        problem = "its keys are not sorted or its tokens are outside the vocabulary"
    elif m.key_bits not in (48, 64):
        problem = f"its keys have {m.key_bits} bits, not 48 or 64"
    elif m.context not in ("words", "tokens"):
        problem = f"its context is {m.context!r}, not 'words' or 'tokens'"
    elif not m.levels or min(m.levels + m.end_levels) < 1 or not m.beta > 0:
        problem = f"levels {m.levels} {m.end_levels} / beta {m.beta} are not positive"
    elif (m.end_levels and not m.edges) or any(not 0 <= i < n_input_ids for i in m.edges):
        problem = f"its edge ids {m.edges} are not ids of this model"
    elif m.rest < 0 or (m.rest and not 0 <= m.mask_id < n_input_ids):
        problem = f"rest {m.rest} / mask id {m.mask_id} do not fit this model"
    if problem:
        raise ModelLoadError(f"{path}: corpus memory does not fit this model: {problem}")
