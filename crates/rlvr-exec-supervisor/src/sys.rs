//! The only module with `unsafe`: the supervisor's system calls. rustix makes every call it
//! offers; libc the rest (`fork`, `wait4` with its resource usage, `kill(-1)`, signal
//! dispositions and mask, `close_range`, `execveat`/`execve`, `_exit`), each block with its
//! SAFETY line. Descriptors cross as `OwnedFd`/`BorrowedFd`; the raw numbers the tests' layout
//! needs (0, 1, 2, 3...) are targets only.
//!
//! The supervisor is single-threaded, so a forked child may call anything; it still calls only
//! what [`child`] offers, and reports a failing step with the call's errno (rustix returns it;
//! nothing here reads libc's `errno`).

use std::ffi::{CStr, c_char};
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::fs::{AtFlags, CWD, MemfdFlags, SealFlags, Timestamps};
use rustix::mount::{MountFlags, UnmountFlags};
use rustix::process::{DumpableBehavior, Pid, PidfdFlags};
use rustix::thread::{LinkNameSpaceType, UnshareFlags};

pub use rustix::io::Errno;

pub const SIGKILL: i32 = libc::SIGKILL;
pub const SIGXCPU: i32 = libc::SIGXCPU;
pub const WNOHANG: i32 = libc::WNOHANG;

/// How a waited-for child ended and what it used.
pub struct Waited {
    /// Its wait status (`WIFEXITED` and the rest decode it).
    pub status: i32,
    /// User and system CPU time, in microseconds.
    pub cpu_us: u64,
    /// `ru_maxrss`: its largest resident set, in KiB.
    pub max_resident_kib: u64,
}

/// No core dumps and no `/proc/<pid>/mem` for a process of the same uid.
pub fn set_undumpable() -> io::Result<()> {
    Ok(rustix::process::set_dumpable_behavior(
        DumpableBehavior::NotDumpable,
    )?)
}

/// Takes descriptors 0 (requests) and 1 (replies) out of the tests' way, to `minimum` or
/// above, and puts `/dev/null` on 0, 1 and 2.
pub fn adopt_standard_descriptors(minimum: RawFd) -> io::Result<(OwnedFd, OwnedFd)> {
    // SAFETY: the sandbox starts the supervisor with its request and reply pipes on 0 and 1;
    // they stay open while borrowed here (they are replaced below, after the duplicates).
    let (requests, replies) = unsafe { (BorrowedFd::borrow_raw(0), BorrowedFd::borrow_raw(1)) };
    let requests = rustix::io::fcntl_dupfd_cloexec(requests, minimum)?;
    let replies = rustix::io::fcntl_dupfd_cloexec(replies, minimum)?;
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        for target in 0..3 {
            let _ = duplicate_onto(null.as_fd(), target);
        }
    }
    Ok((requests, replies))
}

/// A descriptor the sandbox left at `fd` for the supervisor, when it is open.
pub fn inherited_descriptor(fd: RawFd) -> Option<OwnedFd> {
    // SAFETY: only inspected; a descriptor that is not open is `EBADF`.
    rustix::io::fcntl_getfd(unsafe { BorrowedFd::borrow_raw(fd) }).ok()?;
    // SAFETY: the sandbox hands this descriptor to the supervisor, and nothing else in this
    // process refers to it.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Duplicates `fd` to the lowest free descriptor >= `minimum`, close-on-exec.
pub fn duplicate_at_least(fd: BorrowedFd<'_>, minimum: RawFd) -> io::Result<OwnedFd> {
    Ok(rustix::io::fcntl_dupfd_cloexec(fd, minimum)?)
}

/// `dup2(fd, target)`: whatever was on `target` is closed, and `target` refers to `fd`'s file
/// (not close-on-exec).
fn duplicate_onto(fd: BorrowedFd<'_>, target: RawFd) -> Result<(), Errno> {
    // SAFETY: `target` is a descriptor number to (re)place; the ManuallyDrop keeps this
    // temporary owner from closing it, so whoever owned it still does.
    let mut target = ManuallyDrop::new(unsafe { OwnedFd::from_raw_fd(target) });
    rustix::io::dup2(fd, &mut target)
}

/// A fresh PID namespace for the next child this process forks.
pub fn unshare_pid_namespace() -> io::Result<()> {
    // SAFETY: `NEWPID` changes only the namespace of later children; the descriptor table,
    // which `unshare_unsafe` warns about (`FILES`), is untouched.
    Ok(unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWPID) }?)
}

