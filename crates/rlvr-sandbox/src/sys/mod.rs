//! The only module with `unsafe`: thin wrappers over Linux system calls, each `unsafe` block
//! with its `SAFETY` line.
//!
//! * [`raw`]: the raw `syscall` instruction and [`raw::call`], which every child-side wrapper
//!   goes through.
//! * [`child`]: calls made between `clone` and `execve` in children that share the parent's
//!   memory (`CLONE_VM`, like `posix_spawn`). They must be async-signal-safe: no allocation, no
//!   locks, no glibc wrappers that touch process-wide state (glibc's `setresuid` would broadcast
//!   to the *parent's* threads), and no `errno` (the sandboxed child runs while the verifier
//!   thread that shares its thread-local storage runs too). Every one is a raw `syscall`
//!   instruction on data the parent prepared, returning the errno on failure.
//! * [`clone`]: starting those children (stacks, blocked signals, `clone`, `clone3`, entries).
//! * [`host`]: parent-side calls (reaping, signals, ids, the network namespace, Landlock).
//!
//! The rest of the crate calls everything as `sys::name`, re-exported here.

mod child;
mod clone;
mod host;
mod raw;

pub(crate) use child::{
    bring_up_loopback, change_directory, clear_capabilities, clear_groups, close_range, close_raw,
    copy_file, duplicate_to, execute, exit_child, install_seccomp, kill_raw,
    landlock_restrict_self, make_directory, mount, move_descriptor, new_session, open_raw,
    pivot_root, process_control, read_byte, readable_now, reset_signal_handlers, set_hostname,
    set_namespace, set_resource_limit, set_user, symbolic_link, unblock_all_signals,
    unmount_detach, unshare_raw, write_all_raw, write_process_file, yield_processor,
};
pub(crate) use clone::{
    CAN_CLONE_INTO_CGROUP, ChildEntry, ChildStack, clone_holder, clone_sandbox, clone_vfork,
    clone3_vfork, first_step_entry, sandbox_entry,
};
pub(crate) use host::{
    create_empty_network_namespace, effective_gid, effective_uid, kill_pid, landlock_abi_version,
    landlock_scoped_ruleset, pidfd_open, pidfd_send_signal, user_name, wait_child,
};

/// An errno value reported by a failed child-side system call.
pub(crate) type Errno = i32;

/// A BPF instruction as the kernel expects it (`struct sock_filter`).
pub(crate) type BpfInstruction = libc::sock_filter;
