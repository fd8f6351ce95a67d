//! Downloads against a local HTTP server that serves ranges, drops connections mid-body,
//! ignores `Range`, or serves corrupted bytes.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rlvr_hub::{DownloadError, DownloadOptions, download};
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

/// What the server saw.
#[derive(Debug, Default)]
struct Log {
    requests: Vec<Request>,
}

#[derive(Debug, Clone)]
struct Request {
    path: String,
    range: Option<String>,
    authorization: Option<String>,
}

struct Server {
    url: String,
    log: Arc<Mutex<Log>>,
}

fn serve(body: Vec<u8>, behaviour: Behaviour) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let log = Arc::new(Mutex::new(Log::default()));
    let server_log = Arc::clone(&log);
    std::thread::spawn(move || {
        let mut dropped = 0;
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let request = read_request(&stream);
            server_log.lock().unwrap().requests.push(request.clone());
            let cut = match behaviour {
                Behaviour::DropConnection { times, cut } if dropped < times => {
                    dropped += 1;
                    Some(cut)
                }
                _ => None,
            };
            respond(stream, &body, &request, behaviour, cut);
        }
    });
    Server { url, log }
}

fn read_request(stream: &TcpStream) -> Request {
    let mut reader = BufReader::new(stream);
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    let path = first.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut request = Request {
        path,
        range: None,
        authorization: None,
    };
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            return request;
        }
        let (name, value) = line.split_once(':').unwrap();
        let value = value.trim().to_string();
        match name.to_ascii_lowercase().as_str() {
            "range" => request.range = Some(value),
            "authorization" => request.authorization = Some(value),
            _ => {}
        }
    }
}

fn respond(
    mut stream: TcpStream,
    body: &[u8],
    request: &Request,
    behaviour: Behaviour,
    cut: Option<usize>,
) {
    if !request.path.ends_with("/resolve/main/data.jsonl") {
        let _ = stream
            .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
    }
    let start = match (&request.range, behaviour) {
        (Some(range), Behaviour::Honest | Behaviour::DropConnection { .. }) => range
            .trim_start_matches("bytes=")
            .trim_end_matches('-')
            .parse::<usize>()
            .unwrap(),
        _ => 0,
    };
    let head = if start >= body.len() && start > 0 {
        let _ = write!(
            stream,
            "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            body.len()
        );
        return;
    } else if start > 0 {
        format!(
            "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {start}-{}/{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len() - 1,
            body.len(),
            body.len() - start
        )
    } else {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
    };
    let _ = stream.write_all(head.as_bytes());
    let rest = &body[start..];
    let sent = cut.map_or(rest.len(), |cut| cut.min(rest.len()));
    let _ = stream.write_all(&rest[..sent]);
    let _ = stream.flush();
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
    format!("{}/datasets/owner/name/resolve/main/data.jsonl", server.url)
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
    let log = server.log.lock().unwrap();
    assert_eq!(
        log.requests[0].authorization.as_deref(),
        Some("Bearer secret-token")
    );
    assert_eq!(log.requests[0].range, None);
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
        .log
        .lock()
        .unwrap()
        .requests
        .iter()
        .map(|request| request.range.clone())
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
    assert_eq!(
        server.log.lock().unwrap().requests[0].range.as_deref(),
        Some("bytes=123456-")
    );
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
        server.url
    );
    let error = download(&missing, &out, &options(None), &mut ()).unwrap_err();
    assert!(
        matches!(error, DownloadError::Status { status: 404, .. }),
        "{error}"
    );
    assert_eq!(server.log.lock().unwrap().requests.len(), 1);
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
