//! Issues 4, 12 and 15: hostile programs through `rlvr run --json`, in every sandbox mode (root,
//! user namespace with one uid, user namespace with subordinate ids). Each must end with the
//! same verdict within its limit plus a grace, leave the host and the verifier untouched, and
//! leave no process behind. Every test owns its uids (see `support`), so the "no survivor"
//! check is exact even while other tests run concurrently.

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Caller, Mode, RunsRlvr, assert_no_survivors, in_every_mode};
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

    fn signal(&self) -> Option<i64> {
        self.json["signal"].as_i64()
    }
}

/// Runs `fixture` as `caller` with `time_limit` seconds and extra flags, then asserts that it
/// ended within the limit plus [`GRACE`] and that no process of the caller's uids survives.
fn run_hostile(
    caller: &Caller,
    name: &str,
    time_limit: u64,
    stdin: Option<&[u8]>,
    extra: &[&str],
) -> Run {
    let time_limit_text = time_limit.to_string();
    let program = fixture(name);
    let mut arguments = vec![
        "run",
        "--json",
        "--time-limit",
        &time_limit_text,
        program.to_str().expect("utf-8 path"),
    ];
    arguments.extend(extra);
    let stdin_path = stdin.map(|bytes| caller.write("stdin", bytes));
    let stdin_text = stdin_path.as_ref().map(|path| path.display().to_string());
    if let Some(path) = &stdin_text {
        arguments.extend(["--stdin", path]);
    }
    let mut command = caller.rlvr(&arguments);
    command
        .env("RLVR_TEST_SECRET", "verifier-environment-secret")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let output = command.output().expect("spawn rlvr");
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let json: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|error| {
        panic!(
            "{name} ({:?}): not JSON ({error}): {stdout:?} stderr {:?}",
            caller.mode,
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let limit = Duration::from_secs(time_limit) + GRACE;
    assert!(
        elapsed <= limit,
        "{name}: took {elapsed:?}, limit + grace {limit:?}"
    );
    assert_no_survivors(&caller.sandbox_uids());
    Run { json, elapsed }
}

in_every_mode!(fork_bomb_is_contained_and_times_out, 61001, |caller| {
    let run = run_hostile(caller, "fork_bomb.py", 2, None, &[]);
    assert_eq!(run.verdict(), "timeout", "{}", run.json);
});

in_every_mode!(thread_bomb_hits_the_process_limit, 61002, |caller| {
    let run = run_hostile(caller, "thread_bomb.py", 10, None, &[]);
    assert_eq!(run.verdict(), "runtime_error", "{}", run.json);
    assert!(
        run.json["stderr"]
            .as_str()
            .unwrap_or("")
            .contains("can't start new thread"),
        "{}",
        run.json
    );
});

in_every_mode!(
    allocating_past_the_memory_limit_is_a_memory_limit,
    61003,
    |caller| {
        let run = run_hostile(
            caller,
            "memory_hog.py",
            20,
            None,
            &["--memory-limit", "256"],
        );
        assert_eq!(run.verdict(), "memory_limit", "{}", run.json);
        let peak = run.json["peak_memory_kib"].as_u64().unwrap_or(0);
        // The kernel's per-CPU charge batching lets the peak overshoot the limit by a few MiB.
        assert!(
            peak <= 256 * 1024 * 11 / 10,
            "peak {peak} KiB far above the limit"
        );
    }
);

in_every_mode!(one_huge_allocation_is_a_memory_limit, 61004, |caller| {
    let run = run_hostile(
        caller,
        "memory_huge.py",
        10,
        None,
        &["--memory-limit", "256"],
    );
    assert_eq!(run.verdict(), "memory_limit", "{}", run.json);
});

in_every_mode!(infinite_loop_times_out, 61005, |caller| {
    let run = run_hostile(caller, "infinite_loop.py", 1, None, &[]);
    assert_eq!(run.verdict(), "timeout", "{}", run.json);
});

in_every_mode!(long_sleep_times_out_on_the_wall_clock, 61006, |caller| {
    let run = run_hostile(caller, "long_sleep.py", 1, None, &[]);
    assert_eq!(run.verdict(), "timeout", "{}", run.json);
    assert!(run.elapsed >= Duration::from_secs(1));
});

in_every_mode!(
    double_forked_setsid_daemon_dies_with_the_program,
    61007,
    |caller| {
        // A file the caller itself could create: only the sandbox stands in the way.
        let marker = caller.directory.path().join("daemon-escaped");
        let run = run_hostile(
            caller,
            "daemon.py",
            10,
            Some(marker.to_string_lossy().as_bytes()),
            &[],
        );
        assert_eq!(run.verdict(), "ok", "{}", run.json);
        // The grandchild would write after 2 s: once no process of the sandbox's uids is
        // left, nothing can write the marker later, so its absence now is final.
        assert_no_survivors(&caller.sandbox_uids());
        assert!(
            !marker.exists(),
            "the daemon escaped and wrote {}",
            marker.display()
        );
    }
);

in_every_mode!(
    killing_everything_and_the_parent_leaves_the_verifier_alive,
    61008,
    |caller| {
        let run = run_hostile(caller, "kill_everything.py", 10, None, &[]);
        // `rlvr run` printed JSON, so it survived; the program (init of its namespace) did too.
        assert!(run.stdout().contains("still alive"), "{}", run.json);
    }
);

in_every_mode!(tcp_connect_to_a_host_listener_is_blocked, 61009, |caller| {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("address").port();
    let run = run_hostile(
        caller,
        "tcp_connect.py",
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
});

in_every_mode!(
    an_abstract_unix_socket_of_the_host_is_unreachable,
    61021,
    |caller| {
        use std::os::linux::net::SocketAddrExt;
        let name = format!("rlvr-host-listener-{}-{}", std::process::id(), caller.uid);
        let address =
            std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).expect("address");
        let listener = std::os::unix::net::UnixListener::bind_addr(&address).expect("listen");
        listener.set_nonblocking(true).expect("nonblocking");
        let run = run_hostile(caller, "abstract_socket.py", 10, Some(name.as_bytes()), &[]);
        assert_eq!(run.verdict(), "ok", "{}", run.json);
        assert!(run.stdout().starts_with("blocked"), "{}", run.json);
        assert!(
            listener.accept().is_err(),
            "the host listener saw a connection"
        );
    }
);

in_every_mode!(dns_resolution_fails, 61010, |caller| {
    let run = run_hostile(caller, "dns.py", 10, None, &[]);
    assert_eq!(run.verdict(), "ok", "{}", run.json);
    assert!(run.stdout().starts_with("blocked"), "{}", run.json);
});

in_every_mode!(
    writes_outside_the_work_directory_never_reach_the_host,
    61011,
    |caller| {
        // The caller may write its own directory: only the sandbox stands in the way.
        let own = caller.directory.path().join("escaped");
        let host_tmp = std::env::temp_dir()
            .join(format!(
                "rlvr-hostile-{}-{}",
                std::process::id(),
                caller.uid
            ))
            .join("escaped");
        let targets = [
            own.clone(),
            host_tmp.clone(),
            PathBuf::from("/usr/escaped"),
            PathBuf::from("/escaped"),
        ];
        let stdin: Vec<String> = targets
            .iter()
            .map(|path| path.display().to_string())
            .collect();
        let run = run_hostile(
            caller,
            "write_outside.py",
            10,
            Some(stdin.join("\n").as_bytes()),
            &[],
        );
        assert_eq!(run.verdict(), "ok", "{}", run.json);
        assert!(!own.exists(), "the caller's directory was written");
        assert!(
            !host_tmp.exists() && !host_tmp.parent().is_some_and(Path::exists),
            "host /tmp was written"
        );
        assert!(!Path::new("/usr/escaped").exists() && !Path::new("/escaped").exists());
        assert!(run.stdout().contains("denied /usr/escaped"), "{}", run.json);
    }
);

in_every_mode!(host_secrets_are_invisible, 61012, |caller| {
    // A secret the caller can read outside the sandbox.
    let secret = caller.write(".rlvr-hostile-secret", b"planted-home-secret");
    let run = run_hostile(
        caller,
        "read_secrets.py",
        10,
        Some(secret.to_string_lossy().as_bytes()),
        &[],
    );
    assert_eq!(run.verdict(), "ok", "{}", run.json);
    let text = run.json.to_string();
    assert!(
        !text.contains("planted-home-secret"),
        "the secret leaked: {text}"
    );
    assert!(
        !text.contains("verifier-environment-secret"),
        "the environment leaked: {text}"
    );
    assert!(run.stdout().contains("file denied"), "{}", run.json);
    assert!(run.stdout().contains("env: absent"), "{}", run.json);
});

in_every_mode!(ptrace_kills_the_process_with_sigsys, 61013, |caller| {
    let run = run_hostile(caller, "ptrace_parent.py", 10, None, &[]);
    assert_eq!(run.verdict(), "runtime_error", "{}", run.json);
    assert_eq!(run.signal(), Some(31), "SIGSYS: {}", run.json);
    assert!(!run.stdout().contains("ptrace("), "{}", run.json);
});

in_every_mode!(no_process_memory_can_be_opened, 61022, |caller| {
    let run = run_hostile(caller, "proc_memory.py", 10, None, &[]);
    assert_eq!(run.verdict(), "ok", "{}", run.json);
    assert!(!run.stdout().contains("opened"), "{}", run.json);
    assert!(run.stdout().ends_with("done\n"), "{}", run.json);
});

in_every_mode!(
    issue_12_hostile_system_calls_kill_with_sigsys,
    61023,
    |caller| {
        for call in [
            "ptrace",
            "process_vm_readv",
            "mount",
            "pivot_root",
            "unshare",
            "setns",
            "clone_newuser",
            "keyctl",
            "bpf",
            "perf_event_open",
            "userfaultfd",
            "open_by_handle_at",
            "kexec_load",
            "init_module",
            "reboot",
            "open_tree",
            "pidfd_getfd",
        ] {
            let run = run_hostile(caller, "killed_call.py", 10, Some(call.as_bytes()), &[]);
            assert_eq!(
                run.signal(),
                Some(31),
                "{call} was not killed: {}",
                run.json
            );
            assert_eq!(run.stdout(), "", "{call} returned: {}", run.json);
        }
    }
);

in_every_mode!(
    issue_12_probed_system_calls_fail_with_an_errno,
    61024,
    |caller| {
        let run = run_hostile(caller, "probed_calls.py", 10, None, &[]);
        assert_eq!(run.verdict(), "ok", "{}", run.json);
        assert_eq!(
            run.stdout(),
            "clone3 -1 ENOSYS\nio_uring_setup -1 ENOSYS\nshmget -1 EPERM\n\
             name_to_handle_at -1 EPERM\nsocket inet EPERM\nalive\n"
        );
    }
);

in_every_mode!(filling_the_tmpfs_stops_at_its_size, 61014, |caller| {
    let run = run_hostile(caller, "fill_tmpfs.py", 20, None, &[]);
    assert_eq!(run.verdict(), "ok", "{}", run.json);
    assert!(run.stdout().starts_with("full after"), "{}", run.json);
});

in_every_mode!(a_gigabyte_of_output_is_an_output_limit, 61015, |caller| {
    let run = run_hostile(
        caller,
        "gigabyte_output.py",
        20,
        None,
        &["--output-limit", "1048576"],
    );
    assert_eq!(run.verdict(), "output_limit", "{}", run.json);
    assert_eq!(run.json["stdout_truncated"], Value::Bool(true));
    assert_eq!(run.stdout().len(), 1 << 20);
});

in_every_mode!(not_reading_a_large_stdin_does_not_block, 61016, |caller| {
    let stdin = vec![b'7'; 50 << 20];
    let run = run_hostile(caller, "ignore_stdin.py", 10, Some(&stdin), &[]);
    assert_eq!(run.verdict(), "ok", "{}", run.json);
    assert_eq!(run.stdout(), "not reading\n");
});

in_every_mode!(
    segfault_through_ctypes_is_a_runtime_error,
    61017,
    |caller| {
        let run = run_hostile(caller, "segfault.py", 10, None, &[]);
        assert_eq!(run.verdict(), "runtime_error", "{}", run.json);
        assert_eq!(run.signal(), Some(11), "{}", run.json);
    }
);

in_every_mode!(
    closing_stdout_early_keeps_what_was_written,
    61018,
    |caller| {
        let run = run_hostile(caller, "close_stdout.py", 10, None, &[]);
        assert_eq!(run.verdict(), "ok", "{}", run.json);
        assert_eq!(run.stdout(), "before\n");
        assert!(
            run.json["stderr"]
                .as_str()
                .unwrap_or("")
                .contains("still working")
        );
    }
);

in_every_mode!(json_has_exactly_the_issue_keys, 61019, |caller| {
    let run = run_hostile(caller, "ignore_stdin.py", 10, None, &[]);
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
    for required in caller.expected_protections() {
        assert!(
            protections.contains(&required),
            "{required} missing from {protections:?}"
        );
    }
    // Without a cgroup of ours, rlimits are the limits, and the run says so.
    if !protections.contains(&"cgroup_memory") {
        assert!(
            protections.contains(&"process_memory_limit")
                && protections.contains(&"process_count_limit"),
            "{protections:?}"
        );
    }
});

in_every_mode!(
    doctor_json_reports_the_mode_protections_and_self_test,
    61020,
    |caller| {
        let output = caller
            .rlvr(&["doctor", "--json"])
            .output()
            .expect("spawn rlvr doctor");
        let json: Value = serde_json::from_slice(&output.stdout).expect("doctor JSON");
        for key in [
            "ok",
            "mode",
            "identity",
            "limits",
            "protections",
            "unavailable",
            "restrictions",
            "interpreter",
            "packages",
            "cgroups",
            "self_test",
        ] {
            assert!(json.get(key).is_some(), "missing {key}: {json}");
        }
        let expected_mode = match caller.mode {
            Mode::Root => "root",
            Mode::UserNamespace | Mode::SubordinateIds => "user_namespace",
        };
        assert_eq!(json["mode"], expected_mode, "{json:#}");
        if caller.mode == Mode::SubordinateIds {
            assert_eq!(json["id_mapping"]["kind"], "subordinate", "{json:#}");
        }
        let self_test = json["self_test"].as_array().expect("self_test list");
        assert!(
            self_test
                .iter()
                .all(|probe| probe["passed"] == Value::Bool(true)),
            "{json:#}"
        );
        assert_eq!(output.status.code(), Some(0), "{json:#}");
        assert_no_survivors(&caller.sandbox_uids());
    }
);

#[test]
fn no_cgroup_is_left_behind_by_finished_verifiers() {
    // Runs verifiers of its own (one ends normally, one on a timeout) and checks that no
    // `rlvr-sandbox-<pid>-<n>` directory of theirs is left under the cgroups this test lives in.
    // Only our own pids are judged: another test (or session) that SIGKILLs its verifier leaves
    // a directory that the next sandbox start sweeps, which is not this test's business.
    let mut pids = Vec::new();
    for (source, time_limit) in [("print(1)", "5"), ("while True:\n    pass", "1")] {
        let directory = tempfile::tempdir().expect("temp dir");
        let program = directory.path().join("program.py");
        std::fs::write(&program, source).expect("write program");
        let child = Command::new(env!("CARGO_BIN_EXE_rlvr"))
            .args(["run", "--json", "--time-limit", time_limit])
            .arg(&program)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn rlvr");
        pids.push(child.id());
        let output = child.wait_with_output().expect("rlvr ends");
        assert!(output.status.code().is_some(), "{:?}", output.status);
    }
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
    let ours: Vec<String> = pids
        .iter()
        .map(|pid| format!("rlvr-sandbox-{pid}-"))
        .collect();
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
                if ours.iter().any(|prefix| name.starts_with(prefix.as_str())) {
                    stale.push(entry.path());
                } else if !name.starts_with("rlvr-sandbox-") && stack.len() < 64 {
                    stack.push(entry.path());
                }
            }
        }
    }
    assert!(
        stale.is_empty(),
        "leftover cgroups of our verifiers: {stale:?}"
    );
}

#[test]
fn issue_15_a_refused_sandbox_names_the_restriction_and_its_remedy() {
    // user.max_user_namespaces is per user namespace: inside one of the test's own, set to 0,
    // rlvr cannot create its sandbox namespace, must refuse with exit status 3, and must name
    // the setting and the remedy. The machine's own settings are never touched.
    let Some(caller) = Caller::new(Mode::UserNamespace, 62098) else {
        return;
    };
    let program = caller.write("program.py", b"print(1)\n");
    let script = "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" run \"$1\"";
    let output = caller
        .program(
            "unshare",
            &[
                "--user",
                "--map-root-user",
                "--",
                "sh",
                "-c",
                script,
                env!("CARGO_BIN_EXE_rlvr"),
                program.to_str().expect("utf-8"),
            ],
        )
        .output()
        .expect("spawn rlvr");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("user.max_user_namespaces is 0")
            && stderr.contains("remedy: sudo sysctl -w user.max_user_namespaces="),
        "{stderr}"
    );
}
