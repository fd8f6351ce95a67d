//! Memory, pids and CPU accounting through cgroups, v2 where it has the controllers, v1 otherwise.
//!
//! * **v2**: a fresh child cgroup per run under `rlvr-sandbox-<pid>`, entered at birth with
//!   `clone3(CLONE_INTO_CGROUP)` (no migration; a fresh cgroup because the kernel SIGKILLs a
//!   child cloned into a cgroup that once had `cgroup.kill` written), killed with `cgroup.kill`
//!   and removed after the run. Where `clone3` is unavailable the child writes `cgroup.procs`.
//! * **v1**: a pool of slots (one memory and one pids cgroup each) under `rlvr-sandbox-<pid>` in
//!   our own cgroup, reused across runs: creating and removing cgroups per run costs about
//!   0.3 ms here, resetting a slot costs almost nothing. The child joins by writing `0` to each
//!   slot's `tasks` file while it is still a single thread: unlike `cgroup.procs`, a thread
//!   moving itself skips the global `cgroup_threadgroup_rwsem` write lock, whose RCU grace
//!   period cost 6-15 ms per run here under load (kernel 5.19+, "cgroup: Optimize single
//!   thread migration"; older kernels simply take the lock).
//!
//! Without root, v2 is used where our own cgroup is delegated to us (a systemd scope or service
//! with `Delegate=yes`, a container's own cgroup): the verifier moves itself into a leaf
//! (`rlvr-verifier-<pid>`) so the cgroup it left may give controllers to its children.
//!
//! Directories left by a crashed verifier (`rlvr-sandbox-<pid>`, `rlvr-verifier-<pid>` whose pid
//! is gone) are removed when the next sandbox starts.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;

use crate::error::SandboxError;
use crate::outcome::Protection;

/// The cgroup layout found on this machine.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "version", rename_all = "snake_case")]
pub enum CgroupLayout {
    /// Unified hierarchy with the memory and pids controllers.
    V2 {
        /// Parent of the per-run cgroups.
        parent: PathBuf,
    },
    /// Legacy hierarchies.
    V1 {
        /// Parent of the slots in the memory hierarchy.
        memory: PathBuf,
        /// Parent of the slots in the pids hierarchy.
        pids: PathBuf,
        /// Parent of the slots in the cpuacct hierarchy, if mounted.
        cpuacct: Option<PathBuf>,
        /// Whether `memory.memsw.*` exists (swap is limited too).
        swap_accounting: bool,
    },
    /// No usable cgroup: no memory, pids or CPU-tree limits.
    Unavailable {
        /// Why.
        reason: String,
    },
}

/// Resource usage of a run's whole process tree, read from its cgroup.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CgroupUsage {
    pub(crate) cpu: Option<Duration>,
    pub(crate) peak_bytes: Option<u64>,
    pub(crate) out_of_memory_kills: u64,
}

/// The cgroup manager shared by every run of one [`crate::Sandbox`].
#[derive(Debug)]
pub(crate) struct Cgroups {
    layout: CgroupLayout,
    counter: AtomicU64,
    pool: Mutex<Vec<V1Slot>>,
}

#[derive(Debug)]
struct V1Slot {
    memory: PathBuf,
    pids: PathBuf,
    cpuacct: Option<PathBuf>,
    procs: Vec<File>,
    memory_limit: u64,
    pids_limit: u64,
}

/// The cgroup(s) of one run; returned to the pool (v1) or removed (v2) on drop.
#[derive(Debug)]
pub(crate) struct Lease {
    owner: Arc<Cgroups>,
    kind: LeaseKind,
    cpu_baseline: Duration,
    oom_baseline: u64,
}

#[derive(Debug)]
enum LeaseKind {
    None,
    V2 {
        directory: PathBuf,
        /// The directory itself, for `clone3(CLONE_INTO_CGROUP)`.
        handle: File,
        /// `cgroup.procs`, for the fallback join where `clone3` is unavailable.
        procs: File,
    },
    V1(Option<V1Slot>),
}

fn read_text(path: &Path) -> std::io::Result<String> {
    let mut text = String::new();
    File::open(path)?.read_to_string(&mut text)?;
    Ok(text)
}

fn write_text(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)?
        .write_all(text.as_bytes())
}

