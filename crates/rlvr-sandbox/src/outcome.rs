//! What a run produced: [`RunOutcome`], its [`RunVerdict`], and the [`Protection`]s that were active.

use std::time::Duration;

use serde::Serialize;

/// How a run ended. A failing program is a verdict, never an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunVerdict {
    /// Exit code 0 within every limit.
    Ok,
    /// Non-zero exit code or killed by a signal of its own making.
    RuntimeError,
    /// Wall-clock or CPU-time limit exceeded.
    Timeout,
    /// Memory limit exceeded (cgroup OOM kill, or Python's `MemoryError` at the address-space
    /// backstop).
    MemoryLimit,
    /// stdout or stderr exceeded the output cap; the process tree was killed.
    OutputLimit,
}

impl RunVerdict {
    /// The snake_case name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            RunVerdict::Ok => "ok",
            RunVerdict::RuntimeError => "runtime_error",
            RunVerdict::Timeout => "timeout",
            RunVerdict::MemoryLimit => "memory_limit",
            RunVerdict::OutputLimit => "output_limit",
        }
    }
}

/// One isolation mechanism. Every result lists the ones that were active.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Protection {
    /// Private mount namespace (nothing propagates to the host).
    MountNamespace,
    /// Own PID namespace: the program is init; its exit kills every descendant.
    PidNamespace,
    /// Own IPC namespace (no shared SysV/POSIX IPC with the host).
    IpcNamespace,
    /// Own UTS namespace (hostname).
    UtsNamespace,
    /// A shared, empty network namespace: no interface but a down loopback.
    NetworkNamespace,
    /// A tmpfs root with read-only binds of /usr and the interpreter prefix, a fresh /proc,
    /// three device nodes and a size-limited writable /tmp, entered with pivot_root.
    MinimalRoot,
    /// Runs with no capabilities, never as the host's root, `SECBIT_NOROOT` locked.
    UnprivilegedUser,
    /// Its own user namespace, a child of the sandbox's: capabilities exist only inside it.
    UserNamespace,
    /// A second mapped uid: the tests a supervised runner starts run under a uid distinct from
    /// the runner's (root, or `newuidmap` with subordinate ids).
    SeparateRunnerUser,
    /// A supervised runner may give each test its own PID namespace (needs the user namespace):
    /// a test can name no process outside it, and everything it starts dies with it.
    PidNamespacePerTest,
    /// `no_new_privs`: execve can never grant privileges.
    NoNewPrivileges,
    /// A seccomp filter denying kernel attack surface and escape syscalls.
    Seccomp,
    /// Landlock scoping of abstract unix sockets and signals.
    LandlockScope,
    /// rlimits: CPU, FSIZE, NOFILE, CORE=0, STACK, AS backstop.
    ResourceLimits,
    /// Memory limit of the process tree via a cgroup.
    CgroupMemory,
    /// Process-count limit via a cgroup.
    CgroupPids,
    /// CPU time of the whole tree via a cgroup.
    CgroupCpuAccounting,
    /// Atomic kill of the whole tree via cgroup v2 `cgroup.kill`.
    CgroupKill,
    /// No usable cgroup: the memory limit is `RLIMIT_AS` of each process.
    ProcessMemoryLimit,
    /// No usable cgroup: the process limit is `RLIMIT_NPROC`, counted per uid inside the
    /// sandbox's own user namespace (so per sandbox).
    ProcessCountLimit,
    /// The sandbox is SIGKILLed if the verifier thread that started it dies.
    ParentDeathSignal,
    /// Every descriptor but stdio (and explicitly passed ones) closed; empty environment.
    CleanDescriptorsAndEnvironment,
}

impl Protection {
    /// Every protection, in a stable order.
    pub const ALL: [Protection; 22] = [
        Protection::MountNamespace,
        Protection::PidNamespace,
        Protection::IpcNamespace,
        Protection::UtsNamespace,
        Protection::NetworkNamespace,
        Protection::MinimalRoot,
        Protection::UnprivilegedUser,
        Protection::UserNamespace,
        Protection::SeparateRunnerUser,
        Protection::PidNamespacePerTest,
        Protection::NoNewPrivileges,
        Protection::Seccomp,
        Protection::LandlockScope,
        Protection::ResourceLimits,
        Protection::CgroupMemory,
        Protection::CgroupPids,
        Protection::CgroupCpuAccounting,
        Protection::CgroupKill,
        Protection::ProcessMemoryLimit,
        Protection::ProcessCountLimit,
        Protection::ParentDeathSignal,
        Protection::CleanDescriptorsAndEnvironment,
    ];

