# Loading a job, resetting between jobs, and the request loop.

def describe_failure(error):
    """`TypeError: message` as Python prints the last line of a traceback; never raises (the
    failure may be a MemoryError, and formatting it must not fail in turn)."""
    try:
        return "".join(traceback.format_exception_only(type(error), error))
    except BaseException:
        return type(error).__name__ + "\n"


def load(state, header, sources):
    """Compiles the job's program once, in a child bounded by the test's time limit (the load
    header's `compile_ms`): no compile of a response runs unbounded in the runner. CPython 3.11
    parses some forms in quadratic or exponential time (a long f-string, nested `try` blocks),
    and a compile cannot be interrupted. Whatever the response makes `compile` (or a harness's
    `ast` transformation) raise is the solution's failure, reported as `compile_error`, never a
    runner crash: SyntaxError and ValueError, but also RecursionError (deeply nested code),
    MemoryError, OverflowError, UnicodeEncodeError (lone surrogates), and anything else."""
    state["filename"] = header.get("filename", "solution.py")
    failed = []
    for module in header.get("preload", []):
        try:
            __import__(module)
        except BaseException as error:
            failed.append(f"{module}: {type(error).__name__}: {error}")
    state["units"] = []
    state["compile_error"] = None
    state["compile_timeout_ms"] = None
    state["harness"] = header.get("harness")
    if state["harness"] is not None:
        preload_harness_modules(state["harness"])
    budget_ms = header.get("compile_ms", 0) or DEFAULT_COMPILE_MS
    units, failure, timed_out = compile_in_child(state["harness"], sources, state["filename"], budget_ms)
    if timed_out:
        state["compile_timeout_ms"] = budget_ms
    state["units"] = units if failure is None else []
    state["compile_error"] = failure
    sources = units = None
    # Keep the heap small and stable for fork: collect now, freeze survivors.
    gc.collect()
    gc.freeze()
    return {"ok": not failed, "preload_errors": failed, "compile_error": state["compile_error"]}


# How long a compile may take when the request names no budget (the protocol's own tests).
DEFAULT_COMPILE_MS = 10_000


def compile_program(harness, sources, filename):
    """The job's code objects, after the harness's transformation if any; raises whatever the
    transformation or `compile` raises."""
    if harness is not None:
        transform = HARNESS_PROGRAMS[harness]
        sources = [transform(source) for source in sources]
    return [compile(source, filename, "exec", dont_inherit=True) for source in sources]


def compile_bounded(sources, filename, budget_ms):
    """`(code objects, failure text or None)` for sources compiled in a bounded child."""
    units, failure, timed_out = compile_in_child(None, sources, filename, budget_ms)
    return units, failure


def compile_in_child(harness, sources, filename, budget_ms):
    """`compile_program` in a forked child given `budget_ms` of wall clock; the code objects come
    back through a pipe (`marshal`). Returns (units, failure text or None, timed out). The child
    runs no untrusted code (compiling executes nothing); a compile that outgrows the sandbox's
    memory gets the child killed, not the runner."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(read_end)
            try:
                payload = marshal.dumps((True, compile_program(harness, sources, filename)))
            except BaseException as error:
                payload = marshal.dumps((False, describe_failure(error)))
            write_all(write_end, struct.pack("<Q", len(payload)) + payload)
        finally:
            os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + budget_ms / 1000.0
    data = None
    try:
        size = read_with_deadline(read_end, 8, deadline)
        if size is not None:
            data = read_with_deadline(read_end, struct.unpack("<Q", size)[0], deadline)
    except ChildGone:
        data = b""
    finally:
        os.close(read_end)
        if data is None:
            os.kill(child, signal.SIGKILL)
        _, status = os.waitpid(child, 0)
    if data is None:
        return [], f"compiling the program took longer than the test's time limit ({budget_ms} ms)\n", True
    if not data:
        how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"status {os.WEXITSTATUS(status)}"
        return [], f"the compiler died ({how}): the program is too large to compile here\n", False
    compiled, value = marshal.loads(data)
    return (value, None, False) if compiled else ([], value, False)


def make_undumpable():
    """Where a test child shares the runner's uid (a single mapped id, or degraded mode),
    without this it could open `/proc/1/mem` and rewrite the runner. Non-dumpable processes'
    /proc files belong to their namespace's root and need ptrace access besides."""
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


def empty_work_directory(work, mode):
    """Removes everything in `work` and gives the directory back its mode and no extended
    attributes; returns what failed, or None. Between jobs, and after each judge test (every
    process that could write there is dead by then)."""
    try:
        # The directory itself: its mode and extended attributes are state too.
        if os.stat(work).st_mode & 0o7777 != mode:
            os.chmod(work, mode)
        empty_directory(work)
        for name in os.listxattr(work):
            os.removexattr(work, name)
    except Exception as error:
        return f"cannot empty {work}: {type(error).__name__}: {error}"
    return None


DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def empty_directory(path):
    """Removes everything below `path` one directory at a time, holding one descriptor and
    walking back up through `..`: a tree a test left may be deeper than Python's recursion limit
    (which `shutil.rmtree` hits at about 1,000 levels) and than PATH_MAX, and wider than any
    number of descriptors. Directories without permissions are given their owner's first."""
    fd = os.open(path, DIRECTORY_FLAGS)
    # Per level below `path`: the directory's name in its parent and the parent's
    # subdirectories still to remove.
    levels = []
    try:
        pending = subdirectories_left(fd)
        while True:
            if pending:
                name = pending.pop()
                os.chmod(name, 0o700, dir_fd=fd)
                child = os.open(name, DIRECTORY_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
                levels.append((name, pending))
                pending = subdirectories_left(fd)
                continue
            if not levels:
                return
            parent = os.open("..", DIRECTORY_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            name, pending = levels.pop()
            os.rmdir(name, dir_fd=fd)
    finally:
        os.close(fd)


def subdirectories_left(fd):
    """Unlinks every entry of the open directory that is not a directory; returns the names of
    those that are."""
    directories = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                directories.append(entry.name)
            else:
                os.unlink(entry.name, dir_fd=fd)
    return directories


def work_directory_mode():
    try:
        return os.stat(os.getcwd()).st_mode & 0o7777
    except OSError:
        return 0o700


def reset(state, header):
    """Between jobs: nothing a test did may reach the next job. Kill and reap every process,
    mount a fresh work directory, and refuse (the caller then starts a new sandbox) when
    anything else might carry state: the runner cannot give tests their own PID namespace (then
    a test could reach it) or set the next PID, or its own limits, priority, affinity, umask or
    directory changed."""
    problems = []
    isolation = state["isolation"]
    if not isolation.nested:
        problems.append(f"tests do not get their own PID namespace ({isolation.reason})")
    if runner_fingerprint() != state["fingerprint"]:
        problems.append("the runner's own limits, priority, affinity, umask or directory changed")
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
    mark = state.get("work_mark")
    if work and (mark is None or mark[0] != work or work_directory_touched(mark)):
        # A fresh tmpfs: nothing a test left, and inode numbers from the start. Where no test
        # of the job created anything (runner/job.py: the directory's mtime is still 0 and
        # its ctime unchanged), the tmpfs is as fresh as a new one: no mount (0.4 ms a job).
        problem = fresh_work_mount(isolation, work, state["work_options"])
        if problem is not None:
            problems.append(problem)
    leftovers = leftover_ipc_objects()
    if leftovers:
        problems.append("SysV IPC objects left: " + ", ".join(leftovers))
    if os.getpid() != 1:
        problems.append("the runner is not its PID namespace's init, so it cannot vouch for the process table")
    if isolation.last_pid is None:
        problems.append("the runner cannot set the next PID, so PID numbers would carry over")
    return {"ok": not problems, "problems": problems}


def adopt_live_channel():
    """The engine passes the live pipes of judge functional tests (runner/live.py) as
    descriptors 3 and 4; they move to LIVE_REQUEST_FD and LIVE_REPLY_FD before the runner's
    own protocol takes 3 and 4. Without them, /dev/null holds those numbers (so that no memory
    file ever gets one) and live tests are refused."""
    live = True
    for source, target in ((3, LIVE_REQUEST_FD), (4, LIVE_REPLY_FD)):
        try:
            is_pipe = stat.S_ISFIFO(os.fstat(source).st_mode)
        except OSError:
            is_pipe = False
        if is_pipe:
            os.dup2(source, target, inheritable=False)
        else:
            live = False
            null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
            os.dup2(null, target, inheritable=False)
            os.close(null)
    return live


def main():
    undumpable = make_undumpable()
    live = adopt_live_channel()
    adopt_protocol_descriptors()
    CHILD_STREAMS[:] = standard_streams()
    install_site_builtins()
    install_self_signals()
    add_site_packages()
    work = os.getcwd()
    isolation = prepare_isolation()
    isolation.last_pid = adopt_last_pid() if isolation.nested else None
    state = {"units": [], "compile_error": None, "compile_timeout_ms": None, "filename": "solution.py", "harness": None,
             "isolation": isolation, "fingerprint": runner_fingerprint(), "live": live,
             "work_mode": work_directory_mode(), "work_options": work_mount_options(work), "undumpable": undumpable}
    state["work_mark"] = mark_work_directory(work)
    serve_template(state)


if __name__ == "__main__":
    main()

