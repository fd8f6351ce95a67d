//! `POST /v1/verify`: a batch of `rlvr verify` jobs with a profile and limits. The answer is
//! `{"results": [...]}` in job order, or with `?stream=1` NDJSON result lines as jobs finish.
//! With `rlvr serve --dataset FILE`, a job may name a row (`"index"`, zero-based, or `"hash"`,
//! its `metadata.hash`) instead of carrying its `ground_truth`.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use rlvr_dataset::HashLookup;
use rlvr_engine::{Job, JobTests, parse_job_value, result_line};
use rlvr_verify::{JobResult, PlanOptions, Profile, ProfileName, TestSuite};
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
        let parsed = by_hash(state, value)
            .and_then(|value| parse_job_value(value).map_err(|error| (error.id, error.reason)));
        match parsed.and_then(|parsed| tests_of(state, parsed)) {
            Ok(ReadyJob {
                id,
                response,
                languages,
                suite,
            }) => {
                let mut options = options.clone();
                options.job_identity = if id.is_null() {
                    position.to_string().into_bytes()
                } else {
                    id.to_string().into_bytes()
                };
                options.languages = languages;
                prepared.jobs.push((
                    position,
                    Job {
                        profile: Arc::clone(&profile),
                        response,
                        suite,
                        options,
                    },
                ));
                prepared.ids.push(id);
            }
            Err((id, reason)) => {
                prepared.decided.push((position, invalid(&id, reason)));
                prepared.ids.push(id);
            }
        }
    }
    Ok(prepared)
}

/// What a job that names a dataset row needs and lacks.
const NO_DATASET: &str = "needs a dataset: start rlvr serve with --dataset FILE, or send the \
     job's `ground_truth`";

/// A job naming its row by `"hash"` turned into one naming it by `"index"`; other jobs as
/// they are. Errors keep the job's id.
fn by_hash(state: &AppState, mut value: Value) -> Result<Value, (Value, String)> {
    let Some(object) = value.as_object_mut() else {
        return Ok(value);
    };
    let Some(hash) = object.remove("hash").filter(|hash| !hash.is_null()) else {
        return Ok(value);
    };
    let id = object.get("id").cloned().unwrap_or(Value::Null);
    let present = |key: &str| object.get(key).is_some_and(|value| !value.is_null());
    if present("ground_truth") || present("index") {
        return Err((
            id,
            "give one of `ground_truth`, `index` or `hash`, not several".to_owned(),
        ));
    }
    let Value::String(hash) = hash else {
        return Err((
            id,
            format!(
                "`hash` must be a string, found {}",
                rlvr_verify::json_kind(&hash)
            ),
        ));
    };
    let Some(dataset) = &state.config.dataset else {
        return Err((id, format!("`hash` {NO_DATASET}")));
    };
    match dataset.row_of_hash(&hash) {
        HashLookup::Row(row) => {
            object.insert("index".to_owned(), Value::from(row));
            Ok(value)
        }
        HashLookup::Unknown => Err((
            id,
            format!(
                "`hash` {hash:?} is not the `metadata.hash` of any row of {} ({} rows)",
                dataset.path().display(),
                dataset.len()
            ),
        )),
        HashLookup::Ambiguous(rows) => Err((
            id,
            format!(
                "`hash` {hash:?} is the `metadata.hash` of several rows of {} ({rows:?}): name one by `index`",
                dataset.path().display()
            ),
        )),
    }
}

/// A parsed job with its tests: inline, or read from the dataset's row.
fn tests_of(state: &AppState, parsed: rlvr_engine::JobLine) -> Result<ReadyJob, (Value, String)> {
    let rlvr_engine::JobLine {
        id,
        response,
        tests,
        languages,
    } = parsed;
    let suite = match tests {
        JobTests::Inline(suite) => suite,
        JobTests::DatasetRow(row) => {
            let Some(dataset) = &state.config.dataset else {
                return Err((id, format!("`index` {NO_DATASET}")));
            };
            match rlvr_verify::row_tests(dataset, row) {
                Ok((suite, _phrases)) => suite,
                Err(error) => return Err((id, format!("{error:#}"))),
            }
        }
    };
    Ok(ReadyJob {
        id,
        response,
        languages,
        suite,
    })
}

/// The tests of a label that only names a dataset row (`{"index": N}` or `{"hash": "..."}`,
/// as `/get_reward` may receive it), or None when the label is anything else.
pub(super) fn named_row_tests(
    state: &AppState,
    label: &Value,
) -> Option<Result<TestSuite, String>> {
    let object = label.as_object()?;
    let mut present = object.iter().filter(|(_, value)| !value.is_null());
    let (key, _) = present.next()?;
    if present.next().is_some() || !matches!(key.as_str(), "index" | "hash") {
        return None;
    }
    let mut job = object.clone();
    job.insert("response".to_owned(), Value::String(String::new()));
    let ready = by_hash(state, Value::Object(job))
        .and_then(|value| parse_job_value(value).map_err(|error| (error.id, error.reason)))
        .and_then(|parsed| tests_of(state, parsed));
    Some(ready.map(|ready| ready.suite).map_err(|(_, reason)| reason))
}

/// A job whose tests are known, inline or from its dataset row.
struct ReadyJob {
    id: Value,
    response: String,
    languages: rlvr_verify::LanguageRequest,
    suite: TestSuite,
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