fn read_number(path: &Path) -> Option<u64> {
    read_text(path).ok()?.trim().parse().ok()
}

fn read_key(path: &Path, key: &str) -> Option<u64> {
    read_text(path).ok()?.lines().find_map(|line| {
        let (name, value) = line.split_once(' ')?;
        (name == key).then(|| value.trim().parse().ok()).flatten()
    })
}

/// Opens the membership file `name` (`tasks` or `cgroup.procs`) of a cgroup for writing.
fn open_membership(directory: &Path, name: &str) -> Result<File, SandboxError> {
    let path = directory.join(name);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .map_err(SandboxError::path("open cgroup membership file", path))
}

/// A cgroup mount from /proc/self/mountinfo.
struct CgroupMount {
    root: String,
    mount_point: PathBuf,
    unified: bool,
    controllers: Vec<String>,
}

fn cgroup_mounts() -> Vec<CgroupMount> {
    let Ok(text) = read_text(Path::new("/proc/self/mountinfo")) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let fields: Vec<&str> = left.split(' ').collect();
            let right: Vec<&str> = right.split(' ').collect();
            let filesystem = *right.first()?;
            if filesystem != "cgroup" && filesystem != "cgroup2" {
                return None;
            }
            let options = right.get(2).copied().unwrap_or("");
            Some(CgroupMount {
                root: fields.get(3)?.to_string(),
                mount_point: PathBuf::from(fields.get(4)?.replace("\\040", " ")),
                unified: filesystem == "cgroup2",
                controllers: options.split(',').map(str::to_owned).collect(),
            })
        })
        .collect()
}

/// `(hierarchy controllers, path)` from /proc/self/cgroup.
fn own_cgroups() -> Vec<(Vec<String>, String)> {
    let Ok(text) = read_text(Path::new("/proc/self/cgroup")) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let _id = parts.next()?;
            let controllers = parts.next()?.split(',').map(str::to_owned).collect();
            Some((controllers, parts.next()?.to_owned()))
        })
        .collect()
}

fn join_mount(mount: &CgroupMount, path: &str) -> PathBuf {
    let relative = path.strip_prefix(mount.root.as_str()).unwrap_or(path);
    mount.mount_point.join(relative.trim_start_matches('/'))
}

/// `rlvr-sandbox-<pid>-<instance>`: unique per [`crate::Sandbox`], even several in one process.
fn sandbox_directory_name(instance: u64) -> String {
    format!("rlvr-sandbox-{}-{instance}", std::process::id())
}

static INSTANCES: AtomicU64 = AtomicU64::new(0);

/// The pid that owns a directory rlvr created (`rlvr-sandbox-<pid>-<n>`, or the leaf a verifier
/// moved itself into, `rlvr-verifier-<pid>`), if `name` is one.
fn directory_owner(name: &str) -> Option<&str> {
    let rest = name
        .strip_prefix("rlvr-sandbox-")
        .or_else(|| name.strip_prefix("rlvr-verifier-"))?;
    let pid = rest.split('-').next().unwrap_or(rest);
    (!pid.is_empty() && pid.bytes().all(|byte| byte.is_ascii_digit())).then_some(pid)
}

/// Removes the directories of [`directory_owner`] whose process is gone (children first).
fn sweep_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = directory_owner(&name) else {
            continue;
        };
        if Path::new("/proc").join(pid).exists() {
            continue;
        }
        if let Ok(children) = std::fs::read_dir(entry.path()) {
            for child in children.flatten() {
                if child.path().is_dir() {
                    let _ = std::fs::remove_dir(child.path());
                }
            }
        }
        let _ = std::fs::remove_dir(entry.path());
    }
}

/// Enables the memory and pids controllers for the children of `base`.
fn enable_controllers(base: &Path) -> std::io::Result<()> {
    write_text(&base.join("cgroup.subtree_control"), "+memory +pids")
}

