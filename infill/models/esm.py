"""Protein masked LMs: ESM2 as a fair-esm checkpoint or as a Hugging Face ``EsmForMaskedLM``.

Input is a protein sequence in one-letter code. Gaps are ``___`` markers (each becomes ``gap``
residues) or runs of ``?`` (one residue per ``?``); whitespace is ignored and lowercase letters
are read as uppercase. Fills are restricted to the 20 standard amino acids unless the adapter
allows the non-standard residue codes (X, B, U, Z, O) too; every other token (cls, pad, eos,
unk, mask, alignment symbols ``.``/``-``, null slots) is a special id (METHODS §1 "Candidates").

The default HCB pivot is ``<mask>``; any token can be the pivot by its string (``"<cls>"``).
:meth:`ProteinMLM.log_probs` runs the network body once and applies the LM head only at the
requested positions.
"""
from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import torch

from infill.data.files import read_torch_file
from infill.errors import ConfigError, ModelLoadError
from infill.lazy import LazyModule
from infill.models import familiarity
from infill.models.base import row_chunked
from infill.models.device import resolve_device, resolve_dtype
from infill.models.hf import check_model_files, hub_reachable, url_reachable
from infill.models.protein import NONSTANDARD_AA, STANDARD_AA, ProteinMLM  # noqa: F401 (re-exported)

esm = LazyModule("esm")                               # fair-esm, on first use
transformers = LazyModule("transformers")             # seconds to import: only for ESM on the hub
hf_logging = LazyModule("transformers.utils.logging")

FAIR_ESM_URL = "https://dl.fbaipublicfiles.com/fair-esm/models/{name}.pt"
FAIR_ESM_REGRESSION_URL = "https://dl.fbaipublicfiles.com/fair-esm/regression/{name}-contact-regression.pt"
ESM_MAX_LENGTH = 1024  # ESM2's training crop: 1022 residues + <cls> + <eos>


def _reject_options(name: str, options: dict) -> None:
    if options:
        raise ConfigError(f"option(s) {', '.join(sorted(options))} do not apply to {name!r}")


# ---------------------------------------------------------------------------------------------
# fair-esm
# ---------------------------------------------------------------------------------------------
class FairESMMaskedLM(ProteinMLM):
    """A fair-esm model (``esm.model.esm2.ESM2``, or ESM-1b/1v ``ProteinBertModel``) + alphabet."""

    def __init__(self, model: torch.nn.Module, alphabet, name: str = "fair-esm",
                 device=None, dtype=None, allow_nonstandard: bool = False,
                 max_length: int = ESM_MAX_LENGTH):
        if getattr(alphabet, "use_msa", False) or not isinstance(model, (esm.ESM2, esm.ProteinBertModel)):
            raise ModelLoadError(f"{name!r} is a {type(model).__name__}; only single-sequence ESM "
                                 "models (ESM2, ESM-1b, ESM-1v) are supported")
        dev = resolve_device(device)
        self.model = model.eval().to(device=dev, dtype=resolve_dtype(dtype, dev))
        self.alphabet = alphabet
        super().__init__(alphabet.all_toks, name, dev, max_length, allow_nonstandard)
        if alphabet.padding_idx != self.pad_id or alphabet.mask_idx != self.mask_id:
            raise ModelLoadError(f"inconsistent alphabet in {name!r}")

    def _hidden(self, input_ids, attention_mask):
        return esm2_hidden(self.model, input_ids)  # ESM2 only; see logits

    def heavy_modules(self, whole: bool = False) -> list:
        return [self.model] if whole else list(getattr(self.model, "layers", [self.model]))

    def _head(self, hidden):
        return self.model.lm_head(hidden)

    @row_chunked
    def logits(self, input_ids, attention_mask, positions):
        if isinstance(self.model, esm.ESM2):
            return super().logits(input_ids, attention_mask, positions)
        # ESM-1b/1v (ProteinBertModel): the whole forward, then the requested positions
        ids = torch.as_tensor(input_ids, dtype=torch.long, device=self.device)
        attn = torch.as_tensor(attention_mask, dtype=torch.bool, device=self.device)
        pos = torch.as_tensor(positions, dtype=torch.long, device=self.device)
        with torch.inference_mode():
            logits = self.model(ids.masked_fill(~attn, self.pad_id))["logits"]
            rows = torch.arange(ids.shape[0], device=self.device)[:, None]
            return logits[rows, pos].float()


