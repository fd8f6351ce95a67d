//! `rlvr verify` end to end for issue 12 "Verifier robustness" and the input shapes of issues
//! 13 and 16: bad numbers are `invalid_job`s naming the field and never stop the run, a panic
//! in a worker is one `sandbox_error` line and the run goes on, every job gets its line, Python
//! JSON (lone surrogates, `NaN`) and `null` keys are read as trainers write them, and memory
//! stays bounded by the work in flight.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::{SUM, fenced, job, results, rlvr, stderr, verify, write_lines};

fn sum_truth() -> Value {
    json!({"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]})
}

/// No run may end by a panic (status 101) or write fewer lines than jobs.
fn assert_every_job_answered(output: &Output, jobs: usize) -> Vec<Value> {
    assert_ne!(output.status.code(), Some(101), "{}", stderr(output));
    assert!(output.status.code().is_some(), "{}", stderr(output));
    let lines = results(output);
    assert_eq!(lines.len(), jobs, "one result per job: {}", stderr(output));
    lines
}

#[test]
fn issue_12_bad_numbers_in_a_ground_truth_are_invalid_jobs_naming_the_field() {
    let directory = tempfile::tempdir().unwrap();
    let with = |key: &str, value: &str| {
        // Written by hand: `NaN` is a Python JSON literal no serializer here writes.
        format!(
            r#"{{"id": {}, "response": {}, "ground_truth": {{"inputs": ["1 2\n"], "outputs": ["3\n"], "{key}": {value}}}}}"#,
            serde_json::to_string(&format!("{key}={value}")).unwrap(),
            serde_json::to_string(&fenced(SUM)).unwrap()
        )
    };
    let many: Vec<String> = (0..10_001).map(|index| format!("{index}\n")).collect();
    let lines = vec![
        with("timeout", "1e300"),
        job("good-1", &fenced(SUM), &sum_truth()),
        with("timeout", "-1"),
        with("timeout", "NaN"),
        with("timeout", "\"5\""),
        with("max_test_cases", "0"),
        with("max_test_cases", "2.5"),
        job(
            "huge",
            &fenced(SUM),
            &json!({"inputs": many, "outputs": many}),
        ),
        job("good-2", &fenced(SUM), &sum_truth()),
    ];
    let jobs = write_lines(directory.path(), "jobs.jsonl", &lines);
    let output = verify(&jobs, &["--profile", "klear", "--workers", "1"]);
    let results = assert_every_job_answered(&output, lines.len());
    let expected_reasons = [
        (
            0,
            "line 1: ground truth key \"timeout\" must be a number of seconds in (0, 3600], found 1e+300",
        ),
        (
            2,
            "line 3: ground truth key \"timeout\" must be a number of seconds in (0, 3600], found -1",
        ),
        (
            3,
            "line 4: ground truth key \"timeout\" must be a number of seconds in (0, 3600], found a string (\"NaN\")",
        ),
        (
            4,
            "line 5: ground truth key \"timeout\" must be a number of seconds in (0, 3600], found a string (\"5\")",
        ),
        (
            5,
            "line 6: ground truth key \"max_test_cases\" must be a positive integer, found 0",
        ),
        (
            6,
            "line 7: ground truth key \"max_test_cases\" must be a positive integer, found 2.5",
        ),
        (
            7,
            "line 8: ground truth key \"inputs\" holds 10001 tests; at most 10000 are accepted",
        ),
    ];
    for (position, reason) in expected_reasons {
        let result = &results[position];
        assert_eq!(result["status"], "invalid_job", "{result}");
        assert_eq!(result["score"], Value::Null, "{result}");
        assert_eq!(result["reason"], reason, "{result}");
    }
    for position in [1, 8] {
        assert_eq!(results[position]["score"], 1.0, "{}", results[position]);
    }
}

#[test]
fn issue_12_bad_limit_flags_are_usage_errors_before_any_work() {
    let directory = tempfile::tempdir().unwrap();
    let jobs = write_lines(
        directory.path(),
        "jobs.jsonl",
        &[job("a", &fenced(SUM), &sum_truth())],
    );
    for (flag, value, message) in [
        (
            "--time-limit",
            "nan",
            "--time-limit must be a number of seconds in (0, 3600], found NaN",
        ),
        (
            "--time-limit",
            "-1",
            "--time-limit must be a number of seconds in (0, 3600], found -1",
        ),
        (
            "--time-limit",
            "1e300",
            "--time-limit must be a number of seconds in (0, 3600], found 1e300",
        ),
        (
            "--memory-limit",
            "0",
            "--memory-limit must be a whole number of megabytes in [1, 1048576], found 0",
        ),
        (
            "--memory-limit",
            "18446744073709551615",
            "found 18446744073709551615",
        ),
        (
            "--max-tests",
            "0",
            "--max-tests must be at least 1, found 0",
        ),
    ] {
        // `--flag=VALUE`, so that `-1` is read as a value.
        let output = verify(&jobs, &[&format!("{flag}={value}")]);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{flag} {value}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(message),
            "{flag} {value}: {}",
            stderr(&output)
        );
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn issue_12_a_panic_in_a_worker_is_one_sandbox_error_line_and_the_run_goes_on() {
    let directory = tempfile::tempdir().unwrap();
    let marked = fenced(&format!("# MARKER_CLI_PANIC\n{SUM}"));
    let lines = vec![
        job("panics-1", &marked, &sum_truth()),
        job("good-1", &fenced(SUM), &sum_truth()),
        job("panics-2", &marked, &sum_truth()),
        job("good-2", &fenced(SUM), &sum_truth()),
    ];
    let jobs = write_lines(directory.path(), "jobs.jsonl", &lines);
    for fault in ["plan:MARKER_CLI_PANIC", "execute:MARKER_CLI_PANIC"] {
        let output = rlvr()
            .args(["verify", "--workers", "1"])
            .arg(&jobs)
            .env("RLVR_TEST_FAULT", fault)
            .output()
            .expect("rlvr runs");
        let results = assert_every_job_answered(&output, lines.len());
        let ids: Vec<&str> = results
            .iter()
            .map(|result| result["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["panics-1", "good-1", "panics-2", "good-2"], "{fault}");
        for panicked in [&results[0], &results[2]] {
            assert_eq!(panicked["status"], "sandbox_error", "{fault}: {panicked}");
            assert_eq!(panicked["score"], Value::Null);
            assert!(
                panicked["reason"]
                    .as_str()
                    .unwrap()
                    .starts_with("internal error: the verifier failed on this job"),
                "{fault}: {panicked}"
            );
        }
        for honest in [&results[1], &results[3]] {
            assert_eq!(honest["score"], 1.0, "{fault}: {honest}");
        }
        assert!(
            stderr(&output).contains("internal errors: 2 (the verifier panicked"),
            "{fault}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn issue_12_a_response_that_does_not_compile_is_scored_with_the_reason() {
    let directory = tempfile::tempdir().unwrap();
    let deep = format!("x = {}\n{SUM}", vec!["1"; 200_000].join("+"));
    let lines = vec![
        job("deep", &fenced(&deep), &sum_truth()),
        job("good", &fenced(SUM), &sum_truth()),
    ];
    let jobs = write_lines(directory.path(), "jobs.jsonl", &lines);
    let output = verify(&jobs, &["--profile", "klear", "--workers", "1"]);
    let results = assert_every_job_answered(&output, 2);
    assert_eq!(results[0]["status"], "ok", "{}", results[0]);
    assert_eq!(results[0]["score"], -1.0, "klear's reference gives -1");
    assert_eq!(
        results[0]["reason"],
        "the code does not compile: RecursionError: maximum recursion depth exceeded during compilation"
    );
    assert_eq!(results[1]["score"], 1.0);
}

/// Issues 13 and 16: what Python, pyarrow and pandas write is read, not refused.
#[test]
fn issue_13_and_16_python_json_and_null_keys_in_job_lines_and_dataset_rows() {
    let directory = tempfile::tempdir().unwrap();
    let response = serde_json::to_string(&fenced(SUM)).unwrap();
    let dataset = write_lines(
        directory.path(),
        "data.jsonl",
        &[
            r#"{"prompt": [{"role": "user", "content": "add \ud800 two numbers"}], "label": null, "metadata": {"ground_truth": {"inputs": ["1 2\n"], "outputs": ["3\n"], "functional": null}}}"#
                .to_owned(),
            r#"{"prompt": [], "label": {"inputs": null, "outputs": null, "functional": ["assert 1 + 1 == 2"]}}"#.to_owned(),
        ],
    );
    let lines = vec![
        format!(
            r#"{{"id": "surrogate \udc80", "response": {response}, "ground_truth": {{"inputs": ["1 2\n"], "outputs": ["3\n"]}}}}"#
        ),
        format!(
            r#"{{"id": "nulls", "response": {response}, "index": null, "ground_truth": {{"inputs": ["1 2\n"], "outputs": ["3\n"], "functional": null, "timeout": null}}}}"#
        ),
        format!(r#"{{"id": "row 0", "response": {response}, "ground_truth": null, "index": 0}}"#),
        format!(
            r#"{{"id": "row 1", "response": {}, "index": 1}}"#,
            serde_json::to_string(&fenced("pass")).unwrap()
        ),
    ];
    let jobs = write_lines(directory.path(), "jobs.jsonl", &lines);
    let output = verify(&jobs, &["--dataset", dataset.to_str().unwrap()]);
    let results = assert_every_job_answered(&output, lines.len());
    assert_eq!(results[0]["id"], "surrogate \u{fffd}");
    for result in &results {
        assert_eq!(result["status"], "ok", "{result}");
        assert_eq!(result["score"], 1.0, "{result}");
    }
}

/// A line that is not UTF-8 is one invalid job; it used to end the whole run.
#[test]
fn a_job_line_that_is_not_utf8_is_one_invalid_job() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("jobs.jsonl");
    let mut bytes = job("a", &fenced(SUM), &sum_truth()).into_bytes();
    bytes.extend_from_slice(b"\r\n{\"id\": \"b\", \"response\": \"\xff\"}\n");
    bytes.extend_from_slice(job("c", &fenced(SUM), &sum_truth()).as_bytes());
    std::fs::write(&path, bytes).unwrap();
    let output = verify(&path, &[]);
    let results = assert_every_job_answered(&output, 3);
    assert_eq!(results[0]["score"], 1.0);
    assert_eq!(results[1]["status"], "invalid_job");
    assert_eq!(
        results[1]["reason"],
        "line 2: not valid UTF-8 (byte offset 25 in the line)"
    );
    assert_eq!(results[2]["score"], 1.0);
}

/// Issue 12: a 2 MB response with 200 tests grew RSS by 400 MB. Memory must be bounded by the
/// work in flight: measured as the peak RSS of `rlvr verify` (GNU time), against the same job
/// with a small response.
#[test]
fn issue_12_memory_is_bounded_by_the_work_in_flight_not_tests_times_response() {
    let time = Path::new("/usr/bin/time");
    assert!(
        time.exists(),
        "/usr/bin/time is not installed (scripts/setup installs it): the test cannot measure"
    );
    let directory = tempfile::tempdir().unwrap();
    let padding = format!("# {}\n", "x".repeat(2 << 20));
    let inputs: Vec<String> = (0..200).map(|index| format!("{index} 1\n")).collect();
    let outputs: Vec<String> = (0..200).map(|index| format!("{}\n", index + 1)).collect();
    let stdin_truth = json!({"inputs": inputs, "outputs": outputs});
    let function = "def f(a):\n    return a + 1";
    // 100 asserts keep the test short: each one's program is compiled on its own.
    let asserts: Vec<String> = (0..100)
        .map(|index| format!("assert f({index}) == {}", index + 1))
        .collect();
    let functional_truth = json!({ "functional": asserts });
    let peak_kib = |name: &str, response: &str, truth: &Value| -> u64 {
        let jobs = write_lines(directory.path(), name, &[job(name, response, truth)]);
        let output = Command::new(time)
            .args(["-f", "peak %M"])
            .arg(env!("CARGO_BIN_EXE_rlvr"))
            .args(["verify", "--workers", "1"])
            .arg(&jobs)
            .output()
            .expect("time runs rlvr");
        let lines = results(&output);
        assert_eq!(lines.len(), 1, "{}", stderr(&output));
        assert_eq!(lines[0]["score"], 1.0, "{name}: {}", lines[0]);
        stderr(&output)
            .lines()
            .find_map(|line| line.strip_prefix("peak ")?.trim().parse().ok())
            .expect("GNU time prints the peak RSS")
    };
    for (kind, code, truth) in [
        ("stdin", SUM, &stdin_truth),
        ("functional", function, &functional_truth),
    ] {
        let small = peak_kib(&format!("{kind}-small"), &fenced(code), truth);
        let large = peak_kib(
            &format!("{kind}-large"),
            &fenced(&format!("{padding}{code}")),
            truth,
        );
        let growth_mib = large.saturating_sub(small) / 1024;
        // Today's main grew by about 400 MiB; a few copies of a 2 MB line are expected.
        assert!(
            growth_mib < 64,
            "{kind}: a 2 MB response with 200 tests grew peak RSS by {growth_mib} MiB ({small} KiB -> {large} KiB)"
        );
    }
}
