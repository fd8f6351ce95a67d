//! Library-level tests of the sandbox (need root, as the CI machine has). A test of cgroups on
//! a machine without them is skipped, or fails under `RLVR_REQUIRE_EVERYTHING=1` (CI).

use rlvr_sandbox::{ResourceLimits, RunRequest, RunVerdict, Sandbox, SandboxConfig, Stdin};

fn sandbox() -> Sandbox {
    Sandbox::new(SandboxConfig::default()).expect("sandbox setup")
}

#[test]
fn echoes_stdin() {
    let sandbox = sandbox();
    let mut request = RunRequest::python("import sys\nprint(sys.stdin.read().upper(), end='')");
    request.stdin = Stdin::Bytes(b"hello".to_vec());
    let outcome = sandbox.run(&request).expect("run");
    assert_eq!(
        outcome.verdict,
        RunVerdict::Ok,
        "{:?}",
        String::from_utf8_lossy(&outcome.stderr)
    );
    assert_eq!(outcome.stdout, b"HELLO");
}

#[test]
fn exit_code_is_a_runtime_error() {
    let outcome = sandbox().run(&RunRequest::python("exit(3)")).expect("run");
    assert_eq!(outcome.verdict, RunVerdict::RuntimeError);
    assert_eq!(outcome.exit_code, Some(3));
}

#[test]
fn many_threads_share_one_sandbox() {
    let sandbox = sandbox();
    std::thread::scope(|scope| {
        for index in 0..4 {
            let sandbox = &sandbox;
            scope.spawn(move || {
                for round in 0..5 {
                    let outcome = sandbox
                        .run(&RunRequest::python(format!("print({index} * {round})")))
                        .expect("run");
                    assert_eq!(
                        outcome.verdict,
                        RunVerdict::Ok,
                        "{}",
                        String::from_utf8_lossy(&outcome.stderr)
                    );
                    assert_eq!(
                        String::from_utf8_lossy(&outcome.stdout).trim(),
                        (index * round).to_string()
                    );
                }
            });
        }
    });
}

#[test]
fn wall_limit_is_a_timeout() {
    let mut request = RunRequest::python("import time\ntime.sleep(60)");
    request.limits = ResourceLimits {
        wall: std::time::Duration::from_millis(500),
        ..ResourceLimits::default()
    };
    let outcome = sandbox().run(&request).expect("run");
    assert_eq!(outcome.verdict, RunVerdict::Timeout);
}

