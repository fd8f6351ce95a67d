# Everything a job could observe that a previous or concurrent job might have changed: its own
# inherited state, the work directory, IPC, what it can see of other processes (the runner
# included, where visible), its descriptors and signal dispositions. Printed as sorted JSON.
import ctypes, errno, fcntl, json, os, re, resource, signal


def read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError as error:
        return f"error {errno.errorcode.get(error.errno, error.errno)}"


def attempt(action, *arguments):
    try:
        return action(*arguments)
    except OSError as error:
        return f"error {errno.errorcode.get(error.errno, error.errno)}"


def fields(text, names):
    found = {}
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name in names:
            found[name] = value.strip()
    return found


libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
# RLIMIT_CPU, RLIMIT_FSIZE and RLIMIT_AS are set by the runner for each test from the request.
per_test = {"RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_AS"}
me = os.readlink("/proc/self")
state = {
    "limits": {name: resource.getrlimit(getattr(resource, name)) for name in sorted(dir(resource))
               if name.startswith("RLIMIT_") and name not in per_test},
    "nice": os.getpriority(os.PRIO_PROCESS, 0),
    "io_priority": libc.syscall(252, 1, 0),  # ioprio_get(IOPRIO_WHO_PROCESS, self)
    "affinity": sorted(os.sched_getaffinity(0)),
    "scheduler": os.sched_getscheduler(0),
    "umask": (lambda mask: (os.umask(mask), mask)[1])(os.umask(0)),
    "cwd": os.getcwd(),
    "environment": sorted(os.environ.items()),
    "ids": [os.getresuid(), os.getresgid(), sorted(os.getgroups())],
    "pid": os.getpid(),
    "parent": os.getppid(),
    "hostname": os.uname().nodename,
    "prctl": [libc.prctl(option, 0, 0, 0, 0) for option in (3, 13, 27, 37, 39)],
    "self": fields(read("/proc/self/status"), {"CapEff", "CapPrm", "CapInh", "CapBnd", "CapAmb",
                                                 "NoNewPrivs", "Seccomp", "Seccomp_filters",
                                                 "Cpus_allowed_list", "SigIgn", "SigBlk", "SigCgt"}),
    "oom_score_adj": read("/proc/self/oom_score_adj"),
    "autogroup": re.sub(r"-\d+", "", read("/proc/self/autogroup")),
    "signals": [str(signal.getsignal(number)) for number in sorted(signal.valid_signals())
                if number not in (signal.SIGKILL, signal.SIGSTOP)],
    "tmp": sorted(os.listdir("/tmp")),
    "tmp_mode": oct(os.stat("/tmp").st_mode),
    "tmp_owner": [os.stat("/tmp").st_uid, os.stat("/tmp").st_gid],
    "tmp_attributes": attempt(os.listxattr, "/tmp"),
    "root": sorted(os.listdir("/")),
    "dev": sorted(os.listdir("/dev")),
    "sysvipc": {kind: read(f"/proc/sysvipc/{kind}").count("\n") for kind in ("shm", "msg", "sem")},
    "descriptors": [],
    "processes": [],
}
for name in sorted(os.listdir("/proc/self/fd"), key=int):
    fd = int(name)
    link = attempt(os.readlink, f"/proc/self/fd/{fd}")
    state["descriptors"].append([fd, re.sub(r"\[\d+\]", "[inode]", link),
                                 attempt(fcntl.fcntl, fd, fcntl.F_GETFL),
                                 attempt(fcntl.fcntl, fd, 1034),  # F_GET_SEALS
                                 attempt(os.listxattr, fd)])
for name in sorted(os.listdir("/proc")):
    if not name.isdigit() or name == me:
        continue
    stat = read(f"/proc/{name}/stat")
    state["processes"].append([
        read(f"/proc/{name}/comm").strip(),
        fields(read(f"/proc/{name}/status"), {"Uid", "Gid", "Cpus_allowed_list", "State"}),
        stat.rsplit(")", 1)[1].split()[16] if ")" in stat else stat,  # nice
        read(f"/proc/{name}/limits"),
        read(f"/proc/{name}/oom_score_adj"),
        re.sub(r"-\d+", "", read(f"/proc/{name}/autogroup")),
    ])
print(json.dumps(state, sort_keys=True, default=str))
