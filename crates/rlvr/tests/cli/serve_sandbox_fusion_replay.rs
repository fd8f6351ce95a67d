//! Issue 35: SandboxFusion's own API tests replayed against `rlvr serve`'s `/run_code`, for
//! the languages rlvr runs (python, cpp, java, nodejs, go, rust, bash, typescript), the
//! isolation tests and the dataset utilities' cases that post to `/run_code`. Our own harness: only the upstream
//! tests' data and assertions are taken (`fixtures/sandbox_fusion/api_cases.json`, each case
//! naming its upstream file and test). Each request is sent as SandboxFusion's
//! `RunCodeRequest.model_dump()` sends it (every field, defaults filled in), each answer must
//! parse as its `RunCodeResponse` parses it, then the test's assertions are checked.
//!
//! The cases that still differ are listed in [`EXPECTED_DIFFERENCES`] with the reason; the
//! test fails when a listed case holds (so the list shrinks as the gaps close) as well as when
//! an unlisted one fails.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::support::Served;

/// Cases that differ from SandboxFusion's answers today, by upstream test name, with why.
const EXPECTED_DIFFERENCES: [(&str, &str); 3] = [
    (
        "test_python_fetch_files",
        "it writes and fetches `/mnt/b`: rlvr's root is read-only and a path outside the work \
         directory is a 400 (docs/serve.md, `/run_code` files)",
    ),
    (
        "test_isolation_network_external_access",
        "no network out of the sandbox, by design (docs/sandbox.md): SandboxFusion's test \
         fetches https://www.sina.com.cn",
    ),
    (
        "test_utils_jest_report",
        "the `jest` language (a test runner) is not one rlvr runs: SandboxError",
    ),
];

/// The upstream compile timeouts below this are for a machine where a compile takes well
/// under a second: such a case's source is compiled once beforehand with room to spare, and
/// the case's own request then finds it in the shared compile cache (docs/languages.md), so
/// what it checks is the run and not this machine's compile speed.
const WARM_COMPILE_BELOW_SECONDS: f64 = 5.0;

/// `RunCodeRequest.model_dump()` of the case's fields: every field, defaults filled in.
fn model_dump(request: &Value) -> Value {
    let mut dumped = json!({
        "compile_timeout": 10.0,
        "run_timeout": 10.0,
        "memory_limit_MB": -1,
        "code": null,
        "stdin": null,
        "language": null,
        "files": {},
        "fetch_files": [],
    });
    for (key, value) in request.as_object().expect("request fields") {
        dumped[key] = value.clone();
    }
    dumped
}

/// A case's request: its fields dumped, the isolation tests' code formatted as upstream
/// formats it (a random port in [30000, 60000], the test's wait time).
fn request_of(case: &Value, port: u16) -> Value {
    let mut request = model_dump(&case["request"]);
    if let Some(format) = case.get("format") {
        let code = request["code"].as_str().expect("code");
        let wait_time = format["wait_time"].as_i64().expect("wait_time");
        request["code"] = Value::from(
            code.replace("{port}", &port.to_string())
                .replace("{wait_time}", &wait_time.to_string()),
        );
    }
    request
}

