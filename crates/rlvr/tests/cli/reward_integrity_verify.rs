//! Reward integrity through `rlvr verify --profile judge` (issues 12 and 22): real hostile
//! responses in the real sandbox must score 0, honest ones 1.0, and the summary and `--details`
//! must show what the hostile ones tried. The responses are in `tests/fixtures/integrity/`:
//! `attacks.py` and `round2.jsonl` (issue 12's rounds: each hostile one scored 1.0 before) and
//! `live.py` (issue 22: forms and values the split judge got wrong, and kernel counters) and
//! `referee.py` (issue 32: names resolved as Python would, only the referee deciding, honest
//! values crossing both ways, forged messages reported).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::{python, results, verify_as};

/// Sandbox uids of these tests (others run sandbox tests at the same time).
const UID: &str = "61230";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/integrity/{name}"))
}

/// Writes the job lines of one group of `attacks.py` to a file.
fn jobs(directory: &Path, group: &str) -> PathBuf {
    fixture_jobs(directory, "attacks.py", group)
}

/// Writes the job lines of one group of a fixture script to a file.
fn fixture_jobs(directory: &Path, script: &str, group: &str) -> PathBuf {
    let output = Command::new(python())
        .arg(fixture(script))
        .arg(group)
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let path = directory.join(format!("{script}-{group}.jsonl"));
    std::fs::write(&path, &output.stdout).unwrap();
    path
}

fn verify(jobs: &Path, arguments: &[&str]) -> Output {
    verify_with(jobs, "judge", arguments)
}

fn verify_with(jobs: &Path, profile: &str, arguments: &[&str]) -> Output {
    let arguments: Vec<&str> = ["--profile", profile]
        .into_iter()
        .chain(arguments.iter().copied())
        .collect();
    verify_as(UID, jobs, &arguments)
}

/// Issue 12: every class of the issue's list (always-agreeing objects, reading the caller's
/// frame, redefining helpers and builtins, tracing jumps, forged completion evidence) scored
/// 1.0 under the judge; each scores 0 now, through the real sandbox, referee and live calls.
#[test]
fn issue_12_hostile_functional_answers_score_zero() {
    let directory = tempfile::tempdir().unwrap();
    let output = verify(&jobs(directory.path(), "hostile"), &["--details"]);
    let lines = results(&output);
    assert!(lines.len() >= 18, "{lines:?}");
    for line in &lines {
        assert_eq!(line["status"], "ok", "{line}");
        assert_eq!(line["score"], 0.0, "a hostile answer scored: {line}");
        assert_eq!(line["untrusted_comparisons"], 0, "{line}");
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
        ("forged_completion", "frame_introspection"),
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
        stderr.contains("tampering (tests per kind")
            && stderr.contains("frame_introspection")
            && stderr.contains("tracing"),
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
/// the referee. Each scored 1.0 or null; each scores 0 now, and the honest answers to the same
/// tests still pass.
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
    }
    let honest = results(&verify(&jobs(directory.path(), "honest-2"), &["--details"]));
    assert_eq!(honest.len(), 8, "{honest:?}");
    for line in &honest {
        assert_eq!(line["score"], 1.0, "an honest answer failed: {line}");
    }
}

