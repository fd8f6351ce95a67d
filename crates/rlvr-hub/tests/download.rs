//! Downloads against a local HTTP server that serves ranges, drops connections mid-body,
//! ignores `Range`, or serves corrupted bytes.

use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use rlvr_hub::{DownloadError, DownloadOptions, download};
use rlvr_test_support::http_server::{Request, Response, Server};
use sha2::{Digest, Sha256};

/// How the test server misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Behaviour {
    /// Serves ranges correctly.
    Honest,
    /// The first `n` responses close the connection after sending `cut` body bytes.
    DropConnection { times: usize, cut: usize },
    /// Always answers 200 with the whole body.
    IgnoreRange,
}

/// Serves `body` at every path ending in `/resolve/main/data.jsonl` (404 elsewhere), from the
/// byte a `Range: bytes=START-` header asks for unless `behaviour` ignores it.
fn serve(body: Vec<u8>, behaviour: Behaviour) -> Server {
    let mut dropped = 0;
    Server::start(move |request| {
        let response = respond(&body, request, behaviour);
        match behaviour {
            Behaviour::DropConnection { times, cut } if dropped < times => {
                dropped += 1;
                response.cut_after(cut)
            }
            _ => response,
        }
    })
}

/// What the server answers to `request` (before any cut): 200 with `body`, 206 with the part
/// from the requested byte, 416 past the end, 404 at other paths.
fn respond(body: &[u8], request: &Request, behaviour: Behaviour) -> Response {
    if !request.path.ends_with("/resolve/main/data.jsonl") {
        return Response::not_found();
    }
    let start = match (request.header("Range"), behaviour) {
        (Some(range), Behaviour::Honest | Behaviour::DropConnection { .. }) => range
            .trim_start_matches("bytes=")
            .trim_end_matches('-')
            .parse::<usize>()
            .unwrap(),
        _ => 0,
    };
    if start >= body.len() && start > 0 {
        Response::new(416).with_header("Content-Range", format!("bytes */{}", body.len()))
    } else if start > 0 {
        Response::new(206)
            .with_header(
                "Content-Range",
                format!("bytes {start}-{}/{}", body.len() - 1, body.len()),
            )
            .with_body(&body[start..])
    } else {
        Response::ok(body)
    }
}

fn body(size: usize) -> Vec<u8> {
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    (0..size)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn options(expected: Option<String>) -> DownloadOptions {
    DownloadOptions {
        expected_sha256: expected,
        retry_delay: Duration::from_millis(10),
        stall_timeout: Duration::from_secs(10),
        ..DownloadOptions::default()
    }
}

fn url(server: &Server) -> String {
    format!(
        "{}/datasets/owner/name/resolve/main/data.jsonl",
        server.url()
    )
}

fn part(out: &Path) -> std::path::PathBuf {
    out.with_file_name(format!(
        "{}.part",
        out.file_name().unwrap().to_string_lossy()
    ))
}

#[test]
fn full_download_is_verified_and_renamed() {
    let data = body(3 << 20);
    let server = serve(data.clone(), Behaviour::Honest);
    let directory = tempfile::tempdir().unwrap();
    let out = directory.path().join("data.jsonl");
    let mut with_token = options(Some(sha256(&data)));
    with_token.token = Some("secret-token".into());
    let summary = download(&url(&server), &out, &with_token, &mut ()).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), data);
    assert!(!part(&out).exists());
    assert!(summary.verified);
    assert_eq!(summary.bytes, data.len() as u64);
    assert_eq!(summary.attempts, 1);
    let requests = server.requests();
    assert_eq!(
        requests[0].header("Authorization"),
        Some("Bearer secret-token")
    );
    assert_eq!(requests[0].header("Range"), None);
}

#[test]
fn a_broken_connection_is_resumed_with_a_range_request() {
    let data = body(2 << 20);
    let server = serve(
        data.clone(),
        Behaviour::DropConnection {
            times: 2,
            cut: 300_000,
        },
    );
    let directory = tempfile::tempdir().unwrap();
    let out = directory.path().join("data.jsonl");
    let summary = download(&url(&server), &out, &options(Some(sha256(&data))), &mut ()).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), data);
    assert_eq!(summary.attempts, 3);
    let ranges: Vec<_> = server
        .requests()
        .iter()
        .map(|request| request.header("Range").map(str::to_owned))
        .collect();
    assert_eq!(
        ranges,
        [
            None,
            Some("bytes=300000-".into()),
            Some("bytes=600000-".into())
        ]
    );
}

#[test]
fn a_part_file_left_by_an_earlier_call_is_continued() {
    let data = body(1 << 20);
    let server = serve(data.clone(), Behaviour::Honest);
    let directory = tempfile::tempdir().unwrap();
    let out = directory.path().join("data.jsonl");
    std::fs::write(part(&out), &data[..123_456]).unwrap();
    let summary = download(&url(&server), &out, &options(Some(sha256(&data))), &mut ()).unwrap();
    assert_eq!(summary.resumed_from, 123_456);
    assert_eq!(std::fs::read(&out).unwrap(), data);
    assert_eq!(server.requests()[0].header("Range"), Some("bytes=123456-"));
}

#[test]
fn a_complete_part_file_is_verified_without_downloading_again() {
    let data = body(50_000);
    let server = serve(data.clone(), Behaviour::Honest);
    let directory = tempfile::tempdir().unwrap();
    let out = directory.path().join("data.jsonl");
    std::fs::write(part(&out), &data).unwrap();
    download(&url(&server), &out, &options(Some(sha256(&data))), &mut ()).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), data);
}

#[test]
fn a_server_that_ignores_range_restarts_from_zero() {
    let data = body(400_000);
    let server = serve(data.clone(), Behaviour::IgnoreRange);
    let directory = tempfile::tempdir().unwrap();
    let out = directory.path().join("data.jsonl");
    std::fs::write(part(&out), b"stale bytes that must not survive").unwrap();
    download(&url(&server), &out, &options(Some(sha256(&data))), &mut ()).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), data);
}

#[test]
fn a_corrupted_file_is_rejected_and_deleted() {
    let data = body(200_000);
    let mut corrupted = data.clone();
    corrupted[100_000] ^= 0xff;
    let server = serve(corrupted, Behaviour::Honest);
    let directory = tempfile::tempdir().unwrap();
    let out = directory.path().join("data.jsonl");
    let error = download(&url(&server), &out, &options(Some(sha256(&data))), &mut ()).unwrap_err();
    assert!(
        matches!(error, DownloadError::ChecksumMismatch { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("checksum mismatch"));
    assert!(!out.exists());
    assert!(!part(&out).exists());
}

#[test]
fn a_missing_file_is_an_http_error_without_retries() {
    let server = serve(body(10), Behaviour::Honest);
    let directory = tempfile::tempdir().unwrap();
    let out = directory.path().join("data.jsonl");
    let missing = format!(
        "{}/datasets/owner/name/resolve/main/other.jsonl",
        server.url()
    );
    let error = download(&missing, &out, &options(None), &mut ()).unwrap_err();
    assert!(
        matches!(error, DownloadError::Status { status: 404, .. }),
        "{error}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn an_unreachable_server_gives_up_after_the_attempts() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let directory = tempfile::tempdir().unwrap();
    let mut few = options(None);
    few.max_attempts = 2;
    let error = download(
        &format!("http://{address}/x"),
        &directory.path().join("x"),
        &few,
        &mut (),
    )
    .unwrap_err();
    assert!(
        matches!(error, DownloadError::AttemptsExhausted { attempts: 2, .. }),
        "{error}"
    );
}
