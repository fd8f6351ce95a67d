//! Child-side calls, made between `clone` and `execve` in children that share the parent's
//! memory: async-signal-safe, allocation-free and errno-free, each one a raw system call
//! through [`call`] on data the parent prepared, returning the errno on failure.

use std::ffi::CStr;
use std::os::fd::RawFd;

use libc::c_int;

use super::raw::{call, optional_pointer, pointer};
use super::{BpfInstruction, Errno};

/// `mount(2)`.
pub(crate) fn mount(
    source: Option<&CStr>,
    target: &CStr,
    filesystem: Option<&CStr>,
    flags: u64,
    data: Option<&CStr>,
) -> Result<(), Errno> {
    // SAFETY: `mount` only reads its arguments: `target` and the optional strings are live NUL-
    // terminated strings, the rest integers.
    unsafe {
        call(
            libc::SYS_mount,
            [
                optional_pointer(source),
                pointer(target.as_ptr()),
                optional_pointer(filesystem),
                flags as usize,
                optional_pointer(data),
                0,
            ],
        )
    }
    .map(drop)
}

/// `umount2(target, MNT_DETACH)`.
pub(crate) fn unmount_detach(target: &CStr) -> Result<(), Errno> {
    // SAFETY: `umount2` only reads `target`, a live NUL-terminated string.
    unsafe {
        call(
            libc::SYS_umount2,
            [
                pointer(target.as_ptr()),
                libc::MNT_DETACH as usize,
                0,
                0,
                0,
                0,
            ],
        )
    }
    .map(drop)
}

/// `mkdir(2)`, as `mkdirat(AT_FDCWD, ...)` (aarch64 has only the `*at` form).
pub(crate) fn make_directory(path: &CStr, mode: u32) -> Result<(), Errno> {
    // SAFETY: `mkdirat` only reads `path`, a live NUL-terminated string.
    unsafe {
        call(
            libc::SYS_mkdirat,
            [
                libc::AT_FDCWD as usize,
                pointer(path.as_ptr()),
                mode as usize,
                0,
                0,
                0,
            ],
        )
    }
    .map(drop)
}

/// `symlink(2)`, as `symlinkat(target, AT_FDCWD, link)` (aarch64 has only the `*at` form).
pub(crate) fn symbolic_link(target: &CStr, link: &CStr) -> Result<(), Errno> {
    // SAFETY: `symlinkat` only reads `target` and `link`, live NUL-terminated strings.
    unsafe {
        call(
            libc::SYS_symlinkat,
            [
                pointer(target.as_ptr()),
                libc::AT_FDCWD as usize,
                pointer(link.as_ptr()),
                0,
                0,
                0,
            ],
        )
    }
    .map(drop)
}

/// Opens (creating if asked) a file and returns its raw descriptor (the caller closes it).
pub(crate) fn open_raw(path: &CStr, flags: c_int, mode: u32) -> Result<RawFd, Errno> {
    // SAFETY: `openat` only reads `path`, a live NUL-terminated string; the caller owns the new
    // descriptor.
    unsafe {
        call(
            libc::SYS_openat,
            [
                libc::AT_FDCWD as usize,
                pointer(path.as_ptr()),
                (flags | libc::O_CLOEXEC) as usize,
                mode as usize,
                0,
                0,
            ],
        )
    }
    .map(|fd| fd as RawFd)
}

/// `close(2)` of a raw descriptor; errors are ignored (the descriptor is gone either way).
pub(crate) fn close_raw(fd: RawFd) {
    // SAFETY: `close` touches no memory; the caller owns `fd` and does not use it again.
    let _ = unsafe { call(libc::SYS_close, [fd as usize, 0, 0, 0, 0, 0]) };
}

/// `chdir(2)`.
pub(crate) fn change_directory(path: &CStr) -> Result<(), Errno> {
    // SAFETY: `chdir` only reads `path`, a live NUL-terminated string.
    unsafe { call(libc::SYS_chdir, [pointer(path.as_ptr()), 0, 0, 0, 0, 0]) }.map(drop)
}

/// `pivot_root(2)`.
pub(crate) fn pivot_root(new_root: &CStr, put_old: &CStr) -> Result<(), Errno> {
    // SAFETY: `pivot_root` only reads `new_root` and `put_old`, live NUL-terminated strings.
    unsafe {
        call(
            libc::SYS_pivot_root,
            [
                pointer(new_root.as_ptr()),
                pointer(put_old.as_ptr()),
                0,
                0,
                0,
                0,
            ],
        )
    }
    .map(drop)
}

