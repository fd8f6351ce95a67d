"""The code blocks of README.md and of the docs pages, for the tests that run them
(test_readme.py checks that every `sh` and `python` block of the README is claimed by one,
test_docs.py the same for docs/*.md and python/README.md)."""

import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
README = REPOSITORY / "README.md"
DOCS = REPOSITORY / "docs"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def pages():
    """The documentation pages whose blocks test_docs.py claims: docs/*.md and the Python
    package's README (README.md itself is test_readme.py's)."""
    return sorted(DOCS.glob("*.md")) + [REPOSITORY / "python" / "README.md"]


def blocks(page: Path = README):
    """(language, text) of every fenced block of `page`, in order."""
    return [(match.group(1), match.group(2)) for match in BLOCK.finditer(page.read_text())]


def snippet(marker: str, page: Path = README) -> str:
    """The one `sh`/`python` block of `page` containing `marker`."""
    found = [text for language, text in blocks(page) if language in ("sh", "python") and marker in text]
    assert len(found) == 1, f"{len(found)} blocks of {page.name} contain {marker!r}"
    return found[0]
