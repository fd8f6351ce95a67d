//! The one frame format on both sides (docs/runner.md, "The frame format"): frames that the
//! Rust codec (`rlvr-frame`) writes, the Python module every Python program includes
//! (`runner/protocol.py`) reads, and the frames it writes back read in Rust.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::python;

/// Echoes every frame, with the header it read under `echo` and its payloads in reverse order.
const ECHO: &str = r#"
while True:
    try:
        header = read_frame()
    except EOFError:
        break
    payloads = [read_exact(REQUEST_FD, size) for size in header["sizes"]]
    payloads.reverse()
    write_frame({"echo": header, "sizes": [len(p) for p in payloads]}, *payloads)
"#;

#[test]
fn frames_cross_between_the_rust_codec_and_the_python_module_both_ways() {
    let program = format!(
        "import json, os, struct, sys\n{}\nadopt_protocol_descriptors()\n{ECHO}",
        rlvr_runner::FRAMING_SOURCE
    );
    let mut child = Command::new(python())
        .args(["-I", "-S", "-c", &program])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python starts");
    let mut requests = child.stdin.take().expect("stdin");
    let mut responses = child.stdout.take().expect("stdout");
    let large: Vec<u8> = (0..200_000u32).map(|index| (index % 251) as u8).collect();
    let cases: Vec<(Value, Vec<&[u8]>)> = vec![
        (json!({"op": "exit"}), vec![]),
        (
            json!({"op": "run", "limits": [1, 2.5, null, true]}),
            vec![b"ab", b"c"],
        ),
        // Text beyond ASCII in the header; bytes that are not UTF-8, none, and more than one
        // pipe's worth (Python's reads and writes come in pieces) as payloads.
        (
            json!({"text": "é ☃ \u{1F600} \"quoted\" \\ \n", "empty": {}}),
            vec![b"\x00\xff\xfe not utf-8", b"", &large],
        ),
    ];
    for (mut header, payloads) in cases {
        let sizes: Vec<usize> = payloads.iter().map(|payload| payload.len()).collect();
        header["sizes"] = json!(sizes);
        requests
            .write_all(&rlvr_frame::encode(&header, &payloads))
            .expect("python reads");
        let reply = rlvr_frame::read_header(&mut responses, 1 << 20)
            .expect("a frame")
            .expect("not the end");
        let parsed: Value = rlvr_frame::parse(&reply).expect("JSON");
        assert_eq!(parsed["echo"], header);
        let mut expected = payloads.clone();
        expected.reverse();
        let mut echoed = Vec::new();
        for payload in &expected {
            echoed.push(rlvr_frame::read_payload(&mut responses, payload.len()).expect("payload"));
        }
        assert_eq!(echoed, expected);
        if header.get("text").is_none() {
            // An ASCII header: Python's frame is byte for byte the Rust codec's.
            let sizes: Vec<usize> = expected.iter().map(|payload| payload.len()).collect();
            assert_eq!(
                rlvr_frame::encode_raw(&reply, &expected),
                rlvr_frame::encode(&json!({"echo": header, "sizes": sizes}), &expected)
            );
        }
    }
    drop(requests);
    assert!(
        rlvr_frame::read_header(&mut responses, 1 << 20)
            .expect("a clean end")
            .is_none()
    );
    assert!(child.wait().expect("python exits").success());
}
