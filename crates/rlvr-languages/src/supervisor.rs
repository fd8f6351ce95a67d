//! The client of the exec supervisor (the `rlvr-exec-supervisor` crate, whose library is the
//! protocol): starts it in the sandbox as a
//! supervisor, loads a job's program once and runs one test per request. Every read has a
//! deadline, so a supervisor that stops answering costs its caller a bounded wait and an error,
//! never a hung worker.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use rlvr_sandbox::wait::ready_until;
use rlvr_sandbox::{
    Network, Program, ResourceLimits, Sandbox, SandboxedProcess, SpawnRequest, StdioSpec,
};
use rustix::event::PollFlags;
use rustix::fs::{MemfdFlags, SealFlags};

use crate::exec_protocol::{LoadReply, ProgramSpec, Request, RunReport, RunSpec};

/// How long past a test's own wall-clock limit the supervisor may take to answer (forking,
/// reading the output, emptying the work directory).
const ANSWER_GRACE: Duration = Duration::from_secs(10);
/// Tries at starting a supervisor whose sandbox set-up failed in the child.
const START_ATTEMPTS: u32 = 3;
/// How long a load may take (copying the image into a sealed memory file).
const LOAD_DEADLINE: Duration = Duration::from_secs(30);

/// Why talking to the supervisor failed.
#[derive(Debug, thiserror::Error)]
pub enum SupervisorError {
    /// The sandbox could not start it.
    #[error("the sandbox cannot start the exec supervisor: {0}")]
    Start(rlvr_sandbox::SandboxError),
    /// It refused the program.
    #[error("the exec supervisor refused the program: {0}")]
    Load(String),
    /// It did not answer in time.
    #[error("the exec supervisor did not answer in time")]
    Deadline,
    /// The connection failed (it died).
    #[error("the exec supervisor stopped: {0}")]
    Connection(std::io::Error),
}

// The causes are in the messages (which reach results as reasons), so not in the chain.
impl From<rlvr_sandbox::SandboxError> for SupervisorError {
    fn from(error: rlvr_sandbox::SandboxError) -> Self {
        Self::Start(error)
    }
}

impl From<std::io::Error> for SupervisorError {
    fn from(error: std::io::Error) -> Self {
        Self::Connection(error)
    }
}

/// A running exec supervisor and its pipes. Dropping it kills the sandbox.
#[derive(Debug)]
pub struct Supervisor {
    process: SandboxedProcess,
    requests: File,
    replies: File,
}

fn sealed_image(image: &[u8]) -> std::io::Result<OwnedFd> {
    let fd = rustix::fs::memfd_create(
        "rlvr-exec-supervisor",
        MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
    )?;
    let mut file = File::from(fd);
    file.write_all(image)?;
    rustix::fs::fcntl_add_seals(
        &file,
        SealFlags::SEAL | SealFlags::SHRINK | SealFlags::GROW | SealFlags::WRITE,
    )?;
    Ok(OwnedFd::from(file))
}

impl Supervisor {
    /// Starts a supervisor in `sandbox` whose sandbox has `limits` (memory and processes of the
    /// supervisor and every test together; `wall` is ignored: the caller's deadlines apply).
    pub fn start(sandbox: &Sandbox, limits: ResourceLimits) -> Result<Self, SupervisorError> {
        Self::start_with_network(sandbox, limits, Network::Isolated)
    }

