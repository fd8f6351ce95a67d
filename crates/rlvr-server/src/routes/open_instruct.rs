//! open-instruct-compatible `POST /test_program` (a program and a list of assert strings)
//! and `POST /test_program_stdio` (a program and `[{input, output}]`), answering
//! `{"results": [0 | 1, ...], "runtimes": [seconds, ...]}`. `tests` may take every form
//! open-instruct sends, including the release's label as it is (`open_instruct_decode`); the
//! pickled form is refused with a 422 saying so, as is every other unusable `tests`.
//!
//! Each test is scored by the judge profile: asserts run one per process after the program
//! and pass only when they complete; stdio output is compared token by token.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use rlvr_engine::Job;
use rlvr_verify::{Extraction, PlanOptions, Profile, ProfileName, Status, TestSuite, Verdict};
use serde_json::{Value, json};

use super::open_instruct_decode::{DecodedTests, decode_tests};
use super::{check_size, json_body, run_one, time_limit};
use crate::error::ApiError;
use crate::state::AppState;

/// open-instruct's `TestRequest`.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct TestRequest {
    program: String,
    tests: Value,
    /// Seconds per test; absent or `null` means open-instruct's default of one second.
    #[serde(default)]
    max_execution_time: Option<f64>,
}

pub(crate) async fn test_program(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    respond(&state, json_body(body)?, false).await
}

pub(crate) async fn test_program_stdio(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    respond(&state, json_body(body)?, true).await
}

/// Both routes: the tests' own shape decides how they run (asserts or stdin/stdout pairs).
async fn respond(
    state: &Arc<AppState>,
    request: TestRequest,
    stdio: bool,
) -> Result<Json<Value>, ApiError> {
    let tests = decode_tests(&request.tests, stdio)?;
    let count = tests.len();
    let ground_truth = match tests {
        DecodedTests::Asserts(asserts) => json!({ "functional": asserts }),
        DecodedTests::Stdio { inputs, outputs } => json!({ "inputs": inputs, "outputs": outputs }),
    };
    score(state, &request, ground_truth, count).await
}

async fn score(
    state: &Arc<AppState>,
    request: &TestRequest,
    ground_truth: Value,
    count: usize,
) -> Result<Json<Value>, ApiError> {
    if count == 0 {
        return Ok(Json(json!({ "results": [], "runtimes": [] })));
    }
    check_size(state, count)?;
    let suite = TestSuite::from_value(&ground_truth).map_err(|error| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("tests cannot be run: {error}"),
        )
    })?;
    let (profile, response) = program_as_response(&request.program);
    let per_test = time_limit(
        "max_execution_time",
        Some(request.max_execution_time.unwrap_or(1.0)),
    )?;
    let job = Job {
        profile: Arc::new(profile),
        response,
        suite,
        options: PlanOptions {
            all_tests: true,
            time_limit: per_test,
            ..PlanOptions::default()
        },
    };
    // Tests run one after another in the job's sandbox: give the request room for all of them.
    let budget = per_test.unwrap_or(Duration::from_secs(1))
        * u32::try_from(count).unwrap_or(u32::MAX)
        + Duration::from_secs(30);
    let deadline = budget.min(state.config.request_deadline);
    let result = run_one(state, job, deadline).await?;
    if result.status == Status::SandboxError {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "sandbox error: {}",
                result.reason.unwrap_or_else(|| "unknown".to_owned())
            ),
        ));
    }
    let mut results = vec![0; count];
    let mut runtimes = vec![-1.0; count];
    for test in result.tests.iter().flatten() {
        if let (Some(result), Some(runtime)) =
            (results.get_mut(test.index), runtimes.get_mut(test.index))
        {
            *result = i32::from(test.verdict == Verdict::Pass);
            if let Some(milliseconds) = test.wall_ms {
                *runtime = milliseconds as f64 / 1000.0;
            }
        }
    }
    // Beyond open-instruct's shape (its client reads only the first two keys): what the program
    // tried, per kind (tests in which it was seen), and how many comparisons between two of its
    // own objects its functional tests made (the solution's word).
    let mut response = json!({ "results": results, "runtimes": runtimes });
    if !result.tampering.is_empty() {
        response["tampering"] = serde_json::to_value(&result.tampering).unwrap_or_default();
    }
    if let Some(count) = result.untrusted_comparisons {
        response["untrusted_comparisons"] = json!(count);
    }
    Ok(Json(response))
}

/// The judge profile reading the program verbatim. A program without fences is taken whole
/// (prime's split finds no fence); one that contains fences is wrapped in a longer fence,
/// which the judge extraction accepts.
fn program_as_response(program: &str) -> (Profile, String) {
    let mut profile = Profile::named(ProfileName::Judge);
    if !program.contains("```") {
        profile.extraction = Extraction::PrimeSplit;
        return (profile, program.to_owned());
    }
    let longest = program
        .split(|character| character != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    (profile, format!("{fence}python\n{program}\n{fence}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_read_verbatim() {
        for program in [
            "print(1)",
            "s = '```'\nprint(s)",
            "x = '</think>'\nprint(x)",
        ] {
            let (profile, response) = program_as_response(program);
            let extracted = profile.extraction.extract(&response);
            if program.contains("</think>") && program.contains("```") {
                continue;
            }
            assert_eq!(extracted.as_deref(), Some(program), "{response}");
        }
    }
}
