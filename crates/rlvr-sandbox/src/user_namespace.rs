//! The sandbox's own user namespace, and the shared empty network namespace inside it, created
//! once per [`crate::Sandbox`] by a short-lived holder process and kept alive by descriptors.
//!
//! Every sandboxed process is created from inside this namespace (see `isolation.rs`), so its
//! own user namespace is a child of it, and the uid and gid maps written for it can only name
//! ids this one maps. This is the only thing that differs between running as root and not:
//!
//! * **root**: root itself as 0 (only the short-lived first step of a spawn ever runs as it, so
//!   that it can look up paths root can, such as an interpreter under `/root`), the program's
//!   host id as 1 and the runner's as 2; a sandboxed process's own namespace maps 1 and 2 only;
//! * **subordinate ids** (`newuidmap`/`newgidmap` and an `/etc/subuid` entry): the caller's uid
//!   as 0 (the runner), its first subordinate uid as 1 (programs);
//! * **single**: only the caller's uid, as 0 (`setgroups` denied, as the kernel requires for an
//!   unprivileged map). The program then shares the runner's uid, and the runner keeps it from
//!   acting on the runner by other means (a PID namespace per test, see docs/sandbox.md).
//!
//! In every mode a sandboxed process's user namespace has the runner as its uid 0 and, where
//! there is a second id, programs as its uid 1.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use rustix::event::PollFlags;
use rustix::pipe::PipeFlags;
use serde::Serialize;

use crate::sys::{self, ChildStack, Errno};

/// How the sandbox's user namespace maps ids to the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IdMapping {
    /// The caller is root: any two host ids.
    Root {
        /// Host uid and gid of the warm runner.
        runner: (u32, u32),
        /// Host uid and gid of programs and solutions.
        program: (u32, u32),
    },
    /// `newuidmap`/`newgidmap` with the caller's subordinate ids.
    Subordinate {
        /// The caller's uid and gid (namespace id 0, the runner).
        runner: (u32, u32),
        /// The first subordinate uid and gid (namespace id 1, programs and solutions).
        program: (u32, u32),
    },
    /// Only the caller's own ids, as namespace id 0.
    Single {
        /// The caller's uid and gid.
        caller: (u32, u32),
        /// Why no second id is mapped.
        reason: String,
    },
}

impl IdMapping {
    /// Whether programs get a uid distinct from their supervisor's.
    pub fn has_second_id(&self) -> bool {
        !matches!(self, IdMapping::Single { .. })
    }

    /// The host uids of the supervisor and of programs.
    pub fn host_uids(&self) -> (u32, u32) {
        match self {
            IdMapping::Root { runner, program } | IdMapping::Subordinate { runner, program } => {
                (runner.0, program.0)
            }
            IdMapping::Single { caller, .. } => (caller.0, caller.0),
        }
    }

    /// The uid and gid maps of a sandboxed process's own user namespace, in ids of the
    /// sandbox's: the runner as 0, programs as 1 where there is a second id.
    pub(crate) fn sandbox_id_maps(&self) -> (Vec<u8>, Vec<u8>) {
        let text: &[u8] = match self {
            IdMapping::Root { .. } => b"0 2 1\n1 1 1\n",
            IdMapping::Subordinate { .. } => b"0 0 1\n1 1 1\n",
            IdMapping::Single { .. } => b"0 0 1\n",
        };
        (text.to_vec(), text.to_vec())
    }
}

/// The namespaces a [`crate::Sandbox`] keeps for its whole life.
#[derive(Debug)]
pub(crate) struct SandboxNamespaces {
    pub(crate) user: OwnedFd,
    pub(crate) network: OwnedFd,
    pub(crate) mapping: IdMapping,
    /// Whether `setgroups` is allowed in the user namespace (and so in every child of it).
    pub(crate) groups_allowed: bool,
}

/// What the holder process reads: one pipe to be told to go on, one to report; and the
/// creator's ends of both, which the holder's copy of the descriptor table holds too.
#[derive(Debug)]
pub(crate) struct HolderPlan {
    go: RawFd,
    ready: RawFd,
    creator_go: RawFd,
    creator_ready: RawFd,
}

