//! Issue 13: parity with the card's reference reader, checked against the real interpreter
//! (`$RLVR_PYTHON`, else `python3`): a carriage return inside a line (the card's reader, in
//! text mode, splits the line there; the documented deviation is that rlvr reports the line
//! rather than reading its pieces). Equality and nesting depth are checked in
//! `rlvr-python-compat`'s `tests/python_parity.rs`.

use std::io::Write;
use std::process::{Command, Stdio};

use rlvr_dataset::{LineError, parse_line};

fn python() -> String {
    std::env::var("RLVR_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

/// Runs `script` with `input` on stdin; returns stdout.
fn run_python(script: &str, arguments: &[&str], input: &str) -> String {
    let mut child = Command::new(python())
        .arg("-c")
        .arg(script)
        .args(arguments)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("writes");
    let output = child.wait_with_output().expect("python ends");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8")
}

#[test]
fn issue_13_a_carriage_return_inside_a_line_is_reported_where_python_splits() {
    // Between tokens: `json.loads` on the bytes would accept it, but the card's reader opens
    // the file in text mode, where a lone CR ends the line; neither piece is JSON.
    let line = b"{\"prompt\": [],\r \"label\": {}}";
    let error = parse_line(line).expect_err("reported");
    assert_eq!(error, LineError::CarriageReturn { offset: 14 });
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("cr.jsonl");
    let mut bytes = line.to_vec();
    bytes.push(b'\n');
    std::fs::write(&path, &bytes).expect("writes");
    let script = "import json, sys\n\
        lines = list(open(sys.argv[1], 'r', encoding='utf-8'))\n\
        print(len(lines))\n\
        for line in lines:\n\
        \x20   try:\n\
        \x20       json.loads(line)\n\
        \x20       print('read')\n\
        \x20   except json.JSONDecodeError:\n\
        \x20       print('not json')\n";
    let output = run_python(script, &[&path.display().to_string()], "");
    assert_eq!(output, "2\nnot json\nnot json\n");
}
