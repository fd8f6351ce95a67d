//! The seccomp filter: a deny-list compiled once per [`crate::Sandbox`] with seccompiler.
//!
//! Denied with `EPERM`: debugging other processes (ptrace, process_vm_*), mount and namespace
//! changes, the kernel keyring, bpf, perf events, io_uring, module and kexec loading, reboot,
//! swap, userfaultfd, file handles, SysV IPC and POSIX message queue creation, `clone`/`clone3` creating namespaces (clone3 is refused
//! with ENOSYS so libc falls back to clone, whose flags we can inspect), and `socket`/
//! `socketpair` for any family but AF_UNIX. A prefix added here kills the process for any
//! syscall from a foreign ABI (i386 via `int 0x80`, and x32 numbers on x86_64).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::error::SandboxError;
use crate::sys::BpfInstruction;

const DENIED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_userfaultfd,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_pidfd_getfd,
    libc::SYS_acct,
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

const NAMESPACE_FLAGS: [i32; 7] = [
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

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
        source: std::io::Error::other(error.to_string()),
    }
}

fn deny_filter() -> Result<BpfProgram, SandboxError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for &syscall in DENIED {
        rules.insert(syscall, Vec::new());
    }
    let not_unix = || SeccompRule::new(vec![condition(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?]);
    rules.insert(libc::SYS_socket, vec![not_unix().map_err(compile_error)?]);
    rules.insert(
        libc::SYS_socketpair,
        vec![not_unix().map_err(compile_error)?],
    );
    let clone_rules = NAMESPACE_FLAGS
        .iter()
        .map(|&flag| {
            let flag = flag as u64;
            SeccompRule::new(vec![condition(0, SeccompCmpOp::MaskedEq(flag), flag)?])
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(compile_error)?;
    rules.insert(libc::SYS_clone, clone_rules);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        TargetArch::x86_64,
    )
    .map_err(compile_error)?;
    BpfProgram::try_from(filter).map_err(compile_error)
}

fn clone3_filter() -> Result<BpfProgram, SandboxError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_clone3, Vec::new());
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        TargetArch::x86_64,
    )
    .map_err(compile_error)?;
    BpfProgram::try_from(filter).map_err(compile_error)
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

/// The complete program: foreign-ABI guard, then the clone3 rule, then the deny-list. Each
/// seccompiler program starts by reloading the arch and number itself, so concatenating them
/// is safe; the first `return` reached wins, and each part returns ALLOW only when its own
/// rules do not match, so they are chained by rewriting those ALLOW returns into jumps.
pub(crate) fn build() -> Result<Vec<BpfInstruction>, SandboxError> {
    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    const LOAD_WORD_ABSOLUTE: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    const JUMP_EQUAL: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    const JUMP_GREATER_EQUAL: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
    const RETURN: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    let mut program = vec![
        statement(LOAD_WORD_ABSOLUTE, 4), // seccomp_data.arch
        jump(JUMP_EQUAL, AUDIT_ARCH_X86_64, 1, 0),
        statement(RETURN, libc::SECCOMP_RET_KILL_PROCESS),
        statement(LOAD_WORD_ABSOLUTE, 0), // seccomp_data.nr
        jump(JUMP_GREATER_EQUAL, X32_SYSCALL_BIT, 0, 1),
        statement(RETURN, libc::SECCOMP_RET_KILL_PROCESS),
    ];
    let parts = [clone3_filter()?, deny_filter()?];
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
