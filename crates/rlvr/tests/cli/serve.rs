//! `rlvr serve` end to end: a real server process on loopback, raw HTTP/1.1 from the test
//! (so disconnects and oversized bodies are exactly what a client does), the real sandbox.

use std::io::Write;
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::served::request;
use crate::support::{Served, wait_until};

fn fenced(code: &str) -> String {
    format!("```python\n{code}\n```")
}

fn doubling_job(id: usize, code: &str) -> Value {
    json!({
        "id": id,
        "response": fenced(code),
        "ground_truth": {"inputs": ["2\n", "5\n"], "outputs": ["4\n", "10\n"]},
    })
}

/// A job that holds its worker for about `seconds`.
fn slow_job(id: usize, seconds: f64) -> Value {
    doubling_job(
        id,
        &format!("import time\ntime.sleep({seconds})\nprint(int(input()) * 2)"),
    )
}

#[test]
fn verify_batch_scores_in_job_order_and_streams_as_jobs_finish() {
    let served = Served::start(&["--workers", "2"]);
    let body = json!({
        "details": true,
        "jobs": [
            doubling_job(0, "print(int(input()) * 2)"),
            {"id": "bad", "response": "x"},
            doubling_job(2, "print(3)"),
            doubling_job(3, "raise SystemExit(1)"),
        ],
    });
    let response = served.post("/v1/verify", &body);
    assert_eq!(response.status, 200, "{}", response.body);
    let results = response.json()["results"].as_array().unwrap().clone();
    assert_eq!(results.len(), 4);
    assert_eq!(results[0]["id"], 0);
    assert_eq!(results[0]["score"], 1.0);
    assert_eq!(results[0]["tests"][0]["verdict"], "pass");
    assert_eq!(results[1]["id"], "bad");
    assert_eq!(results[1]["status"], "invalid_job");
    assert!(
        results[1]["reason"]
            .as_str()
            .unwrap()
            .contains("ground_truth")
    );
    assert_eq!(results[2]["score"], 0.0);
    assert_eq!(results[2]["tests"][0]["verdict"], "wrong_answer");
    assert_eq!(results[3]["tests"][0]["verdict"], "runtime_error");

    let streamed = served.post("/v1/verify?stream=1", &body);
    assert_eq!(streamed.status, 200);
    assert_eq!(
        streamed.header("content-type"),
        Some("application/x-ndjson")
    );
    let mut ids: Vec<String> = streamed
        .body
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["id"].to_string())
        .collect();
    ids.sort();
    assert_eq!(ids, ["\"bad\"", "0", "2", "3"]);

    let klear_binary = served.post(
        "/v1/verify",
        &json!({"jobs": [], "profile": "klear", "reward": "binary"}),
    );
    assert_eq!(klear_binary.status, 400, "{}", klear_binary.body);
    let unknown = served.post("/v1/verify", &json!({"jobs": [], "profile": "nope"}));
    assert_eq!(unknown.status, 400);
    assert!(
        unknown.json()["error"]
            .as_str()
            .unwrap()
            .contains("unknown profile")
    );
}

#[test]
fn malformed_json_is_400_with_a_reason() {
    let served = Served::start(&["--workers", "1"]);
    let response = served.request("POST", "/v1/verify", &[], b"{\"jobs\": [");
    assert_eq!(response.status, 400);
    let reason = response.json()["error"].as_str().unwrap().to_owned();
    assert!(
        reason.starts_with("malformed JSON: EOF while parsing"),
        "{reason}"
    );
    let wrong_shape = served.request("POST", "/v1/verify", &[], b"{\"jobs\": 3}");
    assert_eq!(wrong_shape.status, 400);
    assert!(
        wrong_shape.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("invalid request:")
    );
    for path in [
        "/run_code",
        "/test_program",
        "/test_program_stdio",
        "/get_reward",
    ] {
        let response = served.request("POST", path, &[], b"not json");
        assert_eq!(response.status, 400, "{path}: {}", response.body);
        assert!(response.json()["error"].is_string(), "{path}");
    }
    let missing = served.request("GET", "/nowhere", &[], b"");
    assert_eq!(missing.status, 404);
}

