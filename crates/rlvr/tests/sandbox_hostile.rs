//! Issue 4: hostile programs through `rlvr run --json`. Each must end with the right verdict
//! within its limit plus a grace, leave the host and the verifier untouched, and leave no
//! process behind. Every test runs its sandbox under its own uid (`RLVR_SANDBOX_UID`), so the
//! "no survivor" check is exact even while other tests run concurrently.

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Slack on top of a limit for a loaded 2-core machine (start-up, kill, reap, cgroup cleanup).
const GRACE: Duration = Duration::from_secs(5);

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hostile")
        .join(name)
}

struct Run {
    json: Value,
    elapsed: Duration,
}

impl Run {
    fn verdict(&self) -> &str {
        self.json["verdict"].as_str().unwrap_or("?")
    }

    fn stdout(&self) -> &str {
        self.json["stdout"].as_str().unwrap_or("")
    }
}

/// Runs `fixture` as uid `uid` with `time_limit` seconds and extra flags, then asserts that
/// it ended within the limit plus [`GRACE`] and that no process of `uid` survives.
fn run_hostile(name: &str, uid: u32, time_limit: u64, stdin: Option<&[u8]>, extra: &[&str]) -> Run {
    let directory = tempfile::tempdir().expect("temp dir");
    let mut command = Command::new(env!("CARGO_BIN_EXE_rlvr"));
    command
        .args(["run", "--json", "--time-limit", &time_limit.to_string()])
        .arg(fixture(name))
        .args(extra)
        .env("RLVR_SANDBOX_UID", uid.to_string())
        .env("RLVR_TEST_SECRET", "verifier-environment-secret")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(bytes) = stdin {
        let path = directory.path().join("stdin");
        std::fs::write(&path, bytes).expect("write stdin");
        command.arg("--stdin").arg(path);
    }
    let started = Instant::now();
    let output = command.output().expect("spawn rlvr");
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let json: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|error| {
        panic!(
            "{name}: not JSON ({error}): {stdout:?} stderr {:?}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let limit = Duration::from_secs(time_limit) + GRACE;
    assert!(
        elapsed <= limit,
        "{name}: took {elapsed:?}, limit + grace {limit:?}"
    );
    assert_no_survivors(uid);
    Run { json, elapsed }
}

/// Pids of live processes running as `uid`.
fn processes_of(uid: u32) -> Vec<u32> {
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
        if real_uid == Some(uid) {
            found.push(pid);
        }
    }
    found
}

fn assert_no_survivors(uid: u32) {
    // `rlvr run` reaps everything before it exits; allow a moment for the kernel's bookkeeping.
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let survivors = processes_of(uid);
        if survivors.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "processes of uid {uid} survived: {survivors:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn fork_bomb_is_contained_and_times_out() {
    let run = run_hostile("fork_bomb.py", 61001, 2, None, &[]);
    assert_eq!(run.verdict(), "timeout", "{}", run.json);
}

#[test]
fn thread_bomb_hits_the_process_limit() {
    let run = run_hostile("thread_bomb.py", 61002, 10, None, &[]);
    assert_eq!(run.verdict(), "runtime_error", "{}", run.json);
    assert!(
        run.json["stderr"]
            .as_str()
            .unwrap_or("")
            .contains("can't start new thread"),
        "{}",
        run.json
    );
}

#[test]
fn allocating_past_the_memory_limit_is_a_memory_limit() {
    let run = run_hostile("memory_hog.py", 61003, 20, None, &["--memory-limit", "256"]);
    assert_eq!(run.verdict(), "memory_limit", "{}", run.json);
    let peak = run.json["peak_memory_kib"].as_u64().unwrap_or(0);
    // The kernel's per-CPU charge batching lets the peak overshoot the limit by a few MiB.
    assert!(
        peak <= 256 * 1024 * 11 / 10,
        "peak {peak} KiB far above the limit"
    );
}

#[test]
fn one_huge_allocation_is_a_memory_limit() {
    let run = run_hostile(
        "memory_huge.py",
        61004,
        10,
        None,
        &["--memory-limit", "256"],
    );
    assert_eq!(run.verdict(), "memory_limit", "{}", run.json);
}

#[test]
fn infinite_loop_times_out() {
    let run = run_hostile("infinite_loop.py", 61005, 1, None, &[]);
    assert_eq!(run.verdict(), "timeout", "{}", run.json);
}

#[test]
fn long_sleep_times_out_on_the_wall_clock() {
    let run = run_hostile("long_sleep.py", 61006, 1, None, &[]);
    assert_eq!(run.verdict(), "timeout", "{}", run.json);
    assert!(run.elapsed >= Duration::from_secs(1));
}

#[test]
fn double_forked_setsid_daemon_dies_with_the_program() {
    let marker = std::env::temp_dir().join(format!("rlvr-daemon-escaped-{}", std::process::id()));
    let run = run_hostile(
        "daemon.py",
        61007,
        10,
        Some(marker.to_string_lossy().as_bytes()),
        &[],
    );
    assert_eq!(run.verdict(), "ok", "{}", run.json);
    // The grandchild would have written after 2 s; give it the chance to prove it is dead.
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        !marker.exists(),
        "the daemon escaped and wrote {}",
        marker.display()
    );
    assert_no_survivors(61007);
}