/// Issue 12, third round (a second red-team pass, `tests/fixtures/integrity/round2.jsonl`,
/// jobs named `*_wrong` and `*_honest`): test values mixed into an argument with a solution
/// call, a call's result or a dict's keys; methods on a zero-argument call or a solution
/// global; a test class attribute `__init__` only reads; a `Solution` that is not a class
/// (which moved the test to the unsplit path); a padded f-string that made the referee's parse
/// outlast its `open` (a null score). Each wrong answer scores 0; each honest one passes.
#[test]
fn issue_12_third_round_hostile_answers_score_zero_and_honest_ones_pass() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/integrity/round2.jsonl");
    let lines = results(&verify(&fixture, &["--details"]));
    assert_eq!(lines.len(), 27, "{lines:?}");
    for line in &lines {
        let id = line["id"].as_str().unwrap();
        assert_eq!(line["status"], "ok", "{line}");
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

/// Issue 22: the live judge against what still beat the split one: reading the caller's
/// constants, arguments of calls not made yet (round trips, chained states), `exit()` and
/// `os._exit(0)` inside a call or after the definitions, a StopIteration that ends the test's
/// `map`, helpers and builtins the solution patches, a forged message on the live pipe. Each
/// scores 0, and says what it tried.
#[test]
fn issue_22_hostile_answers_score_zero() {
    let directory = tempfile::tempdir().unwrap();
    let output = verify(
        &fixture_jobs(directory.path(), "live.py", "hostile"),
        &["--details"],
    );
    let lines = results(&output);
    assert_eq!(lines.len(), 8, "{lines:?}");
    for line in &lines {
        assert_eq!(line["status"], "ok", "{line}");
        assert_eq!(line["score"], 0.0, "a hostile answer scored: {line}");
    }
    let by_id = |id: &str| lines.iter().find(|line| line["id"] == id).unwrap();
    for (id, kind) in [
        ("caller_constant", "frame_introspection"),
        ("future_argument", "gc_introspection"),
        ("exit_inside_a_call", "early_exit"),
        ("os_exit_inside_a_call", "early_exit"),
        ("exit_after_definitions", "early_exit"),
        ("forged_message", "forged_report"),
    ] {
        assert!(
            by_id(id)["tampering"][kind].as_u64().unwrap_or(0) >= 1,
            "{kind}: {}",
            by_id(id)
        );
    }
}

/// Issue 22: an object whose every comparison, truth value, membership and arithmetic agrees
/// scores in a fresh process (Klear's reward, which runs the test next to the solution) in
/// every test form the old splitter ran whole: HumanEval's raw `check(candidate)`, `any`, `if`,
/// `while`, `try`, `with`, nested loops, for-else, lambdas, walrus, star-imports, helpers that
/// call the solution, loops over its results, membership, differences, methods of plain values.
/// The live judge runs each form whole in the referee and scores every one 0.
#[test]
fn issue_22_lying_objects_score_zero_in_every_test_form() {
    let directory = tempfile::tempdir().unwrap();
    let forms = fixture_jobs(directory.path(), "live.py", "forms");
    let judged = results(&verify(&forms, &["--details"]));
    assert_eq!(judged.len(), 16, "{judged:?}");
    for line in &judged {
        assert_eq!(line["score"], 0.0, "a lying object scored: {line}");
    }
    // The same answers under the reference: its hole, which these forms exploit.
    let reference = results(&verify_with(&forms, "klear", &[]));
    for line in &reference {
        assert!(
            line["score"].as_f64().unwrap() > 0.0,
            "klear should be fooled: {line}"
        );
    }
}

/// Issue 22: honest answers the split judge scored 0 now pass: LeetCode's `Solution()`, a
/// design class, returned closures, dataclasses (compared with the solution's own class as
/// data; checked against it: an untrusted comparison, counted), namedtuples, Fraction, dates, IntEnum members, dict views,
/// an infinite generator the test takes five items from, a 3-million-element list, arguments
/// changed in place, callbacks, expected exceptions, functions defined at run time,
/// `inspect.signature` and `sys.settrace(None)` (not tampering), `multiprocessing.Pool`, and
/// each test form with an honest solution.
#[test]
fn issue_22_honest_values_and_forms_pass() {
    let directory = tempfile::tempdir().unwrap();
    let output = verify(
        &fixture_jobs(directory.path(), "live.py", "honest"),
        &["--details"],
    );
    let lines = results(&output);
    assert!(lines.len() >= 34, "{lines:?}");
    for line in &lines {
        assert_eq!(line["score"], 1.0, "an honest answer failed: {line}");
        assert!(line.get("tampering").is_none(), "{line}");
        // `isinstance(p, Point)`: the solution's word (issue 32: `p == Point(1, 2)` compares
        // the two objects' class names and attributes here, as data).
        let expected = if line["id"] == "dataclass" { 1 } else { 0 };
        assert_eq!(line["untrusted_comparisons"], expected, "{line}");
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "untrusted comparisons (two of the solution's own objects, its word): 1 in 1 jobs"
        ),
        "{stderr}"
    );
}

