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
    // Raises on the empty probe but accepts the expected output: the probe is rejected, as
    // `rlvr verify` scores such an output (issue 32), not a finding.
    let fails_on_empty = "def check(input, output, expected):\n    return output.split()[0] == expected.split()[0] and output == expected\n";
    let broken = "def check(input, output, expected):\n    raise KeyError('broken')\n";
    write_lines(
        directory.path(),
        "records.jsonl",
        &[
            json!({"ground_truth": pair_truth("checker", PAIR_CHECKER)}),
            json!({"ground_truth": pair_truth("checker_cpp", PAIR_CHECKER_CPP)}),
            json!({"ground_truth": pair_truth("checker_cpp", EARLY_ACCEPT_CPP)}),
            json!({"ground_truth": pair_truth("checker", accepts_all)}),
            json!({"ground_truth": pair_truth("checker", fails_on_empty)}),
            json!({"ground_truth": pair_truth("checker", broken)}),
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
    assert_eq!(report["with_checker"], 6);
    assert_eq!(report["checkers"], json!({"c++": 2, "python": 4}));
    let rows: Vec<u64> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|problem| problem["row"].as_u64().unwrap())
        .collect();
    // The sound checkers (rows 0, 1 and 4) have no finding.
    assert_eq!(rows, [2, 3, 5], "{report}");
    assert_eq!(report["accepts_garbage"], 2, "{report}");
    assert_eq!(report["checker_errors"], 1, "{report}");
    assert_eq!(report["rejects_expected"], 0, "{report}");
    // Row 4's empty probe on each of its two tests.
    assert_eq!(report["checker_rejected"], 2, "{report}");
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
    // The broken checker fails on every probe of both tests, the expected output first.
    let failing = report["problems"][2]["findings"].as_array().unwrap();
    assert_eq!(failing.len(), 8, "{report}");
    assert_eq!(failing[0]["probe"], "expected", "{report}");
    for finding in failing {
        assert_eq!(finding["failure"], "fails (checker_error)", "{report}");
        assert!(
            finding["checker_error"]
                .as_str()
                .unwrap()
                .contains("KeyError: 'broken'"),
            "{report}"
        );
    }
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
    assert!(
        stdout.contains("2 probe(s) made a checker fail while it accepts the expected output"),
        "{stdout}"
    );
}

