//! Middleware run before every route: refuse new work once shutting down (503), check the
//! optional bearer token (401), and count every request with its latency for `/metrics`.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::AppState;
use subtle::ConstantTimeEq;

/// Routes open without a token: probes and pings do no work.
const OPEN_ROUTES: [&str; 2] = ["/health", "/v1/ping"];

/// Keeps the in-flight gauge right and records a request the client abandoned (the future is
/// dropped on disconnect) as status 499, nginx's "client closed request".
struct InFlight {
    state: Arc<AppState>,
    route: String,
    started: Instant,
    status: Option<u16>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let metrics = &self.state.metrics;
        metrics.in_flight.dec();
        metrics.record_request(
            &self.route,
            self.status.unwrap_or(CLIENT_CLOSED_REQUEST),
            self.started.elapsed(),
        );
    }
}

const CLIENT_CLOSED_REQUEST: u16 = 499;

pub(crate) async fn guard(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    state.metrics.in_flight.inc();
    let mut in_flight = InFlight {
        state: Arc::clone(&state),
        route,
        started: Instant::now(),
        status: None,
    };
    let response = if state.shutting_down.load(Ordering::Relaxed) {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down",
        )
        .into_response()
    } else if !OPEN_ROUTES.contains(&in_flight.route.as_str()) && !authorized(&state, &request) {
        let mut response = ApiError::new(
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token (Authorization: Bearer <token>)",
        )
        .into_response();
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        response
    } else {
        next.run(request).await
    };
    in_flight.status = Some(response.status().as_u16());
    response
}

fn authorized(state: &AppState, request: &Request) -> bool {
    let Some(token) = &state.config.token else {
        return true;
    };
    let Some(given) = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
    else {
        return false;
    };
    constant_time_equal(given.trim().as_bytes(), token.as_bytes())
}

/// Compares in time that does not depend on where the bytes differ (`subtle`), so response
/// timing does not reveal the token's prefix; only the length may show.
fn constant_time_equal(left: &[u8], right: &[u8]) -> bool {
    left.ct_eq(right).into()
}

#[cfg(test)]
mod tests {
    use super::constant_time_equal;

    #[test]
    fn equal_only_when_identical() {
        assert!(constant_time_equal(b"secret", b"secret"));
        assert!(!constant_time_equal(b"secret", b"secreT"));
        assert!(!constant_time_equal(b"secret", b"secret2"));
    }
}
