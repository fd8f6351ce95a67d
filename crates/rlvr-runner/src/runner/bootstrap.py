# Starts an embedded package (the runner's, the referee's) from its sources, which arrive as
# arguments, without a file on any disk: `argv[1]` names the entry module, `argv[2]` lists the
# package's modules, each with how many of the following arguments hold its source (one argument
# may not exceed 128 KiB, so a long source crosses in pieces).
#
# A short-lived child compiles every module and hands the code objects back (marshal), so the
# compiler's peak memory never becomes part of the runner, whose every test child is a fork of it
# (half the anonymous memory to copy and fault in per test). A finder on `sys.meta_path` then
# serves those code objects to the import system, so that the modules import one another as
# modules on disk would (`from .protocol import read_frame`); once every module is imported the
# finder leaves `sys.meta_path` (a program the runner runs imports as in a fresh interpreter) and
# the entry module's `main()` runs.
import marshal
import os
import sys

import _frozen_importlib  # the import system itself (importlib._bootstrap), loaded at start-up


def package_sources():
    """`(entry module, {module name: source})` from the arguments, which it removes."""
    entry, manifest, pieces = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
    del sys.argv[1:]
    sources = {}
    for name, count in zip(manifest[0::2], manifest[1::2]):
        count = int(count)
        sources[name] = "".join(pieces[:count])
        del pieces[:count]
    return entry, sources


def compiled_modules(sources):
    """`{module name: code object}`, compiled in a child."""
    read_end, write_end = os.pipe()
    compiler = os.fork()
    if compiler == 0:
        try:
            os.close(read_end)
            codes = {name: compile(source, f"<{name}>", "exec", dont_inherit=True)
                     for name, source in sources.items()}
            view = memoryview(marshal.dumps(codes))
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


class EmbeddedModules:
    """Finds and loads the package's modules from their code objects. The package itself is the
    module with no dot in its name; every other is one of its submodules."""

    def __init__(self, codes):
        self.codes = codes

    def find_spec(self, name, path=None, target=None):
        if name not in self.codes:
            return None
        return _frozen_importlib.ModuleSpec(name, self, is_package="." not in name)

    def create_module(self, spec):
        return None  # the import system's default module

    def exec_module(self, module):
        # Each module's code runs once: it is dropped once run, so the runner keeps no copy.
        exec(self.codes.pop(module.__name__), module.__dict__)


def start():
    entry, sources = package_sources()
    finder = EmbeddedModules(compiled_modules(sources))
    sources = None
    sys.meta_path.insert(0, finder)
    try:
        for name in list(finder.codes):
            __import__(name)
    finally:
        sys.meta_path.remove(finder)
    sys.modules[entry].main()


start()
