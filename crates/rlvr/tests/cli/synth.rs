//! `rlvr synth` from the outside: it writes the file and exits 0, is deterministic, writes the
//! faults sidecar, refuses bad arguments and unwritable paths with exit 2, and agrees with an
//! independent Python reading of the file it wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::stderr;

/// A fresh temporary directory per test and a way to run `rlvr` in it.
struct TestContext {
    directory: tempfile::TempDir,
}

impl TestContext {
    fn new() -> Self {
        Self {
            directory: tempfile::tempdir().expect("temporary directory"),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.directory.path().join(name)
    }

    fn rlvr(&self, arguments: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_rlvr"))
            .args(arguments)
            .output()
            .expect("rlvr runs")
    }

    fn synth(&self, out: &Path, arguments: &[&str]) -> Output {
        let mut all = vec!["synth", out.to_str().expect("UTF-8 path")];
        all.extend_from_slice(arguments);
        self.rlvr(&all)
    }
}

#[test]
fn synth_writes_the_file_and_reports_a_summary() {
    let context = TestContext::new();
    let out = context.path("sample.jsonl");
    let output = context.synth(&out, &["--rows", "50", "--seed", "7"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = fs_err::read_to_string(&out).expect("written");
    assert_eq!(text.lines().count(), 50);
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).expect("valid JSON");
        assert_eq!(record["label"], record["metadata"]["ground_truth"]);
    }
    let message = stderr(&output);
    assert!(
        message.contains("wrote 50 rows") && message.contains("MB/s"),
        "{message}"
    );
    assert!(!context.path("sample.jsonl.faults.json").exists());
}

#[test]
fn synth_is_deterministic_and_the_seed_matters() {
    let context = TestContext::new();
    let [first, second, other] =
        ["first.jsonl", "second.jsonl", "other.jsonl"].map(|name| context.path(name));
    for (path, seed) in [(&first, "3"), (&second, "3"), (&other, "4")] {
        let output = context.synth(
            path,
            &[
                "--rows",
                "80",
                "--seed",
                seed,
                "--avg-record-bytes",
                "15000",
            ],
        );
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    let read = |path: &PathBuf| fs_err::read(path).expect("written");
    assert!(read(&first) == read(&second), "same seed, different bytes");
    assert!(read(&first) != read(&other), "different seeds, same bytes");
}

#[test]
fn zero_rows_write_an_empty_file() {
    let context = TestContext::new();
    let out = context.path("empty.jsonl");
    let output = context.synth(&out, &["--rows", "0"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(fs_err::metadata(&out).expect("written").len(), 0);
}

#[test]
fn an_unwritable_path_exits_2_naming_it() {
    let context = TestContext::new();
    let out = context.path("no-such-directory").join("out.jsonl");
    let output = context.synth(&out, &["--rows", "5"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("rlvr: error:") && message.contains("no-such-directory"),
        "{message}"
    );
}

#[test]
fn bad_arguments_exit_2() {
    let context = TestContext::new();
    let out = context.path("out.jsonl");
    for arguments in [
        &[][..],
        &["--rows", "-3"],
        &["--rows", "5", "--avg-record-bytes", "0"],
        &["--rows", "many"],
    ] {
        let output = context.synth(&out, arguments);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{arguments:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn inject_faults_writes_a_sidecar_matching_the_file() {
    let context = TestContext::new();
    let out = context.path("faulty.jsonl");
    let output = context.synth(&out, &["--rows", "60", "--seed", "2", "--inject-faults"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("faulty.jsonl.faults.json"));
    let bytes = fs_err::read(&out).expect("written");
    let lines: Vec<&[u8]> = bytes.split_inclusive(|&byte| byte == b'\n').collect();
    let sidecar: Value = serde_json::from_str(
        &fs_err::read_to_string(context.path("faulty.jsonl.faults.json")).expect("sidecar"),
    )
    .expect("sidecar is JSON");
    let injected = sidecar["injected"].as_array().expect("injected list");
    assert_eq!(injected.len(), 16);
    assert_eq!(sidecar["lines"].as_u64(), Some(lines.len() as u64));
    assert_eq!(lines.len(), 60 + 16);
    let mut rejected = 0;
    for entry in injected {
        let line_number = entry["line"].as_u64().expect("line") as usize;
        let offset = entry["byte_offset"].as_u64().expect("offset") as usize;
        let line = lines[line_number - 1];
        assert_eq!(&bytes[offset..offset + line.len()], line);
        let parsed = std::str::from_utf8(line)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(text).ok());
        match entry["kind"].as_str().expect("kind") {
            "invalid_json" | "non_utf8" | "lone_surrogate_escape" => assert!(parsed.is_none()),
            "crlf_line_ending" => assert!(line.ends_with(b"\r\n")),
            _ => assert!(parsed.is_some(), "{entry}"),
        }
        if entry["expect"] == "rejected" {
            rejected += 1;
            assert!(entry["check"].is_string());
        }
    }
    assert_eq!(rejected, 12);
}

#[test]
fn python_json_reads_the_file_with_the_figures_synth_reports() {
    let python = std::env::var("RLVR_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/oracles/check_synth.py");
    // The oracle must run: a missing interpreter fails the test rather than skipping it.
    if let Err(error) = Command::new(&python).arg("--version").output() {
        panic!("no Python interpreter at {python} ({error}): scripts/setup provides one");
    }
    let context = TestContext::new();
    let out = context.path("checked.jsonl");
    let output = context.synth(
        &out,
        &[
            "--rows",
            "400",
            "--seed",
            "21",
            "--avg-record-bytes",
            "12000",
            "--json",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let summary: Value = serde_json::from_slice(&output.stdout).expect("--json prints JSON");
    let checked = Command::new(&python)
        .arg(&script)
        .arg(&out)
        .output()
        .expect("python runs");
    assert_eq!(
        checked.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        stderr(&checked)
    );
    let figures: Value = serde_json::from_slice(&checked.stdout).expect("script prints JSON");
    for (key, expected) in summary["expected"].as_object().expect("expected figures") {
        assert_eq!(&figures[key], expected, "{key}");
    }
    assert_eq!(figures["label_equals_ground_truth"], 400);
    assert_eq!(figures["routing_constants_ok"], true);
    assert_eq!(figures["rows_with_other_key_order"], 0);

    // Python's json accepts the injected quirks (lone surrogate, CRLF, `\/`, key order).
    let faulty = context.path("faulty.jsonl");
    let output = context.synth(
        &faulty,
        &["--rows", "40", "--seed", "1", "--inject-faults", "--json"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let summary: Value = serde_json::from_slice(&output.stdout).expect("--json prints JSON");
    let injected = summary["injected"].as_array().expect("injected");
    let rejected_rows: Vec<String> = injected
        .iter()
        .filter(|entry| entry["expect"] == "rejected")
        .map(|entry| entry["row"].to_string())
        .collect();
    let checked = Command::new(&python)
        .arg(&script)
        .arg(&faulty)
        .args(["--skip-rows", &rejected_rows.join(",")])
        .output()
        .expect("python runs");
    assert_eq!(
        checked.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        stderr(&checked)
    );
    let figures: Value = serde_json::from_slice(&checked.stdout).expect("script prints JSON");
    assert_eq!(
        figures["examples"],
        40 + injected.len() - rejected_rows.len()
    );
    assert_eq!(figures["rows_with_other_key_order"], 1);
}

#[test]
fn validate_rejects_exactly_the_injected_faults() {
    let context = TestContext::new();
    let out = context.path("faults.jsonl");
    let output = context.synth(&out, &["--rows", "120", "--seed", "5", "--inject-faults"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let sidecar: Value = serde_json::from_str(
        &fs_err::read_to_string(context.path("faults.jsonl.faults.json")).expect("sidecar"),
    )
    .expect("sidecar is JSON");
    let validated = context.rlvr(&[
        "validate",
        out.to_str().expect("UTF-8 path"),
        "--json",
        "--max-examples",
        "100",
    ]);
    assert_eq!(validated.status.code(), Some(1), "{}", stderr(&validated));
    let report: Value =
        serde_json::from_slice(&validated.stdout).expect("validate --json prints JSON");
    let flagged_by = |check: &str| -> Vec<u64> {
        report["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .filter(|entry| entry["name"] == check)
            .flat_map(|entry| entry["examples"].as_array().cloned().unwrap_or_default())
            .filter_map(|example| example["row"].as_u64())
            .collect()
    };
    let mut rejected_rows = Vec::new();
    for entry in sidecar["injected"].as_array().expect("injected") {
        let row = entry["row"].as_u64().expect("row");
        if let Some(check) = entry["check"].as_str() {
            assert!(
                flagged_by(check).contains(&row),
                "{check} does not flag {entry}"
            );
            rejected_rows.push(row);
        }
    }
    let mut flagged: Vec<u64> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .flat_map(|entry| entry["examples"].as_array().cloned().unwrap_or_default())
        .filter_map(|example| example["row"].as_u64())
        .collect();
    flagged.sort_unstable();
    flagged.dedup();
    rejected_rows.sort_unstable();
    assert_eq!(
        flagged, rejected_rows,
        "validate flags rows other than the injected faults"
    );
}
