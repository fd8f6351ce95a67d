//! [`Sandbox::spawn`]: prepares a [`ChildPlan`] (descriptors, work files, identity, limits),
//! then launches: the first-step child (`CLONE_VFORK`, this thread waits for it to exit) clones
//! the sandboxed process as our own child (`CLONE_PARENT`), and we wait on the close-on-exec
//! error pipe until the sandboxed process has exec'd (end of file) or reported a failed step.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use rustix::event::PollFlags;
use rustix::pipe::PipeFlags;

use crate::cgroup::Lease;
use crate::error::SandboxError;
use crate::isolation::{
    ChildPlan, IdMaps, Identity, LAST_PID_DESCRIPTOR, PlannedFile, Step, UserNamespaceEntry,
};
use crate::minimal_root::{c_path, c_string};
use crate::process::SandboxedProcess;
use crate::request::{Network, Program, ResourceLimits, SpawnRequest, StdioSpec, WorkFile};
use crate::sandbox::{Inner, Sandbox, WORK_DIRECTORY, high, sealed_memory_file};
use crate::seccomp::Role;
use crate::sys::{self, ChildStack};

/// At most this many extra descriptors (fd 3, 4, ...).
const MAX_EXTRA_DESCRIPTORS: usize = 32;
/// How long the sandboxed process may take from clone to exec before it is killed.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The capabilities a supervisor keeps (inside its own user namespace only): create a PID
/// namespace per test (`CAP_SYS_ADMIN`), switch a test to the program uid (`CAP_SETUID`,
/// `CAP_SETGID`), lock its children's privileges (`CAP_SETPCAP`), kill and clean up after
/// processes of that uid (`CAP_KILL`, `CAP_DAC_OVERRIDE`, `CAP_DAC_READ_SEARCH`, `CAP_FOWNER`).
pub(crate) const SUPERVISOR_CAPABILITIES: u64 = {
    // Numbers from linux/capability.h.
    const DAC_OVERRIDE: u64 = 1;
    const DAC_READ_SEARCH: u64 = 2;
    const FOWNER: u64 = 3;
    const KILL: u64 = 5;
    const SETGID: u64 = 6;
    const SETUID: u64 = 7;
    const SETPCAP: u64 = 8;
    const SYS_ADMIN: u64 = 21;
    (1 << DAC_OVERRIDE)
        | (1 << DAC_READ_SEARCH)
        | (1 << FOWNER)
        | (1 << KILL)
        | (1 << SETGID)
        | (1 << SETUID)
        | (1 << SETPCAP)
        | (1 << SYS_ADMIN)
};

/// Ranges to close so that only `keep` survives (sorted, inclusive).
fn close_ranges(mut keep: Vec<u32>) -> Vec<(u32, u32)> {
    keep.sort_unstable();
    let mut ranges = Vec::new();
    let mut next = 0u32;
    for &fd in &keep {
        if fd > next {
            ranges.push((next, fd - 1));
        }
        next = fd + 1;
    }
    ranges.push((next, u32::MAX));
    ranges
}

fn resource_limits(limits: &ResourceLimits, by_rlimit: bool) -> Vec<(u32, u64, u64)> {
    let cpu_seconds = limits.cpu.as_secs_f64().ceil().max(1.0) as u64;
    let stack = 64u64 << 20;
    // With a cgroup the address space is only a backstop; without one it is the limit.
    let address_space = if by_rlimit {
        limits.memory_bytes
    } else {
        limits.address_space_bytes()
    };
    let mut resource_limits = vec![
        // SIGXCPU at the limit, SIGKILL one second later.
        (libc::RLIMIT_CPU, cpu_seconds, cpu_seconds + 1),
        (libc::RLIMIT_FSIZE, limits.tmpfs_bytes, limits.tmpfs_bytes),
        (libc::RLIMIT_NOFILE, 1024, 1024),
        (libc::RLIMIT_CORE, 0, 0),
        (libc::RLIMIT_STACK, stack, stack),
        (libc::RLIMIT_AS, address_space, address_space),
    ];
    if by_rlimit {
        // Counted per uid inside the sandboxed process's own user namespace.
        resource_limits.push((libc::RLIMIT_NPROC, limits.pids, limits.pids));
    }
    resource_limits
}

