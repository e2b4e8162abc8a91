"""Reading what users hand us: one policy for text encodings, used by every command.

- A byte-order mark decides: UTF-8 (BOM dropped), UTF-16 LE/BE, UTF-32 LE/BE.
- Without one, text that looks like UTF-16 (NUL in every other byte) is read as UTF-16.
- Everything else must be UTF-8; otherwise :class:`InputError` names the file, the line and the
  byte offset of the first invalid byte -- never a silent replacement character.
- Command-line arguments that were not valid UTF-8 (Python keeps such bytes as surrogate
  escapes) get the same one-line error (:func:`check_text`).
"""
from __future__ import annotations

import codecs
import os
import re
import stat
import sys
import warnings
from pathlib import Path

from infill.errors import InputError, ModelLoadError
from infill.lazy import LazyModule, torch
from infill.text import check_text  # noqa: F401 - re-exported: read from here too

json = LazyModule("json")              # on first use: the command line's help reads this module
lzma = LazyModule("lzma")
tempfile = LazyModule("tempfile")

__all__ = ["check_length", "check_memory", "check_text", "corpus_text", "decode_bytes", "ensure_dir", "files_of",
           "input_chars_limit", "input_limit", "path_label", "path_record", "parse_json", "read_bytes", "read_input", "read_json", "read_lines",
           "read_stdin", "read_text", "memory_gb", "memory_limit", "parse_count"]

MAX_FILE_BYTES = 2 * 2 ** 30
MAX_INPUT_BYTES = 64 * 2 ** 20
"""Bytes of one command input (file or stdin); more is refused (``INFILL_MAX_INPUT_BYTES``)."""
MAX_INPUT_CHARS = 200_000
"""Characters of one input text; a longer one is refused before any work
(``INFILL_MAX_INPUT_CHARS``)."""
_CHUNK = 1 << 20

_BOMS = [(codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
         (codecs.BOM_UTF16_BE, "utf-16-be")]


def _utf16_guess(data: bytes) -> str | None:
    """UTF-16 without a BOM: ASCII-heavy text has NUL in every other byte."""
    if len(data) < 4 or len(data) % 2:
        return None
    even, odd = data[0::2].count(0), data[1::2].count(0)
    half = len(data) // 2
    if odd > 0.4 * half and even < 0.05 * half:
        return "utf-16-le"
    if even > 0.4 * half and odd < 0.05 * half:
        return "utf-16-be"
    return None


def decode_bytes(data: bytes, name: str) -> str:
    """Text of ``data`` under the policy above; ``name`` (a file name, ``<stdin>``) is used in errors."""
    for bom, enc in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom):].decode(enc)
            except UnicodeDecodeError as e:
                raise InputError(f"{name}: invalid {enc.upper()} text at byte offset "
                                 f"{e.start + len(bom)}") from None
    guess = _utf16_guess(data)
    if guess:
        try:
            return data.decode(guess)
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1)
        raise InputError(f"{name}: not UTF-8 text: byte 0x{data[e.start]:02x} at line {line}, byte "
                         f"{col + 1} (offset {e.start}); save the file as UTF-8 "
                         "(or UTF-16 with a byte-order mark)") from None