/// A cgroup that holds processes cannot give controllers to its children ("no internal
/// processes"): where our own cgroup is delegated to us (a systemd scope or service with
/// `Delegate=yes`, a container's cgroup) and holds only us, move the verifier into a leaf of its
/// own and enable the controllers on the cgroup it left.
fn enable_by_moving_out(base: &Path) -> Result<(), String> {
    let pid = std::process::id();
    let leaf = base.join(format!("rlvr-verifier-{pid}"));
    if std::fs::create_dir(&leaf).is_err() && !leaf.is_dir() {
        return Err(format!("{} is not delegated to this user", base.display()));
    }
    if write_text(&leaf.join("cgroup.procs"), &pid.to_string()).is_err() {
        let _ = std::fs::remove_dir(&leaf);
        return Err(format!("{} is not delegated to this user", base.display()));
    }
    if enable_controllers(base).is_ok() {
        return Ok(());
    }
    let _ = write_text(&base.join("cgroup.procs"), &pid.to_string());
    let _ = std::fs::remove_dir(&leaf);
    Err(format!(
        "{} holds other processes besides rlvr; start rlvr in a delegated cgroup of its own (systemd-run --user --scope -p Delegate=yes rlvr ...)",
        base.display()
    ))
}

fn probe_v2(
    mounts: &[CgroupMount],
    own: &[(Vec<String>, String)],
    instance: u64,
) -> Result<PathBuf, String> {
    let mount = mounts
        .iter()
        .find(|mount| mount.unified)
        .ok_or("no cgroup2 mount")?;
    let own_path = own
        .iter()
        .find(|(controllers, _)| controllers.iter().all(String::is_empty))
        .map(|(_, path)| path.clone())
        .unwrap_or_else(|| "/".to_owned());
    let has_controllers = |directory: &Path| {
        read_text(&directory.join("cgroup.controllers")).is_ok_and(|text| {
            let names: Vec<&str> = text.split_whitespace().collect();
            names.contains(&"memory") && names.contains(&"pids")
        })
    };
    // Our own cgroup first; its root as a fallback (the root is exempt from the rule that a
    // cgroup with processes cannot delegate controllers to children).
    let own = join_mount(mount, &own_path);
    let mut candidates = vec![own.clone()];
    candidates.push(mount.mount_point.clone());
    let mut reasons = Vec::new();
    for base in candidates {
        if !has_controllers(&base) {
            continue;
        }
        match enable_controllers(&base) {
            Ok(()) => {}
            Err(error) if error.raw_os_error() == Some(libc::EBUSY) && base == own => {
                if let Err(reason) = enable_by_moving_out(&base) {
                    reasons.push(reason);
                    continue;
                }
            }
            Err(error) => {
                reasons.push(format!(
                    "cannot enable controllers in {}: {error}",
                    base.display()
                ));
                continue;
            }
        }
        sweep_stale(&base);
        let parent = base.join(sandbox_directory_name(instance));
        if std::fs::create_dir(&parent).is_err() && !parent.is_dir() {
            continue;
        }
        if write_text(&parent.join("cgroup.subtree_control"), "+memory +pids").is_err() {
            let _ = std::fs::remove_dir(&parent);
            continue;
        }
        return Ok(parent);
    }
    match reasons.first() {
        Some(reason) => Err(reason.clone()),
        None => Err(format!(
            "the cgroup2 mount at {} does not offer the memory and pids controllers",
            mount.mount_point.display()
        )),
    }
}

fn probe_v1(
    mounts: &[CgroupMount],
    own: &[(Vec<String>, String)],
    instance: u64,
) -> Result<CgroupLayout, String> {
    let parent_for = |controller: &str| -> Option<PathBuf> {
        let mount = mounts
            .iter()
            .find(|mount| !mount.unified && mount.controllers.iter().any(|c| c == controller))?;
        let (_, path) = own
            .iter()
            .find(|(controllers, _)| controllers.iter().any(|c| c == controller))?;
        let base = join_mount(mount, path);
        sweep_stale(&base);
        let parent = base.join(sandbox_directory_name(instance));
        (std::fs::create_dir(&parent).is_ok() || parent.is_dir()).then_some(parent)
    };
    let memory = parent_for("memory").ok_or("no writable cgroup v1 memory hierarchy")?;
    let Some(pids) = parent_for("pids") else {
        let _ = std::fs::remove_dir(&memory);
        return Err("no writable cgroup v1 pids hierarchy".to_owned());
    };
    // No cpuacct slot: joining a v1 cpuacct cgroup made every Python start 10-15 ms slower
    // here (measured); CPU time comes from wait4 of the namespace init instead, which includes
    // every descendant the kernel reaps when the namespace dies.
    let cpuacct = None;
    let swap_accounting = memory.join("memory.memsw.limit_in_bytes").exists();
    Ok(CgroupLayout::V1 {
        memory,
        pids,
        cpuacct,
        swap_accounting,
    })
}

