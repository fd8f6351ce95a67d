//! [`Sandbox`]: created once per process (probes, shared network namespace, seccomp program,
//! root template), then used from any number of threads to spawn isolated processes.

use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use rustix::fs::{MemfdFlags, SealFlags};
use rustix::pipe::PipeFlags;

use crate::cgroup::{CgroupLayout, Cgroups};
use crate::error::SandboxError;
use crate::interpreter::Interpreter;
use crate::isolation::{ChildPlan, FilesystemPlan, PlannedFile, RootOperation, Step};
use crate::outcome::Protection;
use crate::process::SandboxedProcess;
use crate::request::{Limits, Program, SpawnRequest, StdioSpec, WorkFile};
use crate::sys::{self, BpfInstruction};

/// Where sandboxed programs run, inside the sandbox.
pub const WORK_DIRECTORY: &str = "/tmp";
/// Lowest descriptor number used for anything handed to the child (targets stay below it).
const HIGH_DESCRIPTOR: RawFd = 64;
/// At most this many extra descriptors (fd 3, 4, ...).
const MAX_EXTRA_DESCRIPTORS: usize = 32;

/// How to build a [`Sandbox`].
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// The interpreter; `None` means `$RLVR_PYTHON`, else `python3` on PATH (shims resolved).
    pub python: Option<PathBuf>,
    /// Run with whatever protections are available instead of refusing.
    pub allow_degraded: bool,
    /// The unprivileged uid programs run as.
    pub uid: u32,
    /// The unprivileged gid programs run as.
    pub gid: u32,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            python: None,
            allow_degraded: false,
            uid: 65534,
            gid: 65534,
        }
    }
}

/// A protection that is not available here, and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Unavailable {
    /// The protection.
    pub protection: Protection,
    /// Why it is unavailable.
    pub reason: String,
}

/// The sandbox. Cheap to share: `Send + Sync`; [`Sandbox::run`] and [`Sandbox::spawn`] may be
/// called from many threads at once. Cloning shares the same underlying state.
#[derive(Debug, Clone)]
pub struct Sandbox {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    config: SandboxConfig,
    interpreter: Interpreter,
    protections: Vec<Protection>,
    unavailable: Vec<Unavailable>,
    network_namespace: Option<OwnedFd>,
    landlock_ruleset: Option<OwnedFd>,
    seccomp: Vec<BpfInstruction>,
    pub(crate) cgroups: Arc<Cgroups>,
    filesystem: Option<FilesystemPlan>,
    environment: Vec<CString>,
    null_output: OwnedFd,
}

fn c_string(bytes: impl Into<Vec<u8>>) -> Result<CString, SandboxError> {
    CString::new(bytes).map_err(|error| SandboxError::InvalidRequest {
        reason: format!("a string contains a NUL byte at {}", error.nul_position()),
    })
}

fn c_path(path: &Path) -> Result<CString, SandboxError> {
    c_string(path.as_os_str().as_bytes())
}

/// Moves a descriptor to >= [`HIGH_DESCRIPTOR`] (close-on-exec), so it can never collide with
/// the stdio and extra-descriptor targets the child dup2s onto.
fn high(fd: OwnedFd) -> Result<OwnedFd, SandboxError> {
    if fd.as_raw_fd() >= HIGH_DESCRIPTOR {
        return Ok(fd);
    }
    rustix::io::fcntl_dupfd_cloexec(&fd, HIGH_DESCRIPTOR)
        .map_err(|errno| SandboxError::system("descriptor duplication")(errno.into()))
}

/// A sealed memory file holding `contents`, positioned at its start.
pub(crate) fn sealed_memory_file(name: &str, contents: &[u8]) -> Result<OwnedFd, SandboxError> {
    let fd = rustix::fs::memfd_create(name, MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)
        .map_err(|errno| SandboxError::system("memfd_create")(errno.into()))?;
    let mut file = File::from(fd);
    file.write_all(contents)
        .map_err(SandboxError::system("memfd write"))?;
    rustix::fs::seek(&file, rustix::fs::SeekFrom::Start(0))
        .map_err(|errno| SandboxError::system("memfd seek")(errno.into()))?;
    rustix::fs::fcntl_add_seals(
        &file,
        SealFlags::SEAL | SealFlags::SHRINK | SealFlags::GROW | SealFlags::WRITE,
    )
    .map_err(|errno| SandboxError::system("memfd seal")(errno.into()))?;
    Ok(OwnedFd::from(file))
}

