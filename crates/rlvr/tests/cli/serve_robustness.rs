//! `rlvr serve` end to end for issue 12 "Verifier robustness" and the input shapes of issues 13
//! and 16: bad request values are a 400 naming the field or an `invalid_job` line, and never
//! kill a worker (a server with one worker keeps scoring); a panic is one `sandbox_error`;
//! bodies are read as Python writes them (lone surrogates, `NaN`) and `null` is absent.

use serde_json::{Value, json};

use crate::support::{Served, rlvr};

/// `rlvr serve` on a free port with `extra` flags and, when given, an armed fault.
fn start(extra: &[&str], fault: Option<&str>) -> Served {
    let mut command = rlvr();
    command.args(["serve", "--addr", "127.0.0.1:0"]).args(extra);
    if let Some(fault) = fault {
        command.env("RLVR_TEST_FAULT", fault);
    }
    Served::start_with(command)
}

/// `(status, JSON body)` of a POST of `body`.
fn post(served: &Served, path: &str, body: &Value) -> (u16, Value) {
    let response = served.post(path, body);
    (response.status, response.json())
}

/// `(status, JSON body)` of a POST of raw bytes (JSON only to Python: lone surrogates, `NaN`).
fn post_bytes(served: &Served, path: &str, body: &[u8]) -> (u16, Value) {
    let response = served.post_bytes(path, body);
    (response.status, response.json())
}

fn fenced(code: &str) -> String {
    format!("```python\n{code}\n```")
}

const DOUBLE: &str = "print(int(input()) * 2)";

fn doubling_truth() -> Value {
    json!({"inputs": ["2\n", "5\n"], "outputs": ["4\n", "10\n"]})
}

fn doubling_job(id: &str) -> Value {
    json!({"id": id, "response": fenced(DOUBLE), "ground_truth": doubling_truth()})
}

/// One worker: if any request killed it, this one would never be answered.
fn assert_still_scores(served: &Served) {
    let (status, body) = post(
        served,
        "/v1/verify",
        &json!({"jobs": [doubling_job("after")]}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"][0]["score"], 1.0, "{body}");
}

#[test]
fn issue_12_bad_request_values_are_refused_naming_the_field_and_no_worker_dies() {
    let served = start(&["--workers", "1"], None);
    for (body, reason) in [
        (
            json!({"jobs": [doubling_job("a")], "time_limit": -1}),
            "time_limit must be a number of seconds in (0, 3600], found -1",
        ),
        (
            json!({"jobs": [doubling_job("a")], "time_limit": 1e300}),
            "time_limit must be a number of seconds in (0, 3600], found 1e300",
        ),
        (
            json!({"jobs": [doubling_job("a")], "memory_limit": u64::MAX}),
            "memory_limit must be a whole number of megabytes in [1, 1048576]",
        ),
        (
            json!({"jobs": [doubling_job("a")], "max_tests": 0}),
            "max_tests must be at least 1, found 0",
        ),
        (
            json!({"jobs": [doubling_job("a")], "seed": -1}),
            "invalid request: field `seed`: invalid value: integer `-1`",
        ),
        (
            json!({"jobs": [doubling_job("a")], "time_limit": "fast"}),
            "invalid request: field `time_limit`: invalid type: string \"fast\"",
        ),
    ] {
        let (status, answer) = post(&served, "/v1/verify", &body);
        assert_eq!(status, 400, "{body}: {answer}");
        let error = answer["error"].as_str().unwrap();
        assert!(error.starts_with(reason), "{body}: {error}");
    }
    let (status, answer) = post_bytes(&served, "/v1/verify", br#"{"jobs": [], "deadline": NaN}"#);
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("field `deadline`"),
        "{answer}"
    );
    let (status, answer) = post(
        &served,
        "/run_code",
        &json!({"code": "print(1)", "language": "python", "run_timeout": 1e300}),
    );
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .starts_with("run_timeout must be")
    );
    assert_still_scores(&served);
}

/// A klear `timeout` of 1e300 panicked the worker for good on today's main.
#[test]
fn issue_12_bad_ground_truth_numbers_are_invalid_jobs_and_the_worker_lives_on() {
    let served = start(&["--workers", "1"], None);
    let body = format!(
        r#"{{"profile": "klear", "jobs": [
            {{"id": "big", "response": {response}, "ground_truth": {{"inputs": ["2\n"], "outputs": ["4\n"], "timeout": 1e300}}}},
            {{"id": "nan", "response": {response}, "ground_truth": {{"inputs": ["2\n"], "outputs": ["4\n"], "timeout": NaN}}}},
            {{"id": "negative", "response": {response}, "ground_truth": {{"functional": ["assert 1"], "max_test_cases": -2}}}},
            {{"id": "good", "response": {response}, "ground_truth": {{"inputs": ["2\n"], "outputs": ["4\n"], "timeout": 5}}}}
        ]}}"#,
        response = serde_json::to_string(&format!("<think>x</think>\n{}", fenced(DOUBLE))).unwrap()
    );
    let (status, answer) = post_bytes(&served, "/v1/verify", body.as_bytes());
    assert_eq!(status, 200, "{answer}");
    let results = answer["results"].as_array().unwrap();
    for (position, key) in [(0, "timeout"), (1, "timeout"), (2, "max_test_cases")] {
        let result = &results[position];
        assert_eq!(result["status"], "invalid_job", "{result}");
        assert_eq!(result["score"], Value::Null);
        assert!(
            result["reason"]
                .as_str()
                .unwrap()
                .contains(&format!("\"{key}\" must be")),
            "{result}"
        );
    }
    assert_eq!(results[3]["score"], 1.0, "{}", results[3]);
    assert_still_scores(&served);
}