#[test]
fn killing_everything_and_the_parent_leaves_the_verifier_alive() {
    let run = run_hostile("kill_everything.py", 61008, 10, None, &[]);
    // `rlvr run` printed JSON, so it survived; the program (init of its namespace) did too.
    assert!(run.stdout().contains("still alive"), "{}", run.json);
}

#[test]
fn tcp_connect_to_a_host_listener_is_blocked() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("address").port();
    let run = run_hostile(
        "tcp_connect.py",
        61009,
        10,
        Some(port.to_string().as_bytes()),
        &[],
    );
    assert_eq!(run.verdict(), "ok", "{}", run.json);
    assert!(run.stdout().starts_with("blocked"), "{}", run.json);
    match listener.accept() {
        Ok((mut stream, peer)) => {
            let mut received = Vec::new();
            let _ = stream.read_to_end(&mut received);
            panic!("the listener saw a connection from {peer}: {received:?}");
        }
        Err(error) => assert_eq!(error.kind(), std::io::ErrorKind::WouldBlock),
    }
}

#[test]
fn dns_resolution_fails() {
    let run = run_hostile("dns.py", 61010, 10, None, &[]);
    assert_eq!(run.verdict(), "ok", "{}", run.json);
    assert!(run.stdout().starts_with("blocked"), "{}", run.json);
}

#[test]
fn writes_outside_the_work_directory_never_reach_the_host() {
    let host_tmp = std::env::temp_dir()
        .join(format!("rlvr-hostile-{}", std::process::id()))
        .join("escaped");
    let repository =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("escaped-{}", std::process::id()));
    let targets = [
        host_tmp.clone(),
        repository.clone(),
        PathBuf::from("/usr/escaped"),
        PathBuf::from("/escaped"),
    ];
    let stdin: Vec<String> = targets
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    let run = run_hostile(
        "write_outside.py",
        61011,
        10,
        Some(stdin.join("\n").as_bytes()),
        &[],
    );
    assert_eq!(run.verdict(), "ok", "{}", run.json);
    assert!(
        !host_tmp.exists() && !host_tmp.parent().is_some_and(Path::exists),
        "host /tmp was written"
    );
    assert!(!repository.exists(), "the repository was written");
    assert!(!Path::new("/usr/escaped").exists() && !Path::new("/escaped").exists());
    assert!(run.stdout().contains("denied /usr/escaped"), "{}", run.json);
}

#[test]
fn host_secrets_are_invisible() {
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
    let secret = home.join(format!(".rlvr-hostile-secret-{}", std::process::id()));
    std::fs::write(&secret, "planted-home-secret").expect("plant the secret");
    let run = run_hostile(
        "read_secrets.py",
        61012,
        10,
        Some(secret.to_string_lossy().as_bytes()),
        &[],
    );
    let _ = std::fs::remove_file(&secret);
    assert_eq!(run.verdict(), "ok", "{}", run.json);
    let text = run.json.to_string();
    assert!(
        !text.contains("planted-home-secret"),
        "the home secret leaked: {text}"
    );
    assert!(
        !text.contains("verifier-environment-secret"),
        "the environment leaked: {text}"
    );
    assert!(run.stdout().contains("file denied"), "{}", run.json);
    assert!(run.stdout().contains("env: absent"), "{}", run.json);
}

#[test]
fn ptrace_and_parent_memory_are_denied() {
    let run = run_hostile("ptrace_parent.py", 61013, 10, None, &[]);
    assert_eq!(run.verdict(), "ok", "{}", run.json);
    let stdout = run.stdout();
    for line in stdout.lines().filter(|line| line.starts_with("ptrace")) {
        assert!(
            line.contains("= -1 errno 1"),
            "ptrace was not denied: {line}"
        );
    }
    // getppid() is 0 for the init of a PID namespace: the verifier is not even visible.
    assert!(stdout.contains("mem 0: denied"), "{stdout}");
}

#[test]
fn filling_the_tmpfs_stops_at_its_size() {
    let run = run_hostile("fill_tmpfs.py", 61014, 20, None, &[]);
    assert_eq!(run.verdict(), "ok", "{}", run.json);
    assert!(run.stdout().starts_with("full after"), "{}", run.json);
}