def esm2_hidden(m, tokens: torch.Tensor) -> torch.Tensor:
    """fair-esm ``ESM2.forward`` up to (and including) ``emb_layer_norm_after``: [B, T, E].

    The same computation as fair-esm 2.0's forward, token-dropout rescaling included, without the
    LM head (applied by the caller only where needed) and without attention-weight bookkeeping.
    """
    if not torch.is_inference_mode_enabled():
        _drop_inference_rotary_tables(m)
    padding_mask = tokens.eq(m.padding_idx)
    x = m.embed_scale * m.embed_tokens(tokens)
    if m.token_dropout:
        x = x.masked_fill((tokens == m.mask_idx).unsqueeze(-1), 0.0)
        mask_ratio_train = 0.15 * 0.8
        src_lengths = (~padding_mask).sum(-1)
        mask_ratio_observed = (tokens == m.mask_idx).sum(-1).to(x.dtype) / src_lengths
        x = x * (1 - mask_ratio_train) / (1 - mask_ratio_observed)[:, None, None]
    x = x * (1 - padding_mask.unsqueeze(-1).type_as(x))
    x = x.transpose(0, 1)
    key_padding = padding_mask if padding_mask.any() else None
    for layer in m.layers:
        x, _ = layer(x, self_attn_padding_mask=key_padding, need_head_weights=False)
    x = m.emb_layer_norm_after(x)
    return x.transpose(0, 1)


def _drop_inference_rotary_tables(m) -> None:
    """fair-esm's rotary embeddings cache cos/sin tables per sequence length; tables made under
    ``torch.inference_mode`` (e.g. during validation) cannot be used by autograd afterwards, so
    forget them outside inference mode (they are recomputed on the next call)."""
    for layer in m.layers:
        rot = getattr(layer.self_attn, "rot_emb", None)
        cached = getattr(rot, "_cos_cached", None)
        if cached is not None and cached.is_inference():
            rot._seq_len_cached = None


def _regression_path(path: Path) -> Path:
    return Path(str(path.with_suffix("")) + "-contact-regression.pt")


def _load_fair_esm_file(path: Path):
    # fair-esm stores its config as an argparse.Namespace
    model_data = read_torch_file(path, "fair-esm checkpoint", allow=(argparse.Namespace,))
    if not isinstance(model_data, dict) or "model" not in model_data:
        raise ModelLoadError(f"{str(path)!r} is not a fair-esm checkpoint (no 'model' entry)")
    name = path.stem
    if "cfg" in model_data and not name.startswith("esm2"):
        name = "esm2_" + name  # fair-esm picks the ESM2 loader by the file-name prefix
    regression = None
    reg_path = _regression_path(path)
    if reg_path.exists() and esm.pretrained._has_regression_weights(name):
        regression = read_torch_file(reg_path, "contact-regression file",
                                     allow=(argparse.Namespace,))
    try:
        with warnings.catch_warnings():
            # Without the regression file only contact prediction is affected, not the MLM.
            warnings.filterwarnings("ignore", message="Regression weights not found")
            model, alphabet = esm.pretrained.load_model_and_alphabet_core(name, model_data, regression)
    except Exception as e:  # noqa: BLE001
        msg = str(e).replace("\n", " ").replace("\t", " ")
        raise ModelLoadError(f"cannot load fair-esm checkpoint {str(path)!r}: {msg[:300]}") from None
    return model, alphabet, model_data.get("infill", {})


