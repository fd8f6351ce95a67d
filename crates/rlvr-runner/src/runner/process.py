# What a test child does so that it behaves like a fresh `python FILE` process.

def install_site_builtins():
    """`-S` skips `site`, which is what defines `exit` and `quit`: put the same objects back."""
    if _sitebuiltins is not None:
        builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
        builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")


def add_site_packages():
    """`-S` also leaves site-packages off `sys.path`: add them (without running `.pth` files,
    whose imports cost tens of milliseconds) so numpy and pandas import as usual."""
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

