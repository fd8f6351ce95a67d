//! Reward integrity through `rlvr serve` (issues 12, 22 and 32): the hostile responses of
//! `tests/fixtures/integrity/attacks.py`, `live.py` and `referee.py` through `POST /v1/verify` and
//! open-instruct's `POST /test_program` must score 0 (they scored 1.0 before), honest ones must
//! pass, and the tampering they tried and the untrusted comparisons they made must show in the
//! responses and in `/metrics`.

use std::path::Path;
use std::process::Command;

use crate::support::{Caller, Mode, RunsRlvr, Served, assert_no_survivors, rlvr};
use serde_json::{Value, json};

const SERVE: [&str; 5] = ["serve", "--addr", "127.0.0.1:0", "--workers", "2"];

fn start() -> Served {
    let mut command = rlvr();
    command.args(SERVE).env("RLVR_SANDBOX_UID", "61240");
    Served::start_with(command)
}

/// The server as an unprivileged caller (issue 15: the user-namespace sandbox).
fn start_as(caller: &Caller) -> Served {
    Served::start_with(caller.rlvr(&SERVE))
}

/// The job lines of one group of `attacks.py`.
fn jobs(group: &str) -> Vec<Value> {
    fixture_jobs("attacks.py", group)
}

/// The job lines of one group of a fixture script.
fn fixture_jobs(script: &str, group: &str) -> Vec<Value> {
    let python = std::env::var("RLVR_PYTHON").unwrap_or_else(|_| "python3".into());
    let output = Command::new(python)
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("tests/fixtures/integrity/{script}")),
        )
        .arg(group)
        .output()
        .expect("python runs");
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The code inside a job's fenced response, as open-instruct sends a program.
fn program(job: &Value) -> String {
    let response = job["response"].as_str().unwrap();
    let start = response.find("```python\n").unwrap() + "```python\n".len();
    let end = response.rfind("\n```").unwrap();
    response[start..end].to_owned()
}

fn metric(served: &Served, series: &str) -> f64 {
    let text = served.get("/metrics").body;
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("{series} in {text}"))
}

/// Issue 12 through `POST /v1/verify` (native) and `POST /test_program` (open-instruct): every
/// hostile answer scored 1.0 before; now 0, with its tampering in the response and `/metrics`.
#[test]
fn issue_12_hostile_answers_score_zero_through_the_server() {
    hostile_answers_score_zero(&start());
}

/// Issue 15: the same through a server an unprivileged user runs (user-namespace sandbox, one
/// uid), which leaves no process of its sandboxes behind.
#[test]
fn issue_15_hostile_answers_score_zero_through_an_unprivileged_server() {
    let Some(caller) = Caller::new(Mode::UserNamespace, 62103) else {
        return;
    };
    let served = start_as(&caller);
    hostile_answers_score_zero(&served);
    drop(served);
    assert_no_survivors(&caller.sandbox_uids());
}

fn hostile_answers_score_zero(served: &Served) {
    let mut hostile = jobs("hostile");
    hostile.extend(fixture_jobs("live.py", "hostile"));
    hostile.extend(fixture_jobs("live.py", "forms"));
    hostile.extend(fixture_jobs("referee.py", "hostile"));
    hostile.extend(fixture_jobs("referee.py", "forged"));
    let answer = served.post_ok(
        "/v1/verify",
        &json!({"jobs": hostile, "profile": "judge", "details": true}),
    );
    let results = answer["results"].as_array().unwrap();
    assert_eq!(results.len(), hostile.len());
    for result in results {
        assert_eq!(result["score"], 0.0, "{result}");
        assert_eq!(result["untrusted_comparisons"], 0, "{result}");
    }
    let getframe = results
        .iter()
        .find(|result| result["id"] == "getframe")
        .unwrap();
    assert!(
        getframe["tampering"]["frame_introspection"]
            .as_u64()
            .unwrap()
            >= 1
    );
    // Issue 32: every forged message on the live channel is reported.
    for id in [
        "garbage_frame",
        "unasked_answer",
        "malformed_value",
        "not_an_object",
    ] {
        let result = results.iter().find(|result| result["id"] == id).unwrap();
        assert_eq!(result["tampering"]["forged_report"], 1, "{result}");
    }

    for job in &hostile {
        let tests = &job["ground_truth"]["functional"];
        let answer = served.post_ok(
            "/test_program",
            &json!({"program": program(job), "tests": tests, "max_execution_time": 5.0}),
        );
        let passed: Vec<i64> = answer["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|value| value.as_i64().unwrap())
            .collect();
        assert!(
            passed.iter().all(|&value| value == 0),
            "{}: {answer}",
            job["id"]
        );
    }
    let frames = served.post_ok(
        "/test_program",
        &json!({"program": program(hostile.iter().find(|job| job["id"] == "inspect").unwrap()),
                "tests": ["assert square(2) == 4"]}),
    );
    assert_eq!(frames["tampering"]["frame_introspection"], 1, "{frames}");

    assert!(metric(served, "rlvr_tampering_total{kind=\"frame_introspection\"}") >= 2.0);
    assert!(metric(served, "rlvr_tampering_total{kind=\"tracing\"}") >= 1.0);
    assert!(metric(served, "rlvr_tampering_total{kind=\"early_exit\"}") >= 3.0);
    assert!(metric(served, "rlvr_tampering_total{kind=\"forged_report\"}") >= 1.0);
    assert_eq!(metric(served, "rlvr_untrusted_comparisons_total"), 0.0);
}

#[test]
fn honest_answers_pass_through_the_server() {
    let served = start();
    let mut honest = jobs("honest");
    honest.extend(fixture_jobs("live.py", "honest"));
    honest.extend(fixture_jobs("referee.py", "honest"));
    let answer = served.post_ok("/v1/verify", &json!({"jobs": honest}));
    for result in answer["results"].as_array().unwrap() {
        assert_eq!(result["score"], 1.0, "{result}");
    }
    // The dataclass's `isinstance(p, Point)`: two of the solution's own objects (its `p ==
    // Point(1, 2)` is compared here, as data).
    assert_eq!(metric(&served, "rlvr_untrusted_comparisons_total"), 1.0);
    for job in &honest {
        let tests = &job["ground_truth"]["functional"];
        let answer = served.post_ok(
            "/test_program",
            &json!({"program": program(job), "tests": tests, "max_execution_time": 5.0}),
        );
        for value in answer["results"].as_array().unwrap() {
            assert_eq!(value, 1, "{}: {answer}", job["id"]);
        }
        assert!(answer.get("tampering").is_none(), "{answer}");
    }
    assert_eq!(
        metric(&served, "rlvr_tampering_total{kind=\"signal\"}"),
        0.0
    );
}
