"""Exit 0 when every distribution named in a requirements file is installed (at the exact
version, for a `name==version` pin), else 1, listing what is missing or at another version."""

import re
import sys
from importlib import metadata


def main(path):
    missing = []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name = re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0]
        pinned = re.fullmatch(r"[^=<>!~\[; ]+(?:\[[^\]]*\])?\s*==\s*([^\s;,]+)", line)
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
            continue
        if pinned and installed != pinned.group(1):
            missing.append(f"{name} ({installed} installed, {pinned.group(1)} pinned)")
    if missing:
        print("missing:", " ".join(missing))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