impl Cgroups {
    /// Detects the layout and creates this process's parent cgroup(s).
    pub(crate) fn probe() -> Cgroups {
        let mounts = cgroup_mounts();
        let own = own_cgroups();
        let instance = INSTANCES.fetch_add(1, Ordering::Relaxed);
        let layout = match probe_v2(&mounts, &own, instance) {
            Ok(parent) => CgroupLayout::V2 { parent },
            Err(v2_reason) => match probe_v1(&mounts, &own, instance) {
                Ok(layout) => layout,
                Err(v1_reason) => CgroupLayout::Unavailable {
                    reason: format!("{v2_reason}; {v1_reason}"),
                },
            },
        };
        Cgroups {
            layout,
            counter: AtomicU64::new(0),
            pool: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn layout(&self) -> &CgroupLayout {
        &self.layout
    }

    /// The protections this layout provides.
    pub(crate) fn protections(&self) -> Vec<Protection> {
        match &self.layout {
            CgroupLayout::V2 { .. } => vec![
                Protection::CgroupMemory,
                Protection::CgroupPids,
                Protection::CgroupCpuAccounting,
                Protection::CgroupKill,
            ],
            CgroupLayout::V1 { cpuacct, .. } => {
                let mut protections = vec![Protection::CgroupMemory, Protection::CgroupPids];
                if cpuacct.is_some() {
                    protections.push(Protection::CgroupCpuAccounting);
                }
                protections
            }
            CgroupLayout::Unavailable { .. } => Vec::new(),
        }
    }

    /// Takes cgroups for one run and applies `memory_bytes` and `pids`.
    pub(crate) fn lease(
        self: &Arc<Self>,
        memory_bytes: u64,
        pids: u64,
    ) -> Result<Lease, SandboxError> {
        let kind = match &self.layout {
            CgroupLayout::Unavailable { .. } => LeaseKind::None,
            CgroupLayout::V2 { parent } => {
                let number = self.counter.fetch_add(1, Ordering::Relaxed);
                let directory = parent.join(format!("run-{number}"));
                std::fs::create_dir(&directory)
                    .map_err(SandboxError::path("create cgroup", &directory))?;
                let setup = || -> std::io::Result<()> {
                    write_text(&directory.join("memory.max"), &memory_bytes.to_string())?;
                    let swap = directory.join("memory.swap.max");
                    if swap.exists() {
                        write_text(&swap, "0")?;
                    }
                    write_text(&directory.join("pids.max"), &pids.to_string())
                };
                if let Err(error) = setup() {
                    let _ = std::fs::remove_dir(&directory);
                    return Err(SandboxError::path("write cgroup limits", directory)(error));
                }
                let procs = open_membership(&directory, "cgroup.procs")?;
                let handle = std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_DIRECTORY)
                    .open(&directory)
                    .map_err(SandboxError::path("open cgroup", &directory))?;
                LeaseKind::V2 {
                    directory,
                    handle,
                    procs,
                }
            }
            CgroupLayout::V1 { .. } => {
                let slot = self
                    .pool
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner())
                    .pop();
                let mut slot = match slot {
                    Some(slot) => slot,
                    None => self.new_v1_slot()?,
                };
                slot.apply(memory_bytes, pids)?;
                LeaseKind::V1(Some(slot))
            }
        };
        let mut lease = Lease {
            owner: Arc::clone(self),
            kind,
            cpu_baseline: Duration::ZERO,
            oom_baseline: 0,
        };
        let baseline = lease.raw_usage();
        lease.cpu_baseline = baseline.cpu.unwrap_or_default();
        lease.oom_baseline = baseline.out_of_memory_kills;
        Ok(lease)
    }

