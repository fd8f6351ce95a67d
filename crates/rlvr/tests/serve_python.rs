//! The Python package's suite (`python/tests`: client, trainer adapters, SandboxFusion and
//! open-instruct clients, Ray cluster, k8s manifests, pip install) run by pytest against the
//! binary this build produced.

use std::path::Path;
use std::process::Command;

#[test]
fn python_client_and_adapters_suite_passes() {
    let python = std::env::var("RLVR_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = Command::new(&python)
        .args([
            "-m",
            "pytest",
            "python/tests",
            "-q",
            "-p",
            "no:cacheprovider",
            "-rs",
        ])
        .current_dir(&root)
        .env("RLVR_BIN", env!("CARGO_BIN_EXE_rlvr"))
        .env("RAY_USAGE_STATS_ENABLED", "0")
        .output()
        .expect("the interpreter in RLVR_PYTHON runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "pytest python/tests failed ({:?}):\n{stdout}\n{stderr}",
        output.status
    );
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(
        summary.contains("passed") && !summary.contains("skipped"),
        "every Python test ran (install python/requirements-test.txt): {summary}"
    );
}
