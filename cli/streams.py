"""Standard output and error under Unix conventions: a closed or full stdout is one error line
(exit 2), a reader that went away (``| head``) ends the command quietly, and characters the
output encoding cannot show are written as backslash escapes, with one note saying so."""
from __future__ import annotations

import codecs
import errno
import io
import os
import sys

WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EBADF})
"""A write that failed with one of these lost output: ``Error: cannot write output: ...``."""

LOSSY = "infill.lossy"
"""The error handler of stdout and stderr: backslash escapes, remembering that it was used."""
_lossy: list[str] = []


def _escape(err: UnicodeEncodeError):
    if not _lossy:
        _lossy.append(err.encoding)
    return codecs.backslashreplace_errors(err)


codecs.register_error(LOSSY, _escape)


class PipeClosed(Exception):
    """stdout's reader went away (EPIPE): raised past click, which would exit 1."""


class ClosedStream(io.TextIOBase):
    """What stdout is when the command was started with it closed (``>&-``): every write fails
    (EBADF) instead of Python's None, which click takes as "print nothing"."""

    encoding = "utf-8"

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")


def prepare() -> None:
    """At entry: a closed stdout becomes a :class:`ClosedStream`; stdout and stderr escape what
    their encoding cannot show instead of raising UnicodeEncodeError."""
    if sys.stdout is None:
        sys.stdout = ClosedStream()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors=LOSSY)
        except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
            pass                         # not a TextIOWrapper (a test runner's capture)


def lossy_note() -> str | None:
    """The one note to print when some characters were escaped (None when none were)."""
    if not _lossy:
        return None
    return (f"Warning: the output encoding ({_lossy[0]}) cannot show some characters; they are "
            "written as backslash escapes (set PYTHONIOENCODING=utf-8 to see them)")


def write_error(e: OSError) -> str | None:
    """``cannot write output: ...`` for an OSError that lost output (full disk, closed or bad
    stdout); None for any other OSError."""
    if e.errno not in WRITE_ERRNOS:
        return None
    where = f"{e.filename}: " if e.filename else ""
    return f"cannot write output: {where}{e.strerror or e}"


def discard_stdout() -> None:
    """Point stdout's file descriptor at /dev/null, so that flushing what is still buffered at
    exit neither fails nor prints "Exception ignored" (the reader is gone, or the disk full)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


def flush_stdout() -> None:
    """Flush stdout now (inside the command's error handling, not at interpreter exit)."""
    if sys.stdout is not None:
        sys.stdout.flush()