def load_fair_esm(path_or_name: str, device=None, dtype=None, allow_nonstandard: bool = False,
                  **options) -> FairESMMaskedLM:
    """Load a fair-esm checkpoint file (``esm2_t6_8M_UR50D.pt``-style) or pretrained name.

    A co-located ``<stem>-contact-regression.pt`` is used when present and not required (it only
    matters for contact prediction). A name such as ``esm2_t6_8M_UR50D`` is fetched through
    fair-esm's download address into torch hub's cache (``torch.hub.get_dir()/checkpoints``;
    the first time needs network); the cached file is read with the safe reader like any other.
    """
    name = str(path_or_name)
    _reject_options(name, options)
    resolve_dtype(dtype, resolve_device(device))  # fail on bad options before any loading
    path = Path(name).expanduser()
    if path.is_file():
        model, alphabet, meta = _load_fair_esm_file(path)
        out = FairESMMaskedLM(model, alphabet, name=name, device=device, dtype=dtype,
                              allow_nonstandard=allow_nonstandard,
                              max_length=int(meta.get("max_length", ESM_MAX_LENGTH)))
        out.familiarity = familiarity.load(path)               # its familiarity.json
        return out
    if path.suffix == ".pt" or "/" in name or "\\" in name:
        raise ModelLoadError(f"fair-esm checkpoint {name!r} not found")
    if not (name.startswith("esm") and callable(getattr(esm.pretrained, name, None))):
        raise ModelLoadError(f"unknown fair-esm model name {name!r} (e.g. esm2_t6_8M_UR50D); "
                             "or give the path of a .pt checkpoint")
    model, alphabet, _ = _load_fair_esm_file(_hub_checkpoint(name))
    return FairESMMaskedLM(model, alphabet, name=name, device=device, dtype=dtype,
                           allow_nonstandard=allow_nonstandard)


def _hub_checkpoint(name: str) -> Path:
    """The cached file of fair-esm's pretrained ``name`` (torch hub's cache, where fair-esm keeps
    it), downloaded there first when missing. Never fair-esm's own hub loader: it unpickles the
    cached file with ``weights_only=False``, so a file planted in the cache would run code; the
    caller reads this file with the safe reader like any other checkpoint."""
    folder = Path(torch.hub.get_dir()) / "checkpoints"
    path = folder / f"{name}.pt"
    if path.is_file():
        return path
    url = FAIR_ESM_URL.format(name=name)
    if not url_reachable(url):
        raise ModelLoadError(
            f"cannot download fair-esm model {name!r} (dl.fbaipublicfiles.com is not reachable "
            f"from here); offline, fetch {url} (and {name}-contact-regression.pt) elsewhere and "
            f"pass the file: 'model' /path/{name}.pt", field="model")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        torch.hub.download_url_to_file(url, str(path), progress=False)
        reg = FAIR_ESM_REGRESSION_URL.format(name=name)
        if url_reachable(reg):
            torch.hub.download_url_to_file(reg, str(_regression_path(path)), progress=False)
    except Exception as e:  # noqa: BLE001 - HTTP error, disk full, interrupted download
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ModelLoadError(f"cannot download fair-esm model {name!r} ({reason[:120]})") from None
    return path


def wrap_fair_esm(model: torch.nn.Module, alphabet, name: str = "fair-esm", device=None,
                  dtype=None, allow_nonstandard: bool = False) -> FairESMMaskedLM:
    """Adapter for a fair-esm model already in memory (e.g. ``esm.pretrained.esm2_t6_8M_UR50D()``)."""
    return FairESMMaskedLM(model, alphabet, name=name, device=device, dtype=dtype,
                           allow_nonstandard=allow_nonstandard)


def save_fair_esm(model: torch.nn.Module, alphabet_or_cfg, path: "str | Path",
                  half: bool = False, metadata: dict | None = None) -> Path:
    """Write an ESM2 model as a fair-esm checkpoint that ``load_model_and_alphabet_local`` reads.

    ``path``'s file name must start with ``esm2`` (fair-esm chooses its ESM2 loader by it). Writes
    ``path`` ({"model": state dict with fair-esm's key prefixes, "cfg": {"model": Namespace}}) and
    the co-located ``<stem>-contact-regression.pt``. ``alphabet_or_cfg``: the model's fair-esm
    Alphabet (must be ESM-1b's, the only one fair-esm's ESM2 loader builds) or a dict of metadata
    (stored under ``"infill"`` like ``metadata``, e.g. the training recipe). ``half``: store fp16.
    """
    path = Path(path)
    if not isinstance(model, esm.ESM2):
        raise ConfigError(f"save_fair_esm writes ESM2 models only, got {type(model).__name__}")
    if not path.name.startswith("esm2") or path.suffix != ".pt":
        raise ConfigError(f"fair-esm checkpoint names must look like esm2_*.pt, got {path.name!r}")
    meta = dict(metadata or {})
    if isinstance(alphabet_or_cfg, esm.data.Alphabet):
        if alphabet_or_cfg.all_toks != esm.data.Alphabet.from_architecture("ESM-1b").all_toks:
            raise ConfigError("fair-esm's ESM2 checkpoints always use the ESM-1b alphabet")
    elif isinstance(alphabet_or_cfg, dict):
        meta.update(alphabet_or_cfg)
    elif alphabet_or_cfg is not None:
        raise ConfigError("alphabet_or_cfg must be a fair-esm Alphabet, a dict or None")
    state, regression = {}, {}
    for key, value in model.state_dict().items():
        value = value.detach().cpu()
        if half and value.is_floating_point():
            value = value.half()
        if key.startswith("contact_head.regression."):
            regression[key] = value
        elif key.startswith("lm_head."):
            state["encoder." + key] = value
        else:
            state["encoder.sentence_encoder." + key] = value
    cfg = argparse.Namespace(encoder_layers=model.num_layers, encoder_embed_dim=model.embed_dim,
                             encoder_attention_heads=model.attention_heads,
                             token_dropout=bool(model.token_dropout))
    data = {"model": state, "cfg": {"model": cfg}}
    if meta:
        data["infill"] = meta
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(data, str(path))
    torch.save({"model": regression}, str(_regression_path(path)))
    return path