fn root_operations(
    staging: &Path,
    interpreter: &Interpreter,
) -> Result<Vec<RootOperation>, SandboxError> {
    let inside = |relative: &str| c_path(&staging.join(relative.trim_start_matches('/')));
    let mut operations = vec![
        RootOperation::Directory(inside("usr")?),
        RootOperation::Bind {
            source: c"/usr".to_owned(),
            target: inside("usr")?,
            read_only: true,
        },
    ];
    // Top-level library and binary directories: symlinks into /usr on merged-/usr systems.
    for name in ["bin", "sbin", "lib", "lib32", "lib64", "libx32"] {
        let host = Path::new("/").join(name);
        match fs_err::symlink_metadata(&host) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let target =
                    fs_err::read_link(&host).map_err(SandboxError::path("read symlink", &host))?;
                operations.push(RootOperation::Symlink {
                    target: c_path(&target)?,
                    link: inside(name)?,
                });
            }
            Ok(metadata) if metadata.is_dir() => {
                operations.push(RootOperation::Directory(inside(name)?));
                operations.push(RootOperation::Bind {
                    source: c_path(&host)?,
                    target: inside(name)?,
                    read_only: true,
                });
            }
            _ => {}
        }
    }
    if interpreter.needs_prefix_mount() {
        let mut partial = PathBuf::new();
        for component in interpreter.sandbox_prefix.components().skip(1) {
            partial.push(component);
            operations.push(RootOperation::Directory(inside(
                &partial.to_string_lossy(),
            )?));
        }
        operations.push(RootOperation::Bind {
            source: c_path(&interpreter.host_prefix)?,
            target: inside(&interpreter.sandbox_prefix.to_string_lossy())?,
            read_only: true,
        });
    }
    operations.push(RootOperation::Directory(inside("dev")?));
    for device in ["null", "zero", "urandom"] {
        let target = inside(&format!("dev/{device}"))?;
        operations.push(RootOperation::File(target.clone()));
        operations.push(RootOperation::Bind {
            source: c_string(format!("/dev/{device}"))?,
            target,
            read_only: false,
        });
    }
    for (target, link) in [
        ("/proc/self/fd", "dev/fd"),
        ("/proc/self/fd/0", "dev/stdin"),
        ("/proc/self/fd/1", "dev/stdout"),
        ("/proc/self/fd/2", "dev/stderr"),
    ] {
        operations.push(RootOperation::Symlink {
            target: c_string(target)?,
            link: inside(link)?,
        });
    }
    operations.push(RootOperation::Directory(inside("proc")?));
    operations.push(RootOperation::Directory(inside(WORK_DIRECTORY)?));
    Ok(operations)
}

fn staging_directory() -> Result<PathBuf, SandboxError> {
    let path = PathBuf::from("/run/rlvr-sandbox-root");
    match fs_err::create_dir(&path) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(SandboxError::path("create staging directory", &path)(error)),
    }
    let metadata = fs_err::symlink_metadata(&path)
        .map_err(SandboxError::path("inspect staging directory", &path))?;
    if !metadata.is_dir() {
        return Err(SandboxError::path("use staging directory", &path)(
            std::io::Error::other("not a directory"),
        ));
    }
    Ok(path)
}

