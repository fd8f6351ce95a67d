# What a test child does so that it behaves like a fresh `python FILE` process.

import atexit
import builtins
import gc
import io
import os
import resource
import signal
import sys
import traceback
import types

try:
    import _sitebuiltins
except ImportError:  # pragma: no cover - always present in CPython
    _sitebuiltins = None

from .harness import captured_call, harness_entry, harness_module
from .isolation import RESET_SIGNALS, SET_RESOURCE_LIMITS, WIRE_DESCRIPTORS, isolation_failed
from .live import LIVE_REPLY_FD, LIVE_REQUEST_FD, serve_live
from .protocol import FLUSH_FAILED_STATUS, write_all
from .sensor import install_sensor


def install_site_builtins():
    """`-S` skips `site`, which is what defines `exit` and `quit`: put the same objects back."""
    if _sitebuiltins is not None:
        builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
        builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")


# Signals whose default action does not end a process.
SIGNALS_THAT_DO_NOT_END = frozenset(getattr(signal, name) for name in (
    "SIGCHLD", "SIGCONT", "SIGURG", "SIGWINCH", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU") if hasattr(signal, name))


def install_self_signals():
    """A test child is init of its own PID namespace, and the kernel ignores a signal init sends
    itself with the default disposition (SIGKILL included): a program that prints and then kills
    itself would go on and pass, where a fresh `python` dies with its output unflushed (issue
    22). `os.kill`, `os.killpg`, `signal.raise_signal` and `signal.pthread_kill` aimed at the
    process itself end it as the signal would: at once, nothing flushed, status 128 + the
    signal's number. Installed once in the runner; only a namespace's init (a test child)
    is concerned."""
    def ends(number):
        try:
            number = int(number)
        except (TypeError, ValueError):
            return False
        if os.getpid() != 1 or number in SIGNALS_THAT_DO_NOT_END or not 0 < number < signal.NSIG:
            return False
        return number == signal.SIGKILL or signal.getsignal(number) == signal.SIG_DFL

    def die(number):
        os._exit(128 + int(number))

    original_kill, original_killpg = os.kill, os.killpg
    original_raise, original_pthread_kill = signal.raise_signal, signal.pthread_kill

    def kill(pid, number):
        if pid in (0, 1) and ends(number):
            if pid == 0:
                original_kill(pid, number)  # the rest of the process group
            die(number)
        return original_kill(pid, number)

    def killpg(group, number):
        if group in (0, os.getpgrp()) and ends(number):
            original_killpg(group, number)
            die(number)
        return original_killpg(group, number)

    def raise_signal(number):
        if ends(number):
            die(number)
        return original_raise(number)

    def pthread_kill(thread, number):
        if ends(number):
            die(number)
        return original_pthread_kill(thread, number)

    for module, function in ((os, kill), (os, killpg), (signal, raise_signal), (signal, pthread_kill)):
        original = getattr(module, function.__name__)
        function.__doc__, function.__qualname__ = original.__doc__, original.__qualname__
        function.__module__ = getattr(original, "__module__", module.__name__)
        setattr(module, function.__name__, function)


def exit_status(error):
    """The process exit status `python script.py` gives for an uncaught `SystemExit`."""
    code = error.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        print(code, file=sys.stderr)
    except Exception:
        pass
    return 1


def standard_streams():
    """Text streams on descriptors 0, 1, 2, configured as CPython configures them for a
    non-interactive run (UTF-8, no newline translation, stderr with backslashreplace). Built
    once, in the runner, while 0, 1 and 2 are /dev/null (seekable, at offset 0, as a test's
    memory files are); the runner never uses them, so every test child starts from the same
    untouched objects, its own copies (building them in each child wrote about 70 pages)."""
    saved_stderr = os.dup(2)
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        return (
            io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8", errors="strict",
                             newline="\n"),
            io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8", errors="strict",
                             newline="\n"),
            io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)), encoding="utf-8",
                             errors="backslashreplace", newline="\n", line_buffering=True),
        )
    finally:
        os.dup2(saved_stderr, 2)
        os.close(saved_stderr)
        os.close(null)


def install_standard_streams(streams):
    """In a test child: the runner's prebuilt streams become the program's `sys.std*`."""
    sys.stdin = sys.__stdin__ = streams[0]
    sys.stdout = sys.__stdout__ = streams[1]
    sys.stderr = sys.__stderr__ = streams[2]


