"""Modules imported on first use, so that what only needs names (the command line's options and
help, ``import infill``) does not pay for torch.

    from infill.lazy import torch      # torch is imported at the first ``torch.<name>``
"""
from __future__ import annotations

import importlib
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
    import sys

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
