"""Which models a server offers, and the loaded ones (each loaded once, then cached).

A request may name only what the picker shows: the builtin models, the named pretrained models
that are installed here (:func:`infill.models.registry.list_models`), and the extra models given
to ``infill serve --model``. Arbitrary paths or hub ids from a request are refused, so a web
page cannot make the server read files of its choosing.

Loading runs on the batching worker's thread (or before the server starts), never on two
threads at once.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from infill.data.builtins import disk_size
from infill.errors import InputError
from infill.models import load_model
from infill.models.aeneas import AeneasMaskedLM
from infill.models.base import MaskedLM
from infill.models.char import CharMaskedLM
from infill.models.ithaca import IthacaMaskedLM
from infill.models.protein import ProteinMLM
from infill.models.registry import list_models

__all__ = ["ModelCatalog", "family_of"]

NOT_SERVABLE = "infill models download"   # status prefix of named models not fetched yet


def family_of(model: MaskedLM) -> str:
    """The family of a loaded model: greek (character models), latin (Aeneas's Latin model),
    protein, or text."""
    if isinstance(model, AeneasMaskedLM):
        return "latin" if model.language == "Latin" else "greek"
    if isinstance(model, (CharMaskedLM, IthacaMaskedLM)):
        return "greek"
    if isinstance(model, ProteinMLM):
        return "protein"
    return "text"


class ModelCatalog:
    """The named models plus ``extra`` ones (paths or ids given on the command line); ``device``
    and ``loader`` are passed on to :func:`infill.load_model`."""

    def __init__(self, extra: Sequence[str] = (), device: str | None = None,
                 loader: Callable[..., MaskedLM] | None = None, dtype: str | None = None):
        self.device = device
        self.dtype = dtype
        self.loader = loader or load_model
        self._named = {r["name"]: r for r in list_models()}
        self._extra = [name for name in dict.fromkeys(extra) if name not in self._named]
        self._loaded: dict[str, MaskedLM] = {}

    def names(self) -> list[str]:
        """Every name a request may use, in the picker's order."""
        return [n for n, r in self._named.items() if not r["status"].startswith(NOT_SERVABLE)] \
            + self._extra

    def check(self, name: str) -> str:
        """``name`` if a request may use it, else :class:`InputError`."""
        if name not in self.names():
            raise InputError(f"unknown model {name!r}; this server has: {', '.join(self.names())}")
        return name

    @property
    def extra(self) -> list[str]:
        """The extra models (paths or ids given to ``infill serve --model``)."""
        return list(self._extra)

    def family(self, name: str) -> str:
        """english / greek / protein / antibody for named models; an extra model's family is
        read from its loaded adapter (extras are loaded when the server starts)."""
        self.check(name)
        if name in self._named:
            return self._named[name]["family"]
        model = self._loaded.get(name)
        return family_of(model) if model is not None else "text"

    def unit(self, name: str) -> str:
        """What the model's gaps are counted in (tokens / characters / residues), known before
        a named model is loaded; an extra model's from its loaded adapter."""
        self.check(name)
        if name in self._named:
            return self._named[name].get("unit", "tokens")
        model = self._loaded.get(name)
        return getattr(model, "unit", "tokens")

    def get(self, name: str) -> MaskedLM:
        """The loaded model (loading it on first use); :class:`ModelLoadError` if it cannot be."""
        self.check(name)
        if name not in self._loaded:
            options = {"dtype": self.dtype} if self.dtype is not None else {}
            self._loaded[name] = self.loader(name, device=self.device, **options)
        return self._loaded[name]

    def preload(self, names: Sequence[str]) -> None:
        """Load ``names`` now (the server's ``--model`` options)."""
        for name in names:
            self.get(name)

    def rows(self) -> list[dict]:
        """``GET /api/models``: name, family, status, description (and bytes on disk)."""
        rows = []
        for name in self.names():
            row = dict(self._named.get(name) or self._extra_row(name))
            if name in self._loaded:
                row["status"] = "loaded"
            rows.append(row)
        return rows

    def _extra_row(self, name: str) -> dict:
        model = self._loaded.get(name)
        path = Path(name).expanduser()
        return {"name": name, "family": family_of(model) if model is not None else "text",
                "status": "ready", "bytes": disk_size(path) if path.exists() else None,
                "description": f"extra model given to infill serve --model "
                               f"({type(model).__name__ if model is not None else 'not loaded'})"}

    @property
    def loaded(self) -> list[str]:
        return list(self._loaded)