#[test]
fn oversized_body_is_413_and_too_many_jobs_is_413() {
    let served = Served::start(&[
        "--workers",
        "1",
        "--max-body-bytes",
        "4096",
        "--max-jobs-per-request",
        "3",
    ]);
    let big = json!({"jobs": [doubling_job(0, &"#".repeat(10_000))]});
    let response = served.post("/v1/verify", &big);
    assert_eq!(response.status, 413, "{}", response.body);
    assert!(
        response.json()["error"]
            .as_str()
            .unwrap()
            .contains("larger than")
    );
    let many = json!({"jobs": (0..4).map(|id| doubling_job(id, "print(1)")).collect::<Vec<_>>()});
    let response = served.post("/v1/verify", &many);
    assert_eq!(response.status, 413, "{}", response.body);
    assert!(
        response.json()["error"]
            .as_str()
            .unwrap()
            .contains("4 jobs")
    );
}

#[test]
fn full_queue_is_429_with_retry_after() {
    let served = Served::start(&["--workers", "1", "--max-queue", "2"]);
    let address = served.address.clone();
    let busy = std::thread::spawn(move || {
        let body = json!({"jobs": [slow_job(0, 1.5), slow_job(1, 0.1)]});
        request(
            &address,
            "POST",
            "/v1/verify",
            &[],
            body.to_string().as_bytes(),
        )
    });
    let started = Instant::now();
    while served.metric("rlvr_queue_depth") < 2.0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the first request was admitted"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let refused = served.post(
        "/v1/verify",
        &json!({"jobs": [doubling_job(9, "print(1)")]}),
    );
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert!(
        refused.json()["error"]
            .as_str()
            .unwrap()
            .contains("queue is full")
    );
    let first = busy.join().unwrap();
    assert_eq!(first.status, 200);
    assert_eq!(first.json()["results"][0]["score"], 1.0);
    assert!(served.metric("rlvr_queue_full_total") >= 1.0);
    let later = served.post(
        "/v1/verify",
        &json!({"jobs": [doubling_job(9, "print(int(input())*2)")]}),
    );
    assert_eq!(later.status, 200);
}

#[test]
fn a_client_that_disconnects_cancels_its_queued_work() {
    let served = Served::start(&["--workers", "1"]);
    let jobs: Vec<Value> = (0..30).map(|id| slow_job(id, 0.3)).collect();
    let body = json!({"jobs": jobs}).to_string();
    for path in ["/v1/verify", "/v1/verify?stream=1"] {
        let jobs_before = served.metric("rlvr_jobs_total");
        let cancelled_before = served.metric("rlvr_jobs_cancelled_total");
        let mut stream = TcpStream::connect(&served.address).unwrap();
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        // Disconnect once the request is admitted and its first job is running.
        assert!(
            wait_until(Duration::from_secs(20), || {
                served.metric("rlvr_queue_depth") >= 1.0
                    && served.metric("rlvr_engine_queued") < 30.0
            }),
            "{path}: the request was never admitted"
        );
        drop(stream);
        // Jobs already handed to the engine (at most 2 per worker) finish; the rest never run.
        let started = Instant::now();
        while served.metric("rlvr_queue_depth") > 0.0 || served.metric("rlvr_engine_queued") > 0.0 {
            assert!(started.elapsed() < Duration::from_secs(20), "queue drains");
            std::thread::sleep(Duration::from_millis(100));
        }
        // Every job of the request is accounted for: run to the end, or cancelled.
        assert!(
            wait_until(Duration::from_secs(20), || {
                served.metric("rlvr_jobs_total") - jobs_before
                    + served.metric("rlvr_jobs_cancelled_total")
                    - cancelled_before
                    >= 30.0
            }),
            "{path}: jobs neither finished nor cancelled"
        );
        let ran = served.metric("rlvr_jobs_total") - jobs_before;
        assert!(
            ran < 10.0,
            "{path}: {ran} of 30 jobs ran after the client left"
        );
    }
    assert!(served.metric("rlvr_jobs_cancelled_total") >= 40.0);
    // Nothing left behind: no sandboxed process outlives its job.
    let children = Command::new("pgrep")
        .args(["-P", &served.id().to_string()])
        .output()
        .unwrap();
    let children = String::from_utf8_lossy(&children.stdout).lines().count();
    assert!(children <= 1, "{children} processes still under the server");
    let after = served.post(
        "/v1/verify",
        &json!({"jobs": [doubling_job(0, "print(int(input())*2)")]}),
    );
    assert_eq!(after.json()["results"][0]["score"], 1.0);
}

