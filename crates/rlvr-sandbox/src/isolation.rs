//! The isolation sequence: what the child does between `clone` and `execve`, one step a line.
//!
//! Everything the child touches is prepared by the parent in a [`ChildPlan`] (C strings, pointer
//! arrays, the BPF program, descriptors), because the child shares the parent's memory and may
//! only make async-signal-safe system calls. Each step that fails writes `(step, errno)` to the
//! error pipe and exits with status 127; stderr is useless after `pivot_root`.

use std::ffi::CString;
use std::os::fd::RawFd;

use crate::sys::{self, BpfInstruction, Errno};

/// One step of the sequence, as reported to the parent when it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Step {
    /// Joining the run's cgroups.
    JoinCgroups = 1,
    /// Starting a new session (process group).
    NewSession,
    /// Entering the shared empty network namespace.
    EnterNetworkNamespace,
    /// Setting the hostname of the new UTS namespace.
    SetHostname,
    /// Making every mount private so nothing propagates back to the host.
    PrivateMounts,
    /// Mounting the tmpfs that becomes the new root.
    MountRoot,
    /// Creating directories, symlinks, device nodes and read-only bind mounts in the new root.
    PopulateRoot,
    /// Mounting a fresh `/proc` for the new PID namespace.
    MountProc,
    /// Mounting the size-limited writable work directory.
    MountWorkDirectory,
    /// Switching to the new root and detaching the old one.
    PivotRoot,
    /// Remounting the new root read-only.
    ReadOnlyRoot,
    /// Writing the program's files into the work directory.
    WriteFiles,
    /// Entering the work directory.
    EnterWorkDirectory,
    /// Setting resource limits.
    ResourceLimits,
    /// Placing stdin, stdout, stderr and extra descriptors.
    WireDescriptors,
    /// Closing every other descriptor.
    CloseDescriptors,
    /// Dropping to the unprivileged uid and gid.
    DropPrivileges,
    /// Asking for SIGKILL when the verifier thread dies.
    ParentDeathSignal,
    /// Setting no_new_privs.
    NoNewPrivileges,
    /// Applying the Landlock scope (abstract sockets, signals).
    LandlockScope,
    /// Installing the seccomp filter.
    Seccomp,
    /// Executing the program.
    Execute,
}

impl Step {
    const ALL: [Step; 22] = [
        Step::JoinCgroups,
        Step::NewSession,
        Step::EnterNetworkNamespace,
        Step::SetHostname,
        Step::PrivateMounts,
        Step::MountRoot,
        Step::PopulateRoot,
        Step::MountProc,
        Step::MountWorkDirectory,
        Step::PivotRoot,
        Step::ReadOnlyRoot,
        Step::WriteFiles,
        Step::EnterWorkDirectory,
        Step::ResourceLimits,
        Step::WireDescriptors,
        Step::CloseDescriptors,
        Step::DropPrivileges,
        Step::ParentDeathSignal,
        Step::NoNewPrivileges,
        Step::LandlockScope,
        Step::Seccomp,
        Step::Execute,
    ];

    pub(crate) fn from_code(code: u32) -> Option<Step> {
        Step::ALL.into_iter().find(|step| *step as u32 == code)
    }

    /// A short lowercase name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Step::JoinCgroups => "join cgroups",
            Step::NewSession => "new session",
            Step::EnterNetworkNamespace => "enter network namespace",
            Step::SetHostname => "set hostname",
            Step::PrivateMounts => "make mounts private",
            Step::MountRoot => "mount root tmpfs",
            Step::PopulateRoot => "populate root",
            Step::MountProc => "mount /proc",
            Step::MountWorkDirectory => "mount work directory",
            Step::PivotRoot => "pivot_root",
            Step::ReadOnlyRoot => "remount root read-only",
            Step::WriteFiles => "write program files",
            Step::EnterWorkDirectory => "enter work directory",
            Step::ResourceLimits => "set resource limits",
            Step::WireDescriptors => "wire descriptors",
            Step::CloseDescriptors => "close descriptors",
            Step::DropPrivileges => "drop privileges",
            Step::ParentDeathSignal => "set parent death signal",
            Step::NoNewPrivileges => "set no_new_privs",
            Step::LandlockScope => "apply landlock scope",
            Step::Seccomp => "install seccomp filter",
            Step::Execute => "execve",
        }
    }
}

/// One operation that builds the new root (paths are absolute under the staging directory).
#[derive(Debug)]
pub(crate) enum RootOperation {
    /// `mkdir(path, 0755)`.
    Directory(CString),
    /// `symlink(target, link)`.
    Symlink { target: CString, link: CString },
    /// An empty file used as a bind-mount point for a device node.
    File(CString),
    /// A bind mount, remounted read-only (nosuid, nodev) when `read_only`.
    Bind {
        source: CString,
        target: CString,
        read_only: bool,
    },
}

