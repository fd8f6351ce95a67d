//! Middleware that reads every request body before a route sees it: a wrong `Content-Type`
//! gets 415 and a declared `Content-Length` over `--max-body-bytes` gets 413 at once, both
//! before a byte of the body is read; the body must then arrive within `--body-timeout` (408)
//! and stay under the limit when it is chunked (413). Routes find it complete in memory, as they
//! would have read it anyway.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

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

pub(crate) async fn read_body(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    if matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS | Method::DELETE
    ) {
        return next.run(request).await;
    }
    let headers = request.headers();
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .map(|value| value.to_str().unwrap_or("(not text)"));
    if !content_type.is_some_and(is_json) {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "request bodies are JSON: send Content-Type: application/json (got {})",
                content_type.map_or_else(|| "none".to_owned(), |value| format!("`{value}`"))
            ),
        );
    }
    let limit = state.config.max_body_bytes;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    if let Some(length) = declared
        && length > limit as u64
    {
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "request body of {length} bytes is larger than the server's limit of {limit} (--max-body-bytes)"
            ),
        );
    }
    let (parts, body) = request.into_parts();
    let timeout = state.config.body_timeout;
    let bytes = match tokio::time::timeout(timeout, axum::body::to_bytes(body, limit)).await {
        Ok(Ok(bytes)) => bytes,
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
                        "request body is larger than the server's limit of {limit} bytes (--max-body-bytes)"
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
