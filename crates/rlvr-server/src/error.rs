//! Errors: [`ServerError`] for starting and running the server, [`ApiError`] for a request
//! that is refused (always a JSON body `{"error": reason}` with the right status).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The address could not be bound.
    #[error("cannot listen on {address}")]
    Bind {
        address: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// The async runtime or a signal handler could not be set up, or serving failed.
    #[error("{context}")]
    Io {
        context: &'static str,
        #[source]
        source: std::io::Error,
    },
}

/// A whole HTTP/1.1 answer written straight to a socket where no HTTP stack runs (a
/// connection refused at accept, a request that did not arrive in time): the status, `headers`,
/// `Connection: close`, and `{"error": reason}` with its length counted here.
pub(crate) fn raw_error_response(
    status: StatusCode,
    headers: &[(&str, &str)],
    reason: &str,
) -> Vec<u8> {
    let body = serde_json::json!({ "error": reason }).to_string();
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Connection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    ));
    let mut response = head.into_bytes();
    response.extend_from_slice(body.as_bytes());
    response
}

/// Test helper: `response` is whole HTTP with a JSON body whose length its head declares.
#[cfg(test)]
pub(crate) fn assert_well_formed(response: &[u8]) {
    let text = std::str::from_utf8(response).expect("ascii");
    let (head, body) = text.split_once("\r\n\r\n").expect("head and body");
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("Content-Length: "))
        .and_then(|value| value.parse().ok())
        .expect("a length");
    assert_eq!(body.len(), length);
    assert!(serde_json::from_str::<serde_json::Value>(body).is_ok());
}

/// A refused request.
#[derive(Debug, Clone)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) reason: String,
    pub(crate) retry_after_seconds: Option<u64>,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, reason: impl Into<String>) -> Self {
        Self {
            status,
            reason: reason.into(),
            retry_after_seconds: None,
        }
    }

    pub(crate) fn bad_request(reason: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, reason)
    }

    pub(crate) fn queue_full(retry_after_seconds: u64) -> Self {
        Self {
            status: StatusCode::TOO_MANY_REQUESTS,
            reason: "the verify queue is full; retry later".to_owned(),
            retry_after_seconds: Some(retry_after_seconds),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.reason });
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(seconds) = self.retry_after_seconds {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}
