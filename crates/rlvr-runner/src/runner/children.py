# Child processes: waiting for what a child writes with a deadline, killing a test's whole
# tree and reaping every child it leaves.

import os
import select
import signal
import time


# Whether this process is a job process that reaps everything its tests leave (see `reaps_all`).
JOB_REAPER = [False]


def reaps_all():
    """Whether every process a test leaves ends up a child of this one, so that `kill(-1)` and
    `waitpid(-1)` concern only what the tests started: the PID namespace's init (the template)
    or a job process under it, made a child subreaper. `kill(-1)` from a job process spares the
    namespace's init (the template) and the job process itself."""
    return os.getpid() == 1 or JOB_REAPER[0]


def others_alive():
    """Whether any process besides the runner is left. When the runner is the namespace's init,
    every orphan has been reparented to it, so its own children are all there is."""
    if not reaps_all():
        return True
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def kill_everything_else(child):
    """Kill the test's whole process tree, then reap every child."""
    if reaps_all():
        # -1 reaches every other process in the namespace but its init (the template) and this
        # one, including daemons that left the child's process group.
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


class ChildGone(Exception):
    """A child's result pipe ended: it died (a signal, a limit) or exited."""


def read_with_deadline(fd, size, deadline):
    """Reads exactly `size` bytes; None when the deadline passes first. Raises
    `ChildGone` when the pipe ends."""
    chunks, remaining = [], size
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while remaining > 0:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        if not poller.poll(min(max(1, math_ceil(left * 1000)), LONGEST_POLL_MS)):
            continue
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise ChildGone
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


# poll() takes a C int of milliseconds: a longer wait (a caller's "no limit") waits at most an
# hour at a time.
LONGEST_POLL_MS = 3_600_000


def math_ceil(value):
    whole = int(value)
    return whole + 1 if whole < value else whole
