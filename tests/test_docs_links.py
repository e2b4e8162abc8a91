"""Every relative link in the README, the CHANGELOG, data/README.md and docs/*.md resolves: the
file or folder it names exists (relative to the linking file), and an anchor (``path#anchor`` or
``#anchor``) matches a heading of the target Markdown file under GitHub's slug rules. Links to
http(s) and mailto are not followed; links inside code blocks and code spans are not links."""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "data" / "README.md",
        *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = ("http://", "https://", "mailto:")


def prose_lines(text: str) -> list[str]:
    """The lines of ``text`` outside fenced code blocks."""
    out, fence = [], None
    for line in text.splitlines():
        m = FENCE.match(line)
        if m:
            mark = m.group(2)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = None
            out.append("")
            continue
        out.append("" if fence is not None else line)
    return out


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text (links and code marks removed), lower case,
    every character dropped but letters, marks, numbers, '_', '-' and spaces, spaces -> '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)       # [text](url) -> text
    text = CODE_SPAN.sub(lambda m: m.group(2), text).replace("`", "")
    text = re.sub(r"<[^>]+>", "", text)                              # inline HTML tags
    kept = "".join(c for c in text.lower()
                   if c in " -_" or unicodedata.category(c)[0] in "LMN")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file, duplicates numbered -1, -2, ... as GitHub does."""
    seen: dict[str, int] = {}
    out = set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        m = HEADING.match(line)
        if not m:
            continue
        slug = github_slug(m.group(2))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def links(path: Path) -> list[tuple[int, str]]:
    """(line number, target) of every Markdown link and image in ``path``'s prose."""
    found = []
    for k, line in enumerate(prose_lines(path.read_text(encoding="utf-8")), 1):
        line = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
        found += [(k, m.group(1)) for m in LINK.finditer(line)]
    return found


def broken(path: Path) -> list[str]:
    """What does not resolve among ``path``'s relative links, one line each."""
    problems = []
    for line, target in links(path):
        if not target or target.startswith(EXTERNAL):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / unquote(file_part)).resolve() if file_part else path
        where = f"{path.relative_to(ROOT)}:{line}: ({target})"
        if not dest.exists():
            problems.append(f"{where} no such file")
        elif anchor:
            if dest.is_dir() or dest.suffix.lower() != ".md":
                problems.append(f"{where} an anchor into a file that is not Markdown")
            elif unquote(anchor).lower() not in anchors(dest):
                problems.append(f"{where} no heading with this anchor in {dest.name}")
    return problems


def test_the_documents_exist():
    assert all(p.is_file() for p in DOCS[:3]), [p for p in DOCS[:3] if not p.is_file()]
    assert len(DOCS) > 3, "no docs/*.md"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    if not path.is_file():
        pytest.skip(f"{path.relative_to(ROOT)} is missing (test_the_documents_exist says so)")
    assert broken(path) == []


def test_the_readme_is_a_front_page():
    """At most 300 lines, and the Set up section that .ci/run reads holds its two bash blocks."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    section = text.split("\n## Set up", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)\n```", section, flags=re.S)
    assert len(blocks) == 2
    assert blocks[1].strip() == "python -m pytest"


@pytest.mark.parametrize("heading, slug", [
    ("Decoder speed (`benchmarks/speed.py`)", "decoder-speed-benchmarksspeedpy"),
    ("§3 Metropolis–Hastings from an MLM's energy", "3-metropolishastings-from-an-mlms-energy"),
    ("What `___` means when `--gap` is not given", "what-___-means-when---gap-is-not-given"),
    ("Ἀχιλλεύς and [a link](x.md)", "ἀχιλλεύς-and-a-link"),
])
def test_github_slugs(heading, slug):
    assert github_slug(heading) == slug


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "a.md").write_text("# Top\n\n## Top\n\n[ok](#top-1) [ok](b.md#b) [bad](#nope)\n"
                                   "[bad](c.md) `[not a link](c.md)`\n\n```\n[no](c.md)\n```\n",
                                   encoding="utf-8")
    (tmp_path / "b.md").write_text("# B\n", encoding="utf-8")
    global ROOT
    root, ROOT = ROOT, tmp_path
    try:
        problems = broken(tmp_path / "a.md")
    finally:
        ROOT = root
    assert [p.split(" ", 1)[0] for p in problems] == ["a.md:5:", "a.md:6:"]
