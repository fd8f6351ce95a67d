//! Starting a warm runner in the sandbox, exactly as the engine does: a supervisor (it gives
//! each test its own PID namespace and the program uid, and drops every capability in the test
//! child before the solution runs: `runner/isolation.py`), with the runner's memory, process
//! and time limits, and the framed connection to it. Public so tests and benchmarks can drive
//! the same runner the engine drives.

use std::os::fd::{AsFd, OwnedFd};

use rlvr_runner::transport::set_nonblocking;
use std::time::Duration;

use rlvr_runner::Runner;
use rlvr_sandbox::{Program, Sandbox, SandboxedProcess, SpawnRequest, StdioSpec};

/// Memory the runner process itself may use on top of a test's limit (interpreter, preloaded
/// modules such as pandas, pipes).
const RUNNER_HEADROOM_BYTES: u64 = 512 << 20;
/// CPU time of the whole runner process (the sandbox's limit); a test's own CPU limit must stay
/// below it, since a child cannot raise its hard limit past its parent's.
pub(crate) const RUNNER_CPU: Duration = Duration::from_secs(24 * 3600);

/// A started runner: its sandboxed process (dropping it kills the tree) and the connection.
#[derive(Debug)]
pub struct RunnerProcess {
    /// The sandboxed runner.
    pub process: SandboxedProcess,
    /// The protocol connection to it.
    pub runner: Runner,
    /// The engine's ends of the live pipes its judge functional test children talk on.
    pub live: LiveChannel,
}

/// The engine's ends of the two pipes between a judge functional test's child and the engine
/// (runner/live.py): the runner holds the other ends and hands them to each live test child
/// only. Non-blocking: a child that stops reading or writes garbage never holds the engine.
#[derive(Debug)]
pub struct LiveChannel {
    /// Messages for the child (the referee's requests and answers).
    pub to_child: OwnedFd,
    /// Messages from the child.
    pub from_child: OwnedFd,
}

/// The sandbox memory limit of a runner whose tests may use `test_memory_bytes` each. Bounded:
/// a limit from a caller that skipped validation cannot overflow or ask the cgroup for more
/// than the largest limit a job may set.
pub fn runner_memory_bytes(test_memory_bytes: u64) -> u64 {
    test_memory_bytes.clamp(1 << 30, rlvr_verify::MAX_MEMORY_MEGABYTES << 20)
        + RUNNER_HEADROOM_BYTES
}

/// Starts a runner in `sandbox` for tests limited to `test_memory_bytes`, living at most `wall`.
pub fn start_runner(
    sandbox: &Sandbox,
    test_memory_bytes: u64,
    wall: Duration,
) -> Result<RunnerProcess, String> {
    let [child_reads, to_child, from_child, child_writes] = live_pipes()?;
    let mut request = SpawnRequest::new(Program::Command {
        argv: rlvr_runner::runner_command(),
    });
    // Descriptors 3 and 4: the runner moves them out of the way of its own protocol.
    request.extra_descriptors = vec![child_reads, child_writes];
    request.limits.memory_bytes = runner_memory_bytes(test_memory_bytes);
    request.limits.cpu = RUNNER_CPU;
    request.limits.wall = wall;
    request.limits.pids = 256;
    request.stderr = StdioSpec::Null;
    request.supervisor = true;
    let mut process = sandbox.spawn(request).map_err(|error| error.to_string())?;
    let (Some(stdin), Some(stdout)) = (process.stdin.take(), process.stdout.take()) else {
        return Err("the sandbox gave the runner no pipes".to_owned());
    };
    let runner = Runner::new(OwnedFd::from(stdin), OwnedFd::from(stdout));
    Ok(RunnerProcess {
        process,
        runner,
        live: LiveChannel {
            to_child,
            from_child,
        },
    })
}

/// Two pipes for a runner's live tests: `(runner reads, engine writes)` and `(engine reads,
/// runner writes)`, close-on-exec; the engine's ends are non-blocking.
fn live_pipes() -> Result<[OwnedFd; 4], String> {
    let pipe = || {
        rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
            .map_err(|error| format!("cannot create the live pipes: {error}"))
    };
    let (child_reads, to_child) = pipe()?;
    let (from_child, child_writes) = pipe()?;
    set_nonblocking(to_child.as_fd());
    set_nonblocking(from_child.as_fd());
    Ok([child_reads, to_child, from_child, child_writes])
}
