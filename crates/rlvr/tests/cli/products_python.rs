//! Runs the Python side of issue 7's tests (`tests/oracles/test_parquet_*.py`: pyarrow and
//! `datasets` 4.x and 3.x load every export layout) with this build's `rlvr`, so `cargo nextest
//! run` covers them. The interpreter is `$RLVR_PYTHON`, else `scripts/python-path`.

use std::path::Path;
use std::process::Command;

#[test]
fn python_loaders_read_every_export_layout() {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var("RLVR_PYTHON")
        .ok()
        .filter(|value| !value.is_empty())
        .unwrap_or_else(|| {
            let output = Command::new(repository.join("scripts/python-path")).output();
            output
                .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
                .unwrap_or_else(|_| "python3".into())
        });
    let tests: Vec<_> = fs_err::read_dir(repository.join("tests/oracles"))
        .unwrap_or_else(|error| panic!("{error}"))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("test_parquet_"))
        })
        .collect();
    assert!(!tests.is_empty());
    let status = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .args(&tests)
        .env("RLVR_BIN", env!("CARGO_BIN_EXE_rlvr"))
        .current_dir(&repository)
        .status()
        .unwrap_or_else(|error| panic!("running {python}: {error}"));
    assert!(status.success(), "pytest failed");
}
