//! Issue 25, sandboxed checkers end to end: `rlvr verify` (per-test verdict and
//! `checker_score` with `--details`, `checker_error` counted in the summary), `rlvr serve`'s
//! native API (and `rlvr_checker_errors_total` in /metrics), `--testlib-header`, and `rlvr
//! check-checker` running Python and C++ checkers in the sandbox (one that accepts garbage with
//! an early "accepted" exit is reported). Checkers are written here, without testlib.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::support::{Served, fenced, rlvr_in};

/// "Print two non-negative integers whose sum is N"; the reference prints `0 N`.
const PAIR_CHECKER: &str = "def check(input, output, expected):\n    n = int(input.split()[0])\n    tokens = output.split()\n    if len(tokens) != 2 or not all(t.isdigit() for t in tokens):\n        return False\n    return int(tokens[0]) + int(tokens[1]) == n\n";

const PAIR_CHECKER_CPP: &str = r#"#include <cstdio>
int main(int argc, char** argv) {
    if (argc != 4) return 3;
    FILE* input = std::fopen(argv[1], "r");
    FILE* output = std::fopen(argv[2], "r");
    long long n, a, b; char extra[2];
    if (!input || !output || std::fscanf(input, "%lld", &n) != 1) return 3;
    if (std::fscanf(output, "%lld %lld", &a, &b) != 2) return 1;
    if (std::fscanf(output, "%1s", extra) == 1) return 1;
    return (a >= 0 && b >= 0 && a + b == n) ? 0 : 1;
}
"#;

/// An unsound checker seen in public judges: it accepts before reading the output.
const EARLY_ACCEPT_CPP: &str = r#"#include <cstdlib>
#include <cstdio>
int main(int argc, char** argv) {
    std::exit(0);
    FILE* output = std::fopen(argv[2], "r");
    return output ? 1 : 3;
}
"#;

fn pair_truth(key: &str, checker: &str) -> Value {
    json!({"inputs": ["5\n", "8\n"], "outputs": ["0 5\n", "0 8\n"], key: checker})
}

const HONEST: &str = "n = int(input())\nprint(n - 1, 1)";

fn write_lines(directory: &Path, name: &str, lines: &[Value]) {
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(directory.join(name), text.join("\n") + "\n").unwrap();
}

fn result_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("every result line is JSON"))
        .collect()
}

#[test]
fn issue_25_verify_runs_python_and_cpp_checkers_with_details_and_counts_checker_errors() {
    let directory = tempfile::tempdir().unwrap();
    let crashing = "def check(input, output, expected):\n    raise ValueError('cannot read')\n";
    write_lines(
        directory.path(),
        "jobs.jsonl",
        &[
            json!({"id": "python", "response": fenced(HONEST), "ground_truth": pair_truth("checker", PAIR_CHECKER)}),
            json!({"id": "cpp", "response": fenced(HONEST), "ground_truth": pair_truth("checker_cpp", PAIR_CHECKER_CPP)}),
            json!({"id": "exact", "response": fenced(HONEST), "ground_truth": {"inputs": ["5\n", "8\n"], "outputs": ["0 5\n", "0 8\n"]}}),
            json!({"id": "broken", "response": fenced(HONEST), "ground_truth": pair_truth("checker", crashing)}),
        ],
    );
    let output = rlvr_in(&["verify", "jobs.jsonl", "--details"], directory.path());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let results = result_lines(&output);
    assert_eq!(results.len(), 4, "{stderr}");
    for result in &results[..2] {
        assert_eq!(result["score"], 1.0, "{result}");
        assert_eq!(result["status"], "ok");
        let tests = result["tests"].as_array().unwrap();
        assert!(
            tests
                .iter()
                .all(|test| test["verdict"] == "pass" && test["checker_score"] == 1.0),
            "{result}"
        );
    }
    assert_eq!(results[0]["checker"], "python");
    assert_eq!(results[1]["checker"], "c++");
    // Exact comparison scores the same honest answers 0.
    assert_eq!(results[2]["score"], 0.0);
    let broken = &results[3];
    assert_eq!(broken["status"], "checker_error", "{broken}");
    assert_eq!(broken["score"], Value::Null);
    assert_eq!(broken["tests"][0]["verdict"], "checker_error");
    assert!(
        broken["tests"][0].get("checker_score").is_none(),
        "{broken}"
    );
    assert!(
        broken["reason"]
            .as_str()
            .unwrap()
            .contains("ValueError: cannot read"),
        "{broken}"
    );
    assert!(stderr.contains("checker_error 1"), "{stderr}");
}

