//! The exec supervisor: a small warm process inside the sandbox that runs a job's compiled
//! program (or an interpreter such as `node`) once per test, each test in a child isolated the
//! way the Python runner isolates its test children (docs/languages.md, docs/sandbox.md).
//!
//! The sandbox starts it as a supervisor (uid 0 of its own user namespace with a few
//! capabilities). For every test it unshares a fresh PID namespace and forks; the child starts
//! a session of its own, locks SECBIT_NOROOT, takes the program uid where a second id is mapped,
//! empties its capability sets, puts fresh memory files on descriptors 0, 1 and 2, sets its
//! rlimits and execs the program. A fork of this process costs a fraction of a fork of the
//! Python runner (no interpreter heap to copy or fault in), which is what makes a compiled test
//! cheaper than a Python one.
//!
//! Built by `build.rs` with the toolchain's `rustc` alone (std, no crates, statically linked) and
//! embedded in `rlvr-languages`; it speaks `src/exec_protocol.rs`, included below.

#![allow(unsafe_code)]

#[path = "../src/exec_protocol.rs"]
#[allow(dead_code)]
mod exec_protocol;

use std::ffi::{CString, c_char};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Instant;

use exec_protocol::{Decoder, ProgramSpec, RunReport, RunSpec, ending, operation};

/// The descriptors the supervisor keeps for itself start here (a test's targets stay below).
const HIGH_DESCRIPTOR: RawFd = 100;
/// At most this much of a test's standard error is reported.
const STDERR_CAP: u64 = 64 << 10;
/// Where programs run and what the judge empties after each test.
const WORK_DIRECTORY: &str = "/tmp";
/// How often (ms) the output's size is checked against its cap while a test runs.
const OUTPUT_CHECK_MS: u128 = 20;
/// Exit status of a child that failed before its program started.
const NOT_STARTED_STATUS: i32 = 127;

/// Raw system calls and libc functions, each used as documented in its man page.
mod sys {
    use std::ffi::c_char;
    use std::io;
    use std::os::fd::RawFd;

    pub const CLONE_NEWPID: i32 = 0x2000_0000;
    pub const PR_SET_DUMPABLE: i32 = 4;
    pub const PR_SET_SECUREBITS: i32 = 28;
    /// SECBIT_NOROOT, its lock, SECBIT_NO_CAP_AMBIENT_RAISE and its lock.
    pub const LOCKED_SECURE_BITS: u64 = 0x01 | 0x02 | 0x40 | 0x80;
    pub const RLIMIT_CPU: i32 = 0;
    pub const RLIMIT_FSIZE: i32 = 1;
    pub const RLIMIT_DATA: i32 = 2;
    pub const RLIMIT_CORE: i32 = 4;
    pub const RLIMIT_AS: i32 = 9;
    pub const SIGKILL: i32 = 9;
    pub const SIGXCPU: i32 = 24;
    pub const WNOHANG: i32 = 1;
    pub const AT_EMPTY_PATH: i32 = 0x1000;
    pub const CLOSE_RANGE_CLOEXEC: u32 = 4;
    pub const MFD_CLOEXEC: u32 = 1;
    pub const MFD_ALLOW_SEALING: u32 = 2;
    pub const F_DUPFD_CLOEXEC: i32 = 1030;
    pub const F_ADD_SEALS: i32 = 1033;
    /// F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE.
    pub const ALL_SEALS: i32 = 0x1 | 0x2 | 0x4 | 0x8;
    pub const O_CLOEXEC: i32 = 0o2_000_000;
    pub const POLLIN: i16 = 1;
    #[cfg(target_arch = "x86_64")]
    const SYS_CAPSET: i64 = 126;
    #[cfg(target_arch = "aarch64")]
    const SYS_CAPSET: i64 = 91;
    #[cfg(target_arch = "x86_64")]
    const SYS_EXECVEAT: i64 = 322;
    #[cfg(target_arch = "aarch64")]
    const SYS_EXECVEAT: i64 = 281;
    const SYS_PIDFD_OPEN: i64 = 434;
    const SYS_CLOSE_RANGE: i64 = 436;
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

    #[repr(C)]
    pub struct Rlimit {
        pub current: u64,
        pub maximum: u64,
    }

    #[repr(C)]
    #[derive(Default)]
    pub struct Timeval {
        pub seconds: i64,
        pub microseconds: i64,
    }

    #[repr(C)]
    #[derive(Default)]
    pub struct Rusage {
        pub user: Timeval,
        pub system: Timeval,
        /// ru_maxrss first, then the other thirteen counters.
        pub counters: [i64; 14],
    }

    #[repr(C)]
    pub struct PollDescriptor {
        pub fd: i32,
        pub events: i16,
        pub returned: i16,
    }

    #[repr(C)]
    struct CapabilityHeader {
        version: u32,
        pid: i32,
    }

    #[repr(C)]
    #[derive(Default, Clone, Copy)]
    struct CapabilityData {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }

    unsafe extern "C" {
        fn syscall(number: i64, ...) -> i64;
        fn prctl(option: i32, argument2: u64, argument3: u64, argument4: u64, argument5: u64)
        -> i32;
        fn unshare(flags: i32) -> i32;
        fn setns(fd: i32, kind: i32) -> i32;
        fn setsid() -> i32;
        fn setgroups(count: usize, groups: *const u32) -> i32;
        fn setresuid(real: u32, effective: u32, saved: u32) -> i32;
        fn setresgid(real: u32, effective: u32, saved: u32) -> i32;
        fn setrlimit(resource: i32, limit: *const Rlimit) -> i32;
        fn fork() -> i32;
        fn execve(path: *const c_char, arguments: *const *const c_char, environment: *const *const c_char)
        -> i32;
        fn dup2(old: i32, new: i32) -> i32;
        fn fcntl(fd: i32, command: i32, ...) -> i32;
        fn pipe2(fds: *mut i32, flags: i32) -> i32;
        fn memfd_create(name: *const c_char, flags: u32) -> i32;
        fn poll(fds: *mut PollDescriptor, count: u64, timeout: i32) -> i32;
        fn wait4(pid: i32, status: *mut i32, options: i32, usage: *mut Rusage) -> i32;
        fn kill(pid: i32, signal: i32) -> i32;
        fn signal(number: i32, handler: usize) -> usize;
        fn sigprocmask(how: i32, set: *const [u64; 16], old: *mut [u64; 16]) -> i32;
        fn getpid() -> i32;
        fn write(fd: i32, buffer: *const u8, count: usize) -> isize;
        fn _exit(status: i32) -> !;
        fn listxattr(path: *const c_char, list: *mut u8, size: usize) -> isize;
        fn removexattr(path: *const c_char, name: *const c_char) -> i32;
        fn __errno_location() -> *mut i32;
    }

    /// errno of the last failed call (async-signal-safe: a thread-local read).
    pub fn errno() -> i32 {
        // SAFETY: glibc's errno location is valid for the calling thread's lifetime.
        unsafe { *__errno_location() }
    }

