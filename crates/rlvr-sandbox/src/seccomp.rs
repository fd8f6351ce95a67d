//! The seccomp filters, compiled once per [`crate::Sandbox`] with seccompiler: one for programs,
//! one for supervisors (the warm runner), which differ in a single rule, each in two variants:
//! sockets of `AF_UNIX` only, or also `AF_INET` and `AF_INET6` for a process with a private
//! loopback ([`crate::Network::PrivateLoopback`], whose namespace has no other interface).
//!
//! Three kinds of answer, so that tampering is visible without breaking honest programs:
//!
//! * **kill the process** (`SECCOMP_RET_KILL_PROCESS`, the process dies of SIGSYS) for calls no
//!   honest test program makes and every escape or tampering attempt needs: debugging other
//!   processes (`ptrace`, `process_vm_*`, `process_madvise`, `pidfd_getfd`), the mount family,
//!   namespace changes (`unshare`, `setns`, `clone` with a namespace flag), the kernel keyring,
//!   `bpf`, `perf_event_open`, `userfaultfd`, `open_by_handle_at`, module and kexec loading,
//!   `reboot`, swap, `acct`, `iopl`/`ioperm`, and any system call of a foreign ABI (i386 via
//!   `int 0x80`, x32 numbers). A supervisor may call `unshare(CLONE_NEWPID)` and
//!   `setns(fd, CLONE_NEWPID)` (a PID namespace per test), `mount` with `MS_NOSUID | MS_NODEV`
//!   and `umount2` with `MNT_DETACH` (a fresh work directory per job); its test children drop
//!   every capability before running a solution, so the kernel refuses them those (EPERM).
//! * **fail with an errno** for calls that honest programs and libraries probe, or that are
//!   merely useless here: `clone3` and `io_uring_*` get `ENOSYS` (glibc falls back to `clone`,
//!   whose flags we can inspect; libuv falls back to threads), SysV IPC and POSIX message queue
//!   creation, sockets of any family but `AF_UNIX` (and the internet ones with a private
//!   loopback), `name_to_handle_at`, `kcmp`, `quotactl`,
//!   `syslog`, `personality` and `landlock_create_ruleset` get `EPERM`; `openat2` gets
//!   `ENOSYS` and `open`/`openat` with `O_TMPFILE` get `EOPNOTSUPP` (an inode outside every
//!   directory would move the work directory's inode numbers unseen: runner/job.py).
//! * allow everything else.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::error::SandboxError;
use crate::request::Network;
use crate::sys::BpfInstruction;

/// The architecture the filters are compiled for: the one rlvr is built for.
#[cfg(target_arch = "x86_64")]
const TARGET_ARCH: TargetArch = TargetArch::x86_64;
#[cfg(target_arch = "aarch64")]
const TARGET_ARCH: TargetArch = TargetArch::aarch64;

/// `seccomp_data.arch` of the native ABI (`AUDIT_ARCH_X86_64`, `AUDIT_ARCH_AARCH64`): any other
/// value (i386 via `int 0x80`, 32-bit ARM compat) is a foreign ABI and kills the process.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH_NATIVE: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH_NATIVE: u32 = 0xC000_00B7;

/// Calls that kill the process, for programs and supervisors alike.
pub(crate) const KILLED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_process_madvise,
    libc::SYS_pidfd_getfd,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_open_by_handle_at,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
];

/// Calls that fail with `EPERM`.
pub(crate) const REFUSED: &[i64] = &[
    libc::SYS_name_to_handle_at,
    libc::SYS_kcmp,
    libc::SYS_quotactl,
    libc::SYS_syslog,
    libc::SYS_personality,
    libc::SYS_landlock_create_ruleset,
    // SysV IPC and POSIX message queues outlive their creator inside the IPC namespace: the
    // warm runner serves several jobs from one sandbox, so these would be a channel from one
    // job's tests to the next (isolate denies the same cross-run channels).
    libc::SYS_shmget,
    libc::SYS_msgget,
    libc::SYS_semget,
    libc::SYS_mq_open,
    libc::SYS_mq_unlink,
];

/// Calls that fail with `ENOSYS`, as on a kernel without them: probed by glibc and libuv.
/// `openat2` takes its flags in a structure a filter cannot read, so it could create an
/// `O_TMPFILE` inode (see [`tmpfile_part`]); nothing falls short without it (glibc's `open` and
/// every runtime here use `openat`).
pub(crate) const UNSUPPORTED: &[i64] = &[
    libc::SYS_openat2,
    libc::SYS_clone3,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
];

const NAMESPACE_FLAGS: [i32; 8] = [
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
    libc::CLONE_NEWTIME,
];

/// Which filter: a program's, or a supervisor's (may create a PID namespace for its children).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Program,
    Supervisor,
}

/// The four filters of a [`crate::Sandbox`]: each role with each network.
#[derive(Debug)]
pub(crate) struct Filters {
    program: Vec<BpfInstruction>,
    supervisor: Vec<BpfInstruction>,
    program_with_loopback: Vec<BpfInstruction>,
    supervisor_with_loopback: Vec<BpfInstruction>,
}