    fn new_v1_slot(&self) -> Result<V1Slot, SandboxError> {
        let CgroupLayout::V1 {
            memory,
            pids,
            cpuacct,
            ..
        } = &self.layout
        else {
            return Err(SandboxError::InvalidRequest {
                reason: "not a cgroup v1 layout".to_owned(),
            });
        };
        let name = format!("slot-{}", self.counter.fetch_add(1, Ordering::Relaxed));
        let mut directories = vec![memory.join(&name), pids.join(&name)];
        if let Some(cpuacct) = cpuacct {
            directories.push(cpuacct.join(&name));
        }
        let mut procs = Vec::new();
        for directory in &directories {
            std::fs::create_dir(directory)
                .map_err(SandboxError::path("create cgroup", directory))?;
            // `tasks`, not `cgroup.procs`: the child joins while it is a single thread, and a
            // thread moving itself through `tasks` skips the global `cgroup_threadgroup_rwsem`
            // write lock (an RCU grace period: 6-15 ms per run here under load).
            procs.push(open_membership(directory, "tasks")?);
        }
        Ok(V1Slot {
            memory: directories[0].clone(),
            pids: directories[1].clone(),
            cpuacct: directories.get(2).cloned(),
            procs,
            memory_limit: 0,
            pids_limit: 0,
        })
    }
}

impl V1Slot {
    fn apply(&mut self, memory_bytes: u64, pids: u64) -> Result<(), SandboxError> {
        let memory = &self.memory;
        let wrap = |file: &str| SandboxError::path("write cgroup limits", memory.join(file));
        if self.memory_limit != memory_bytes {
            let swap = memory.join("memory.memsw.limit_in_bytes");
            let has_swap = swap.exists();
            // memsw must stay >= the memory limit at every moment: lift it, set, then lower it.
            if has_swap {
                write_text(&swap, "-1").map_err(wrap("memory.memsw.limit_in_bytes"))?;
            }
            write_text(
                &memory.join("memory.limit_in_bytes"),
                &memory_bytes.to_string(),
            )
            .map_err(wrap("memory.limit_in_bytes"))?;
            if has_swap {
                write_text(&swap, &memory_bytes.to_string())
                    .map_err(wrap("memory.memsw.limit_in_bytes"))?;
            }
            self.memory_limit = memory_bytes;
        }
        if self.pids_limit != pids {
            let path = self.pids.join("pids.max");
            write_text(&path, &pids.to_string())
                .map_err(SandboxError::path("write cgroup limits", path))?;
            self.pids_limit = pids;
        }
        // Peaks restart at the current usage; errors only mean the file does not exist.
        let _ = write_text(&memory.join("memory.max_usage_in_bytes"), "0");
        let _ = write_text(&memory.join("memory.memsw.max_usage_in_bytes"), "0");
        Ok(())
    }

    fn is_empty(&self) -> bool {
        read_text(&self.pids.join("cgroup.procs")).is_ok_and(|text| text.trim().is_empty())
    }

    fn remove(&self) {
        for directory in [Some(&self.memory), Some(&self.pids), self.cpuacct.as_ref()]
            .into_iter()
            .flatten()
        {
            let _ = std::fs::remove_dir(directory);
        }
    }
}