#[test]
fn sigterm_under_load_finishes_work_in_flight_and_refuses_new_work() {
    let mut served = Served::start(&["--workers", "2"]);
    let address = served.address.clone();
    let clients: Vec<_> = (0..4)
        .map(|client| {
            let address = address.clone();
            std::thread::spawn(move || {
                let jobs: Vec<Value> = (0..3).map(|id| slow_job(client * 10 + id, 0.3)).collect();
                let body = json!({"jobs": jobs}).to_string();
                request(&address, "POST", "/v1/verify", &[], body.as_bytes())
            })
        })
        .collect();
    let started = Instant::now();
    while served.metric("rlvr_queue_depth") < 12.0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "all requests admitted"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    served.terminate();
    assert!(
        wait_until(Duration::from_secs(10), || TcpStream::connect(&address)
            .is_err()),
        "no new connection is accepted after SIGTERM"
    );
    for client in clients {
        let response = client.join().unwrap();
        assert_eq!(response.status, 200, "{}", response.body);
        for result in response.json()["results"].as_array().unwrap() {
            assert_eq!(result["status"], "ok", "{result}");
            assert_eq!(result["score"], 1.0, "{result}");
        }
    }
    let status = served
        .wait_exit(Duration::from_secs(30))
        .expect("the server exits");
    assert!(status.success(), "{status:?}");
}

#[test]
fn bearer_token_guards_every_route_but_the_probes() {
    let directory = tempfile::tempdir().unwrap();
    let token_file = directory.path().join("token");
    std::fs::write(&token_file, "s3cret\n").unwrap();
    let served = Served::start(&[
        "--workers",
        "1",
        "--token-file",
        token_file.to_str().unwrap(),
    ]);
    let body = json!({"jobs": []}).to_string();
    let none = served.request("POST", "/v1/verify", &[], body.as_bytes());
    assert_eq!(none.status, 401);
    assert_eq!(none.header("www-authenticate"), Some("Bearer"));
    let wrong = served.request(
        "POST",
        "/v1/verify",
        &[("Authorization", "Bearer nope")],
        body.as_bytes(),
    );
    assert_eq!(wrong.status, 401);
    let right = served.request(
        "POST",
        "/v1/verify",
        &[("Authorization", "Bearer s3cret")],
        body.as_bytes(),
    );
    assert_eq!(right.status, 200, "{}", right.body);
    assert_eq!(served.request("GET", "/metrics", &[], b"").status, 401);
    assert_eq!(served.request("GET", "/health", &[], b"").status, 200);
    assert_eq!(served.request("GET", "/v1/ping", &[], b"").status, 200);
}

/// Issue 26: a server reachable beyond loopback needs a token, or the explicit opt-out.
#[test]
fn a_non_loopback_bind_without_a_token_is_refused_with_its_own_status() {
    for address in ["0.0.0.0:0", "[::]:0"] {
        let refused = Command::new(env!("CARGO_BIN_EXE_rlvr"))
            .args(["serve", "--addr", address, "--workers", "1"])
            .output()
            .expect("rlvr serve runs");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(7), "{stderr}");
        assert!(refused.stdout.is_empty(), "nothing was bound");
        assert!(
            stderr.contains("refusing to listen on")
                && stderr.contains("without a token")
                && stderr.contains("--token-file")
                && stderr.contains("--insecure-no-auth"),
            "{stderr}"
        );
    }
}

