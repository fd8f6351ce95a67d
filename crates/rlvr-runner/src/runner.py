"""rlvr warm runner: runs one job's tests inside one sandbox, one forked child per test.

The Rust side starts this file as `python -I -S -c <bootstrap>` inside the sandbox and speaks a
framed protocol over the runner's original stdin (requests) and stdout (responses); both are moved
to high descriptors at start-up so that each test child gets fresh descriptors 0, 1 and 2 backed by
memory files (so `open(0)`, `sys.stdin.buffer` and `os.read(0, n)` behave as with a real file).

Frame: 4-byte little-endian length, a JSON header of that length, then the raw payloads whose
lengths the header names. Requests:

  load  {"op":"load","units":[n,...],"filename":str,"preload":[module,...]}  + unit sources
        compiles every unit once; imports the preload modules once (numpy, pandas, ...)
  run   {"op":"run","stdin":n,"extra":n,"wall_ms":int,"cpu_s":int,"output_bytes":int,
         "memory_bytes":int}  + stdin bytes + extra source
        forks a child that runs the units then the extra source as `__main__` would, in a fresh
        copy of the interpreter state, and reports how it ended
  exit  {"op":"exit"}

Expected outputs never enter the sandbox: the comparison happens in Rust.
"""

import ast
import atexit
import builtins
import gc
import io
import json
import os
import resource
import select
import signal
import struct
import sys
import threading
import time
import traceback
import types

try:
    import _sitebuiltins
except ImportError:  # pragma: no cover - always present in CPython
    _sitebuiltins = None

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


def write_frame(header, *payloads):
    data = json.dumps(header, separators=(",", ":")).encode()
    message = struct.pack("<I", len(data)) + data + b"".join(payloads)
    view = memoryview(message)
    while view:
        written = os.write(RESPONSE_FD, view)
        view = view[written:]


def install_site_builtins():
    """`-S` skips `site`, which is what defines `exit` and `quit`: put the same objects back."""
    if _sitebuiltins is not None:
        builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
        builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")


def add_site_packages():
    """`-S` also leaves site-packages off `sys.path`: add them (without running `.pth` files,
    whose imports cost tens of milliseconds) so numpy and pandas import as usual."""
    import sysconfig

    for key in ("purelib", "platlib"):
        path = sysconfig.get_path(key)
        if path and path not in sys.path and os.path.isdir(path):
            sys.path.append(path)


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


def fresh_standard_streams():
    """New text streams on descriptors 0, 1, 2, configured as CPython configures them for
    a non-interactive run (UTF-8, no newline translation, stderr with backslashreplace)."""
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(
        io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8", errors="strict", newline="\n"
    )
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8", errors="strict", newline="\n"
    )
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
        encoding="utf-8",
        errors="backslashreplace",
        newline="\n",
        line_buffering=True,
    )


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


def run_child(units, extra, filename, descriptors, marker_fd, marker, limits, harness=None, stdin_text=""):
    """In the forked child: become a fresh `python FILE` and never return."""
    status = 1
    try:
        for target, source in enumerate(descriptors):
            os.dup2(source, target)
        os.closerange(3, marker_fd)
        os.closerange(marker_fd + 1, 1 << 16)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        cpu = limits["cpu_s"]
        if cpu > 0:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        if limits["output_bytes"] > 0:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limits["output_bytes"], limits["output_bytes"]))
        if limits["memory_bytes"] > 0:
            resource.setrlimit(resource.RLIMIT_AS, (limits["memory_bytes"], limits["memory_bytes"]))
        fresh_standard_streams()
        reseed_random_generators()
        main = types.ModuleType("__main__")
        main.__dict__.update({"__file__": filename, "__builtins__": builtins, "__cached__": None})
        sys.modules["__main__"] = main
        sys.argv = [filename]
        gc.enable()
        try:
            if harness is not None:
                # The references' process-level stdin is not the test input, and writes to the
                # real stdout (through the module-level `stdout` alias) are not captured.
                sys.stdin = io.StringIO("")
                builtins.exit = builtins.quit = None
                real_stdout = sys.stdout
                sys.stdout = open(os.devnull, "w")
                for code in units:
                    exec(code, main.__dict__)
                sys.stdout = real_stdout
                run_in_harness(harness, main.__dict__, stdin_text)
            else:
                for code in units:
                    exec(code, main.__dict__)
                if extra is not None:
                    exec(extra, main.__dict__)
            status = 0
            completed = True
        except SystemExit as error:
            status = exit_status(error)
            completed = False
        except BaseException as error:
            # Print the traceback as `python FILE` would: without this runner's own frame.
            traceback.print_exception(type(error), error, error.__traceback__.tb_next)
            status = 1
            completed = False
        # What `Py_FinalizeEx` does before flushing: join non-daemon threads, run atexit.
        try:
            threading._shutdown()
        except BaseException:
            pass
        try:
            atexit._run_exitfuncs()
        except BaseException:
            pass
        # Interpreter shutdown flushes the standard streams unless the program closed them.
        try:
            if not sys.stdout.closed:
                sys.stdout.flush()
        except BaseException:
            status = FLUSH_FAILED_STATUS if status == 0 else status
            completed = False
        try:
            if not sys.stderr.closed:
                sys.stderr.flush()
        except BaseException:
            pass
        if completed:
            try:
                os.write(marker_fd, marker)
            except OSError:
                pass
    finally:
        os._exit(status)


