# The framed protocol on descriptors 3 (requests) and 4 (responses).

import json
import os
import struct
import sys


REQUEST_FD = 3
RESPONSE_FD = 4
STDERR_CAP = 64 * 1024
# Exit status Python uses when flushing stdout fails at shutdown.
FLUSH_FAILED_STATUS = 120


def adopt_protocol_descriptors():
    """The requests arrive on stdin and the responses leave on stdout: move them to
    REQUEST_FD and RESPONSE_FD and put /dev/null on 0 and 1, so nothing printed later (by a
    program, a test or Python itself) can reach the protocol."""
    os.dup2(0, REQUEST_FD)
    os.dup2(1, RESPONSE_FD)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    os.close(null)


def add_site_packages():
    """`-S` also leaves site-packages off `sys.path`: add them (without running `.pth` files,
    whose imports cost tens of milliseconds) so numpy and pandas import as usual, in the runner's
    programs and in the referee's tests alike."""
    import site
    import sysconfig

    # `site.getsitepackages()` adds what distributions patch in (Debian's
    # /usr/lib/python3/dist-packages, where its numpy and pandas live); importing `site`
    # under -S runs nothing.
    candidates = [sysconfig.get_path(key) for key in ("purelib", "platlib")]
    candidates += site.getsitepackages()
    for path in candidates:
        if path and path not in sys.path and os.path.isdir(path):
            sys.path.append(path)


def read_exact(fd, size):
    chunks = []
    while size > 0:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_frame():
    (length,) = struct.unpack("<I", read_exact(REQUEST_FD, 4))
    return json.loads(read_exact(REQUEST_FD, length))


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_frame(header, *payloads):
    data = json.dumps(header, separators=(",", ":")).encode()
    write_all(RESPONSE_FD, struct.pack("<I", len(data)) + data + b"".join(payloads))

