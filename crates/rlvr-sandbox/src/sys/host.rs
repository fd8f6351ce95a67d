//! Parent-side calls on the host: reaping and signalling children, user and group ids, the
//! shared empty network namespace and the Landlock ruleset. Where rustix offers the call it
//! makes it; the rest (`wait4` with its resource usage, NSS, Landlock) go through libc.

use std::ffi::CStr;
use std::io;
use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd, RawFd};

use libc::{c_int, c_void};
use rustix::process::{Pid, PidfdFlags, Signal};

/// The user name of `uid` (NSS included), for `/etc/subuid` lookups.
pub(crate) fn user_name(uid: u32) -> Option<String> {
    let mut buffer = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: zeroed passwd is a valid out-parameter.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the duration of the call; the buffer length is passed.
    let status = unsafe {
        libc::getpwuid_r(
            uid,
            &mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut result,
        )
    };
    if status != 0 || result.is_null() || entry.pw_name.is_null() {
        return None;
    }
    // SAFETY: on success `pw_name` points at a NUL-terminated string inside `buffer`.
    let name = unsafe { CStr::from_ptr(entry.pw_name) };
    Some(name.to_string_lossy().into_owned())
}

/// Effective gid of this process.
pub(crate) fn effective_gid() -> u32 {
    rustix::process::getegid().as_raw()
}

/// `pidfd_open(pid, 0)`, close-on-exec. A pid of 0 or below fails with `EINVAL`, as the
/// kernel answers it.
pub(crate) fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    let pid = Pid::from_raw(pid).ok_or_else(invalid_argument)?;
    Ok(rustix::process::pidfd_open(pid, PidfdFlags::empty())?)
}

/// Sends a signal through a pidfd (no pid-reuse race), as if by `kill(2)`. Only named signals
/// (the sandbox sends SIGKILL): a real-time or invalid number fails with `EINVAL`.
pub(crate) fn pidfd_send_signal(pidfd: BorrowedFd<'_>, signal: c_int) -> io::Result<()> {
    let signal = Signal::from_named_raw(signal).ok_or_else(invalid_argument)?;
    Ok(rustix::process::pidfd_send_signal(pidfd, signal)?)
}

/// `EINVAL`, for arguments rustix's `Pid` and `Signal` cannot carry.
fn invalid_argument() -> io::Error {
    io::Error::from_raw_os_error(libc::EINVAL)
}

/// How a reaped child ended.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reaped {
    pub(crate) status: c_int,
    pub(crate) user_and_system: std::time::Duration,
    pub(crate) max_resident_kib: u64,
}

/// Waits for (and reaps) one child; `blocking == false` returns `None` if it is still running.
pub(crate) fn wait_child(pid: libc::pid_t, blocking: bool) -> io::Result<Option<Reaped>> {
    let mut status: c_int = 0;
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let options = libc::__WALL | if blocking { 0 } else { libc::WNOHANG };
    loop {
        // SAFETY: `status` and `usage` are valid out-pointers for the duration of the call.
        let result = unsafe { libc::wait4(pid, &mut status, options, &mut usage) };
        if result < 0 {
            let error = io::Error::last_os_error();
            if error.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(error);
        }
        if result == 0 {
            return Ok(None);
        }
        let time = |value: libc::timeval| {
            std::time::Duration::new(value.tv_sec as u64, value.tv_usec as u32 * 1000)
        };
        return Ok(Some(Reaped {
            status,
            user_and_system: time(usage.ru_utime) + time(usage.ru_stime),
            max_resident_kib: usage.ru_maxrss as u64,
        }));
    }
}

/// Creates a new, empty network namespace on a short-lived helper thread and returns an fd
/// that keeps it alive (unsharing on a thread leaves every other thread where it was).
pub(crate) fn create_empty_network_namespace() -> io::Result<OwnedFd> {
    std::thread::spawn(|| {
        // SAFETY: unshare(CLONE_NEWNET) only changes this helper thread's network namespace.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let file = fs_err::File::open("/proc/thread-self/ns/net")?;
        Ok(OwnedFd::from(file.into_file()))
    })
    .join()
    .map_err(|_| io::Error::other("network namespace helper thread panicked"))?
}

/// The Landlock ABI version the kernel supports (0 when Landlock is unavailable).
pub(crate) fn landlock_abi_version() -> u32 {
    const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
    // SAFETY: the version query takes a null attribute pointer and size 0.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if version < 0 { 0 } else { version as u32 }
}

/// A Landlock ruleset that only scopes abstract unix sockets and signals (ABI 6): the sandbox
/// cannot connect to abstract sockets or signal processes outside its own Landlock domain.
pub(crate) fn landlock_scoped_ruleset() -> io::Result<OwnedFd> {
    #[repr(C)]
    struct RulesetAttributes {
        handled_access_fs: u64,
        handled_access_net: u64,
        scoped: u64,
    }
    const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1;
    const SCOPE_SIGNAL: u64 = 2;
    let attributes = RulesetAttributes {
        handled_access_fs: 0,
        handled_access_net: 0,
        scoped: SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL,
    };
    // SAFETY: `attributes` lives across the call and its size is passed alongside.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attributes as *const RulesetAttributes,
            std::mem::size_of::<RulesetAttributes>(),
            0,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor to us (with O_CLOEXEC); nothing else owns
    // it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Effective uid of this process.
pub(crate) fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// `kill(pid, signal)` to one process, ignoring errors (the process may already be gone).
/// Callers only pass pids of children or read from cgroups they own; a pid of 0 or below
/// (a process group, or every process) is never meant and is not signalled.
pub(crate) fn kill_pid(pid: libc::pid_t, signal: c_int) {
    let (Some(pid), Some(signal)) = (Pid::from_raw(pid), Signal::from_named_raw(signal)) else {
        return;
    };
    let _ = rustix::process::kill_process(pid, signal);
}