impl Filters {
    pub(crate) fn build() -> Result<Self, SandboxError> {
        Ok(Filters {
            program: build(Role::Program, Network::Isolated)?,
            supervisor: build(Role::Supervisor, Network::Isolated)?,
            program_with_loopback: build(Role::Program, Network::PrivateLoopback)?,
            supervisor_with_loopback: build(Role::Supervisor, Network::PrivateLoopback)?,
        })
    }

    /// The filter of a process of `role` that sees `network`.
    pub(crate) fn of(&self, role: Role, network: Network) -> &[BpfInstruction] {
        match (role, network) {
            (Role::Program, Network::Isolated) => &self.program,
            (Role::Supervisor, Network::Isolated) => &self.supervisor,
            (Role::Program, Network::PrivateLoopback) => &self.program_with_loopback,
            (Role::Supervisor, Network::PrivateLoopback) => &self.supervisor_with_loopback,
        }
    }
}

fn condition(
    argument: u8,
    operation: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, seccompiler::BackendError> {
    SeccompCondition::new(argument, SeccompCmpArgLen::Qword, operation, value)
}

fn compile_error(error: impl std::fmt::Display) -> SandboxError {
    SandboxError::System {
        action: "seccomp compilation",
        error: std::io::Error::other(error.to_string()),
    }
}

fn part(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    action: SeccompAction,
) -> Result<BpfProgram, SandboxError> {
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, action, TARGET_ARCH)
        .map_err(compile_error)?;
    BpfProgram::try_from(filter).map_err(compile_error)
}

fn every_call(calls: &[i64]) -> BTreeMap<i64, Vec<SeccompRule>> {
    calls.iter().map(|&call| (call, Vec::new())).collect()
}

