"""Reading a pickle without running it: how JAX checkpoints (Ithaca's, Aeneas's) are saved.

:func:`read_pickle_file` unpickles with an allow-list (numpy arrays, scalars and dtypes, flax's
FrozenDict and AxisMetadata, jax Arrays rebuilt from numpy, plain containers); any other global is refused before
it is looked up, so nothing named in the file runs. Kept apart from :mod:`infill.data.files` so
that reading text never imports :mod:`pickle`.
"""
from __future__ import annotations

import io
import pickle
from pathlib import Path

from infill.data.files import read_bytes
from infill.errors import InputError, ModelLoadError
from infill.lazy import LazyModule

np = LazyModule("numpy")                               # numpy when a pickle is read
multiarray = LazyModule("numpy._core.multiarray")
numeric = LazyModule("numpy._core.numeric")

__all__ = ["read_pickle_file"]


def _pickle_globals(budget: int = 0) -> dict:
    """The only globals a pickle read by :func:`read_pickle_file` may name, each mapped to a
    harmless stand-in: numpy arrays, scalars and dtypes; flax's FrozenDict (read as a dict) and
    AxisMetadata (read as :class:`AxisNames`);
    a jax Array (rebuilt as the numpy array it wraps); a few plain containers. The arrays the
    pickle declares empty-handed (numpy's own recipe declares none) may take ``budget`` bytes
    in all: a file cannot make us allocate more than it holds."""
    left = [budget]

    def reconstruct(cls, shape, dtype_code):
        if cls is not np.ndarray:
            raise pickle.UnpicklingError(f"refused array subclass {cls!r}")
        left[0] -= _declared_bytes(shape, dtype_code)
        if left[0] < 0:
            raise _TooBig(f"an array declares shape {_shown(shape)}, more than the file's "
                          f"{budget:,} bytes hold")
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
             ("flax.linen.partitioning", "AxisMetadata"): AxisNames,
             ("jax._src.array", "_reconstruct_array"): jax_array,
             ("flax.core.frozen_dict", "FrozenDict"): dict,
             ("collections", "OrderedDict"): dict, ("builtins", "set"): set,
             ("builtins", "frozenset"): frozenset, ("_codecs", "encode"): latin1,
             ("__builtin__", "set"): set, ("__builtin__", "frozenset"): frozenset}
    for module in ("numpy._core.multiarray", "numpy.core.multiarray"):
        table[(module, "_reconstruct")] = reconstruct
        table[(module, "scalar")] = multiarray.scalar
    for module in ("numpy._core.numeric", "numpy.core.numeric"):
        table[(module, "_frombuffer")] = numeric._frombuffer
    return table


class AxisNames:
    """What a flax ``AxisMetadata`` (Aeneas's ``params_axes``: the logical names of a weight's
    axes, no numbers) is read as: its ``names``, a tuple of strings, and nothing else."""

    __slots__ = ("names",)

    def __setstate__(self, state) -> None:
        names = state.get("names") if isinstance(state, dict) and set(state) == {"names"} \
            else None
        if not isinstance(names, tuple) or not all(isinstance(n, str) for n in names):
            raise pickle.UnpicklingError("an AxisMetadata that is not a tuple of axis names")
        self.names = names


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


class _TooBig(Exception):
    """A pickle declared an array larger than the file could fill."""


def _declared_bytes(shape, dtype_code) -> int:
    """Bytes of an array of ``shape`` and dtype ``dtype_code`` (UnpicklingError when they are
    not a shape and a dtype), computed in Python integers: never an overflow."""
    dims = (shape,) if isinstance(shape, int) else shape
    if not isinstance(dims, tuple) or not all(isinstance(d, int) and not isinstance(d, bool)
                                              for d in dims):
        raise pickle.UnpicklingError("an array shape that is not a tuple of whole numbers")
    size = 0 if any(d <= 0 for d in dims) else 1
    for d in dims:
        size = min(size * d, 2 ** 64)      # past 2^64 bytes it is too big whatever follows
    return size * np.dtype(dtype_code).itemsize


def _shown(shape) -> str:
    """A declared shape for a message, cut short (and never str() of thousands of digits)."""
    dims = shape if isinstance(shape, tuple) else (shape,)
    text = str(tuple(d if not isinstance(d, int) or abs(d) < 10 ** 30 else "huge"
                     for d in dims[:8]))
    return text if len(text) <= 60 and len(dims) <= 8 else text[:57] + "..."


def _check_arrays(obj, depth: int = 0) -> None:
    """Refuse object arrays (and absurd nesting) in an unpickled tree."""
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
    p = Path(path)
    try:
        data = read_bytes(p, what)          # bounded: a device or pipe cannot feed it forever
    except InputError as e:
        raise ModelLoadError(str(e)) from None
    unpickler = _RestrictedUnpickler(io.BytesIO(data))
    unpickler.allowed = _pickle_globals(len(data))
    try:
        obj = unpickler.load()
        _check_arrays(obj)
    except _Refused as e:
        raise ModelLoadError(f"refused {what} {str(p)!r}: it names the global {e}, which a "
                             "checkpoint of arrays never needs (nothing was run)") from None
    except _TooBig as e:
        raise ModelLoadError(f"cannot read {what} {str(p)!r}: {e}") from None
    except RecursionError:
        raise ModelLoadError(f"cannot read {what} {str(p)!r}: nested too deeply") from None
    except Exception as e:  # noqa: BLE001 - truncated, corrupt, refused call: all a load error
        text = str(e).strip().splitlines()
        reason = text[0][:200] if text else type(e).__name__
        raise ModelLoadError(f"cannot read {what} {str(p)!r}: not a checkpoint of arrays "
                             f"({reason})") from None
    return obj
