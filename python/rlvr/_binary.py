"""Finding the `rlvr` binary: `$RLVR_BIN`, then the one this installation carries (the platform
wheel installs it as a script: the environment's `bin/`, the user scheme's, or `<target>/bin`
for `pip install --target`; or `rlvr/bin/rlvr` inside the package), then PATH."""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path
from typing import List, Optional


def _installed_candidates() -> List[str]:
    package = Path(__file__).resolve().parent
    candidates = [package / "bin" / "rlvr"]
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidates.append(Path(scripts) / "rlvr")
    user_scheme = f"{os.name}_user"
    if user_scheme in sysconfig.get_scheme_names():
        candidates.append(Path(sysconfig.get_path("scripts", scheme=user_scheme)) / "rlvr")
    # `pip install --target DIR` puts scripts in DIR/bin, next to the package.
    candidates.append(package.parent / "bin" / "rlvr")
    return [str(candidate) for candidate in candidates]


def find_binary(explicit: Optional[str] = None) -> str:
    """The path of the `rlvr` executable, or FileNotFoundError saying where it looked."""
    candidates = []
    if explicit:
        candidates.append(explicit)
    if os.environ.get("RLVR_BIN"):
        candidates.append(os.environ["RLVR_BIN"])
    candidates += _installed_candidates()
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    on_path = shutil.which("rlvr")
    if on_path:
        return on_path
    raise FileNotFoundError(
        "cannot find the rlvr binary, which local verification needs (this looks like the "
        "client-only package): to use a remote server, set RLVR_URL=http://HOST:PORT of a "
        "running `rlvr serve` (or pass its URL to rlvr.Client); to verify on this machine, "
        "install the platform wheel (Linux x86_64 or aarch64; it carries the binary), set "
        f"RLVR_BIN, or put rlvr on PATH (looked at {candidates} and PATH)"
    )