#[test]
fn issue_25_testlib_header_is_read_and_refused_with_the_file_named() {
    let directory = tempfile::tempdir().unwrap();
    let checker =
        "#include \"testlib.h\"\nint main(int argc, char** argv) { return verdict(argv[2]); }\n";
    let header = "#include <cstdio>\ninline int verdict(const char* path) { FILE* f = std::fopen(path, \"r\"); long long a, b; return f && std::fscanf(f, \"%lld %lld\", &a, &b) == 2 && a + b == 5 ? 0 : 1; }\n";
    std::fs::write(directory.path().join("testlib.h"), header).unwrap();
    write_lines(
        directory.path(),
        "jobs.jsonl",
        &[
            json!({"id": 1, "response": fenced("print(2, 3)"), "ground_truth": {"inputs": ["5\n"], "outputs": ["0 5\n"], "checker_cpp": checker}}),
        ],
    );
    let with = rlvr_in(
        &["verify", "jobs.jsonl", "--testlib-header", "testlib.h"],
        directory.path(),
    );
    let results = result_lines(&with);
    assert_eq!(results[0]["score"], 1.0, "{results:?}");
    let without = rlvr_in(&["verify", "jobs.jsonl"], directory.path());
    let results = result_lines(&without);
    assert_eq!(results[0]["status"], "checker_error");
    assert!(
        results[0]["reason"]
            .as_str()
            .unwrap()
            .contains("pass --testlib-header PATH"),
        "{results:?}"
    );
    for (arguments, message) in [
        (
            &["verify", "jobs.jsonl", "--testlib-header", "missing.h"][..],
            "missing.h",
        ),
        (
            &["check-checker", "jobs.jsonl", "--testlib-header", "empty.h"][..],
            "empty.h: --testlib-header is empty",
        ),
    ] {
        std::fs::write(directory.path().join("empty.h"), " \n").unwrap();
        let output = rlvr_in(arguments, directory.path());
        assert_eq!(output.status.code(), Some(2), "{arguments:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{stderr}");
    }
}

#[test]
fn issue_25_check_checker_runs_sandboxed_checkers_and_reports_garbage_acceptors() {
    let directory = tempfile::tempdir().unwrap();
    let accepts_all = "def check(input, output, expected):\n    return True\n";
    let fails_on_empty = "def check(input, output, expected):\n    return output.split()[0] == expected.split()[0] and output == expected\n";
    write_lines(
        directory.path(),
        "records.jsonl",
        &[
            json!({"ground_truth": pair_truth("checker", PAIR_CHECKER)}),
            json!({"ground_truth": pair_truth("checker_cpp", PAIR_CHECKER_CPP)}),
            json!({"ground_truth": pair_truth("checker_cpp", EARLY_ACCEPT_CPP)}),
            json!({"ground_truth": pair_truth("checker", accepts_all)}),
            json!({"ground_truth": pair_truth("checker", fails_on_empty)}),
        ],
    );
    let output = rlvr_in(
        &["check-checker", "records.jsonl", "--json"],
        directory.path(),
    );
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["with_checker"], 5);
    assert_eq!(report["checkers"], json!({"c++": 2, "python": 3}));
    let rows: Vec<u64> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|problem| problem["row"].as_u64().unwrap())
        .collect();
    // The sound checkers (rows 0 and 1) have no finding.
    assert_eq!(rows, [2, 3, 4], "{report}");
    assert_eq!(report["accepts_garbage"], 2, "{report}");
    assert_eq!(report["checker_errors"], 1, "{report}");
    let early: Vec<&str> = report["problems"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["probe"].as_str().unwrap())
        .collect();
    assert_eq!(
        early,
        [
            "empty",
            "last_token_replaced",
            "token_appended",
            "empty",
            "last_token_replaced",
            "token_appended"
        ]
    );
    let failing = &report["problems"][2]["findings"][0];
    assert_eq!(failing["probe"], "empty", "{report}");
    assert_eq!(failing["failure"], "fails (checker_error)");
    assert!(
        failing["checker_error"]
            .as_str()
            .unwrap()
            .contains("IndexError"),
        "{report}"
    );
    let text = rlvr_in(&["check-checker", "records.jsonl"], directory.path());
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("checker c++: test 0: accepts the empty output"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "2 accept garbage, 0 reject their expected output, 1 fail (checker_error), 0 unusable"
        ),
        "{stdout}"
    );
}

#[test]
fn issue_25_serve_runs_checkers_and_counts_checker_errors_in_metrics() {
    let served = Served::start(&["--workers", "2"]);
    let looping = "def check(input, output, expected):\n    while True:\n        pass\n";
    let body = json!({
        "details": true,
        "jobs": [
            {"response": fenced(HONEST), "ground_truth": pair_truth("checker", PAIR_CHECKER)},
            {"response": fenced(HONEST), "ground_truth": pair_truth("checker_cpp", PAIR_CHECKER_CPP)},
            {"response": fenced("print(9, 9)"), "ground_truth": pair_truth("checker", PAIR_CHECKER)},
            {"response": fenced(HONEST), "ground_truth": {"inputs": ["5\n"], "outputs": ["0 5\n"], "checker": looping}},
        ]
    });
    let response = served.post("/v1/verify", &body);
    assert_eq!(response.status, 200, "{}", response.body);
    let answer = response.json();
    let results = answer["results"].as_array().expect("results");
    let scores: Vec<&Value> = results.iter().map(|result| &result["score"]).collect();
    assert_eq!(
        scores,
        [&json!(1.0), &json!(1.0), &json!(0.0), &Value::Null],
        "{answer}"
    );
    assert_eq!(results[0]["tests"][1]["checker_score"], 1.0);
    assert_eq!(results[2]["tests"][0]["checker_score"], 0.0);
    assert_eq!(results[3]["status"], "checker_error");
    assert!(
        results[3]["reason"]
            .as_str()
            .unwrap()
            .contains("time limit"),
        "{answer}"
    );
    let metrics = served.get("/metrics").body;
    assert!(
        metrics
            .lines()
            .any(|line| line == "rlvr_checker_errors_total 1"),
        "{metrics}"
    );
    assert!(
        metrics
            .lines()
            .any(|line| line == "rlvr_test_verdicts_total{verdict=\"checker_error\"} 1"),
        "{metrics}"
    );
}