/// The filesystem part of the plan (absent when mount namespaces are unavailable).
#[derive(Debug)]
pub(crate) struct FilesystemPlan {
    pub(crate) staging_root: CString,
    pub(crate) operations: Vec<RootOperation>,
    pub(crate) proc_target: CString,
    pub(crate) work_target: CString,
}

/// A file copied from a sealed memfd into the work directory before privileges are dropped.
#[derive(Debug)]
pub(crate) struct PlannedFile {
    pub(crate) path: CString,
    pub(crate) source: RawFd,
    pub(crate) length: u64,
}

/// Everything the child needs, prepared before `clone`.
pub(crate) struct ChildPlan<'sandbox> {
    pub(crate) error_pipe: RawFd,
    pub(crate) cgroup_procs: Vec<RawFd>,
    pub(crate) network_namespace: Option<RawFd>,
    pub(crate) filesystem: Option<&'sandbox FilesystemPlan>,
    /// tmpfs options of the work directory (size, owner).
    pub(crate) work_options: CString,
    pub(crate) files: Vec<PlannedFile>,
    pub(crate) work_directory: CString,
    pub(crate) resource_limits: Vec<(u32, u64, u64)>,
    /// `(source, target)` pairs; every source is >= 64, every target < 64.
    pub(crate) descriptors: Vec<(RawFd, RawFd)>,
    /// Inclusive ranges to close, computed so that the targets and the error pipe survive.
    pub(crate) close_ranges: Vec<(u32, u32)>,
    pub(crate) user: Option<(u32, u32)>,
    pub(crate) landlock_ruleset: Option<RawFd>,
    pub(crate) seccomp: Option<&'sandbox [BpfInstruction]>,
    pub(crate) program: CString,
    pub(crate) argv: Vec<*const libc::c_char>,
    pub(crate) envp: Vec<*const libc::c_char>,
}

const HOSTNAME: &[u8] = b"sandbox";
const READ_ONLY_FLAGS: u64 =
    libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;

/// Runs the sequence in the cloned child; on failure reports `(step, errno)` and exits 127.
pub(crate) fn run_child(plan: &ChildPlan<'_>) -> ! {
    let Err((step, errno)) = isolate_and_execute(plan);
    let mut report = [0u8; 8];
    report[..4].copy_from_slice(&(step as u32).to_ne_bytes());
    report[4..].copy_from_slice(&errno.to_ne_bytes());
    let _ = sys::write_all_raw(plan.error_pipe, &report);
    sys::exit_child(127)
}

/// The isolation sequence, in order. Each line is one step; seccomp is last before execve.
fn isolate_and_execute(plan: &ChildPlan<'_>) -> Result<std::convert::Infallible, (Step, Errno)> {
    sys::reset_signal_handlers(); // default dispositions (Rust ignores SIGPIPE)
    join_cgroups(plan).map_err(at(Step::JoinCgroups))?; // limits apply from here on
    sys::new_session().map_err(at(Step::NewSession))?; // no process group shared with us
    enter_network_namespace(plan).map_err(at(Step::EnterNetworkNamespace))?; // no network
    if plan.filesystem.is_some() {
        sys::set_hostname(HOSTNAME).map_err(at(Step::SetHostname))?; // own UTS namespace
    }
    if let Some(filesystem) = plan.filesystem {
        private_mounts().map_err(at(Step::PrivateMounts))?; // nothing propagates to the host
        mount_root(filesystem).map_err(at(Step::MountRoot))?; // empty tmpfs as the new root
        populate_root(filesystem).map_err(at(Step::PopulateRoot))?; // ro /usr, interpreter, /dev
        mount_proc(filesystem).map_err(at(Step::MountProc))?; // fresh /proc: own PID namespace
        mount_work(filesystem, &plan.work_options).map_err(at(Step::MountWorkDirectory))?; // the only writable place
        pivot(filesystem).map_err(at(Step::PivotRoot))?; // the host tree becomes unreachable
        sys::mount(None, c"/", None, READ_ONLY_FLAGS, None).map_err(at(Step::ReadOnlyRoot))?;
    }
    write_files(plan).map_err(at(Step::WriteFiles))?; // program source, runner scripts
    sys::change_directory(&plan.work_directory).map_err(at(Step::EnterWorkDirectory))?;
    set_limits(plan).map_err(at(Step::ResourceLimits))?; // CPU, FSIZE, NOFILE, CORE, STACK, AS
    wire_descriptors(plan).map_err(at(Step::WireDescriptors))?; // stdio and extra fds
    close_descriptors(plan).map_err(at(Step::CloseDescriptors))?; // nothing else leaks in
    drop_privileges(plan).map_err(at(Step::DropPrivileges))?; // unprivileged uid/gid
    sys::process_control(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_long)
        .map_err(at(Step::ParentDeathSignal))?; // verifier dies -> sandbox dies
    sys::process_control(libc::PR_SET_NO_NEW_PRIVS, 1).map_err(at(Step::NoNewPrivileges))?;
    landlock_scope(plan).map_err(at(Step::LandlockScope))?; // no abstract sockets, no signals out
    install_seccomp(plan).map_err(at(Step::Seccomp))?; // last: the filter also covers execve
    sys::unblock_all_signals(); // the parent blocked them around clone
    Err((
        Step::Execute,
        sys::execute(&plan.program, &plan.argv, &plan.envp),
    ))
}

