"""Loading a Hugging Face encoder (a network without a masked-LM head, e.g. BERTScore's scorer)
the way infill loads every model: never a model folder's own code, weights read without
unpickling (safetensors, or torch's weights-only reader), a hub id from the local cache or after
one quick probe of the hub.

    net, tokenizer = load_encoder("roberta-large", device="cpu")
"""
from __future__ import annotations

from pathlib import Path

from infill.data.files import read_json
from infill.errors import ModelLoadError
from infill.lazy import LazyModule

# On first use: transformers takes seconds to import, the hub adapter imports torch.
transformers = LazyModule("transformers")
hf_logging = LazyModule("transformers.utils.logging")
configuration_auto = LazyModule("transformers.models.auto.configuration_auto")
hf = LazyModule("infill.models.hf")

__all__ = ["load_encoder", "refuse_custom_code"]

CONFIG_FILES = ("config.json", "tokenizer_config.json")
"""The files of a model folder that may ask transformers to import code from the folder."""


def refuse_custom_code(name_or_path: str, what: str = "model") -> None:
    """ModelLoadError (one line) when ``name_or_path`` is a model folder that asks to run code
    of its own: an ``auto_map`` in its configuration or tokenizer configuration, or a
    ``model_type`` that transformers does not know. Anything else (a hub id) passes."""
    folder = Path(str(name_or_path)).expanduser()
    if not folder.is_dir():
        return
    for name in CONFIG_FILES:
        config = _config(folder / name)
        if "auto_map" in config:
            raise ModelLoadError(f"{what} folder {str(folder)!r}: its {name} asks to run code from "
                                 "the folder (auto_map); infill never runs a model's own code")
    kind = _config(folder / "config.json").get("model_type")
    if kind is not None and not _known_type(kind):
        raise ModelLoadError(f"{what} folder {str(folder)!r}: model_type {str(kind)[:60]!r} is not "
                             "one transformers knows (it would need the folder's own code, which "
                             "infill never runs)")


def _config(path: Path) -> dict:
    """A folder's JSON configuration file ({} when there is none)."""
    if not path.is_file():
        return {}
    config = read_json(path, "model configuration", ModelLoadError)
    if not isinstance(config, dict):
        raise ModelLoadError(f"{str(path)!r} is not a model configuration (a JSON object)")
    return config


def _known_type(kind) -> bool:
    """Whether transformers has a configuration class of its own for ``model_type`` ``kind``."""
    return isinstance(kind, str) and kind in configuration_auto.CONFIG_MAPPING_NAMES


def load_encoder(name_or_path: str, device: str | None = None, use_fast: bool = False):
    """(network, tokenizer) of a Hugging Face model by local folder or hub id, on ``device``
    (default cpu), in eval mode; the encoder of an encoder-decoder. Refuses a folder's own code
    (:func:`refuse_custom_code`); raises what transformers raises when it cannot load."""
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    name = str(name_or_path)
    refuse_custom_code(name)

    def load(**kw):
        return (transformers.AutoModel.from_pretrained(name, weights_only=True,
                                                       trust_remote_code=False, **kw),
                transformers.AutoTokenizer.from_pretrained(name, use_fast=use_fast,
                                                           trust_remote_code=False, **kw))

    if Path(name).expanduser().is_dir():
        net, tokenizer = load()
    else:
        net, tokenizer = _from_hub(name, load)
    if hasattr(net, "encoder") and hasattr(net, "decoder"):
        net = net.encoder
    return net.to(device or "cpu").eval(), tokenizer


def _from_hub(name: str, load):
    """``load()`` of a hub id: from the local cache, else from the hub if it answers at once."""
    if name.startswith((".", "/", "~")) or name.count("/") > 1:
        raise ModelLoadError(f"no such model folder: {name!r}")
    try:
        return load(local_files_only=True)
    except OSError:
        if not hf.hub_reachable():
            raise ModelLoadError(f"model {name!r} is not in the local Hugging Face cache and the "
                                 "hub is not reachable from here") from None
    return load()