    /// As [`Supervisor::start`], with the network its tests see: `/run_code` runs a program
    /// once with a private loopback of its own (a supervisor started for one run only).
    pub fn start_with_network(
        sandbox: &Sandbox,
        limits: ResourceLimits,
        network: Network,
    ) -> Result<Self, SupervisorError> {
        // A step of the sandbox's set-up failing in the child (before anything of the request
        // runs) has been seen to be transient under load (`mount /proc`: EINVAL, once in a CI
        // run): the start is tried again, a bounded number of times.
        let mut attempt = 1;
        loop {
            match Self::start_once(sandbox, limits, network) {
                Err(SupervisorError::Start(
                    error @ rlvr_sandbox::SandboxError::ChildStep { .. },
                )) if attempt < START_ATTEMPTS => {
                    tracing::warn!("starting the exec supervisor (attempt {attempt}): {error}");
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    fn start_once(
        sandbox: &Sandbox,
        limits: ResourceLimits,
        network: Network,
    ) -> Result<Self, SupervisorError> {
        let image = sealed_image(crate::SUPERVISOR_IMAGE)?;
        let mut request = SpawnRequest::new(Program::Command {
            argv: vec!["/proc/self/fd/3".to_owned()],
        });
        request.limits = limits;
        request.stderr = StdioSpec::Null;
        request.extra_descriptors = vec![image];
        request.supervisor = true;
        request.network = network;
        let mut process = sandbox.spawn(request)?;
        let (Some(requests), Some(replies)) = (process.stdin.take(), process.stdout.take()) else {
            return Err(SupervisorError::Connection(std::io::Error::other(
                "the sandbox gave the supervisor no pipes",
            )));
        };
        Ok(Self {
            process,
            requests,
            replies,
        })
    }

    /// The sandboxed process (its resource usage, out-of-memory kills).
    pub fn process(&self) -> &SandboxedProcess {
        &self.process
    }

    /// Sends `request` and reads the reply with `receive` before `deadline`.
    fn exchange<T>(
        &mut self,
        request: &[u8],
        deadline: Instant,
        receive: impl FnOnce(&mut DeadlineReader<'_>) -> std::io::Result<Option<T>>,
    ) -> Result<T, SupervisorError> {
        self.requests.write_all(request)?;
        let mut reader = DeadlineReader {
            file: &mut self.replies,
            deadline,
        };
        match receive(&mut reader) {
            Ok(Some(reply)) => Ok(reply),
            Ok(None) => Err(SupervisorError::Connection(std::io::Error::other(
                "the supervisor closed its end",
            ))),
            Err(error) if error.kind() == std::io::ErrorKind::TimedOut => {
                Err(SupervisorError::Deadline)
            }
            Err(error) => Err(error.into()),
        }
    }

    /// Loads the program every later test runs.
    pub fn load(&mut self, program: &ProgramSpec) -> Result<(), SupervisorError> {
        let reply = self.exchange(
            &program.encode(),
            Instant::now() + LOAD_DEADLINE,
            |reader| LoadReply::receive(reader),
        )?;
        match reply.problem {
            Some(problem) => Err(SupervisorError::Load(problem)),
            None => Ok(()),
        }
    }

    /// Runs one test.
    pub fn run(&mut self, test: &RunSpec) -> Result<RunReport, SupervisorError> {
        let deadline = Instant::now() + Duration::from_millis(test.wall_ms) + ANSWER_GRACE;
        self.exchange(&test.encode(), deadline, |reader| {
            RunReport::receive(reader)
        })
    }

    /// Asks the supervisor to exit, then kills and reaps the sandbox.
    pub fn finish(mut self) {
        if self.requests.write_all(&Request::Exit.encode()).is_ok() {
            let _ = self
                .process
                .wait_until(Instant::now() + Duration::from_millis(500));
        }
    }
}

/// Reads from a pipe, failing with `TimedOut` once `deadline` has passed.
struct DeadlineReader<'a> {
    file: &'a mut File,
    deadline: Instant,
}

impl Read for DeadlineReader<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        if ready_until(self.file.as_fd(), PollFlags::IN, self.deadline)? {
            self.file.read(buffer)
        } else {
            Err(std::io::ErrorKind::TimedOut.into())
        }
    }
}

#[cfg(test)]
mod tests {
    /// The program headers of an ELF64 image: (type, ...) as the kernel's loader reads them.
    fn program_header_types(image: &[u8]) -> Vec<u32> {
        let read_u16 = |at: usize| u16::from_le_bytes([image[at], image[at + 1]]) as usize;
        let offset = u64::from_le_bytes(image[0x20..0x28].try_into().expect("8 bytes")) as usize;
        let (size, count) = (read_u16(0x36), read_u16(0x38));
        (0..count)
            .map(|index| {
                let at = offset + index * size;
                u32::from_le_bytes(image[at..at + 4].try_into().expect("4 bytes"))
            })
            .collect()
    }

    /// The supervisor runs inside the sandbox's minimal root, where the host's libraries may
    /// not be: its image names no interpreter (no dynamic loader), whatever built it.
    #[test]
    fn the_embedded_supervisor_is_a_static_executable() {
        const PROGRAM_INTERPRETER: u32 = 3;
        let image = crate::SUPERVISOR_IMAGE;
        assert_eq!(&image[..4], b"\x7fELF");
        assert_eq!(image[4], 2, "a 64-bit image");
        let types = program_header_types(image);
        assert!(types.contains(&1), "a loadable segment: {types:?}");
        assert!(!types.contains(&PROGRAM_INTERPRETER), "{types:?}");
    }
}
