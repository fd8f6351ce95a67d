//! The isolation sequence: what happens between `clone` and `execve`, one step a line.
//!
//! Two processes take part, both sharing the verifier's memory (`CLONE_VM`):
//!
//! * the **first step** (`run_first_step`), cloned with `CLONE_VFORK` (the verifier thread waits
//!   for it to exit): joins the run's cgroups, enters the sandbox's own user namespace and the
//!   shared empty network namespace, builds the minimal root in a mount namespace of its own
//!   (still with the caller's host uid for path lookups, so an interpreter under a private home
//!   directory can be bound), clones the sandboxed process into fresh user, mount, PID, IPC and
//!   UTS namespaces (`CLONE_PARENT`: it becomes the verifier's child), writes its uid and gid
//!   maps, releases it and exits. The modes (root, user namespace, degraded) differ only in
//!   what the sandbox's user namespace maps, prepared once per [`crate::Sandbox`].
//! * the **sandboxed process** (`run_sandboxed`) waits for its id maps, binds the prepared root
//!   again (the copy it inherited is locked), mounts its own `/proc` and `/tmp`, pivots into
//!   it, drops to its identity, installs seccomp last and executes the program.
//!
//! Everything either touches is prepared by the parent in a [`ChildPlan`] (C strings, pointer
//! arrays, the BPF program, descriptors, id map texts), because they share the parent's memory
//! and may only make async-signal-safe system calls. Each step that fails writes
//! `(step, errno)` to the error pipe and exits with status 127; stderr is useless after
//! `pivot_root`.

use std::ffi::{CStr, CString};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::sys::{self, BpfInstruction, ChildEntry, Errno};

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
    /// Dropping to the program's uid and gid.
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
    /// Entering the sandbox's own user namespace.
    EnterUserNamespace,
    /// Becoming the user namespace's root, so the sandboxed process's namespace can be created.
    BecomeNamespaceRoot,
    /// Cloning the sandboxed process into its new namespaces.
    CloneSandbox,
    /// Writing the sandboxed process's uid and gid maps.
    WriteIdMaps,
    /// Letting the sandboxed process go on.
    ReleaseSandbox,
    /// Waiting for the id maps to be written.
    WaitForIdMaps,
    /// Removing capabilities from the bounding set and locking root's privileges.
    LimitCapabilities,
    /// Emptying the capability sets.
    ClearCapabilities,
    /// Creating the mount namespace the root is built in.
    NewMountNamespace,
    /// Binding the prepared root again, so the copy this process pivots into is not locked.
    BindRoot,
    /// Bringing up the loopback interface of a private network namespace.
    BringUpLoopback,
    /// Writing `/etc/hosts` (the name `localhost`) for a private loopback.
    WriteHosts,
}

impl Step {
    const ALL: [Step; 34] = [
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
        Step::EnterUserNamespace,
        Step::BecomeNamespaceRoot,
        Step::CloneSandbox,
        Step::WriteIdMaps,
        Step::ReleaseSandbox,
        Step::WaitForIdMaps,
        Step::LimitCapabilities,
        Step::ClearCapabilities,
        Step::NewMountNamespace,
        Step::BindRoot,
        Step::BringUpLoopback,
        Step::WriteHosts,
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
            Step::EnterUserNamespace => "enter the sandbox user namespace",
            Step::BecomeNamespaceRoot => "become the user namespace's root",
            Step::CloneSandbox => "clone the sandboxed process",
            Step::WriteIdMaps => "write uid and gid maps",
            Step::ReleaseSandbox => "release the sandboxed process",
            Step::WaitForIdMaps => "wait for the id maps",
            Step::LimitCapabilities => "limit capabilities",
            Step::ClearCapabilities => "clear capabilities",
            Step::NewMountNamespace => "create the mount namespace",
            Step::BindRoot => "bind the prepared root",
            Step::BringUpLoopback => "bring up the loopback interface",
            Step::WriteHosts => "write /etc/hosts",
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
    /// `etc` and `etc/hosts` under the staging root (a private loopback's `localhost`).
    pub(crate) etc_directory: CString,
    pub(crate) hosts_file: CString,
}

/// A file copied from a sealed memfd into the work directory before privileges are dropped.
#[derive(Debug)]
pub(crate) struct PlannedFile {
    pub(crate) path: CString,
    pub(crate) source: RawFd,
    pub(crate) length: u64,
}

/// The sandbox's own user namespace, entered by the first step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UserNamespaceEntry {
    /// `/proc/<holder>/ns/user`.
    pub(crate) namespace: RawFd,
    /// Whether `setgroups` is allowed in it (root-written maps) or denied (a single self map).
    pub(crate) groups_allowed: bool,
}