/// Who the sandboxed process becomes, in its own user namespace (or on the host when degraded).
fn identity(inner: &Inner, role: Role) -> Option<Identity> {
    match &inner.namespaces {
        Some(namespaces) => {
            let program_id = u32::from(namespaces.mapping.has_second_id());
            let (id, keep) = match role {
                Role::Supervisor => (0, SUPERVISOR_CAPABILITIES),
                Role::Program => (program_id, 0),
            };
            Some(Identity {
                uid: id,
                gid: id,
                clear_groups: namespaces.groups_allowed,
                keep_capabilities: keep,
                last_capability: inner.last_capability,
                lock_no_root: role == Role::Program,
            })
        }
        // Degraded root: the host's namespaces, one unprivileged host uid for everything.
        None if inner.filesystem.is_some() => Some(Identity {
            uid: inner.config.uid,
            gid: inner.config.gid,
            clear_groups: true,
            keep_capabilities: 0,
            last_capability: inner.last_capability,
            lock_no_root: true,
        }),
        None => None,
    }
}

/// Owner of the work directory: the program's uid, so a runner's tests can write there too.
fn work_owner(inner: &Inner) -> (u32, u32) {
    match &inner.namespaces {
        Some(namespaces) => {
            let id = u32::from(namespaces.mapping.has_second_id());
            (id, id)
        }
        None => (inner.config.uid, inner.config.gid),
    }
}

fn wait_readable(fd: &OwnedFd, deadline: Instant) -> bool {
    crate::wait::ready_until(fd.as_fd(), PollFlags::IN, deadline).unwrap_or(false)
}

/// What the error pipe said once the sandboxed process exec'd, failed or ran out of time.
enum StartReport {
    Executed,
    Failed(Step, i32),
    TimedOut,
}

fn read_report(error_read: &OwnedFd) -> StartReport {
    if !wait_readable(error_read, Instant::now() + START_TIMEOUT) {
        return StartReport::TimedOut;
    }
    let mut report = [0u8; 8];
    let mut filled = 0;
    while filled < report.len() {
        match rustix::io::read(error_read, &mut report[filled..]) {
            Ok(0) => break,
            Ok(count) => filled += count,
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => {
                if !wait_readable(error_read, Instant::now() + START_TIMEOUT) {
                    return StartReport::TimedOut;
                }
            }
            Err(_) => break,
        }
    }
    if filled < report.len() {
        return StartReport::Executed;
    }
    let code = u32::from_ne_bytes([report[0], report[1], report[2], report[3]]);
    let errno = i32::from_ne_bytes([report[4], report[5], report[6], report[7]]);
    StartReport::Failed(Step::from_code(code).unwrap_or(Step::Execute), errno)
}

/// The files the work directory starts with: the request's, and a Python program's source as
/// `main.py`; every name a plain file name.
fn work_files(mut files: Vec<WorkFile>, program: &Program) -> Result<Vec<WorkFile>, SandboxError> {
    if let Program::Python { source } = program {
        files.push(WorkFile {
            name: "main.py".to_owned(),
            contents: source.clone().into_bytes(),
        });
    }
    for file in &files {
        if file.name.is_empty() || file.name.contains('/') || file.name == "." || file.name == ".."
        {
            return Err(SandboxError::InvalidRequest {
                reason: format!("bad work file name {:?}", file.name),
            });
        }
    }
    Ok(files)
}

/// The child's standard streams and the parent's ends of those that are piped.
struct ChildStreams {
    /// Descriptors 0, 1 and 2 of the child, in that order.
    child: [OwnedFd; 3],
    stdin_parent: Option<File>,
    stdout_parent: Option<File>,
    stderr_parent: Option<File>,
}

fn pipe() -> Result<(OwnedFd, OwnedFd), SandboxError> {
    rustix::pipe::pipe_with(PipeFlags::CLOEXEC)
        .map_err(|errno| SandboxError::system("pipe")(errno.into()))
}

