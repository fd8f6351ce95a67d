# The tamper sensor: a CPython audit hook installed in a judge test child before the solution
# runs. It is telemetry, not a defence (the defences are the referee and the sandbox): it notes,
# once per kind, what the solution did that an honest program has no reason to do, and writes
# the kind's name on its own line to a memory file the runner reads after the test.
#
# Only operations attributed to the solution count: the nearest Python frame, skipping the
# standard modules a solution would reach them through (inspect, ctypes, threading, the import
# system), must run in the solution's `__main__`. Standard modules that inspect frames for their
# own purposes (namedtuple, enum, typing, traceback formatting an exception) are not the solution.

import os
import sys

from .protocol import read_exact


SENSOR_EVENTS = {
    "os.kill": "signal",
    "os.killpg": "signal",
    "resource.prlimit": "prlimit",
    "sys._getframe": "frame_introspection",
    "sys._current_frames": "frame_introspection",
    "object.__getattr__": "frame_introspection",
    "gc.get_referrers": "gc_introspection",
    "gc.get_referents": "gc_introspection",
    "gc.get_objects": "gc_introspection",
}
SENSOR_PASS_THROUGH = frozenset((
    "inspect", "ctypes", "threading", "importlib._bootstrap", "importlib._bootstrap_external", "dis", "bdb",
    "pdb", "trace", "cProfile", "profile",
))
# Attributes that lead from an object to a frame. A function's `__code__` is not one:
# `inspect.signature` and `functools` read it for honest reasons.
SENSOR_FRAME_ATTRIBUTES = frozenset(("gi_frame", "cr_frame", "ag_frame", "tb_frame", "f_back"))


def install_sensor(report_fd, main_namespace, runner_namespaces):
    """Adds the audit hook (it cannot be removed); `main_namespace` is the solution's globals,
    `runner_namespaces` what `runner_module_namespaces` found at the runner's start."""
    seen = set()
    busy = [False]
    own_pid = os.getpid()
    getframe = sys._getframe
    # The runner's own code (the wrappers of install_self_signals, the live channel's objects)
    # passes calls through too: the namespaces of the runner's modules, taken before any
    # solution ran (by identity: a module the solution names after one of them is not one).

    def from_solution():
        frame = getframe(2)
        while frame is not None and (frame.f_globals.get("__name__") in SENSOR_PASS_THROUGH
                                     or id(frame.f_globals) in runner_namespaces):
            frame = frame.f_back
        return frame is not None and frame.f_globals is main_namespace

    def hook(event, arguments):
        kind = SENSOR_EVENTS.get(event)
        if kind is None:
            if not event.startswith("ctypes."):
                return
            kind = "ctypes"
        if kind in seen or busy[0]:
            return
        busy[0] = True
        try:
            if kind == "signal":
                if arguments[0] in (0, own_pid):
                    return
            elif kind == "prlimit":
                if arguments[0] in (0, own_pid):
                    return
            elif event == "object.__getattr__":
                if arguments[1] not in SENSOR_FRAME_ATTRIBUTES:
                    return
            if not from_solution():
                return
            seen.add(kind)
            try:
                os.write(report_fd, kind.encode() + b"\n")
            except OSError:
                pass
        except Exception:
            pass
        finally:
            busy[0] = False

    sys.addaudithook(hook)
    watch_tracing(seen, report_fd, from_solution_frame=lambda frame: frame.f_globals is main_namespace)


def runner_module_namespaces():
    """The ids of the global namespaces of the runner's modules (this package's). Taken once, in
    the template: walking `sys.modules` in each test child would write a page of every module
    object it passes (their reference counts), about 90 copy-on-write faults a test."""
    prefix = __package__ + "."
    return frozenset(id(module.__dict__) for name, module in list(sys.modules.items())
                     if (name == __package__ or name.startswith(prefix)) and module is not None)


def watch_tracing(seen, report_fd, from_solution_frame):
    """`sys.settrace` and `sys.setprofile` with a function (not None, which only turns tracing
    off) called from the solution's code count as `tracing`. Their audit event carries no
    argument, so the two functions are wrapped instead."""
    getframe = sys._getframe

    def wrap(original):
        def installed(function, *rest):
            if function is not None and "tracing" not in seen and from_solution_frame(getframe(1)):
                seen.add("tracing")
                try:
                    os.write(report_fd, b"tracing\n")
                except OSError:
                    pass
            return original(function, *rest)

        installed.__name__, installed.__qualname__, installed.__doc__ = (original.__name__, original.__name__,
                                                                         original.__doc__)
        return installed

    sys.settrace = wrap(sys.settrace)
    sys.setprofile = wrap(sys.setprofile)


SENSOR_KINDS = frozenset(SENSOR_EVENTS.values()) | {"ctypes", "tracing"}


def read_sensor_report(fd):
    """The kinds a test child reported, in a stable order; lines that name no kind are dropped
    (the file is the child's to scribble on)."""
    size = os.fstat(fd).st_size
    os.lseek(fd, 0, os.SEEK_SET)
    data = read_exact(fd, min(size, 4096)) if size else b""
    kinds = set()
    for line in data.split(b"\n"):
        text = line.decode("ascii", "replace")
        if text in SENSOR_KINDS:
            kinds.add(text)
    return sorted(kinds)
