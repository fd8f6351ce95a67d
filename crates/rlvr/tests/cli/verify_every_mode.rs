//! Issues 12 and 15: hostile responses through `rlvr verify --profile judge`, in every sandbox
//! mode (root, user namespace with one uid, subordinate ids). Every mode must give each job the
//! same score and per-test verdicts (the expected ones), leave nothing behind, and never turn a
//! response's attack into a `null` score.

use std::net::TcpListener;
use std::process::Stdio;

use crate::support::{Caller, RunsRlvr, assert_no_survivors, in_every_mode};
use serde_json::{Value, json};

use crate::support::{SUM, fenced};

/// A job (id, response) and what it must score: its score and the verdict of each of its tests.
struct Case {
    id: &'static str,
    source: String,
    score: f64,
    verdicts: &'static [&'static str],
}

fn case(id: &'static str, source: String, score: f64, verdicts: &'static [&'static str]) -> Case {
    Case {
        id,
        source,
        score,
        verdicts,
    }
}

/// Hostile programs that answer correctly only when the sandbox held, or fail the way the
/// sandbox makes them fail. `port` is a host TCP listener, `secret` a file the caller can read
/// outside the sandbox, `marker` a path the caller could write outside it.
fn cases(port: u16, secret: &str, marker: &str) -> Vec<Case> {
    vec![
        case("right", SUM.to_owned(), 1.0, &["pass", "pass"]),
        case(
            "network",
            format!(
                "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    print('connected')\nexcept OSError:\n    {SUM}"
            ),
            1.0,
            &["pass", "pass"],
        ),
        case(
            "secrets",
            format!(
                "import os\nvisible = os.path.exists({secret:?}) or 'RLVR_TEST_SECRET' in os.environ\nif not visible:\n    {SUM}"
            ),
            1.0,
            &["pass", "pass"],
        ),
        case(
            "write outside",
            format!(
                "try:\n    open({marker:?}, 'w').write('escaped')\nexcept OSError:\n    pass\n{SUM}"
            ),
            1.0,
            &["pass", "pass"],
        ),
        case(
            "signal the runner",
            format!(
                "import os, signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nfor pid in (-1, 2, 3, 99, 100, 101, 65533, 65534):\n    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):\n        try:\n            os.kill(pid, number)\n        except OSError:\n            pass\n{SUM}"
            ),
            1.0,
            &["pass", "pass"],
        ),
        case(
            "leave a daemon",
            format!(
                "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(3600)\nopen('/tmp/left-by-a-job', 'w').write('x')\n{SUM}"
            ),
            1.0,
            &["pass", "pass"],
        ),
        case(
            "see no trace",
            format!(
                "import os\nme = os.readlink('/proc/self')\nothers = [p for p in os.listdir('/proc') if p.isdigit() and p not in (me, '1')]\nif not others and not os.path.exists('/tmp/left-by-a-job'):\n    {SUM}"
            ),
            1.0,
            &["pass", "pass"],
        ),
        case(
            "fork bomb",
            "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass".to_owned(),
            0.0,
            &["timeout", "timeout"],
        ),
        case(
            "memory hog",
            "chunks = []\nwhile True:\n    chunks.append(bytearray(32 << 20))".to_owned(),
            0.0,
            &["memory_limit", "memory_limit"],
        ),
        case(
            "ptrace the runner",
            format!(
                "import ctypes, os\nctypes.CDLL(None).ptrace(16, os.getppid() or 1, None, None)\n{SUM}"
            ),
            0.0,
            &["runtime_error", "runtime_error"],
        ),
        case(
            "namespace escape",
            format!("import ctypes\nctypes.CDLL(None).unshare(0x10000000)\n{SUM}"),
            0.0,
            &["runtime_error", "runtime_error"],
        ),
        case(
            "output flood",
            "import sys\nwhile True:\n    sys.stdout.write('y' * 65536)".to_owned(),
            0.0,
            &["output_limit", "output_limit"],
        ),
    ]
}

fn score_every_case(caller: &Caller) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("address").port();
    let secret = caller.write("secret", b"planted");
    let marker = caller.directory.path().join("escaped");
    let cases = cases(
        port,
        secret.to_str().expect("utf-8"),
        marker.to_str().expect("utf-8"),
    );
    let truth = json!({"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]});
    let lines: Vec<String> = cases
        .iter()
        .map(|case| {
            json!({"id": case.id, "response": fenced(&case.source), "ground_truth": truth})
                .to_string()
        })
        .collect();
    let jobs = caller.write("jobs.jsonl", (lines.join("\n") + "\n").as_bytes());
    let output = caller
        .rlvr(&[
            "verify",
            jobs.to_str().expect("utf-8"),
            "--profile",
            "judge",
            "--details",
            "--workers",
            "1",
            "--time-limit",
            "2",
            "--memory-limit",
            "256",
        ])
        .env("RLVR_TEST_SECRET", "verifier-environment-secret")
        .stderr(Stdio::piped())
        .output()
        .expect("rlvr verify runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let results: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("every result line is JSON"))
        .collect();
    assert_eq!(
        results.len(),
        cases.len(),
        "{text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for (case, result) in cases.iter().zip(&results) {
        assert_eq!(result["id"], case.id);
        let verdicts: Vec<&str> = result["tests"]
            .as_array()
            .expect("tests with --details")
            .iter()
            .filter_map(|test| test["verdict"].as_str())
            .collect();
        assert_eq!(
            (result["score"].as_f64(), verdicts.as_slice()),
            (Some(case.score), case.verdicts),
            "{} ({:?}): {result}",
            case.id,
            caller.mode
        );
    }
    assert!(!marker.exists(), "a response wrote the caller's directory");
    assert!(
        listener.accept().is_err(),
        "the host listener saw a connection"
    );
    assert_no_survivors(&caller.sandbox_uids());
}

in_every_mode!(
    issue_15_hostile_responses_score_alike_in_every_mode,
    61040,
    |caller| {
        score_every_case(caller);
    }
);