fn child_streams(
    inner: &Inner,
    stdin: StdioSpec,
    stdout: StdioSpec,
    stderr: StdioSpec,
) -> Result<ChildStreams, SandboxError> {
    let (stdin_child, stdin_parent) = match stdin {
        StdioSpec::Piped => {
            let (read, write) = pipe()?;
            (read, Some(File::from(write)))
        }
        StdioSpec::Null => (sealed_memory_file("stdin", b"")?, None),
        StdioSpec::Descriptor(fd) => (fd, None),
    };
    let output = |spec: StdioSpec| -> Result<(OwnedFd, Option<File>), SandboxError> {
        Ok(match spec {
            StdioSpec::Piped => {
                let (read, write) = pipe()?;
                (write, Some(File::from(read)))
            }
            StdioSpec::Null => (
                inner
                    .null_output
                    .try_clone()
                    .map_err(SandboxError::system("descriptor duplication"))?,
                None,
            ),
            StdioSpec::Descriptor(fd) => (fd, None),
        })
    };
    let (stdout_child, stdout_parent) = output(stdout)?;
    let (stderr_child, stderr_parent) = output(stderr)?;
    Ok(ChildStreams {
        child: [stdin_child, stdout_child, stderr_child],
        stdin_parent,
        stdout_parent,
        stderr_parent,
    })
}

/// The work files as the child gets them: sealed memory files it copies into its private
/// work directory, or, without one (degraded mode), a host directory written here.
struct WorkFilePlan {
    /// Kept open until the child started.
    memory_files: Vec<OwnedFd>,
    planned: Vec<PlannedFile>,
    host_directory: Option<tempfile::TempDir>,
}

fn plan_work_files(inner: &Inner, files: &[WorkFile]) -> Result<WorkFilePlan, SandboxError> {
    let mut memory_files = Vec::new();
    let mut planned_files = Vec::new();
    if inner.filesystem.is_some() {
        for file in files {
            let fd = high(sealed_memory_file(&file.name, &file.contents)?)?;
            planned_files.push(PlannedFile {
                path: c_string(format!("{WORK_DIRECTORY}/{}", file.name))?,
                source: fd.as_raw_fd(),
                length: file.contents.len() as u64,
            });
            memory_files.push(fd);
        }
        return Ok(WorkFilePlan {
            memory_files,
            planned: planned_files,
            host_directory: None,
        });
    }
    let directory = tempfile::Builder::new()
        .prefix("rlvr-sandbox-work-")
        .tempdir()
        .map_err(SandboxError::system("create work directory"))?;
    for file in files {
        let path = directory.path().join(&file.name);
        fs_err::write(&path, &file.contents)
            .map_err(SandboxError::path("write work file", &path))?;
    }
    Ok(WorkFilePlan {
        memory_files,
        planned: planned_files,
        host_directory: Some(directory),
    })
}

/// What went wrong starting the sandboxed process (`pid`, 0 when never cloned), if anything.
fn start_failure(report: StartReport, pid: libc::pid_t) -> Option<SandboxError> {
    match report {
        StartReport::Executed if pid > 0 => None,
        StartReport::Executed => Some(SandboxError::ChildStep {
            step: Step::CloneSandbox,
            errno: libc::ECHILD,
        }),
        StartReport::Failed(step, errno) => Some(SandboxError::ChildStep { step, errno }),
        StartReport::TimedOut => Some(SandboxError::System {
            action: "start the sandboxed process",
            error: std::io::Error::from(std::io::ErrorKind::TimedOut),
        }),
    }
}

/// `execve`'s array form of `values`: their pointers, then a null one.
fn null_terminated(values: &[CString]) -> Vec<*const libc::c_char> {
    values
        .iter()
        .map(|value| value.as_ptr())
        .chain([std::ptr::null()])
        .collect()
}