#[test]
fn issue_25_serve_runs_checkers_and_counts_checker_errors_in_metrics() {
    let served = Served::start(&["--workers", "2"]);
    let looping = "def check(input, output, expected):\n    while True:\n        pass\n";
    // One second per test: the looping checker is stopped after two, on the output and then
    // on the expected output (issue 32).
    let body = json!({
        "details": true,
        "time_limit": 1,
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
            .contains("time limit (2000 ms) (on the expected output too)"),
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

/// "Print `[a, b]`, two non-negative integers summing to N", read the way many real checkers
/// read output: trusting its shape (malformed output raises) and counting up to `a` (a huge
/// `a` loops). Sound on every well-formed output.
const FRAGILE_CHECKER: &str = "import json\ndef check(input, output, expected):\n    n = int(input)\n    a, b = json.loads(output)\n    a, b = int(a), int(b)\n    counted = 0\n    while counted < a:\n        counted += 1\n    return a >= 0 and b >= 0 and counted + b == n\n";

/// A testlib-convention checker that fails on malformed output: `std::stoll` aborts on a
/// garbage token or an overflow, and a missing token is testlib's `_fail` (exit 3).
const FRAGILE_CHECKER_CPP: &str = r#"#include <fstream>
#include <string>
int main(int argc, char** argv) {
    std::ifstream input(argv[1]), output(argv[2]);
    long long n;
    input >> n;
    std::string first, second;
    if (!(output >> first >> second)) return 3;
    long long a = std::stoll(first), b = std::stoll(second);
    return a >= 0 && b >= 0 && a + b == n ? 0 : 1;
}
"#;

const BROKEN_CHECKER: &str =
    "def check(input, output, expected):\n    raise RuntimeError('the author forgot a case')\n";

/// Responses aimed at a fragile checker, each with its ground truth (one test), and honest
/// controls; the last job's checker is broken on every input.
fn issue_32_jobs() -> Vec<(&'static str, String, Value)> {
    let python_truth =
        json!({"inputs": ["5\n"], "outputs": ["[0, 5]\n"], "checker": FRAGILE_CHECKER});
    let cpp_truth =
        json!({"inputs": ["5\n"], "outputs": ["0 5\n"], "checker_cpp": FRAGILE_CHECKER_CPP});
    let broken_truth = json!({"inputs": ["5\n"], "outputs": ["0 5\n"], "checker": BROKEN_CHECKER});
    vec![
        ("empty", fenced("pass"), python_truth.clone()),
        ("nan", fenced("print('[NaN, 5]')"), python_truth.clone()),
        (
            "not-utf8",
            fenced("import sys\nsys.stdout.buffer.write(b'\\xff[4, 1]\\n')"),
            python_truth.clone(),
        ),
        (
            "huge",
            fenced("print('[' + '9' * 100_000 + ', 1]')"),
            python_truth.clone(),
        ),
        (
            "nested",
            fenced("print('[' * 200_000 + ']' * 200_000)"),
            python_truth.clone(),
        ),
        ("loop", fenced("print([10 ** 17, 0])"), python_truth.clone()),
        ("garbage-tokens", fenced("print('x y')"), cpp_truth.clone()),
        ("missing-token", fenced("print(5)"), cpp_truth.clone()),
        (
            "overflow",
            fenced("print('99999999999999999999 1')"),
            cpp_truth.clone(),
        ),
        (
            "honest-python",
            fenced("n = int(input())\nprint([n - 1, 1])"),
            python_truth,
        ),
        ("honest-cpp", fenced(HONEST), cpp_truth),
        ("broken", fenced(HONEST), broken_truth),
    ]
}

/// Hostile jobs come first, then the two honest controls, then the broken checker's job.
const ISSUE_32_HOSTILE: usize = 9;

/// Checks issue 32's results (from `rlvr verify` or `rlvr serve`, which give the same lines).
fn assert_issue_32_results(results: &[Value]) {
    assert_eq!(results.len(), ISSUE_32_HOSTILE + 3, "{results:?}");
    for result in &results[..ISSUE_32_HOSTILE] {
        assert_eq!(result["status"], "ok", "{result}");
        assert_eq!(result["score"], 0.0, "{result}");
        assert_eq!(result["checker_rejected"], 1, "{result}");
        let test = &result["tests"][0];
        assert_eq!(test["verdict"], "wrong_answer", "{result}");
        assert_eq!(test["checker_rejected"], true, "{result}");
        assert!(test.get("checker_score").is_none(), "{result}");
    }
    for honest in &results[ISSUE_32_HOSTILE..ISSUE_32_HOSTILE + 2] {
        assert_eq!(honest["score"], 1.0, "{honest}");
        assert!(honest.get("checker_rejected").is_none(), "{honest}");
        assert!(
            honest["tests"][0].get("checker_rejected").is_none(),
            "{honest}"
        );
    }
    let broken = &results[ISSUE_32_HOSTILE + 2];
    assert_eq!(broken["status"], "checker_error", "{broken}");
    assert_eq!(broken["score"], Value::Null, "{broken}");
    assert_eq!(broken["tests"][0]["verdict"], "checker_error", "{broken}");
    assert!(
        broken["reason"]
            .as_str()
            .unwrap()
            .contains("RuntimeError: the author forgot a case (on the expected output too)"),
        "{broken}"
    );
}

/// Issue 32: output that makes a Python or testlib checker raise, abort or loop scores 0 (a
/// wrong answer flagged `checker_rejected`, counted per job and in the summary), never a
/// `null` the trainer would mask; honest answers score 1.0, and only a checker that fails on
/// the expected output too is `checker_error`.
#[test]
fn issue_32_verify_scores_output_that_breaks_the_checker_zero_never_null() {
    let directory = tempfile::tempdir().unwrap();
    let lines: Vec<Value> = issue_32_jobs()
        .into_iter()
        .map(|(id, response, truth)| json!({"id": id, "response": response, "ground_truth": truth}))
        .collect();
    write_lines(directory.path(), "jobs.jsonl", &lines);
    // One second per test: the looping checker is stopped after two.
    let output = rlvr_in(
        &["verify", "jobs.jsonl", "--details", "--time-limit", "1"],
        directory.path(),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let results = result_lines(&output);
    assert_issue_32_results(&results);
    assert!(
        stderr.contains(&format!(
            "checker rejected (the output made the checker fail, the expected output passes it: wrong answers): {ISSUE_32_HOSTILE} tests in {ISSUE_32_HOSTILE} jobs"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("checker_error 1"), "{stderr}");
    assert!(
        stderr.contains(&format!("ok {}", ISSUE_32_HOSTILE + 2)),
        "{stderr}"
    );
}

/// Issue 32 through `rlvr serve`: the same results on `/v1/verify`, the hostile samples
/// scored (not `unscored`) on OpenRLHF's `/get_reward`, and `rlvr_checker_rejected_total` in
/// /metrics.
#[test]
fn issue_32_serve_scores_output_that_breaks_the_checker_zero_never_null() {
    let served = Served::start(&["--workers", "2"]);
    let jobs: Vec<Value> = issue_32_jobs()
        .into_iter()
        .map(|(id, response, truth)| json!({"id": id, "response": response, "ground_truth": truth}))
        .collect();
    let answer = served.post_ok(
        "/v1/verify",
        &json!({"details": true, "time_limit": 1, "jobs": jobs}),
    );
    let results = answer["results"].as_array().expect("results");
    assert_issue_32_results(results);
    assert_eq!(
        served.metric("rlvr_checker_rejected_total"),
        ISSUE_32_HOSTILE as f64
    );
    assert_eq!(served.metric("rlvr_checker_errors_total"), 1.0);
    // OpenRLHF: the garbage sample is a scored 0, the honest one 1, the broken checker's
    // sample unscored.
    let (_, garbage, truth) = issue_32_jobs().swap_remove(1);
    let (_, honest, honest_truth) = issue_32_jobs().swap_remove(ISSUE_32_HOSTILE);
    let (_, broken, broken_truth) = issue_32_jobs().swap_remove(ISSUE_32_HOSTILE + 2);
    let reward = served.post_ok(
        "/get_reward",
        &json!({
            "query": [garbage, honest, broken],
            "prompts": ["", "", ""],
            "labels": [truth, honest_truth, broken_truth],
        }),
    );
    assert_eq!(reward["rewards"], json!([0.0, 1.0, 0.0]), "{reward}");
    assert_eq!(
        reward["extra_logs"]["unscored"],
        json!([0.0, 0.0, 1.0]),
        "{reward}"
    );
    assert_eq!(
        reward["extra_logs"]["checker_error"],
        json!([0.0, 0.0, 1.0]),
        "{reward}"
    );
    assert_eq!(
        served.metric("rlvr_checker_rejected_total"),
        ISSUE_32_HOSTILE as f64 + 1.0
    );
}
