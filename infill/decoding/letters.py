"""Letter sets as token masks: which tokens may be placed at each gap position.

``letters`` (:func:`infill.fill`, :class:`~infill.jobs.fill.FillRequest`, ``"letters"`` in JSON)
gives, per gap of a text (in text order), None (any token) or a list with one entry per position
of the gap: None, or the tokens allowed there -- a string of characters (each one token:
character and protein models; ``"ηιν"``, ``"ILV"``; a Latin model's ``u`` or ``v`` allows
both, one letter on the stone) or a list of token strings (any model, ``["cat", "dog"]``). At token level (:func:`infill.decode`, :func:`infill.mcmc.mh`) ``letters``
maps a gap position to its entry. Here they become [V] bool masks, intersected with what the
model lets a gap take (:meth:`~infill.models.base.MaskedLM.allowed_mask`): the beam engine, the
sampling selectors and the MH kernel place only those tokens (METHODS §1.6 says how scores stay
normalized).

``lacuna_edges="letters"`` (:func:`apply_edges`) is a set too: at the first and last position
of each lacuna (a run of adjacent gap positions) every token but the word space.

A fixed reading (one token per position) is a letter set of one token each:
``position_masks(model, {p: [t] ...}, positions)``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from infill.lazy import torch

from infill.data.greek import Alphabet, normalize
from infill.data.letters import check_letters, entry_tokens
from infill.errors import InputError

__all__ = ["apply_edges", "apply_letters", "check_letters", "edge_positions", "entry_ids",
           "letter_masks", "position_masks", "reported_edges", "undivided_mask", "word_space_id"]


def _token_id(model, token, where: str) -> int:
    """The output id of one allowed token: as written, else as the model reads the letter
    (Greek: lowercase, unaccented, final sigma as σ); InputError outside the alphabet."""
    if isinstance(token, int):
        ids = [token] if 0 <= token < model.vocab_size else []
    else:
        ids = []
        for t in _spellings(model, token):
            try:
                ids.append(int(model.token_to_id(t)))
                break
            except Exception:           # an adapter's own error for an unknown token
                continue
    if not ids or not 0 <= ids[0] < model.vocab_size:
        raise InputError(f"letters ({where}): {token!r} is not a letter (token) of the "
                         "model's alphabet", field="letters")
    return ids[0]


def _spellings(model, token: str) -> list[str]:
    """``token`` and, for a model with a Greek-style alphabet, the letter as it reads it."""
    out = [token]
    alphabet = getattr(model, "alphabet", None)
    if alphabet is not None and len(token) == 1:
        kw = {"alphabet": alphabet} if isinstance(alphabet, Alphabet) else {}
        norm = normalize(token, symbols=False, **kw)
        if len(norm) == 1 and norm != token:
            out.append(norm)
    return out


def entry_ids(model, entry, where: str = "a position", allow_special: bool = False) -> list[int]:
    """The output ids one entry allows; InputError (naming 'letters') for a letter outside the
    model's alphabet, an empty set, or a token that may not fill a gap (a special one)."""
    base = model.allowed_mask(allow_special)
    ids = []
    for t in entry_tokens(entry, where):
        i = _token_id(model, t, where)
        if not bool(base[i]):
            raise InputError(f"letters ({where}): {t!r} may not be placed in a gap (a special "
                             "symbol; allow_special lifts that)", field="letters")
        ids += [j for j in _on_the_stone(model, t, i) if j not in ids]
    return ids


def _on_the_stone(model, token, i: int) -> list[int]:
    """The ids a letter ``token`` (id ``i``) of a set stands for: itself, and for a Latin
    model's ``u`` or ``v`` both, one letter (V) on the stone (EDH writes ``v`` the consonant)."""
    alphabet = getattr(model, "alphabet", None)
    if not isinstance(token, str) or not isinstance(alphabet, Alphabet) \
            or alphabet.name != "Latin":
        return [i]
    pair = [alphabet.index["u"], alphabet.index["v"]]
    return pair if i in pair else [i]


def _mask(model, ids: list[int]) -> torch.Tensor:
    m = torch.zeros(model.vocab_size, dtype=torch.bool)
    m[ids] = True
    return m


def letter_masks(model, letters, gaps: Sequence[Sequence[int]], allow_special: bool = False
                 ) -> dict[int, torch.Tensor]:
    """Position -> [V] mask of the tokens allowed there, from ``letters`` (one entry per gap of
    an encoding's ``gaps``); InputError (naming 'letters') when the counts do not match."""
    check_letters(letters)
    if letters is None:
        return {}
    if len(letters) != len(gaps):
        raise InputError(f"letters has {len(letters)} entries for a text with {len(gaps)} gaps "
                         "(one per gap, None for a gap without sets)", field="letters")
    out = {}
    for k, (entry, gap) in enumerate(zip(letters, gaps), 1):
        if entry is None:
            continue
        if len(entry) != len(gap):
            raise InputError(f"letters: gap {k} has {len(gap)} positions, got {len(entry)} "
                             "entries (one per position, None for any)", field="letters")
        for j, (e, p) in enumerate(zip(entry, gap), 1):
            if e is not None:
                out[p] = _mask(model, entry_ids(model, e, f"gap {k}, position {j}",
                                                allow_special))
    return out