/// The uid and gid maps the first step writes for the sandboxed process's new user namespace
/// (ids of the sandbox's user namespace, e.g. `0 0 1\n1 1 1\n`).
#[derive(Debug)]
pub(crate) struct IdMaps {
    pub(crate) uid_map: Vec<u8>,
    pub(crate) gid_map: Vec<u8>,
}

/// Who the program runs as, inside its user namespace.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Identity {
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    /// Drop supplementary groups (impossible where `setgroups` is denied).
    pub(crate) clear_groups: bool,
    /// Capabilities kept in the bounding set (a supervisor's); every other one is dropped.
    pub(crate) keep_capabilities: u64,
    /// Highest capability number of this kernel.
    pub(crate) last_capability: u32,
    /// Lock `SECBIT_NOROOT`: executing as uid 0 never grants capabilities.
    pub(crate) lock_no_root: bool,
}

/// Everything both children need, prepared before `clone`.
pub(crate) struct ChildPlan<'sandbox> {
    pub(crate) error_pipe: RawFd,
    pub(crate) cgroup_procs: Vec<RawFd>,
    pub(crate) user_namespace: Option<UserNamespaceEntry>,
    pub(crate) network_namespace: Option<RawFd>,
    /// The sandboxed process is cloned into a network namespace of its own
    /// (`CLONE_NEWNET` is in `sandbox_flags`), brings its `lo` up, and finds `localhost` in
    /// `/etc/hosts`.
    pub(crate) private_loopback: bool,
    /// Flags of the sandboxed process's clone: namespaces, `CLONE_VM | CLONE_PARENT`.
    pub(crate) sandbox_flags: u64,
    /// The sandboxed process's stack (`base`, `size`), owned by the parent.
    pub(crate) sandbox_stack: (usize, usize),
    pub(crate) sandbox_entry: ChildEntry,
    /// Written by the first step: the sandboxed process's pid (0 until cloned).
    pub(crate) sandbox_pid: AtomicI32,
    pub(crate) id_maps: Option<IdMaps>,
    /// The first step writes one byte here once the id maps are in place.
    pub(crate) release_write: RawFd,
    pub(crate) release_read: RawFd,
    pub(crate) filesystem: Option<&'sandbox FilesystemPlan>,
    /// tmpfs options of the work directory (size, owner).
    pub(crate) work_options: CString,
    /// A pidfd of the verifier's process, if it could open one: checked once the parent-death
    /// signal is set, for a verifier that died before (the signal would never come).
    pub(crate) verifier: Option<RawFd>,
    /// A supervisor's: the path of `ns_last_pid` under the staged `/proc`, opened on a
    /// private read-write procfs and left at [`LAST_PID_DESCRIPTOR`].
    pub(crate) last_pid: Option<CString>,
    pub(crate) files: Vec<PlannedFile>,
    pub(crate) work_directory: CString,
    pub(crate) resource_limits: Vec<(u32, u64, u64)>,
    /// `(source, target)` pairs; every source is >= 64, every target < 64.
    pub(crate) descriptors: Vec<(RawFd, RawFd)>,
    /// Inclusive ranges to close, computed so that the targets and the error pipe survive.
    pub(crate) close_ranges: Vec<(u32, u32)>,
    pub(crate) identity: Option<Identity>,
    pub(crate) landlock_ruleset: Option<RawFd>,
    pub(crate) seccomp: Option<&'sandbox [BpfInstruction]>,
    pub(crate) program: CString,
    pub(crate) argv: Vec<*const libc::c_char>,
    pub(crate) envp: Vec<*const libc::c_char>,
}