impl Sandbox {
    /// Probes the machine and prepares everything runs share. Fails when a required protection
    /// is missing, unless `config.allow_degraded`.
    pub fn new(config: SandboxConfig) -> Result<Sandbox, SandboxError> {
        let interpreter = Interpreter::resolve(config.python.as_deref())?;
        let mut protections = vec![
            Protection::NoNewPrivileges,
            Protection::Seccomp,
            Protection::ResourceLimits,
            Protection::ParentDeathSignal,
            Protection::CleanDescriptorsAndEnvironment,
        ];
        let mut unavailable = Vec::new();
        let mut missing = |protections: &[Protection], reason: &str| {
            for &protection in protections {
                unavailable.push(Unavailable {
                    protection,
                    reason: reason.to_owned(),
                });
            }
        };
        let root = sys::effective_uid() == 0;
        let namespace_protections = [
            Protection::MountNamespace,
            Protection::PidNamespace,
            Protection::IpcNamespace,
            Protection::UtsNamespace,
            Protection::NetworkNamespace,
            Protection::MinimalRoot,
        ];
        let mut network_namespace = None;
        let mut filesystem = None;
        if root {
            match sys::create_empty_network_namespace().and_then(|fd| {
                rustix::io::fcntl_dupfd_cloexec(&fd, HIGH_DESCRIPTOR).map_err(std::io::Error::from)
            }) {
                Ok(fd) => {
                    let staging = staging_directory()?;
                    filesystem = Some(FilesystemPlan {
                        staging_root: c_path(&staging)?,
                        operations: root_operations(&staging, &interpreter)?,
                        proc_target: c_path(&staging.join("proc"))?,
                        work_target: c_path(&staging.join(WORK_DIRECTORY.trim_start_matches('/')))?,
                    });
                    network_namespace = Some(fd);
                    protections.extend(namespace_protections);
                    protections.push(Protection::UnprivilegedUser);
                }
                Err(error) => missing(
                    &[&namespace_protections[..], &[Protection::UnprivilegedUser]].concat(),
                    &format!("cannot create a network namespace: {error}"),
                ),
            }
        } else {
            missing(
                &[&namespace_protections[..], &[Protection::UnprivilegedUser]].concat(),
                "not running as root (user-namespace mode is not implemented)",
            );
        }
        let landlock_ruleset = match sys::landlock_abi_version() {
            version if version >= 6 => match sys::landlock_scoped_ruleset().and_then(|fd| {
                rustix::io::fcntl_dupfd_cloexec(&fd, HIGH_DESCRIPTOR).map_err(Into::into)
            }) {
                Ok(fd) => {
                    protections.push(Protection::LandlockScope);
                    Some(fd)
                }
                Err(error) => {
                    missing(
                        &[Protection::LandlockScope],
                        &format!("landlock ruleset: {error}"),
                    );
                    None
                }
            },
            version => {
                missing(
                    &[Protection::LandlockScope],
                    &format!("landlock ABI {version} < 6"),
                );
                None
            }
        };
        let cgroups = Arc::new(Cgroups::probe());
        let cgroup_protections = cgroups.protections();
        for protection in [
            Protection::CgroupMemory,
            Protection::CgroupPids,
            Protection::CgroupCpuAccounting,
            Protection::CgroupKill,
        ] {
            if !cgroup_protections.contains(&protection) {
                let reason = match cgroups.layout() {
                    CgroupLayout::Unavailable { reason } => reason.clone(),
                    CgroupLayout::V1 { .. } if protection == Protection::CgroupKill => {
                        "cgroup v1 has no cgroup.kill (the PID namespace still kills the tree)"
                            .to_owned()
                    }
                    _ => "not provided by this cgroup layout".to_owned(),
                };
                missing(&[protection], &reason);
            }
        }
        protections.extend(cgroup_protections);
        protections.sort();
        let required_missing: Vec<Protection> = Protection::REQUIRED
            .into_iter()
            .filter(|protection| !protections.contains(protection))
            .collect();
        if !required_missing.is_empty() && !config.allow_degraded {
            let reason = unavailable
                .iter()
                .find(|entry| required_missing.contains(&entry.protection))
                .map(|entry| entry.reason.clone())
                .unwrap_or_default();
            return Err(SandboxError::MissingProtections {
                missing: required_missing,
                reason,
            });
        }
        let mut environment = vec![
            "PATH=/usr/local/bin:/usr/bin:/bin".to_owned(),
            "LANG=C.UTF-8".to_owned(),
            "LC_ALL=C.UTF-8".to_owned(),
            format!("HOME={WORK_DIRECTORY}"),
            format!("TMPDIR={WORK_DIRECTORY}"),
            "PYTHONDONTWRITEBYTECODE=1".to_owned(),
            "PYTHONIOENCODING=utf-8".to_owned(),
            "OPENBLAS_NUM_THREADS=1".to_owned(),
            "OMP_NUM_THREADS=1".to_owned(),
            "MKL_NUM_THREADS=1".to_owned(),
        ];
        if interpreter.needs_prefix_mount() {
            // The interpreter's RUNPATH points at its host prefix; inside it lives elsewhere.
            let prefix = if filesystem.is_some() {
                &interpreter.sandbox_prefix
            } else {
                &interpreter.host_prefix
            };
            environment.push(format!("LD_LIBRARY_PATH={}", prefix.join("lib").display()));
        }
        let environment = environment
            .into_iter()
            .map(c_string)
            .collect::<Result<Vec<_>, _>>()?;
        let null_output = OwnedFd::from(
            fs_err::OpenOptions::new()
                .write(true)
                .open("/dev/null")
                .map_err(SandboxError::system("open /dev/null"))?
                .into_file(),
        );
        let inner = Inner {
            seccomp: crate::seccomp::build()?,
            config,
            interpreter,
            protections,
            unavailable,
            network_namespace,
            landlock_ruleset,
            cgroups,
            filesystem,
            environment,
            null_output: high(null_output)?,
        };
        Ok(Sandbox {
            inner: Arc::new(inner),
        })
    }

