//! The only module with `unsafe`: thin wrappers over raw Linux system calls.
//!
//! Two kinds of wrappers live here:
//!
//! * **child-side** ones, called between `clone` and `execve` in children that share the parent's
//!   memory (`CLONE_VM`, like `posix_spawn`). They must be async-signal-safe: no allocation, no
//!   locks, no glibc wrappers that touch process-wide state (glibc's `setresuid` would broadcast
//!   to the *parent's* threads), and no `errno` (the sandboxed child runs while the verifier
//!   thread that shares its thread-local storage runs too). Every one is a raw `syscall`
//!   instruction on data the parent prepared, returning the errno on failure.
//! * **parent-side** ones (clone, wait, signals, memfds, Landlock and namespace probes).

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use libc::{c_int, c_long, c_void};

use crate::isolation::{self, ChildPlan};
use crate::user_namespace::{self, HolderPlan};

/// An errno value reported by a failed child-side system call.
pub(crate) type Errno = i32;

/// A BPF instruction as the kernel expects it (`struct sock_filter`).
pub(crate) type BpfInstruction = libc::sock_filter;

#[cfg(not(target_arch = "x86_64"))]
fn last_errno() -> Errno {
    // SAFETY: `__errno_location` returns a valid pointer to the calling thread's errno. In the
    // vfork child it is the suspended parent thread's errno, which nothing else reads meanwhile.
    unsafe { *libc::__errno_location() }
}

// ---------------------------------------------------------------------------------------------
// Child side: async-signal-safe, allocation-free, and errno-free.
// ---------------------------------------------------------------------------------------------

/// A raw system call returning `-errno` on failure. The sandbox child runs concurrently with
/// the verifier thread that shares its memory (and its thread-local `errno`), so child-side
/// wrappers never touch `errno`.
#[cfg(target_arch = "x86_64")]
unsafe fn raw_syscall(number: c_long, arguments: [usize; 6]) -> isize {
    let result: isize;
    // SAFETY: the caller guarantees the arguments are valid for `number`; `syscall` clobbers
    // only rax (the result), rcx and r11.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") number as isize => result,
            in("rdi") arguments[0],
            in("rsi") arguments[1],
            in("rdx") arguments[2],
            in("r10") arguments[3],
            in("r8") arguments[4],
            in("r9") arguments[5],
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    result
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn raw_syscall(number: c_long, arguments: [usize; 6]) -> isize {
    // SAFETY: forwarded from the caller. Without the x86_64 path, errno is shared with the
    // suspended or waiting parent thread, which only reads it after its own calls.
    let result = unsafe {
        libc::syscall(
            number,
            arguments[0],
            arguments[1],
            arguments[2],
            arguments[3],
            arguments[4],
            arguments[5],
        )
    };
    if result < 0 {
        -(last_errno() as isize)
    } else {
        result as isize
    }
}

/// Runs a raw system call and turns `-errno` into `Err(errno)`.
///
/// # Safety
///
/// The arguments must be valid for system call `number`: every pointer points to memory that
/// stays live for the call and is large enough for what the kernel reads or writes there, and
/// the call must not break an invariant the rest of the process relies on (a descriptor it
/// closes or replaces is not used again by its owner). Each wrapper below says why its call
/// meets this.
unsafe fn call(number: c_long, arguments: [usize; 6]) -> Result<usize, Errno> {
    // SAFETY: forwarded from the caller, who guarantees the arguments are valid for `number`.
    let result = unsafe { raw_syscall(number, arguments) };
    if (-4095..0).contains(&result) {
        Err(-result as Errno)
    } else {
        Ok(result as usize)
    }
}

fn pointer<T>(value: *const T) -> usize {
    value as usize
}

fn optional_pointer(value: Option<&CStr>) -> usize {
    value.map_or(0, |value| pointer(value.as_ptr()))
}

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

/// Clones the sandboxed process from the first-step child: `clone3` with `flags` (namespaces,
/// `CLONE_VM`, `CLONE_PARENT`) on the stack `[stack, stack + stack_size)`, running
/// `entry(argument)` there. Not `CLONE_VFORK`: the caller writes the new process's id maps
/// while it waits. Returns the new process's pid.
pub(crate) fn clone_sandbox(
    flags: u64,
    stack: usize,
    stack_size: usize,
    entry: ChildEntry,
    argument: *mut c_void,
) -> Result<libc::pid_t, Errno> {
    let arguments = CloneArguments {
        flags,
        stack: stack as u64,
        stack_size: stack_size as u64,
        ..CloneArguments::default()
    };
    let result = raw_clone3(&arguments, entry, argument);
    if result < 0 {
        Err(-result as Errno)
    } else {
        Ok(result as libc::pid_t)
    }
}

// ---------------------------------------------------------------------------------------------
// Parent side.
// ---------------------------------------------------------------------------------------------

/// Size of the stack the vfork child runs its setup on (mapped lazily, so mostly untouched).
const CHILD_STACK_BYTES: usize = 1 << 20;

/// `CLONE_INTO_CGROUP` (Linux 5.7): the child starts life in the cgroup2 directory `cgroup`.
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// Whether this build can place a child in a cgroup at birth (`clone3` needs a small assembly
/// trampoline, written for x86_64 only; elsewhere the child joins by writing `cgroup.procs`).
pub(crate) const CAN_CLONE_INTO_CGROUP: bool = cfg!(target_arch = "x86_64");

/// `struct clone_args` of `clone3(2)` up to the `cgroup` field (`CLONE_ARGS_SIZE_VER2`).
#[repr(C)]
#[derive(Debug, Default)]
struct CloneArguments {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// The function a vfork child starts in: receives the argument, never returns.
pub(crate) type ChildEntry = extern "C" fn(*mut c_void) -> c_int;

/// A private stack for a child that shares our memory, unmapped on drop.
#[derive(Debug)]
pub(crate) struct ChildStack(*mut c_void);

// SAFETY: the mapping is owned by this value alone; moving it between threads is harmless.
unsafe impl Send for ChildStack {}

impl ChildStack {
    pub(crate) fn map() -> io::Result<ChildStack> {
        // SAFETY: an anonymous private mapping with no address hint; checked against MAP_FAILED.
        let stack = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                CHILD_STACK_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if stack == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(ChildStack(stack))
    }

    /// The lowest address and the size, as `clone3` takes them.
    pub(crate) fn bounds(&self) -> (usize, usize) {
        (self.0 as usize, CHILD_STACK_BYTES)
    }

    /// The highest address (stacks grow down); page-aligned, so 16-byte aligned.
    fn top(&self) -> *mut c_void {
        // SAFETY: one past the end of the mapping, which is allowed for pointer arithmetic.
        unsafe { self.0.cast::<u8>().add(CHILD_STACK_BYTES).cast::<c_void>() }
    }
}

impl Drop for ChildStack {
    fn drop(&mut self) {
        // SAFETY: only dropped after the child running on it has exec'd or exited (the owner
        // waits for that), so nothing runs on this stack any more.
        unsafe { libc::munmap(self.0, CHILD_STACK_BYTES) };
    }
}

/// Blocks every signal on the calling thread until dropped (no handler of the parent may run
/// on the child's stack, which shares the parent's memory).
pub(crate) struct SignalsBlocked(libc::sigset_t);

impl SignalsBlocked {
    pub(crate) fn new() -> SignalsBlocked {
        // SAFETY: zero-initialised sigsets are valid; sigfillset/pthread_sigmask only write them.
        let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut previous: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: `all` is a valid sigset.
        unsafe { libc::sigfillset(&mut all) };
        // SAFETY: valid sigset pointers; affects only the calling thread.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut previous) };
        SignalsBlocked(previous)
    }
}

impl Drop for SignalsBlocked {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `new` on the same thread.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut()) };
    }
}