    fn check(result: i64) -> io::Result<i64> {
        if result < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(result)
        }
    }

    pub fn set_dumpable(dumpable: bool) -> io::Result<()> {
        // SAFETY: prctl(PR_SET_DUMPABLE) takes integer arguments only.
        check(i64::from(unsafe { prctl(PR_SET_DUMPABLE, u64::from(dumpable), 0, 0, 0) }))
            .map(drop)
    }

    pub fn unshare_pid_namespace() -> io::Result<()> {
        // SAFETY: integer argument only.
        check(i64::from(unsafe { unshare(CLONE_NEWPID) })).map(drop)
    }

    pub fn enter_pid_namespace(fd: RawFd) -> io::Result<()> {
        // SAFETY: integer arguments only; a bad descriptor is an error return.
        check(i64::from(unsafe { setns(fd, CLONE_NEWPID) })).map(drop)
    }

    /// `fork()`: the child gets `Ok(0)`. This process is single-threaded, so the child may
    /// call anything; it still calls only what is listed in `child::become_program`.
    pub fn fork_process() -> io::Result<i32> {
        // SAFETY: no other thread exists in this process.
        check(i64::from(unsafe { fork() })).map(|pid| pid as i32)
    }

    pub fn pidfd_open(pid: i32) -> io::Result<RawFd> {
        // SAFETY: integer arguments only.
        check(unsafe { syscall(SYS_PIDFD_OPEN, i64::from(pid), 0i64) }).map(|fd| fd as RawFd)
    }

    /// Waits up to `timeout_ms` for `fd` to become readable; false on timeout.
    pub fn wait_readable(fd: RawFd, timeout_ms: i32) -> io::Result<bool> {
        let mut descriptor = PollDescriptor {
            fd,
            events: POLLIN,
            returned: 0,
        };
        loop {
            // SAFETY: one valid pollfd.
            let ready = unsafe { poll(&mut descriptor, 1, timeout_ms) };
            if ready >= 0 {
                return Ok(ready > 0);
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }

    /// Waits for `pid` (any child with -1); `WNOHANG` in `options` may give `Ok(None)`.
    pub fn wait_for(pid: i32, options: i32) -> io::Result<Option<(i32, i32, Rusage)>> {
        let mut status = 0;
        let mut usage = Rusage::default();
        loop {
            // SAFETY: valid pointers to a status word and a rusage.
            let result = unsafe { wait4(pid, &mut status, options, &mut usage) };
            if result > 0 {
                return Ok(Some((result, status, usage)));
            }
            if result == 0 {
                return Ok(None);
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }

    /// Sets the effective uid and gid (the real and saved ones stay): capabilities leave the
    /// effective set while the effective uid is not 0 and come back from the permitted set when
    /// it is 0 again (capabilities(7)).
    pub fn set_effective_ids(id: u32) -> bool {
        const UNCHANGED: u32 = u32::MAX;
        // SAFETY: integer arguments only.
        unsafe {
            if id == 0 {
                setresuid(UNCHANGED, 0, UNCHANGED) == 0 && setresgid(UNCHANGED, 0, UNCHANGED) == 0
            } else {
                setresgid(UNCHANGED, id, UNCHANGED) == 0 && setresuid(UNCHANGED, id, UNCHANGED) == 0
            }
        }
    }

    pub fn send_signal(pid: i32, number: i32) -> bool {
        // SAFETY: integer arguments only.
        unsafe { kill(pid, number) == 0 }
    }

    pub fn process_id() -> i32 {
        // SAFETY: no arguments.
        unsafe { getpid() }
    }

    pub fn pipe() -> io::Result<(RawFd, RawFd)> {
        let mut fds = [0i32; 2];
        // SAFETY: fds has room for two descriptors.
        check(i64::from(unsafe { pipe2(fds.as_mut_ptr(), O_CLOEXEC) }))?;
        Ok((fds[0], fds[1]))
    }

    pub fn memory_file(name: &std::ffi::CStr, sealable: bool) -> io::Result<RawFd> {
        let flags = MFD_CLOEXEC | if sealable { MFD_ALLOW_SEALING } else { 0 };
        // SAFETY: a NUL-terminated name.
        check(i64::from(unsafe { memfd_create(name.as_ptr(), flags) })).map(|fd| fd as RawFd)
    }

    pub fn seal(fd: RawFd) -> io::Result<()> {
        // SAFETY: integer arguments only.
        check(i64::from(unsafe { fcntl(fd, F_ADD_SEALS, ALL_SEALS) })).map(drop)
    }

    /// Duplicates `fd` to the lowest free descriptor >= `minimum`, close-on-exec.
    pub fn duplicate_at_least(fd: RawFd, minimum: RawFd) -> io::Result<RawFd> {
        // SAFETY: integer arguments only.
        check(i64::from(unsafe { fcntl(fd, F_DUPFD_CLOEXEC, minimum) })).map(|fd| fd as RawFd)
    }

    pub fn duplicate_onto(old: RawFd, new: RawFd) -> io::Result<()> {
        // SAFETY: integer arguments only.
        check(i64::from(unsafe { dup2(old, new) })).map(drop)
    }

    pub fn list_extended_attributes(path: &std::ffi::CStr) -> io::Result<Vec<u8>> {
        let mut buffer = vec![0u8; 64 << 10];
        // SAFETY: the buffer is valid for its length.
        let size = unsafe { listxattr(path.as_ptr(), buffer.as_mut_ptr(), buffer.len()) };
        if size < 0 {
            return Err(io::Error::last_os_error());
        }
        buffer.truncate(size as usize);
        Ok(buffer)
    }

    pub fn remove_extended_attribute(path: &std::ffi::CStr, name: &std::ffi::CStr) -> io::Result<()> {
        // SAFETY: two NUL-terminated strings.
        check(i64::from(unsafe { removexattr(path.as_ptr(), name.as_ptr()) })).map(drop)
    }

    /// The calls the test child makes between fork and exec. Everything they touch was built
    /// before the fork; each failure is reported as (step, errno) on the report pipe.
    pub mod child {
        use super::*;

        /// Writes `(step, errno)` to the report pipe and exits without running the program.
        pub fn fail(report: RawFd, step: u8) -> ! {
            let error = errno();
            let mut message = [0u8; 5];
            message[0] = step;
            message[1..].copy_from_slice(&error.to_le_bytes());
            // SAFETY: a valid buffer; the pipe is ours; _exit never returns.
            unsafe {
                let _ = write(report, message.as_ptr(), message.len());
                _exit(super::super::NOT_STARTED_STATUS)
            }
        }

        pub fn new_session() -> bool {
            // SAFETY: no arguments.
            unsafe { setsid() >= 0 }
        }

        pub fn lock_no_root() -> bool {
            // SAFETY: integer arguments only.
            unsafe { prctl(PR_SET_SECUREBITS, LOCKED_SECURE_BITS, 0, 0, 0) == 0 }
        }

        /// Drops supplementary groups where the namespace allows it (an unprivileged map
        /// without newgidmap denies setgroups: then there are none that matter), then takes
        /// `id` as every uid and gid.
        pub fn become_id(id: u32) -> bool {
            // SAFETY: zero groups, a null list; then integer arguments only.
            unsafe {
                let _ = setgroups(0, std::ptr::null());
                setresgid(id, id, id) == 0 && setresuid(id, id, id) == 0
            }
        }

        pub fn drop_capabilities() -> bool {
            let header = CapabilityHeader {
                version: LINUX_CAPABILITY_VERSION_3,
                pid: 0,
            };
            let data = [CapabilityData::default(); 2];
            // SAFETY: a v3 header and two data structs, as capset(2) requires.
            unsafe { syscall(SYS_CAPSET, &header as *const CapabilityHeader, data.as_ptr()) == 0 }
        }

        pub fn move_descriptor(old: RawFd, new: RawFd) -> bool {
            // SAFETY: integer arguments only.
            unsafe { dup2(old, new) == new }
        }

        /// Marks every descriptor from `first` up close-on-exec (the report pipe and the
        /// program image stay usable until the exec closes them).
        pub fn close_on_exec_from(first: RawFd) -> bool {
            // SAFETY: integer arguments only.
            unsafe {
                syscall(
                    SYS_CLOSE_RANGE,
                    i64::from(first),
                    i64::from(u32::MAX),
                    i64::from(CLOSE_RANGE_CLOEXEC),
                ) == 0
            }
        }

        /// Default dispositions for every signal (Rust's runtime ignores SIGPIPE, and an
        /// ignored signal stays ignored across exec) and an empty mask.
        pub fn reset_signals() -> bool {
            // SAFETY: SIG_DFL (0) for each number; an all-zero set for the mask.
            unsafe {
                for number in 1..=64 {
                    if number != SIGKILL && number != 19 {
                        signal(number, 0);
                    }
                }
                let empty = [0u64; 16];
                sigprocmask(2, &empty, std::ptr::null_mut()) == 0
            }
        }

        pub fn limit(resource: i32, current: u64, maximum: u64) -> bool {
            let limit = Rlimit { current, maximum };
            // SAFETY: a valid rlimit.
            unsafe { setrlimit(resource, &limit) == 0 }
        }

        /// Execs the sealed image in `image` (its descriptor is close-on-exec: after the
        /// exec the program holds nothing but 0, 1, 2 and its files).
        pub fn execute_image(image: RawFd, arguments: &[*const c_char], environment: &[*const c_char]) {
            // SAFETY: NUL-terminated argument and environment vectors built before the fork.
            unsafe {
                syscall(
                    SYS_EXECVEAT,
                    i64::from(image),
                    c"".as_ptr(),
                    arguments.as_ptr(),
                    environment.as_ptr(),
                    i64::from(AT_EMPTY_PATH),
                );
            }
        }

        pub fn execute_path(path: *const c_char, arguments: &[*const c_char], environment: &[*const c_char]) {
            // SAFETY: as above.
            unsafe {
                execve(path, arguments.as_ptr(), environment.as_ptr());
            }
        }
    }
}

/// What the supervisor may do for each test, found once at start-up.
struct Isolation {
    /// The supervisor holds capabilities to drop (it was started as a supervisor).
    capabilities: bool,
    /// The uid and gid programs run as (1 where a second id is mapped, else 0).
    program_id: u32,
    /// Its own PID namespace, to come back to after each fork; `None` when tests cannot get
    /// their own (then everything else is killed after each test).
    pid_namespace: Option<OwnedFd>,
    /// The work directory's mode at start-up.
    work_mode: u32,
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

fn probe_isolation() -> Isolation {
    let capabilities = effective_capabilities() != 0;
    let mut isolation = Isolation {
        capabilities,
        program_id: if capabilities && second_id_mapped() { 1 } else { 0 },
        pid_namespace: None,
        work_mode: work_directory_mode(),
    };
    if !capabilities {
        return isolation;
    }
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

fn owned(fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: a fresh descriptor returned by a call that created it.
    high(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn memory_file(name: &std::ffi::CStr, contents: &[u8], sealed: bool) -> io::Result<OwnedFd> {
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
struct Program {
    image: Option<OwnedFd>,
    path: CString,
    arguments: Vec<CString>,
    environment: Vec<CString>,
    files: Vec<OwnedFd>,
    persistent: bool,
}

impl Program {
    fn load(spec: ProgramSpec) -> io::Result<Self> {
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

/// Steps of the child, as reported when one fails.
const STEPS: [&str; 9] = [
    "setsid",
    "lock SECBIT_NOROOT",
    "take the program uid",
    "drop capabilities",
    "set up descriptors",
    "reset signals",
    "set rlimits",
    "exec",
    "fork",
];

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
    let files = program.files.iter().map(AsRawFd::as_raw_fd).chain(extra.iter().copied());
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

fn read_memory_file(file: &mut File, cap: u64) -> io::Result<(Vec<u8>, bool)> {
    let size = file.metadata()?.len();
    file.seek(SeekFrom::Start(0))?;
    let mut data = Vec::with_capacity(size.min(cap) as usize);
    file.take(cap).read_to_end(&mut data)?;
    Ok((data, size >= cap))
}

/// Reaps every exited child; when tests share this PID namespace, kills what is left first.
fn reap_everything(nested: bool) {
    if !nested && sys::process_id() == 1 {
        sys::send_signal(-1, sys::SIGKILL);
    }
    loop {
        match sys::wait_for(-1, if nested { sys::WNOHANG } else { 0 }) {
            Ok(Some(_)) => continue,
            _ => return,
        }
    }
}

/// A test child forked and isolated (it execs the program): its pid, when it started, and the
/// pipe on which a failure before the exec is reported (end of file once it exec'd).
struct Spawned {
    pid: i32,
    started: Instant,
    failures: OwnedFd,
}

/// Unshares a fresh PID namespace, forks, and in the child becomes the program
/// ([`become_program`]); the parent goes back to its own PID namespace.
fn spawn_isolated(
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
fn startup_failure(failures: OwnedFd) -> io::Result<Option<Vec<u8>>> {
    let mut failure = Vec::new();
    File::from(failures).read_to_end(&mut failure)?;
    if failure.len() < 5 {
        return Ok(None);
    }
    let step = STEPS.get(usize::from(failure[0])).copied().unwrap_or("?");
    let errno = i32::from_le_bytes([failure[1], failure[2], failure[3], failure[4]]);
    Ok(Some(
        format!(
            "the test could not start: {step} failed ({})",
            io::Error::from_raw_os_error(errno)
        )
        .into_bytes(),
    ))
}

fn run_test(isolation: &Isolation, program: &Program, spec: &RunSpec) -> io::Result<RunReport> {
    let stdin = File::from(memory_file(c"stdin", &spec.stdin, false)?);
    let mut stdout = File::from(memory_file(c"stdout", b"", false)?);
    let mut stderr = File::from(memory_file(c"stderr", b"", false)?);
    let streams = [stdin.as_raw_fd(), stdout.as_raw_fd(), stderr.as_raw_fd()];
    // The test's own files (a checker's input, output and answer) follow the load's.
    let test_files = spec
        .files
        .iter()
        .map(|contents| memory_file(c"file", contents, true))
        .collect::<io::Result<Vec<_>>>()?;
    let extra: Vec<RawFd> = test_files.iter().map(AsRawFd::as_raw_fd).collect();
    let nested = isolation.pid_namespace.is_some();
    let Spawned {
        pid: child,
        started,
        failures,
    } = spawn_isolated(isolation, program, streams, &extra, spec)?;
    drop(test_files);
    let pidfd = owned(sys::pidfd_open(child)?)?;
    // Wait for the end, the wall clock, or the output cap: a program whose writes fail at the
    // cap (RLIMIT_FSIZE) may go on looping, and the cap is its verdict, reached now (as the
    // sandbox kills a Python program's tree the moment a stream passes its cap).
    let deadline = started + std::time::Duration::from_millis(spec.wall_ms.max(1));
    let mut timed_out = false;
    let mut output_capped = false;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            timed_out = true;
            break;
        }
        let slice = i32::try_from(left.as_millis().clamp(1, OUTPUT_CHECK_MS)).unwrap_or(1);
        if sys::wait_readable(pidfd.as_raw_fd(), slice)? {
            break;
        }
        if spec.output_bytes > 0 && stdout.metadata()?.len() >= spec.output_bytes {
            output_capped = true;
            break;
        }
    }
    if timed_out || output_capped {
        // The child is init of its PID namespace: killing it kills everything it started.
        sys::send_signal(child, sys::SIGKILL);
    }
    let (_, status, usage) = sys::wait_for(child, 0)?
        .ok_or_else(|| io::Error::other("the test child vanished"))?;
    let wall = started.elapsed();
    reap_everything(nested);
    let mut report = RunReport {
        wall_us: u64::try_from(wall.as_micros()).unwrap_or(u64::MAX),
        cpu_us: ((usage.user.seconds + usage.system.seconds) * 1_000_000
            + usage.user.microseconds
            + usage.system.microseconds)
            .max(0) as u64,
        max_resident_kib: usage.counters[0].max(0) as u64,
        ..RunReport::default()
    };
    let exited = status & 0x7f == 0;
    let signal = status & 0x7f;
    if let Some(message) = startup_failure(failures)? {
        report.ending = ending::NOT_STARTED;
        report.message = message;
    } else if exited {
        report.ending = ending::EXITED;
        report.exit_code = i64::from((status >> 8) & 0xff);
    } else {
        report.ending = ending::SIGNALED;
        report.signal = i64::from(signal);
    }
    // As init of its PID namespace the child does not die of the kernel's SIGXCPU: CPU time
    // at the limit ends it with the hard limit's SIGKILL, a timeout as much as the wall clock.
    let cpu_exceeded = spec.cpu_seconds > 0
        && report.cpu_us >= spec.cpu_seconds * 1_000_000
        && (signal == sys::SIGKILL || signal == sys::SIGXCPU);
    if timed_out || (report.ending == ending::SIGNALED && cpu_exceeded && !output_capped) {
        report.ending = ending::TIMED_OUT;
    }
    let cap = if spec.output_bytes > 0 {
        spec.output_bytes
    } else {
        u64::MAX
    };
    (report.stdout, report.stdout_truncated) = read_memory_file(&mut stdout, cap)?;
    report.stderr = read_memory_file(&mut stderr, STDERR_CAP)?.0;
    if spec.empty_work_directory
        && let Err(error) = empty_work_directory(isolation.work_mode)
    {
        report.message = format!("cannot empty {WORK_DIRECTORY}: {error}").into_bytes();
    }
    Ok(report)
}

/// A warm program's process (the JVM's harness) between tests, with its reused memory files
/// and its pipes.
struct Warm {
    pid: i32,
    pidfd: OwnedFd,
    control: File,
    results: File,
    stdin: File,
    stdout: File,
    stderr: File,
    /// Its thread count once ready: more after a test means something the test started is
    /// still running (a thread the harness cannot see).
    threads: u64,
}

/// How long a warm program may take to become ready (a JVM on a loaded machine).
const WARM_START: std::time::Duration = std::time::Duration::from_secs(60);

/// `read` done as the program uid: `/proc` is mounted `hidepid=2`, so the supervisor (uid 0,
/// without `CAP_SYS_PTRACE`) does not see a program that runs as the second id. The effective
/// ids only, for the time of one read of `/proc`: the real and saved ids stay 0, so no
/// program can signal the supervisor meanwhile, and capabilities come back with uid 0.
fn as_program<T>(isolation: &Isolation, read: impl FnOnce() -> T) -> T {
    if isolation.program_id == 0 || !sys::set_effective_ids(isolation.program_id) {
        return read();
    }
    let value = read();
    if !sys::set_effective_ids(0) {
        // Without its capabilities the supervisor cannot isolate another test: stop.
        std::process::exit(3);
    }
    value
}

/// A field of `/proc/<pid>/status` (`Threads`, `VmHWM`), as a number.
fn status_field(pid: i32, name: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                line.strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix(':'))
                    .and_then(|value| value.split_whitespace().next())
                    .and_then(|value| value.parse().ok())
            })
        })
        .unwrap_or(0)
}

/// CPU time of a live process (user + system), in microseconds, from `/proc/<pid>/stat`.
fn process_cpu_us(pid: i32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    // Fields after the command name (which may hold spaces): state is field 3.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&index| fields.get(index).and_then(|value| value.parse::<u64>().ok()))
        .sum();
    // USER_HZ is 100 on Linux.
    ticks * 10_000
}

/// Whether any process of the warm program's PID namespace besides itself exists (a child it
/// started, even exited and not yet reaped).
fn has_children(pid: i32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("children"))
            .is_ok_and(|children| !children.trim().is_empty())
    })
}

/// Starts the warm program and waits for its `R`: `Ok(Err(report))` when it ended or failed
/// before being ready (that report is the test's).
fn start_warm(
    isolation: &Isolation,
    program: &Program,
    spec: &RunSpec,
) -> io::Result<Result<Warm, RunReport>> {
    let stdin = File::from(memory_file(c"stdin", b"", false)?);
    let stdout = File::from(memory_file(c"stdout", b"", false)?);
    let stderr = File::from(memory_file(c"stderr", b"", false)?);
    let (control_read, control_write) = sys::pipe()?;
    let (control_read, control) = (owned(control_read)?, File::from(owned(control_write)?));
    let (results_read, results_write) = sys::pipe()?;
    let (results, results_write) = (File::from(owned(results_read)?), owned(results_write)?);
    // The program opens its pipes by path (`/proc/self/fd/5`), which checks the pipe's own
    // mode: let the program uid open them (only its processes can name them).
    {
        use std::os::unix::fs::PermissionsExt;
        for fd in [control_read.as_raw_fd(), results_write.as_raw_fd()] {
            // SAFETY: a borrowed descriptor that stays open; the File is forgotten unclosed.
            let file = std::mem::ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
            file.set_permissions(std::fs::Permissions::from_mode(0o666))?;
        }
    }
    // No CPU limit on the process: each test's time is its wall clock (docs/languages.md).
    let limits = RunSpec {
        cpu_seconds: 0,
        ..spec.clone()
    };
    let Spawned {
        pid,
        started,
        failures,
    } = spawn_isolated(
        isolation,
        program,
        [stdin.as_raw_fd(), stdout.as_raw_fd(), stderr.as_raw_fd()],
        &[control_read.as_raw_fd(), results_write.as_raw_fd()],
        &limits,
    )?;
    drop((control_read, results_write));
    let pidfd = owned(sys::pidfd_open(pid)?)?;
    let mut warm = Warm {
        pid,
        pidfd,
        control,
        results,
        stdin,
        stdout,
        stderr,
        threads: 0,
    };
    if let Some(message) = startup_failure(failures)? {
        let _ = sys::wait_for(pid, 0);
        return Ok(Err(RunReport {
            ending: ending::NOT_STARTED,
            message,
            ..RunReport::default()
        }));
    }
    let deadline = started + WARM_START;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let timeout = i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
        if sys::wait_readable(warm.results.as_raw_fd(), timeout)? {
            let mut ready = [0u8; 1];
            if warm.results.read(&mut ready)? == 1 && ready[0] == b'R' {
                warm.threads = as_program(isolation, || status_field(pid, "Threads"));
                return Ok(Ok(warm));
            }
        }
        // It ended, or never became ready: what it printed is the test's failure.
        sys::send_signal(pid, sys::SIGKILL);
        let report = finish_warm(warm, started, spec, false, false)?;
        return Ok(Err(report));
    }
}