/// The namespaces the sandboxed process is cloned into (the shared network namespace is
/// entered before; a private loopback's is created here).
fn sandbox_clone_flags(inner: &Inner, network: Network) -> u64 {
    let mut flags = (libc::CLONE_VM | libc::CLONE_PARENT) as u64;
    if network == Network::PrivateLoopback {
        flags |= libc::CLONE_NEWNET as u64;
    }
    if inner.filesystem.is_some() {
        flags |= (libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS)
            as u64;
    }
    if inner.namespaces.is_some() {
        flags |= libc::CLONE_NEWUSER as u64;
    }
    flags
}

/// The empty network namespace the sandbox enters: its user namespace's, or the host's
/// (degraded root).
fn network_namespace(inner: &Inner) -> Option<RawFd> {
    match &inner.namespaces {
        Some(namespaces) => Some(namespaces.network.as_raw_fd()),
        None => inner
            .host_network_namespace
            .as_ref()
            .map(AsRawFd::as_raw_fd),
    }
}

/// The network the process gets: a private loopback only where the sandbox has network
/// namespaces at all (so that the loopback is a new namespace's, never the host's).
fn granted_network(inner: &Inner, requested: Network) -> Network {
    match requested {
        Network::PrivateLoopback if network_namespace(inner).is_some() => requested,
        _ => Network::Isolated,
    }
}

/// The descriptors the child keeps open until exec (everything else is closed): its targets,
/// the error pipe, the Landlock ruleset, the verifier's pidfd (close-on-exec), and a
/// supervisor's `ns_last_pid` (returned with the path it is opened from).
fn kept_descriptors(
    inner: &Inner,
    role: &Role,
    targets: usize,
    error_pipe: RawFd,
) -> Result<(Vec<u32>, Option<CString>), SandboxError> {
    let mut keep: Vec<u32> = (0..targets as u32).collect();
    keep.push(error_pipe as u32);
    // A supervisor with a /proc of its own gets its PID namespace's `ns_last_pid`.
    let last_pid = match (role, &inner.filesystem) {
        (Role::Supervisor, Some(filesystem)) => {
            keep.push(LAST_PID_DESCRIPTOR as u32);
            let mut path = filesystem.proc_target.as_bytes().to_vec();
            path.extend_from_slice(b"/sys/kernel/ns_last_pid");
            Some(c_string(path)?)
        }
        _ => None,
    };
    if let Some(ruleset) = &inner.landlock_ruleset {
        keep.push(ruleset.as_raw_fd() as u32);
    }
    if let Some(verifier) = &inner.verifier {
        keep.push(verifier.as_raw_fd() as u32); // close-on-exec: the program never has it
    }
    Ok((keep, last_pid))
}

/// Clones the first step of the child (`CLONE_VFORK`: returns once it exited), born in the
/// lease's cgroup where the kernel can; kernels before 5.7 lack clone3 or CLONE_INTO_CGROUP,
/// and then the child joins the cgroup after birth.
fn clone_first_step(
    plan: &mut ChildPlan<'_>,
    lease: &Lease,
    born_inside: bool,
) -> std::io::Result<(libc::pid_t, OwnedFd)> {
    let argument = |plan: &ChildPlan<'_>| {
        (plan as *const ChildPlan<'_>)
            .cast_mut()
            .cast::<libc::c_void>()
    };
    match lease.birth_cgroup().filter(|_| born_inside) {
        Some(cgroup) => match sys::clone3_vfork(0, cgroup, sys::first_step_entry, argument(plan)) {
            Err(error) if matches!(error.raw_os_error(), Some(libc::ENOSYS | libc::E2BIG)) => {
                plan.cgroup_procs = lease.join_descriptors(false);
                sys::clone_vfork(0, sys::first_step_entry, argument(plan))
            }
            other => other,
        },
        None => sys::clone_vfork(0, sys::first_step_entry, argument(plan)),
    }
}

