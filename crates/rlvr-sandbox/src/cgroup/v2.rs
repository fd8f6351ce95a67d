//! cgroup v2: finding a unified hierarchy with the memory and pids controllers (moving the
//! verifier into a leaf of its own where its delegated cgroup holds it), and the fresh cgroup
//! of each run, entered at birth, killed with `cgroup.kill` and removed afterwards.

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::mounts::{CgroupMount, Membership, join_mount};
use super::{
    CgroupUsage, open_membership, read_key, read_number, read_text, sandbox_directory_name,
    sweep_stale, write_text,
};
use crate::error::SandboxError;

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

/// Creates the parent of the per-run cgroups in our own cgroup, else at the mount's root, and
/// returns it; or says why neither offers the memory and pids controllers.
pub(super) fn probe(
    mounts: &[CgroupMount],
    own: &[Membership],
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

/// The cgroup of one run: created fresh (the kernel SIGKILLs a child cloned into a cgroup that
/// once had `cgroup.kill` written), never reused.
#[derive(Debug)]
pub(super) struct RunCgroup {
    directory: PathBuf,
    /// The directory itself, for `clone3(CLONE_INTO_CGROUP)`.
    handle: File,
    /// `cgroup.procs`, for the fallback join where `clone3` is unavailable.
    procs: File,
}

impl RunCgroup {
    /// Creates `directory` with `memory_bytes` of memory, no swap, and `pids` processes.
    pub(super) fn create(
        directory: PathBuf,
        memory_bytes: u64,
        pids: u64,
    ) -> Result<RunCgroup, SandboxError> {
        std::fs::create_dir(&directory).map_err(SandboxError::path("create cgroup", &directory))?;
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
        Ok(RunCgroup {
            directory,
            handle,
            procs,
        })
    }

    /// The directory, for `clone3(CLONE_INTO_CGROUP)`.
    pub(super) fn handle(&self) -> BorrowedFd<'_> {
        self.handle.as_fd()
    }

    /// `cgroup.procs`, which a child not born inside writes `0` to.
    pub(super) fn procs(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// CPU from `cpu.stat`, peak from `memory.peak`, OOM kills from `memory.events`.
    pub(super) fn usage(&self) -> CgroupUsage {
        let directory = &self.directory;
        CgroupUsage {
            cpu: read_key(&directory.join("cpu.stat"), "usage_usec").map(Duration::from_micros),
            peak_bytes: read_number(&directory.join("memory.peak")),
            out_of_memory_kills: read_key(&directory.join("memory.events"), "oom_kill")
                .unwrap_or(0),
        }
    }

    /// Kills every process in the cgroup (`cgroup.kill`).
    pub(super) fn kill_all(&self) {
        let _ = write_text(&self.directory.join("cgroup.kill"), "1");
    }

    /// Kills what is left and removes the directory, waiting for the kernel to empty it.
    pub(super) fn remove(self) {
        let RunCgroup {
            directory,
            handle,
            procs,
        } = self;
        drop((handle, procs));
        let _ = write_text(&directory.join("cgroup.kill"), "1");
        for attempt in 0..200 {
            match std::fs::remove_dir(&directory) {
                Ok(()) => break,
                Err(error) if error.raw_os_error() == Some(libc::EBUSY) && attempt < 199 => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(error) => {
                    tracing::warn!(path = %directory.display(), %error, "cannot remove run cgroup");
                    break;
                }
            }
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
        let parent = probe(&mounts, &membership, 7).expect("the delegated subtree is used");
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
        let reason = probe(&mounts, &membership, 8).unwrap_err();
        assert!(
            reason.contains("does not offer the memory and pids controllers"),
            "{reason}"
        );
        assert!(
            std::fs::read_dir(&own).unwrap().count() == 1,
            "nothing created"
        );
    }
}
