//! Isolating and starting a test child: what the supervisor may do (probed once at start),
//! a loaded program, memory files on descriptors out of the tests' way, and the child's steps
//! from fork to exec.

use std::ffi::{CString, c_char};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Instant;

use crate::HIGH_DESCRIPTOR;
use crate::exec_protocol::{ProgramSpec, RunSpec};
use crate::sys;

/// What the supervisor may do for each test, found once at start-up.
pub(crate) struct Isolation {
    /// The supervisor holds capabilities to drop (it was started as a supervisor).
    pub(crate) capabilities: bool,
    /// The uid and gid programs run as (1 where a second id is mapped, else 0).
    pub(crate) program_id: u32,
    /// Its own PID namespace, to come back to after each fork; `None` when tests cannot get
    /// their own (then everything else is killed after each test).
    pub(crate) pid_namespace: Option<OwnedFd>,
    /// Its PID namespace's `ns_last_pid`, open for writing, when the sandbox gave it
    /// ([`LAST_PID_DESCRIPTOR`]) and writing it works.
    last_pid: Option<File>,
}

/// Where the sandbox leaves a supervisor's `ns_last_pid` (docs/sandbox.md).
const LAST_PID_DESCRIPTOR: RawFd = 63;
/// Every test child's PID in the sandbox's namespace (what `/proc/self` names) is the one after,
/// as the Python runner's (`runner/isolation.py`, `FIRST_TEST_PID`).
const FIRST_TEST_PID: &[u8] = b"100";

impl Isolation {
    /// Makes the next process (or thread) of the sandbox's PID namespace get the PID after
    /// [`FIRST_TEST_PID`] (or the first free one after it), whatever ran before: no test can
    /// read in its PID how many came before it, or leave the next one a number.
    pub(crate) fn reset_next_pid(&self) {
        if let Some(last_pid) = &self.last_pid {
            use std::os::unix::fs::FileExt;
            let _ = last_pid.write_at(FIRST_TEST_PID, 0);
        }
    }

    /// Before a test of a warm program whose PID namespace is `namespace`: its next thread (the
    /// test's) gets the same ids as the first test's thread did, in the sandbox's namespace
    /// (the first free one after [`FIRST_TEST_PID`]) and in the program's own (its lowest free
    /// one), whatever threads earlier tests started.
    ///
    /// The program's own namespace has its own `ns_last_pid`, which only a process of that
    /// namespace can write: a child forked into it writes it and exits. That child's id in the
    /// sandbox's namespace is the first free one there, so it also shows whether a thread an
    /// earlier test ended still holds its id (the kernel frees an exiting thread's ids a moment
    /// after it leaves the thread count): then it tries again shortly, for at most
    /// [`THREAD_ID_WAIT`]. `first` is the first test's child's id, recorded then.
    pub(crate) fn reset_thread_ids(&self, namespace: Option<&OwnedFd>, first: &mut Option<i32>) {
        let (Some(namespace), Some(own), Some(last_pid)) =
            (namespace, &self.pid_namespace, &self.last_pid)
        else {
            self.reset_next_pid();
            return;
        };
        let started = Instant::now();
        loop {
            self.reset_next_pid();
            let probed = probe_thread_ids(namespace, own, last_pid);
            self.reset_next_pid();
            let Ok(Some(id)) = probed else {
                return;
            };
            match first {
                Some(expected) if id > *expected && started.elapsed() < THREAD_ID_WAIT => {
                    std::thread::sleep(std::time::Duration::from_micros(100));
                }
                Some(expected) if id > *expected => return,
                _ => {
                    *first = Some(id);
                    return;
                }
            }
        }
    }
}

/// How long a warm test may wait for the ids of the threads earlier tests ended.
const THREAD_ID_WAIT: std::time::Duration = std::time::Duration::from_millis(20);
/// What a warm program's own namespace's `ns_last_pid` is set to: its next thread gets the
/// lowest free id there.
const NESTED_LAST_PID: &[u8] = b"0";

/// Forks a child into `namespace` that resets that namespace's next id and exits: the child's
/// id in the sandbox's namespace, or `None` when it could not write.
fn probe_thread_ids(
    namespace: &OwnedFd,
    own: &OwnedFd,
    last_pid: &File,
) -> io::Result<Option<i32>> {
    sys::enter_pid_namespace(namespace.as_raw_fd())?;
    let forked = sys::fork_process();
    if let Ok(0) = forked {
        sys::child::write_last_pid_and_exit(last_pid.as_raw_fd(), NESTED_LAST_PID);
    }
    sys::enter_pid_namespace(own.as_raw_fd())?;
    let pid = forked?;
    let (_, status, _) =
        sys::wait_for(pid, 0)?.ok_or_else(|| io::Error::other("the probe vanished"))?;
    Ok((status == 1 << 8).then_some(pid))
}

