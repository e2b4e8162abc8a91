"""A folder of EpiDoc files as a corpus: its split by inscription, its training text, and its
editors' supplements as restoration tasks.

The split (:func:`split_files`) is by inscription: the files, sorted by name, are split once by
:func:`infill.data.parts.split_indices` with seed 0, 10% validation and 10% test (80/10/10), so an
inscription's supplements never cross parts. For IOSPE (``greek/iospe`` under the data root, 1,542
files) that gives 1,234 / 154 / 154 inscriptions; the test part stays out of training and tuning.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from infill.data.corpora import data_root
from infill.data.epidoc import Edition, read_edition
from infill.data.greek import GREEK, normalize
from infill.data.parts import PARTS, split_indices
from infill.errors import ConfigError, InputError

__all__ = ["IOSPE", "SPLIT_SEED", "Task", "corpus_files", "iospe_files", "iospe_training_text",
           "split_files", "supplement_tasks", "training_text"]

IOSPE = "greek/iospe"
"""The IOSPE folder under the data root (:func:`infill.data.corpora.data_root`)."""
SPLIT_SEED = 0
VAL_FRACTION = TEST_FRACTION = 0.1


def corpus_files(folder: str | Path) -> list[Path]:
    """The ``*.xml`` files of a folder, sorted by name (InputError when there are none)."""
    p = Path(folder)
    if not p.is_dir():
        raise InputError(f"EpiDoc folder not found: {str(p)!r}")
    files = sorted(f for f in p.glob("*.xml") if f.is_file())
    if not files:
        raise InputError(f"no EpiDoc (*.xml) file in {str(p)!r}")
    return files


def split_files(files: list[Path], seed: int = SPLIT_SEED) -> dict[str, list[Path]]:
    """train / validation / test parts of a corpus's files (by inscription, 80/10/10)."""
    parts = split_indices(len(files), seed, VAL_FRACTION, TEST_FRACTION)
    return {k: [files[i] for i in parts[k]] for k in PARTS}


def _part(folder: str | Path, split: str) -> list[Path]:
    files = corpus_files(folder)
    if split == "all":
        return files
    if split not in PARTS:
        raise ConfigError(f"unknown split {split!r}; choose all, {', '.join(PARTS)}")
    return split_files(files)[split]


def iospe_files(split: str = "train", root: str | Path | None = None) -> list[Path]:
    """The IOSPE files of one part (``all`` for every file) under the data root."""
    base = data_root(root)
    if base is None or not (base / IOSPE).is_dir():
        raise InputError(f"IOSPE not found ({IOSPE} under the data folder); pass 'data_root' DIR "
                         "or set INFILL_DATA=DIR; docs/CORPORA.md says where to get it",
                         field="data_root")
    return _part(base / IOSPE, split)


def training_text(edition: Edition) -> str:
    """An edition as training text: editors' supplements as text, every other lost stretch as
    missing (``-`` per character, ``---`` for an unknown extent); the editor's spelling kept."""
    return edition.render(lambda lac: "text" if lac.kind == "supplied" else "missing").text


def iospe_training_text(split: str = "train", root: str | Path | None = None) -> list[str]:
    """One training text per inscription of an IOSPE part (empty editions left out)."""
    out = []
    for f in iospe_files(split, root):
        t = training_text(read_edition(f, require_text=False))
        if t.strip():
            out.append(t)
    return out


@dataclass(frozen=True)
class Task:
    """One editor's supplement to restore: ``text`` shows it as ``?`` (one per normalized
    character) and every other lost stretch as missing; ``gold`` is the editor's reading,
    normalized (``len(gold)`` = the number of ``?``); ``whole_word``: the supplement is one or
    more whole words. ``file`` and ``index`` (the lacuna's) say where it came from."""

    file: str
    index: int
    text: str
    gold: str
    editor: str
    whole_word: bool


def supplement_tasks(edition: Edition, lengths: set[int] | None = None) -> list[Task]:
    """Each editor's supplement of an edition hidden in turn (those of ``lengths`` characters,
    when given)."""
    tasks = []
    for lac in edition.supplements:
        if lengths is not None and lac.length not in lengths:
            continue
        r = edition.render(lambda x, k=lac.index: "restore" if x.index == k else "missing")
        (_, start, end), = r.restore
        gold = normalize(lac.editor, symbols=False, alphabet=edition.alphabet or GREEK)
        if len(gold) != end - start:
            continue
        whole = (start == 0 or r.text[start - 1] == " ") and \
            (end == len(r.text) or r.text[end] == " ")
        tasks.append(Task(edition.path, lac.index, r.text, gold, lac.editor, whole))
    return tasks