/// Clones a child that runs `entry(argument)` on its own stack, sharing memory with the caller
/// until it execs or exits (`CLONE_VM | CLONE_VFORK`: the calling thread is suspended
/// meanwhile, so the fork cost does not grow with the verifier's memory). Returns the pid and a
/// pidfd. Every signal is blocked around the call so no handler of the parent runs on the
/// child's stack.
///
/// `namespace_flags` are added to the clone flags; the exit signal is 0, so a stray
/// `waitpid(-1)` elsewhere in the process cannot reap the child (we wait with `__WALL`).
pub(crate) fn clone_vfork(
    namespace_flags: c_int,
    entry: ChildEntry,
    argument: *mut c_void,
) -> io::Result<(libc::pid_t, OwnedFd)> {
    let stack = ChildStack::map()?;
    let blocked = SignalsBlocked::new();
    let mut pidfd: c_int = -1;
    let flags = namespace_flags | libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD;
    // SAFETY: the stack is a live mapping and grows down from its top; `entry` never returns
    // into glibc's clone trampoline with borrowed state (it execs or exits); `pidfd` receives
    // the pidfd (CLONE_PIDFD stores it through the parent-tid pointer).
    let pid = unsafe {
        libc::clone(
            entry,
            stack.top(),
            flags,
            argument,
            &mut pidfd as *mut c_int,
        )
    };
    let clone_error = io::Error::last_os_error();
    drop(blocked);
    drop(stack);
    if pid < 0 {
        return Err(clone_error);
    }
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    Ok((pid, unsafe { OwnedFd::from_raw_fd(pidfd) }))
}