def reseed_random_generators():
    """A forked child inherits the parent's generator state; a fresh process would not."""
    random_module = sys.modules.get("random")
    if random_module is not None:
        random_module.seed()
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        try:
            numpy_random.seed()
        except Exception:
            pass


def fresh_flags():
    """`sys.flags` as `python FILE` sets them. The runner starts with `-I -S` (isolated, no
    site), which a fresh process does not; a program can print `sys.flags` or branch on it."""
    current = sys.flags
    names = [name for name in FLAG_NAMES if hasattr(current, name)]
    fresh = {"isolated": 0, "no_site": 0, "no_user_site": 0, "ignore_environment": 0, "safe_path": False}
    values = tuple(fresh.get(name, getattr(current, name)) for name in names)
    namespace = {name: property(lambda self, position=position: tuple.__getitem__(self, position))
                 for position, name in enumerate(names)}
    namespace["__repr__"] = lambda self: "sys.flags(" + ", ".join(f"{name}={value!r}" for name, value in zip(names, self)) + ")"
    namespace["__slots__"] = ()
    flags_type = type("flags", (tuple,), namespace)
    flags_type.__module__ = "sys"
    return flags_type(values)


# sys.flags' fields in their order (3.11 and later add to the end).
FLAG_NAMES = ("debug inspect interactive optimize dont_write_bytecode no_user_site no_site ignore_environment "
              "verbose bytes_warning quiet hash_randomization isolated dev_mode utf8_mode "
              "warn_default_encoding safe_path int_max_str_digits gil thread_inherit_context "
              "context_aware_warnings").split()
# Built once in the runner (every test child gets its own copy by forking), as is the environment
# a fresh `python FILE` of the references has: unbuffered output off.
FRESH_FLAGS = fresh_flags()
# The test children's standard streams (`standard_streams`), built by `main` once 0 and 1 are
# /dev/null.
CHILD_STREAMS = []
os.environ.pop("PYTHONUNBUFFERED", None)


def report_uncaught(error):
    """What CPython does with an exception that ends the program: call `sys.excepthook` (the
    program may have replaced it, e.g. with one that calls `os._exit(0)`) with the traceback
    starting at the program's frame; a hook that fails is reported and the original printed."""
    tb = error.__traceback__.tb_next if error.__traceback__ is not None else None
    hook = getattr(sys, "excepthook", None)
    if hook is None:
        try:
            print("sys.excepthook is missing", file=sys.stderr)
        except BaseException:
            pass
        return
    try:
        hook(type(error), error, tb)
    except BaseException as hook_error:
        try:
            print("Error in sys.excepthook:", file=sys.stderr)
            sys.__excepthook__(type(hook_error), hook_error, hook_error.__traceback__)
            print("\nOriginal exception was:", file=sys.stderr)
            sys.__excepthook__(type(error), error, tb)
        except BaseException:
            pass


def close_descriptors_except(keep):
    """Closes every descriptor from 3 up except those in `keep`."""
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)


def prepare_test_child(descriptors, keep, cpu_seconds, output_bytes, memory_bytes):
    """A test child's steps after `become_solution` (runner/isolation.py), in the list's order:
    `descriptors` on 0, 1 and 2 and every other descriptor but `keep` closed; the signal
    dispositions a fresh `python` has; the test's limits (CPU: the hard limit one second above
    kills; output: writes past the cap fail; address space). A step that fails ends the child,
    naming itself, before the solution runs."""
    step = WIRE_DESCRIPTORS
    try:
        for target, source in enumerate(descriptors):
            os.dup2(source, target)
        close_descriptors_except(keep)
        step = RESET_SIGNALS
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        step = SET_RESOURCE_LIMITS
        if cpu_seconds > 0:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
        if output_bytes > 0:
            resource.setrlimit(resource.RLIMIT_FSIZE, (output_bytes, output_bytes))
        if memory_bytes > 0:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    except BaseException as error:
        isolation_failed(step, error)


