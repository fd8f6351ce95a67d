//! `POST /v1/verify`: a batch of `rlvr verify` jobs with a profile and limits. The answer is
//! `{"results": [...]}` in job order, or with `?stream=1` NDJSON result lines as jobs finish.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use rlvr_engine::{Job, JobTests, parse_job_value, result_line};
use rlvr_verify::{JobResult, PlanOptions, Profile, ProfileName};
use serde_json::Value;
use tokio::sync::mpsc;

use super::{
    admit, check_size, deadline, json_body, memory_limit, null_as_default, resolve_profile,
    time_limit,
};
use crate::batch::{Finished, deadline_line, feed, run_to_completion};
use crate::error::ApiError;
use crate::state::AppState;

/// The request body.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct VerifyRequest {
    /// `{"id", "response", "ground_truth"}` objects, as `rlvr verify` job lines.
    jobs: Vec<Value>,
    /// judge (default), klear, code-r1, rllm, prime.
    profile: Option<String>,
    /// `rate` (default) or `binary` (judge only).
    reward: Option<String>,
    /// Seconds per test, replacing the profile's limit.
    time_limit: Option<f64>,
    /// Memory per test in MB, replacing the profile's limit.
    memory_limit: Option<u64>,
    /// At most this many tests per job (at least 1), chosen deterministically.
    max_tests: Option<usize>,
    /// Run every test (no sampling).
    #[serde(default, deserialize_with = "null_as_default")]
    all_tests: bool,
    /// Seed for test sampling.
    #[serde(default, deserialize_with = "null_as_default")]
    seed: u64,
    /// Per-test verdicts and times in each result.
    #[serde(default, deserialize_with = "null_as_default")]
    details: bool,
    /// Seconds the whole request may take (capped by the server's deadline).
    deadline: Option<f64>,
}

#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct VerifyQuery {
    stream: Option<String>,
}

/// A request turned into engine jobs plus the lines already decided (invalid jobs).
struct Prepared {
    ids: Vec<Value>,
    jobs: Vec<(usize, Job)>,
    decided: Vec<(usize, Value)>,
    profile: ProfileName,
    details: bool,
}

pub(crate) async fn verify(
    State(state): State<Arc<AppState>>,
    Query(query): Query<VerifyQuery>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let request: VerifyRequest = json_body(body)?;
    let streaming = matches!(query.stream.as_deref(), Some("1" | "true" | "yes"));
    let deadline = deadline(&state, request.deadline)?;
    let prepared = prepare(&state, request)?;
    let reservation = admit(&state, prepared.jobs.len())?;
    let deadline_at = tokio::time::Instant::now() + deadline;
    if streaming {
        return Ok(stream(state, prepared, reservation, deadline_at));
    }
    let total = prepared.ids.len();
    let mut finished =
        run_to_completion(Arc::clone(&state), prepared.jobs, total, deadline_at).await;
    drop(reservation);
    let mut lines: Vec<Option<Value>> = vec![None; total];
    for (position, line) in prepared.decided {
        lines[position] = Some(line);
    }
    let results: Vec<Value> = lines
        .into_iter()
        .zip(prepared.ids)
        .enumerate()
        .map(|(position, (line, id))| match line {
            Some(line) => line,
            None => match finished[position].take() {
                Some(result) => result_line(id, result, prepared.details),
                None => deadline_line(id, prepared.profile),
            },
        })
        .collect();
    Ok(Json(serde_json::json!({ "results": results })).into_response())
}