/// The sandbox's `ns_last_pid` descriptor moved out of the tests' way, when it works.
fn adopt_last_pid() -> Option<File> {
    if !sys::descriptor_is_open(LAST_PID_DESCRIPTOR) {
        return None;
    }
    let moved = sys::duplicate_at_least(LAST_PID_DESCRIPTOR, HIGH_DESCRIPTOR).ok();
    sys::close_descriptor(LAST_PID_DESCRIPTOR);
    // SAFETY: a fresh descriptor we own.
    let file = File::from(unsafe { OwnedFd::from_raw_fd(moved?) });
    use std::os::unix::fs::FileExt;
    file.write_at(FIRST_TEST_PID, 0).ok().map(|_| file)
}

fn effective_capabilities() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("CapEff:"))
                .and_then(|value| u64::from_str_radix(value.trim(), 16).ok())
        })
        .unwrap_or(0)
}

fn second_id_mapped() -> bool {
    std::fs::read_to_string("/proc/self/uid_map").is_ok_and(|map| {
        map.lines()
            .any(|line| line.split_whitespace().next() == Some("1"))
    })
}

pub(crate) fn probe_isolation() -> Isolation {
    let capabilities = effective_capabilities() != 0;
    let mut isolation = Isolation {
        capabilities,
        program_id: if capabilities && second_id_mapped() {
            1
        } else {
            0
        },
        pid_namespace: None,
        last_pid: None,
    };
    if !capabilities {
        return isolation;
    }
    isolation.last_pid = adopt_last_pid();
    let Ok(own) = File::open("/proc/self/ns/pid") else {
        return isolation;
    };
    let Ok(own) = high(OwnedFd::from(own)) else {
        return isolation;
    };
    if sys::unshare_pid_namespace().is_ok() && sys::enter_pid_namespace(own.as_raw_fd()).is_ok() {
        isolation.pid_namespace = Some(own);
    }
    isolation
}

fn high(fd: OwnedFd) -> io::Result<OwnedFd> {
    let moved = sys::duplicate_at_least(fd.as_raw_fd(), HIGH_DESCRIPTOR)?;
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(moved) })
}

