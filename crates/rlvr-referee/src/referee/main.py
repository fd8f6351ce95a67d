# The request loop. The parent runs the prelude once; each job runs in a forked child that
# answers `open`, then `judge` for each test, and exits at `close`, so that nothing a job's test
# code does outlives the job.


def serve_job(base, trust, header, payloads):
    """In the job's forked child: prepare every test, then answer until `close`."""
    status = 0
    try:
        solution = payloads[0]
        job = Job(base, trust, solution, payloads[1:])
        specs = [prepared.spec.encode() for prepared in job.tests if prepared is not None]
        write_frame({"tests": job.answers}, *specs)
        while True:
            try:
                request = read_frame()
            except EOFError:
                break
            operation = request.get("op")
            if operation == "judge":
                results = read_exact(REQUEST_FD, request["results"]) if request["results"] else b""
                index = request["test"]
                prepared = job.tests[index] if type(index) is int and 0 <= index < len(job.tests) else None
                if prepared is None:
                    write_frame({"outcome": "error", "detail": f"test {index!r} was not split", "forged": False})
                    continue
                outcome, detail, forged = prepared.judge(results)
                write_frame({"outcome": outcome, "detail": detail, "forged": forged})
            elif operation == "close":
                write_frame({"ok": True})
                break
            else:
                write_frame({"error": f"unknown operation {operation!r} inside a job"})
                status = 2
                break
    except BaseException:
        status = 3
    finally:
        os._exit(status)


def add_site_packages():
    """`-S` leaves site-packages off `sys.path`: add them (without `.pth` files) so that a
    test's setup can import numpy as the solution's side can."""
    import sysconfig

    for key in ("purelib", "platlib"):
        path = sysconfig.get_path(key)
        if path and path not in sys.path and os.path.isdir(path):
            sys.path.append(path)


def referee_main():
    os.dup2(0, REQUEST_FD)
    os.dup2(1, RESPONSE_FD)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    os.close(null)
    sys.setrecursionlimit(10_000)
    add_site_packages()
    base, trust = None, None
    while True:
        try:
            header = read_frame()
        except EOFError:
            return
        operation = header.get("op")
        if operation == "start":
            prelude = read_exact(REQUEST_FD, header["prelude"]).decode("utf-8", "surrogatepass")
            try:
                base = {"__builtins__": builtins, "__name__": "__main__"}
                exec(compile(prelude, "<prelude>", "exec", dont_inherit=True), base)
                trust = Trust(prelude, base)
                gc.collect()
                gc.freeze()
                write_frame({"ok": True})
            except BaseException as error:
                base, trust = None, None
                write_frame({"ok": False, "error": f"{type(error).__name__}: {error}"})
        elif operation == "open":
            payloads = [read_exact(REQUEST_FD, size).decode("utf-8", "surrogatepass")
                        for size in [header["solution"], *header["tests"]]]
            if trust is None:
                write_frame({"error": "the referee was not started"})
                continue
            child = os.fork()
            if child == 0:
                serve_job(base, trust, header, payloads)
            _, status = os.waitpid(child, 0)
            if status != 0:
                write_frame({"error": f"the job process failed (wait status {status})"})
        elif operation == "exit":
            return
        else:
            write_frame({"error": f"unknown operation {operation!r}"})


if __name__ == "__main__":
    referee_main()