# ---------------------------------------------------------------------------------------------
# Hugging Face EsmForMaskedLM
# ---------------------------------------------------------------------------------------------
class HFESMMaskedLM(ProteinMLM):
    """A Hugging Face ``EsmForMaskedLM`` with its ``EsmTokenizer`` vocabulary."""

    def __init__(self, model, vocab: list[str], name: str = "hf-esm", device=None, dtype=None,
                 allow_nonstandard: bool = False):
        dev = resolve_device(device)
        self.model = model.eval().to(device=dev, dtype=resolve_dtype(dtype, dev))
        max_len = int(getattr(model.config, "max_position_embeddings", ESM_MAX_LENGTH) or ESM_MAX_LENGTH)
        if getattr(model.config, "position_embedding_type", "absolute") == "absolute":
            max_len -= int(model.config.pad_token_id or 0) + 1  # learned positions start after pad
        super().__init__(vocab, name, dev, min(max_len, ESM_MAX_LENGTH) if max_len > 0 else ESM_MAX_LENGTH,
                         allow_nonstandard)
        if model.config.vocab_size != len(vocab):
            raise ModelLoadError(f"{name!r}: tokenizer has {len(vocab)} tokens, the model "
                                 f"{model.config.vocab_size}")

    def _hidden(self, input_ids, attention_mask):
        return self.model.esm(input_ids=input_ids, attention_mask=attention_mask.long()).last_hidden_state

    def _head(self, hidden):
        return self.model.lm_head(hidden)


def load_hf_esm(path_or_name: str, device=None, dtype=None, allow_nonstandard: bool = False,
                **options) -> HFESMMaskedLM:
    """Load an ``EsmForMaskedLM`` directory (with its ``EsmTokenizer`` vocab.txt) or hub id."""
    name = str(path_or_name)
    _reject_options(name, options)
    resolve_dtype(dtype, resolve_device(device))
    check_model_files(name)              # the sizes its config.json declares, before building
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    local = Path(name).expanduser().is_dir()

    def load(**kw):
        return (transformers.EsmForMaskedLM.from_pretrained(name, weights_only=True, **kw),
                transformers.EsmTokenizer.from_pretrained(name, **kw))

    try:
        if local:
            model, tokenizer = load()
        else:                      # the local HF cache first; the hub only if it answers at once
            try:
                model, tokenizer = load(local_files_only=True)
            except OSError:
                if not hub_reachable():
                    raise OSError("the Hugging Face Hub is not reachable from here") from None
                model, tokenizer = load()
    except Exception as e:  # noqa: BLE001 - offline, missing files, wrong model type
        reason = (str(e).splitlines() or [type(e).__name__])[0][:160]
        if local:
            raise ModelLoadError(f"cannot load ESM model directory {name!r}: {reason}") from None
        raise ModelLoadError(
            f"cannot load ESM model {name!r} from the Hugging Face hub ({reason}); offline, "
            f"download it elsewhere (e.g. `hf download {name} --local-dir DIR`) and pass the "
            "directory: 'model' /path/to/dir", field="model") from None
    vocab = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    return HFESMMaskedLM(model, vocab, name=name, device=device, dtype=dtype,
                         allow_nonstandard=allow_nonstandard)
