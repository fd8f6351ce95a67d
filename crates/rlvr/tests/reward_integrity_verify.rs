//! Reward integrity through `rlvr verify --profile judge` (issue 12, "Wrong answers that
//! currently score 1.0"): real hostile responses in the real sandbox must score 0, honest ones
//! 1.0, and the summary and `--details` must show what the hostile ones tried. The responses
//! are in `tests/fixtures/integrity/attacks.py`; each hostile one scored 1.0 before.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Sandbox uids of these tests (others run sandbox tests at the same time).
const UID: &str = "61230";

fn python() -> String {
    std::env::var("RLVR_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/integrity/attacks.py")
}

/// Writes the job lines of one group of `attacks.py` to a file.
fn jobs(directory: &Path, group: &str) -> PathBuf {
    let output = Command::new(python())
        .arg(fixture())
        .arg(group)
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let path = directory.join(format!("{group}.jsonl"));
    std::fs::write(&path, &output.stdout).unwrap();
    path
}

fn verify(jobs: &Path, arguments: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .arg("verify")
        .arg(jobs)
        .args(["--profile", "judge"])
        .args(arguments)
        .env("RLVR_SANDBOX_UID", UID)
        .output()
        .expect("rlvr runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn results(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("every result line is JSON"))
        .collect()
}

/// Issue 12: every class of the issue's list (always-agreeing objects, reading the caller's
/// frame, redefining helpers and builtins, tracing jumps, forged completion evidence) scored
/// 1.0 under the judge; each scores 0 now, through the real sandbox and referee.
#[test]
fn issue_12_hostile_functional_answers_score_zero() {
    let directory = tempfile::tempdir().unwrap();
    let output = verify(&jobs(directory.path(), "hostile"), &["--details"]);
    let lines = results(&output);
    assert!(lines.len() >= 18, "{lines:?}");
    for line in &lines {
        assert_eq!(line["status"], "ok", "{line}");
        assert_eq!(line["score"], 0.0, "a hostile answer scored: {line}");
        let coverage = &line["functional"];
        assert_eq!(coverage["unsplit"], 0, "{line}");
        assert!(coverage["split"].as_u64().unwrap() >= 2, "{line}");
    }
    let by_id = |id: &str| {
        lines
            .iter()
            .find(|line| line["id"] == id)
            .unwrap_or_else(|| panic!("{id} in {lines:?}"))
    };
    // What the sensor saw, per job and per test.
    for (id, kind) in [
        ("getframe", "frame_introspection"),
        ("inspect", "frame_introspection"),
        ("co_consts", "frame_introspection"),
        ("gc_referrers", "gc_introspection"),
        ("settrace_jump", "tracing"),
        ("setprofile", "tracing"),
        ("forged_completion", "forged_report"),
    ] {
        let line = by_id(id);
        assert!(
            line["tampering"][kind].as_u64().unwrap_or(0) >= 1,
            "{kind}: {line}"
        );
        let tests = line["tests"].as_array().unwrap();
        assert!(
            tests[0]["tampering"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|seen| seen == kind)),
            "{kind}: {line}"
        );
    }
    assert!(by_id("always_eq").get("tampering").is_none());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("functional tests split by the referee:")
            && stderr.contains("tampering (tests per kind")
            && stderr.contains("frame_introspection")
            && stderr.contains("forged_report"),
        "{stderr}"
    );
}

#[test]
fn honest_functional_answers_still_pass() {
    let directory = tempfile::tempdir().unwrap();
    let output = verify(&jobs(directory.path(), "honest"), &["--details"]);
    for line in results(&output) {
        assert_eq!(line["score"], 1.0, "an honest answer failed: {line}");
        assert!(line.get("tampering").is_none(), "{line}");
    }
}

/// Issue 12: `1000000.0` was accepted for the expected `1000001` (a relative tolerance applied
/// to an integer token) and an invalid UTF-8 byte for an expected U+FFFD.
#[test]
fn issue_12_stdin_near_integers_and_invalid_bytes_fail() {
    let directory = tempfile::tempdir().unwrap();
    for line in results(&verify(&jobs(directory.path(), "stdin"), &[])) {
        assert_eq!(line["score"], 0.0, "{line}");
    }
    for line in results(&verify(&jobs(directory.path(), "stdin-honest"), &[])) {
        assert_eq!(line["score"], 1.0, "{line}");
    }
}