/// Reaps a warm program that ended (or is being killed) and reports it as the test's end.
fn finish_warm(
    mut warm: Warm,
    started: Instant,
    spec: &RunSpec,
    timed_out: bool,
    output_capped: bool,
) -> io::Result<RunReport> {
    let (_, status, usage) = sys::wait_for(warm.pid, 0)?
        .ok_or_else(|| io::Error::other("the warm program vanished"))?;
    let mut report = RunReport {
        wall_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        max_resident_kib: usage.counters[0].max(0) as u64,
        ..RunReport::default()
    };
    if timed_out {
        report.ending = ending::TIMED_OUT;
        report.signal = i64::from(sys::SIGKILL);
    } else if status & 0x7f == 0 {
        report.ending = ending::EXITED;
        report.exit_code = i64::from((status >> 8) & 0xff);
    } else {
        report.ending = ending::SIGNALED;
        report.signal = i64::from(status & 0x7f);
    }
    let cap = if spec.output_bytes > 0 {
        spec.output_bytes
    } else {
        u64::MAX
    };
    (report.stdout, report.stdout_truncated) = read_memory_file(&mut warm.stdout, cap)?;
    report.stdout_truncated |= output_capped;
    report.stderr = read_memory_file(&mut warm.stderr, STDERR_CAP)?.0;
    Ok(report)
}

