//! Raw system calls and libc functions, each used as documented in its man page.

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
pub const F_GETFD: i32 = 1;
pub const F_ADD_SEALS: i32 = 1033;
/// F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE.
pub const ALL_SEALS: i32 = 0x1 | 0x2 | 0x4 | 0x8;
pub const O_CLOEXEC: i32 = 0o2_000_000;
pub const POLLIN: i16 = 1;
/// `mount` flags of a fresh work directory (the only ones the supervisor's seccomp filter
/// lets through) and `umount2`'s lazy detach.
pub const MS_NOSUID: u64 = 0x2;
pub const MS_NODEV: u64 = 0x4;
pub const MNT_DETACH: i32 = 0x2;
const AT_FDCWD: i32 = -100;
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
struct Timespec {
    seconds: i64,
    nanoseconds: i64,
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
    fn prctl(option: i32, argument2: u64, argument3: u64, argument4: u64, argument5: u64) -> i32;
    fn unshare(flags: i32) -> i32;
    fn setns(fd: i32, kind: i32) -> i32;
    fn setsid() -> i32;
    fn setgroups(count: usize, groups: *const u32) -> i32;
    fn setresuid(real: u32, effective: u32, saved: u32) -> i32;
    fn setresgid(real: u32, effective: u32, saved: u32) -> i32;
    fn setrlimit(resource: i32, limit: *const Rlimit) -> i32;
    fn fork() -> i32;
    fn execve(
        path: *const c_char,
        arguments: *const *const c_char,
        environment: *const *const c_char,
    ) -> i32;
    fn dup2(old: i32, new: i32) -> i32;
    fn close(fd: i32) -> i32;
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
    fn pwrite(fd: i32, buffer: *const u8, count: usize, offset: i64) -> isize;
    fn _exit(status: i32) -> !;
    fn listxattr(path: *const c_char, list: *mut u8, size: usize) -> isize;
    fn removexattr(path: *const c_char, name: *const c_char) -> i32;
    fn utimensat(
        directory: i32,
        path: *const c_char,
        times: *const [Timespec; 2],
        flags: i32,
    ) -> i32;
    fn mount(
        source: *const c_char,
        target: *const c_char,
        kind: *const c_char,
        flags: u64,
        data: *const c_char,
    ) -> i32;
    fn umount2(target: *const c_char, flags: i32) -> i32;
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
    check(i64::from(unsafe {
        prctl(PR_SET_DUMPABLE, u64::from(dumpable), 0, 0, 0)
    }))
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

/// Whether `fd` is an open descriptor.
pub fn descriptor_is_open(fd: RawFd) -> bool {
    // SAFETY: F_GETFD takes no argument and only inspects the descriptor.
    unsafe { fcntl(fd, F_GETFD) >= 0 }
}

pub fn close_descriptor(fd: RawFd) {
    // SAFETY: integer argument only; the caller owns the descriptor.
    unsafe {
        close(fd);
    }
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
    check(i64::from(unsafe {
        removexattr(path.as_ptr(), name.as_ptr())
    }))
    .map(drop)
}

/// Sets the access and modification times of `path` to 0 (the epoch), explicitly: only its
/// owner or a holder of `CAP_FOWNER` may.
pub fn zero_times(path: &std::ffi::CStr) -> io::Result<()> {
    let zero = [
        Timespec {
            seconds: 0,
            nanoseconds: 0,
        },
        Timespec {
            seconds: 0,
            nanoseconds: 0,
        },
    ];
    // SAFETY: a NUL-terminated path and two timespecs.
    check(i64::from(unsafe {
        utimensat(AT_FDCWD, path.as_ptr(), &zero, 0)
    }))
    .map(drop)
}

/// Detaches whatever is mounted on `target` (lazily: `MNT_DETACH`).
pub fn detach(target: &std::ffi::CStr) -> io::Result<()> {
    // SAFETY: a NUL-terminated path.
    check(i64::from(unsafe { umount2(target.as_ptr(), MNT_DETACH) })).map(drop)
}

/// Mounts a fresh tmpfs with `options` on `target` (`MS_NOSUID | MS_NODEV`).
pub fn mount_tmpfs(target: &std::ffi::CStr, options: &std::ffi::CStr) -> io::Result<()> {
    // SAFETY: NUL-terminated strings.
    check(i64::from(unsafe {
        mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            MS_NOSUID | MS_NODEV,
            options.as_ptr(),
        )
    }))
    .map(drop)
}

/// The calls the test child makes between fork and exec. Everything they touch was built
/// before the fork; each failure is reported as (step, errno) on the report pipe.
pub mod child {
    use super::*;

    /// In a child forked into a PID namespace: writes `value` to that namespace's
    /// `ns_last_pid` (through `last_pid`, which acts on the writer's namespace) and exits, with
    /// status 1 when the write worked, else 0.
    pub fn write_last_pid_and_exit(last_pid: RawFd, value: &[u8]) -> ! {
        // SAFETY: a valid buffer; _exit never returns.
        unsafe {
            let written = pwrite(last_pid, value.as_ptr(), value.len(), 0);
            _exit(i32::from(written == value.len() as isize))
        }
    }

    /// Writes `(step, errno)` to the report pipe and exits without running the program.
    pub fn fail(report: RawFd, step: u8) -> ! {
        let error = errno();
        let mut message = [0u8; 5];
        message[0] = step;
        message[1..].copy_from_slice(&error.to_le_bytes());
        // SAFETY: a valid buffer; the pipe is ours; _exit never returns.
        unsafe {
            let _ = write(report, message.as_ptr(), message.len());
            _exit(crate::NOT_STARTED_STATUS)
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
        unsafe {
            syscall(
                SYS_CAPSET,
                &header as *const CapabilityHeader,
                data.as_ptr(),
            ) == 0
        }
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

    pub fn execute_path(
        path: *const c_char,
        arguments: &[*const c_char],
        environment: &[*const c_char],
    ) {
        // SAFETY: as above.
        unsafe {
            execve(path, arguments.as_ptr(), environment.as_ptr());
        }
    }
}
