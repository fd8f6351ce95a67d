//! Running the rlvr binary in each sandbox mode (issue 15), so that one suite checks that root
//! and non-root callers get the same verdicts:
//!
//! * [`Mode::Root`]: the tests' own user (root), programs as a test-specific host uid;
//! * [`Mode::UserNamespace`]: an unprivileged test-specific uid (`setpriv`), one mapped id;
//! * [`Mode::SubordinateIds`]: the same, with `newuidmap` and subordinate ids taken from a
//!   private `/etc/passwd`, `/etc/subuid` and `/etc/subgid` bound in a mount namespace of the
//!   test's own (the machine's files are never touched).
//!
//! A mode this machine cannot provide is skipped with a message saying why; only the lack of
//! user namespaces (or of root, for the modes that need it to set up) skips, and with
//! `RLVR_REQUIRE_EVERYTHING=1` (set by `scripts/test`, so in CI) a mode that cannot run fails
//! its test instead: a test must not pass when what it tests did not run.
//!
//! Also shared: waiting on a condition ([`wait_until`]) and a local HTTP server whose answers
//! a test chooses ([`http_server`]).

#![forbid(unsafe_code)]

pub mod http_server;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How the tests call rlvr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Root,
    UserNamespace,
    SubordinateIds,
}

/// One caller of rlvr: a mode and the uids it owns for the test.
#[derive(Debug)]
pub struct Caller {
    pub mode: Mode,
    /// Root: the host uid programs run as. Otherwise: the unprivileged caller's uid.
    pub uid: u32,
    /// A directory the caller owns (mode 0700): stdin files, planted secrets, markers.
    pub directory: tempfile::TempDir,
}

fn effective_uid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Uid:"))
                .and_then(|fields| fields.split_whitespace().nth(1))
                .and_then(|value| value.parse().ok())
        })
        .unwrap_or(u32::MAX)
}

fn succeeds(command: &mut Command) -> bool {
    command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Whether a mode that cannot run must fail its test (`RLVR_REQUIRE_EVERYTHING=1`).
pub fn everything_required() -> bool {
    std::env::var_os("RLVR_REQUIRE_EVERYTHING").is_some_and(|value| value == "1")
}

/// What a test does when its subject cannot run on this machine (no cgroups, no root...): it
/// prints why and returns, to be skipped; under `RLVR_REQUIRE_EVERYTHING=1` (`scripts/test`,
/// so CI) it fails instead, since a test must not pass when what it tests did not run.
pub fn cannot_run_here(reason: &str) {
    cannot_run_here_required(reason, everything_required());
}

/// [`cannot_run_here`] with `required` given instead of read from the environment.
pub fn cannot_run_here_required(reason: &str, required: bool) {
    assert!(
        !required,
        "cannot run here and RLVR_REQUIRE_EVERYTHING=1: {reason}"
    );
    eprintln!("skipped: {reason}");
}

/// Whether an unprivileged user may create user namespaces here (checked once).
fn user_namespaces_available() -> Result<(), String> {
    static AVAILABLE: OnceLock<Result<(), String>> = OnceLock::new();
    AVAILABLE
        .get_or_init(|| {
            let works = succeeds(Command::new("setpriv").args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--",
                "unshare",
                "--user",
                "--map-root-user",
                "true",
            ]));
            if works {
                Ok(())
            } else {
                Err("an unprivileged user cannot create user namespaces here (or setpriv/unshare are missing)".to_owned())
            }
        })
        .clone()
}

/// The interpreter an unprivileged caller can run (a pyenv under /root cannot be).
pub fn unprivileged_python() -> String {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3".to_owned()
    } else {
        std::env::var("RLVR_PYTHON").unwrap_or_else(|_| "python3".to_owned())
    }
}

/// The subordinate id range of a [`Mode::SubordinateIds`] caller: ten ids from `uid * 10`.
pub fn subordinate_start(uid: u32) -> u32 {
    uid * 10
}

