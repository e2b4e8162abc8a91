"""Context windows for inputs longer than the model's maximum length.

An input keeps its leading and trailing special tokens (cls/bos, sep/eos) and a window of its
ordinary tokens, as wide as the model allows and centred on the gap(s) it serves, shifted
inwards where it would cross the text's ends. Gaps that fit in one window are decoded together
(jointly); gaps too far apart get one window each and are decoded independently.
"""
from __future__ import annotations

from dataclasses import dataclass

from infill.errors import InputError

__all__ = ["Window", "body_bounds", "plan_windows", "truncate", "windows_for"]


@dataclass(frozen=True)
class Window:
    """ids[:lo] + ids[left:right] + ids[hi:] is the model input; ``gaps`` are the indices of
    the gaps it decodes."""

    left: int
    right: int
    gaps: tuple[int, ...]

    def ids(self, ids: list[int], lo: int, hi: int) -> list[int]:
        return list(ids[:lo]) + list(ids[self.left:self.right]) + list(ids[hi:])

    def shift(self, lo: int) -> int:
        """Add to a position in [left, right) to get its position in the window's input."""
        return lo - self.left


def body_bounds(ids: list[int], special: set[int]) -> tuple[int, int]:
    """(lo, hi): ids[:lo] and ids[hi:] are the leading / trailing special tokens."""
    lo = 0
    while lo < len(ids) and ids[lo] in special:
        lo += 1
    hi = len(ids)
    while hi > lo and ids[hi - 1] in special:
        hi -= 1
    return lo, hi


def _centred(first: int, last: int, width: int, lo: int, hi: int) -> int:
    """Left edge of a ``width`` window of [lo, hi) centred on [first, last)."""
    left = (first + last) // 2 - width // 2
    return max(lo, min(left, hi - width))


def plan_windows(n_ids: int, gaps: list[list[int]], lo: int, hi: int,
                 max_length: int) -> list[Window]:
    """Windows covering every gap of an input of ``n_ids`` ids whose body is [lo, hi).

    Gaps are taken in order; a window grows to the next gap while all of them fit its width.
    Raises InputError when a single gap (or the specials) leave no room."""
    width = max_length - lo - (n_ids - hi)
    if n_ids <= max_length:
        return [Window(lo, hi, tuple(range(len(gaps))))]
    order = sorted(range(len(gaps)), key=lambda k: min(gaps[k]))
    out: list[Window] = []
    group: list[int] = []
    for k in order:
        span = [p for j in group + [k] for p in gaps[j]]
        if group and max(span) + 1 - min(span) > width:
            out.append(_window(gaps, group, width, lo, hi))
            group = []
        if max(gaps[k]) + 1 - min(gaps[k]) > width:
            raise InputError(f"a gap of {max(gaps[k]) + 1 - min(gaps[k])} tokens does not fit the "
                             f"model's maximum length {max_length}")
        group.append(k)
    out.append(_window(gaps, group, width, lo, hi))
    return out


def _window(gaps, group, width, lo, hi) -> Window:
    span = [p for j in group for p in gaps[j]]
    left = _centred(min(span), max(span) + 1, width, lo, hi)
    return Window(left, left + width, tuple(sorted(group)))


def truncate(ids: list[int], start: int, n: int, lo: int, hi: int,
             max_length: int) -> tuple[list[int], int]:
    """One contiguous gap ids[start:start+n]: (window ids, the gap's start in them)."""
    if len(ids) <= max_length:
        return list(ids), start
    width = max_length - lo - (len(ids) - hi)
    if width < n:
        raise InputError(f"max_length {max_length} leaves no room for a gap of {n}")
    left = _centred(start, start + n, width, lo, hi)
    return list(ids[:lo]) + list(ids[left:left + width]) + list(ids[hi:]), start - left + lo


def windows_for(model, ids: list[int], gaps: list[list[int]], window: bool = True
                ) -> tuple[list[Window], int, int]:
    """(windows, lo, hi) for a model input with ``gaps``: one window of everything when it fits
    ``model.max_length``; else context windows (``window=False``: the length error)."""
    n = len(ids)
    if n <= model.max_length:
        return [Window(0, n, tuple(range(len(gaps))))], 0, n
    if not window:
        model.check_length(n)
    structural = {t for t in ids if t >= model.vocab_size or t in model.special_ids}
    lo, hi = body_bounds(ids, structural - {model.mask_id})
    return plan_windows(n, gaps, lo, hi, model.max_length), lo, hi