fn kill_part(role: Role) -> Result<BpfProgram, SandboxError> {
    let mut rules = every_call(KILLED);
    let clone_rules = NAMESPACE_FLAGS
        .iter()
        .map(|&flag| {
            let flag = flag as u64;
            SeccompRule::new(vec![condition(0, SeccompCmpOp::MaskedEq(flag), flag)?])
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(compile_error)?;
    rules.insert(libc::SYS_clone, clone_rules);
    let new_pid = libc::CLONE_NEWPID as u64;
    match role {
        Role::Program => {
            rules.insert(libc::SYS_unshare, Vec::new());
            rules.insert(libc::SYS_setns, Vec::new());
        }
        Role::Supervisor => {
            let other_than = |argument: u8| {
                condition(argument, SeccompCmpOp::Ne, new_pid)
                    .and_then(|condition| SeccompRule::new(vec![condition]))
                    .map_err(compile_error)
            };
            rules.insert(libc::SYS_unshare, vec![other_than(0)?]);
            rules.insert(libc::SYS_setns, vec![other_than(1)?]);
            // Between jobs the runner mounts a fresh tmpfs on the work directory, and once a
            // private procfs to open `ns_last_pid` (fresh PID and inode numbers per job, issue
            // 22): `mount` with exactly MS_NOSUID | MS_NODEV and `umount2` with exactly
            // MNT_DETACH. Its test children hold no capability, so the kernel refuses them
            // those (EPERM); any other flags still kill.
            let mount_flags = libc::MS_NOSUID | libc::MS_NODEV;
            let unless = |argument: u8, value: u64| {
                condition(argument, SeccompCmpOp::Ne, value)
                    .and_then(|condition| SeccompRule::new(vec![condition]))
                    .map_err(compile_error)
            };
            rules.insert(libc::SYS_mount, vec![unless(3, mount_flags)?]);
            rules.insert(libc::SYS_umount2, vec![unless(1, libc::MNT_DETACH as u64)?]);
        }
    }
    part(rules, SeccompAction::KillProcess)
}

/// The socket families a process may create: `AF_UNIX`, and with a private loopback the
/// internet ones (its namespace has `lo` and nothing else; `AF_NETLINK`, `AF_PACKET` and the
/// rest stay refused).
fn allowed_families(network: Network) -> &'static [i32] {
    match network {
        Network::Isolated => &[libc::AF_UNIX],
        Network::PrivateLoopback => &[libc::AF_UNIX, libc::AF_INET, libc::AF_INET6],
    }
}

fn refuse_part(network: Network) -> Result<BpfProgram, SandboxError> {
    let mut rules = every_call(REFUSED);
    // One rule whose conditions all hold: a family that is none of the allowed ones.
    let other_family = || {
        let conditions = allowed_families(network)
            .iter()
            .map(|&family| condition(0, SeccompCmpOp::Ne, family as u64))
            .collect::<Result<Vec<_>, _>>()?;
        SeccompRule::new(conditions)
    };
    rules.insert(
        libc::SYS_socket,
        vec![other_family().map_err(compile_error)?],
    );
    rules.insert(
        libc::SYS_socketpair,
        vec![other_family().map_err(compile_error)?],
    );
    part(rules, SeccompAction::Errno(libc::EPERM as u32))
}

/// `open` and `openat` with `O_TMPFILE` fail with `EOPNOTSUPP`, as on a file system without it
/// (Python's `tempfile` then falls back to a named file). An `O_TMPFILE` inode is created
/// without an entry in any directory, so the runner's evidence that a test created nothing in
/// the work directory (its mtime and ctime, issue 32) would miss it, and the tmpfs's inode
/// numbers would move for the next test unseen.
fn tmpfile_part() -> Result<BpfProgram, SandboxError> {
    // O_TMPFILE is __O_TMPFILE | O_DIRECTORY; the first bit alone says "temporary file".
    let temporary = (libc::O_TMPFILE & !libc::O_DIRECTORY) as u64;
    let with_tmpfile = |argument: u8| {
        condition(argument, SeccompCmpOp::MaskedEq(temporary), temporary)
            .and_then(|condition| SeccompRule::new(vec![condition]))
            .map_err(compile_error)
    };
    let mut rules = BTreeMap::new();
    #[cfg(target_arch = "x86_64")]
    rules.insert(libc::SYS_open, vec![with_tmpfile(1)?]);
    rules.insert(libc::SYS_openat, vec![with_tmpfile(2)?]);
    part(rules, SeccompAction::Errno(libc::EOPNOTSUPP as u32))
}

fn statement(code: u16, k: u32) -> BpfInstruction {
    BpfInstruction {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> BpfInstruction {
    BpfInstruction { code, jt, jf, k }
}

/// The complete program for `role` and `network`: foreign-ABI guard, then the `ENOSYS` part, the kill part
/// and the `EPERM` part. Each seccompiler program starts by reloading the arch and number
/// itself, so concatenating them is safe; the first `return` reached wins, and each part
/// returns ALLOW only when its own rules do not match, so they are chained by rewriting those
/// ALLOW returns into jumps.
pub(crate) fn build(role: Role, network: Network) -> Result<Vec<BpfInstruction>, SandboxError> {
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    const LOAD_WORD_ABSOLUTE: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    const JUMP_EQUAL: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    const JUMP_GREATER_EQUAL: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
    const RETURN: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    let mut program = vec![
        statement(LOAD_WORD_ABSOLUTE, 4), // seccomp_data.arch
        jump(JUMP_EQUAL, AUDIT_ARCH_NATIVE, 1, 0),
        statement(RETURN, libc::SECCOMP_RET_KILL_PROCESS),
        statement(LOAD_WORD_ABSOLUTE, 0), // seccomp_data.nr
        jump(JUMP_GREATER_EQUAL, X32_SYSCALL_BIT, 0, 1),
        statement(RETURN, libc::SECCOMP_RET_KILL_PROCESS),
    ];
    let parts = [
        part(
            every_call(UNSUPPORTED),
            SeccompAction::Errno(libc::ENOSYS as u32),
        )?,
        kill_part(role)?,
        tmpfile_part()?,
        refuse_part(network)?,
    ];
    for (index, part) in parts.iter().enumerate() {
        let last = index + 1 == parts.len();
        let length = part.len();
        for (position, instruction) in part.iter().enumerate() {
            let mut instruction = BpfInstruction {
                code: instruction.code,
                jt: instruction.jt,
                jf: instruction.jf,
                k: instruction.k,
            };
            if !last && instruction.code == RETURN && instruction.k == libc::SECCOMP_RET_ALLOW {
                // "allow" in a non-final part means "continue with the next part".
                let skip = (length - position - 1) as u32;
                instruction = statement((libc::BPF_JMP | libc::BPF_JA) as u16, skip);
            }
            program.push(instruction);
        }
    }
    Ok(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_12_no_call_is_both_killed_and_refused() {
        for call in KILLED {
            assert!(
                !REFUSED.contains(call) && !UNSUPPORTED.contains(call),
                "{call}"
            );
        }
        for call in REFUSED {
            assert!(!UNSUPPORTED.contains(call), "{call}");
        }
    }

    #[test]
    fn issue_12_both_roles_compile_and_differ() {
        let program = build(Role::Program, Network::Isolated).expect("program filter");
        let supervisor = build(Role::Supervisor, Network::Isolated).expect("supervisor filter");
        assert!(program.len() < 4096 && supervisor.len() < 4096);
        let encode = |filter: &[BpfInstruction]| {
            filter
                .iter()
                .map(|instruction| {
                    (
                        instruction.code,
                        instruction.jt,
                        instruction.jf,
                        instruction.k,
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_ne!(encode(&program), encode(&supervisor));
        for role in [Role::Program, Role::Supervisor] {
            let loopback = build(role, Network::PrivateLoopback).expect("loopback filter");
            let isolated = build(role, Network::Isolated).expect("isolated filter");
            assert_ne!(encode(&loopback), encode(&isolated), "{role:?}");
        }
    }
}
