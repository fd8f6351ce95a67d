//! What the CLI tests share: running the rlvr binary, reading its result lines, building job
//! lines, and a served instance ([`served`]).

#![allow(
    dead_code,
    unused_imports,
    reason = "a shared module: each test module uses a part of it"
)]

pub mod promql;
pub mod served;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

pub use rlvr_test_support::{
    Caller, Mode, assert_no_survivors, in_every_mode, processes_of, python, subordinate_start,
    unprivileged_python, wait_for, wait_until,
};
pub use served::{Response, Served};

/// The rlvr binary under test.
pub const RLVR: &str = env!("CARGO_BIN_EXE_rlvr");

/// `rlvr` with no arguments yet.
pub fn rlvr() -> Command {
    Command::new(RLVR)
}

/// `rlvr ARGUMENTS...` run to the end in `directory`, stdin empty.
pub fn rlvr_in(arguments: &[&str], directory: &Path) -> Output {
    rlvr()
        .args(arguments)
        .current_dir(directory)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("running rlvr: {error}"))
}

/// `rlvr verify JOBS ARGUMENTS...` run to the end.
pub fn verify(jobs: &Path, arguments: &[&str]) -> Output {
    rlvr()
        .arg("verify")
        .arg(jobs)
        .args(arguments)
        .stdin(Stdio::null())
        .output()
        .expect("rlvr runs")
}

/// `rlvr verify JOBS ARGUMENTS...` with programs run as the sandbox uid `uid` (tests that run
/// at once each use uids of their own), required to succeed.
pub fn verify_as(uid: &str, jobs: &Path, arguments: &[&str]) -> Output {
    let output = rlvr()
        .arg("verify")
        .arg(jobs)
        .args(arguments)
        .env("RLVR_SANDBOX_UID", uid)
        .stdin(Stdio::null())
        .output()
        .expect("rlvr runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// `rlvr` as a sandbox-mode caller (see `rlvr_test_support::Caller`).
pub trait RunsRlvr {
    /// `rlvr ARGUMENTS...` as this caller.
    fn rlvr(&self, arguments: &[&str]) -> Command;
}

impl RunsRlvr for Caller {
    fn rlvr(&self, arguments: &[&str]) -> Command {
        self.program(RLVR, arguments)
    }
}

/// The result lines a run printed on stdout.
pub fn results(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("every result line is JSON"))
        .collect()
}

/// What a run printed on stderr.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The repository's root.
pub fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Writes `lines` (one per line) to `directory/name`.
pub fn write_lines(directory: &Path, name: &str, lines: &[String]) -> PathBuf {
    let path = directory.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// A model's response: some thinking, then `code` in a Python fence.
pub fn fenced(code: &str) -> String {
    format!("<think>\nthinking\n</think>\n```python\n{code}\n```")
}

/// One job line.
pub fn job(id: &str, response: &str, ground_truth: &Value) -> String {
    json!({"id": id, "response": response, "ground_truth": ground_truth}).to_string()
}

/// The a+b program most jobs here run.
pub const SUM: &str = "a, b = map(int, input().split())\nprint(a + b)";