    /// Protections every run of this sandbox gets.
    pub fn protections(&self) -> &[Protection] {
        &self.inner.protections
    }

    /// Protections this machine cannot provide, with reasons.
    pub fn unavailable(&self) -> &[Unavailable] {
        &self.inner.unavailable
    }

    /// The interpreter programs run with.
    pub fn interpreter(&self) -> &Interpreter {
        &self.inner.interpreter
    }

    /// The interpreter's path as seen by sandboxed programs.
    pub fn python_path(&self) -> &Path {
        if self.inner.filesystem.is_some() {
            &self.inner.interpreter.sandbox_executable
        } else {
            &self.inner.interpreter.host_executable
        }
    }

    /// The cgroup layout in use.
    pub fn cgroup_layout(&self) -> &CgroupLayout {
        self.inner.cgroups.layout()
    }

    /// Starts a sandboxed process and returns at once; the caller talks to it through its
    /// pipes and must wait for or kill it (dropping the handle kills the whole tree).
    ///
    /// The sandbox gets SIGKILL if the thread that called `spawn` exits first
    /// (`PR_SET_PDEATHSIG` follows the creating thread): spawn from long-lived threads.
    pub fn spawn(&self, request: SpawnRequest) -> Result<SandboxedProcess, SandboxError> {
        let inner = &self.inner;
        if request.extra_descriptors.len() > MAX_EXTRA_DESCRIPTORS {
            return Err(SandboxError::InvalidRequest {
                reason: format!("at most {MAX_EXTRA_DESCRIPTORS} extra descriptors"),
            });
        }
        let (program, argv) = self.command_line(&request.program)?;
        let mut files = request.files;
        if let Program::Python { source } = &request.program {
            files.push(WorkFile {
                name: "main.py".to_owned(),
                contents: source.clone().into_bytes(),
            });
        }
        for file in &files {
            if file.name.is_empty()
                || file.name.contains('/')
                || file.name == "."
                || file.name == ".."
            {
                return Err(SandboxError::InvalidRequest {
                    reason: format!("bad work file name {:?}", file.name),
                });
            }
        }
        let lease = inner
            .cgroups
            .lease(request.limits.memory_bytes, request.limits.pids)?;

        // Descriptors: what the child gets (moved >= 64) and what we keep.
        let mut child_side: Vec<OwnedFd> = Vec::new();
        let pipe = || {
            rustix::pipe::pipe_with(PipeFlags::CLOEXEC)
                .map_err(|errno| SandboxError::system("pipe")(errno.into()))
        };
        let (stdin_child, stdin_parent) = match request.stdin {
            StdioSpec::Piped => {
                let (read, write) = pipe()?;
                (read, Some(File::from(write)))
            }
            StdioSpec::Null => (sealed_memory_file("stdin", b"")?, None),
            StdioSpec::Descriptor(fd) => (fd, None),
        };
        let output = |spec: StdioSpec| -> Result<(OwnedFd, Option<File>), SandboxError> {
            Ok(match spec {
                StdioSpec::Piped => {
                    let (read, write) = pipe()?;
                    (write, Some(File::from(read)))
                }
                StdioSpec::Null => (
                    inner
                        .null_output
                        .try_clone()
                        .map_err(SandboxError::system("descriptor duplication"))?,
                    None,
                ),
                StdioSpec::Descriptor(fd) => (fd, None),
            })
        };
        let (stdout_child, stdout_parent) = output(request.stdout)?;
        let (stderr_child, stderr_parent) = output(request.stderr)?;
        for fd in [stdin_child, stdout_child, stderr_child]
            .into_iter()
            .chain(request.extra_descriptors)
        {
            child_side.push(high(fd)?);
        }
        let descriptors: Vec<(RawFd, RawFd)> = child_side
            .iter()
            .enumerate()
            .map(|(target, fd)| (fd.as_raw_fd(), target as RawFd))
            .collect();

        let (error_read, error_write) =
            rustix::pipe::pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)
                .map_err(|errno| SandboxError::system("pipe")(errno.into()))?;
        let error_write = high(error_write)?;

