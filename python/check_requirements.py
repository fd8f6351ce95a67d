"""Exit 0 when every distribution named in a requirements file is installed, else 1."""

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
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        print("missing:", " ".join(missing))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