/// One test of a warm program: refill its memory files, ask it to run, and wait for its
/// answer, its end, the wall clock or the output cap. It is replaced (killed now, started
/// again for the next test) when the test timed out, filled its output, ended the process
/// (`System.exit`), or left a thread or a process running.
fn run_warm(
    isolation: &Isolation,
    program: &Program,
    spec: &RunSpec,
    slot: &mut Option<Warm>,
) -> io::Result<RunReport> {
    use std::io::Write;
    use std::os::unix::fs::FileExt;
    // A process that ended between tests (a thread of its last test called `System.exit`
    // after the answer) is reaped and replaced.
    let kept = slot.take().and_then(|warm| {
        if sys::wait_readable(warm.pidfd.as_raw_fd(), 0).unwrap_or(true) {
            sys::send_signal(warm.pid, sys::SIGKILL);
            let _ = sys::wait_for(warm.pid, 0);
            None
        } else {
            Some(warm)
        }
    });
    let mut warm = match kept {
        Some(warm) => warm,
        None => match start_warm(isolation, program, spec)? {
            Ok(warm) => warm,
            Err(report) => return Ok(report),
        },
    };
    // The memory files are shared with the program (one open file each): resetting the
    // offset here resets its offset.
    warm.stdin.set_len(0)?;
    warm.stdin.write_all_at(&spec.stdin, 0)?;
    warm.stdin.seek(SeekFrom::Start(0))?;
    for file in [&mut warm.stdout, &mut warm.stderr] {
        file.set_len(0)?;
        file.seek(SeekFrom::Start(0))?;
    }
    let cpu_before = as_program(isolation, || process_cpu_us(warm.pid));
    let started = Instant::now();
    if warm.control.write_all(b"r").is_err() {
        // It ended just now: its end is this test's.
        sys::send_signal(warm.pid, sys::SIGKILL);
        return finish_warm(warm, started, spec, false, false);
    }
    let deadline = started + std::time::Duration::from_millis(spec.wall_ms.max(1));
    let mut answer = None;
    let mut timed_out = false;
    let mut output_capped = false;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            timed_out = true;
            break;
        }
        let slice = i32::try_from(left.as_millis().clamp(1, OUTPUT_CHECK_MS)).unwrap_or(1);
        if sys::wait_readable(warm.results.as_raw_fd(), slice)? {
            let mut reply = [0u8; 5];
            match warm.results.read_exact(&mut reply) {
                Ok(()) => answer = Some(reply),
                // It ended mid-answer: its exit status is the test's.
                Err(_) => {}
            }
            break;
        }
        if sys::wait_readable(warm.pidfd.as_raw_fd(), 0)? {
            break;
        }
        if spec.output_bytes > 0 && warm.stdout.metadata()?.len() >= spec.output_bytes {
            output_capped = true;
            break;
        }
    }
    let Some(reply) = answer else {
        sys::send_signal(warm.pid, sys::SIGKILL);
        return finish_warm(warm, started, spec, timed_out, output_capped);
    };
    let wall = started.elapsed();
    let status = i32::from_le_bytes([reply[0], reply[1], reply[2], reply[3]]);
    let (children, threads, cpu, resident) = as_program(isolation, || {
        (
            has_children(warm.pid),
            status_field(warm.pid, "Threads"),
            process_cpu_us(warm.pid),
            status_field(warm.pid, "VmHWM"),
        )
    });
    // What the harness says, and what the kernel says (a thread the harness cannot see, a
    // process): either way the process is replaced. A `/proc` that cannot be read (0 threads)
    // replaces it too.
    let leftover =
        reply[4] != 0 || children || threads == 0 || threads > warm.threads + LEFTOVER_THREADS;
    let mut report = RunReport {
        ending: ending::EXITED,
        exit_code: i64::from(status & 0xff),
        wall_us: u64::try_from(wall.as_micros()).unwrap_or(u64::MAX),
        cpu_us: cpu.saturating_sub(cpu_before),
        max_resident_kib: resident,
        ..RunReport::default()
    };
    if leftover {
        // Nothing of this test may run on into the next: a new process for it.
        sys::send_signal(warm.pid, sys::SIGKILL);
        let _ = sys::wait_for(warm.pid, 0);
    }
    let cap = if spec.output_bytes > 0 {
        spec.output_bytes
    } else {
        u64::MAX
    };
    (report.stdout, report.stdout_truncated) = read_memory_file(&mut warm.stdout, cap)?;
    report.stderr = read_memory_file(&mut warm.stderr, STDERR_CAP)?.0;
    if !leftover {
        *slot = Some(warm);
    }
    if spec.empty_work_directory
        && let Err(error) = empty_work_directory(isolation.work_mode)
    {
        report.message = format!("cannot empty {WORK_DIRECTORY}: {error}").into_bytes();
    }
    Ok(report)
}

