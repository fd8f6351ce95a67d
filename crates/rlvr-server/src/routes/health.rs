//! `GET /health` (open-instruct), `GET /v1/ping` (SandboxFusion), `GET /metrics`
//! (Prometheus text) and the JSON 404s of the main port and of the metrics-only port.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;

use crate::error::ApiError;
use crate::metrics::QueueFigures;
use crate::state::AppState;

/// `{"status": "healthy"}`, as open-instruct's code API answers.
pub(crate) async fn health() -> Json<serde_json::Value> {
    Json(serde_json::json!({ "status": "healthy" }))
}

/// `"pong"`, as SandboxFusion answers.
pub(crate) async fn ping() -> Json<&'static str> {
    Json("pong")
}

pub(crate) async fn metrics(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    let text = state.metrics.render(
        state.engine.statistics(),
        QueueFigures {
            admitted: state.admission.admitted(),
            capacity: state.admission.capacity(),
            workers: state.config.workers.max(1),
        },
    );
    ([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], text)
}

pub(crate) async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "no such route (see docs/serve.md: /v1/verify, /run_code, /v1/ping, /test_program, \
         /test_program_stdio, /health, /get_reward, /metrics)",
    )
}

/// Every other path on the metrics-only port (`--metrics-listen`): verification is not served
/// there.
pub(crate) async fn metrics_port_not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "this is the metrics-only port (--metrics-listen): it serves /metrics and /health; \
         verification routes are on the main address",
    )
}
