"""`python -m rlvr ARGS`: runs the `rlvr` binary of this installation with ARGS (the binary the
platform wheel installs next to the interpreter's scripts, or `$RLVR_BIN`, or one on PATH)."""

from __future__ import annotations

import os
import sys

from rlvr._binary import find_binary


def main() -> None:
    try:
        binary = find_binary()
    except FileNotFoundError as error:
        print(f"python -m rlvr: {error}", file=sys.stderr)
        sys.exit(2)
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
