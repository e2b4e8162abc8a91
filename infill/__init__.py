"""infill: probabilistically sound gap filling with masked language models.

    import infill
    model = infill.load_model("builtin:english")
    for c in infill.fill(model, "To be, or not to ___, that is the question.", gap=1)[0]:
        print(c.score, c.text)

The public names are imported on first use (module ``__getattr__``), so that ``import infill``
and the command line's help cost no torch import.
"""
from __future__ import annotations

from infill._version import __version__
from infill.lazy import lazy_exports

_EXPORTS = {
    "Completion": "infill.api", "FillResult": "infill.api", "Position": "infill.api",
    "decode": "infill.api", "fill": "infill.api", "fill_each": "infill.api",
    "load_model": "infill.api", "wrap_hf": "infill.api",
    "DecodeConfig": "infill.config", "FillRequest": "infill.filling.request",
    "check": "infill.jobs.check", "CheckRequest": "infill.check_request",
    "readings": "infill.jobs.readings",
    "Hypothesis": "infill.decoding.engine",
    "ConfigError": "infill.errors", "InfillError": "infill.errors", "InputError": "infill.errors",
    "ModelLoadError": "infill.errors",
}

__all__ = [*_EXPORTS, "__version__"]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
