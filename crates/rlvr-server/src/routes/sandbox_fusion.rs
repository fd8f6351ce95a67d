//! SandboxFusion-compatible `POST /run_code`: one Python program, one run, the exact status
//! strings verl reads (`Success` / `Failed` / `SandboxError`, and per command `Finished` /
//! `Error` / `TimeLimitExceeded`). A `null` field takes its default, as an absent one does.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use base64::Engine as _;
use rlvr_sandbox::{Limits, RunOutcome, RunRequest, Stdin, Verdict, WorkFile};
use serde_json::{Value, json};

use super::{json_body, null_as_default, time_limit};
use crate::error::ApiError;
use crate::state::AppState;

/// Languages this route runs; SandboxFusion's others get a `SandboxError` that says so.
const LANGUAGES: [&str; 2] = ["python", "python3"];

/// SandboxFusion's default `run_timeout`.
const DEFAULT_RUN_TIMEOUT_SECONDS: f64 = 10.0;

/// SandboxFusion's `RunCodeRequest`.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct RunCodeRequest {
    code: String,
    #[serde(default)]
    stdin: Option<String>,
    language: String,
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "accepted for compatibility; python has no compile step"
    )]
    compile_timeout: Option<f64>,
    /// Seconds (default 10).
    #[serde(default)]
    run_timeout: Option<f64>,
    /// Megabytes; -1, 0 or absent: the sandbox's default.
    #[serde(rename = "memory_limit_MB", default)]
    memory_limit_megabytes: Option<i64>,
    /// File name to base64 contents, placed in the work directory (`null` contents: skipped).
    #[serde(default, deserialize_with = "null_as_default")]
    files: BTreeMap<String, Option<String>>,
    /// Not supported: answered with an empty `files` map.
    #[serde(default, deserialize_with = "null_as_default")]
    #[expect(
        dead_code,
        reason = "accepted for compatibility; no file is fetched back"
    )]
    fetch_files: Vec<String>,
}

pub(crate) async fn run_code(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let request: RunCodeRequest = json_body(body)?;
    if !LANGUAGES.contains(&request.language.as_str()) {
        return Ok(Json(sandbox_error(format!(
            "language {:?} is not supported by rlvr serve (python only)",
            request.language
        ))));
    }
    let run = build_request(&request)?;
    let _reservation = super::admit(&state, 1)?;
    let Ok(_permit) = Arc::clone(&state.slots).acquire_owned().await else {
        return Ok(Json(sandbox_error(
            "the server is shutting down".to_owned(),
        )));
    };
    let sandbox = state.sandbox.clone();
    let outcome = tokio::task::spawn_blocking(move || sandbox.run(&run)).await;
    let response = match outcome {
        Ok(Ok(outcome)) => finished(&outcome),
        Ok(Err(error)) => {
            state.metrics.sandbox_errors.fetch_add(1, Ordering::Relaxed);
            sandbox_error(error.to_string())
        }
        Err(error) => {
            state.metrics.sandbox_errors.fetch_add(1, Ordering::Relaxed);
            sandbox_error(format!("the run did not complete: {error}"))
        }
    };
    Ok(Json(response))
}

fn build_request(request: &RunCodeRequest) -> Result<RunRequest, ApiError> {
    let wall = time_limit(
        "run_timeout",
        Some(request.run_timeout.unwrap_or(DEFAULT_RUN_TIMEOUT_SECONDS)),
    )?
    .unwrap_or(Duration::from_secs(10));
    let mut limits = Limits {
        wall,
        cpu: wall,
        ..Limits::default()
    };
    if let Some(megabytes) = request.memory_limit_megabytes
        && megabytes > 0
    {
        let megabytes = u64::try_from(megabytes).unwrap_or(u64::MAX);
        limits.memory_bytes = megabytes.min(64 << 10) << 20;
    }
    let mut files = Vec::with_capacity(request.files.len());
    for (name, contents) in &request.files {
        let Some(contents) = contents else {
            continue;
        };
        if name.is_empty() || name.contains('/') || name == "main.py" || name.starts_with('.') {
            return Err(ApiError::bad_request(format!(
                "file {name:?}: only plain file names (no directories) are supported"
            )));
        }
        let contents = base64::engine::general_purpose::STANDARD
            .decode(contents)
            .map_err(|error| {
                ApiError::bad_request(format!("file {name:?}: not base64: {error}"))
            })?;
        files.push(WorkFile {
            name: name.clone(),
            contents,
        });
    }
    let mut run = RunRequest::python(request.code.clone());
    run.stdin = match &request.stdin {
        Some(text) if !text.is_empty() => Stdin::Bytes(text.clone().into_bytes()),
        _ => Stdin::Empty,
    };
    run.limits = limits;
    run.files = files;
    Ok(run)
}

/// SandboxFusion's rule: a timeout or a non-zero return code is `Failed`, else `Success`.
fn finished(outcome: &RunOutcome) -> Value {
    let timed_out = outcome.verdict == Verdict::Timeout;
    // subprocess convention: a signal shows as its negated number.
    let return_code = outcome.exit_code.or(outcome.signal.map(|signal| -signal));
    let succeeded = !timed_out && outcome.verdict == Verdict::Ok && return_code == Some(0);
    let message = match outcome.verdict {
        Verdict::MemoryLimit => "memory limit exceeded",
        Verdict::OutputLimit => "output limit exceeded",
        _ => "",
    };
    json!({
        "status": if succeeded { "Success" } else { "Failed" },
        "message": message,
        "compile_result": null,
        "run_result": {
            "status": if timed_out { "TimeLimitExceeded" } else { "Finished" },
            "execution_time": outcome.wall.as_secs_f64(),
            "return_code": if timed_out { Value::Null } else { json!(return_code) },
            "stdout": String::from_utf8_lossy(&outcome.stdout),
            "stderr": String::from_utf8_lossy(&outcome.stderr),
        },
        "executor_pod_name": null,
        "files": {},
    })
}

fn sandbox_error(message: String) -> Value {
    json!({
        "status": "SandboxError",
        "message": message,
        "compile_result": null,
        "run_result": null,
        "executor_pod_name": null,
        "files": {},
    })
}