/// Makes `namespace` the PID namespace of the next child this process forks.
pub fn enter_pid_namespace(namespace: BorrowedFd<'_>) -> io::Result<()> {
    Ok(rustix::thread::move_into_link_name_space(
        namespace,
        Some(LinkNameSpaceType::ProcessID),
    )?)
}

/// `fork()`: the child gets `Ok(0)`.
pub fn fork_process() -> io::Result<i32> {
    // SAFETY: this process is single-threaded, so the child inherits no lock held by another
    // thread; it runs only `child`'s calls, then execs or exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(pid)
}

/// A pidfd of child `pid`: readable once it ended.
pub fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    let pid = Pid::from_raw(pid).ok_or_else(|| io::Error::other("no such process"))?;
    Ok(rustix::process::pidfd_open(pid, PidfdFlags::empty())?)
}

/// Waits up to `timeout_ms` for `fd` to become readable; false on timeout.
pub fn wait_readable(fd: BorrowedFd<'_>, timeout_ms: i32) -> io::Result<bool> {
    let timeout = Timespec {
        tv_sec: i64::from(timeout_ms.max(0) / 1000),
        tv_nsec: i64::from(timeout_ms.max(0) % 1000) * 1_000_000,
    };
    loop {
        let mut descriptors = [PollFd::from_borrowed_fd(fd, PollFlags::IN)];
        match rustix::event::poll(&mut descriptors, Some(&timeout)) {
            Ok(ready) => return Ok(ready > 0),
            Err(Errno::INTR) => {}
            Err(errno) => return Err(errno.into()),
        }
    }
}

