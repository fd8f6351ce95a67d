"""The README's code blocks, for the tests that run them (test_readme.py checks that every
`sh` and `python` block is claimed by one)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks():
    """(language, text) of every fenced block, in order."""
    return [(match.group(1), match.group(2)) for match in BLOCK.finditer(README.read_text())]


def snippet(marker: str) -> str:
    """The one `sh`/`python` block containing `marker`."""
    found = [text for language, text in blocks() if language in ("sh", "python") and marker in text]
    assert len(found) == 1, f"{len(found)} README blocks contain {marker!r}"
    return found[0]