/// Issue 22: a test child is init of its PID namespace, yet a program that kills itself before
/// flushing fails as a fresh `python` does; and output printed by `__del__` at shutdown comes out.
#[test]
fn issue_22_shutdown_and_self_signals_behave_as_a_fresh_process() {
    let directory = tempfile::tempdir().unwrap();
    for line in results(&verify(
        &fixture_jobs(directory.path(), "live.py", "stdin-honest"),
        &[],
    )) {
        assert_eq!(line["score"], 1.0, "{line}");
    }
    for line in results(&verify(
        &fixture_jobs(directory.path(), "live.py", "stdin-hostile"),
        &[],
    )) {
        assert_eq!(line["score"], 0.0, "{line}");
    }
}

/// Issue 22: PID numbers and tmpfs inode numbers were counters one job could leave its answer
/// in for a later one. What a job sees of them is the same after a job that started many
/// processes and files as in a fresh runner: its test child is PID 101 in the sandbox's
/// namespace (the runner sets the next PID before every test; docs/sandbox.md) and the first
/// file it creates is inode 2 of a fresh tmpfs (the directory itself is 1). Under the judge
/// and under a reference profile, with one warm runner for all the jobs.
#[test]
fn issue_22_pid_and_inode_numbers_are_fresh_for_every_job() {
    let directory = tempfile::tempdir().unwrap();
    let writer = "import os\nfor _ in range(40):\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n    os.waitpid(pid, 0)\nfor n in range(300):\n    open(f'/tmp/f{n}', 'w').close()\nprint(input())";
    let reader = "import os\nopen('/tmp/probe', 'w').close()\nprint(os.readlink('/proc/self'), os.stat('/tmp/probe').st_ino)";
    let job = |id: &str, code: &str, input: &str, output: &str| {
        serde_json::json!({"id": id, "response": format!("<think>\n</think>\n```python\n{code}\n```"),
                           "ground_truth": {"inputs": [input], "outputs": [output]}})
    };
    let writer_job = job("writer", writer, "x\n", "x\n");
    let reader_job = job("reader", reader, "", "101 2\n");
    for profile in ["judge", "klear"] {
        let path = directory.path().join("jobs.jsonl");
        std::fs::write(
            &path,
            format!("{reader_job}\n{writer_job}\n{reader_job}\n{writer_job}\n{reader_job}\n"),
        )
        .unwrap();
        let lines = results(&verify_with(
            &path,
            profile,
            &["--workers", "1", "--details"],
        ));
        assert_eq!(lines.len(), 5);
        for line in &lines {
            assert_eq!(
                line["tests"][0]["verdict"], "pass",
                "{profile}: the counters carried over: {line}"
            );
        }
    }
}

/// `depth` `try` blocks, each nested in the `finally` of the one before: CPython 3.11 copies a
/// `finally` body for every way out of its `try`, so the compile doubles with each level
/// (18 levels, about 840 characters: seconds).
fn nested_finally(depth: usize) -> String {
    let mut lines = Vec::new();
    for level in 0..depth {
        lines.push(format!("{}try:", " ".repeat(level)));
        lines.push(format!("{}pass", " ".repeat(level + 1)));
        lines.push(format!("{}finally:", " ".repeat(level)));
    }
    lines.push(format!("{}pass", " ".repeat(depth)));
    lines.join("\n")
}

/// Issue 22: every program compiles under the test's limit, not only long ones: a short program
/// whose compile takes seconds (nested `finally` blocks) followed by a correct a+b program times
/// out at the 1 s limit under the judge and under Klear (which compiles one program per test),
/// where an unbounded compile would have held the runner and then passed.
#[test]
fn issue_22_every_program_compiles_under_the_tests_limit() {
    const SUM: &str = "a, b = map(int, input().split())\nprint(a + b)";
    let directory = tempfile::tempdir().unwrap();
    let slow = format!("{}\n{SUM}", nested_finally(18));
    assert!(slow.len() < 1000, "{}", slow.len());
    let mut stdin = sum_job("slow_stdin", &slow);
    stdin["response"] = format!("<think>\n</think>\n```python\n{slow}\n```").into();
    let functional = serde_json::json!({
        "id": "slow_functional",
        "response": format!("<think>\n</think>\n```python\n{}\ndef add(a, b):\n    return a + b\n```", nested_finally(18)),
        "ground_truth": {"functional": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]},
    });
    let path = directory.path().join("slow.jsonl");
    std::fs::write(&path, format!("{stdin}\n{functional}\n")).unwrap();
    for profile in ["judge", "klear"] {
        let lines = results(&verify_with(
            &path,
            profile,
            &["--details", "--time-limit", "1", "--workers", "1"],
        ));
        for line in &lines {
            assert_eq!(line["status"], "ok", "{profile}: {line}");
            for test in line["tests"].as_array().unwrap() {
                assert_eq!(test["verdict"], "timeout", "{profile}: {line}");
            }
        }
    }
}