/// Waits for `pid` (any child with -1); `WNOHANG` in `options` may give `Ok(None)`.
pub fn wait_for(pid: i32, options: i32) -> io::Result<Option<(i32, Waited)>> {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers to a status word and a rusage, for the call's duration.
        let result = unsafe { libc::wait4(pid, &mut status, options, &mut usage) };
        if result > 0 {
            let microseconds = |time: libc::timeval| time.tv_sec * 1_000_000 + time.tv_usec;
            let cpu = microseconds(usage.ru_utime) + microseconds(usage.ru_stime);
            return Ok(Some((
                result,
                Waited {
                    status,
                    cpu_us: u64::try_from(cpu).unwrap_or(0),
                    max_resident_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
                },
            )));
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
/// it is 0 again (capabilities(7)). The supervisor is single-threaded: the thread's ids are
/// the process's.
pub fn set_effective_ids(id: u32) -> bool {
    use rustix::process::{Gid, Uid};
    let set_uid = || rustix::thread::set_thread_res_uid(None, Uid::from_raw(id), None).is_ok();
    let set_gid = || rustix::thread::set_thread_res_gid(None, Gid::from_raw(id), None).is_ok();
    if id == 0 {
        // The uid first: its capabilities back, the gid may change.
        return set_uid() && set_gid();
    }
    // The gid first, while the capabilities of uid 0 still allow it.
    set_gid() && set_uid()
}

/// `kill(pid, signal)`; `pid` -1 is every process this one may signal.
pub fn send_signal(pid: i32, signal: i32) -> bool {
    // SAFETY: integer arguments only.
    unsafe { libc::kill(pid, signal) == 0 }
}

pub fn process_id() -> i32 {
    rustix::process::getpid().as_raw_nonzero().get()
}

/// A pipe, both ends close-on-exec: (read, write).
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// An empty memory file, close-on-exec; `sealable` allows [`seal`].
pub fn memory_file(name: &CStr, sealable: bool) -> io::Result<OwnedFd> {
    let mut flags = MemfdFlags::CLOEXEC;
    if sealable {
        flags |= MemfdFlags::ALLOW_SEALING;
    }
    Ok(rustix::fs::memfd_create(name, flags)?)
}

/// Seals a memory file: no write, growth, shrinking or further seal.
pub fn seal(fd: BorrowedFd<'_>) -> io::Result<()> {
    Ok(rustix::fs::fcntl_add_seals(
        fd,
        SealFlags::SEAL | SealFlags::SHRINK | SealFlags::GROW | SealFlags::WRITE,
    )?)
}

/// Lets every uid open a pipe by path (`/proc/self/fd/N` checks the pipe's own mode).
pub fn open_to_everyone(fd: BorrowedFd<'_>) -> io::Result<()> {
    Ok(rustix::fs::fchmod(
        fd,
        rustix::fs::Mode::from_raw_mode(0o666),
    )?)
}

/// The names of `path`'s extended attributes, each NUL-terminated.
pub fn list_extended_attributes(path: &CStr) -> io::Result<Vec<u8>> {
    let mut buffer = vec![0u8; 64 << 10];
    let size = rustix::fs::listxattr(path, &mut buffer[..])?;
    buffer.truncate(size);
    Ok(buffer)
}

pub fn remove_extended_attribute(path: &CStr, name: &CStr) -> io::Result<()> {
    Ok(rustix::fs::removexattr(path, name)?)
}

/// Sets the access and modification times of `path` to 0 (the epoch), explicitly: only its
/// owner or a holder of `CAP_FOWNER` may.
pub fn zero_times(path: &CStr) -> io::Result<()> {
    let epoch = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let times = Timestamps {
        last_access: epoch,
        last_modification: epoch,
    };
    Ok(rustix::fs::utimensat(CWD, path, &times, AtFlags::empty())?)
}

/// Detaches whatever is mounted on `target` (lazily: `MNT_DETACH`).
pub fn detach(target: &CStr) -> io::Result<()> {
    Ok(rustix::mount::unmount(target, UnmountFlags::DETACH)?)
}

/// Mounts a fresh tmpfs with `options` on `target`, `MS_NOSUID | MS_NODEV` (the only flags the
/// supervisor's seccomp filter lets through).
pub fn mount_tmpfs(target: &CStr, options: &CStr) -> io::Result<()> {
    Ok(rustix::mount::mount(
        c"tmpfs",
        target,
        c"tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV,
        options,
    )?)
}

/// The calls the test child makes between fork and exec. Everything they touch was built
/// before the fork; each failure is reported as (step, errno) on the report pipe.
pub mod child {
    use rustix::process::{Gid, Resource, Rlimit, Uid};
    use rustix::thread::{CapabilitiesSecureBits, CapabilitySet, CapabilitySets};

    use super::*;

    /// Exit status of a child that failed before its program started.
    const NOT_STARTED_STATUS: i32 = 127;

    fn exit(status: i32) -> ! {
        // SAFETY: `_exit` ends the process at once; nothing of the parent's state (buffers,
        // handlers) runs twice in this forked copy.
        unsafe { libc::_exit(status) }
    }

    /// In a child forked into a PID namespace: writes `value` to that namespace's
    /// `ns_last_pid` (through `last_pid`, which acts on the writer's namespace) and exits, with
    /// status 1 when the write worked, else 0.
    pub fn write_last_pid_and_exit(last_pid: BorrowedFd<'_>, value: &[u8]) -> ! {
        let written = rustix::io::pwrite(last_pid, value, 0);
        exit(i32::from(written == Ok(value.len())))
    }

    /// Writes `(step, errno)` to the report pipe and exits without running the program.
    pub fn fail(report: BorrowedFd<'_>, step: u8, errno: Errno) -> ! {
        let mut message = [0u8; 5];
        message[0] = step;
        message[1..].copy_from_slice(&errno.raw_os_error().to_le_bytes());
        let _ = rustix::io::write(report, &message);
        exit(NOT_STARTED_STATUS)
    }

    pub fn new_session() -> Result<(), Errno> {
        rustix::process::setsid().map(drop)
    }

    /// SECBIT_NOROOT and SECBIT_NO_CAP_AMBIENT_RAISE, both locked.
    pub fn lock_no_root() -> Result<(), Errno> {
        rustix::thread::set_capabilities_secure_bits(
            CapabilitiesSecureBits::NO_ROOT
                | CapabilitiesSecureBits::NO_ROOT_LOCKED
                | CapabilitiesSecureBits::NO_CAP_AMBIENT_RAISE
                | CapabilitiesSecureBits::NO_CAP_AMBIENT_RAISE_LOCKED,
        )
    }

    /// Drops supplementary groups where the namespace allows it (an unprivileged map
    /// without newgidmap denies setgroups: then there are none that matter), then takes
    /// `id` as every uid and gid.
    pub fn become_id(id: u32) -> Result<(), Errno> {
        let _ = rustix::thread::set_thread_groups(&[]);
        let gid = Gid::from_raw(id);
        rustix::thread::set_thread_res_gid(gid, gid, gid)?;
        let uid = Uid::from_raw(id);
        rustix::thread::set_thread_res_uid(uid, uid, uid)
    }

    /// Empties the effective, permitted and inheritable capability sets.
    pub fn drop_capabilities() -> Result<(), Errno> {
        rustix::thread::set_capabilities(
            None,
            CapabilitySets {
                effective: CapabilitySet::empty(),
                permitted: CapabilitySet::empty(),
                inheritable: CapabilitySet::empty(),
            },
        )
    }

    /// Puts `source` on descriptor `target` (not close-on-exec).
    pub fn move_descriptor(source: BorrowedFd<'_>, target: RawFd) -> Result<(), Errno> {
        duplicate_onto(source, target)
    }

    /// Marks every descriptor from `first` up close-on-exec (the report pipe and the
    /// program image stay usable until the exec closes them).
    pub fn close_on_exec_from(first: RawFd) -> Result<(), Errno> {
        // SAFETY: integer arguments only, each passed as the `long` `syscall` reads; CLOEXEC
        // closes nothing now.
        let result = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                libc::c_long::from(first),
                libc::c_long::from(u32::MAX),
                libc::c_long::from(libc::CLOSE_RANGE_CLOEXEC),
            )
        };
        if result == 0 {
            Ok(())
        } else {
            Err(Errno::from_io_error(&io::Error::last_os_error()).unwrap_or(Errno::INVAL))
        }
    }

    /// Default dispositions for every signal (Rust's runtime ignores SIGPIPE, and an
    /// ignored signal stays ignored across exec) and an empty mask.
    pub fn reset_signals() -> Result<(), Errno> {
        for number in 1..=64 {
            if number != libc::SIGKILL && number != libc::SIGSTOP {
                // SAFETY: SIG_DFL installs no handler; numbers the C library reserves only
                // fail.
                unsafe {
                    libc::signal(number, libc::SIG_DFL);
                }
            }
        }
        // SAFETY: an empty set, initialised by `sigemptyset`, and no old set asked for.
        let result = unsafe {
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut())
        };
        if result == 0 {
            Ok(())
        } else {
            Err(Errno::from_io_error(&io::Error::last_os_error()).unwrap_or(Errno::INVAL))
        }
    }

    /// Sets a resource limit (soft `current`, hard `maximum`).
    pub fn limit(resource: Resource, current: u64, maximum: u64) -> Result<(), Errno> {
        rustix::process::setrlimit(
            resource,
            Rlimit {
                current: Some(current),
                maximum: Some(maximum),
            },
        )
    }

    /// Execs the sealed image in `image` (its descriptor is close-on-exec: after the
    /// exec the program holds nothing but 0, 1, 2 and its files). Returns only on failure.
    pub fn execute_image(
        image: BorrowedFd<'_>,
        arguments: &[*const c_char],
        environment: &[*const c_char],
    ) -> Errno {
        // SAFETY: NUL-terminated argument and environment vectors built before the fork, and
        // an empty path with AT_EMPTY_PATH: the image's descriptor is what runs.
        unsafe {
            libc::syscall(
                libc::SYS_execveat,
                libc::c_long::from(image.as_raw_fd()),
                c"".as_ptr(),
                arguments.as_ptr(),
                environment.as_ptr(),
                libc::c_long::from(libc::AT_EMPTY_PATH),
            );
        }
        Errno::from_io_error(&io::Error::last_os_error()).unwrap_or(Errno::INVAL)
    }

    /// Execs the program at `path`. Returns only on failure.
    pub fn execute_path(
        path: &CStr,
        arguments: &[*const c_char],
        environment: &[*const c_char],
    ) -> Errno {
        // SAFETY: as above, with a NUL-terminated path.
        unsafe {
            libc::execve(path.as_ptr(), arguments.as_ptr(), environment.as_ptr());
        }
        Errno::from_io_error(&io::Error::last_os_error()).unwrap_or(Errno::INVAL)
    }
}
