//! The Python package's suite (`python/tests`: client, trainer adapters, SandboxFusion and
//! open-instruct clients, Ray clusters, k8s manifests, image, wheel, pip install) run by pytest
//! against the binary this build produced. Two pytest processes, so that nextest runs them at
//! the same time: the trainers' tests (verl's reward managers, TRL, the README's and the
//! docs' snippets, the namespaced Ray cluster, the demo: mostly waiting on their own
//! processes) and everything else. Each has its own sandbox uid.

use std::path::Path;
use std::process::Command;

/// The test files of the trainers' group; the other group runs every other file.
const TRAINER_FILES: [&str; 5] = [
    "python/tests/test_verl.py",
    "python/tests/test_readme.py",
    "python/tests/test_docs.py",
    "python/tests/test_ray_cluster.py",
    "python/tests/test_demo.py",
];

fn run_pytest(selection: &[String], sandbox_uid: &str) {
    let python = std::env::var("RLVR_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = Command::new(&python)
        .args(["-m", "pytest"])
        .args(selection)
        .args(["-q", "-p", "no:cacheprovider", "-rs"])
        .current_dir(&root)
        .env("RLVR_BIN", env!("CARGO_BIN_EXE_rlvr"))
        .env("RLVR_SANDBOX_UID", sandbox_uid)
        .env("RAY_USAGE_STATS_ENABLED", "0")
        .output()
        .expect("the interpreter in RLVR_PYTHON runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "pytest {selection:?} failed ({:?}):\n{stdout}\n{stderr}",
        output.status
    );
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(
        summary.contains("passed") && !summary.contains("skipped"),
        "every Python test ran (install python/requirements-test.txt): {summary}"
    );
}

#[test]
fn python_client_and_adapters_suite_passes() {
    let mut selection = vec!["python/tests".to_owned()];
    selection.extend(TRAINER_FILES.iter().map(|file| format!("--ignore={file}")));
    run_pytest(&selection, "61600");
}

#[test]
fn python_trainers_suite_passes() {
    let selection: Vec<String> = TRAINER_FILES
        .iter()
        .map(|file| (*file).to_owned())
        .collect();
    run_pytest(&selection, "61650");
}
