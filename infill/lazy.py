"""Modules imported on first use, so that what only needs names (the command line's options and
help, ``import infill``) does not pay for torch.

    from infill.lazy import torch      # torch is imported at the first ``torch.<name>``

The rule for imports: light modules (the standard library, an infill module whose own imports pull
no torch, transformers, fastapi, lxml, numpy, ...) are imported at the top of the file; heavy ones
go through this helper, ``name = LazyModule("package.module")`` at module level and ``name.attr``
where used (a package's public names through :func:`lazy_exports`). A module that imports torch
itself at load (``infill.reading_scores``, the model adapters, the training scripts) imports the
heavy infill modules it uses at the top too: deferring them saves nothing there (other heavy
libraries, transformers above all, still go through this helper). On the command line's help path
(the ``infill_cli`` command modules, ``infill.config``, the request types and what they import) a
top-level import names only what ``--help`` loads anyway (``infill_cli``'s own small modules, the
request types, the names): anything else, even ``json`` or a light infill module, is a
``LazyModule`` there (``tests/cli/test_startup.py``, ``benchmarks/startup.py``). An import stays
inside a function only where its place matters: an optional dependency whose absence becomes a
message, pyplot after matplotlib's backend is chosen (``FUNCTION_IMPORTS_ALLOWED`` in
``tests/test_imports.py`` lists each with its reason; the test checks every file). A ``LazyModule``
keeps each attribute it read, so a name replaced at run time (a test's monkeypatch of
``fill_resolved``, ``HF_HUB_OFFLINE``) is read uncached, as ``name.module.attr``. Imports needed
only for type hints sit under ``if TYPE_CHECKING:``.
"""
from __future__ import annotations

import importlib
import sys
from types import ModuleType

__all__ = ["LazyModule", "lazy_exports", "torch"]


class LazyModule:
    """Stands for the module ``name``; the first attribute read imports it. Each attribute is
    cached on first read, so hot loops pay the indirection once per name."""

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr: str):
        value = getattr(self.module, attr)
        object.__setattr__(self, attr, value)
        return value

    @property
    def module(self) -> ModuleType:
        """The real module (imported now if it was not yet)."""
        return importlib.import_module(object.__getattribute__(self, "_name"))

    def __repr__(self) -> str:
        return f"<lazy module {object.__getattribute__(self, '_name')!r}>"


torch = LazyModule("torch")


def lazy_exports(package: str, exports: dict[str, str]):
    """A package's ``__getattr__`` and ``__dir__`` that import each public name from its module
    (``exports``: name -> module) on first use::

        __getattr__, __dir__ = lazy_exports(__name__, {"ag": "infill.joint.constructions", ...})

    No exported name may also be a submodule's name (importing the submodule would bind the
    package attribute to the module first); such a package imports eagerly (``infill.mcmc``).
    """
    def __getattr__(name: str):
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)     # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__