/// `clone3(CLONE_VM | CLONE_VFORK | CLONE_PIDFD | CLONE_INTO_CGROUP | namespace_flags)` running
/// `entry(argument)` on a fresh stack in the child.
pub(crate) fn clone3_vfork(
    namespace_flags: c_int,
    cgroup: BorrowedFd<'_>,
    entry: ChildEntry,
    argument: *mut c_void,
) -> io::Result<(libc::pid_t, OwnedFd)> {
    if !CAN_CLONE_INTO_CGROUP {
        let _ = (namespace_flags, cgroup, entry, argument);
        return Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP));
    }
    let stack = ChildStack::map()?;
    let mut pidfd: c_int = -1;
    let arguments = CloneArguments {
        flags: (namespace_flags | libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD) as u64
            | CLONE_INTO_CGROUP,
        pidfd: &mut pidfd as *mut c_int as u64,
        stack: stack.0 as u64,
        stack_size: CHILD_STACK_BYTES as u64,
        cgroup: cgroup.as_raw_fd() as u64,
        ..CloneArguments::default()
    };
    let blocked = SignalsBlocked::new();
    let result = raw_clone3(&arguments, entry, argument);
    drop(blocked);
    drop(stack);
    if result < 0 {
        return Err(io::Error::from_raw_os_error(-result as i32));
    }
    // SAFETY: the kernel just stored this descriptor for us (CLONE_PIDFD); nothing else owns it.
    Ok((result as libc::pid_t, unsafe {
        OwnedFd::from_raw_fd(pidfd)
    }))
}

/// The `clone3` system call with a trampoline: in the child (return value 0, running on the
/// new stack) it calls `entry(argument)`, which never returns. Returns the child's pid or a
/// negative errno in the parent.
#[cfg(target_arch = "x86_64")]
fn raw_clone3(arguments: &CloneArguments, entry: ChildEntry, argument: *mut c_void) -> i64 {
    let result: i64;
    // SAFETY: `arguments` is a valid `clone_args` of the size passed; the kernel switches the
    // child to the top of the mapped stack. The child path never returns into Rust code: it
    // clears the frame pointer, calls `entry` (ABI-aligned: the stack top is page-aligned, and
    // `call` pushes the return address) and traps if `entry` ever returned. r12 and r13 survive
    // `syscall` (only rax, rcx and r11 are clobbered), so the child finds entry and argument
    // there. The parent path uses no stack.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "xor ebp, ebp",
            "mov rdi, r12",
            "call r13",
            "ud2",
            "2:",
            inlateout("rax") libc::SYS_clone3 => result,
            in("rdi") arguments as *const CloneArguments,
            in("rsi") std::mem::size_of::<CloneArguments>(),
            in("r12") argument,
            in("r13") entry as usize,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    result
}

#[cfg(not(target_arch = "x86_64"))]
fn raw_clone3(_arguments: &CloneArguments, _entry: ChildEntry, _argument: *mut c_void) -> i64 {
    -i64::from(libc::EOPNOTSUPP)
}

