
import os
import resource

from .test_child_steps import TEST_CHILD_STEPS


# Keeping each test away from the runner, from other tests and from the next job (issue 12).
#
# The sandbox starts the runner as a supervisor: uid 0 of its own user namespace with a few
# capabilities (see docs/sandbox.md). For every test the runner unshares a fresh PID namespace
# and forks: the test child is init of a namespace holding nothing but what it starts, so it can
# name no process outside it (not the runner, not a previous test) and everything it starts dies
# with it. Before any untrusted code runs, the child gives up everything: a new session, the
# program uid where a second one is mapped, and every capability (SECBIT_NOROOT locked). The
# supervisor's seccomp filter allows only `unshare(CLONE_NEWPID)` and `setns(fd, CLONE_NEWPID)`,
# which the kernel refuses (EPERM) to a process without CAP_SYS_ADMIN, so the child needs no
# filter of its own (stacking one cost a BPF compilation per test: about 10% of a short test).

CLONE_NEWPID = 0x20000000
PR_SET_DUMPABLE = 4
PR_SET_SECUREBITS = 28
# SECBIT_NOROOT, its lock, SECBIT_NO_CAP_AMBIENT_RAISE and its lock.
LOCKED_SECURE_BITS = 0x01 | 0x02 | 0x40 | 0x80
LINUX_CAPABILITY_VERSION_3 = 0x20080522
# Exit status of a test child that could not isolate itself (the solution never ran).
ISOLATION_FAILED_STATUS = 125
# A test child's steps, in the order of the one list the exec supervisor follows too
# (crates/rlvr-sandbox/src/test_child_steps.txt, which the runner receives as the module
# `test_child_steps`): `become_solution` below, then `prepare_test_child` (runner/process.py).
# crates/rlvr-runner/tests/runner/test_child_steps.rs checks that these names follow the list
# and that the two functions perform the steps in its order.
(NEW_SESSION, LOCK_SECBIT_NOROOT, DROP_PRIVILEGES, CLEAR_CAPABILITIES, WIRE_DESCRIPTORS, RESET_SIGNALS,
 SET_RESOURCE_LIMITS) = TEST_CHILD_STEPS


class TestIsolation:
    """What the runner can do for each test, found once at start-up."""

    def __init__(self):
        self.libc = None
        # libc's functions and the arguments of the child's calls, made once in the runner:
        # a test child then builds no ctypes object (each would be pages written after fork).
        self.prctl = self.capset = self.unshare = self.setns = None
        self.capability_header = self.capability_data = None
        self.pid_namespace = None  # descriptor of the runner's own PID namespace
        self.solution_id = 0  # the uid and gid tests run as (1 where a second id is mapped)
        self.capabilities = False  # whether the runner holds capabilities to drop
        self.reason = None  # why tests cannot get their own PID namespace
        self.last_pid = None  # descriptor on ns_last_pid (see adopt_last_pid)

    @property
    def nested(self):
        return self.pid_namespace is not None


def effective_capabilities():
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


def second_id_mapped():
    """Whether this user namespace maps a uid 1 (the program uid) besides the runner's 0."""
    try:
        with open("/proc/self/uid_map") as handle:
            return any(line.split()[:1] == ["1"] for line in handle)
    except OSError:
        return False


