# Job 1 of the cross-job tests: tries every channel to the runner, to other processes and to
# the next job it can think of, then answers the test correctly. Nothing here may matter to
# any later job.
import ctypes, fcntl, os, resource, signal, socket, sys, time

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def attempt(action, *arguments):
    try:
        action(*arguments)
    except BaseException:
        pass


a, b = map(int, input().split())
for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGQUIT, signal.SIGALRM,
               signal.SIGXCPU):
    signal.signal(number, signal.SIG_IGN)  # what goes to our own group must not end us

# A daemon that keeps attacking after we are gone.
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            for pid in range(1, 64):
                attempt(os.kill, pid, signal.SIGTERM)
            time.sleep(0.01)
    os._exit(0)

visible = {int(name) for name in os.listdir("/proc") if name.isdigit()}
# Everyone we can name but ourselves (pid 1 of a test's own namespace is the test itself; its
# own state is attacked last, below).
targets = sorted((visible | {1, 2, 3, 4, os.getppid()}) - {os.getpid(), int(os.readlink("/proc/self")), 0})
# Signals to everyone we can name, our group, everyone.
for pid in targets + [0, -1]:
    for number in (signal.SIGSTOP, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1,
                   signal.SIGALRM, signal.SIGXCPU, signal.SIGKILL):
        if pid == 0 and number in (signal.SIGSTOP, signal.SIGKILL):
            continue  # our own group holds us: a fresh process would stop or die here too
        attempt(os.kill, pid, number)
# pidfds through /proc/<pid> directories.
for pid in visible:
    try:
        directory = os.open(f"/proc/{pid}", os.O_RDONLY | os.O_DIRECTORY)
        libc.syscall(424, directory, signal.SIGTERM, None, 0)  # pidfd_send_signal
        os.close(directory)
    except OSError:
        pass
# Limits, priority, affinity, scheduler and I/O priority of everyone we can name.
resources = [resource.RLIMIT_NOFILE, resource.RLIMIT_NPROC, resource.RLIMIT_STACK, resource.RLIMIT_CORE,
             resource.RLIMIT_MEMLOCK, resource.RLIMIT_DATA, resource.RLIMIT_SIGPENDING,
             resource.RLIMIT_MSGQUEUE, resource.RLIMIT_NICE, resource.RLIMIT_RTPRIO, resource.RLIMIT_AS]
for pid in targets:
    for limit in resources:
        attempt(resource.prlimit, pid, limit, (1, 1))
    attempt(os.setpriority, os.PRIO_PROCESS, pid, 19)
    attempt(os.sched_setaffinity, pid, {0})
    attempt(os.sched_setscheduler, pid, os.SCHED_IDLE, os.sched_param(0))
    libc.syscall(251, 1, pid, (3 << 13))  # ioprio_set(IOPRIO_WHO_PROCESS, pid, idle)
for who in (0, os.getpgrp()):
    attempt(os.setpriority, os.PRIO_PGRP, who, 19)
    libc.syscall(251, 2, who, (3 << 13))
for uid in {0, 1, 65533, 65534, os.getuid()}:
    attempt(os.setpriority, os.PRIO_USER, uid, 19)
    libc.syscall(251, 3, uid, (3 << 13))
# /proc and /proc/sys writes.
for pid in ["self"] + [str(pid) for pid in visible]:
    for name, value in (("oom_score_adj", "1000"), ("autogroup", "19"), ("comm", "pwned"),
                        ("timerslack_ns", "100000000"), ("clear_refs", "1"), ("coredump_filter", "0x7f"),
                        ("attr/current", "x"), ("loginuid", "0")):
        attempt(lambda: open(f"/proc/{pid}/{name}", "w").write(value))
for path in ("/proc/sys/net/ipv4/ping_group_range", "/proc/sys/kernel/hostname"):
    attempt(lambda: open(path, "w").write("0 0"))
# Persistent IPC and files.
libc.shmget(0, 4096, 0o1666)
libc.msgget(0, 0o1666)
libc.semget(0, 1, 0o1666)
libc.mq_open(b"/rlvr-leak", os.O_CREAT | os.O_RDWR, 0o666, None)
attempt(lambda: open("/dev/shm/rlvr-leak", "w").write("x"))
attempt(lambda: open("/tmp/left-by-job-one", "w").write("secret"))
attempt(os.makedirs, "/tmp/locked/deeper")
attempt(os.chmod, "/tmp/locked/deeper", 0)
attempt(os.chmod, "/tmp/locked", 0)
attempt(os.mkfifo, "/tmp/left-fifo")
attempt(os.symlink, "/proc/self/environ", "/tmp/left-link")
unix = socket.socket(socket.AF_UNIX)
attempt(unix.bind, "/tmp/left-socket")
abstract = socket.socket(socket.AF_UNIX)
attempt(abstract.bind, "\0rlvr-left-behind")
attempt(abstract.listen)
attempt(os.setxattr, "/tmp", "user.left", b"1")
attempt(os.chmod, "/tmp", 0o777)
# Our standard streams (memory files the runner made) and our own inherited state.
for fd in (0, 1, 2):
    attempt(fcntl.fcntl, fd, 1033, 0x1 | 0x2 | 0x4 | 0x8)  # F_ADD_SEALS
    attempt(os.setxattr, fd, "user.left", b"1")
    attempt(fcntl.flock, fd, fcntl.LOCK_EX)
    attempt(fcntl.fcntl, fd, fcntl.F_SETOWN, 1)
os.environ["LEFT_BY_JOB_ONE"] = "1"
os.putenv("LEFT_TOO", "1")
for option, value in ((29, 1), (36, 1), (15, ctypes.c_char_p(b"pwned")), (4, 0)):
    libc.prctl(option, value, 0, 0, 0)  # timerslack, subreaper, name, dumpable
libc.personality(0x0040000)
libc.sethostname(b"pwned", 5)
attempt(os.setpriority, os.PRIO_PROCESS, 0, 19)
attempt(os.sched_setaffinity, 0, {0})
descriptors = []
try:
    while True:
        descriptors.append(os.open("/dev/null", os.O_RDONLY))
except OSError:
    pass
for descriptor in descriptors:
    os.close(descriptor)
print(a + b)
sys.stdout.flush()
attempt(resource.setrlimit, resource.RLIMIT_NOFILE, (16, 16))
attempt(resource.setrlimit, resource.RLIMIT_STACK, (1 << 20, 1 << 20))
os.umask(0o777)
os.chdir("/")
