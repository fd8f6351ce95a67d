"""Finding the `rlvr` binary: `$RLVR_BIN`, then the copy bundled in this package, then PATH."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Optional


def find_binary(explicit: Optional[str] = None) -> str:
    """The path of the `rlvr` executable, or FileNotFoundError saying where it looked."""
    candidates = []
    if explicit:
        candidates.append(explicit)
    if os.environ.get("RLVR_BIN"):
        candidates.append(os.environ["RLVR_BIN"])
    candidates.append(str(Path(__file__).resolve().parent / "bin" / "rlvr"))
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    on_path = shutil.which("rlvr")
    if on_path:
        return on_path
    raise FileNotFoundError(
        "cannot find the rlvr binary: set RLVR_BIN, bundle it as rlvr/bin/rlvr, or put it on PATH "
        f"(looked at {candidates} and PATH)"
    )