#[test]
fn spawned_runner_serves_many_requests_over_pipes() {
    use std::io::{BufRead, BufReader, Write};
    let sandbox = sandbox();
    let runner = "import sys\nfor line in sys.stdin:\n    print(int(line) * 2, flush=True)\n";
    let mut request = rlvr_sandbox::SpawnRequest::new(rlvr_sandbox::Program::Command {
        argv: vec![
            "python".into(),
            "-I".into(),
            "-S".into(),
            "-c".into(),
            runner.into(),
        ],
    });
    request.stderr = rlvr_sandbox::StdioSpec::Null;
    let mut process = sandbox.spawn(request).expect("spawn");
    let mut stdin = process.stdin.take().expect("stdin pipe");
    let mut stdout = BufReader::new(process.stdout.take().expect("stdout pipe"));
    for value in 0..20 {
        writeln!(stdin, "{value}").expect("write");
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read");
        assert_eq!(line.trim(), (value * 2).to_string());
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(200);
    assert!(
        process.wait_until(deadline).expect("wait").is_none(),
        "runner exited early"
    );
    process.kill();
    let exit = process.wait().expect("wait");
    assert_eq!(exit.signal, Some(9));
}

/// Issue 4: children join the run's cgroups cheaply (v1 `tasks`, v2 `CLONE_INTO_CGROUP`), and
/// still every run lands in them: the program sees its own memory and pids cgroups.
#[test]
fn issue_4_every_run_is_inside_its_cgroups() {
    let sandbox = sandbox();
    for _ in 0..3 {
        let request = RunRequest {
            program: rlvr_sandbox::Program::Command {
                argv: vec!["/usr/bin/cat".into(), "/proc/self/cgroup".into()],
            },
            stdin: Stdin::Empty,
            limits: ResourceLimits::default(),
            files: Vec::new(),
            network: rlvr_sandbox::Network::Isolated,
        };
        let outcome = sandbox.run(&request).expect("run");
        assert_eq!(outcome.verdict, RunVerdict::Ok);
        let text = String::from_utf8_lossy(&outcome.stdout);
        let inside = |controller: &str| {
            text.lines().any(|line| {
                let mut fields = line.splitn(3, ':');
                let _ = fields.next();
                let controllers = fields.next().unwrap_or("");
                let path = fields.next().unwrap_or("");
                (controller.is_empty() && controllers.is_empty()
                    || controllers.split(',').any(|name| name == controller))
                    && path.contains("/rlvr-sandbox-")
            })
        };
        match sandbox.cgroup_layout() {
            rlvr_sandbox::CgroupLayout::V1 { .. } => {
                assert!(inside("memory") && inside("pids"), "{text}");
            }
            rlvr_sandbox::CgroupLayout::V2 { .. } => assert!(inside(""), "{text}"),
            rlvr_sandbox::CgroupLayout::Unavailable { reason } => {
                return rlvr_test_support::cannot_run_here(&format!("no cgroups: {reason}"));
            }
        }
    }
}

/// Issue 4: the memory limit still applies to every run, and the peak and the OOM kill are
/// reported (the slot is reused, so this also checks the reset between runs).
#[test]
fn issue_4_memory_limit_peak_and_oom_kill_are_reported() {
    let sandbox = sandbox();
    if let rlvr_sandbox::CgroupLayout::Unavailable { reason } = sandbox.cgroup_layout() {
        return rlvr_test_support::cannot_run_here(&format!("no cgroups: {reason}"));
    }
    let limits = ResourceLimits {
        memory_bytes: 96 << 20,
        ..ResourceLimits::default()
    };
    for _ in 0..2 {
        let mut small = RunRequest::python("b = bytearray(40 << 20)\nprint(len(b))");
        small.limits = limits;
        let outcome = sandbox.run(&small).expect("run");
        assert_eq!(outcome.verdict, RunVerdict::Ok, "{outcome:?}");
        assert!(outcome.peak_memory_kib >= 40 << 10, "{outcome:?}");
        assert!(outcome.peak_memory_kib < 96 << 10, "{outcome:?}");

        let mut large = RunRequest::python("b = bytearray(400 << 20)\nprint(len(b))");
        large.limits = limits;
        let outcome = sandbox.run(&large).expect("run");
        assert_eq!(outcome.verdict, RunVerdict::MemoryLimit, "{outcome:?}");
        assert_eq!(outcome.signal, Some(9), "{outcome:?}");
    }
}

#[test]
fn persistent_ipc_objects_cannot_be_created() {
    // SysV IPC and POSIX message queues would outlive a test inside a reused sandbox.
    let source = "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n\
        results = [libc.shmget(0, 4096, 0o1600), libc.msgget(0, 0o1600), libc.semget(0, 1, 0o1600)]\n\
        errors = [ctypes.get_errno()]\n\
        results.append(libc.mq_open(b'/rlvr', os.O_CREAT | os.O_RDWR, 0o600, None))\n\
        print(results, os.strerror(errors[0]))";
    let outcome = sandbox().run(&RunRequest::python(source)).expect("run");
    assert_eq!(
        outcome.verdict,
        RunVerdict::Ok,
        "{}",
        String::from_utf8_lossy(&outcome.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&outcome.stdout).trim(),
        "[-1, -1, -1, -1] Operation not permitted"
    );
}
