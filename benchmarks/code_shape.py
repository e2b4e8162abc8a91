"""Code shape: lines per front end and the functions over 60 lines, for the working tree or a git
revision (issue 18's before/after numbers).

    python benchmarks/code_shape.py            # the working tree
    python benchmarks/code_shape.py 288efb4    # a revision (read with git, nothing checked out)
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
FRONT_ENDS = ("cli", "infill/serve", "benchmarks")
"""Folders whose own .py files (not sub-folders) are counted."""
LONG = 60


def sources(rev: str | None) -> dict[str, str]:
    """Path -> text of every tracked .py file (at ``rev``, or as in the working tree)."""
    if rev is None:
        names = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True,
                               text=True, check=True).stdout.split()
        names += subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "*.py"],
                                cwd=ROOT, capture_output=True, text=True).stdout.split()
        return {n: (ROOT / n).read_text(encoding="utf-8") for n in names if (ROOT / n).is_file()}
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    return {n: subprocess.run(["git", "show", f"{rev}:{n}"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout
            for n in names if n.endswith(".py")}


def long_functions(files: dict[str, str]) -> list[tuple[int, str, str]]:
    """(lines, name, path) of every function or method over LONG lines, longest first."""
    out = []
    for path, text in files.items():
        if not path.startswith(("infill/", "cli/", "benchmarks/")):
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > LONG:
                    out.append((n, node.name, path))
    return sorted(out, reverse=True)


def main(rev: str | None = None) -> None:
    files = sources(rev)
    print(f"# code shape of {rev or 'the working tree'}")
    for folder in FRONT_ENDS:
        picked = [p for p in files if str(PurePosixPath(p).parent) == folder]
        lines = sum(len(files[p].splitlines()) for p in picked)
        print(f"{folder + '/*.py':<18} {lines:>6} lines in {len(picked):>2} files")
    longs = long_functions(files)
    print(f"functions over {LONG} lines: {len(longs)}")
    for n, name, path in longs:
        print(f"  {n:>4}  {name}  {path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
