# The framed protocol on descriptors 3 (requests) and 4 (responses).

REQUEST_FD = 3
RESPONSE_FD = 4
STDERR_CAP = 64 * 1024
# Exit status Python uses when flushing stdout fails at shutdown.
FLUSH_FAILED_STATUS = 120


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