/// The holder, in its new user namespace: waits for its id maps, creates the network namespace
/// (owned by the user namespace), reports, and waits to be killed. Child side: raw system
/// calls only.
///
/// It first closes its copies of the creator's ends: then the creator's death (a SIGKILL
/// between the clone and the holder's own kill) closes the last writer of `go`, and the
/// holder's wait ends with end-of-file instead of lasting forever with every signal blocked.
pub(crate) fn run_holder(plan: &HolderPlan) -> ! {
    sys::close_raw(plan.creator_go);
    sys::close_raw(plan.creator_ready);
    if !matches!(sys::read_byte(plan.go), Ok(true)) {
        sys::exit_child(1);
    }
    let errno: Errno = match sys::unshare_raw(libc::CLONE_NEWNET) {
        Ok(()) => 0,
        Err(errno) => errno,
    };
    let _ = sys::write_all_raw(plan.ready, &errno.to_ne_bytes());
    let _ = sys::read_byte(plan.go);
    sys::exit_child(0)
}

/// Why the namespaces could not be created.
#[derive(Debug)]
pub(crate) struct NamespaceFailure {
    /// What was being done (`clone(CLONE_NEWUSER)`, `write uid_map`, ...).
    pub(crate) action: String,
    pub(crate) error: std::io::Error,
}

impl std::fmt::Display for NamespaceFailure {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}: {}", self.action, self.error)
    }
}

fn failure(action: impl Into<String>) -> impl FnOnce(std::io::Error) -> NamespaceFailure {
    let action = action.into();
    move |error| NamespaceFailure { action, error }
}

/// A holder process; killed and reaped on drop.
struct Holder {
    pid: libc::pid_t,
}

impl Drop for Holder {
    fn drop(&mut self) {
        sys::kill_pid(self.pid, libc::SIGKILL);
        let _ = sys::wait_child(self.pid, true);
    }
}

fn write_process_file(
    pid: libc::pid_t,
    name: &str,
    contents: &str,
) -> Result<(), NamespaceFailure> {
    let path = format!("/proc/{pid}/{name}");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .map_err(failure(format!("open {path}")))?;
    // Id map files take the whole map in one write.
    let written = file
        .write(contents.as_bytes())
        .map_err(failure(format!("write {path}")))?;
    if written != contents.len() {
        return Err(failure(format!("write {path}"))(std::io::Error::other(
            "short write",
        )));
    }
    Ok(())
}