/// `RunCodeResponse(**json)`: what pydantic would refuse, as an error.
fn parse_as_run_code_response(answer: &Value) -> Result<(), String> {
    let status = answer["status"].as_str().unwrap_or_default();
    if !["Success", "Failed", "SandboxError"].contains(&status) {
        return Err(format!("status {:?} is no RunStatus", answer["status"]));
    }
    if !answer["message"].is_string() {
        return Err("message is not a string".to_owned());
    }
    for key in ["compile_result", "run_result"] {
        let result = &answer[key];
        if result.is_null() {
            continue;
        }
        let command_status = result["status"].as_str().unwrap_or_default();
        if !["Finished", "Error", "TimeLimitExceeded"].contains(&command_status) {
            return Err(format!("{key}.status {:?}", result["status"]));
        }
        let optional =
            |field: &str, kind: fn(&Value) -> bool| result[field].is_null() || kind(&result[field]);
        if !(optional("execution_time", Value::is_number)
            && optional("return_code", Value::is_i64)
            && optional("stdout", Value::is_string)
            && optional("stderr", Value::is_string))
        {
            return Err(format!("{key} is no CommandRunResult: {result}"));
        }
    }
    if !(answer["executor_pod_name"].is_null() || answer["executor_pod_name"].is_string()) {
        return Err("executor_pod_name".to_owned());
    }
    match answer.get("files") {
        None => {}
        Some(Value::Object(files)) if files.values().all(Value::is_string) => {}
        Some(other) => return Err(format!("files is no Dict[str, str]: {other}")),
    }
    Ok(())
}

/// The run (or compile) result's field, as the upstream test reads it (`None` when the
/// result is `null`: upstream's assertion then fails with an AttributeError).
fn field<'a>(answer: &'a Value, result: &str, name: &str) -> Result<&'a Value, String> {
    let result_value = &answer[result];
    if result_value.is_null() {
        return Err(format!("{result} is None"));
    }
    Ok(&result_value[name])
}

fn text<'a>(answer: &'a Value, result: &str, name: &str) -> Result<&'a str, String> {
    field(answer, result, name)?
        .as_str()
        .ok_or_else(|| format!("{result}.{name} is None"))
}

fn decoded(answer: &Value, path: &str) -> Result<String, String> {
    let encoded = answer["files"][path]
        .as_str()
        .ok_or_else(|| format!("KeyError: files[{path:?}]"))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|error| format!("files[{path:?}] is not base64: {error}"))?;
    String::from_utf8(bytes).map_err(|error| format!("files[{path:?}]: {error}"))
}

/// One upstream assertion.
fn check(answer: &Value, kind: &str, expected: &Value) -> Result<(), String> {
    let equal = |found: &str, wanted: &Value| {
        if Some(found) == wanted.as_str() {
            Ok(())
        } else {
            Err(format!("{kind}: {found:?} != {wanted}"))
        }
    };
    let contains = |found: &str, wanted: &Value| {
        let wanted = wanted.as_str().expect("a string");
        if found.contains(wanted) {
            Ok(())
        } else {
            Err(format!("{kind}: {wanted:?} not in {found:?}"))
        }
    };
    match kind {
        "status" => equal(answer["status"].as_str().unwrap_or_default(), expected),
        "run_status" => equal(text(answer, "run_result", "status")?, expected),
        "compile_status" => equal(text(answer, "compile_result", "status")?, expected),
        "run_stdout" => equal(text(answer, "run_result", "stdout")?, expected),
        "run_stdout_stripped" => equal(text(answer, "run_result", "stdout")?.trim(), expected),
        "run_stdout_contains" => contains(text(answer, "run_result", "stdout")?, expected),
        "run_stderr_contains" => contains(text(answer, "run_result", "stderr")?, expected),
        "compile_return_code_not" => {
            let code = field(answer, "compile_result", "return_code")?;
            if code == expected {
                Err(format!("compile_result.return_code == {expected}"))
            } else {
                Ok(())
            }
        }
        "run_result_none" => {
            if answer["run_result"].is_null() {
                Ok(())
            } else {
                Err("run_result is not None".to_owned())
            }
        }
        "fetched_file" => {
            let path = expected[0].as_str().expect("path");
            equal(&decoded(answer, path)?, &expected[1])
        }
        "jest_report_passed_failed" => {
            let report: Value =
                serde_json::from_str(&decoded(answer, expected[0].as_str().expect("path"))?)
                    .map_err(|error| format!("the jest report is not JSON: {error}"))?;
            let statuses: Vec<&str> = report["testResults"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|file| file["assertionResults"].as_array().into_iter().flatten())
                .filter_map(|case| case["status"].as_str())
                .collect();
            let passed = statuses
                .iter()
                .filter(|status| **status == "passed")
                .count();
            let counts = json!([passed, statuses.len() - passed]);
            if counts == json!([expected[1], expected[2]]) {
                Ok(())
            } else {
                Err(format!("passed and failed: {counts}"))
            }
        }
        other => panic!("the fixture names an assertion the harness does not know: {other}"),
    }
}