const HOSTNAME: &[u8] = b"sandbox";
/// `/etc/hosts` of a process with a private loopback: glibc finds `localhost` nowhere else
/// (no DNS server, no `nss-myhostname` in the minimal root).
const HOSTS: &[u8] = b"127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n";
/// Where a supervisor finds its PID namespace's `ns_last_pid`, open for writing (see
/// `mount_proc`).
pub(crate) const LAST_PID_DESCRIPTOR: RawFd = 63;
const READ_ONLY_FLAGS: u64 =
    libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
const SECURE_NO_ROOT: usize = 1 << 0;
const SECURE_NO_ROOT_LOCKED: usize = 1 << 1;
const SECURE_NO_CAP_AMBIENT_RAISE: usize = 1 << 6;
const SECURE_NO_CAP_AMBIENT_RAISE_LOCKED: usize = 1 << 7;

fn report_and_exit(plan: &ChildPlan<'_>, step: Step, errno: Errno) -> ! {
    let mut report = [0u8; 8];
    report[..4].copy_from_slice(&(step as u32).to_ne_bytes());
    report[4..].copy_from_slice(&errno.to_ne_bytes());
    let _ = sys::write_all_raw(plan.error_pipe, &report);
    sys::exit_child(127)
}

/// The first step, in the `CLONE_VFORK` child; exits 0 once the sandboxed process is released.
pub(crate) fn run_first_step(plan: &ChildPlan<'_>, argument: *mut libc::c_void) -> ! {
    match enter_and_clone(plan, argument) {
        Ok(()) => sys::exit_child(0),
        Err((step, errno)) => {
            let pid = plan.sandbox_pid.load(Ordering::SeqCst);
            if pid > 0 {
                sys::kill_raw(pid, libc::SIGKILL); // the parent reaps it (CLONE_PARENT)
            }
            report_and_exit(plan, step, errno)
        }
    }
}

/// The first step, in order. Each line is one step.
fn enter_and_clone(plan: &ChildPlan<'_>, argument: *mut libc::c_void) -> Result<(), (Step, Errno)> {
    join_cgroups(plan).map_err(at(Step::JoinCgroups))?; // limits apply from here on
    enter_user_namespace(plan).map_err(at(Step::EnterUserNamespace))?; // the sandbox's own ids
    enter_network_namespace(plan).map_err(at(Step::EnterNetworkNamespace))?; // no network
    if let Some(filesystem) = plan.filesystem {
        sys::unshare_raw(libc::CLONE_NEWNS).map_err(at(Step::NewMountNamespace))?; // ours alone
        private_mounts().map_err(at(Step::PrivateMounts))?; // nothing propagates to the host
        mount_root(filesystem).map_err(at(Step::MountRoot))?; // empty tmpfs as the new root
        populate_root(filesystem).map_err(at(Step::PopulateRoot))?; // ro /usr, interpreter, /dev
        if plan.private_loopback {
            write_hosts(filesystem).map_err(at(Step::WriteHosts))?; // `localhost` resolves
        }
        read_only_root(filesystem).map_err(at(Step::ReadOnlyRoot))?; // locked read-only below
    }
    become_namespace_root(plan).map_err(at(Step::BecomeNamespaceRoot))?; // a mapped creator
    let pid = clone_sandbox(plan, argument).map_err(at(Step::CloneSandbox))?; // new namespaces
    plan.sandbox_pid.store(pid, Ordering::SeqCst); // the parent waits for this pid
    write_id_maps(plan, pid).map_err(at(Step::WriteIdMaps))?; // its ids, from ours
    sys::write_all_raw(plan.release_write, b"1").map_err(at(Step::ReleaseSandbox))?; // go on
    Ok(())
}

