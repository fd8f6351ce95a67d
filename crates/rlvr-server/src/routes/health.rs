//! `GET /health` (open-instruct), `GET /v1/ping` (SandboxFusion), `GET /metrics`
//! (Prometheus text) and the JSON 404.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;

use crate::error::ApiError;
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
        state.admission.admitted(),
        state.admission.capacity(),
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