impl Lease {
    /// The cgroup2 directory the child is cloned into (`CLONE_INTO_CGROUP`): v2 only.
    pub(crate) fn birth_cgroup(&self) -> Option<BorrowedFd<'_>> {
        match &self.kind {
            LeaseKind::V2 { handle, .. } => Some(handle.as_fd()),
            _ => None,
        }
    }

    /// Descriptors of the membership files the child writes `0` to: the v1 `tasks` files, or
    /// the v2 `cgroup.procs` when the child was not born inside (`born_inside == false`).
    pub(crate) fn join_descriptors(&self, born_inside: bool) -> Vec<RawFd> {
        match &self.kind {
            LeaseKind::None => Vec::new(),
            LeaseKind::V2 { .. } if born_inside => Vec::new(),
            LeaseKind::V2 { procs, .. } => vec![procs.as_raw_fd()],
            LeaseKind::V1(slot) => slot
                .iter()
                .flat_map(|slot| slot.procs.iter().map(AsRawFd::as_raw_fd))
                .collect(),
        }
    }

    fn raw_usage(&self) -> CgroupUsage {
        match &self.kind {
            LeaseKind::None => CgroupUsage::default(),
            LeaseKind::V2 { directory, .. } => CgroupUsage {
                cpu: read_key(&directory.join("cpu.stat"), "usage_usec").map(Duration::from_micros),
                peak_bytes: read_number(&directory.join("memory.peak")),
                out_of_memory_kills: read_key(&directory.join("memory.events"), "oom_kill")
                    .unwrap_or(0),
            },
            LeaseKind::V1(slot) => {
                let Some(slot) = slot else {
                    return CgroupUsage::default();
                };
                let memsw = slot.memory.join("memory.memsw.max_usage_in_bytes");
                let peak = read_number(&memsw)
                    .or_else(|| read_number(&slot.memory.join("memory.max_usage_in_bytes")));
                CgroupUsage {
                    cpu: slot
                        .cpuacct
                        .as_ref()
                        .and_then(|directory| read_number(&directory.join("cpuacct.usage")))
                        .map(Duration::from_nanos),
                    peak_bytes: peak,
                    out_of_memory_kills: read_key(
                        &slot.memory.join("memory.oom_control"),
                        "oom_kill",
                    )
                    .unwrap_or(0),
                }
            }
        }
    }

    /// Usage since the lease began.
    pub(crate) fn usage(&self) -> CgroupUsage {
        let raw = self.raw_usage();
        CgroupUsage {
            cpu: raw.cpu.map(|cpu| cpu.saturating_sub(self.cpu_baseline)),
            peak_bytes: raw.peak_bytes,
            out_of_memory_kills: raw.out_of_memory_kills.saturating_sub(self.oom_baseline),
        }
    }

    /// Kills every process in the cgroup (v2 `cgroup.kill`; v1 one SIGKILL per listed pid).
    pub(crate) fn kill_all(&self) {
        match &self.kind {
            LeaseKind::None => {}
            LeaseKind::V2 { directory, .. } => {
                let _ = write_text(&directory.join("cgroup.kill"), "1");
            }
            LeaseKind::V1(slot) => {
                let Some(slot) = slot else { return };
                let Ok(text) = read_text(&slot.pids.join("cgroup.procs")) else {
                    return;
                };
                for pid in text
                    .lines()
                    .filter_map(|line| line.trim().parse::<i32>().ok())
                {
                    // Host pids from a cgroup we own; a pid reused in between would belong to
                    // the same cgroup (new processes cannot join it), so this only kills ours.
                    crate::sys::kill_pid(pid, libc::SIGKILL);
                }
            }
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        match std::mem::replace(&mut self.kind, LeaseKind::None) {
            LeaseKind::None => {}
            LeaseKind::V2 {
                directory,
                handle,
                procs,
            } => {
                drop((handle, procs));
                let _ = write_text(&directory.join("cgroup.kill"), "1");
                for attempt in 0..200 {
                    match std::fs::remove_dir(&directory) {
                        Ok(()) => break,
                        Err(error)
                            if error.raw_os_error() == Some(libc::EBUSY) && attempt < 199 =>
                        {
                            std::thread::sleep(Duration::from_millis(1));
                        }
                        Err(error) => {
                            tracing::warn!(path = %directory.display(), %error, "cannot remove run cgroup");
                            break;
                        }
                    }
                }
            }
            LeaseKind::V1(Some(slot)) => {
                let mut empty = slot.is_empty();
                for _ in 0..200 {
                    if empty {
                        break;
                    }
                    if let Ok(text) = read_text(&slot.pids.join("cgroup.procs")) {
                        for pid in text
                            .lines()
                            .filter_map(|line| line.trim().parse::<i32>().ok())
                        {
                            crate::sys::kill_pid(pid, libc::SIGKILL);
                        }
                    }
                    std::thread::sleep(Duration::from_millis(1));
                    empty = slot.is_empty();
                }
                if empty {
                    self.owner
                        .pool
                        .lock()
                        .unwrap_or_else(|poison| poison.into_inner())
                        .push(slot);
                } else {
                    tracing::warn!(path = %slot.pids.display(), "cgroup slot still has processes; discarding it");
                }
            }
            LeaseKind::V1(None) => {}
        }
    }
}