# The star-import header verl's prime_code puts before every stdin program (a list of standard
# modules, then the recursion limit it sets).
PRIME_MODULES = ("string re datetime collections heapq bisect copy math random statistics itertools "
                 "functools operator io sys json builtins typing").split()
PRIME_HEADER = (
    "".join(f"from {module} import *\n" for module in PRIME_MODULES)
    + "".join(f"import {module}\n" for module in PRIME_MODULES if module not in ("builtins", "typing"))
    + "sys.setrecursionlimit(6*10**5)\n"
)
# LiveCodeBench's (rllm's copy) preamble: the common imports and its recursion limit.
LIVE_CODE_BENCH_HEADER = (
    "import itertools, collections, heapq, bisect, math, string, re, functools, operator, random, sys\n"
    "from typing import *\nfrom collections import *\nfrom itertools import *\nfrom heapq import *\n"
    "from bisect import *\nfrom math import *\nfrom functools import *\n"
    "sys.setrecursionlimit(50000)\n"
)


def without_main_guard(source):
    """Unwraps a final `if __name__ == '__main__':` block (both references do)."""
    try:
        tree = ast.parse(source)
        last = tree.body[-1]
        if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
            return ast.unparse(tree.body[:-1]) + "\n" + ast.unparse(last.body)
    except Exception:
        pass
    return source


def prime_program(source):
    """verl prime_code's text transformation: lines that start with `import `/`from ` stay at
    module level until the first other line; from there every line goes into `def code():`
    (one tab deeper), and module-level aliases `stdin`/`stdout` bind the real streams."""
    lines = []
    for line in without_main_guard(source).split("\n"):
        is_import = line.startswith("from ") or line.startswith("import ")
        lines.append(line + "\n" if is_import else "\t" + line + "\n")
    program, started = "", False
    for line in lines:
        if line.startswith("\t") and not started:
            program += "stdin = sys.stdin\nstdout = sys.stdout\ndef code():\n" + line
            started = True
        elif started and (line.startswith("from ") or line.startswith("import ")):
            program += "\t" + line
        else:
            program += line
    return PRIME_HEADER + program


def live_code_bench_program(source):
    """LiveCodeBench's transformation: top-level imports hoisted, every other statement wrapped
    into `def code():`."""
    tree = ast.parse(without_main_guard(source))
    imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    body = [node for node in tree.body if not isinstance(node, (ast.Import, ast.ImportFrom))] or [ast.Pass()]
    arguments = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    function = ast.FunctionDef(name="code", args=arguments, body=body, decorator_list=[], returns=None)
    if sys.version_info >= (3, 12):
        function.type_params = []
    module = ast.Module(body=imports + [function], type_ignores=[])
    return LIVE_CODE_BENCH_HEADER + ast.unparse(ast.fix_missing_locations(module)) + "\n"


HARNESS_PROGRAMS = {"prime": prime_program, "live_code_bench": live_code_bench_program}


def run_in_harness(harness, namespace, stdin_text):
    """The in-process rules of prime_code and LiveCodeBench: call `code()` with stdin mocked
    by a string and stdout captured in memory; `SystemExit` ends the test normally, any other
    exception fails it (exit status 1)."""
    import unittest.mock

    method = namespace.get("code")
    if method is None:
        raise RuntimeError("the harness found no code() to call")
    capture = io.StringIO()
    if harness == "prime":
        # verl's capture replaces close() by a one-argument lambda: `sys.stdout.close()` raises.
        capture.close = lambda x: 1
    saved_stdout = sys.stdout
    sys.stdout = capture
    sys.stdin = io.StringIO(stdin_text)
    opener = builtins.open
    if harness == "prime":
        builtins.open = unittest.mock.mock_open(read_data=stdin_text)
    try:
        method()
    except SystemExit:
        pass
    finally:
        builtins.open = opener
        sys.stdout = saved_stdout
        return_text = capture.getvalue()
        saved_stdout.write(return_text)