#[test]
fn a_non_loopback_bind_serves_with_a_token_or_with_insecure_no_auth() {
    let directory = tempfile::tempdir().unwrap();
    let token_file = directory.path().join("token");
    std::fs::write(&token_file, "s3cret\n").unwrap();
    let guarded = Served::start_at(
        "0.0.0.0:0",
        &[
            "--workers",
            "1",
            "--token-file",
            token_file.to_str().unwrap(),
        ],
    );
    let port = guarded.address.rsplit(':').next().unwrap().to_owned();
    // Reached through loopback (the test sends nowhere else); the listener is 0.0.0.0.
    let body = json!({"jobs": []}).to_string();
    let loopback = format!("127.0.0.1:{port}");
    assert_eq!(
        request(&loopback, "POST", "/v1/verify", &[], body.as_bytes()).status,
        401
    );
    assert_eq!(request(&loopback, "GET", "/health", &[], b"").status, 200);

    let open = Served::start_at("0.0.0.0:0", &["--workers", "1", "--insecure-no-auth"]);
    let port = open.address.rsplit(':').next().unwrap().to_owned();
    let loopback = format!("127.0.0.1:{port}");
    assert_eq!(
        request(&loopback, "POST", "/v1/verify", &[], body.as_bytes()).status,
        200
    );
}

#[test]
fn compatible_routes_answer_in_their_trainers_shapes() {
    let served = Served::start(&["--workers", "2"]);
    assert_eq!(
        served.request("GET", "/health", &[], b"").json(),
        json!({"status": "healthy"})
    );
    assert_eq!(
        served.request("GET", "/v1/ping", &[], b"").json(),
        json!("pong")
    );

    // SandboxFusion /run_code.
    let ok = served
        .post(
            "/run_code",
            &json!({"code": "print(input()[::-1])", "stdin": "abc", "language": "python"}),
        )
        .json();
    assert_eq!(ok["status"], "Success");
    assert_eq!(ok["run_result"]["status"], "Finished");
    assert_eq!(ok["run_result"]["return_code"], 0);
    assert_eq!(ok["run_result"]["stdout"], "cba\n");
    assert!(ok["run_result"]["execution_time"].as_f64().unwrap() > 0.0);
    let failed = served
        .post(
            "/run_code",
            &json!({"code": "import sys; sys.exit(3)", "language": "python"}),
        )
        .json();
    assert_eq!(
        (
            failed["status"].as_str(),
            failed["run_result"]["return_code"].as_i64()
        ),
        (Some("Failed"), Some(3))
    );
    let slow = served
        .post(
            "/run_code",
            &json!({"code": "while True: pass", "language": "python", "run_timeout": 0.5}),
        )
        .json();
    assert_eq!(slow["status"], "Failed");
    assert_eq!(slow["run_result"]["status"], "TimeLimitExceeded");
    // Issue 24: C++ runs; a language rlvr does not run is SandboxFusion's SandboxError.
    let cpp = served
        .post(
            "/run_code",
            &json!({"code": "int main(){}", "language": "cpp", "compile_timeout": 60}),
        )
        .json();
    assert_eq!(cpp["status"], "Success", "{cpp}");
    assert_eq!(cpp["compile_result"]["return_code"], 0, "{cpp}");
    let php = served
        .post(
            "/run_code",
            &json!({"code": "<?php echo 1;", "language": "php"}),
        )
        .json();
    assert_eq!(php["status"], "SandboxError");

    // open-instruct.
    let asserts = served.post("/test_program", &json!({
        "program": "def add(a, b):\n    return a + b",
        "tests": ["assert add(1, 2) == 3", "assert add(1, 2) == 4", "assert add(2, 2) == 4"],
        "max_execution_time": 1.0,
    })).json();
    assert_eq!(asserts["results"], json!([1, 0, 1]));
    assert_eq!(asserts["runtimes"].as_array().unwrap().len(), 3);
    let as_string = served
        .post(
            "/test_program",
            &json!({
                "program": "x = 1", "tests": "[\"assert x == 1\"]",
            }),
        )
        .json();
    assert_eq!(as_string["results"], json!([1]));
    // open-instruct's default (one second) stands for an explicit null as for an absent field.
    let null_limit = served
        .post(
            "/test_program",
            &json!({"program": "x = 1", "tests": ["assert x == 1"], "max_execution_time": null}),
        )
        .json();
    assert_eq!(null_limit["results"], json!([1]));
    let huge_limit = served.post(
        "/test_program",
        &json!({"program": "x = 1", "tests": ["assert x == 1"], "max_execution_time": 1e300}),
    );
    assert_eq!(huge_limit.status, 400);
    let pickled = served.post(
        "/test_program",
        &json!({"program": "x = 1", "tests": "eJxLy8lPTgQACv8C/Q=="}),
    );
    assert_eq!(pickled.status, 422);
    let stdio = served
        .post(
            "/test_program_stdio",
            &json!({
                "program": "print(int(input()) + 1)",
                "tests": [{"input": "1\n", "output": "2\n"}, {"input": "5", "output": "7"}],
            }),
        )
        .json();
    assert_eq!(stdio["results"], json!([1, 0]));
    let empty = served
        .post("/test_program", &json!({"program": "x = 1", "tests": []}))
        .json();
    assert_eq!(empty, json!({"results": [], "runtimes": []}));

    // OpenRLHF.
    let prompt = "<|user|>Double the number.<|assistant|>";
    let label = json!({"inputs": ["2\n"], "outputs": ["4\n"]}).to_string();
    let reward = served
        .post(
            "/get_reward",
            &json!({
                "query": [
                    format!("{prompt}{}", fenced("print(int(input()) * 2)")),
                    format!("{prompt}{}", fenced("print(0)")),
                    format!("{prompt}no code"),
                ],
                "prompts": [prompt, prompt, prompt],
                "labels": [label, label, label],
            }),
        )
        .json();
    assert_eq!(reward["rewards"], json!([1.0, 0.0, 0.0]));
    assert_eq!(reward["scores"], json!([1.0, 0.0, 0.0]));
    assert_eq!(reward["extra_logs"]["all_passed"], json!([1.0, 0.0, 0.0]));
    let klear = served
        .post(
            "/get_reward?profile=klear",
            &json!({
                "query": [format!("{prompt}<think>x</think>{}", fenced("print(int(input()) * 2)"))],
                "prompts": [prompt],
                "labels": [label],
            }),
        )
        .json();
    assert_eq!(klear["rewards"], json!([1.0]));

    // Prometheus text.
    let metrics = served.request("GET", "/metrics", &[], b"").body;
    for name in [
        "rlvr_requests_total{route=\"/run_code\",status=\"200\"}",
        "rlvr_request_duration_seconds_bucket{route=\"/get_reward\",le=\"+Inf\"}",
        "rlvr_job_duration_seconds_count",
        "rlvr_test_verdicts_total{verdict=\"pass\"}",
        "rlvr_queue_depth 0",
        "rlvr_sandbox_errors_total 0",
        "rlvr_tests_total",
    ] {
        assert!(metrics.contains(name), "{name} in {metrics}");
    }
}

