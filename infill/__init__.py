"""infill: probabilistically sound gap filling with masked language models.

    import infill
    model = infill.load_model("builtin:english")
    for c in infill.fill(model, "To be, or not to ___, that is the question.", gap=1)[0]:
        print(c.score, c.text)
"""
from infill.api import Completion, FillResult, Position, decode, fill, fill_each, load_model, wrap_hf
from infill.config import DecodeConfig
from infill.decoding.engine import Hypothesis
from infill.errors import ConfigError, InfillError, InputError, ModelLoadError

__all__ = ["Completion", "DecodeConfig", "FillResult", "Hypothesis", "Position", "decode", "fill",
           "fill_each", "load_model", "wrap_hf", "InfillError", "InputError", "ModelLoadError",
           "ConfigError", "__version__"]
from infill._version import __version__