/// A test form the referee cannot split still runs (as before) and is counted as unsplit, in
/// the result and in the summary.
#[test]
fn unsplit_forms_run_whole_and_are_counted() {
    let directory = tempfile::tempdir().unwrap();
    let job = serde_json::json!({
        "id": "loop",
        "response": "```python\ndef square(x):\n    return x * x\n```",
        "ground_truth": {"functional": [
            "assert any(square(x) == x * x for x in range(4))",
            "assert square(5) == 25",
        ]},
    });
    let path = directory.path().join("loop.jsonl");
    std::fs::write(&path, format!("{job}\n")).unwrap();
    let output = verify(&path, &["--details"]);
    let line = &results(&output)[0];
    assert_eq!(line["score"], 1.0, "{line}");
    assert_eq!(
        line["functional"],
        serde_json::json!({"split": 1, "unsplit": 1})
    );
    assert_eq!(line["tests"][0]["split"], false);
    assert_eq!(line["tests"][1]["split"], true);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("functional tests split by the referee: 1 of 2 (1 ran whole)"),
        "{stderr}"
    );
}

/// Each kind the sensor and the runner report reaches the result and the summary, for stdin
/// programs too: a signal to another process, another process's limits, `ctypes`, a death by
/// SIGSYS; an honest program reports nothing.
#[test]
fn tampering_kinds_reach_the_result_and_the_summary() {
    let directory = tempfile::tempdir().unwrap();
    let truth = serde_json::json!({"inputs": ["1 2\n"], "outputs": ["3\n"]});
    let programs = [
        (
            "signal",
            "import os\ntry:\n    os.kill(os.getpid() + 1, 0)\nexcept OSError:\n    pass\nprint(3)",
        ),
        (
            "prlimit",
            "import os, resource\ntry:\n    resource.prlimit(os.getpid() + 1, resource.RLIMIT_NOFILE)\nexcept OSError:\n    pass\nprint(3)",
        ),
        ("ctypes", "import ctypes\nctypes.CDLL(None)\nprint(3)"),
        (
            "seccomp_kill",
            "import ctypes\nprint(3, flush=True)\nctypes.CDLL(None).ptrace(0, 0, None, None)",
        ),
        ("honest", "a, b = map(int, input().split())\nprint(a + b)"),
    ];
    let lines: Vec<String> = programs
        .iter()
        .map(|(id, code)| {
            serde_json::json!({"id": id, "response": format!("```python\n{code}\n```"), "ground_truth": truth})
                .to_string()
        })
        .collect();
    let path = directory.path().join("kinds.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let output = verify(&path, &["--details"]);
    let lines = results(&output);
    for (line, (kind, _)) in lines.iter().zip(programs) {
        if kind == "honest" {
            assert!(line.get("tampering").is_none(), "{line}");
            assert_eq!(line["score"], 1.0);
        } else {
            assert_eq!(line["tampering"][kind], 1, "{kind}: {line}");
        }
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The seccomp case reaches ptrace through ctypes, so ctypes is seen in two tests.
    for kind in ["signal 1", "prlimit 1", "ctypes 2", "seccomp_kill 1"] {
        assert!(stderr.contains(kind), "{kind}: {stderr}");
    }
}

/// Issue 12, second round (a red-team pass against the split): arguments computed from a test
/// variable that also holds the expected value, methods called on the solution's value,
/// comparators the solution names itself (`np`), functions defined only at run time, instance
/// attributes that shadow the test class's own, `all(...)` and a response padded to exhaust
/// the referee. Each scored 1.0 or null; each is split and scores 0 now, and the honest
/// answers to the same tests still pass.
#[test]
fn issue_12_second_round_hostile_answers_score_zero_and_honest_ones_pass() {
    let directory = tempfile::tempdir().unwrap();
    let hostile = results(&verify(
        &jobs(directory.path(), "hostile-2"),
        &["--details"],
    ));
    assert_eq!(hostile.len(), 7, "{hostile:?}");
    for line in &hostile {
        assert_eq!(line["status"], "ok", "{line}");
        assert_eq!(line["score"], 0.0, "a hostile answer scored: {line}");
        assert_eq!(line["functional"]["unsplit"], 0, "{line}");
    }
    let honest = results(&verify(&jobs(directory.path(), "honest-2"), &["--details"]));
    assert_eq!(honest.len(), 8, "{honest:?}");
    for line in &honest {
        assert_eq!(line["score"], 1.0, "an honest answer failed: {line}");
        assert_eq!(line["functional"]["unsplit"], 0, "{line}");
    }
}

/// Issue 12, third round (a second red-team pass, `tests/fixtures/integrity/round2.jsonl`,
/// jobs named `*_wrong` and `*_honest`): test values mixed into an argument with a solution
/// call, a call's result or a dict's keys; methods on a zero-argument call or a solution
/// global; a test class attribute `__init__` only reads; a `Solution` that is not a class
/// (which moved the test to the unsplit path); a padded f-string that made the referee's parse
/// outlast its `open` (a null score). Each wrong answer is split and scores 0; each honest one
/// passes.
#[test]
fn issue_12_third_round_hostile_answers_score_zero_and_honest_ones_pass() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/integrity/round2.jsonl");
    let lines = results(&verify(&fixture, &["--details"]));
    assert_eq!(lines.len(), 27, "{lines:?}");
    for line in &lines {
        let id = line["id"].as_str().unwrap();
        assert_eq!(line["status"], "ok", "{line}");
        assert_eq!(line["functional"]["unsplit"], 0, "{line}");
        if id.ends_with("_wrong") {
            assert_eq!(line["score"], 0.0, "a hostile answer scored: {line}");
        } else {
            assert!(id.ends_with("_honest"), "{id}");
            assert_eq!(line["score"], 1.0, "an honest answer failed: {line}");
        }
    }
}

/// A stdin job whose response is `source`: three a+b tests.
fn sum_job(id: &str, source: &str) -> Value {
    serde_json::json!({
        "id": id,
        "response": format!("```python\n{source}\n```"),
        "ground_truth": {"inputs": ["1 2\n", "3 4\n", "5 6\n"], "outputs": ["3\n", "7\n", "11\n"]},
    })
}

/// Issue 12, "void its score" / worker time: CPython 3.11 parses a long f-string in quadratic
/// time (this one takes about 20 s on an idle core), and a compile cannot be interrupted in the
/// runner. A long program is compiled in a child bounded by the test's time limit, so the
/// response times out at that limit, as it would in a fresh `python FILE` per test, and does not
/// hold a worker for the whole compile. Long honest programs and long programs with a syntax
/// error take the same path and keep their verdicts.
#[test]
fn issue_12_a_program_that_compiles_slowly_times_out_at_the_test_limit() {
    const SUM: &str = "a, b = map(int, input().split())\nprint(a + b)";
    let directory = tempfile::tempdir().unwrap();
    let slow = format!("_pad = f\"{}\"\n{SUM}", "{0}".repeat(160_000));
    let long_comment = format!("# {}\n{SUM}", "x".repeat(100_000));
    let long_syntax_error = format!("{long_comment}\n1 1\n");
    let lines: Vec<String> = [
        sum_job("slow_compile", &slow),
        sum_job("long_honest", &long_comment),
        sum_job("long_syntax_error", &long_syntax_error),
    ]
    .iter()
    .map(Value::to_string)
    .collect();
    let path = directory.path().join("long.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let started = std::time::Instant::now();
    let output = verify(&path, &["--details", "--time-limit", "1", "--workers", "1"]);
    let elapsed = started.elapsed();
    let lines = results(&output);
    assert_eq!(lines.len(), 3, "{lines:?}");
    let slow = &lines[0];
    assert_eq!(slow["status"], "ok", "{slow}");
    assert_eq!(slow["score"], 0.0, "{slow}");
    for test in slow["tests"].as_array().unwrap() {
        assert_eq!(test["verdict"], "timeout", "{slow}");
    }
    assert_eq!(lines[1]["score"], 1.0, "{}", lines[1]);
    assert_eq!(lines[2]["score"], 0.0, "{}", lines[2]);
    assert_eq!(
        lines[2]["tests"][0]["verdict"], "runtime_error",
        "{}",
        lines[2]
    );
    // The whole compile alone is about 20 s; the bounded one stops at the 1 s limit.
    assert!(
        elapsed < std::time::Duration::from_secs(12),
        "the slow compile held the worker for {elapsed:?}"
    );
}

/// Under the judge every test finds an empty work directory, as a fresh process with its own
/// temporary directory would: nothing one test of a job leaves in `/tmp` (files, directories)
/// reaches the next, whichever worker runs it. (Between jobs this always held.)
#[test]
fn judge_tests_each_find_an_empty_work_directory() {
    let directory = tempfile::tempdir().unwrap();
    let source = "import os\n\
                  a, b = map(int, input().split())\n\
                  left = os.listdir('/tmp')\n\
                  open('/tmp/seen', 'w').write(str(a))\n\
                  os.mkdir('/tmp/kept')\n\
                  open('/tmp/kept/file', 'w').close()\n\
                  print(a + b if not left else f'left: {left}')";
    let path = directory.path().join("tmp.jsonl");
    std::fs::write(&path, sum_job("fresh_tmp", source).to_string() + "\n").unwrap();
    let lines = results(&verify(&path, &["--details"]));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["score"], 1.0, "{}", lines[0]);
}