/// Issue 25: a ground truth's checker judges native `/v1/verify` jobs as it does in `rlvr
/// verify` (the ground truth as an object or as JSON text), and a checker rlvr cannot run is
/// an `invalid_job` naming the key.
#[test]
fn issue_25_checkers_judge_native_verify_jobs() {
    let served = Served::start(&["--workers", "1"]);
    let permutation =
        json!({"inputs": ["3\n"], "outputs": ["1\n2\n3\n"], "checker": "lines-any-order"});
    let reversed = fenced("n = int(input())\nprint(*range(n, 0, -1), sep='\\n')");
    let body = json!({
        "details": true,
        "jobs": [
            {"id": "object", "response": reversed, "ground_truth": permutation},
            {"id": "text", "response": reversed, "ground_truth": permutation.to_string()},
            {"id": "exact", "response": reversed, "ground_truth": {"inputs": ["3\n"], "outputs": ["1\n2\n3\n"]}},
            {"id": "unknown", "response": reversed, "ground_truth": {"inputs": ["3\n"], "outputs": ["1\n2\n3\n"], "checker": "any-order"}},
        ],
    });
    let response = served.post("/v1/verify", &body);
    assert_eq!(response.status, 200, "{}", response.body);
    let results = response.json()["results"].clone();
    for index in 0..2 {
        assert_eq!(results[index]["score"], 1.0, "{}", results[index]);
        assert_eq!(results[index]["checker"], "lines-any-order");
        assert_eq!(results[index]["tests"][0]["checker_score"], 1.0);
    }
    assert_eq!(
        results[2]["score"], 0.0,
        "no checker: the judge's comparison"
    );
    assert_eq!(results[3]["status"], "invalid_job");
    let reason = results[3]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("ground truth key \"checker\" names no built-in checker: \"any-order\""),
        "{reason}"
    );
}
