# The runner's entry point: what it sets up once, before it serves as the template (runner/job.py).

import gc
import os
import stat

from .isolation import adopt_last_pid, prepare_isolation, runner_fingerprint, work_mount_options
from .job import serve_template
from .live import LIVE_REPLY_FD, LIVE_REQUEST_FD
from .process import CHILD_STREAMS, install_self_signals, install_site_builtins, standard_streams
from .protocol import add_site_packages, adopt_protocol_descriptors
from .sensor import runner_module_namespaces
from .work_directory import mark_work_directory, work_directory_mode


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
             "work_mode": work_directory_mode(), "work_options": work_mount_options(work), "undumpable": undumpable,
             "runner_namespaces": runner_module_namespaces()}
    state["work_mark"] = mark_work_directory(work)
    # Everything the template holds now (the runner's modules, the standard ones they import)
    # outlives every job: frozen, a job process's collection never visits it. Unfrozen, each
    # job process's first full collection walked all of it and wrote the collector's header of
    # every object, about 6 ms and a copy-on-write fault per page of them, each job.
    gc.collect()
    gc.freeze()
    serve_template(state)