def memory_file(name, content=b""):
    fd = os.memfd_create(name, 0)
    if content:
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    return fd


def test_files(state, stdin):
    """The memory files behind a test's fds 0, 1 and 2, created once per runner and emptied
    before every test (every process of the previous test is dead by then)."""
    files = state.get("files")
    if files is None:
        files = state["files"] = (memory_file("stdin"), memory_file("stdout"), memory_file("stderr"))
    for fd in files:
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
    view = memoryview(stdin)
    while view:
        view = view[os.write(files[0], view) :]
    os.lseek(files[0], 0, os.SEEK_SET)
    return files


def others_alive():
    """Whether any process besides the runner is left. When the runner is the namespace's init,
    every orphan has been reparented to it, so its own children are all there is."""
    if os.getpid() != 1:
        return True
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def read_memory_file(fd, cap):
    size = os.fstat(fd).st_size
    os.lseek(fd, 0, os.SEEK_SET)
    data = read_exact(fd, min(size, cap)) if size else b""
    return data, size > cap


def kill_everything_else(child):
    """Kill the test's whole process tree, then reap every child."""
    if os.getpid() == 1:
        # We are the PID namespace's init: -1 reaches every other process in the namespace,
        # including daemons that left the child's process group.
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
    else:
        try:
            os.killpg(child, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def reap_all(wait_seconds=0.0):
    """Reaps every exited child; with `wait_seconds`, waits (bounded) until none is left, so a
    process killed a moment ago is gone, not a zombie, when the next test starts. Returns
    whether no child is left."""
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.0005)


