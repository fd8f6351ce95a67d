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
//!
//! This module holds detection ([`Cgroups::probe`]: v2 first, then v1) and the interface the
//! rest of the crate uses ([`Cgroups`], [`Lease`]); [`mounts`] finds the hierarchies, [`v2`]
//! and [`v1`] hold each version's probe and per-run cgroups.

mod mounts;
mod v1;
mod v2;

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{BorrowedFd, RawFd};
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
    pool: Mutex<Vec<v1::Slot>>,
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
    V2(v2::RunCgroup),
    V1(Option<v1::Slot>),
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

impl Cgroups {
    /// Detects the layout and creates this process's parent cgroup(s).
    pub(crate) fn probe() -> Cgroups {
        let mounts = mounts::cgroup_mounts();
        let own = mounts::own_cgroups();
        let instance = INSTANCES.fetch_add(1, Ordering::Relaxed);
        let layout = match v2::probe(&mounts, &own, instance) {
            Ok(parent) => CgroupLayout::V2 { parent },
            Err(v2_reason) => match v1::probe(&mounts, &own, instance) {
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
                LeaseKind::V2(v2::RunCgroup::create(directory, memory_bytes, pids)?)
            }
            CgroupLayout::V1 {
                memory,
                pids: pids_parent,
                cpuacct,
                ..
            } => {
                let slot = self
                    .pool
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner())
                    .pop();
                let mut slot = match slot {
                    Some(slot) => slot,
                    None => {
                        let name = format!("slot-{}", self.counter.fetch_add(1, Ordering::Relaxed));
                        v1::Slot::create(memory, pids_parent, cpuacct.as_deref(), &name)?
                    }
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
}

impl Lease {
    /// The cgroup2 directory the child is cloned into (`CLONE_INTO_CGROUP`): v2 only.
    pub(crate) fn birth_cgroup(&self) -> Option<BorrowedFd<'_>> {
        match &self.kind {
            LeaseKind::V2(run) => Some(run.handle()),
            _ => None,
        }
    }

    /// Descriptors of the membership files the child writes `0` to: the v1 `tasks` files, or
    /// the v2 `cgroup.procs` when the child was not born inside (`born_inside == false`).
    pub(crate) fn join_descriptors(&self, born_inside: bool) -> Vec<RawFd> {
        match &self.kind {
            LeaseKind::None => Vec::new(),
            LeaseKind::V2(_) if born_inside => Vec::new(),
            LeaseKind::V2(run) => vec![run.procs()],
            LeaseKind::V1(slot) => slot.iter().flat_map(v1::Slot::join_descriptors).collect(),
        }
    }

    fn raw_usage(&self) -> CgroupUsage {
        match &self.kind {
            LeaseKind::None | LeaseKind::V1(None) => CgroupUsage::default(),
            LeaseKind::V2(run) => run.usage(),
            LeaseKind::V1(Some(slot)) => slot.usage(),
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
            LeaseKind::None | LeaseKind::V1(None) => {}
            LeaseKind::V2(run) => run.kill_all(),
            LeaseKind::V1(Some(slot)) => slot.kill_all(),
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        match std::mem::replace(&mut self.kind, LeaseKind::None) {
            LeaseKind::None | LeaseKind::V1(None) => {}
            LeaseKind::V2(run) => run.remove(),
            LeaseKind::V1(Some(slot)) => {
                if slot.drain() {
                    self.owner
                        .pool
                        .lock()
                        .unwrap_or_else(|poison| poison.into_inner())
                        .push(slot);
                } else {
                    tracing::warn!(path = %slot.pids_directory().display(), "cgroup slot still has processes; discarding it");
                }
            }
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