        // Work files: copied from sealed memfds by the child, or written here when there is
        // no private work directory (degraded mode).
        let mut memory_files = Vec::new();
        let mut planned_files = Vec::new();
        let host_work_directory = if inner.filesystem.is_some() {
            for file in &files {
                let fd = high(sealed_memory_file(&file.name, &file.contents)?)?;
                planned_files.push(PlannedFile {
                    path: c_string(format!("{WORK_DIRECTORY}/{}", file.name))?,
                    source: fd.as_raw_fd(),
                    length: file.contents.len() as u64,
                });
                memory_files.push(fd);
            }
            None
        } else {
            let directory = tempfile::Builder::new()
                .prefix("rlvr-sandbox-work-")
                .tempdir()
                .map_err(SandboxError::system("create work directory"))?;
            for file in &files {
                let path = directory.path().join(&file.name);
                fs_err::write(&path, &file.contents)
                    .map_err(SandboxError::path("write work file", &path))?;
            }
            Some(directory)
        };
        let work_directory = match &host_work_directory {
            Some(directory) => c_path(directory.path())?,
            None => c_string(WORK_DIRECTORY)?,
        };

        // Everything but the targets, the error pipe and the Landlock ruleset gets closed.
        let mut keep: Vec<u32> = (0..descriptors.len() as u32).collect();
        keep.push(error_write.as_raw_fd() as u32);
        if let Some(ruleset) = &inner.landlock_ruleset {
            keep.push(ruleset.as_raw_fd() as u32);
        }
        keep.sort_unstable();
        let mut close_ranges = Vec::new();
        let mut next = 0u32;
        for &fd in &keep {
            if fd > next {
                close_ranges.push((next, fd - 1));
            }
            next = fd + 1;
        }
        close_ranges.push((next, u32::MAX));