pub(crate) fn owned(fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: a fresh descriptor returned by a call that created it.
    high(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub(crate) fn memory_file(
    name: &std::ffi::CStr,
    contents: &[u8],
    sealed: bool,
) -> io::Result<OwnedFd> {
    let fd = owned(sys::memory_file(name, sealed)?)?;
    let mut file = File::from(fd);
    std::io::Write::write_all(&mut file, contents)?;
    file.seek(SeekFrom::Start(0))?;
    if sealed {
        sys::seal(file.as_raw_fd())?;
    }
    Ok(OwnedFd::from(file))
}

fn c_strings(items: &[Vec<u8>]) -> io::Result<Vec<CString>> {
    items
        .iter()
        .map(|item| {
            CString::new(item.clone())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a NUL byte in a string"))
        })
        .collect()
}

/// A loaded program: everything the child needs, built once per job.
pub(crate) struct Program {
    image: Option<OwnedFd>,
    path: CString,
    arguments: Vec<CString>,
    environment: Vec<CString>,
    files: Vec<OwnedFd>,
    pub(crate) persistent: bool,
}

impl Program {
    pub(crate) fn load(spec: ProgramSpec) -> io::Result<Self> {
        let image = if spec.image.is_empty() {
            None
        } else {
            Some(memory_file(c"program", &spec.image, true)?)
        };
        let files = spec
            .files
            .iter()
            .map(|contents| memory_file(c"file", contents, true))
            .collect::<io::Result<Vec<_>>>()?;
        let arguments = c_strings(&spec.arguments)?;
        if arguments.is_empty() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty argv"));
        }
        Ok(Self {
            image,
            path: CString::new(spec.path)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a NUL byte in a path"))?,
            arguments,
            environment: c_strings(&spec.environment)?,
            files,
            persistent: spec.persistent,
        })
    }
}

/// Steps of the child, one a line, as reported when one fails (`child::fail` reports the
/// step's line): the one list of a test child's steps, which the Python runner follows too
/// (rlvr-sandbox's `test_child`), then the exec.
const STEPS: &str = concat!(
    include_str!("../../rlvr-sandbox/src/test_child_steps.txt"),
    "execve\n"
);

/// In the forked child: isolate, then exec the program. Never returns.
fn become_program(
    isolation: &Isolation,
    program: &Program,
    pointers: (&[*const c_char], &[*const c_char]),
    streams: [RawFd; 3],
    extra: &[RawFd],
    report: RawFd,
    spec: &RunSpec,
) -> ! {
    use sys::child;
    // 1. A session of its own: no signal reaches the supervisor's process group.
    if !child::new_session() {
        child::fail(report, 0);
    }
    if isolation.capabilities {
        // 2. Executing anything as uid 0 can no longer grant capabilities.
        if !child::lock_no_root() {
            child::fail(report, 1);
        }
        // 3. The program uid where a second id is mapped (the supervisor keeps uid 0).
        if isolation.program_id != 0 && !child::become_id(isolation.program_id) {
            child::fail(report, 2);
        }
        // 4. No capability left: the namespace calls the supervisor's seccomp filter lets
        //    through now fail with EPERM.
        if !child::drop_capabilities() {
            child::fail(report, 3);
        }
    }
    // 5. Fresh memory files on 0, 1, 2; the program's files on 3, 4, ... (then a warm
    //    program's control and result pipes); every other descriptor closes at exec.
    for (target, &source) in streams.iter().enumerate() {
        if !child::move_descriptor(source, target as RawFd) {
            child::fail(report, 4);
        }
    }
    let files = program
        .files
        .iter()
        .map(AsRawFd::as_raw_fd)
        .chain(extra.iter().copied());
    let mut next = 3;
    for source in files {
        if !child::move_descriptor(source, next) {
            child::fail(report, 4);
        }
        next += 1;
    }
    if !child::close_on_exec_from(next) {
        child::fail(report, 4);
    }
    // 6. Default signal dispositions and an empty mask.
    if !child::reset_signals() {
        child::fail(report, 5);
    }
    // 7. Limits: CPU (the hard limit one second above kills), output (writes past the cap
    //    fail), address space, no core files.
    let mut limited = child::limit(sys::RLIMIT_CORE, 0, 0);
    if spec.cpu_seconds > 0 {
        limited &= child::limit(sys::RLIMIT_CPU, spec.cpu_seconds, spec.cpu_seconds + 1);
    }
    if spec.output_bytes > 0 {
        limited &= child::limit(sys::RLIMIT_FSIZE, spec.output_bytes, spec.output_bytes);
    }
    if spec.address_space_bytes > 0 {
        limited &= child::limit(
            sys::RLIMIT_AS,
            spec.address_space_bytes,
            spec.address_space_bytes,
        );
    }
    if spec.data_bytes > 0 {
        limited &= child::limit(sys::RLIMIT_DATA, spec.data_bytes, spec.data_bytes);
    }
    if !limited {
        child::fail(report, 6);
    }
    // 8. The program.
    match &program.image {
        Some(image) => child::execute_image(image.as_raw_fd(), pointers.0, pointers.1),
        None => child::execute_path(program.path.as_ptr(), pointers.0, pointers.1),
    }
    child::fail(report, 7)
}

pub(crate) fn read_memory_file(file: &mut File, cap: u64) -> io::Result<(Vec<u8>, bool)> {
    let size = file.metadata()?.len();
    file.seek(SeekFrom::Start(0))?;
    let mut data = Vec::with_capacity(size.min(cap) as usize);
    file.take(cap).read_to_end(&mut data)?;
    Ok((data, size >= cap))
}

/// A test child forked and isolated (it execs the program): its pid, when it started, and the
/// pipe on which a failure before the exec is reported (end of file once it exec'd).
pub(crate) struct Spawned {
    pub(crate) pid: i32,
    pub(crate) started: Instant,
    pub(crate) failures: OwnedFd,
}

/// Unshares a fresh PID namespace, forks, and in the child becomes the program
/// ([`become_program`]); the parent goes back to its own PID namespace.
pub(crate) fn spawn_isolated(
    isolation: &Isolation,
    program: &Program,
    streams: [RawFd; 3],
    extra: &[RawFd],
    spec: &RunSpec,
) -> io::Result<Spawned> {
    let (report_read, report_write) = sys::pipe()?;
    let (report_read, report_write) = (owned(report_read)?, owned(report_write)?);
    let arguments: Vec<*const c_char> = program
        .arguments
        .iter()
        .map(|argument| argument.as_ptr())
        .chain([std::ptr::null()])
        .collect();
    let environment: Vec<*const c_char> = program
        .environment
        .iter()
        .map(|variable| variable.as_ptr())
        .chain([std::ptr::null()])
        .collect();
    isolation.reset_next_pid();
    if isolation.pid_namespace.is_some() {
        sys::unshare_pid_namespace()?;
    }
    let started = Instant::now();
    let forked = sys::fork_process();
    if let Ok(0) = forked {
        become_program(
            isolation,
            program,
            (&arguments, &environment),
            streams,
            extra,
            report_write.as_raw_fd(),
            spec,
        );
    }
    if let Some(own) = &isolation.pid_namespace {
        sys::enter_pid_namespace(own.as_raw_fd())?;
    }
    let pid = forked?;
    drop(report_write);
    Ok(Spawned {
        pid,
        started,
        failures: report_read,
    })
}

/// What a child reported before its exec, as the message of a run report.
pub(crate) fn startup_failure(failures: OwnedFd) -> io::Result<Option<Vec<u8>>> {
    let mut failure = Vec::new();
    File::from(failures).read_to_end(&mut failure)?;
    if failure.len() < 5 {
        return Ok(None);
    }
    let step = STEPS.lines().nth(usize::from(failure[0])).unwrap_or("?");
    let errno = i32::from_le_bytes([failure[1], failure[2], failure[3], failure[4]]);
    Ok(Some(
        format!(
            "the test could not start: {step} failed ({})",
            io::Error::from_raw_os_error(errno)
        )
        .into_bytes(),
    ))
}
