//! The router and what every route shares: JSON bodies with reasons on failure, profile
//! resolution, admission, deadlines.
//!
//! Bodies are read as Python's `json` writes them (lone surrogate escapes, `NaN`: see
//! `rlvr_python_compat::loads`), so one odd character in a prompt no longer rejects a whole
//! batch; a field of the wrong type is a 400 naming the field's path. In every request, a key
//! whose value is `null` is the same as an absent key (pyarrow and pandas write absent keys
//! as `null`).

mod health;
mod open_instruct;
mod open_instruct_decode;
mod openrlhf;
mod sandbox_fusion;
mod verify;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::routing::{get, post};
use rlvr_engine::Job;
use rlvr_verify::{
    JobResult, JsonTextError, Profile, ProfileName, from_python_json, memory_limit_from_megabytes,
    time_limit_from_seconds,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::admission::Reservation;
use crate::batch::run_to_completion;
use crate::error::ApiError;
use crate::request_body::{self, BodyLimits};
use crate::state::AppState;

/// Every route, behind the guard middleware and the JSON check; the routes that take a body
/// read it whole, within its size and time limits, before they run (`request_body.rs`).
pub(crate) fn router(state: Arc<AppState>) -> Router {
    let limits = BodyLimits {
        max_bytes: state.config.max_body_bytes,
        timeout: state.config.body_timeout,
        metrics: Arc::clone(&state.metrics),
    };
    let taking_bodies = Router::new()
        .route("/v1/verify", post(verify::verify))
        .route("/run_code", post(sandbox_fusion::run_code))
        .route("/test_program", post(open_instruct::test_program))
        .route(
            "/test_program_stdio",
            post(open_instruct::test_program_stdio),
        )
        .route("/get_reward", post(openrlhf::get_reward));
    Router::new()
        .route("/v1/ping", get(health::ping))
        .route("/health", get(health::health))
        .route("/metrics", get(health::metrics))
        .merge(request_body::read_bodies(taking_bodies, &limits))
        .fallback(health::not_found)
        .layer(axum::middleware::from_fn_with_state(
            limits.clone(),
            request_body::json_only,
        ))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            crate::auth::guard,
        ))
        .layer(DefaultBodyLimit::max(limits.max_bytes))
        .with_state(state)
}

/// The metrics-only port (`--metrics-listen`): `/metrics` and `/health` without the token,
/// nothing else (every other path is a 404 naming the port). Its requests are not counted in
/// `rlvr_requests_total`, so scrapes do not show as trainer traffic.
pub(crate) fn metrics_router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/metrics", get(health::metrics))
        .route("/health", get(health::health))
        .fallback(health::metrics_port_not_found)
        .layer(DefaultBodyLimit::max(0))
        .with_state(state)
}

/// Decodes a JSON body; 413 past the body limit, 400 with the reason (and the field's path)
/// otherwise.
pub(crate) fn json_body<T: DeserializeOwned>(
    body: Result<Bytes, BytesRejection>,
) -> Result<T, ApiError> {
    let body = body.map_err(|rejection| {
        let status = rejection.status();
        let reason = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "request body is larger than the server's limit (--max-body-bytes)".to_owned()
        } else {
            rejection.body_text()
        };
        ApiError::new(status, reason)
    })?;
    from_python_json(&body).map_err(|error| match error {
        JsonTextError::Syntax(error) => ApiError::bad_request(format!("malformed JSON: {error}")),
        data @ JsonTextError::Data { .. } => {
            ApiError::bad_request(format!("invalid request: {data}"))
        }
    })
}

/// `#[serde(default, deserialize_with = "null_as_default")]`: a `null` value is the default,
/// as an absent key is.
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// The named profile (or the server's default) with its reward mode.
pub(crate) fn resolve_profile(
    state: &AppState,
    name: Option<&str>,
    reward: Option<&str>,
) -> Result<Profile, ApiError> {
    let name = match name {
        Some(name) => name
            .parse::<ProfileName>()
            .map_err(|error| ApiError::bad_request(error.to_string()))?,
        None => state.config.default_profile,
    };
    if name == ProfileName::Klear && !state.scientific_modules {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the klear profile imports numpy and pandas in every functional test, but the \
             sandbox interpreter cannot; install them or pick another profile",
        ));
    }
    let profile = Profile::named(name);
    match reward {
        None | Some("rate") => Ok(profile),
        Some("binary") => profile
            .with_binary_reward()
            .map_err(|error| ApiError::bad_request(error.to_string())),
        Some(other) => Err(ApiError::bad_request(format!(
            "unknown reward {other:?} (expected rate or binary)"
        ))),
    }
}

/// The request's deadline: the asked one, never past the server's.
pub(crate) fn deadline(state: &AppState, asked_seconds: Option<f64>) -> Result<Duration, ApiError> {
    let limit = state.config.request_deadline;
    match asked_seconds {
        None => Ok(limit),
        Some(seconds) if seconds.is_finite() && seconds > 0.0 => {
            Ok(Duration::from_secs_f64(seconds.min(limit.as_secs_f64())))
        }
        Some(seconds) => Err(ApiError::bad_request(format!(
            "deadline must be a positive number of seconds, found {seconds}"
        ))),
    }
}

/// A per-test time limit given in seconds: positive, finite, at most an hour.
pub(crate) fn time_limit(name: &str, seconds: Option<f64>) -> Result<Option<Duration>, ApiError> {
    seconds
        .map(|seconds| time_limit_from_seconds(name, seconds))
        .transpose()
        .map_err(|error| ApiError::bad_request(error.to_string()))
}

/// A memory limit given in megabytes, in bytes: at least 1, at most 1 TiB.
pub(crate) fn memory_limit(name: &str, megabytes: Option<u64>) -> Result<Option<u64>, ApiError> {
    megabytes
        .map(|megabytes| memory_limit_from_megabytes(name, megabytes))
        .transpose()
        .map_err(|error| ApiError::bad_request(error.to_string()))
}

/// 413 when one request alone holds more jobs than `--max-jobs-per-request`.
pub(crate) fn check_size(state: &AppState, jobs: usize) -> Result<(), ApiError> {
    if jobs > state.config.max_jobs_per_request {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "{jobs} jobs in one request; the limit is {} (--max-jobs-per-request)",
                state.config.max_jobs_per_request
            ),
        ));
    }
    Ok(())
}

/// Admits `jobs` jobs or refuses with 429 (413 when one request alone is over the limit).
pub(crate) fn admit(state: &AppState, jobs: usize) -> Result<Reservation, ApiError> {
    check_size(state, jobs)?;
    state.admission.try_reserve(jobs).ok_or_else(|| {
        state.metrics.queue_full.inc();
        ApiError::queue_full(state.config.retry_after_seconds)
    })
}

/// Runs one job to its result (the compat routes score one program per request).
pub(crate) async fn run_one(
    state: &Arc<AppState>,
    job: Job,
    deadline: Duration,
) -> Result<JobResult, ApiError> {
    let _reservation = admit(state, 1)?;
    let deadline_at = tokio::time::Instant::now() + deadline;
    let mut results = run_to_completion(Arc::clone(state), vec![(0, job)], 1, deadline_at).await;
    results.pop().flatten().ok_or_else(|| {
        ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "the request deadline passed before the program finished",
        )
    })
}
