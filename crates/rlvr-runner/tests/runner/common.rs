//! What the runner's integration tests share: a runner started on a real interpreter, and the
//! limits its tests run under.

use std::os::fd::OwnedFd;
use std::process::{Child, Command, Stdio};

use rlvr_runner::{Runner, TestLimits};
pub use rlvr_test_support::python;

/// A runner on a fresh interpreter (no sandbox: isolation is tested in the sandbox's crate);
/// the child is returned so that it lives as long as the test needs it.
pub fn start() -> (Child, Runner) {
    let mut child = Command::new(python())
        .args(rlvr_runner::interpreter_arguments())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python starts");
    let requests = OwnedFd::from(child.stdin.take().unwrap());
    let responses = OwnedFd::from(child.stdout.take().unwrap());
    (child, Runner::new(requests, responses))
}

/// A runner with `source` loaded as `solution.py` (no assert, no helpers).
pub fn loaded(source: &str) -> (Child, Runner) {
    let (child, mut runner) = start();
    let report = runner.load(&[source], "solution.py", &[], None).unwrap();
    assert!(report.ok, "{report:?}");
    (child, runner)
}

pub const LIMITS: TestLimits = TestLimits {
    wall_ms: 5_000,
    cpu_seconds: 5,
    output_bytes: 1 << 20,
    address_space_bytes: 0,
};
