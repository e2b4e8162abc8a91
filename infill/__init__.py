"""infill: probabilistically sound gap filling with masked language models.

    import infill
    model = infill.load_model("builtin:english")
    for c in infill.fill(model, "To be, or not to ___, that is the question.", gap=1)[0]:
        print(c.score, c.text)
"""
from infill.api import Completion, decode, fill, load_model, wrap_hf
from infill.errors import ConfigError, InfillError, InputError, ModelLoadError
from infill.search import Hypothesis

__all__ = ["Completion", "Hypothesis", "decode", "fill", "load_model", "wrap_hf",
           "InfillError", "InputError", "ModelLoadError", "ConfigError"]
__version__ = "0.1.0"
