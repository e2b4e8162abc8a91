"""What a valid text is: every argument, file line and JSON string infill reads is checked here
before use (command-line arguments with invalid UTF-8 arrive as surrogate escapes)."""
from __future__ import annotations

from infill.errors import InputError

__all__ = ["check_text"]


def check_text(text: str, where: str) -> str:
    """``text`` if it is valid Unicode; InputError naming the first undecodable byte otherwise
    (arguments with invalid UTF-8 arrive as surrogate escapes)."""
    for i, c in enumerate(text):
        if "\udc80" <= c <= "\udcff":
            raise InputError(f"{where} is not valid UTF-8: byte 0x{ord(c) - 0xdc00:02x} at "
                             f"character {i + 1}")
        if "\ud800" <= c <= "\udfff":
            raise InputError(f"{where} holds an unpaired surrogate (U+{ord(c):04X}) at "
                             f"character {i + 1}")
    return text