impl Drop for Cgroups {
    fn drop(&mut self) {
        let slots = std::mem::take(
            self.pool
                .get_mut()
                .unwrap_or_else(|poison| poison.into_inner()),
        );
        for slot in slots {
            slot.remove();
        }
        match &self.layout {
            CgroupLayout::V2 { parent } => {
                let _ = std::fs::remove_dir(parent);
            }
            CgroupLayout::V1 {
                memory,
                pids,
                cpuacct,
                ..
            } => {
                for directory in [Some(memory), Some(pids), cpuacct.as_ref()]
                    .into_iter()
                    .flatten()
                {
                    let _ = std::fs::remove_dir(directory);
                }
            }
            CgroupLayout::Unavailable { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 15: a delegated cgroup v2 subtree (a systemd user scope with `Delegate=yes`, a
    /// container's own cgroup) is found from our own cgroup's path and used: the sandbox's
    /// parent cgroup is created under it with the memory and pids controllers enabled. This host
    /// has no cgroup2 controllers, so the hierarchy is a directory that looks like one.
    #[test]
    fn issue_15_a_delegated_cgroup_v2_subtree_is_detected_and_used() {
        let root = tempfile::tempdir().unwrap();
        let own = root.path().join("user.slice/user-1000.slice/rlvr.scope");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join("cgroup.controllers"), "cpu memory pids\n").unwrap();
        std::fs::write(own.join("cgroup.subtree_control"), "").unwrap();
        // cgroupfs gives a new cgroup its control files; a plain directory needs them made.
        let expected_parent = own.join(sandbox_directory_name(7));
        std::fs::create_dir(&expected_parent).unwrap();
        std::fs::write(expected_parent.join("cgroup.subtree_control"), "").unwrap();
        let mounts = [CgroupMount {
            root: "/".to_owned(),
            mount_point: root.path().to_path_buf(),
            unified: true,
            controllers: Vec::new(),
        }];
        let membership = [(
            vec![String::new()],
            "/user.slice/user-1000.slice/rlvr.scope".to_owned(),
        )];
        let parent = probe_v2(&mounts, &membership, 7).expect("the delegated subtree is used");
        assert_eq!(parent, expected_parent);
        assert_eq!(
            std::fs::read_to_string(own.join("cgroup.subtree_control")).unwrap(),
            "+memory +pids"
        );
        assert_eq!(
            std::fs::read_to_string(parent.join("cgroup.subtree_control")).unwrap(),
            "+memory +pids"
        );
    }

    /// Issue 15: without the memory and pids controllers, neither in our own cgroup nor at the
    /// mount's root, the probe says so (and the sandbox falls back to rlimits).
    #[test]
    fn issue_15_a_cgroup_v2_mount_without_controllers_is_refused_with_the_reason() {
        let root = tempfile::tempdir().unwrap();
        let own = root.path().join("session.scope");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join("cgroup.controllers"), "cpu io\n").unwrap();
        std::fs::write(root.path().join("cgroup.controllers"), "").unwrap();
        let mounts = [CgroupMount {
            root: "/".to_owned(),
            mount_point: root.path().to_path_buf(),
            unified: true,
            controllers: Vec::new(),
        }];
        let membership = [(vec![String::new()], "/session.scope".to_owned())];
        let reason = probe_v2(&mounts, &membership, 8).unwrap_err();
        assert!(
            reason.contains("does not offer the memory and pids controllers"),
            "{reason}"
        );
        assert!(
            std::fs::read_dir(&own).unwrap().count() == 1,
            "nothing created"
        );
    }

    #[test]
    fn issue_15_only_our_own_directories_are_swept() {
        assert_eq!(directory_owner("rlvr-sandbox-123-0"), Some("123"));
        assert_eq!(directory_owner("rlvr-verifier-77"), Some("77"));
        assert_eq!(directory_owner("rlvr-sandbox-"), None);
        assert_eq!(directory_owner("rlvr-verifier-x1"), None);
        assert_eq!(directory_owner("user.slice"), None);
    }

    #[test]
    fn issue_15_stale_leaves_and_sandboxes_of_dead_processes_are_removed() {
        let base = tempfile::tempdir().expect("temp dir");
        let dead = "rlvr-verifier-999999999";
        let alive = format!("rlvr-sandbox-{}-0", std::process::id());
        for name in [
            dead,
            "rlvr-sandbox-999999998-1",
            alive.as_str(),
            "unrelated",
        ] {
            std::fs::create_dir(base.path().join(name)).expect("mkdir");
        }
        std::fs::create_dir(base.path().join("rlvr-sandbox-999999998-1/run-3")).expect("mkdir");
        sweep_stale(base.path());
        let mut left: Vec<String> = std::fs::read_dir(base.path())
            .expect("list")
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [alive, "unrelated".to_owned()]);
    }
}