/// Issue 22: the test's own code runs in the referee on the solution's values; a helper that
/// loops on a cyclic list the solution returned times out at the test's limit (as it would in
/// a fresh process), the referee is replaced, and the job's next test is judged as usual.
#[test]
fn issue_22_a_test_helper_looping_on_the_solutions_value_is_a_timeout() {
    let directory = tempfile::tempdir().unwrap();
    let job = serde_json::json!({
        "id": "cyclic",
        "response": "```python\ndef cycle():\n    head = ListNode(1)\n    head.next = head\n    return head\ndef one():\n    return 1\n```",
        "ground_truth": {"functional": [
            "def length(node):\n    count = 0\n    while node is not None:\n        count, node = count + 1, node.next\n    return count\nassert length(cycle()) == 1",
            "assert one() == 1",
        ]},
    });
    let path = directory.path().join("cyclic.jsonl");
    std::fs::write(&path, format!("{job}\n")).unwrap();
    let lines = results(&verify(&path, &["--details", "--time-limit", "2"]));
    let tests = lines[0]["tests"].as_array().unwrap();
    assert_eq!(tests[0]["verdict"], "timeout", "{}", lines[0]);
    assert_eq!(tests[1]["verdict"], "pass", "{}", lines[0]);
}

/// Issue 32: a function named like a builtin or a prelude import (`gcd`, `sum`, `merge`) is the
/// solution's wherever the test applies it to its own values, in every form (`check(gcd)`, loops
/// over the test's cases), and the referee's where the test applies it to something computed
/// (`abs(half(3) - 1.5)`); the solution's `range` never drives the test's loops; a name bound to
/// something else than the standard object is the solution's. Objects of the solution's classes
/// that calls return are data: their plain-value methods, truth value and own `__eq__` never
/// answer. Each wrong answer scores 0; each honest control (the same names, design classes with
/// methods named `pop`, `get`, `add`, records with fields named `count` and `index`, records
/// compared as data, exceptions with their classes and arguments, `__slots__` classes, the
/// test's namedtuples, types as values) scores 1.0 with no untrusted comparison.
#[test]
fn issue_32_the_referee_follows_python_and_only_it_decides() {
    let directory = tempfile::tempdir().unwrap();
    let hostile = results(&verify(
        &fixture_jobs(directory.path(), "referee.py", "hostile"),
        &["--details"],
    ));
    assert!(hostile.len() >= 13, "{hostile:?}");
    for line in &hostile {
        assert_eq!(line["status"], "ok", "{line}");
        assert_eq!(line["score"], 0.0, "a hostile answer scored: {line}");
        assert_eq!(line["untrusted_comparisons"], 0, "{line}");
    }
    let honest = results(&verify(
        &fixture_jobs(directory.path(), "referee.py", "honest"),
        &["--details"],
    ));
    assert!(honest.len() >= 16, "{honest:?}");
    for line in &honest {
        assert_eq!(line["score"], 1.0, "an honest answer failed: {line}");
        assert!(line.get("tampering").is_none(), "{line}");
        assert_eq!(line["untrusted_comparisons"], 0, "{line}");
    }
}

/// Issue 32: every forgery on the live channel (a frame that is not JSON, a message that is not
/// an object, an answer to a request never asked, a value no encoder writes) fails the test and
/// is reported as `forged_report`, per job and per test.
#[test]
fn issue_32_every_forged_message_is_reported() {
    let directory = tempfile::tempdir().unwrap();
    let lines = results(&verify(
        &fixture_jobs(directory.path(), "referee.py", "forged"),
        &["--details"],
    ));
    assert_eq!(lines.len(), 4, "{lines:?}");
    for line in &lines {
        assert_eq!(line["score"], 0.0, "{line}");
        assert_eq!(line["tampering"]["forged_report"], 1, "{line}");
        let tests = line["tests"].as_array().unwrap();
        assert!(
            tests[0]["tampering"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|kind| kind == "forged_report")),
            "{line}"
        );
    }
}