/// `sethostname(2)` (in the child's own UTS namespace).
pub(crate) fn set_hostname(name: &[u8]) -> Result<(), Errno> {
    // SAFETY: `sethostname` reads `name.len()` bytes of `name`, a live slice.
    unsafe {
        call(
            libc::SYS_sethostname,
            [pointer(name.as_ptr()), name.len(), 0, 0, 0, 0],
        )
    }
    .map(drop)
}

/// `struct ifreq` as `SIOCGIFFLAGS` and `SIOCSIFFLAGS` read it: an interface name, then its
/// flags in the union (40 bytes in all on 64-bit Linux).
#[repr(C)]
struct InterfaceFlagsRequest {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    padding: [u8; 22],
}

const _: () = assert!(size_of::<InterfaceFlagsRequest>() == size_of::<libc::ifreq>());

/// Brings `lo` of the caller's network namespace up (`SIOCSIFFLAGS` with `IFF_UP` on a socket
/// of that namespace; `CAP_NET_ADMIN` over it), as `ip link set lo up` does without netlink.
pub(crate) fn bring_up_loopback() -> Result<(), Errno> {
    // SAFETY: `socket` takes integers only.
    let socket = unsafe {
        call(
            libc::SYS_socket,
            [
                libc::AF_INET as usize,
                (libc::SOCK_DGRAM | libc::SOCK_CLOEXEC) as usize,
                0,
                0,
                0,
                0,
            ],
        )
    }? as RawFd;
    let mut request = InterfaceFlagsRequest {
        name: [0; libc::IFNAMSIZ],
        flags: 0,
        padding: [0; 22],
    };
    request.name[..2].copy_from_slice(b"lo");
    let interface_control = |command: libc::c_ulong, request: &mut InterfaceFlagsRequest| {
        let address = pointer((request as *mut InterfaceFlagsRequest).cast_const());
        // SAFETY: SIOCGIFFLAGS and SIOCSIFFLAGS read (the first also writes) one `struct
        // ifreq`, which `request` is (40 bytes, the name NUL-terminated), borrowed for the call.
        unsafe {
            call(
                libc::SYS_ioctl,
                [socket as usize, command as usize, address, 0, 0, 0],
            )
        }
    };
    let result = interface_control(libc::SIOCGIFFLAGS, &mut request).and_then(|_| {
        request.flags |= libc::IFF_UP as libc::c_short;
        interface_control(libc::SIOCSIFFLAGS, &mut request)
    });
    close_raw(socket);
    result.map(drop)
}

/// `setns(2)`.
pub(crate) fn set_namespace(fd: RawFd, kind: c_int) -> Result<(), Errno> {
    // SAFETY: `setns` takes a descriptor and a flag, no memory.
    unsafe { call(libc::SYS_setns, [fd as usize, kind as usize, 0, 0, 0, 0]) }.map(drop)
}

/// `setsid(2)`: a new session and process group, so the child shares no group with the verifier.
pub(crate) fn new_session() -> Result<(), Errno> {
    // SAFETY: `setsid` takes no arguments.
    unsafe { call(libc::SYS_setsid, [0; 6]) }.map(drop)
}

/// Writes the whole buffer (retrying short writes and EINTR).
pub(crate) fn write_all_raw(fd: RawFd, mut bytes: &[u8]) -> Result<(), Errno> {
    while !bytes.is_empty() {
        // SAFETY: `write` reads at most `bytes.len()` bytes of `bytes`, a live slice.
        match unsafe {
            call(
                libc::SYS_write,
                [fd as usize, pointer(bytes.as_ptr()), bytes.len(), 0, 0, 0],
            )
        } {
            Ok(written) => bytes = &bytes[written..],
            Err(libc::EINTR) => {}
            Err(errno) => return Err(errno),
        }
    }
    Ok(())
}