#[test]
fn issue_12_a_panic_in_a_worker_is_one_sandbox_error_and_the_server_goes_on() {
    let served = start(&["--workers", "1"], Some("execute:MARKER_SERVE_PANIC"));
    let marked = json!({
        "id": "panics",
        "response": fenced(&format!("# MARKER_SERVE_PANIC\n{DOUBLE}")),
        "ground_truth": doubling_truth(),
    });
    let (status, answer) = post(
        &served,
        "/v1/verify",
        &json!({"jobs": [marked, doubling_job("good"), marked]}),
    );
    assert_eq!(status, 200, "{answer}");
    let results = answer["results"].as_array().unwrap();
    for panicked in [&results[0], &results[2]] {
        assert_eq!(panicked["status"], "sandbox_error", "{panicked}");
        assert_eq!(panicked["score"], Value::Null);
        assert!(
            panicked["reason"]
                .as_str()
                .unwrap()
                .starts_with("internal error: the verifier failed on this job"),
            "{panicked}"
        );
    }
    assert_eq!(results[1]["score"], 1.0);
    let (status, rewards) = post(
        &served,
        "/get_reward",
        &json!({"query": [format!("Q{}", fenced(&format!("# MARKER_SERVE_PANIC\n{DOUBLE}")))], "prompts": ["Q"], "labels": [doubling_truth()]}),
    );
    assert_eq!(status, 200);
    assert_eq!(
        rewards["extra_logs"]["sandbox_error"],
        json!([1.0]),
        "{rewards}"
    );
    assert_still_scores(&served);
    let metrics = served.get("/metrics").body;
    assert!(
        metrics
            .lines()
            .any(|line| line == "rlvr_engine_panics_total 3"),
        "{metrics}"
    );
}

/// Issue 13: a lone surrogate escape in a body rejected the whole request with 400.
#[test]
fn issue_13_lone_surrogates_in_a_body_do_not_reject_the_request() {
    let served = start(&["--workers", "1"], None);
    let response = serde_json::to_string(&fenced(DOUBLE)).unwrap();
    let verify = format!(
        r#"{{"jobs": [{{"id": "a\ud800", "response": {response}, "ground_truth": {{"inputs": ["2\n"], "outputs": ["4\n"]}}}},
                      {{"id": "b", "response": "\udc00\n{}", "ground_truth": {{"inputs": ["2\n"], "outputs": ["4\n"]}}}}]}}"#,
        response.trim_matches('"')
    );
    let (status, answer) = post_bytes(&served, "/v1/verify", verify.as_bytes());
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["results"][0]["id"], "a\u{fffd}");
    assert_eq!(answer["results"][0]["score"], 1.0, "{answer}");
    assert_eq!(answer["results"][1]["score"], 1.0, "{answer}");
    let prompt = r#"Double a number \ud83d\ude00 \ud800: "#;
    let reward = format!(
        r#"{{"query": ["{prompt}{}"], "prompts": ["{prompt}"], "labels": [{}]}}"#,
        response.trim_matches('"'),
        doubling_truth()
    );
    let (status, answer) = post_bytes(&served, "/get_reward", reward.as_bytes());
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["rewards"], json!([1.0]), "{answer}");
}

/// Issue 16: pyarrow and pandas write absent keys as `null`.
#[test]
fn issue_16_null_keys_are_absent_keys_in_every_route() {
    let served = start(&["--workers", "1"], None);
    let mixed_label = json!({"inputs": ["2\n"], "outputs": ["4\n"], "functional": null});
    let (status, answer) = post(
        &served,
        "/v1/verify",
        &json!({
            "jobs": [{"id": 1, "response": fenced(DOUBLE), "ground_truth": mixed_label, "index": null}],
            "profile": null, "reward": null, "time_limit": null, "memory_limit": null,
            "max_tests": null, "all_tests": null, "seed": null, "details": null, "deadline": null,
        }),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["results"][0]["score"], 1.0, "{answer}");
    let (status, answer) = post(
        &served,
        "/get_reward",
        &json!({
            "query": [fenced("def f(x):\n    return x * 2")],
            "prompts": null,
            "labels": [{"inputs": null, "outputs": null, "functional": ["assert f(2) == 4"]}],
        }),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["rewards"], json!([1.0]), "{answer}");
    let (status, answer) = post(
        &served,
        "/run_code",
        &json!({
            "code": "print(1)", "language": "python", "stdin": null, "run_timeout": null,
            "compile_timeout": null, "memory_limit_MB": null, "files": null, "fetch_files": null,
        }),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["status"], "Success", "{answer}");
}