fn prepare(state: &AppState, request: VerifyRequest) -> Result<Prepared, ApiError> {
    // Checked before parsing any job, so an oversized batch costs nothing.
    check_size(state, request.jobs.len())?;
    let profile: Profile =
        resolve_profile(state, request.profile.as_deref(), request.reward.as_deref())?;
    let profile_name = profile.name;
    let profile = Arc::new(profile);
    if request.max_tests == Some(0) {
        return Err(ApiError::bad_request(
            "max_tests must be at least 1, found 0",
        ));
    }
    let options = PlanOptions {
        seed: request.seed,
        job_identity: Vec::new(),
        max_tests: request.max_tests,
        all_tests: request.all_tests,
        time_limit: time_limit("time_limit", request.time_limit)?,
        memory_limit_bytes: memory_limit("memory_limit", request.memory_limit)?,
        languages: Default::default(),
    };
    let mut prepared = Prepared {
        ids: Vec::with_capacity(request.jobs.len()),
        jobs: Vec::with_capacity(request.jobs.len()),
        decided: Vec::new(),
        profile: profile_name,
        details: request.details,
    };
    for (position, value) in request.jobs.into_iter().enumerate() {
        let invalid = |id: &Value, reason: String| {
            let result = JobResult::invalid_job(profile_name, format!("job {position}: {reason}"));
            result_line(id.clone(), result, false)
        };
        match parse_job_value(value) {
            Ok(parsed) => match parsed.tests {
                JobTests::Inline(suite) => {
                    let mut options = options.clone();
                    options.job_identity = if parsed.id.is_null() {
                        position.to_string().into_bytes()
                    } else {
                        parsed.id.to_string().into_bytes()
                    };
                    options.languages = parsed.languages;
                    prepared.jobs.push((
                        position,
                        Job {
                            profile: Arc::clone(&profile),
                            response: parsed.response,
                            suite,
                            options,
                        },
                    ));
                    prepared.ids.push(parsed.id);
                }
                JobTests::DatasetRow(_) => {
                    let line = invalid(
                        &parsed.id,
                        "`index` needs a dataset; rlvr serve takes inline `ground_truth` only"
                            .to_owned(),
                    );
                    prepared.decided.push((position, line));
                    prepared.ids.push(parsed.id);
                }
            },
            Err(error) => {
                prepared
                    .decided
                    .push((position, invalid(&error.id, error.reason)));
                prepared.ids.push(error.id);
            }
        }
    }
    Ok(prepared)
}

/// NDJSON: decided lines first, then each result as its job finishes; jobs still running at
/// the deadline get a `deadline_exceeded` line. A client that goes away drops the receiver,
/// which stops the feeder: its unstarted jobs never run.
fn stream(
    state: Arc<AppState>,
    prepared: Prepared,
    reservation: crate::admission::Reservation,
    deadline_at: tokio::time::Instant,
) -> Response {
    let (line_sender, line_receiver) = mpsc::channel::<Bytes>(64);
    let metrics = Arc::clone(&state.metrics);
    tokio::spawn(async move {
        let _reservation = reservation;
        let Prepared {
            ids,
            jobs,
            decided,
            profile,
            details,
        } = prepared;
        let mut done = vec![false; ids.len()];
        let expected = jobs.len();
        let deadline_passed = {
            let work = async {
                for (position, line) in decided {
                    done[position] = true;
                    if line_sender.send(to_line(&line)).await.is_err() {
                        return;
                    }
                }
                let (sender, mut receiver) = mpsc::unbounded_channel::<Finished>();
                let collect = async {
                    let mut received = 0;
                    while received < expected {
                        let Some((position, result)) = receiver.recv().await else {
                            return;
                        };
                        received += 1;
                        done[position] = true;
                        let line = result_line(ids[position].clone(), result, details);
                        if line_sender.send(to_line(&line)).await.is_err() {
                            return;
                        }
                    }
                };
                tokio::join!(feed(Arc::clone(&state), jobs, sender), collect);
            };
            tokio::select! {
                () = line_sender.closed() => false,
                outcome = tokio::time::timeout_at(deadline_at, work) => outcome.is_err(),
            }
        };
        if deadline_passed {
            for (position, finished) in done.iter().enumerate() {
                if !finished {
                    metrics.jobs_deadline_exceeded.inc();
                    let line = deadline_line(ids[position].clone(), profile);
                    if line_sender.send(to_line(&line)).await.is_err() {
                        break;
                    }
                }
            }
        }
    });
    let body = futures_util::stream::unfold(line_receiver, |mut receiver| async move {
        receiver
            .recv()
            .await
            .map(|line| (Ok::<Bytes, Infallible>(line), receiver))
    });
    (
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(body),
    )
        .into_response()
}

fn to_line(value: &Value) -> Bytes {
    let mut text = value.to_string();
    text.push('\n');
    Bytes::from(text)
}