def read_bytes(path: str | Path, what: str = "file", limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a file, at most ``limit`` of them (and at most :func:`input_limit` from a
    device or pipe, which may never end): read in chunks, never trusting the size the file
    system reports (0 for /dev/zero and pipes). InputError if it is missing, a directory,
    unreadable or longer than its limit (the limit is named)."""
    p = Path(path)
    data, total = b"", 0
    try:
        is_dir = p.is_dir()
    except (OSError, ValueError):
        is_dir = False
    if is_dir:
        raise InputError(f"{what} {str(p)!r} is a directory")
    try:
        with open(p, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):    # a device or pipe may never end
                limit = min(limit, input_limit())
            if stat.S_ISREG(st.st_mode) and st.st_size > limit:   # a regular file says so at once
                total = st.st_size
            else:
                data, total = _read_at_most(f, limit)
    except (FileNotFoundError, ValueError):    # ValueError: a name no file can have (NUL)
        raise InputError(f"{what} not found: {str(p)!r}") from None
    except OSError as e:
        raise InputError(f"cannot read {what} {str(p)!r}: {e.strerror or e}") from None
    if total > limit:
        raise InputError(f"{what} {str(p)!r} is longer than the {_size(limit)} limit"
                         f"{_limit_hint(limit)}")
    return data


def _read_at_most(stream, limit: int) -> tuple[bytes, int]:
    """Up to ``limit + 1`` bytes of a binary stream, in chunks (a stream longer than ``limit``
    shows as ``total > limit``); never more, whatever the stream is."""
    chunks, total = [], 0
    while total <= limit:
        chunk = stream.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks), total


def read_text(path: str | Path, what: str = "file", limit: int = MAX_FILE_BYTES) -> str:
    """The whole text of a file (InputError if missing, a directory, longer than ``limit``
    bytes or undecodable)."""
    return decode_bytes(read_bytes(path, what, limit), str(path))


def read_lines(path: str | Path | tuple[str | Path, ...], what: str = "file") -> list[str]:
    """Lines of a file, without their line ends; of several files (a tuple), one after another.
    A file whose name ends in ``.xz`` is read decompressed (the Latin corpus ships so)."""
    return [line for p in files_of(path) for line in corpus_text(p, what).splitlines()]


def corpus_text(path: Path, what: str) -> str:
    """The text of a corpus file, decompressed when its name ends in ``.xz`` (at most
    MAX_FILE_BYTES either way)."""
    if path.suffix != ".xz":
        return read_text(path, what)
    packed = read_bytes(path, what)
    try:
        data = lzma.LZMADecompressor().decompress(packed, max_length=MAX_FILE_BYTES + 1)
    except lzma.LZMAError as e:
        raise InputError(f"{what} {str(path)!r} is not valid xz ({e})") from None
    if len(data) > MAX_FILE_BYTES:
        raise InputError(f"{what} {str(path)!r} decompresses to more than the "
                         f"{_size(MAX_FILE_BYTES)} limit")
    return decode_bytes(data, str(path))


def files_of(path: str | Path | tuple[str | Path, ...]) -> tuple[Path, ...]:
    """The files of a corpus given as one path or as a tuple of paths read one after another."""
    return tuple(Path(p) for p in path) if isinstance(path, tuple) else (Path(path),)


def path_label(path: str | Path | tuple[str | Path, ...]) -> str:
    """A corpus path for a person: its files joined by `` + ``."""
    return " + ".join(str(p) for p in files_of(path))


def path_record(path: str | Path | tuple[str | Path, ...]) -> str | list[str]:
    """A corpus path as a training record writes it: a string, or a list for several files."""
    return [str(p) for p in path] if isinstance(path, tuple) else str(path)


def read_input(path: str | Path | None, what: str = "input file") -> tuple[str, str]:
    """(text, name) of a command's input: the file ``path``, or standard input for None / '-';
    at most :func:`input_limit` bytes either way (an endless device or pipe is refused once it
    passes it). A FIFO (named pipe) is read like ``cat`` reads it: opening it waits for a writer."""
    limit = input_limit()
    if path is None or str(path) == "-":
        return read_stdin(limit), "<stdin>"
    return read_text(path, what, limit), str(path)


def input_limit() -> int:
    """Bytes a command reads from one input file or stdin: :data:`MAX_INPUT_BYTES`, or the
    environment's ``INFILL_MAX_INPUT_BYTES``."""
    return _env_limit("INFILL_MAX_INPUT_BYTES", MAX_INPUT_BYTES)


def input_chars_limit() -> int:
    """Characters of one input text (one line / FASTA record): :data:`MAX_INPUT_CHARS`, or the
    environment's ``INFILL_MAX_INPUT_CHARS``."""
    return _env_limit("INFILL_MAX_INPUT_CHARS", MAX_INPUT_CHARS)


def check_length(text: str, where: str) -> str:
    """``text`` unless it is longer than :func:`input_chars_limit` characters (InputError
    naming the limit: refused at once, before any work on it)."""
    limit = input_chars_limit()
    if len(text) > limit:
        raise InputError(f"{where} is {len(text):,} characters long, over the limit of "
                         f"{limit:,} per input (set INFILL_MAX_INPUT_CHARS to raise it)")
    return text


def _env_limit(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise InputError(f"{name} must be a positive whole number, not {raw[:40]!r}")
    return value


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale:,} {unit}"
    return f"{n:,}-byte"


def _limit_hint(limit: int) -> str:
    return (" (set INFILL_MAX_INPUT_BYTES to raise it)" if limit == input_limit() else "")


# ---- JSON -------------------------------------------------------------------------------------
MAX_JSON_DEPTH = 100
"""Nesting depth of the JSON infill reads (configs, rows): real files nest a few levels; a file
nested thousands deep would overflow the parser's recursion."""
MAX_JSON_BYTES = 64 * 2 ** 20
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def parse_json(text: str | bytes, where: str, error: type[Exception] = InputError):
    """``json.loads`` for text from a file or a request: nesting beyond :data:`MAX_JSON_DEPTH`
    and invalid JSON become ``error`` naming ``where`` (never a RecursionError)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise error(f"{where}: not UTF-8 text (byte offset {e.start})") from None
    brackets = text.count("[") + text.count("{")       # cheap: few brackets, shallow JSON
    depth = json_depth(text) if brackets > MAX_JSON_DEPTH else 0
    if depth > MAX_JSON_DEPTH:
        raise error(f"{where}: JSON nested {depth:,} levels deep (at most {MAX_JSON_DEPTH})")
    try:
        return json.loads(text)
    except RecursionError:      # cannot happen below the depth bound; kept as a last guard
        raise error(f"{where}: JSON nested too deeply") from None
    except ValueError as e:
        raise error(f"{where}: not valid JSON ({getattr(e, 'msg', None) or str(e)[:80]})") from None


def json_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` outside strings (linear; no recursion)."""
    bare = _STRINGS.sub('""', text) if '"' in text else text
    depth = deepest = 0
    for c in re.findall(r"[\[\]{}]", bare):
        depth += 1 if c in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def read_json(path: str | Path, what: str = "file", error: type[Exception] = InputError,
              limit: int = MAX_JSON_BYTES):
    """The JSON value of a file, read with a size and a depth bound (see :func:`parse_json`);
    every failure is one ``error`` naming ``what`` and the file."""
    try:
        text = decode_bytes(read_bytes(path, what, limit), str(path))
    except InputError as e:
        raise error(str(e)) from None
    return parse_json(text, f"{what} {str(path)!r}", error)


# ---- sizes read from files ---------------------------------------------------------------------
MEMORY_ENV = "INFILL_MAX_MEMORY_GB"
_COUNT = re.compile(r"[0-9]+")


def parse_count(text: str, limit: int) -> int:
    """A whole number written in ASCII digits (surrounding spaces allowed), at most ``limit``:
    ValueError (its message says why) for anything else -- never int() of thousands of digits,
    nor of non-ASCII digits such as ``²``."""
    s = text.strip() if isinstance(text, str) else ""
    if not _COUNT.fullmatch(s):
        raise ValueError("not a whole number in ASCII digits")
    digits = s.lstrip("0") or "0"
    if len(digits) > len(str(limit)) or int(digits) > limit:
        raise ValueError(f"over the limit of {limit:,}")
    return int(digits)


MAX_MEMORY_GB = 2 ** 20
"""The largest ``INFILL_MAX_MEMORY_GB`` read (1 PiB): more is a typo, and its bytes overflow."""


def memory_gb() -> float | None:
    """``INFILL_MAX_MEMORY_GB`` read: None when unset; InputError naming the variable for
    anything but a number in (0, :data:`MAX_MEMORY_GB`] (nan, inf, 1e300, words)."""
    raw = os.environ.get(MEMORY_ENV, "").strip()
    if not raw:
        return None
    try:
        gb = float(raw)
    except ValueError:
        gb = float("nan")
    if not 0 < gb <= MAX_MEMORY_GB:          # nan fails too
        raise InputError(f"{MEMORY_ENV} must be a positive number of GiB, at most "
                         f"{MAX_MEMORY_GB:,}, not {raw[:40]!r}")
    return gb


def memory_limit() -> int:
    """Bytes a model read from a file may take: ``INFILL_MAX_MEMORY_GB`` when set, else the
    machine's physical memory (1 TiB when unknown)."""
    gb = memory_gb()
    if gb is not None:
        return int(gb * 2 ** 30)
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 2 ** 40


def check_memory(nbytes: int, what: str, error: type[Exception] = ModelLoadError) -> None:
    """``error`` naming ``what`` when ``nbytes`` (a size a file declares) exceeds
    :func:`memory_limit` -- checked before anything is allocated."""
    limit = memory_limit()
    if nbytes > limit:
        need = f"{nbytes / 2 ** 30:,.1f}" if nbytes < 2 ** 90 else "over 10^18"
        raise error(f"{what} would need {need} GiB of memory, more than the "
                    f"{limit / 2 ** 30:,.1f} GiB allowed ({MEMORY_ENV} or this machine's memory)")


def read_stdin(limit: int | None = None) -> str:
    """All of standard input as text (same policy), at most ``limit`` bytes
    (:func:`input_limit` by default)."""
    limit = input_limit() if limit is None else limit
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        data = sys.stdin.read(limit + 1)
        if len(data) > limit:
            raise InputError(f"<stdin> is longer than the {_size(limit)} limit{_limit_hint(limit)}")
        return check_text(data, "<stdin>") if isinstance(data, str) else decode_bytes(data, "<stdin>")
    data, total = _read_at_most(stream, limit)
    if total > limit:
        raise InputError(f"<stdin> is longer than the {_size(limit)} limit{_limit_hint(limit)}")
    return decode_bytes(data, "<stdin>")


def read_torch_file(path: str | Path, what: str, allow: tuple = ()) -> object:
    """``torch.load`` with ``weights_only=True``: tensors, numbers, strings and containers, plus
    the plain classes in ``allow`` -- a file that would run code is refused. Any failure is a
    ModelLoadError naming ``what`` and the file."""
    try:
        with warnings.catch_warnings(), torch.serialization.safe_globals(list(allow)):
            warnings.simplefilter("ignore")   # torch's notes on refused pickles: the error says it
            return torch.load(str(path), map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - corrupt, truncated, unsafe: all a load error
        text = str(e).strip()
        if text.startswith("Weights only load failed"):
            # torch's advice (reload with weights_only=False) is what must not be done with a
            # file from elsewhere: say what was refused instead
            detail = text.split("WeightsUnpickler error:", 1)[-1].strip().splitlines()
            reason = ("not a plain tensor checkpoint (a safe load refused it"
                      + (f": {detail[0][:120]}" if detail and detail[0] else "") + ")")
        else:
            reason = text.splitlines()[0][:200] if text else type(e).__name__
        raise ModelLoadError(f"cannot read {what} {str(path)!r}: {reason}") from None


def ensure_dir(path: str | Path, what: str = "output folder", field: str | None = None) -> Path:
    """Create a folder (and its parents) for writing; InputError naming it (``what``, and the
    request ``field`` that gave it) when that fails."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
        # a probe file of this process's own: ranks of a sharded run check a shared folder at once
        with tempfile.NamedTemporaryFile(dir=p, prefix=".infill-write-test-"):
            pass
    except OSError as e:
        raise InputError(f"cannot write to {what} {str(p)!r}: {e.strerror or e}",
                         field=field) from None
    return p