impl Caller {
    /// A caller in `mode` owning `uid`, or `None` (after printing why) when the mode cannot run
    /// on this machine.
    pub fn new(mode: Mode, uid: u32) -> Option<Caller> {
        let root = effective_uid() == 0;
        let skip = |reason: String| {
            assert!(
                !everything_required(),
                "sandbox mode {mode:?} cannot run here and RLVR_REQUIRE_EVERYTHING=1: {reason}"
            );
            eprintln!("skipped ({mode:?}): {reason}");
            None
        };
        match mode {
            Mode::Root if !root => return skip("needs root".to_owned()),
            Mode::UserNamespace | Mode::SubordinateIds => {
                if let Err(reason) = user_namespaces_available() {
                    return skip(reason);
                }
                if !root {
                    return skip(
                        "needs root to run as a test-specific unprivileged uid".to_owned(),
                    );
                }
                if mode == Mode::SubordinateIds
                    && !(Path::new("/usr/bin/newuidmap").exists()
                        && Path::new("/usr/bin/newgidmap").exists())
                {
                    return skip("newuidmap/newgidmap are not installed (package uidmap; scripts/setup installs it)".to_owned());
                }
            }
            Mode::Root => {}
        }
        let directory = tempfile::tempdir().expect("temp dir");
        let owner = if mode == Mode::Root { 0 } else { uid };
        std::os::unix::fs::chown(directory.path(), Some(owner), Some(owner)).expect("chown");
        std::fs::set_permissions(directory.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        let caller = Caller {
            mode,
            uid,
            directory,
        };
        if mode == Mode::SubordinateIds {
            let name = format!("rlvr-test-{uid}");
            let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
            caller.write(
                "passwd",
                format!("{passwd}{name}:x:{uid}:{uid}::/tmp:/usr/sbin/nologin\n").as_bytes(),
            );
            let range = format!("{name}:{}:10\n", subordinate_start(uid));
            caller.write("subuid", range.as_bytes());
            caller.write("subgid", range.as_bytes());
        }
        Some(caller)
    }

    /// Writes a file in the caller's directory (readable by the caller) and returns its path.
    pub fn write(&self, name: &str, contents: &[u8]) -> PathBuf {
        let path = self.directory.path().join(name);
        std::fs::write(&path, contents).expect("write caller file");
        let owner = if self.mode == Mode::Root { 0 } else { self.uid };
        std::os::unix::fs::chown(&path, Some(owner), Some(owner)).expect("chown");
        path
    }

    /// `PROGRAM ARGUMENTS...` as this caller, with the sandbox settings of its mode.
    pub fn program(&self, program: &str, arguments: &[&str]) -> Command {
        let uid = self.uid.to_string();
        let as_user = [
            format!("--reuid={uid}"),
            format!("--regid={uid}"),
            "--clear-groups".to_owned(),
            "--".to_owned(),
        ];
        let mut command = match self.mode {
            Mode::Root => {
                let mut command = Command::new(program);
                command.args(arguments);
                command
                    .env("RLVR_SANDBOX_UID", &uid)
                    .env("RLVR_SANDBOX_RUNNER_UID", (self.uid + 500).to_string());
                command
            }
            Mode::UserNamespace => {
                let mut command = Command::new("setpriv");
                command.args(&as_user).arg(program).args(arguments);
                command
            }
            Mode::SubordinateIds => {
                let script = format!(
                    "mount --bind \"$0/passwd\" /etc/passwd && mount --bind \"$0/subuid\" /etc/subuid && mount --bind \"$0/subgid\" /etc/subgid && exec setpriv {} \"$@\"",
                    as_user.join(" ")
                );
                let mut command = Command::new("unshare");
                command
                    .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
                    .arg(script)
                    .arg(self.directory.path())
                    .arg(program)
                    .args(arguments);
                command
            }
        };
        if self.mode != Mode::Root {
            command
                .env("RLVR_PYTHON", unprivileged_python())
                .env("HOME", "/tmp")
                .env_remove("XDG_RUNTIME_DIR")
                .env_remove("TMPDIR");
        }
        command
    }

    /// Host uids the sandbox's processes of this caller run as.
    pub fn sandbox_uids(&self) -> Vec<u32> {
        match self.mode {
            Mode::Root => vec![self.uid, self.uid + 500],
            Mode::UserNamespace => vec![self.uid],
            Mode::SubordinateIds => vec![self.uid, subordinate_start(self.uid)],
        }
    }

    /// The protections every run of this caller must report.
    pub fn expected_protections(&self) -> Vec<&'static str> {
        let mut expected = vec![
            "pid_namespace",
            "network_namespace",
            "mount_namespace",
            "minimal_root",
            "user_namespace",
            "pid_namespace_per_test",
            "seccomp",
            "unprivileged_user",
        ];
        match self.mode {
            Mode::Root => expected.extend(["cgroup_memory", "cgroup_pids", "separate_runner_user"]),
            Mode::UserNamespace => {}
            Mode::SubordinateIds => expected.push("separate_runner_user"),
        }
        expected
    }
}

