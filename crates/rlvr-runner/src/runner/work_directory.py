# The work directory between tests and jobs: emptied, marked, and given a fresh tmpfs when a test
# touched it.

import os

from .isolation import fresh_work_mount


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


# The work directory's inode numbers (issue 32). A tmpfs numbers its inodes per mount and never
# goes back, so a test that creates files moves the numbers every later test of the job sees: a
# channel to the next test, and a way to learn which test this is. Mounting a fresh tmpfs after
# every test costs about 0.4 ms (the unmount waits for an RCU grace period), so it happens only
# after a test that created something. The evidence: after the directory is emptied its mtime is
# set to 0 (a program that does not own the directory cannot set explicit times on it) and its
# ctime noted; creating anything in the tree creates an entry in the directory (it is empty when
# the test starts), which moves both. An O_TMPFILE inode touches no directory: the sandbox's
# seccomp filter refuses O_TMPFILE (EOPNOTSUPP; Python's `tempfile` falls back to a named file).


def mark_work_directory(work):
    """Sets the work directory's access and modification times to 0 and returns its ctime then;
    None where it cannot."""
    try:
        os.utime(work, ns=(0, 0))
        return (work, os.stat(work).st_ctime_ns)
    except OSError:
        return None


def work_directory_touched(mark):
    try:
        status = os.stat(mark[0])
    except OSError:
        return True
    # The access time too: a test that only listed the directory moved it, which the next test
    # could read.
    return status.st_mtime_ns != 0 or status.st_atime_ns != 0 or status.st_ctime_ns != mark[1]


def refresh_work_directory(state, work):
    """After a judge test: the work directory as the next test must find it, empty and with the
    inode numbers of a fresh tmpfs. Returns what failed, or None (the reset between jobs
    empties it again and refuses the runner if it cannot)."""
    mark = state.get("work_mark")
    if mark is not None and mark[0] == work and not work_directory_touched(mark):
        return None
    problem = None
    if state["work_options"] is not None and state["isolation"].capabilities:
        problem = fresh_work_mount(state["isolation"], work, state["work_options"])
    if problem is not None or state["work_options"] is None or not state["isolation"].capabilities:
        # Not a tmpfs this runner may mount (a protocol test's directory, no capability): empty it.
        problem = empty_work_directory(work, state["work_mode"])
    state["work_mark"] = mark_work_directory(work)
    return problem
