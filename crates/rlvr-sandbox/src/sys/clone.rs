//! The clone machinery: children that share our memory (`CLONE_VM`), started on a stack of
//! their own with every signal blocked around the call, through glibc's `clone` or a `clone3`
//! trampoline (which can also place the child in a cgroup at birth), and the entry points
//! those children start in.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use libc::{c_int, c_void};

use super::Errno;
use crate::isolation::{self, ChildPlan};
use crate::user_namespace::{self, HolderPlan};

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

#[cfg(test)]
mod tests {
    //! `clone3(CLONE_INTO_CGROUP)` against a real cgroup2 directory. The machine may lack the
    //! v2 memory and pids controllers (then the sandbox uses v1), but placing a child at birth
    //! works on any cgroup2 mount, controllers or not.

    use std::ffi::CString;
    use std::os::fd::AsFd;
    use std::path::PathBuf;

    use super::*;
    use crate::sys::{effective_uid, execute, exit_child, pidfd_send_signal, wait_child};

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
        // What cannot run here fails under `RLVR_REQUIRE_EVERYTHING=1` (CI), as everywhere.
        let skip = rlvr_test_support::cannot_run_here;
        if !CAN_CLONE_INTO_CGROUP || effective_uid() != 0 {
            return skip("needs root and an x86_64 build");
        }
        let Some(base) = own_cgroup2_directory() else {
            return skip("no cgroup2 mount");
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