impl Sandbox {
    /// Starts a sandboxed process and returns once it has exec'd; the caller talks to it
    /// through its pipes and must wait for or kill it (dropping the handle kills the whole tree).
    ///
    /// The sandbox gets SIGKILL if the thread that called `spawn` exits first
    /// (`PR_SET_PDEATHSIG` follows the creating thread): spawn from long-lived threads.
    pub fn spawn(&self, request: SpawnRequest) -> Result<SandboxedProcess, SandboxError> {
        let inner = self.inner();
        if request.extra_descriptors.len() > MAX_EXTRA_DESCRIPTORS {
            return Err(SandboxError::InvalidRequest {
                reason: format!("at most {MAX_EXTRA_DESCRIPTORS} extra descriptors"),
            });
        }
        let role = if request.supervisor {
            Role::Supervisor
        } else {
            Role::Program
        };
        let (program, argv) = self.command_line(&request.program)?;
        let files = work_files(request.files, &request.program)?;
        let lease = inner
            .cgroups
            .lease(request.limits.memory_bytes, request.limits.pids)?;

        // Descriptors: what the child gets (moved >= 64) and what we keep.
        let streams = child_streams(inner, request.stdin, request.stdout, request.stderr)?;
        let (stdin_parent, stdout_parent, stderr_parent) = (
            streams.stdin_parent,
            streams.stdout_parent,
            streams.stderr_parent,
        );
        let mut child_side: Vec<OwnedFd> = Vec::new();
        for fd in streams.child.into_iter().chain(request.extra_descriptors) {
            child_side.push(high(fd)?);
        }
        let descriptors: Vec<(RawFd, RawFd)> = child_side
            .iter()
            .enumerate()
            .map(|(target, fd)| (fd.as_raw_fd(), target as RawFd))
            .collect();

        let (error_read, error_write) = pipe()?;
        let error_write = high(error_write)?;
        let (release_read, release_write) = pipe()?;
        let (release_read, release_write) = (high(release_read)?, high(release_write)?);

        let WorkFilePlan {
            memory_files,
            planned: planned_files,
            host_directory: host_work_directory,
        } = plan_work_files(inner, &files)?;
        let work_directory = match &host_work_directory {
            Some(directory) => c_path(directory.path())?,
            None => c_string(WORK_DIRECTORY)?,
        };

        let (keep, last_pid) =
            kept_descriptors(inner, &role, descriptors.len(), error_write.as_raw_fd())?;

        let limits = request.limits;
        let born_inside = lease.birth_cgroup().is_some() && sys::CAN_CLONE_INTO_CGROUP;
        let environment_pointers = null_terminated(&inner.environment);
        let argument_pointers = null_terminated(&argv);
        let network = granted_network(inner, request.network);
        let sandbox_flags = sandbox_clone_flags(inner, network);
        let sandbox_stack =
            ChildStack::map().map_err(SandboxError::system("map the sandbox stack"))?;
        let (work_uid, work_gid) = work_owner(inner);
        let mut plan = ChildPlan {
            error_pipe: error_write.as_raw_fd(),
            cgroup_procs: lease.join_descriptors(born_inside),
            user_namespace: inner
                .namespaces
                .as_ref()
                .map(|namespaces| UserNamespaceEntry {
                    namespace: namespaces.user.as_raw_fd(),
                    groups_allowed: namespaces.groups_allowed,
                }),
            network_namespace: network_namespace(inner),
            private_loopback: network == Network::PrivateLoopback,
            sandbox_flags,
            sandbox_stack: sandbox_stack.bounds(),
            sandbox_entry: sys::sandbox_entry,
            sandbox_pid: AtomicI32::new(0),
            id_maps: inner.namespaces.as_ref().map(|namespaces| {
                let (uid_map, gid_map) = namespaces.mapping.sandbox_id_maps();
                IdMaps { uid_map, gid_map }
            }),
            release_write: release_write.as_raw_fd(),
            release_read: release_read.as_raw_fd(),
            filesystem: inner.filesystem.as_ref(),
            work_options: c_string(format!(
                "size={},nr_inodes=4096,mode=0700,uid={work_uid},gid={work_gid}",
                limits.tmpfs_bytes.max(4096),
            ))?,
            verifier: inner.verifier.as_ref().map(AsRawFd::as_raw_fd),
            last_pid,
            files: planned_files,
            work_directory,
            resource_limits: resource_limits(&limits, inner.limits_by_rlimit),
            descriptors,
            close_ranges: close_ranges(keep),
            identity: identity(inner, role),
            landlock_ruleset: inner.landlock_ruleset.as_ref().map(AsRawFd::as_raw_fd),
            seccomp: Some(inner.seccomp.of(role, network)),
            program,
            argv: argument_pointers,
            envp: environment_pointers,
        };
        let started = Instant::now();
        let first_step = clone_first_step(&mut plan, &lease, born_inside);
        let (first_pid, first_pidfd) = first_step.map_err(SandboxError::system("clone"))?;
        // The first step has exited (CLONE_VFORK); reap it. The sandboxed process it cloned is
        // our child and may still be setting up, on its own stack, reading `plan`.
        let _ = sys::wait_child(first_pid, true);
        drop(first_pidfd);
        drop(error_write);
        drop(release_write);
        let pid = plan.sandbox_pid.load(Ordering::SeqCst);
        let report = read_report(&error_read);
        // Past this point the sandboxed process has exec'd, died or been killed: nothing runs
        // on its stack or reads the plan any more.
        let reap_failed = |pid: libc::pid_t| {
            if pid > 0 {
                sys::kill_pid(pid, libc::SIGKILL);
                let _ = sys::wait_child(pid, true);
            }
        };
        let failure = start_failure(report, pid);
        if let Some(error) = failure {
            reap_failed(pid);
            drop((plan, sandbox_stack));
            return Err(error);
        }
        drop((plan, sandbox_stack, release_read, child_side, memory_files));
        let pidfd = match sys::pidfd_open(pid) {
            Ok(pidfd) => pidfd,
            Err(error) => {
                reap_failed(pid);
                return Err(SandboxError::system("pidfd_open")(error));
            }
        };
        Ok(SandboxedProcess::new(
            pid,
            pidfd,
            lease,
            started,
            stdin_parent,
            stdout_parent,
            stderr_parent,
            host_work_directory,
            limits,
        ))
    }

