# The request loop. The parent runs the prelude once; each job runs in a forked process that
# answers `open`, then `test` for each test, and exits at `close`, so that nothing a job's test
# code does outlives the job.

import builtins
import gc
import os
import sys

from .protocol import REQUEST_FD, add_site_packages, adopt_protocol_descriptors, read_exact, read_frame, write_frame
from .test import Job, Trust


def serve_job(base, trust, tests):
    """In the job's forked process: compile the tests, then run them until `close`."""
    status = 0
    try:
        job = Job(base, trust, tests)
        write_frame({"ok": True, "tests": len(job.tests)})
        while True:
            try:
                request = read_frame()
            except EOFError:
                break
            operation = request.get("op")
            if operation == "test":
                index = request.get("test")
                if type(index) is not int or not 0 <= index < len(job.tests):
                    write_frame({"op": "verdict", "outcome": "error", "detail": f"no test {index!r}"})
                    continue
                write_frame(dict(job.run(index), op="verdict"))
            elif operation in ("message", "ended"):
                # A message of a test already decided (the child's list of names for a test
                # that does not compile, anything it sent after the verdict): not for the next.
                if operation == "message":
                    read_exact(REQUEST_FD, request.get("size", 0))
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


def main():
    adopt_protocol_descriptors()
    sys.setrecursionlimit(10_000)
    add_site_packages()
    # `assert obj.__eq__(9)` on an object of the solution's gets NotImplemented (the stand-in
    # never asks the solution's `__eq__` about data): its truth value is an error here, as it
    # is from Python 3.14 on, never a pass.
    import warnings

    warnings.filterwarnings("error", message="NotImplemented should not be used in a boolean context",
                            category=DeprecationWarning)
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
            tests = [read_exact(REQUEST_FD, size).decode("utf-8", "surrogatepass") for size in header["tests"]]
            if trust is None:
                write_frame({"error": "the referee was not started"})
                continue
            child = os.fork()
            if child == 0:
                serve_job(base, trust, tests)
            _, status = os.waitpid(child, 0)
            if status != 0:
                write_frame({"error": f"the job process failed (wait status {status})"})
        elif operation == "exit":
            return
        else:
            write_frame({"error": f"unknown operation {operation!r}"})