def prepare_isolation():
    """Probes once what the runner may do: a PID namespace per test needs CAP_SYS_ADMIN in
    the runner's user namespace (the sandbox gives it to supervisors only)."""
    isolation = TestIsolation()
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        isolation.libc = libc
        isolation.prctl, isolation.capset = libc.prctl, libc.capset
        isolation.unshare, isolation.setns = libc.unshare, libc.setns
        isolation.capability_header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
        isolation.capability_data = (ctypes.c_uint32 * 6)()
    except Exception as error:
        isolation.reason = f"ctypes is unavailable: {error}"
        return isolation
    isolation.capabilities = effective_capabilities() != 0
    if not isolation.capabilities:
        isolation.reason = "the runner holds no capability (the sandbox did not start it as a supervisor)"
        return isolation
    isolation.solution_id = 1 if second_id_mapped() else 0
    try:
        descriptor = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as error:
        isolation.reason = f"cannot open the runner's PID namespace: {error}"
        return isolation
    if isolation.unshare(CLONE_NEWPID) != 0 or isolation.setns(descriptor, CLONE_NEWPID) != 0:
        isolation.reason = "cannot create a PID namespace: " + os.strerror(ctypes.get_errno())
        os.close(descriptor)
        return isolation
    isolation.pid_namespace = descriptor
    return isolation


def enter_fresh_pid_namespace(isolation):
    """Before the fork: the next child is init of a new, empty PID namespace."""
    if isolation.nested and isolation.unshare(CLONE_NEWPID) != 0:
        raise OSError(ctypes_errno(), "unshare(CLONE_NEWPID) failed")


def leave_fresh_pid_namespace(isolation):
    """After the fork, in the runner: back to its own PID namespace for its next child."""
    if isolation.nested and isolation.setns(isolation.pid_namespace, CLONE_NEWPID) != 0:
        raise OSError(ctypes_errno(), "setns back into the runner's PID namespace failed")


def ctypes_errno():
    import ctypes

    return ctypes.get_errno()


def fork_isolated(isolation):
    """`os.fork()` for a child that runs untrusted code (a test child, a batch child): init of a
    fresh PID namespace, isolated by `become_solution` before it returns 0 in the child, with
    the same PID in the sandbox's namespace whatever ran before."""
    if isolation.last_pid is not None:
        set_last_pid(isolation.last_pid)
    enter_fresh_pid_namespace(isolation)
    try:
        child = os.fork()
    except BaseException:
        leave_fresh_pid_namespace(isolation)
        raise
    if child == 0:
        become_solution(isolation)
        return 0
    leave_fresh_pid_namespace(isolation)
    return child


def become_solution(isolation):
    """In the test child, before any untrusted code: a session of its own (no signal to the
    runner's process group, its own autogroup), then, where the runner holds capabilities, the
    program uid and no capability left (so the namespace calls the supervisor's seccomp filter
    lets through fail with EPERM). Exits with ISOLATION_FAILED_STATUS rather than run the
    solution half isolated, naming the step that failed."""
    step = NEW_SESSION
    try:
        os.setsid()
        if not isolation.capabilities:
            return
        prctl = isolation.prctl
        step = LOCK_SECBIT_NOROOT
        if prctl(PR_SET_SECUREBITS, LOCKED_SECURE_BITS, 0, 0, 0) != 0:
            raise OSError(ctypes_errno(), "cannot lock SECBIT_NOROOT")
        if isolation.solution_id:
            step = DROP_PRIVILEGES
            try:
                os.setgroups([])
            except PermissionError:
                pass  # setgroups is denied in this user namespace: no groups to drop
            os.setresgid(isolation.solution_id, isolation.solution_id, isolation.solution_id)
            os.setresuid(isolation.solution_id, isolation.solution_id, isolation.solution_id)
        step = CLEAR_CAPABILITIES
        if isolation.capset(isolation.capability_header, isolation.capability_data) != 0:
            raise OSError(ctypes_errno(), "cannot clear capabilities")
        # The uid change made the child non-dumpable; a fresh process is dumpable (its own
        # /proc/self files are its own), and it has nothing the runner needs hidden.
        prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    except BaseException as error:
        isolation_failed(step, error)


def isolation_failed(step, error):
    """Ends a test child whose step `step` failed, before the solution ran: the reason on its
    stderr, and ISOLATION_FAILED_STATUS."""
    try:
        os.write(2, f"rlvr runner: cannot isolate the test: {step} failed: {error}\n".encode())
    finally:
        os._exit(ISOLATION_FAILED_STATUS)


