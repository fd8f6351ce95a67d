//! Issue 13: parity with the card's reference reader, checked against the real interpreter
//! (`$RLVR_PYTHON`, else `python3`): a carriage return inside a line (the card's reader, in
//! text mode, splits the line there; the documented deviation is that rlvr reports the line
//! rather than reading its pieces). Equality and nesting depth are checked in
//! `rlvr-python-compat`'s `tests/python_parity.rs`.

use rlvr_dataset::{LineError, parse_line};
use rlvr_test_support::run_python;

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
