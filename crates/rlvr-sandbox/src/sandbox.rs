//! [`Sandbox`]: created once per process (the mode, the sandbox's user and network namespaces,
//! cgroups or rlimits, seccomp programs, the root plan), then used from any number of threads to
//! spawn isolated processes (`spawn.rs`).

use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{MemfdFlags, SealFlags};

use crate::cgroup::{CgroupLayout, Cgroups};
use crate::error::SandboxError;
use crate::interpreter::Interpreter;
use crate::isolation::FilesystemPlan;
use crate::minimal_root::{self, c_string};
use crate::outcome::{Protection, SandboxMode};
use crate::restrictions::{self, Restriction};
use crate::sys;
use crate::user_namespace::{self, IdMapping, SandboxNamespaces};

/// Where sandboxed programs run, inside the sandbox.
pub const WORK_DIRECTORY: &str = "/tmp";
/// Lowest descriptor number used for anything handed to the child (targets stay below it).
pub(crate) const HIGH_DESCRIPTOR: RawFd = 64;

/// How to build a [`Sandbox`].
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// The interpreter; `None` means `$RLVR_PYTHON`, else `python3` on PATH (shims resolved).
    pub python: Option<PathBuf>,
    /// Run with whatever protections are available instead of refusing.
    pub allow_degraded: bool,
    /// The host uid programs (and the solutions a runner starts) run as, when root starts the
    /// sandbox. Without root they run as the caller's first subordinate uid, or the caller's.
    pub uid: u32,
    /// The host gid that goes with `uid`.
    pub gid: u32,
    /// The host uid of supervisors (the warm runner) when root starts the sandbox; must differ
    /// from `uid`.
    pub runner_uid: u32,
    /// The host gid that goes with `runner_uid`.
    pub runner_gid: u32,
    /// Host directories every sandboxed process sees, read-only, besides the minimal root's
    /// own (a toolchain's configuration outside `/usr`, such as `/etc/java-17-openjdk`; the
    /// precompiled-header cache). Checked by [`Sandbox::new`]: absolute, a directory, and
    /// nothing the root already provides.
    pub read_only_directories: Vec<ReadOnlyDirectory>,
}

/// A host directory bound read-only into every sandbox at `sandbox`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOnlyDirectory {
    /// The directory on the host.
    pub host: PathBuf,
    /// Where sandboxed processes see it.
    pub sandbox: PathBuf,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            python: None,
            allow_degraded: false,
            uid: 65534,
            gid: 65534,
            runner_uid: 65533,
            runner_gid: 65533,
            read_only_directories: Vec::new(),
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
    pub(crate) config: SandboxConfig,
    pub(crate) interpreter: Interpreter,
    pub(crate) mode: SandboxMode,
    pub(crate) protections: Vec<Protection>,
    pub(crate) unavailable: Vec<Unavailable>,
    pub(crate) restrictions: Vec<Restriction>,
    /// The sandbox's user namespace and the empty network namespace inside it.
    pub(crate) namespaces: Option<SandboxNamespaces>,
    /// Degraded root only: an empty network namespace owned by the host's user namespace.
    pub(crate) host_network_namespace: Option<OwnedFd>,
    pub(crate) landlock_ruleset: Option<OwnedFd>,
    pub(crate) seccomp: crate::seccomp::Filters,
    pub(crate) cgroups: Arc<Cgroups>,
    /// No cgroup limits memory and processes: `RLIMIT_AS` and `RLIMIT_NPROC` do.
    pub(crate) limits_by_rlimit: bool,
    pub(crate) last_capability: u32,
    pub(crate) filesystem: Option<FilesystemPlan>,
    pub(crate) environment: Vec<CString>,
    pub(crate) null_output: OwnedFd,
    /// A pidfd of this process (>= [`HIGH_DESCRIPTOR`], close-on-exec), for the sandboxed
    /// process to see whether the verifier died before its parent-death signal was set.
    pub(crate) verifier: Option<OwnedFd>,
}

