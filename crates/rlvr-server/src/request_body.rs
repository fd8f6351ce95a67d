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
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use tower::ServiceBuilder;
use tower_http::body::Limited;
use tower_http::limit::RequestBodyLimitLayer;

use crate::error::ApiError;
use crate::metrics::Metrics;

/// What the body layers need: `--max-body-bytes`, `--body-timeout`, and the metrics to count
/// late bodies in.
#[derive(Debug, Clone)]
pub(crate) struct BodyLimits {
    pub(crate) max_bytes: usize,
    pub(crate) timeout: Duration,
    pub(crate) metrics: Arc<Metrics>,
}

/// Layers 2 and 3 over `routes`, the routes that take a body; layer 1 ([`json_only`]) goes over
/// every route.
pub(crate) fn read_bodies<S>(routes: Router<S>, limits: &BodyLimits) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    routes.route_layer(
        ServiceBuilder::new()
            .layer(RequestBodyLimitLayer::new(limits.max_bytes))
            .map_request(|request: Request<Limited<Body>>| request.map(Body::new))
            .layer(axum::middleware::from_fn_with_state(
                limits.clone(),
                read_within_deadline,
            )),
    )
}

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
    State(limits): State<BodyLimits>,
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
                limits.max_bytes
            ),
        ),
        _ => response,
    }
}

/// Reads the body whole within `--body-timeout`; routes find it in memory, as they would have
/// read it anyway.
async fn read_within_deadline(
    State(limits): State<BodyLimits>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let timeout = limits.timeout;
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
                        limits.max_bytes
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
            limits.metrics.request_timeouts_body.inc();
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
    use axum::body::Bytes;
    use axum::http::HeaderMap;
    use axum::routing::post;
    use futures_util::stream;
    use tower::ServiceExt;

    use super::*;

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

    fn limits() -> BodyLimits {
        BodyLimits {
            max_bytes: 1000,
            timeout: Duration::from_secs(1),
            metrics: Arc::new(Metrics::default()),
        }
    }

    /// A route that answers the length of the body it was given, behind the three layers.
    async fn send(
        limits: &BodyLimits,
        content_type: &str,
        declared_length: Option<usize>,
        body: Body,
    ) -> (StatusCode, HeaderMap, String) {
        let routes = Router::new().route(
            "/",
            post(|body: Bytes| async move { body.len().to_string() }),
        );
        let app = read_bodies(routes, limits).layer(axum::middleware::from_fn_with_state(
            limits.clone(),
            json_only,
        ));
        let mut request = Request::post("/").header(header::CONTENT_TYPE, content_type);
        if let Some(length) = declared_length {
            request = request.header(header::CONTENT_LENGTH, length);
        }
        let response = app
            .oneshot(request.body(body).expect("a request"))
            .await
            .expect("infallible");
        let (parts, body) = response.into_parts();
        let text = body.collect().await.expect("the response body").to_bytes();
        (
            parts.status,
            parts.headers,
            String::from_utf8_lossy(&text).into_owned(),
        )
    }

    /// A body of `bytes` bytes sent one at a time, `interval` apart.
    fn trickle(bytes: usize, interval: Duration) -> Body {
        Body::from_stream(stream::unfold(0, move |sent| async move {
            if sent == bytes {
                return None;
            }
            tokio::time::sleep(interval).await;
            Some((Ok::<_, std::io::Error>(Bytes::from_static(b" ")), sent + 1))
        }))
    }

    /// Why the deadline is ours and not tower-http's body timeout, which restarts at every
    /// frame: each byte comes well within the timeout, the whole body does not.
    #[tokio::test(start_paused = true)]
    async fn a_trickled_body_gets_408_when_the_whole_body_is_late() {
        let limits = limits();
        let started = tokio::time::Instant::now();
        let (status, headers, body) = send(
            &limits,
            "application/json",
            None,
            trickle(10, Duration::from_millis(300)),
        )
        .await;
        assert_eq!(status, StatusCode::REQUEST_TIMEOUT, "{body}");
        assert!(body.contains("--body-timeout"), "{body}");
        assert_eq!(headers[header::CONNECTION], "close");
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(limits.metrics.request_timeouts_body.get(), 1);
        // The honest control: the same trickle, over within the deadline.
        let (status, _, body) = send(
            &limits,
            "application/json",
            None,
            trickle(3, Duration::from_millis(300)),
        )
        .await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "3"));
        assert_eq!(limits.metrics.request_timeouts_body.get(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_declared_length_over_the_limit_is_413_in_json_before_the_body_is_read() {
        // A body that never comes: reading it would end in 408, not 413.
        let never = Body::from_stream(stream::pending::<Result<Bytes, std::io::Error>>());
        let (status, headers, body) = send(&limits(), "application/json", Some(2000), never).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
        let reason: serde_json::Value = serde_json::from_str(&body).expect("a JSON body");
        let reason = reason["error"].as_str().expect("an error");
        assert!(
            reason.contains("2000 bytes") && reason.contains("--max-body-bytes"),
            "{reason}"
        );
        assert_eq!(headers[header::CONNECTION], "close");
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_without_a_length_is_cut_at_the_limit() {
        let (status, _, body) = send(
            &limits(),
            "application/json",
            None,
            trickle(1001, Duration::ZERO),
        )
        .await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
        assert!(
            body.contains("limit of 1000 bytes (--max-body-bytes)"),
            "{body}"
        );
        let (status, _, body) = send(
            &limits(),
            "application/json",
            None,
            trickle(1000, Duration::ZERO),
        )
        .await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "1000"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_wrong_content_type_is_415_before_the_length_is_looked_at() {
        let (status, headers, body) =
            send(&limits(), "text/plain", Some(2000), Body::empty()).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
        assert!(body.contains("`text/plain`"), "{body}");
        assert_eq!(headers[header::CONNECTION], "close");
    }
}