/// The sandboxed process: runs the sequence; on failure reports `(step, errno)` and exits 127.
pub(crate) fn run_sandboxed(plan: &ChildPlan<'_>) -> ! {
    let Err((step, errno)) = isolate_and_execute(plan);
    report_and_exit(plan, step, errno)
}

/// The sandboxed process's sequence, in order. Each line is one step; seccomp is last before
/// execve.
fn isolate_and_execute(plan: &ChildPlan<'_>) -> Result<std::convert::Infallible, (Step, Errno)> {
    wait_for_id_maps(plan).map_err(at(Step::WaitForIdMaps))?; // ids exist from here on
    take_mapped_ids(plan).map_err(at(Step::BecomeNamespaceRoot))?; // files it creates have owners
    keep_verifier_dumpable(); // the uid change made the shared memory non-dumpable
    sys::reset_signal_handlers(); // default dispositions (Rust ignores SIGPIPE)
    sys::new_session().map_err(at(Step::NewSession))?; // no process group shared with us
    if plan.filesystem.is_some() {
        sys::set_hostname(HOSTNAME).map_err(at(Step::SetHostname))?; // own UTS namespace
    }
    if plan.private_loopback {
        sys::bring_up_loopback().map_err(at(Step::BringUpLoopback))?; // own network namespace
    }
    if let Some(filesystem) = plan.filesystem {
        bind_root(filesystem).map_err(at(Step::BindRoot))?; // an unlocked mount to pivot into
        mount_proc(filesystem, plan.last_pid.as_deref()).map_err(at(Step::MountProc))?; // fresh read-only /proc
        mount_work(filesystem, &plan.work_options).map_err(at(Step::MountWorkDirectory))?; // the only writable place
        pivot(filesystem).map_err(at(Step::PivotRoot))?; // the host tree becomes unreachable
        sys::mount(None, c"/", None, READ_ONLY_FLAGS, None).map_err(at(Step::ReadOnlyRoot))?;
    }
    write_files(plan).map_err(at(Step::WriteFiles))?; // program source, runner scripts
    sys::change_directory(&plan.work_directory).map_err(at(Step::EnterWorkDirectory))?;
    set_limits(plan).map_err(at(Step::ResourceLimits))?; // CPU, FSIZE, NOFILE, CORE, STACK, AS
    wire_descriptors(plan).map_err(at(Step::WireDescriptors))?; // stdio and extra fds
    close_descriptors(plan).map_err(at(Step::CloseDescriptors))?; // nothing else leaks in
    limit_capabilities(plan).map_err(at(Step::LimitCapabilities))?; // bounding set, SECBIT_NOROOT
    drop_privileges(plan).map_err(at(Step::DropPrivileges))?; // the program's uid and gid
    clear_capabilities(plan).map_err(at(Step::ClearCapabilities))?; // none left for a program
    keep_verifier_dumpable(); // as after every credential change before exec
    sys::process_control(libc::PR_SET_PDEATHSIG, libc::SIGKILL as usize, 0)
        .map_err(at(Step::ParentDeathSignal))?; // verifier dies -> sandbox dies
    verifier_alive(plan).map_err(at(Step::ParentDeathSignal))?; // ... or died already
    sys::process_control(libc::PR_SET_NO_NEW_PRIVS, 1, 0).map_err(at(Step::NoNewPrivileges))?;
    landlock_scope(plan).map_err(at(Step::LandlockScope))?; // no abstract sockets, no signals out
    install_seccomp(plan).map_err(at(Step::Seccomp))?; // last: the filter also covers execve
    sys::unblock_all_signals(); // the parent blocked them all around clone
    Err((
        Step::Execute,
        sys::execute(&plan.program, &plan.argv, &plan.envp),
    ))
}