/// Threads a warm JVM may add by itself between tests (its JIT compiler threads come and go).
const LEFTOVER_THREADS: u64 = 8;

/// Removes everything under the work directory, walking down and back up through `..` with
/// the current directory (no path grows with the depth, no descriptor per level: a test may
/// leave a tree deeper than PATH_MAX), then gives the directory back its mode and no extended
/// attributes. Every process that could write there is dead by now.
fn empty_work_directory(mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let work = std::path::Path::new(WORK_DIRECTORY);
    std::fs::set_permissions(work, std::fs::Permissions::from_mode(mode))?;
    std::env::set_current_dir(work)?;
    // The names of the directories walked into, from the work directory down.
    let mut path = Vec::new();
    let result = (|| -> io::Result<()> {
        loop {
            let mut subdirectory = None;
            for entry in std::fs::read_dir(".")? {
                let entry = entry?;
                if entry.file_type()?.is_dir() {
                    subdirectory = Some(entry.file_name());
                    break;
                }
                std::fs::remove_file(entry.file_name())?;
            }
            match subdirectory {
                Some(name) => {
                    std::fs::set_permissions(&name, std::fs::Permissions::from_mode(0o700))?;
                    std::env::set_current_dir(&name)?;
                    path.push(name);
                }
                None => match path.pop() {
                    None => return Ok(()),
                    Some(name) => {
                        std::env::set_current_dir("..")?;
                        std::fs::remove_dir(name)?;
                    }
                },
            }
        }
    })();
    std::env::set_current_dir(work)?;
    result?;
    let path = CString::new(WORK_DIRECTORY).map_err(io::Error::other)?;
    for name in sys::list_extended_attributes(&path)?.split(|&byte| byte == 0) {
        if !name.is_empty() {
            let name = CString::new(name).map_err(io::Error::other)?;
            sys::remove_extended_attribute(&path, &name)?;
        }
    }
    Ok(())
}

