//! Library-level tests of the sandbox (need root, as the CI machine has).

use rlvr_sandbox::{Limits, RunRequest, Sandbox, SandboxConfig, Stdin, Verdict};

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
        Verdict::Ok,
        "{:?}",
        String::from_utf8_lossy(&outcome.stderr)
    );
    assert_eq!(outcome.stdout, b"HELLO");
}

#[test]
fn exit_code_is_a_runtime_error() {
    let outcome = sandbox().run(&RunRequest::python("exit(3)")).expect("run");
    assert_eq!(outcome.verdict, Verdict::RuntimeError);
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
                        Verdict::Ok,
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
    request.limits = Limits {
        wall: std::time::Duration::from_millis(500),
        ..Limits::default()
    };
    let outcome = sandbox().run(&request).expect("run");
    assert_eq!(outcome.verdict, Verdict::Timeout);
}