def run_test(state, header, stdin, extra_source):
    if state["compile_error"] is not None:
        stderr = state["compile_error"].encode("utf-8", "backslashreplace")
        return {"outcome": "exited", "exit_code": 1, "signal": None, "completed": False,
                "wall_ms": 0.0, "cpu_ms": 0.0, "maxrss_kib": 0, "stdout_len": 0,
                "stdout_truncated": False, "stderr_len": len(stderr), "stderr_truncated": False}, b"", stderr
    extra = None
    if extra_source is not None:
        try:
            extra = compile(extra_source, "<test>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as error:
            stderr = "".join(traceback.format_exception_only(type(error), error)).encode()
            return {"outcome": "exited", "exit_code": 1, "signal": None, "completed": False,
                    "wall_ms": 0.0, "cpu_ms": 0.0, "maxrss_kib": 0, "stdout_len": 0,
                    "stdout_truncated": False, "stderr_len": len(stderr), "stderr_truncated": False}, b"", stderr
    stdin_fd, stdout_fd, stderr_fd = test_files(state, stdin)
    marker_read, marker_write = os.pipe()
    marker = os.urandom(16)
    output_cap = header["output_bytes"]
    started = time.monotonic()
    child = os.fork()
    if child == 0:
        try:
            os.setpgid(0, 0)
        except OSError:
            pass
        os.close(marker_read)
        harness = state["harness"]
        stdin_text = stdin.decode("utf-8", "surrogateescape") if harness is not None else ""
        if harness is not None:
            stdin_fd = memory_file("stdin")
        run_child(state["units"], extra, state["filename"], (stdin_fd, stdout_fd, stderr_fd), marker_write, marker, header,
                  harness, stdin_text)
    os.close(marker_write)
    pidfd = os.pidfd_open(child)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    timed_out = not poller.poll(max(header["wall_ms"], 1))
    os.close(pidfd)
    if timed_out:
        kill_everything_else(child)
    _, wait_status, usage = os.wait4(child, 0)
    wall_ms = (time.monotonic() - started) * 1000.0
    if timed_out or others_alive():
        kill_everything_else(child)
        reap_all(wait_seconds=2.0 if os.getpid() == 1 else 0.0)
    else:
        reap_all()
    received = b""
    try:
        os.set_blocking(marker_read, False)
        received = os.read(marker_read, 64)
    except (BlockingIOError, OSError):
        pass
    os.close(marker_read)
    stdout, stdout_truncated = read_memory_file(stdout_fd, output_cap if output_cap > 0 else 1 << 62)
    stderr, stderr_truncated = read_memory_file(stderr_fd, STDERR_CAP)
    exit_code = os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else None
    signal_number = os.WTERMSIG(wait_status) if os.WIFSIGNALED(wait_status) else None
    if signal_number == signal.SIGXFSZ:
        stdout_truncated = True
    result = {
        "outcome": "timeout" if timed_out else ("signaled" if signal_number is not None else "exited"),
        "exit_code": exit_code,
        "signal": signal_number,
        "completed": received == marker,
        "wall_ms": round(wall_ms, 3),
        "cpu_ms": round((usage.ru_utime + usage.ru_stime) * 1000.0, 3),
        "maxrss_kib": usage.ru_maxrss,
        "stdout_len": len(stdout),
        "stdout_truncated": stdout_truncated,
        "stderr_len": len(stderr),
        "stderr_truncated": stderr_truncated,
    }
    return result, stdout, stderr


def load(state, header, sources):
    state["filename"] = header.get("filename", "solution.py")
    failed = []
    for module in header.get("preload", []):
        try:
            __import__(module)
        except BaseException as error:
            failed.append(f"{module}: {type(error).__name__}: {error}")
    state["units"] = []
    state["compile_error"] = None
    state["harness"] = header.get("harness")
    if state["harness"] is not None:
        import unittest.mock  # noqa: F401  (imported once here, not in every child)

        transform = HARNESS_PROGRAMS[state["harness"]]
        try:
            sources = [transform(source) for source in sources]
        except SyntaxError as error:
            state["compile_error"] = "".join(traceback.format_exception_only(type(error), error))
            sources = []
    for source in sources:
        try:
            state["units"].append(compile(source, state["filename"], "exec", dont_inherit=True))
        except (SyntaxError, ValueError) as error:
            state["compile_error"] = "".join(traceback.format_exception_only(type(error), error))
            state["units"] = []
            break
    # Keep the heap small and stable for fork: collect now, freeze survivors.
    gc.collect()
    gc.freeze()
    return {"ok": not failed, "preload_errors": failed, "compile_error": state["compile_error"]}


def make_undumpable():
    """Test children run with the runner's uid: without this they could open `/proc/1/mem` and
    rewrite the runner. Non-dumpable processes' /proc files belong to root; forked children
    inherit the flag, so they cannot touch each other either."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_DUMPABLE = 4
        if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            return False
        return True
    except Exception:
        return False


def leftover_ipc_objects():
    """SysV IPC objects live in the sandbox's IPC namespace after their creator died."""
    found = []
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as handle:
                if len(handle.read().splitlines()) > 1:
                    found.append(kind)
        except OSError:
            pass
    return found


def reset(header):
    """Between jobs: nothing a test did may reach the next job. Kill and reap every process,
    empty the work directory, and refuse (the caller then starts a new sandbox) when anything
    else might carry state."""
    import shutil

    problems = []
    if os.getpid() == 1:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if not reap_all(wait_seconds=2.0):
            problems.append("a process of the last job would not die")
    else:
        reap_all()
    work = header.get("work_directory")
    if work:
        try:
            for entry in os.scandir(work):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
        except OSError as error:
            problems.append(f"cannot empty {work}: {error}")
    leftovers = leftover_ipc_objects()
    if leftovers:
        problems.append("SysV IPC objects left: " + ", ".join(leftovers))
    if os.getpid() != 1:
        problems.append("the runner is not its PID namespace's init, so it cannot vouch for the process table")
    return {"ok": not problems, "problems": problems}


def main():
    undumpable = make_undumpable()
    os.dup2(0, REQUEST_FD)
    os.dup2(1, RESPONSE_FD)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    os.close(null)
    install_site_builtins()
    add_site_packages()
    state = {"units": [], "compile_error": None, "filename": "solution.py", "harness": None}
    while True:
        try:
            header = read_frame()
        except EOFError:
            return
        operation = header.get("op")
        if operation == "load":
            sources = [read_exact(REQUEST_FD, size).decode("utf-8", "surrogatepass") for size in header["units"]]
            write_frame(load(state, header, sources))
        elif operation == "run":
            stdin = read_exact(REQUEST_FD, header["stdin"])
            extra = read_exact(REQUEST_FD, header["extra"]).decode("utf-8", "surrogatepass") if header.get("has_extra") else None
            result, stdout, stderr = run_test(state, header, stdin, extra)
            write_frame(result, stdout, stderr)
        elif operation == "reset":
            report = reset(header)
            if not undumpable:
                report["ok"] = False
                report["problems"].append("the runner could not make itself non-dumpable")
            write_frame(report)
        elif operation == "exit":
            return
        else:
            write_frame({"error": f"unknown operation {operation!r}"})


if __name__ == "__main__":
    main()