    /// Protections without which the sandbox refuses to run unless degraded mode is allowed.
    /// A memory and a process limit are required too, from a cgroup or from rlimits: see
    /// [`Protection::missing_required`].
    pub const REQUIRED: [Protection; 12] = [
        Protection::MountNamespace,
        Protection::PidNamespace,
        Protection::IpcNamespace,
        Protection::UtsNamespace,
        Protection::NetworkNamespace,
        Protection::MinimalRoot,
        Protection::UnprivilegedUser,
        Protection::UserNamespace,
        Protection::PidNamespacePerTest,
        Protection::NoNewPrivileges,
        Protection::Seccomp,
        Protection::ResourceLimits,
    ];

    /// The required protections missing from `active`: [`Protection::REQUIRED`], plus a memory
    /// limit (`cgroup_memory`, else `process_memory_limit`) and a process limit (`cgroup_pids`,
    /// else `process_count_limit`), named by their cgroup form when both are missing.
    pub fn missing_required(active: &[Protection]) -> Vec<Protection> {
        let mut missing: Vec<Protection> = Protection::REQUIRED
            .into_iter()
            .filter(|protection| !active.contains(protection))
            .collect();
        for (cgroup, rlimit) in [
            (Protection::CgroupMemory, Protection::ProcessMemoryLimit),
            (Protection::CgroupPids, Protection::ProcessCountLimit),
        ] {
            if !active.contains(&cgroup) && !active.contains(&rlimit) {
                missing.push(cgroup);
            }
        }
        missing
    }

    /// The snake_case name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Protection::MountNamespace => "mount_namespace",
            Protection::PidNamespace => "pid_namespace",
            Protection::IpcNamespace => "ipc_namespace",
            Protection::UtsNamespace => "uts_namespace",
            Protection::NetworkNamespace => "network_namespace",
            Protection::MinimalRoot => "minimal_root",
            Protection::UnprivilegedUser => "unprivileged_user",
            Protection::UserNamespace => "user_namespace",
            Protection::SeparateRunnerUser => "separate_runner_user",
            Protection::PidNamespacePerTest => "pid_namespace_per_test",
            Protection::NoNewPrivileges => "no_new_privileges",
            Protection::Seccomp => "seccomp",
            Protection::LandlockScope => "landlock_scope",
            Protection::ResourceLimits => "resource_limits",
            Protection::CgroupMemory => "cgroup_memory",
            Protection::CgroupPids => "cgroup_pids",
            Protection::CgroupCpuAccounting => "cgroup_cpu_accounting",
            Protection::CgroupKill => "cgroup_kill",
            Protection::ProcessMemoryLimit => "process_memory_limit",
            Protection::ProcessCountLimit => "process_count_limit",
            Protection::ParentDeathSignal => "parent_death_signal",
            Protection::CleanDescriptorsAndEnvironment => "clean_descriptors_and_environment",
        }
    }
}

/// How the sandbox isolates, as `rlvr doctor` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxMode {
    /// Started by root: the sandbox's user namespace maps two host ids of its choosing.
    Root,
    /// Started by an ordinary user: the same namespaces, root and filters, inside a user
    /// namespace the caller may create; limits from a delegated cgroup or from rlimits.
    UserNamespace,
    /// Some required protection is missing and `allow_degraded` was set.
    Degraded,
}

impl SandboxMode {
    /// The snake_case name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Root => "root",
            SandboxMode::UserNamespace => "user_namespace",
            SandboxMode::Degraded => "degraded",
        }
    }
}

/// The result of one [`crate::Sandbox::run`].
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// How the run ended.
    pub verdict: RunVerdict,
    /// Exit code when the program exited normally.
    pub exit_code: Option<i32>,
    /// Signal number when the program was killed by a signal.
    pub signal: Option<i32>,
    /// Wall-clock time from spawn to exit (monotonic).
    pub wall: Duration,
    /// CPU time (user + system) of the whole process tree.
    pub cpu: Duration,
    /// Peak memory of the whole process tree, in KiB.
    pub peak_memory_kib: u64,
    /// Captured stdout (at most the output cap).
    pub stdout: Vec<u8>,
    /// Captured stderr (at most the output cap).
    pub stderr: Vec<u8>,
    /// Whether stdout was cut at the cap.
    pub stdout_truncated: bool,
    /// Whether stderr was cut at the cap.
    pub stderr_truncated: bool,
    /// Protections that were active for this run.
    pub protections: Vec<Protection>,
}