fn run_id_tool(tool: &Path, pid: libc::pid_t, arguments: &[u32]) -> Result<(), NamespaceFailure> {
    let output = Command::new(tool)
        .arg(pid.to_string())
        .args(arguments.iter().map(u32::to_string))
        .output()
        .map_err(failure(format!("run {}", tool.display())))?;
    if output.status.success() {
        return Ok(());
    }
    Err(failure(format!("{} {pid} ...", tool.display()))(
        std::io::Error::other(format!(
            "{}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )),
    ))
}

fn write_id_maps(pid: libc::pid_t, mapping: &IdMapping) -> Result<(), NamespaceFailure> {
    match mapping {
        IdMapping::Root { runner, program } => {
            let uid_map = format!("0 0 1\n1 {} 1\n2 {} 1\n", program.0, runner.0);
            let gid_map = format!("0 0 1\n1 {} 1\n2 {} 1\n", program.1, runner.1);
            write_process_file(pid, "uid_map", &uid_map)?;
            write_process_file(pid, "gid_map", &gid_map)
        }
        IdMapping::Subordinate { runner, program } => {
            run_id_tool(
                &find_tool("newuidmap").unwrap_or_else(|| PathBuf::from("newuidmap")),
                pid,
                &[0, runner.0, 1, 1, program.0, 1],
            )?;
            run_id_tool(
                &find_tool("newgidmap").unwrap_or_else(|| PathBuf::from("newgidmap")),
                pid,
                &[0, runner.1, 1, 1, program.1, 1],
            )
        }
        IdMapping::Single { caller, .. } => {
            // An unprivileged gid map requires setgroups to be denied first.
            write_process_file(pid, "setgroups", "deny")?;
            write_process_file(pid, "uid_map", &format!("0 {} 1\n", caller.0))?;
            write_process_file(pid, "gid_map", &format!("0 {} 1\n", caller.1))
        }
    }
}

fn wait_readable(fd: &OwnedFd, timeout: Duration) -> bool {
    crate::wait::ready_until(
        fd.as_fd(),
        PollFlags::IN,
        std::time::Instant::now() + timeout,
    )
    .unwrap_or(false)
}

/// Creates the sandbox's user namespace with `mapping` and the empty network namespace in it.
pub(crate) fn create(mapping: IdMapping) -> Result<SandboxNamespaces, NamespaceFailure> {
    let pipe = || {
        rustix::pipe::pipe_with(PipeFlags::CLOEXEC)
            .map_err(|errno| failure("pipe")(std::io::Error::from(errno)))
    };
    let (go_read, go_write) = pipe()?;
    let (ready_read, ready_write) = pipe()?;
    let plan = HolderPlan {
        go: go_read.as_raw_fd(),
        ready: ready_write.as_raw_fd(),
        creator_go: go_write.as_raw_fd(),
        creator_ready: ready_read.as_raw_fd(),
    };
    let stack = ChildStack::map().map_err(failure("map the holder's stack"))?;
    let pid = sys::clone_holder(&plan, &stack).map_err(failure("clone(CLONE_NEWUSER)"))?;
    let holder = Holder { pid };
    let mut go = File::from(go_write);
    let result = (|| {
        write_id_maps(pid, &mapping)?;
        go.write_all(b"1").map_err(failure("start the holder"))?;
        if !wait_readable(&ready_read, Duration::from_secs(30)) {
            return Err(failure("wait for the holder")(std::io::Error::from(
                std::io::ErrorKind::TimedOut,
            )));
        }
        let mut report = [0u8; 4];
        File::from(
            ready_read
                .try_clone()
                .map_err(failure("read the holder's report"))?,
        )
        .read_exact(&mut report)
        .map_err(failure("read the holder's report"))?;
        let errno = Errno::from_ne_bytes(report);
        if errno != 0 {
            return Err(failure("unshare(CLONE_NEWNET) inside the user namespace")(
                std::io::Error::from_raw_os_error(errno),
            ));
        }
        let open = |kind: &str| -> Result<OwnedFd, NamespaceFailure> {
            let path = format!("/proc/{pid}/ns/{kind}");
            fs_err::File::open(&path)
                .map(|file| OwnedFd::from(file.into_file()))
                .map_err(failure(format!("open {path}")))
        };
        let user = open("user")?;
        let network = open("net")?;
        let groups = fs_err::read_to_string(format!("/proc/{pid}/setgroups"))
            .map_err(failure("read setgroups"))?;
        Ok(SandboxNamespaces {
            user,
            network,
            groups_allowed: groups.trim() == "allow",
            mapping: mapping.clone(),
        })
    })();
    // Killed and reaped either way: the descriptors keep the namespaces alive.
    drop(holder);
    drop(stack); // reaped: nothing runs on it any more
    drop((plan, ready_write, go_read, go));
    result
}

/// `name` in the usual places (`PATH` may be minimal for services).
pub(crate) fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/bin", "/bin", "/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|directory| directory.join(name))
        .find(|candidate| candidate.is_file())
}

/// The first subordinate id range of `user` (name or number) in an `/etc/subuid`-style text.
pub(crate) fn subordinate_start(text: &str, user_name: Option<&str>, id: u32) -> Option<u32> {
    let id_text = id.to_string();
    text.lines().find_map(|line| {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        let mut fields = line.split(':');
        let owner = fields.next()?;
        let start: u32 = fields.next()?.trim().parse().ok()?;
        let count: u64 = fields.next()?.trim().parse().ok()?;
        let matches = owner == id_text || user_name.is_some_and(|name| owner == name);
        (matches && count >= 1).then_some(start)
    })
}