/// Where the first-step child starts (see [`isolation::run_first_step`]).
pub(crate) extern "C" fn first_step_entry(argument: *mut c_void) -> c_int {
    // SAFETY: the parent passes a pointer to a live `ChildPlan` and keeps it alive until the
    // sandboxed process has exec'd or exited (it waits on the error pipe for that).
    let plan = unsafe { &*argument.cast_const().cast::<ChildPlan<'_>>() };
    isolation::run_first_step(plan, argument)
}

/// Where the sandboxed process starts (see [`isolation::run_sandboxed`]).
pub(crate) extern "C" fn sandbox_entry(argument: *mut c_void) -> c_int {
    // SAFETY: as for `first_step_entry`: the same plan, alive until this process has exec'd.
    let plan = unsafe { &*argument.cast_const().cast::<ChildPlan<'_>>() };
    isolation::run_sandboxed(plan)
}

/// Where the namespace holder starts (see [`user_namespace::run_holder`]).
extern "C" fn holder_entry(argument: *mut c_void) -> c_int {
    // SAFETY: `clone_holder` passes a pointer to a live `HolderPlan` that the caller keeps
    // until it has reaped the holder.
    let plan = unsafe { &*argument.cast_const().cast::<HolderPlan>() };
    user_namespace::run_holder(plan)
}

/// Clones the namespace holder into a new user namespace (`CLONE_VM | CLONE_NEWUSER`, not
/// vfork: the caller writes its id maps while it waits). Returns its pid; the caller reaps it
/// before dropping `plan` and `stack`.
pub(crate) fn clone_holder(plan: &HolderPlan, stack: &ChildStack) -> io::Result<libc::pid_t> {
    let (base, size) = stack.bounds();
    let arguments = CloneArguments {
        flags: (libc::CLONE_VM | libc::CLONE_NEWUSER) as u64,
        stack: base as u64,
        stack_size: size as u64,
        ..CloneArguments::default()
    };
    let argument = (plan as *const HolderPlan).cast_mut().cast::<c_void>();
    let blocked = SignalsBlocked::new();
    let result = raw_clone3(&arguments, holder_entry, argument);
    drop(blocked);
    if result < 0 {
        return Err(io::Error::from_raw_os_error(-result as i32));
    }
    Ok(result as libc::pid_t)
}

/// `unshare(2)` (child side).
pub(crate) fn unshare_raw(flags: c_int) -> Result<(), Errno> {
    // SAFETY: `unshare` takes flags only.
    unsafe { call(libc::SYS_unshare, [flags as usize, 0, 0, 0, 0, 0]) }.map(drop)
}

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
    // SAFETY: getegid has no preconditions.
    unsafe { libc::getegid() }
}

/// `pidfd_open(pid, 0)`, close-on-exec.
pub(crate) fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: plain integer arguments.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor (O_CLOEXEC is implied); nothing else owns
    // it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Sends a signal through a pidfd (no pid-reuse race).
pub(crate) fn pidfd_send_signal(pidfd: BorrowedFd<'_>, signal: c_int) -> io::Result<()> {
    // SAFETY: plain arguments; a null siginfo means "as if by kill(2)".
    let result = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            signal,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
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
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// `kill(pid, signal)`, ignoring errors (the process may already be gone).
pub(crate) fn kill_pid(pid: libc::pid_t, signal: c_int) {
    // SAFETY: plain integer arguments; callers only pass pids read from cgroups they own.
    unsafe { libc::kill(pid, signal) };
}

#[cfg(test)]
mod tests {
    //! `clone3(CLONE_INTO_CGROUP)` against a real cgroup2 directory. The machine may lack the
    //! v2 memory and pids controllers (then the sandbox uses v1), but placing a child at birth
    //! works on any cgroup2 mount, controllers or not.

    use std::ffi::CString;
    use std::os::fd::AsFd;
    use std::path::PathBuf;

    use super::*;

    struct Exec {
        program: CString,
        argv: [*const libc::c_char; 3],
        envp: [*const libc::c_char; 1],
    }

    extern "C" fn exec_entry(argument: *mut c_void) -> c_int {
        // SAFETY: the test passes a pointer to a live `Exec`; the parent is suspended
        // (CLONE_VFORK) until this child execs or exits.
        let exec = unsafe { &*argument.cast_const().cast::<Exec>() };
        execute(&exec.program, &exec.argv, &exec.envp);
        exit_child(127)
    }

    /// Our own cgroup in the cgroup2 hierarchy, if one is mounted.
    fn own_cgroup2_directory() -> Option<PathBuf> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let mount_point = mountinfo.lines().find_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            right
                .starts_with("cgroup2 ")
                .then(|| left.split(' ').nth(4).map(PathBuf::from))?
        })?;
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let path = own.lines().find_map(|line| line.strip_prefix("0::"))?;
        Some(mount_point.join(path.trim_start_matches('/')))
    }

    #[test]
    fn clone3_places_the_child_in_the_cgroup_at_birth() {
        if !CAN_CLONE_INTO_CGROUP || effective_uid() != 0 {
            eprintln!("skipped: needs root and an x86_64 build");
            return;
        }
        let Some(base) = own_cgroup2_directory() else {
            eprintln!("skipped: no cgroup2 mount");
            return;
        };
        let name = format!("rlvr-sandbox-{}-clone3-test", std::process::id());
        let directory = base.join(&name);
        std::fs::create_dir(&directory).expect("create test cgroup");
        let handle = std::fs::File::open(&directory).expect("open test cgroup");
        let program = CString::new("/usr/bin/sleep").expect("c string");
        let seconds = CString::new("30").expect("c string");
        let exec = Exec {
            argv: [program.as_ptr(), seconds.as_ptr(), std::ptr::null()],
            envp: [std::ptr::null()],
            program,
        };
        let argument = (&exec as *const Exec).cast_mut().cast::<c_void>();
        let (pid, pidfd) =
            clone3_vfork(0, handle.as_fd(), exec_entry, argument).expect("clone3 into cgroup");
        let membership = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).expect("read");
        let procs = std::fs::read_to_string(directory.join("cgroup.procs")).expect("read");
        pidfd_send_signal(pidfd.as_fd(), libc::SIGKILL).expect("kill");
        let reaped = wait_child(pid, true).expect("wait").expect("reaped");
        std::fs::remove_dir(&directory).expect("remove test cgroup");
        assert!(
            membership
                .lines()
                .any(|line| line.starts_with("0::") && line.ends_with(&name)),
            "{membership}"
        );
        assert_eq!(procs.trim(), pid.to_string());
        assert!(libc::WIFSIGNALED(reaped.status));
    }
}