/// The work directory's mode when the supervisor started (restored after each judge test).
fn work_directory_mode() -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(WORK_DIRECTORY).map_or(0o700, |metadata| metadata.permissions().mode() & 0o7777)
}

fn main() {
    // Without this a test child sharing the supervisor's uid (one mapped id) could open
    // /proc/<pid>/mem of the supervisor, were it visible.
    let _ = sys::set_dumpable(false);
    // Requests on 0 and replies on 1, moved out of the way; 0, 1 and 2 become /dev/null.
    let (Ok(requests), Ok(replies)) = (
        sys::duplicate_at_least(0, HIGH_DESCRIPTOR),
        sys::duplicate_at_least(1, HIGH_DESCRIPTOR),
    ) else {
        std::process::exit(2);
    };
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        for target in 0..3 {
            let _ = sys::duplicate_onto(null.as_raw_fd(), target);
        }
    }
    // SAFETY: descriptors just duplicated, owned here alone.
    let (mut requests, mut replies) =
        unsafe { (File::from_raw_fd(requests), File::from_raw_fd(replies)) };
    let isolation = probe_isolation();
    let mut program: Option<Program> = None;
    let mut warm: Option<Warm> = None;
    loop {
        let mut request = match Decoder::receive(&mut requests) {
            Ok(Some(request)) => request,
            _ => return,
        };
        let reply = match request.byte() {
            Ok(operation::LOAD) => {
                if let Some(previous) = warm.take() {
                    sys::send_signal(previous.pid, sys::SIGKILL);
                    let _ = sys::wait_for(previous.pid, 0);
                }
                let loaded = ProgramSpec::decode(&mut request).and_then(Program::load);
                let problem = loaded.as_ref().err().map(ToString::to_string);
                program = loaded.ok();
                exec_protocol::encode_load_reply(problem.as_deref())
            }
            Ok(operation::RUN) => {
                let result = RunSpec::decode(&mut request).and_then(|spec| match &program {
                    Some(program) if program.persistent => {
                        run_warm(&isolation, program, &spec, &mut warm)
                    }
                    Some(program) => run_test(&isolation, program, &spec),
                    None => Err(io::Error::other("no program is loaded")),
                });
                match result {
                    Ok(report) => report.encode(),
                    // The supervisor itself failed: the client sees the connection end.
                    Err(_) => return,
                }
            }
            _ => return,
        };
        if reply.send(&mut replies).is_err() {
            return;
        }
    }
}