#[test]
fn a_gigabyte_of_output_is_an_output_limit() {
    let run = run_hostile(
        "gigabyte_output.py",
        61015,
        20,
        None,
        &["--output-limit", "1048576"],
    );
    assert_eq!(run.verdict(), "output_limit", "{}", run.json);
    assert_eq!(run.json["stdout_truncated"], Value::Bool(true));
    assert_eq!(run.stdout().len(), 1 << 20);
}

#[test]
fn not_reading_a_large_stdin_does_not_block() {
    let stdin = vec![b'7'; 50 << 20];
    let run = run_hostile("ignore_stdin.py", 61016, 10, Some(&stdin), &[]);
    assert_eq!(run.verdict(), "ok", "{}", run.json);
    assert_eq!(run.stdout(), "not reading\n");
}

#[test]
fn segfault_through_ctypes_is_a_runtime_error() {
    let run = run_hostile("segfault.py", 61017, 10, None, &[]);
    assert_eq!(run.verdict(), "runtime_error", "{}", run.json);
    assert_eq!(
        run.json["signal"],
        Value::from(libc_sigsegv()),
        "{}",
        run.json
    );
}

fn libc_sigsegv() -> i64 {
    11
}

#[test]
fn closing_stdout_early_keeps_what_was_written() {
    let run = run_hostile("close_stdout.py", 61018, 10, None, &[]);
    assert_eq!(run.verdict(), "ok", "{}", run.json);
    assert_eq!(run.stdout(), "before\n");
    assert!(
        run.json["stderr"]
            .as_str()
            .unwrap_or("")
            .contains("still working")
    );
}

#[test]
fn json_has_exactly_the_issue_keys() {
    let run = run_hostile("ignore_stdin.py", 61019, 10, None, &[]);
    let keys: Vec<&str> = run
        .json
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "verdict",
            "exit_code",
            "signal",
            "wall_ms",
            "cpu_ms",
            "peak_memory_kib",
            "stdout",
            "stderr",
            "stdout_truncated",
            "stderr_truncated",
            "protections"
        ]
    );
    let protections: Vec<&str> = run.json["protections"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for required in [
        "pid_namespace",
        "network_namespace",
        "seccomp",
        "cgroup_memory",
        "unprivileged_user",
    ] {
        assert!(
            protections.contains(&required),
            "{required} missing from {protections:?}"
        );
    }
}

#[test]
fn doctor_json_reports_protections_interpreter_and_self_test() {
    let output = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(["doctor", "--json"])
        .env("RLVR_SANDBOX_UID", "61020")
        .output()
        .expect("spawn rlvr doctor");
    let json: Value = serde_json::from_slice(&output.stdout).expect("doctor JSON");
    for key in [
        "ok",
        "protections",
        "unavailable",
        "interpreter",
        "packages",
        "cgroups",
        "self_test",
    ] {
        assert!(json.get(key).is_some(), "missing {key}: {json}");
    }
    let self_test = json["self_test"].as_array().expect("self_test list");
    assert!(
        self_test
            .iter()
            .all(|probe| probe["passed"] == Value::Bool(true)),
        "{json:#}"
    );
    assert!(
        json["interpreter"]["host_executable"]
            .as_str()
            .is_some_and(|path| !path.is_empty())
    );
    assert_no_survivors(61020);
}

#[test]
fn no_cgroup_is_left_behind_by_finished_verifiers() {
    // Every `rlvr-sandbox-<pid>-<n>` directory under the cgroups this test process (and so every
    // verifier it starts) lives in must belong to a live process. Other sessions' cgroups on the
    // same machine are not ours to judge.
    let mut roots: Vec<PathBuf> = Vec::new();
    let membership = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    for line in membership.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (
            fields.next(),
            fields.next().unwrap_or(""),
            fields.next().unwrap_or(""),
        );
        let relative = path.trim_start_matches('/');
        match controllers {
            "" => {
                roots.push(Path::new("/sys/fs/cgroup").join(relative));
                roots.push(Path::new("/sys/fs/cgroup/unified").join(relative));
            }
            names => {
                for name in names.split(',') {
                    roots.push(Path::new("/sys/fs/cgroup").join(name).join(relative));
                }
            }
        }
    }
    let mut stale = Vec::new();
    for root in roots {
        let mut stack = vec![root];
        while let Some(directory) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&directory) else {
                continue;
            };
            for entry in entries.flatten() {
                if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    continue;
                }
                let name = entry.file_name().to_string_lossy().into_owned();
                match name
                    .strip_prefix("rlvr-sandbox-")
                    .and_then(|rest| rest.split('-').next())
                {
                    Some(pid) if !Path::new("/proc").join(pid).exists() => stale.push(entry.path()),
                    Some(_) => {}
                    None if stack.len() < 64 => stack.push(entry.path()),
                    None => {}
                }
            }
        }
    }
    assert!(stale.is_empty(), "leftover cgroups: {stale:?}");
}
