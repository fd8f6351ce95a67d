# Starts the runner (its source is argv[1:], joined): compiles it in a short-lived child and runs the code
# object here, so the compiler's peak memory never becomes part of the runner, whose every test
# child is a fork of it (half the anonymous memory to copy and fault in per test).
import marshal
import os
import sys


def compiled_runner():
    # The source arrives in pieces (one argument may not exceed 128 KiB): join them.
    source = "".join(sys.argv[1:])
    del sys.argv[1:]
    read_end, write_end = os.pipe()
    compiler = os.fork()
    if compiler == 0:
        try:
            os.close(read_end)
            view = memoryview(marshal.dumps(compile(source, "<runner>", "exec", dont_inherit=True)))
            while view:
                view = view[os.write(write_end, view) :]
        finally:
            os._exit(0)
    os.close(write_end)
    chunks = []
    while True:
        chunk = os.read(read_end, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(compiler, 0)
    return marshal.loads(b"".join(chunks))


exec(compiled_runner())
