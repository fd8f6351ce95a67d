//! What to run and under which limits: [`RunRequest`], [`SpawnRequest`], [`Program`], [`ResourceLimits`].

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::Duration;

/// The program to run inside the sandbox.
#[derive(Debug, Clone)]
pub enum Program {
    /// Python source, written to `/tmp/main.py` in the sandbox and run as `python -I main.py`
    /// (isolated mode; `site` stays on so `exit()` exists and installed packages import).
    Python {
        /// The program text.
        source: String,
    },
    /// An explicit argument vector; `argv[0]` is a path inside the sandbox. The word `python`
    /// as `argv[0]` means the resolved interpreter ([`crate::Sandbox::python_path`]).
    Command {
        /// The argument vector, program first.
        argv: Vec<String>,
    },
}

/// Where the program's standard input comes from.
#[derive(Debug, Clone, Default)]
pub enum Stdin {
    /// Empty input.
    #[default]
    Empty,
    /// These bytes (placed in a sealed memory file, so a program that never reads cannot block us).
    Bytes(Vec<u8>),
    /// The contents of this host file (copied into a sealed memory file first).
    File(PathBuf),
}

/// Per-run limits. [`ResourceLimits::default`] matches `rlvr run`'s defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceLimits {
    /// Wall-clock limit, measured on the monotonic clock.
    pub wall: Duration,
    /// CPU-time limit of the whole process tree.
    pub cpu: Duration,
    /// Memory limit of the whole process tree (cgroup), in bytes.
    pub memory_bytes: u64,
    /// Cap of each captured stream (stdout and stderr separately), in bytes.
    pub output_bytes: u64,
    /// Maximum number of processes and threads at once (cgroup `pids.max`).
    pub pids: u64,
    /// Size of the writable work directory `/tmp` (tmpfs, counted against memory too).
    pub tmpfs_bytes: u64,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        ResourceLimits {
            wall: Duration::from_secs(10),
            cpu: Duration::from_secs(10),
            memory_bytes: 1024 << 20,
            output_bytes: 64 << 20,
            pids: 128,
            tmpfs_bytes: 64 << 20,
        }
    }
}

impl ResourceLimits {
    /// The address-space backstop: four times the memory limit (numpy and threads reserve far
    /// more virtual memory than they touch; the cgroup is the real limit).
    pub(crate) fn address_space_bytes(&self) -> u64 {
        self.memory_bytes.saturating_mul(4).max(1 << 30)
    }
}

/// The network a sandboxed process sees.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Network {
    /// No network: the sandbox's shared empty network namespace (its loopback down), and every
    /// socket family but `AF_UNIX` refused (`EPERM`). The judge's runs.
    #[default]
    Isolated,
    /// Loopback only: a network namespace created for this process alone, whose `lo` the
    /// sandbox brings up before the program runs, and IPv4 and IPv6 sockets allowed. No other
    /// interface exists in it, and it dies with the process tree, so nothing listening in it
    /// outlives the run (SandboxFusion's `/run_code` lets a program talk to itself over
    /// 127.0.0.1, issue 35). Without network namespaces (degraded mode without root) this is
    /// [`Network::Isolated`]: the host's loopback is never handed out.
    PrivateLoopback,
}

/// A file placed in the work directory before the program starts (read-only, owned by root).
#[derive(Debug, Clone)]
pub struct WorkFile {
    /// A plain file name (no `/`), created under `/tmp`.
    pub name: String,
    /// Its contents.
    pub contents: Vec<u8>,
}

/// One complete run: [`crate::Sandbox::run`] waits for it and captures its output.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// What to run.
    pub program: Program,
    /// Its standard input.
    pub stdin: Stdin,
    /// Its limits.
    pub limits: ResourceLimits,
    /// Extra files for the work directory.
    pub files: Vec<WorkFile>,
    /// The network it sees.
    pub network: Network,
}

impl RunRequest {
    /// A Python program with default limits and empty stdin.
    pub fn python(source: impl Into<String>) -> Self {
        RunRequest {
            program: Program::Python {
                source: source.into(),
            },
            stdin: Stdin::Empty,
            limits: ResourceLimits::default(),
            files: Vec::new(),
            network: Network::Isolated,
        }
    }
}

/// How a spawned process's stdin, stdout or stderr is connected.
#[derive(Debug, Default)]
pub enum StdioSpec {
    /// A pipe; the caller gets the other end in [`crate::SandboxedProcess`].
    #[default]
    Piped,
    /// `/dev/null`-like: an empty sealed memory file for stdin, discarded for output.
    Null,
    /// This descriptor (a memfd for stdin, a pipe or file for output).
    Descriptor(OwnedFd),
}

/// A long-lived sandboxed process the caller talks to (the warm runner of issue 6).
#[derive(Debug)]
pub struct SpawnRequest {
    /// What to run.
    pub program: Program,
    /// Limits; `wall` is not enforced by the sandbox here, use
    /// [`crate::SandboxedProcess::wait_until`] with the caller's own deadline.
    pub limits: ResourceLimits,
    /// Extra files for the work directory.
    pub files: Vec<WorkFile>,
    /// stdin wiring.
    pub stdin: StdioSpec,
    /// stdout wiring.
    pub stdout: StdioSpec,
    /// stderr wiring.
    pub stderr: StdioSpec,
    /// Descriptors passed in as fd 3, 4, ... in this order (at most 32).
    pub extra_descriptors: Vec<OwnedFd>,
    /// Run as a supervisor (the warm runner): the namespace's uid 0 with the few capabilities
    /// it needs to give each test its own PID namespace and the program uid (see
    /// docs/sandbox.md); every process it forks must drop them before running anything
    /// untrusted. A program (`false`) runs with no capability at all.
    pub supervisor: bool,
    /// The network it (and, for a supervisor, every process it starts) sees.
    pub network: Network,
}

impl SpawnRequest {
    /// A process with piped stdio, default limits and nothing else.
    pub fn new(program: Program) -> Self {
        SpawnRequest {
            program,
            limits: ResourceLimits::default(),
            files: Vec::new(),
            stdin: StdioSpec::Piped,
            stdout: StdioSpec::Piped,
            stderr: StdioSpec::Piped,
            extra_descriptors: Vec::new(),
            supervisor: false,
            network: Network::Isolated,
        }
    }
}