    fn command_line(&self, program: &Program) -> Result<(CString, Vec<CString>), SandboxError> {
        let python = c_path(self.python_path())?;
        match program {
            Program::Python { .. } => Ok((
                python.clone(),
                vec![python, c_string("-I")?, c_string("main.py")?],
            )),
            Program::Command { argv } => {
                let Some(first) = argv.first() else {
                    return Err(SandboxError::InvalidRequest {
                        reason: "empty argv".to_owned(),
                    });
                };
                let executable = if first == "python" {
                    python
                } else {
                    c_string(first.as_str())?
                };
                let mut arguments = vec![executable.clone()];
                for argument in &argv[1..] {
                    arguments.push(c_string(argument.as_str())?);
                }
                Ok((executable, arguments))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_kept_descriptors_escape_the_close_ranges() {
        assert_eq!(
            close_ranges(vec![0, 1, 2, 70, 65]),
            [(3, 64), (66, 69), (71, u32::MAX)]
        );
        assert_eq!(close_ranges(vec![]), [(0, u32::MAX)]);
    }

    #[test]
    fn without_a_cgroup_the_address_space_and_process_count_are_the_limits() {
        let limits = ResourceLimits {
            memory_bytes: 256 << 20,
            pids: 32,
            ..ResourceLimits::default()
        };
        let by_rlimit = resource_limits(&limits, true);
        assert!(by_rlimit.contains(&(libc::RLIMIT_AS, 256 << 20, 256 << 20)));
        assert!(by_rlimit.contains(&(libc::RLIMIT_NPROC, 32, 32)));
        let by_cgroup = resource_limits(&limits, false);
        assert!(
            by_cgroup
                .iter()
                .all(|&(resource, ..)| resource != libc::RLIMIT_NPROC)
        );
        assert!(by_cgroup.contains(&(
            libc::RLIMIT_AS,
            limits.address_space_bytes(),
            limits.address_space_bytes()
        )));
    }
}