def runner_fingerprint():
    """What a test could have changed about the runner if it could reach it: checked again
    between jobs, so a runner that was touched is never reused."""
    limits = []
    for name in sorted(dir(resource)):
        if name.startswith("RLIMIT_"):
            try:
                limits.append((name, resource.getrlimit(getattr(resource, name))))
            except (OSError, ValueError):
                pass
    try:
        affinity = sorted(os.sched_getaffinity(0))
    except OSError:
        affinity = None
    try:
        scheduler = os.sched_getscheduler(0)
    except OSError:
        scheduler = None
    umask = os.umask(0)
    os.umask(umask)
    return {
        "limits": limits,
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "affinity": affinity,
        "scheduler": scheduler,
        "umask": umask,
        "cwd": os.getcwd(),
    }


# Counters a job could leave its answer in for a later one (issue 22): PID numbers and the work
# directory's inode numbers. The runner is init of the sandbox's PID namespace and holds
# CAP_SYS_ADMIN there: the sandbox hands a supervisor its namespace's `ns_last_pid` open for
# writing (LAST_PID_FD; `/proc` itself is read-only), so the runner sets the next PID before
# every test; and between jobs it mounts a fresh tmpfs on the work directory (a tmpfs numbers
# its inodes from 1). The supervisor's seccomp filter allows exactly these mount calls; a test
# child, holding no capability, gets EPERM for them.
MS_NOSUID = 0x2
MS_NODEV = 0x4
MNT_DETACH = 0x2
LAST_PID_FD = 63
# Every test child's PID in the sandbox's namespace (what `/proc/self` names) is the one after.
FIRST_TEST_PID = 100


def adopt_last_pid():
    """The sandbox's `ns_last_pid` descriptor when it gave one that works, else None."""
    try:
        os.fstat(LAST_PID_FD)
    except OSError:
        return None
    os.set_inheritable(LAST_PID_FD, False)
    if not set_last_pid(LAST_PID_FD):
        os.close(LAST_PID_FD)
        return None
    return LAST_PID_FD


def set_last_pid(descriptor, last=FIRST_TEST_PID):
    """The next process the namespace creates gets `last` + 1 (by default FIRST_TEST_PID + 1),
    whatever ran before."""
    try:
        os.lseek(descriptor, 0, os.SEEK_SET)
        os.write(descriptor, str(last).encode())
        return True
    except OSError:
        return False


def work_mount_options(work):
    """The tmpfs options of the work directory as the sandbox mounted it: its size and inode
    count from mountinfo, its mode and owner from the directory itself (mountinfo shows the
    owner as the host's ids, which mean nothing in this user namespace)."""
    try:
        status = os.stat(work)
        with open("/proc/self/mountinfo") as handle:
            for line in handle:
                fields = line.split()
                separator = fields.index("-")
                if fields[4] == work and fields[separator + 1] == "tmpfs":
                    options = [option for option in fields[separator + 3].split(",")
                               if option.split("=")[0] in ("size", "nr_inodes")]
                    options += [f"mode={status.st_mode & 0o7777:o}", f"uid={status.st_uid}", f"gid={status.st_gid}"]
                    return ",".join(options).encode()
    except (OSError, ValueError, IndexError):
        pass
    return None


def fresh_work_mount(isolation, work, options):
    """Replaces the work directory's tmpfs with a new one (inode numbers from the start);
    returns what failed, or None."""
    if options is None or not isolation.capabilities or isolation.libc is None:
        return "the work directory cannot be mounted afresh"
    libc = isolation.libc
    os.chdir("/")
    try:
        if libc.umount2(work.encode(), MNT_DETACH) != 0:
            return f"cannot unmount {work}: {os.strerror(ctypes_errno())}"
        if libc.mount(b"tmpfs", work.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
            return f"cannot mount a fresh {work}: {os.strerror(ctypes_errno())}"
    finally:
        os.chdir(work)
    return None