        let limits = request.limits;
        let born_inside = lease.birth_cgroup().is_some() && sys::CAN_CLONE_INTO_CGROUP;
        let environment_pointers: Vec<*const libc::c_char> = inner
            .environment
            .iter()
            .map(|value| value.as_ptr())
            .chain([std::ptr::null()])
            .collect();
        let argument_pointers: Vec<*const libc::c_char> = argv
            .iter()
            .map(|value| value.as_ptr())
            .chain([std::ptr::null()])
            .collect();
        let mut plan = ChildPlan {
            error_pipe: error_write.as_raw_fd(),
            cgroup_procs: lease.join_descriptors(born_inside),
            network_namespace: inner.network_namespace.as_ref().map(AsRawFd::as_raw_fd),
            filesystem: inner.filesystem.as_ref(),
            work_options: c_string(format!(
                "size={},nr_inodes=4096,mode=0700,uid={},gid={}",
                limits.tmpfs_bytes.max(4096),
                inner.config.uid,
                inner.config.gid
            ))?,
            files: planned_files,
            work_directory,
            resource_limits: resource_limits(&limits),
            descriptors,
            close_ranges,
            user: inner
                .filesystem
                .as_ref()
                .map(|_| (inner.config.uid, inner.config.gid)),
            landlock_ruleset: inner.landlock_ruleset.as_ref().map(AsRawFd::as_raw_fd),
            seccomp: Some(&inner.seccomp),
            program,
            argv: argument_pointers,
            envp: environment_pointers,
        };
        let namespace_flags = if inner.filesystem.is_some() {
            libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS
        } else {
            0
        };
        let started = Instant::now();
        let cloned = match lease.birth_cgroup().filter(|_| born_inside) {
            Some(cgroup) => {
                match sys::clone_vfork_into_cgroup(namespace_flags, cgroup, &plan) {
                    // Kernels before 5.7 lack clone3 or CLONE_INTO_CGROUP: join after birth.
                    Err(error)
                        if matches!(error.raw_os_error(), Some(libc::ENOSYS | libc::E2BIG)) =>
                    {
                        plan.cgroup_procs = lease.join_descriptors(false);
                        sys::clone_vfork(namespace_flags, &plan)
                    }
                    other => other,
                }
            }
            None => sys::clone_vfork(namespace_flags, &plan),
        };
        let (pid, pidfd) = cloned.map_err(SandboxError::system("clone"))?;
        // The child has exec'd or exited (CLONE_VFORK): its copies are gone, ours can go too.
        drop(plan);
        drop(child_side);
        drop(memory_files);
        drop(error_write);
        let mut report = [0u8; 8];
        let reported = rustix::io::read(&error_read, &mut report).unwrap_or(0);
        let mut process = SandboxedProcess::new(
            pid,
            pidfd,
            lease,
            started,
            stdin_parent,
            stdout_parent,
            stderr_parent,
            host_work_directory,
            limits,
        );
        if reported == report.len() {
            let code = u32::from_ne_bytes([report[0], report[1], report[2], report[3]]);
            let errno = i32::from_ne_bytes([report[4], report[5], report[6], report[7]]);
            process.kill_and_reap();
            let step = Step::from_code(code).unwrap_or(Step::Execute);
            return Err(SandboxError::ChildStep { step, errno });
        }
        Ok(process)
    }

    fn command_line(&self, program: &Program) -> Result<(CString, Vec<CString>), SandboxError> {
        let python = c_path(self.python_path())?;
        match program {
            Program::Python { .. } => Ok((
                python.clone(),
                vec![python, c_string("-I")?, c_string("main.py")?],
            )),
            Program::Command { argv } => {
                let Some(first) = argv.first() else {
                    return Err(SandboxError::InvalidRequest {
                        reason: "empty argv".to_owned(),
                    });
                };
                let executable = if first == "python" {
                    python
                } else {
                    c_string(first.as_str())?
                };
                let mut arguments = vec![executable.clone()];
                for argument in &argv[1..] {
                    arguments.push(c_string(argument.as_str())?);
                }
                Ok((executable, arguments))
            }
        }
    }

    pub(crate) fn inner(&self) -> &Inner {
        &self.inner
    }
}

impl Inner {
    pub(crate) fn protections(&self) -> &[Protection] {
        &self.protections
    }
}

fn resource_limits(limits: &Limits) -> Vec<(u32, u64, u64)> {
    let cpu_seconds = limits.cpu.as_secs_f64().ceil().max(1.0) as u64;
    let stack = 64u64 << 20;
    vec![
        // SIGXCPU at the limit, SIGKILL one second later.
        (libc::RLIMIT_CPU, cpu_seconds, cpu_seconds + 1),
        (libc::RLIMIT_FSIZE, limits.tmpfs_bytes, limits.tmpfs_bytes),
        (libc::RLIMIT_NOFILE, 1024, 1024),
        (libc::RLIMIT_CORE, 0, 0),
        (libc::RLIMIT_STACK, stack, stack),
        (
            libc::RLIMIT_AS,
            limits.address_space_bytes(),
            limits.address_space_bytes(),
        ),
    ]
}

/// `Sandbox` must stay shareable across worker threads.
const _: () = {
    const fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<Sandbox>();
};