def run_child(units, extra, filename, descriptors, limits, harness=None, stdin_text="", judge=None):
    """In the forked child: become a fresh `python FILE` and never return. `judge` (judge
    profile) holds the tamper sensor's descriptor and, for a functional test, `live`: after the
    units (the prelude, then the solution) the child answers the referee's calls
    (runner/live.py) instead of running an appended test."""
    status = 1
    judge = judge or {}
    live = judge.get("live", False)
    try:
        keep = {fd for fd in (judge.get("sensor_fd"),) if fd}
        if live:
            keep |= {LIVE_REQUEST_FD, LIVE_REPLY_FD}
        prepare_test_child(descriptors, keep, limits["cpu_s"], limits["output_bytes"], limits["memory_bytes"])
        install_standard_streams(CHILD_STREAMS)
        reseed_random_generators()
        # `python -c CODE` (filename "-c", as Code-R1 runs short programs) has no `__file__`,
        # `sys.argv == ["-c"]`, and does not flush before handling an uncaught exception.
        command_mode = filename == "-c"
        main = types.ModuleType("__main__")
        main.__dict__.update({"__builtins__": builtins, "__cached__": None})
        if not command_mode:
            main.__dict__["__file__"] = filename
        sys.modules["__main__"] = main
        sys.argv = [filename]
        sys.flags = FRESH_FLAGS
        if judge.get("sensor_fd"):
            install_sensor(judge["sensor_fd"], main.__dict__, judge["runner_namespaces"])
        gc.enable()
        try:
            if harness is not None:
                # One test of an in-process reference, as one batch child test: the process's
                # own stdin is empty; only what the harness captures is the answer, so fd 1
                # (os.write(1, ...), a module-level `stdout` alias) goes nowhere; and the
                # reference's process ends with os._exit (no atexit handlers).
                answer_fd = os.dup(1)
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.close(null)
                sys.stdout = open(1, "w", closefd=False)
                module = harness_module(harness)
                try:
                    entry = harness_entry(units, harness, module.__dict__)
                    printed, failure = captured_call(entry, stdin_text)
                except BaseException as error:
                    printed, failure = "", "".join(traceback.format_exception(type(error), error, error.__traceback__))
                write_all(answer_fd, printed.encode("utf-8", "surrogateescape"))
                if failure is not None:
                    write_all(2, failure.encode("utf-8", "backslashreplace"))
                    os._exit(1)
                os._exit(0)
            else:
                prelude = {}
                for position, code in enumerate(units):
                    exec(code, main.__dict__)
                    if live and position == 0 and len(units) > 1:
                        prelude = dict(main.__dict__)
                if live:
                    serve_live(main.__dict__, prelude)
                elif extra is not None:
                    exec(extra, main.__dict__)
            status = 0
            ending = None
        except BaseException as error:
            ending = error
        if not command_mode:
            # `python FILE` flushes stdout and stderr as soon as the program's code returns,
            # before an exception is handled (so output survives an excepthook or an atexit
            # handler that calls os._exit); errors are ignored there.
            for stream in (sys.stderr, sys.stdout):
                try:
                    if not stream.closed:
                        stream.flush()
                except BaseException:
                    pass
        if isinstance(ending, SystemExit):
            status = exit_status(ending)
        elif ending is not None:
            report_uncaught(ending)
            status = 1
        status = finalize(main, status)
    finally:
        os._exit(status)


def finalize(main, status):
    """What `Py_FinalizeEx` does after the program: join non-daemon threads (through
    `threading`, where the program imported it: the runner does not, so that no test child runs
    its after-fork hook, about 120 pages written per child), run atexit handlers (last
    registered first), flush the standard streams unless the program closed them, then clear
    `__main__` as CPython clears modules (names starting with one underscore first, then the
    rest), so that what `__del__` methods print still comes out, and flush again. Returns the
    exit status (120 when a flush of stdout fails, as CPython)."""
    threading_module = sys.modules.get("threading")
    if threading_module is not None:
        try:
            threading_module._shutdown()
        except BaseException:
            pass
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    status = flush_standard_streams(status)
    try:
        namespace = main.__dict__
        for private in (True, False):
            for name in list(namespace):
                if name == "__builtins__" or type(name) is not str:
                    continue
                if private and not (name.startswith("_") and not name.startswith("__")):
                    continue
                namespace[name] = None
    except BaseException:
        pass
    return flush_standard_streams(status)


def flush_standard_streams(status):
    try:
        if not sys.stdout.closed:
            sys.stdout.flush()
    except BaseException:
        status = FLUSH_FAILED_STATUS if status == 0 else status
    try:
        if not sys.stderr.closed:
            sys.stderr.flush()
    except BaseException:
        pass
    return status