/// Posts `request` and checks the answer as the upstream test does.
fn replay(served: &Served, case: &Value, request: &Value) -> Result<(), String> {
    let response = served.post("/run_code", request);
    if response.status != 200 {
        return Err(format!("HTTP {}: {}", response.status, response.body));
    }
    let answer = response.json();
    parse_as_run_code_response(&answer).map_err(|error| format!("{error}: {answer}"))?;
    for assertion in case["expect"].as_array().expect("expect") {
        let kind = assertion[0].as_str().expect("assertion kind");
        check(&answer, kind, &assertion[1]).map_err(|error| format!("{error}: {answer}"))?;
    }
    Ok(())
}

fn random_port() -> u16 {
    let nanoseconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock after 1970")
        .subsec_nanos();
    30000 + u16::try_from(nanoseconds % 30001).expect("a port")
}

#[test]
fn issue_35_serve_sandbox_fusion_api_cases_hold_but_the_listed_differences() {
    let fixture = crate::support::repository()
        .join("crates/rlvr/tests/fixtures/sandbox_fusion/api_cases.json");
    let cases: Value =
        serde_json::from_slice(&std::fs::read(&fixture).expect("the fixture")).expect("JSON");
    let cases = cases["cases"].as_array().expect("cases");
    let served = Served::start(&["--workers", "2"]);
    let mut outcomes: BTreeMap<String, Result<(), String>> = BTreeMap::new();
    for case in cases {
        let name = case["test"].as_str().expect("test").to_owned();
        let request = request_of(case, random_port());
        if request["compile_timeout"]
            .as_f64()
            .expect("compile_timeout")
            < WARM_COMPILE_BELOW_SECONDS
        {
            let mut warming = request.clone();
            warming["compile_timeout"] = json!(120);
            warming["run_timeout"] = json!(1);
            let warmed = served.post("/run_code", &warming).json();
            assert_eq!(
                warmed["compile_result"]["return_code"], 0,
                "{name}: warming: {warmed}"
            );
        }
        let concurrent = case.get("concurrent").and_then(Value::as_u64).unwrap_or(1);
        let outcome = std::thread::scope(|scope| {
            let runs: Vec<_> = (0..concurrent)
                .map(|_| scope.spawn(|| replay(&served, case, &request)))
                .collect();
            runs.into_iter()
                .map(|run| run.join().expect("a replay thread"))
                .collect::<Result<Vec<()>, String>>()
                .map(drop)
        });
        outcomes.insert(name, outcome);
    }
    assert_eq!(outcomes.len(), 52, "every case of the fixture ran once");

    let expected: BTreeMap<&str, &str> = EXPECTED_DIFFERENCES.into_iter().collect();
    for name in expected.keys() {
        assert!(
            outcomes.contains_key(*name),
            "{name} is listed but is no case of the fixture"
        );
    }
    let mut problems = Vec::new();
    for (name, outcome) in &outcomes {
        let upstream = cases
            .iter()
            .find(|case| case["test"] == name.as_str())
            .map(|case| case["upstream"].as_str().unwrap_or_default())
            .unwrap_or_default();
        match (outcome, expected.get(name.as_str())) {
            (Ok(()), Some(_)) => problems.push(format!(
                "{upstream}::{name} now holds: remove it from EXPECTED_DIFFERENCES"
            )),
            (Err(error), None) => problems.push(format!("{upstream}::{name} differs: {error}")),
            _ => {}
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
