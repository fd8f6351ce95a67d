"""`/run_code`'s work files in directories and `fetch_files`, inside the sandbox (issue 35).

Run as the sandboxed program (`python -I -c THIS PLAN`) instead of the request's program when
it has a file in a directory or asks for files back. The plan (JSON) names the program's
command, the flat work files the sandbox placed and where each goes, and the files to fetch.
This script puts the files in place, runs the program as a plain run would (`python -I
main.py` or `bash main.sh`, the same standard streams), then reads each file to fetch as the
program left it, within the sandbox: no symbolic link the program made is followed, at any
component (`O_NOFOLLOW` from the work directory down; only regular files are read), so nothing
outside the work directory is read, and the server reads no file at all. What it read goes
after the program's standard output, framed (read from the end by the server): the JSON
payload, its length in 16 hex digits, then MAGIC. The payload also carries the program's exit
status (negative: the killing signal), which this process cannot reproduce as init of its PID
namespace.
"""

import base64
import json
import os
import stat
import subprocess
import sys

MAGIC = b"\x00rlvr-fetched-files\x00"


def place(files):
    """Reads every flat work file, removes it, then writes each at its own path."""
    contents = []
    for flat, _ in files:
        with open(flat, "rb") as handle:
            contents.append(handle.read())
        os.unlink(flat)
    for (_, path), data in zip(files, contents):
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)


def open_beneath(name):
    """Opens `name` under the work directory one component at a time, following no symbolic
    link at any of them (as openat2's RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS would)."""
    parts = name.split("/")
    directory = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=directory)
            os.close(directory)
            directory = inner
        return os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
    finally:
        os.close(directory)


def read_regular(name, most):
    """At most `most` bytes of `name` when it is a regular file, else None (no link is
    followed; a FIFO or device is never read, so nothing can block)."""
    descriptor = open_beneath(name)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        chunks = []
        left = most
        while left > 0:
            chunk = os.read(descriptor, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(descriptor)


def fetch(names, file_bytes, total_bytes):
    """Each regular file named (no symbolic link followed), base64, within the caps."""
    fetched = {}
    omitted = []
    budget = total_bytes
    for name in names:
        try:
            data = read_regular(name, min(file_bytes, budget) + 1)
        except OSError:
            continue
        if data is None:
            continue
        if len(data) > min(file_bytes, budget):
            omitted.append(name)
            continue
        budget -= len(data)
        fetched[name] = base64.b64encode(data).decode("ascii")
    return fetched, omitted


def main():
    plan = json.loads(sys.argv[1])
    place(plan["files"])
    command = [sys.executable if word == "python" else word for word in plan["command"]]
    status = subprocess.call(command)
    fetched, omitted = fetch(plan["fetch"], plan["file_bytes"], plan["total_bytes"])
    payload = json.dumps({"status": status, "files": fetched, "omitted": omitted}).encode()
    sys.stdout.flush()
    trailer = payload + b"%016x" % len(payload) + MAGIC
    written = 0
    while written < len(trailer):
        written += os.write(1, trailer[written:])
    sys.exit(status if 0 <= status < 256 else 1)


main()