fn at(step: Step) -> impl Fn(Errno) -> (Step, Errno) {
    move |errno| (step, errno)
}

fn join_cgroups(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    for &procs in &plan.cgroup_procs {
        sys::write_all_raw(procs, b"0")?;
    }
    Ok(())
}

fn enter_network_namespace(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    match plan.network_namespace {
        Some(fd) => sys::set_namespace(fd, libc::CLONE_NEWNET),
        None => Ok(()),
    }
}

fn private_mounts() -> Result<(), Errno> {
    sys::mount(None, c"/", None, libc::MS_REC | libc::MS_PRIVATE, None)
}

fn mount_root(filesystem: &FilesystemPlan) -> Result<(), Errno> {
    let flags = libc::MS_NOSUID | libc::MS_NODEV;
    sys::mount(
        Some(c"tmpfs"),
        &filesystem.staging_root,
        Some(c"tmpfs"),
        flags,
        Some(c"size=1m,nr_inodes=256,mode=0755"),
    )
}

fn populate_root(filesystem: &FilesystemPlan) -> Result<(), Errno> {
    for operation in &filesystem.operations {
        match operation {
            RootOperation::Directory(path) => sys::make_directory(path, 0o755)?,
            RootOperation::Symlink { target, link } => sys::symbolic_link(target, link)?,
            RootOperation::File(path) => {
                sys::close_raw(sys::open_raw(path, libc::O_CREAT | libc::O_WRONLY, 0o644)?);
            }
            RootOperation::Bind {
                source,
                target,
                read_only,
            } => {
                sys::mount(Some(source), target, None, libc::MS_BIND, None)?;
                if *read_only {
                    sys::mount(None, target, None, READ_ONLY_FLAGS, None)?;
                }
            }
        }
    }
    Ok(())
}

fn mount_proc(filesystem: &FilesystemPlan) -> Result<(), Errno> {
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    sys::mount(
        Some(c"proc"),
        &filesystem.proc_target,
        Some(c"proc"),
        flags,
        None,
    )
}

fn mount_work(filesystem: &FilesystemPlan, options: &CString) -> Result<(), Errno> {
    let flags = libc::MS_NOSUID | libc::MS_NODEV;
    let options = Some(options.as_c_str());
    sys::mount(
        Some(c"tmpfs"),
        &filesystem.work_target,
        Some(c"tmpfs"),
        flags,
        options,
    )
}

fn pivot(filesystem: &FilesystemPlan) -> Result<(), Errno> {
    sys::change_directory(&filesystem.staging_root)?;
    sys::pivot_root(c".", c".")?; // the old root is now stacked under the new one at "/"
    sys::unmount_detach(c".")?;
    sys::change_directory(c"/")
}

fn write_files(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    for file in &plan.files {
        let flags = libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY;
        let target = sys::open_raw(&file.path, flags, 0o444)?;
        let copied = sys::copy_file(file.source, target, file.length);
        sys::close_raw(target);
        copied?;
    }
    Ok(())
}

fn set_limits(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    for &(resource, soft, hard) in &plan.resource_limits {
        sys::set_resource_limit(resource, soft, hard)?;
    }
    Ok(())
}

fn wire_descriptors(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    for &(source, target) in &plan.descriptors {
        sys::duplicate_to(source, target)?;
    }
    Ok(())
}

fn close_descriptors(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    for &(first, last) in &plan.close_ranges {
        sys::close_range(first, last)?;
    }
    Ok(())
}

fn drop_privileges(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    match plan.user {
        Some((uid, gid)) => sys::become_user(uid, gid),
        None => Ok(()),
    }
}

fn landlock_scope(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    match plan.landlock_ruleset {
        Some(ruleset) => sys::landlock_restrict_self(ruleset),
        None => Ok(()),
    }
}

fn install_seccomp(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    match plan.seccomp {
        Some(program) => sys::install_seccomp(program),
        None => Ok(()),
    }
}
