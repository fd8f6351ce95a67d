//! cgroup v1: the memory and pids hierarchies our own cgroup sits in, and the pool's slots
//! (one memory and one pids cgroup each), reset and reused from run to run.

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::mounts::{CgroupMount, Membership, join_mount};
use super::{
    CgroupLayout, CgroupUsage, open_membership, read_key, read_number, read_text,
    sandbox_directory_name, sweep_stale, write_text,
};
use crate::error::SandboxError;

/// Creates the parents of the slots in the memory and pids hierarchies, in our own cgroup of
/// each; or says which hierarchy is missing or not writable.
pub(super) fn probe(
    mounts: &[CgroupMount],
    own: &[Membership],
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

/// One memory and one pids cgroup (and a cpuacct one where the layout has it), with the
/// limits last written to them.
#[derive(Debug)]
pub(super) struct Slot {
    memory: PathBuf,
    pids: PathBuf,
    cpuacct: Option<PathBuf>,
    procs: Vec<File>,
    memory_limit: u64,
    pids_limit: u64,
}

impl Slot {
    /// Creates slot `name` under each parent of the layout.
    pub(super) fn create(
        memory: &Path,
        pids: &Path,
        cpuacct: Option<&Path>,
        name: &str,
    ) -> Result<Slot, SandboxError> {
        let mut directories = vec![memory.join(name), pids.join(name)];
        if let Some(cpuacct) = cpuacct {
            directories.push(cpuacct.join(name));
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
        Ok(Slot {
            memory: directories[0].clone(),
            pids: directories[1].clone(),
            cpuacct: directories.get(2).cloned(),
            procs,
            memory_limit: 0,
            pids_limit: 0,
        })
    }

    /// Sets the limits (writing only those that changed) and restarts the peaks.
    pub(super) fn apply(&mut self, memory_bytes: u64, pids: u64) -> Result<(), SandboxError> {
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

    /// The `tasks` files the child writes `0` to.
    pub(super) fn join_descriptors(&self) -> impl Iterator<Item = RawFd> + '_ {
        self.procs.iter().map(AsRawFd::as_raw_fd)
    }

    /// CPU from `cpuacct.usage` (where there is a cpuacct slot), peak from the memsw or memory
    /// maximum, OOM kills from `memory.oom_control`.
    pub(super) fn usage(&self) -> CgroupUsage {
        let memsw = self.memory.join("memory.memsw.max_usage_in_bytes");
        let peak = read_number(&memsw)
            .or_else(|| read_number(&self.memory.join("memory.max_usage_in_bytes")));
        CgroupUsage {
            cpu: self
                .cpuacct
                .as_ref()
                .and_then(|directory| read_number(&directory.join("cpuacct.usage")))
                .map(Duration::from_nanos),
            peak_bytes: peak,
            out_of_memory_kills: read_key(&self.memory.join("memory.oom_control"), "oom_kill")
                .unwrap_or(0),
        }
    }

    /// One SIGKILL per process listed in the pids cgroup.
    pub(super) fn kill_all(&self) {
        let Ok(text) = read_text(&self.pids.join("cgroup.procs")) else {
            return;
        };
        for pid in text
            .lines()
            .filter_map(|line| line.trim().parse::<i32>().ok())
        {
            // Host pids from a cgroup we own; a pid reused in between would belong to the same
            // cgroup (new processes cannot join it), so this only kills ours.
            crate::sys::kill_pid(pid, libc::SIGKILL);
        }
    }

    /// Kills until the slot holds no process (up to about 200 ms); whether it is empty, and so
    /// may go back to the pool.
    pub(super) fn drain(&self) -> bool {
        let mut empty = self.is_empty();
        for _ in 0..200 {
            if empty {
                break;
            }
            self.kill_all();
            std::thread::sleep(Duration::from_millis(1));
            empty = self.is_empty();
        }
        empty
    }

    /// Where the slot's processes are listed, for the warning when it cannot be drained.
    pub(super) fn pids_directory(&self) -> &Path {
        &self.pids
    }

    fn is_empty(&self) -> bool {
        read_text(&self.pids.join("cgroup.procs")).is_ok_and(|text| text.trim().is_empty())
    }

    /// Removes the slot's directories (they must be empty).
    pub(super) fn remove(&self) {
        for directory in [Some(&self.memory), Some(&self.pids), self.cpuacct.as_ref()]
            .into_iter()
            .flatten()
        {
            let _ = std::fs::remove_dir(directory);
        }
    }
}
