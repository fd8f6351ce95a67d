//! `rlvr validate`, `rlvr stats` and `rlvr show` as a user runs them: exit statuses, stdout and
//! stderr, on the committed fixture, on bad input, and against an independent Python computation
//! (`tests/oracles/card_stats.py`) of the card's figures.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::python;

struct Outcome {
    status: i32,
    stdout: String,
    stderr: String,
}

fn rlvr(arguments: &[&str]) -> Outcome {
    let output = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(arguments)
        .output()
        .expect("run rlvr");
    Outcome {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn fixture() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/dataset/small.jsonl")
        .display()
        .to_string()
}

fn fixture_lines() -> Vec<String> {
    let text = std::fs::read_to_string(fixture()).expect("fixture");
    text.split('\n')
        .map(|line| line.trim_end_matches('\r').to_owned())
        .collect()
}

fn write_file(directory: &Path, name: &str, bytes: &[u8]) -> String {
    let path = directory.join(name);
    std::fs::File::create(&path)
        .and_then(|mut file| file.write_all(bytes))
        .expect("write");
    path.display().to_string()
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn validate_passes_on_the_fixture_and_lists_mixed_rows() {
    let outcome = rlvr(&["validate", &fixture()]);
    assert_eq!(outcome.status, 0, "{}{}", outcome.stdout, outcome.stderr);
    assert!(outcome.stdout.contains("PASS label_equals_ground_truth"));
    assert!(
        outcome
            .stdout
            .contains("Mixed string/list test values: 1 rows")
    );
    assert!(
        outcome
            .stdout
            .contains("row 4 (line 5): 2 list-valued test values")
    );
    assert!(outcome.stdout.contains("OK: all 9 checks passed"));
}

#[test]
fn validate_json_is_one_object() {
    let outcome = rlvr(&["validate", &fixture(), "--json"]);
    assert_eq!(outcome.status, 0);
    let report: serde_json::Value = serde_json::from_str(&outcome.stdout).expect("json");
    assert_eq!(report["rows"], 6);
    assert_eq!(report["passed"], true);
    assert_eq!(report["checks"].as_array().map(Vec::len), Some(9));
    assert_eq!(report["mixed_value_rows"][0]["row"], 4);
}

#[test]
fn validate_reports_failures_with_rows_lines_and_exit_1() {
    let directory = tempfile::tempdir().expect("tempdir");
    let mut lines = fixture_lines();
    lines[1] = lines[1].replace("\"rule\"", "\"judge\"");
    lines[2] = lines[2].replacen("\"3\\n\"]", "\"4\\n\"]", 1);
    lines.insert(3, "{\"prompt\": [".to_owned());
    let path = write_file(directory.path(), "bad.jsonl", lines.join("\n").as_bytes());
    let outcome = rlvr(&["validate", &path, "--max-examples", "1"]);
    assert_eq!(outcome.status, 1, "{}", outcome.stdout);
    assert!(
        outcome.stdout.contains("FAIL routing_constants"),
        "{}",
        outcome.stdout
    );
    assert!(
        outcome.stdout.contains("row 1 (line 2, byte offset"),
        "{}",
        outcome.stdout
    );
    assert!(
        outcome.stdout.contains("FAIL label_equals_ground_truth"),
        "{}",
        outcome.stdout
    );
    assert!(
        outcome.stdout.contains("FAIL valid_json"),
        "{}",
        outcome.stdout
    );
    assert!(
        outcome.stdout.contains("row 3 (line 4"),
        "{}",
        outcome.stdout
    );
    // Reading went on after the bad line: all 7 rows were seen.
    assert!(outcome.stdout.contains(": 7 rows"), "{}", outcome.stdout);
}

#[test]
fn stats_prints_the_summary_table() {
    let outcome = rlvr(&["stats", &fixture()]);
    assert_eq!(outcome.status, 0, "{}", outcome.stderr);
    assert!(outcome.stdout.starts_with("| Property | Value |"));
    assert!(outcome.stdout.contains("| Examples | 6 |"));
    assert!(
        outcome
            .stdout
            .contains("| Unique prompts, whitespace-normalized | 4 |")
    );
    assert!(
        outcome
            .stdout
            .contains("| Prompt length in characters | min 16; median 30.5; P95 39; max 39 |")
    );
}

#[test]
fn stats_json_has_exactly_the_issue_keys() {
    let outcome = rlvr(&["stats", &fixture(), "--json", "--no-hash"]);
    assert_eq!(outcome.status, 0);
    let stats: serde_json::Value = serde_json::from_str(&outcome.stdout).expect("json");
    let keys: Vec<&str> = stats
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = vec![
        "examples",
        "sha256",
        "file_size_bytes",
        "unique_prompts_exact",
        "unique_prompts_normalized",
        "repeated_prompt_rows",
        "distinct_hashes",
        "prompt_chars",
        "io_records",
        "functional_records",
        "io_pairs_total",
        "functional_tests_total",
        "io_pairs_per_record",
        "functional_tests_per_record",
        "mixed_value_rows",
        "list_values_total",
        "label_equals_ground_truth",
        "routing_constants_ok",
    ];
    let mut keys_sorted = keys.clone();
    keys_sorted.sort_unstable();
    expected.sort_unstable();
    assert_eq!(keys_sorted, expected);
    assert_eq!(stats["sha256"], serde_json::Value::Null);
}

/// Numbers compare by value (`30.5` vs `30.5`, `102` vs `102.0`), everything else exactly.
fn same_json(left: &serde_json::Value, right: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (left, right) {
        (Value::Number(left), Value::Number(right)) => left.as_f64() == right.as_f64(),
        (Value::Array(left), Value::Array(right)) => {
            left.len() == right.len()
                && left
                    .iter()
                    .zip(right)
                    .all(|(left, right)| same_json(left, right))
        }
        (Value::Object(left), Value::Object(right)) => {
            left.len() == right.len()
                && left
                    .iter()
                    .all(|(key, value)| right.get(key).is_some_and(|other| same_json(value, other)))
        }
        _ => left == right,
    }
}

fn assert_matches_python(path: &str) {
    let ours = rlvr(&["stats", path, "--json"]);
    assert_eq!(ours.status, 0, "{}", ours.stderr);
    let script = workspace_root().join("tests/oracles/card_stats.py");
    let output = Command::new(python())
        .arg(&script)
        .arg(path)
        .output()
        .expect("run python");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let theirs: serde_json::Value = serde_json::from_slice(&output.stdout).expect("python json");
    let ours: serde_json::Value = serde_json::from_str(&ours.stdout).expect("rlvr json");
    assert!(
        same_json(&ours, &theirs),
        "rlvr:\n{ours:#}\npython:\n{theirs:#}"
    );
}

#[test]
fn stats_match_python_on_the_fixture() {
    assert_matches_python(&fixture());
}

#[test]
fn stats_match_python_on_a_synthetic_file() {
    let directory = tempfile::tempdir().expect("tempdir");
    let path = directory.path().join("synth.jsonl").display().to_string();
    let synth = rlvr(&[
        "synth",
        &path,
        "--rows",
        "400",
        "--seed",
        "3",
        "--avg-record-bytes",
        "4000",
    ]);
    assert_eq!(synth.status, 0, "{}", synth.stderr);
    assert_matches_python(&path);
}

#[test]
fn show_prints_one_record() {
    let outcome = rlvr(&["show", &fixture(), "4"]);
    assert_eq!(outcome.status, 0, "{}", outcome.stderr);
    assert!(
        outcome.stdout.starts_with("row 4 (line 5, byte offset"),
        "{}",
        outcome.stdout
    );
    assert!(
        outcome
            .stdout
            .contains("tests: input/output, 2 inputs, 2 outputs (2 list-valued, kept as released)")
    );
    assert!(
        outcome.stdout.contains("[1] input:  [\"123\"]"),
        "{}",
        outcome.stdout
    );
    assert!(outcome.stdout.contains("ground_truth: equal to label"));
}

#[test]
fn show_json_keeps_the_lone_surrogate() {
    let outcome = rlvr(&["show", &fixture(), "5", "--json"]);
    assert_eq!(outcome.status, 0, "{}", outcome.stderr);
    assert!(
        outcome.stdout.contains("\"row\":5,\"line\":6"),
        "{}",
        outcome.stdout
    );
    assert!(
        outcome.stdout.contains("Lone \\ud800 surrogate"),
        "{}",
        outcome.stdout
    );
}

#[test]
fn show_out_of_range_is_a_usage_error() {
    let outcome = rlvr(&["show", &fixture(), "6"]);
    assert_eq!(outcome.status, 2);
    assert!(
        outcome.stderr.contains("row 6 is out of range"),
        "{}",
        outcome.stderr
    );
}

#[test]
fn bad_input_missing_file() {
    for command in ["validate", "stats"] {
        let outcome = rlvr(&[command, "/nonexistent/rlvr/file.jsonl"]);
        assert_eq!(outcome.status, 2, "{command}");
        assert!(
            outcome.stderr.contains("/nonexistent/rlvr/file.jsonl"),
            "{}",
            outcome.stderr
        );
    }
    assert_eq!(
        rlvr(&["show", "/nonexistent/rlvr/file.jsonl", "0"]).status,
        2
    );
}

#[test]
fn bad_input_directory() {
    let directory = tempfile::tempdir().expect("tempdir");
    let path = directory.path().display().to_string();
    for arguments in [
        vec!["validate", &path],
        vec!["stats", &path],
        vec!["show", &path, "0"],
    ] {
        let outcome = rlvr(&arguments);
        assert_eq!(outcome.status, 2);
        assert!(
            outcome.stderr.contains("is a directory"),
            "{}",
            outcome.stderr
        );
    }
}

#[test]
fn bad_input_empty_file() {
    let directory = tempfile::tempdir().expect("tempdir");
    let path = write_file(directory.path(), "empty.jsonl", b"");
    for command in ["validate", "stats"] {
        let outcome = rlvr(&[command, &path]);
        assert_eq!(outcome.status, 2, "{command}");
        assert!(
            outcome.stderr.contains("contains no records"),
            "{}",
            outcome.stderr
        );
    }
    assert_eq!(rlvr(&["show", &path, "0"]).status, 2);
}

#[test]
fn bad_input_truncated_last_line() {
    let directory = tempfile::tempdir().expect("tempdir");
    let lines = fixture_lines();
    let mut text = lines.join("\n");
    text.truncate(text.len() - 40);
    let path = write_file(directory.path(), "truncated.jsonl", text.as_bytes());
    let outcome = rlvr(&["validate", &path]);
    assert_eq!(outcome.status, 1);
    assert!(
        outcome.stdout.contains("FAIL valid_json"),
        "{}",
        outcome.stdout
    );
    assert!(
        outcome.stdout.contains("row 5 (line 6"),
        "{}",
        outcome.stdout
    );
    let stats = rlvr(&["stats", &path, "--json"]);
    assert_eq!(stats.status, 1);
    assert!(stats.stderr.contains(":6: row 5"), "{}", stats.stderr);
    assert!(stats.stdout.contains("\"examples\": 5"), "{}", stats.stdout);
}

#[test]
fn bad_input_non_utf8_bytes() {
    let directory = tempfile::tempdir().expect("tempdir");
    let lines = fixture_lines();
    let mut bytes = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let mut line = line.clone().into_bytes();
        if index == 2 {
            let at = line.len() / 2;
            line[at] = 0xFF;
        }
        bytes.extend_from_slice(&line);
        bytes.push(b'\n');
    }
    let path = write_file(directory.path(), "latin.jsonl", &bytes);
    let outcome = rlvr(&["validate", &path]);
    assert_eq!(outcome.status, 1);
    assert!(
        outcome.stdout.contains("invalid utf-8 at byte"),
        "{}",
        outcome.stdout
    );
    let stats = rlvr(&["stats", &path]);
    assert_eq!(stats.status, 1);
    assert!(stats.stderr.contains("invalid utf-8"), "{}", stats.stderr);
}

#[test]
fn bad_input_fifty_megabyte_single_line() {
    let directory = tempfile::tempdir().expect("tempdir");
    let big = "x".repeat(50 << 20);
    let line = format!(
        "{{\"prompt\":[{{\"role\":\"user\",\"content\":\"p\"}}],\"label\":{{\"inputs\":[\"{big}\"],\"outputs\":[\"1\"]}},\"metadata\":{{\"data_type\":\"code\",\"data_source\":\"coder1_longcot\",\"ability\":\"code\",\"style\":\"rule\",\"hash\":\"h\",\"ground_truth\":{{\"inputs\":[\"{big}\"],\"outputs\":[\"1\"]}}}}}}"
    );
    let path = write_file(directory.path(), "big.jsonl", line.as_bytes());
    let outcome = rlvr(&["validate", &path]);
    assert_eq!(outcome.status, 0, "{}{}", outcome.stdout, outcome.stderr);
    let stats = rlvr(&["stats", &path, "--json", "--no-hash"]);
    assert_eq!(stats.status, 0);
    assert!(stats.stdout.contains("\"io_pairs_total\": 1"));
    assert_eq!(rlvr(&["show", &path, "0"]).status, 0);
}

#[test]
fn bad_input_invalid_json_in_the_middle() {
    let directory = tempfile::tempdir().expect("tempdir");
    let mut lines = fixture_lines();
    lines.insert(2, "{\"prompt\": [}".to_owned());
    let path = write_file(
        directory.path(),
        "middle.jsonl",
        lines.join("\n").as_bytes(),
    );
    let outcome = rlvr(&["validate", &path, "--json"]);
    assert_eq!(outcome.status, 1);
    let report: serde_json::Value = serde_json::from_str(&outcome.stdout).expect("json");
    assert_eq!(report["rows"], 7);
    assert_eq!(report["checks"][0]["violations"], 1);
    assert_eq!(report["checks"][0]["examples"][0]["line"], 3);
    assert_eq!(report["mixed_value_rows"][0]["row"], 5);
    let show = rlvr(&["show", &path, "2"]);
    assert_eq!(show.status, 1);
    assert!(
        show.stderr.contains("invalid json: expecting value"),
        "{}",
        show.stderr
    );
}
