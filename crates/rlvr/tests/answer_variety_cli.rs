//! Issue 25 end to end: `rlvr audit` and `rlvr card` find the statements that accept more than
//! one answer.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

fn rlvr(arguments: &[&str], directory: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(arguments)
        .current_dir(directory)
        .output()
        .unwrap_or_else(|error| panic!("running rlvr: {error}"))
}

/// A release record with `statement` as its prompt.
fn record(statement: &str, ground_truth: &Value) -> String {
    json!({
        "prompt": [{"role": "user", "content": statement}],
        "label": ground_truth,
        "metadata": {
            "data_type": "code", "data_source": "coder1_longcot", "ability": "code",
            "style": "rule", "hash": format!("{:x}", statement.len()), "ground_truth": ground_truth
        }
    })
    .to_string()
}

fn sum_truth() -> Value {
    json!({"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]})
}

const STATEMENTS: [&str; 4] = [
    "Print a + b.",
    "Print a permutation of 1..n. If there are multiple answers, print any of them.",
    "Print the area. Your answer will be considered correct if its absolute or relative error does not exceed $10^{-6}$.",
    "You can output YES and NO in any case. If there are multiple test cases, print each answer on its own line.",
];

fn dataset(directory: &Path) -> PathBuf {
    let mut lines: Vec<String> = STATEMENTS
        .iter()
        .map(|statement| record(statement, &sum_truth()))
        .collect();
    lines[1] = record(
        STATEMENTS[1],
        &json!({"inputs": ["3\n"], "outputs": ["1 2 3\n"], "checker": "set"}),
    );
    let path = directory.join("data.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn issue_25_audit_reports_the_phrase_and_epsilon_per_record() {
    let directory = tempfile::tempdir().unwrap();
    dataset(directory.path());
    let output = rlvr(&["audit", "data.jsonl", "--json"], directory.path());
    assert_eq!(output.status.code(), Some(1), "flagged rows exit 1");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let flag = report["flags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|flag| flag["flag"] == "answer_may_vary")
        .unwrap()
        .clone();
    assert_eq!(flag["rows"], json!([1, 2]));
    assert_eq!(
        report["answer_may_vary"],
        json!([
            {"row": 1, "phrases": [{"kind": "any_answer", "phrase": "If there are multiple answers, print any of them"}], "checker": "set"},
            {"row": 2, "phrases": [{"kind": "tolerance", "phrase": "absolute or relative error does not exceed 10^{-6}", "epsilon": 1e-6}]}
        ])
    );
    assert_eq!(
        report["answer_may_vary_kinds"],
        json!([["any_answer", 1], ["any_order", 0], ["tolerance", 1]])
    );

    let text = rlvr(&["audit", "data.jsonl"], directory.path());
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("answer_may_vary by kind: any_answer 1, any_order 0, tolerance 1"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "row 2: tolerance: \"absolute or relative error does not exceed 10^{-6}\" (epsilon 1e-6)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("[checker: set]"), "{stdout}");
}

#[test]
fn issue_25_card_charts_the_count() {
    let directory = tempfile::tempdir().unwrap();
    dataset(directory.path());
    let output = rlvr(&["card", "data.jsonl", "--out", "card"], directory.path());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.code().is_some_and(|code| code <= 1),
        "{stderr}"
    );
    let readme = std::fs::read_to_string(directory.path().join("card/README.md")).unwrap();
    assert!(readme.contains("charts/answer-may-vary.svg"), "{readme}");
    assert!(
        readme
            .contains("2 of 4 records (50.0%) have a statement that accepts more than one answer"),
        "{readme}"
    );
    assert!(readme.contains("| `tolerance` | 1 |"), "{readme}");
    let chart =
        std::fs::read_to_string(directory.path().join("card/charts/answer-may-vary.svg")).unwrap();
    assert!(chart.starts_with("<svg"));
    for label in ["any answer", "any order", "tolerance", "any kind"] {
        assert!(chart.contains(label), "{label} missing from the chart");
    }
}
