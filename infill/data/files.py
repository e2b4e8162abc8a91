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
import pickle
import sys
import tempfile
from pathlib import Path

from infill.errors import InputError, ModelLoadError

__all__ = ["check_text", "decode_bytes", "ensure_dir", "read_lines", "read_pickle_file",
           "read_stdin", "read_text"]

MAX_FILE_BYTES = 2 * 2 ** 30

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


def read_text(path: str | Path, what: str = "file") -> str:
    """The whole text of a file (InputError if missing, a directory, too large or undecodable)."""
    p = Path(path)
    try:
        if p.is_dir():
            raise InputError(f"{what} {str(p)!r} is a directory")
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InputError(f"{what} {str(p)!r} is {size / 2 ** 30:.1f} GiB, over the "
                             f"{MAX_FILE_BYTES // 2 ** 30} GiB limit")
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{what} not found: {str(p)!r}") from None
    except OSError as e:
        raise InputError(f"cannot read {what} {str(p)!r}: {e.strerror or e}") from None
    return decode_bytes(data, str(p))


def read_lines(path: str | Path, what: str = "file") -> list[str]:
    """Lines of a file, without their line ends."""
    return read_text(path, what).splitlines()


def read_stdin() -> str:
    """All of standard input as text (same policy)."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        data = sys.stdin.read()
        return check_text(data, "<stdin>") if isinstance(data, str) else decode_bytes(data, "<stdin>")
    return decode_bytes(stream.read(), "<stdin>")


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


def read_torch_file(path: str | Path, what: str, allow: tuple = ()) -> object:
    """``torch.load`` with ``weights_only=True``: tensors, numbers, strings and containers, plus
    the plain classes in ``allow`` -- a file that would run code is refused. Any failure is a
    ModelLoadError naming ``what`` and the file."""
    import warnings

    import torch
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



def _pickle_globals() -> dict:
    """The only globals a pickle read by :func:`read_pickle_file` may name, each mapped to a
    harmless stand-in: numpy arrays, scalars and dtypes; flax's FrozenDict (read as a dict);
    a jax Array (rebuilt as the numpy array it wraps); a few plain containers."""
    import collections

    import numpy as np
    from numpy._core import multiarray
    from numpy._core.numeric import _frombuffer

    def reconstruct(cls, shape, dtype_code):
        if cls is not np.ndarray:
            raise pickle.UnpicklingError(f"refused array subclass {cls!r}")
        return multiarray._reconstruct(np.ndarray, shape, dtype_code)

    def jax_array(fun, args, arr_state, aval_state=None):
        # what jax.Array.__reduce__ gives: an ndarray built by numpy's own pickle recipe
        if fun is not reconstruct:
            raise pickle.UnpicklingError("refused a jax array not built from numpy")
        arr = fun(*args)
        arr.__setstate__(arr_state)
        return arr

    def latin1(text, encoding="latin1"):   # how protocol-2 pickles carry bytes
        if not isinstance(text, str) or encoding != "latin1":
            raise pickle.UnpicklingError("refused _codecs.encode call")
        return text.encode("latin1")

    table = {("numpy", "ndarray"): np.ndarray, ("numpy", "dtype"): np.dtype,
             ("jax._src.array", "_reconstruct_array"): jax_array,
             ("flax.core.frozen_dict", "FrozenDict"): dict,
             ("collections", "OrderedDict"): dict, ("builtins", "set"): set,
             ("builtins", "frozenset"): frozenset, ("_codecs", "encode"): latin1,
             ("__builtin__", "set"): set, ("__builtin__", "frozenset"): frozenset}
    for module in ("numpy._core.multiarray", "numpy.core.multiarray"):
        table[(module, "_reconstruct")] = reconstruct
        table[(module, "scalar")] = multiarray.scalar
    for module in ("numpy._core.numeric", "numpy.core.numeric"):
        table[(module, "_frombuffer")] = _frombuffer
    return table


class _RestrictedUnpickler(pickle.Unpickler):
    """Unpickles only what :func:`_pickle_globals` allows; any other global is refused before
    it is looked up, so nothing named in the file ever runs."""

    allowed: dict = {}

    def find_class(self, module: str, name: str):
        try:
            return self.allowed[(module, name)]
        except KeyError:
            raise _Refused(f"{module}.{name}") from None

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("persistent ids are not allowed")


class _Refused(Exception):
    """A pickle named a global outside the allow-list."""


def _check_arrays(obj, depth: int = 0) -> None:
    """Refuse object arrays (and absurd nesting) in an unpickled tree."""
    import numpy as np
    if depth > 64:
        raise pickle.UnpicklingError("nested more than 64 levels deep")
    if isinstance(obj, np.ndarray) and obj.dtype.hasobject:
        raise pickle.UnpicklingError("an array of Python objects")
    items = obj.items() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()
    for item in items:
        _check_arrays(item, depth + 1)


def read_pickle_file(path: str | Path, what: str) -> object:
    """A pickle made of plain containers, numbers, strings and numpy arrays (flax FrozenDicts
    read as dicts, jax Arrays as numpy arrays): how JAX checkpoints such as Ithaca's are saved.
    Any other global is refused with a ModelLoadError naming it; nothing in the file runs."""
    import io

    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ModelLoadError(f"{what} {str(p)!r} is {size / 2 ** 30:.1f} GiB, over the "
                                 f"{MAX_FILE_BYTES // 2 ** 30} GiB limit")
        data = p.read_bytes()
    except OSError as e:
        raise ModelLoadError(f"cannot read {what} {str(p)!r}: {e.strerror or e}") from None
    unpickler = _RestrictedUnpickler(io.BytesIO(data))
    unpickler.allowed = _pickle_globals()
    try:
        obj = unpickler.load()
        _check_arrays(obj)
    except _Refused as e:
        raise ModelLoadError(f"refused {what} {str(p)!r}: it names the global {e}, which a "
                             "checkpoint of arrays never needs (nothing was run)") from None
    except RecursionError:
        raise ModelLoadError(f"cannot read {what} {str(p)!r}: nested too deeply") from None
    except Exception as e:  # noqa: BLE001 - truncated, corrupt, refused call: all a load error
        text = str(e).strip().splitlines()
        reason = text[0][:200] if text else type(e).__name__
        raise ModelLoadError(f"cannot read {what} {str(p)!r}: not a checkpoint of arrays "
                             f"({reason})") from None
    return obj

def ensure_dir(path: str | Path, what: str = "output folder") -> Path:
    """Create a folder (and its parents) for writing; InputError naming it when that fails."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
        # a probe file of this process's own: ranks of a sharded run check a shared folder at once
        with tempfile.NamedTemporaryFile(dir=p, prefix=".infill-write-test-"):
            pass
    except OSError as e:
        raise InputError(f"cannot write to {what} {str(p)!r}: {e.strerror or e}") from None
    return p
