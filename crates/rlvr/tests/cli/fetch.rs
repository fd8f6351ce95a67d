//! `rlvr fetch` end to end against a local server: success, checksum mismatch, HTTP error.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::Command;

use sha2::{Digest, Sha256};

/// Serves `body` at every path ending in `/resolve/main/data.jsonl`, 404 elsewhere.
fn serve(body: &'static [u8]) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(&stream);
            let mut first = String::new();
            reader.read_line(&mut first).unwrap();
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                line.clear();
            }
            if first.contains("/datasets/owner/name/resolve/main/data.jsonl ") {
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(body);
            } else {
                let _ = stream.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        }
    });
    endpoint
}

const BODY: &[u8] = b"{\"prompt\": []}\n";

fn fetch(endpoint: &str, file: &str, sha256: &str, out: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args([
            "fetch",
            "--repo",
            "owner/name",
            "--file",
            file,
            "--sha256",
            sha256,
            "--attempts",
            "1",
        ])
        .arg("--out")
        .arg(out)
        .env("HF_ENDPOINT", endpoint)
        .env_remove("HF_TOKEN")
        .output()
        .unwrap()
}

#[test]
fn fetch_downloads_and_verifies() {
    let endpoint = serve(BODY);
    let directory = tempfile::tempdir().unwrap();
    let out = directory.path().join("data.jsonl");
    let output = fetch(
        &endpoint,
        "data.jsonl",
        &hex::encode(Sha256::digest(BODY)),
        &out,
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(std::fs::read(&out).unwrap(), BODY);
    assert!(String::from_utf8_lossy(&output.stdout).contains("(verified)"));
}

#[test]
fn fetch_rejects_a_checksum_mismatch_with_exit_5() {
    let endpoint = serve(BODY);
    let directory = tempfile::tempdir().unwrap();
    let out = directory.path().join("data.jsonl");
    let output = fetch(&endpoint, "data.jsonl", &"0".repeat(64), &out);
    assert_eq!(output.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&output.stderr).contains("checksum mismatch"));
    assert!(!out.exists());
}

#[test]
fn fetch_reports_an_http_error_with_exit_4() {
    let endpoint = serve(BODY);
    let directory = tempfile::tempdir().unwrap();
    let out = directory.path().join("missing.jsonl");
    let output = fetch(&endpoint, "missing.jsonl", &"0".repeat(64), &out);
    assert_eq!(output.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&output.stderr).contains("HTTP 404"));
}

#[test]
fn fetch_takes_the_endpoint_from_the_flag_over_the_environment() {
    let endpoint = serve(BODY);
    let directory = tempfile::tempdir().unwrap();
    let out = directory.path().join("data.jsonl");
    let output = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args([
            "fetch",
            "--repo",
            "owner/name",
            "--file",
            "data.jsonl",
            "--revision",
            "main",
            "--endpoint",
            &endpoint,
        ])
        .args(["--sha256", &hex::encode(Sha256::digest(BODY)), "--out"])
        .arg(&out)
        .env("HF_ENDPOINT", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(std::fs::read(&out).unwrap(), BODY);
}
