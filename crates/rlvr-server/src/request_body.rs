//! Request bodies, read whole before a route sees them, in three layers (outermost first):
//!
//! 1. [`json_only`], on every route: a request with a body and a `Content-Type` other than
//!    JSON gets 415 before anything else.
//! 2. tower-http's `RequestBodyLimitLayer`, on the routes that take a body: 413 at once when a
//!    declared `Content-Length` is over `--max-body-bytes`, before a byte of the body is read,
//!    and a cap on a chunked body.
//! 3. [`read_within_deadline`], on the same routes: the whole body must arrive within
//!    `--body-timeout` (408). tower-http's `RequestBodyTimeoutLayer` times each frame instead,
//!    so a client trickling a byte at a time would hold its connection busy for ever.
//!
//! Every refusal is `{"error": reason}` with `Connection: close` (the body may be left unread):
//! [`json_only`] rewrites tower-http's plain-text 413.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;

use crate::error::ApiError;
use crate::state::AppState;

/// A refusal after which the connection closes (the body may be left unread).
fn refuse(status: StatusCode, reason: String) -> Response {
    let mut response = ApiError::new(status, reason).into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// `application/json` or a `+json` type, parameters (`; charset=utf-8`) allowed.
fn is_json(content_type: &str) -> bool {
    let media_type = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    media_type == "application/json"
        || (media_type.starts_with("application/") && media_type.ends_with("+json"))
}

fn content_type(headers: &header::HeaderMap) -> Option<&str> {
    headers
        .get(header::CONTENT_TYPE)
        .map(|value| value.to_str().unwrap_or("(not text)"))
}

/// 415 for a body that is not JSON; and tower-http's 413 for a declared length over the limit
/// (plain text) rewritten as ours.
pub(crate) async fn json_only(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let takes_body = !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS | Method::DELETE
    );
    let given = content_type(request.headers());
    if takes_body && !given.is_some_and(is_json) {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "request bodies are JSON: send Content-Type: application/json (got {})",
                given.map_or_else(|| "none".to_owned(), |value| format!("`{value}`"))
            ),
        );
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.trim().parse::<u64>().ok());
    let response = next.run(request).await;
    let refused_by_limit = response.status() == StatusCode::PAYLOAD_TOO_LARGE
        && !content_type(response.headers()).is_some_and(is_json);
    match declared {
        Some(length) if refused_by_limit => refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "request body of {length} bytes is larger than the server's limit of {} (--max-body-bytes)",
                state.config.max_body_bytes
            ),
        ),
        _ => response,
    }
}

/// Reads the body whole within `--body-timeout`; routes find it in memory, as they would have
/// read it anyway.
pub(crate) async fn read_within_deadline(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let timeout = state.config.body_timeout;
    let bytes = match tokio::time::timeout(timeout, body.collect()).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(error)) => {
            let too_large = std::iter::successors(
                Some(&error as &(dyn std::error::Error + 'static)),
                |error| error.source(),
            )
            .any(|error| error.is::<http_body_util::LengthLimitError>());
            return if too_large {
                refuse(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!(
                        "request body is larger than the server's limit of {} bytes (--max-body-bytes)",
                        state.config.max_body_bytes
                    ),
                )
            } else {
                refuse(
                    StatusCode::BAD_REQUEST,
                    format!("could not read the request body: {error}"),
                )
            };
        }
        Err(_) => {
            state.metrics.request_timeouts_body.inc();
            tracing::warn!(
                "408: a request body to {} did not arrive within {timeout:?} (--body-timeout)",
                parts.uri.path()
            );
            return refuse(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request body did not arrive within {} s (--body-timeout)",
                    timeout.as_secs_f64()
                ),
            );
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

#[cfg(test)]
mod tests {
    use super::is_json;

    #[test]
    fn json_media_types() {
        assert!(is_json("application/json"));
        assert!(is_json("application/json; charset=utf-8"));
        assert!(is_json("Application/JSON"));
        assert!(is_json("application/vnd.api+json"));
        assert!(!is_json("text/plain"));
        assert!(!is_json("application/x-www-form-urlencoded"));
        assert!(!is_json("multipart/form-data; boundary=x"));
        assert!(!is_json(""));
    }
}