/// The mapping for a caller that is not root: subordinate ids where `newuidmap`, `newgidmap`
/// and entries in `/etc/subuid` and `/etc/subgid` exist, else the caller's own ids.
pub(crate) fn unprivileged_mapping() -> IdMapping {
    let caller = (sys::effective_uid(), sys::effective_gid());
    let single = |reason: String| IdMapping::Single { caller, reason };
    if find_tool("newuidmap").is_none() || find_tool("newgidmap").is_none() {
        return single(
            "newuidmap and newgidmap are not installed (Debian/Ubuntu package uidmap)".to_owned(),
        );
    }
    let name = sys::user_name(caller.0);
    let lookup = |file: &str, id: u32| {
        let text = fs_err::read_to_string(file).unwrap_or_default();
        subordinate_start(&text, name.as_deref(), id)
    };
    let (Some(uid), Some(gid)) = (
        lookup("/etc/subuid", caller.0),
        lookup("/etc/subgid", caller.1),
    ) else {
        return single(format!(
            "no subordinate ids for {} in /etc/subuid and /etc/subgid (sudo usermod --add-subuids 100000-165535 --add-subgids 100000-165535 {})",
            name.as_deref().unwrap_or("this user"),
            name.as_deref().unwrap_or("USER")
        ));
    };
    IdMapping::Subordinate {
        runner: caller,
        program: (uid, gid),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `pid` (a holder: no exit signal, so `__WALL`) exits within `limit`; killed and
    /// reaped otherwise.
    fn exits_within(pid: libc::pid_t, limit: Duration) -> bool {
        let exited = rlvr_test_support::wait_until(limit, || {
            matches!(sys::wait_child(pid, false), Ok(Some(_)))
        });
        if !exited {
            sys::kill_pid(pid, libc::SIGKILL);
            let _ = sys::wait_child(pid, true);
        }
        exited
    }

    /// A creator killed between the clone and the holder's kill (a SIGKILLed `rlvr verify`)
    /// must not leave the holder behind: closing the creator's end of `go`, as its death does,
    /// ends the holder whether it was waiting to be told to go on or waiting to be killed.
    #[test]
    fn the_holder_exits_when_its_creator_is_gone() {
        for told_to_go in [false, true] {
            let pipe = || rustix::pipe::pipe_with(PipeFlags::CLOEXEC).expect("pipe");
            let (go_read, go_write) = pipe();
            let (ready_read, ready_write) = pipe();
            let plan = HolderPlan {
                go: go_read.as_raw_fd(),
                ready: ready_write.as_raw_fd(),
                creator_go: go_write.as_raw_fd(),
                creator_ready: ready_read.as_raw_fd(),
            };
            let stack = ChildStack::map().expect("stack");
            let pid = sys::clone_holder(&plan, &stack).expect("clone(CLONE_NEWUSER)");
            let mut go = File::from(go_write);
            if told_to_go {
                go.write_all(b"1").expect("tell the holder to go on");
                let mut report = [0u8; 4];
                File::from(ready_read)
                    .read_exact(&mut report)
                    .expect("its report");
            }
            drop(go); // what the creator's death does
            let exited = exits_within(pid, Duration::from_secs(10));
            assert!(exited, "told to go on: {told_to_go}");
            drop(stack);
        }
    }

    #[test]
    fn issue_15_subordinate_ids_are_found_by_name_or_number() {
        let text = "# comment\nalice:100000:65536\n1001:200000:65536\nbob:300000:0\n";
        assert_eq!(subordinate_start(text, Some("alice"), 1000), Some(100000));
        assert_eq!(subordinate_start(text, Some("carol"), 1001), Some(200000));
        assert_eq!(
            subordinate_start(text, Some("bob"), 1002),
            None,
            "an empty range is no range"
        );
        assert_eq!(subordinate_start(text, None, 4242), None);
        assert_eq!(subordinate_start("garbage\n::\n", Some("x"), 1), None);
    }

    #[test]
    fn issue_15_only_a_second_mapped_id_separates_the_program_from_its_runner() {
        let single = IdMapping::Single {
            caller: (1000, 1000),
            reason: String::new(),
        };
        assert!(!single.has_second_id());
        assert_eq!(single.host_uids(), (1000, 1000));
        let subordinate = IdMapping::Subordinate {
            runner: (1000, 1000),
            program: (100000, 100000),
        };
        assert!(subordinate.has_second_id());
        assert_eq!(subordinate.host_uids(), (1000, 100000));
    }
}