/// Moves a descriptor to >= [`HIGH_DESCRIPTOR`] (close-on-exec), so it can never collide with
/// the stdio and extra-descriptor targets the child dup2s onto.
pub(crate) fn high(fd: OwnedFd) -> Result<OwnedFd, SandboxError> {
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

/// The highest capability number of this kernel.
fn last_capability() -> u32 {
    fs_err::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(40)
}

/// Root of the host: uid 0 in the initial user namespace (whose map covers every id). Root of
/// a container's user namespace cannot map arbitrary host ids: it takes the unprivileged path.
fn host_root() -> bool {
    sys::effective_uid() == 0
        && fs_err::read_to_string("/proc/self/uid_map")
            .is_ok_and(|map| map.split_whitespace().collect::<Vec<_>>() == ["0", "0", "4294967295"])
}

const NAMESPACE_PROTECTIONS: [Protection; 6] = [
    Protection::MountNamespace,
    Protection::PidNamespace,
    Protection::IpcNamespace,
    Protection::UtsNamespace,
    Protection::NetworkNamespace,
    Protection::MinimalRoot,
];

const USER_NAMESPACE_PROTECTIONS: [Protection; 3] = [
    Protection::UserNamespace,
    Protection::SeparateRunnerUser,
    Protection::PidNamespacePerTest,
];

/// The sandbox's user namespace for this caller: root maps two host ids of its choosing; anyone
/// else subordinate ids where `newuidmap` allows, else their own id alone.
fn create_namespaces(
    config: &SandboxConfig,
    root: bool,
) -> Result<SandboxNamespaces, user_namespace::NamespaceFailure> {
    if root {
        return user_namespace::create(IdMapping::Root {
            runner: (config.runner_uid, config.runner_gid),
            program: (config.uid, config.gid),
        });
    }
    let mapping = user_namespace::unprivileged_mapping();
    let IdMapping::Subordinate { runner, .. } = mapping else {
        return user_namespace::create(mapping);
    };
    user_namespace::create(mapping).or_else(|failure| {
        user_namespace::create(IdMapping::Single {
            caller: runner,
            reason: format!("newuidmap failed ({failure})"),
        })
    })
}

/// Root, user namespace or degraded; an error when a required protection is missing and
/// degraded mode was not allowed.
fn sandbox_mode(
    protections: &[Protection],
    unavailable: &[Unavailable],
    allow_degraded: bool,
    root: bool,
) -> Result<SandboxMode, SandboxError> {
    let required_missing = Protection::missing_required(protections);
    if !required_missing.is_empty() && !allow_degraded {
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
    Ok(if !required_missing.is_empty() {
        SandboxMode::Degraded
    } else if root {
        SandboxMode::Root
    } else {
        SandboxMode::UserNamespace
    })
}

/// The namespaces' descriptors moved out of the way of a child's targets.
fn moved_high(mut created: SandboxNamespaces) -> Result<SandboxNamespaces, SandboxError> {
    created.user = high(created.user)?;
    created.network = high(created.network)?;
    Ok(created)
}

/// The Landlock ruleset that scopes signals and abstract sockets to the sandbox (ABI 6), or
/// why there is none.
fn landlock_ruleset() -> Result<OwnedFd, String> {
    match sys::landlock_abi_version() {
        version if version >= 6 => sys::landlock_scoped_ruleset()
            .and_then(|fd| {
                rustix::io::fcntl_dupfd_cloexec(&fd, HIGH_DESCRIPTOR).map_err(Into::into)
            })
            .map_err(|error| format!("landlock ruleset: {error}")),
        version => Err(format!("landlock ABI {version} < 6")),
    }
}

/// The cgroup protections this layout does not give, each with why.
fn cgroup_unavailable(cgroups: &Cgroups, given: &[Protection]) -> Vec<(Protection, String)> {
    [
        Protection::CgroupMemory,
        Protection::CgroupPids,
        Protection::CgroupCpuAccounting,
        Protection::CgroupKill,
    ]
    .into_iter()
    .filter(|protection| !given.contains(protection))
    .map(|protection| {
        let reason = match cgroups.layout() {
            CgroupLayout::Unavailable { reason } => reason.clone(),
            CgroupLayout::V1 { .. } if protection == Protection::CgroupKill => {
                "cgroup v1 has no cgroup.kill (the PID namespace still kills the tree)".to_owned()
            }
            _ => "not provided by this cgroup layout".to_owned(),
        };
        (protection, reason)
    })
    .collect()
}

/// The whole environment of every sandboxed program (nothing of the verifier's).
fn program_environment(
    interpreter: &Interpreter,
    private_root: bool,
) -> Result<Vec<CString>, SandboxError> {
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
        let prefix = if private_root {
            &interpreter.sandbox_prefix
        } else {
            &interpreter.host_prefix
        };
        environment.push(format!("LD_LIBRARY_PATH={}", prefix.join("lib").display()));
    }
    environment.into_iter().map(c_string).collect()
}

impl Sandbox {
    /// Probes the machine and prepares everything runs share. Fails when a required protection
    /// is missing, unless `config.allow_degraded`.
    pub fn new(config: SandboxConfig) -> Result<Sandbox, SandboxError> {
        let interpreter = Interpreter::resolve(config.python.as_deref())?;
        let root = host_root();
        if root && config.uid == config.runner_uid {
            return Err(SandboxError::InvalidRequest {
                reason: format!(
                    "the program uid and the runner uid are both {}: they must differ",
                    config.uid
                ),
            });
        }
        let restrictions = restrictions::detect(Path::new("/proc/sys"), root);
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

        // The sandbox's user namespace, with the empty network namespace inside it.
        let mut namespaces = None;
        let mut host_network_namespace = None;
        match create_namespaces(&config, root) {
            Ok(created) => {
                protections.extend(NAMESPACE_PROTECTIONS);
                protections.extend([
                    Protection::UnprivilegedUser,
                    Protection::UserNamespace,
                    Protection::PidNamespacePerTest,
                ]);
                match &created.mapping {
                    IdMapping::Single { reason, .. } => missing(
                        &[Protection::SeparateRunnerUser],
                        &format!(
                            "one uid only: {reason}; a PID namespace per test keeps tests from the runner instead"
                        ),
                    ),
                    _ => protections.push(Protection::SeparateRunnerUser),
                }
                namespaces = Some(created);
            }
            Err(failure) => {
                let reason = restrictions::explain(&failure.to_string(), &restrictions);
                missing(&USER_NAMESPACE_PROTECTIONS, &reason);
                if root {
                    // Degraded root: the namespaces of the host's user namespace, one uid.
                    match sys::create_empty_network_namespace() {
                        Ok(fd) => {
                            host_network_namespace = Some(high(fd)?);
                            protections.extend(NAMESPACE_PROTECTIONS);
                            protections.push(Protection::UnprivilegedUser);
                        }
                        Err(error) => missing(
                            &[&NAMESPACE_PROTECTIONS[..], &[Protection::UnprivilegedUser]].concat(),
                            &format!("cannot create a network namespace: {error}"),
                        ),
                    }
                } else {
                    missing(
                        &[&NAMESPACE_PROTECTIONS[..], &[Protection::UnprivilegedUser]].concat(),
                        &reason,
                    );
                }
            }
        }
        let filesystem = if protections.contains(&Protection::MinimalRoot) {
            Some(minimal_root::plan(
                &interpreter,
                root,
                sys::effective_uid(),
                &config.read_only_directories,
            )?)
        } else {
            None
        };
        let landlock_ruleset = match landlock_ruleset() {
            Ok(fd) => {
                protections.push(Protection::LandlockScope);
                Some(fd)
            }
            Err(reason) => {
                missing(&[Protection::LandlockScope], &reason);
                None
            }
        };

        // Limits: a cgroup where one is ours to manage, else rlimits.
        let cgroups = Arc::new(Cgroups::probe());
        let cgroup_protections = cgroups.protections();
        for (protection, reason) in cgroup_unavailable(&cgroups, &cgroup_protections) {
            missing(&[protection], &reason);
        }
        let limits_by_rlimit = !cgroup_protections.contains(&Protection::CgroupMemory);
        if limits_by_rlimit {
            protections.push(Protection::ProcessMemoryLimit);
            // RLIMIT_NPROC counts per uid in a user namespace; without one it would count
            // every process of that uid on the machine.
            if namespaces.is_some() {
                protections.push(Protection::ProcessCountLimit);
            }
        }
        protections.extend(cgroup_protections);
        protections.sort();
        protections.dedup();
        let mode = sandbox_mode(&protections, &unavailable, config.allow_degraded, root)?;
        let environment = program_environment(&interpreter, filesystem.is_some())?;
        let null_output = OwnedFd::from(
            fs_err::OpenOptions::new()
                .write(true)
                .open("/dev/null")
                .map_err(SandboxError::system("open /dev/null"))?
                .into_file(),
        );
        let namespaces = namespaces.map(moved_high).transpose()?;
        let inner = Inner {
            seccomp: crate::seccomp::Filters::build()?,
            config,
            interpreter,
            mode,
            protections,
            unavailable,
            restrictions,
            namespaces,
            host_network_namespace,
            landlock_ruleset,
            cgroups,
            limits_by_rlimit,
            last_capability: last_capability(),
            filesystem,
            environment,
            null_output: high(null_output)?,
            verifier: sys::pidfd_open(std::process::id() as libc::pid_t)
                .ok()
                .and_then(|pidfd| high(pidfd).ok()),
        };
        Ok(Sandbox {
            inner: Arc::new(inner),
        })
    }

    /// Root, user namespace or degraded.
    pub fn mode(&self) -> SandboxMode {
        self.inner.mode
    }

    /// Protections every run of this sandbox gets.
    pub fn protections(&self) -> &[Protection] {
        &self.inner.protections
    }

    /// Protections this machine cannot provide, with reasons.
    pub fn unavailable(&self) -> &[Unavailable] {
        &self.inner.unavailable
    }

    /// Settings of this machine that restrict user namespaces (whether or not they stopped
    /// this sandbox), with remedies.
    pub fn restrictions(&self) -> &[Restriction] {
        &self.inner.restrictions
    }

    /// How the sandbox's user namespace maps ids to the host (`None` without one).
    pub fn id_mapping(&self) -> Option<&IdMapping> {
        self.inner
            .namespaces
            .as_ref()
            .map(|namespaces| &namespaces.mapping)
    }

    /// Whether memory and processes are limited by rlimits (no cgroup of ours).
    pub fn limits_by_rlimit(&self) -> bool {
        self.inner.limits_by_rlimit
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

    pub(crate) fn inner(&self) -> &Inner {
        &self.inner
    }
}

/// `Sandbox` must stay shareable across worker threads.
const _: () = {
    const fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<Sandbox>();
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RunRequest, RunVerdict, Step};

    /// A verifier that died before the sandboxed process set its parent-death signal (a
    /// SIGKILL in that window) must not leave the program running with nobody to stop or reap
    /// it. The window is too narrow to hit by killing a process; a pidfd of a process that has
    /// exited stands in for the dead verifier.
    #[test]
    fn a_sandboxed_process_does_not_run_once_its_verifier_is_gone() {
        let mut sandbox = Sandbox::new(SandboxConfig::default()).expect("sandbox");
        let mut exited = std::process::Command::new("true")
            .spawn()
            .expect("spawn true");
        let pidfd = sys::pidfd_open(exited.id() as libc::pid_t).expect("pidfd of the child");
        exited.wait().expect("wait");
        let inner = Arc::get_mut(&mut sandbox.inner).expect("the only handle");
        let own = inner.verifier.replace(high(pidfd).expect("high"));
        assert!(own.is_some(), "this process's own pidfd was opened");
        let request = RunRequest::python("print('ran')");
        let error = sandbox.run(&request).expect_err("must not run");
        assert!(
            matches!(
                error,
                SandboxError::ChildStep {
                    step: Step::ParentDeathSignal,
                    errno: libc::ESRCH
                }
            ),
            "{error}"
        );
        // The same sandbox with its live verifier runs the program.
        Arc::get_mut(&mut sandbox.inner)
            .expect("the only handle")
            .verifier = own;
        let outcome = sandbox.run(&request).expect("run");
        assert_eq!(outcome.verdict, RunVerdict::Ok);
        assert_eq!(outcome.stdout, b"ran\n");
    }
}