/// Pids of live processes whose real uid is one of `uids`.
pub fn processes_of(uids: &[u32]) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let real_uid = status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|fields| fields.split_whitespace().next())
            .and_then(|value| value.parse::<u32>().ok());
        if real_uid.is_some_and(|uid| uids.contains(&uid)) {
            found.push(pid);
        }
    }
    found
}

/// The interpreter the tests run Python with (`$RLVR_PYTHON`, as `scripts/test` sets it,
/// else `python3`).
pub fn python() -> String {
    std::env::var("RLVR_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

/// Runs `python -c SCRIPT ARGUMENTS...` with `input` on stdin and returns its stdout; the
/// test fails when it does not exit 0.
pub fn run_python(script: &str, arguments: &[&str], input: &str) -> String {
    use std::io::Write;
    use std::process::Stdio;

    let mut child = Command::new(python())
        .arg("-c")
        .arg(script)
        .args(arguments)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("writes");
    let output = child.wait_with_output().expect("python ends");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8")
}

/// Asserts that no process of `uids` is left (after a moment for the kernel's bookkeeping).
pub fn assert_no_survivors(uids: &[u32]) {
    let survived = wait_until(Duration::from_secs(2), || processes_of(uids).is_empty());
    assert!(
        survived,
        "processes of uids {uids:?} survived: {:?}",
        processes_of(uids)
    );
}

/// Polls `condition` until it holds (true) or `limit` has passed (false): how a test waits on
/// a state another process reaches, never a fixed sleep. The pause between polls grows from
/// 1 ms to 50 ms.
pub fn wait_until(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    let mut pause = Duration::from_millis(1);
    loop {
        if condition() {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// [`wait_until`], returning what `probe` found once it is `Some`.
pub fn wait_for<T>(limit: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let mut found = None;
    wait_until(limit, || {
        found = probe();
        found.is_some()
    });
    found
}

/// Defines a test module with one test per mode: `NAME::root`, `NAME::user_namespace`,
/// `NAME::subordinate_ids`, each running `BODY` with its [`Caller`]. `UID` is the root mode's
/// program uid; the other modes use `UID + 1000` and `UID + 2000`.
#[macro_export]
macro_rules! in_every_mode {
    ($name:ident, $uid:expr, |$caller:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports, reason = "bodies use what they need")]
            use super::*;

            fn body($caller: &$crate::Caller) $body

            #[test]
            fn root() {
                if let Some(caller) = $crate::Caller::new($crate::Mode::Root, $uid) {
                    body(&caller);
                }
            }

            #[test]
            fn user_namespace() {
                if let Some(caller) =
                    $crate::Caller::new($crate::Mode::UserNamespace, $uid + 1000)
                {
                    body(&caller);
                }
            }

            #[test]
            fn subordinate_ids() {
                if let Some(caller) =
                    $crate::Caller::new($crate::Mode::SubordinateIds, $uid + 2000)
                {
                    body(&caller);
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_ends_when_the_condition_holds_or_the_limit_passes() {
        let mut calls = 0;
        assert!(wait_until(Duration::from_secs(5), || {
            calls += 1;
            calls == 3
        }));
        assert_eq!(calls, 3);
        let started = Instant::now();
        assert!(!wait_until(Duration::from_millis(30), || false));
        assert!(started.elapsed() >= Duration::from_millis(30));
        let mut count = 0;
        assert_eq!(
            wait_for(Duration::from_secs(5), || {
                count += 1;
                (count == 2).then_some("found")
            }),
            Some("found")
        );
    }

    #[test]
    fn what_cannot_run_is_skipped_when_not_everything_is_required() {
        cannot_run_here_required("no cgroups", false);
    }

    #[test]
    #[should_panic(expected = "cannot run here and RLVR_REQUIRE_EVERYTHING=1: no cgroups")]
    fn what_cannot_run_fails_when_everything_is_required() {
        cannot_run_here_required("no cgroups", true);
    }
}