/// Whether `fd` is readable right now: `ppoll` with a zero timeout (a pidfd is readable once
/// its process has exited).
pub(crate) fn readable_now(fd: RawFd) -> Result<bool, Errno> {
    let mut descriptor = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let zero = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ppoll` writes `revents` of one live local `pollfd` and reads the live zero
    // timeout; no signal mask is passed.
    let ready = unsafe {
        call(
            libc::SYS_ppoll,
            [
                pointer(&mut descriptor as *mut libc::pollfd),
                1,
                pointer(&zero as *const libc::timespec),
                0,
                0,
                0,
            ],
        )
    }?;
    Ok(ready > 0)
}

/// Reads one byte, retrying EINTR; `Ok(false)` at end of file.
pub(crate) fn read_byte(fd: RawFd) -> Result<bool, Errno> {
    let mut byte = 0u8;
    loop {
        // SAFETY: `read` writes at most one byte, into `byte`, a live local.
        match unsafe {
            call(
                libc::SYS_read,
                [fd as usize, pointer(&mut byte as *mut u8), 1, 0, 0, 0],
            )
        } {
            Ok(read) => return Ok(read == 1),
            Err(libc::EINTR) => {}
            Err(errno) => return Err(errno),
        }
    }
}

/// Writes `contents` to `/proc/<pid>/<name>` in one `write` (id map files take one write).
pub(crate) fn write_process_file(
    pid: libc::pid_t,
    name: &[u8],
    contents: &[u8],
) -> Result<(), Errno> {
    let mut buffer = [0u8; 64];
    let mut length = 0;
    let mut push = |bytes: &[u8]| -> Result<(), Errno> {
        let end = length + bytes.len();
        if end >= buffer.len() {
            return Err(libc::ENAMETOOLONG);
        }
        buffer[length..end].copy_from_slice(bytes);
        length = end;
        Ok(())
    };
    push(b"/proc/")?;
    let mut digits = [0u8; 12];
    let mut start = digits.len();
    let mut rest = pid.max(0) as u32;
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    push(&digits[start..])?;
    push(b"/")?;
    push(name)?;
    // The buffer is zeroed and `push` keeps one byte free, so it is NUL-terminated.
    let path = CStr::from_bytes_until_nul(&buffer).map_err(|_| libc::EINVAL)?;
    let fd = open_raw(path, libc::O_WRONLY, 0)?;
    // SAFETY: `write` reads `contents.len()` bytes of `contents`, a live slice, into `fd`, opened
    // just above.
    let written = unsafe {
        call(
            libc::SYS_write,
            [
                fd as usize,
                pointer(contents.as_ptr()),
                contents.len(),
                0,
                0,
                0,
            ],
        )
    };
    close_raw(fd);
    match written {
        Ok(count) if count == contents.len() => Ok(()),
        Ok(_) => Err(libc::EIO),
        Err(errno) => Err(errno),
    }
}

/// `dup3(source, target, 0)`: the target loses close-on-exec.
pub(crate) fn duplicate_to(source: RawFd, target: RawFd) -> Result<(), Errno> {
    // SAFETY: `dup3` takes descriptor numbers, no memory; the child owns both until it executes.
    unsafe {
        call(
            libc::SYS_dup3,
            [source as usize, target as usize, 0, 0, 0, 0],
        )
    }
    .map(drop)
}

/// Moves `source` to `target`: `dup3` then `close(source)`, or nothing when the kernel already
/// handed out `target` itself (`dup3(fd, fd)` is EINVAL: in a process with every lower
/// descriptor open, the one a child opens can be exactly the one it must end up at).
pub(crate) fn move_descriptor(source: RawFd, target: RawFd) -> Result<(), Errno> {
    if source == target {
        return Ok(());
    }
    let moved = duplicate_to(source, target);
    close_raw(source);
    moved
}

/// `close_range(first, last, 0)`.
pub(crate) fn close_range(first: u32, last: u32) -> Result<(), Errno> {
    // SAFETY: `close_range` takes descriptor numbers, no memory; the child closes them before it
    // executes.
    unsafe {
        call(
            libc::SYS_close_range,
            [first as usize, last as usize, 0, 0, 0, 0],
        )
    }
    .map(drop)
}

/// `prlimit64(0, resource, {soft, hard}, NULL)`.
pub(crate) fn set_resource_limit(resource: u32, soft: u64, hard: u64) -> Result<(), Errno> {
    let limit = libc::rlimit64 {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: `prlimit64` reads `limit`, a live `rlimit64`, and gets no pointer for the old limit.
    unsafe {
        call(
            libc::SYS_prlimit64,
            [
                0,
                resource as usize,
                pointer(&limit as *const libc::rlimit64),
                0,
                0,
                0,
            ],
        )
    }
    .map(drop)
}

/// Drops every supplementary group (this thread only, unlike glibc's broadcasting wrapper).
pub(crate) fn clear_groups() -> Result<(), Errno> {
    // SAFETY: `setgroups(0, NULL)` reads no memory.
    unsafe { call(libc::SYS_setgroups, [0; 6]) }.map(drop)
}

/// Sets real, effective and saved gid, then uid (this thread only).
pub(crate) fn set_user(uid: u32, gid: u32) -> Result<(), Errno> {
    // SAFETY: `setresgid` takes integers only.
    unsafe {
        call(
            libc::SYS_setresgid,
            [gid as usize, gid as usize, gid as usize, 0, 0, 0],
        )
    }?;
    // SAFETY: `setresuid` takes integers only.
    unsafe {
        call(
            libc::SYS_setresuid,
            [uid as usize, uid as usize, uid as usize, 0, 0, 0],
        )
    }
    .map(drop)
}

/// `prctl(option, a, b, 0, 0)`.
pub(crate) fn process_control(option: c_int, first: usize, second: usize) -> Result<(), Errno> {
    // SAFETY: the `prctl` options the sandbox uses (PDEATHSIG, NO_NEW_PRIVS, DUMPABLE,
    // CAPBSET_DROP, SECUREBITS) take integers, never pointers.
    unsafe { call(libc::SYS_prctl, [option as usize, first, second, 0, 0, 0]) }.map(drop)
}

/// Empties the effective, permitted and inheritable capability sets (`capset`, version 3).
pub(crate) fn clear_capabilities() -> Result<(), Errno> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let header = Header {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: `capset` reads `header` and both `data` entries, live values in the kernel's version
    // 3 layout.
    unsafe {
        call(
            libc::SYS_capset,
            [
                pointer(&header as *const Header),
                pointer(data.as_ptr()),
                0,
                0,
                0,
                0,
            ],
        )
    }
    .map(drop)
}

/// `landlock_restrict_self(ruleset, 0)`.
pub(crate) fn landlock_restrict_self(ruleset: RawFd) -> Result<(), Errno> {
    // SAFETY: `landlock_restrict_self` takes a descriptor and a flag, no memory.
    unsafe {
        call(
            libc::SYS_landlock_restrict_self,
            [ruleset as usize, 0, 0, 0, 0, 0],
        )
    }
    .map(drop)
}

/// Installs a seccomp BPF filter on the calling thread (requires no_new_privs).
pub(crate) fn install_seccomp(program: &[BpfInstruction]) -> Result<(), Errno> {
    let fprog = libc::sock_fprog {
        len: program.len() as libc::c_ushort,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: `seccomp` reads `fprog` and the `program.len()` instructions it points to, both live
    // for the call.
    unsafe {
        call(
            libc::SYS_seccomp,
            [
                libc::SECCOMP_SET_MODE_FILTER as usize,
                0,
                pointer(&fprog as *const libc::sock_fprog),
                0,
                0,
                0,
            ],
        )
    }
    .map(drop)
}

/// Copies `length` bytes from the start of `source` (a memfd) into `target` with `sendfile`.
pub(crate) fn copy_file(source: RawFd, target: RawFd, length: u64) -> Result<(), Errno> {
    let mut offset: libc::off_t = 0;
    while (offset as u64) < length {
        let remaining = (length - offset as u64) as usize;
        // SAFETY: `sendfile` reads and updates `offset`, a live local; the rest are descriptors and
        // a length.
        let sent = unsafe {
            call(
                libc::SYS_sendfile,
                [
                    target as usize,
                    source as usize,
                    pointer(&mut offset as *mut libc::off_t),
                    remaining,
                    0,
                    0,
                ],
            )
        };
        match sent {
            Ok(0) => return Err(libc::EIO),
            Ok(_) | Err(libc::EINTR) => {}
            Err(errno) => return Err(errno),
        }
    }
    Ok(())
}

/// Resets every signal handler to its default (ignored signals included: Rust ignores SIGPIPE).
pub(crate) fn reset_signal_handlers() {
    // SAFETY: an all-zero `sigaction` is SIG_DFL with an empty mask; the kernel struct for
    // rt_sigaction is layout-compatible with libc's on x86_64 for these fields.
    let action: libc::sigaction = unsafe { std::mem::zeroed() };
    for signal in 1..=64 {
        if signal == libc::SIGKILL || signal == libc::SIGSTOP {
            continue;
        }
        // Errors (invalid signal numbers) are ignored.
        // SAFETY: `rt_sigaction` reads `action` (all zero: SIG_DFL, empty mask), gets no pointer
        // for the old action, and 8 is the kernel's signal set size.
        let _ = unsafe {
            call(
                libc::SYS_rt_sigaction,
                [
                    signal as usize,
                    pointer(&action as *const libc::sigaction),
                    0,
                    8,
                    0,
                    0,
                ],
            )
        };
    }
}

/// Unblocks every signal (the parent blocked them all around `clone`).
pub(crate) fn unblock_all_signals() {
    let empty: u64 = 0;
    // SAFETY: `rt_sigprocmask` reads `empty`, a live 8-byte mask, and gets no pointer for the old
    // mask.
    let _ = unsafe {
        call(
            libc::SYS_rt_sigprocmask,
            [
                libc::SIG_SETMASK as usize,
                pointer(&empty as *const u64),
                0,
                8,
                0,
                0,
            ],
        )
    };
}

/// `sched_yield(2)`.
pub(crate) fn yield_processor() {
    // SAFETY: `sched_yield` takes no arguments.
    let _ = unsafe { call(libc::SYS_sched_yield, [0; 6]) };
}

/// `kill(pid, signal)`, errors ignored.
pub(crate) fn kill_raw(pid: libc::pid_t, signal: c_int) {
    // SAFETY: `kill` takes integers only.
    let _ = unsafe { call(libc::SYS_kill, [pid as usize, signal as usize, 0, 0, 0, 0]) };
}

/// `execve(2)`; returns only on failure.
pub(crate) fn execute(
    program: &CStr,
    argv: &[*const libc::c_char],
    envp: &[*const libc::c_char],
) -> Errno {
    // `argv` and `envp` are null-terminated arrays of pointers into CStrings the parent keeps
    // alive until the child has exec'd.
    // SAFETY: `execve` reads `program` and the null-terminated `argv` and `envp`, whose strings the
    // parent keeps alive until the child has executed; on success nothing of this image remains.
    match unsafe {
        call(
            libc::SYS_execve,
            [
                pointer(program.as_ptr()),
                pointer(argv.as_ptr()),
                pointer(envp.as_ptr()),
                0,
                0,
                0,
            ],
        )
    } {
        Ok(_) => libc::EIO,
        Err(errno) => errno,
    }
}

/// `_exit(2)` of the child without running any destructor or atexit handler.
pub(crate) fn exit_child(code: c_int) -> ! {
    // SAFETY: `exit_group` takes an integer and does not return.
    let _ = unsafe { call(libc::SYS_exit_group, [code as usize, 0, 0, 0, 0, 0]) };
    #[expect(
        clippy::empty_loop,
        reason = "exit_group cannot return; this satisfies the `!` type"
    )]
    loop {}
}

/// `unshare(2)` (child side).
pub(crate) fn unshare_raw(flags: c_int) -> Result<(), Errno> {
    // SAFETY: `unshare` takes flags only.
    unsafe { call(libc::SYS_unshare, [flags as usize, 0, 0, 0, 0, 0]) }.map(drop)
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::os::fd::{IntoRawFd, RawFd};

    use super::move_descriptor;

    fn is_open(fd: RawFd) -> bool {
        // SAFETY: `fcntl(F_GETFD)` only asks the kernel about a descriptor number; the borrow
        // does not outlive the call and nothing is read or closed through it.
        rustix::io::fcntl_getfd(unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) }).is_ok()
    }

    #[test]
    fn a_descriptor_already_at_its_target_stays_open() {
        let fd = File::open("/dev/null").expect("open").into_raw_fd();
        assert_eq!(move_descriptor(fd, fd), Ok(()));
        assert!(is_open(fd));
        super::close_raw(fd);
    }

    #[test]
    fn a_moved_descriptor_is_open_at_its_target_only() {
        let source = File::open("/dev/null").expect("open").into_raw_fd();
        // An open target is replaced, as `dup3` does; it is closed below by number.
        let target = File::open("/dev/null").expect("open").into_raw_fd();
        assert_eq!(move_descriptor(source, target), Ok(()));
        assert!(is_open(target));
        assert!(!is_open(source));
        super::close_raw(target);
    }
}
