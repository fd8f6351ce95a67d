//! `rlvr fetch` end to end against a local server: success, checksum mismatch, HTTP error.

use std::process::Command;

use rlvr_test_support::http_server::{Response, Server};
use sha2::{Digest, Sha256};

/// Serves `body` at every path ending in `/datasets/owner/name/resolve/main/data.jsonl`, 404
/// elsewhere.
fn serve(body: &'static [u8]) -> Server {
    Server::start(move |request| {
        if request
            .path
            .ends_with("/datasets/owner/name/resolve/main/data.jsonl")
        {
            Response::ok(body)
        } else {
            Response::not_found()
        }
    })
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
    let server = serve(BODY);
    let endpoint = server.url();
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
    let server = serve(BODY);
    let endpoint = server.url();
    let directory = tempfile::tempdir().unwrap();
    let out = directory.path().join("data.jsonl");
    let output = fetch(&endpoint, "data.jsonl", &"0".repeat(64), &out);
    assert_eq!(output.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&output.stderr).contains("checksum mismatch"));
    assert!(!out.exists());
}

#[test]
fn fetch_reports_an_http_error_with_exit_4() {
    let server = serve(BODY);
    let endpoint = server.url();
    let directory = tempfile::tempdir().unwrap();
    let out = directory.path().join("missing.jsonl");
    let output = fetch(&endpoint, "missing.jsonl", &"0".repeat(64), &out);
    assert_eq!(output.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&output.stderr).contains("HTTP 404"));
}

#[test]
fn fetch_takes_the_endpoint_from_the_flag_over_the_environment() {
    let server = serve(BODY);
    let endpoint = server.url();
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