def position_masks(model, letters: Mapping | None, positions: Sequence[int],
                   allow_special: bool = False) -> torch.Tensor | None:
    """[n, V] tokens allowed at each of ``positions`` (sorted) from ``letters`` {position:
    entry} (token level); None without letters. InputError for a position that is not a gap."""
    if letters is None:
        return None
    if not isinstance(letters, Mapping):
        raise InputError("letters (token level) maps a gap position to its allowed tokens, got "
                         f"{type(letters).__name__}", field="letters")
    order = sorted(int(p) for p in positions)
    extra = sorted(set(letters) - set(order), key=str)
    if extra:
        raise InputError(f"letters: position {extra[0]!r} is not a gap position (the gaps are "
                         f"at {order})", field="letters")
    out = model.allowed_mask(allow_special).expand(len(order), -1).clone()
    for n, p in enumerate(order):
        if letters.get(p) is not None:
            out[n] = _mask(model, entry_ids(model, letters[p], f"position {p}", allow_special))
    return out


def apply_letters(model, variants: list, letters, allow_special: bool = False) -> None:
    """Each length variant (:class:`~infill.decoding.lengths.Variant`) with the masks of
    ``letters`` added to its ``allowed`` (intersected with a whole-word gap's), in place. A gap
    of uncertain length takes no per-position sets (InputError)."""
    if letters is None:
        return
    check_letters(letters)
    sizes = [tuple(len(g) for g in v.encoding.gaps) for v in variants]
    for k, entry in enumerate(letters):
        if entry is not None and len({s[k] for s in sizes if k < len(s)}) > 1:
            raise InputError(f"letters: gap {k + 1} has an uncertain length; letter sets need a "
                             "gap of known length", field="letters")
    for v in variants:
        for p, m in letter_masks(model, letters, v.encoding.gaps, allow_special).items():
            v.allowed[p] = m & v.allowed[p] if p in v.allowed else m


def word_space_id(model) -> int | None:
    """The output id of the word space of a model that writes one (a character model's
    alphabet), else None (word pieces, residues: no gap holds a space)."""
    space = getattr(getattr(model, "alphabet", None), "space", None)
    if not isinstance(space, str):
        return None
    try:
        i = int(model.token_to_id(space))
    except Exception:               # an adapter's own error for a token it lacks
        return None
    return i if 0 <= i < model.vocab_size else None


def edge_positions(gaps: Sequence[Sequence[int]]) -> list[int]:
    """The first and last position of each lacuna: a run of adjacent gap positions (the ``?``
    of ``d???s`` are three one-character gaps and one lacuna)."""
    order = sorted({p for g in gaps for p in g})
    return [p for k, p in enumerate(order)
            if k == 0 or order[k - 1] != p - 1 or k == len(order) - 1 or order[k + 1] != p + 1]


def apply_edges(model, variants: list, allow_special: bool = False) -> None:
    """``lacuna_edges="letters"``: no length variant places the word space at the first or
    last position of a lacuna (a space beside a lost word lies outside it, as Leiden brackets
    it), in place; nothing for a model that writes no word space. (A letter set never holds the
    space, so every edge keeps a letter.)"""
    _no_space(model, variants, lambda enc: edge_positions(enc.gaps), allow_special)


def apply_undivided(model, variants: list, allow_special: bool = False) -> None:
    """A text typed without word division (``encoding.undivided``,
    :mod:`infill.models.continua`): no length variant places the word space anywhere in a
    lacuna -- each ``?`` is a letter of the stone -- in place."""
    _no_space(model, variants, lambda enc: enc.positions if getattr(enc, "undivided", False)
              else [], allow_special)


def undivided_mask(model, encoding, allow_special: bool = False) -> torch.Tensor | None:
    """The tokens any gap position of ``encoding`` may take where its text is typed without
    word division (every token but the word space: :func:`apply_undivided`'s rule for one
    encoding, as the pairwise joints read it), else None (no restriction)."""
    space = word_space_id(model)
    if space is None or not getattr(encoding, "undivided", False):
        return None
    m = model.allowed_mask(allow_special).clone()
    m[space] = False
    return m


def _no_space(model, variants: list, where, allow_special: bool) -> None:
    """The word space taken from the tokens allowed at ``where(encoding)`` of each variant."""
    space = word_space_id(model)
    if space is None:
        return
    base = model.allowed_mask(allow_special)
    for v in variants:
        for p in where(v.encoding):
            m = (v.allowed[p] if p in v.allowed else base).clone()
            m[space] = False
            v.allowed[p] = m


def reported_edges(model, edges: str | None) -> str | None:
    """The ``lacuna_edges`` a result reports: the rule that ran for a model that writes word
    spaces; for one that writes none (word pieces, residues) ``letters`` only -- no gap can begin
    or end with a space there, so the rule holds by construction -- and nothing for ``any``."""
    if word_space_id(model) is not None or edges == "letters":
        return edges
    return None