/// A verifier that died before the parent-death signal was set never sends it (and its
/// death cannot be seen in `getppid`: the parent is outside this PID namespace): ESRCH.
fn verifier_alive(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    match plan.verifier {
        Some(pidfd) if sys::readable_now(pidfd)? => Err(libc::ESRCH),
        _ => Ok(()),
    }
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

fn enter_user_namespace(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    match plan.user_namespace {
        Some(entry) => sys::set_namespace(entry.namespace, libc::CLONE_NEWUSER),
        None => Ok(()),
    }
}

fn enter_network_namespace(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    match plan.network_namespace {
        Some(fd) => sys::set_namespace(fd, libc::CLONE_NEWNET),
        None => Ok(()),
    }
}

/// A user namespace can only be created by a process whose ids are mapped in its parent: the
/// verifier's own ids may not be (root's are not), so take the sandbox namespace's uid 0.
fn become_namespace_root(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    let Some(entry) = plan.user_namespace else {
        return Ok(());
    };
    if entry.groups_allowed {
        sys::clear_groups()?;
    }
    sys::set_user(0, 0)
}

fn clone_sandbox(plan: &ChildPlan<'_>, argument: *mut libc::c_void) -> Result<libc::pid_t, Errno> {
    let (stack, size) = plan.sandbox_stack;
    sys::clone_sandbox(
        plan.sandbox_flags,
        stack,
        size,
        plan.sandbox_entry,
        argument,
    )
}

/// `/proc/<pid>` files of a process whose memory is not dumpable belong to root. The sandboxed
/// process shares the verifier's memory until it execs, and its credential changes mark that
/// memory not dumpable (the kernel does so on any uid change): another spawn's sandboxed
/// process may do so at any moment, so make it dumpable again and retry a refused open.
fn write_id_maps(plan: &ChildPlan<'_>, pid: libc::pid_t) -> Result<(), Errno> {
    let Some(maps) = &plan.id_maps else {
        return Ok(());
    };
    for (name, map) in [
        (&b"uid_map"[..], &maps.uid_map),
        (&b"gid_map"[..], &maps.gid_map),
    ] {
        let mut attempts = 0;
        loop {
            let _ = sys::process_control(libc::PR_SET_DUMPABLE, 1, 0);
            match sys::write_process_file(pid, name, map) {
                Err(libc::EACCES) if attempts < 1000 => {
                    attempts += 1;
                    sys::yield_processor();
                }
                other => {
                    other?;
                    break;
                }
            }
        }
    }
    Ok(())
}

/// Undoes what a credential change does to the memory this process still shares with the
/// verifier (see `write_id_maps`); the program gets its own memory, dumpable or not, at exec.
fn keep_verifier_dumpable() {
    let _ = sys::process_control(libc::PR_SET_DUMPABLE, 1, 0);
}

/// The clone inherited the first step's ids, which its new namespace may not map (root's are
/// not); until it takes mapped ones it cannot create a file.
fn take_mapped_ids(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    match plan.id_maps {
        Some(_) => sys::set_user(0, 0),
        None => Ok(()),
    }
}

fn wait_for_id_maps(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    if sys::read_byte(plan.release_read)? {
        Ok(())
    } else {
        Err(libc::ECHILD) // the first step died without releasing us
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

/// `/etc/hosts` in the staged root (`/etc` exists already where `/etc/alternatives` does).
fn write_hosts(filesystem: &FilesystemPlan) -> Result<(), Errno> {
    match sys::make_directory(&filesystem.etc_directory, 0o755) {
        Ok(()) | Err(libc::EEXIST) => {}
        Err(errno) => return Err(errno),
    }
    let flags = libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC;
    let file = sys::open_raw(&filesystem.hosts_file, flags, 0o644)?;
    let written = sys::write_all_raw(file, HOSTS);
    sys::close_raw(file);
    written
}

fn read_only_root(filesystem: &FilesystemPlan) -> Result<(), Errno> {
    sys::mount(None, &filesystem.staging_root, None, READ_ONLY_FLAGS, None)
}

/// Mounts copied into a namespace owned by a less privileged user namespace are locked (they
/// cannot be unmounted or made writable), and `pivot_root` refuses a locked new root: a
/// recursive bind of the root onto itself is an unlocked mount whose children stay locked.
fn bind_root(filesystem: &FilesystemPlan) -> Result<(), Errno> {
    sys::mount(
        Some(&filesystem.staging_root),
        &filesystem.staging_root,
        None,
        libc::MS_BIND | libc::MS_REC,
        None,
    )
}

/// `/proc` is read-only: no process can write another's `oom_score_adj`, `autogroup`,
/// `clear_refs` or the network namespace's sysctls through it, whatever its uid. `hidepid=2`:
/// a process sees only the processes it could ptrace, so a runner's test running under the
/// program uid does not even see the runner.
///
/// A supervisor first gets `ns_last_pid` of its new PID namespace open for writing, from a
/// read-write procfs mounted and detached again before the read-only one (a procfs mounted
/// read-only cannot be mounted writable again in the sandbox): the runner sets the next PID
/// before every test, so no job's PID numbers depend on what ran before (issue 22). Writing it
/// needs CAP_SYS_ADMIN over the namespace, which the supervisor's test children do not have.
fn mount_proc(filesystem: &FilesystemPlan, last_pid: Option<&CStr>) -> Result<(), Errno> {
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY;
    if let Some(path) = last_pid {
        sys::mount(
            Some(c"proc"),
            &filesystem.proc_target,
            Some(c"proc"),
            flags & !libc::MS_RDONLY,
            None,
        )?;
        let opened = sys::open_raw(path, libc::O_WRONLY, 0);
        let detached = sys::unmount_detach(&filesystem.proc_target);
        sys::move_descriptor(opened?, LAST_PID_DESCRIPTOR)?;
        detached?;
    }
    sys::mount(
        Some(c"proc"),
        &filesystem.proc_target,
        Some(c"proc"),
        flags,
        Some(c"hidepid=2"),
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

/// Drops every capability the program may not keep from the bounding set (a supervisor keeps
/// the few it needs, a program none), clears the ambient set, and for a program locks
/// `SECBIT_NOROOT`: where only one uid is mapped the program runs as the namespace's uid 0, and
/// must not get capabilities back by executing anything.
fn limit_capabilities(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    let Some(identity) = plan.identity else {
        return Ok(());
    };
    for capability in 0..=identity.last_capability.min(63) {
        if identity.keep_capabilities & (1 << capability) == 0 {
            sys::process_control(libc::PR_CAPBSET_DROP, capability as usize, 0)?;
        }
    }
    sys::process_control(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_CLEAR_ALL as usize,
        0,
    )?;
    if identity.lock_no_root {
        let bits = SECURE_NO_ROOT
            | SECURE_NO_ROOT_LOCKED
            | SECURE_NO_CAP_AMBIENT_RAISE
            | SECURE_NO_CAP_AMBIENT_RAISE_LOCKED;
        sys::process_control(libc::PR_SET_SECUREBITS, bits, 0)?;
    }
    Ok(())
}

fn drop_privileges(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    let Some(identity) = plan.identity else {
        return Ok(());
    };
    if identity.clear_groups {
        sys::clear_groups()?;
    }
    sys::set_user(identity.uid, identity.gid)
}

fn clear_capabilities(plan: &ChildPlan<'_>) -> Result<(), Errno> {
    match plan.identity {
        Some(identity) if identity.keep_capabilities == 0 => sys::clear_capabilities(),
        _ => Ok(()),
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
